// The per-group path of a grouped matmul (see grouped_per_group.h).
#include "matmul/grouped_per_group.h"

#include "matmul/dtype_rules.h"

namespace gpula::detail {

MatmulProblem PerGroupPlan::problem_of(const GroupedProblem& p, const GroupedItem& it) {
  MatmulProblem mp;
  mp.device = p.device;
  mp.m = it.m;
  mp.n = it.n;
  mp.k = it.k;
  mp.batch = 1;
  mp.a = it.a;
  mp.a.batch_stride = 0;
  mp.b = it.b;
  mp.b.batch_stride = 0;
  mp.d = {p.d_type, it.m, it.n, false, it.n, it.m * it.n};
  mp.has_c = false;
  mp.scale_type = p.scale_type;
  mp.compute = p.compute;
  mp.epilog = p.epilog;
  mp.scales = p.scales;
  mp.fp8 = p.fp8;
  mp.bias_type = p.bias_type;
  mp.aux_type = p.bias_type;
  mp.align_a = alignment(it.pa);
  mp.align_b = alignment(it.pb);
  mp.align_d = alignment(it.pd);
  mp.align_c = mp.align_d;  // without C, cuBLASLt is given D in its place
  return mp;
}

void PerGroupPlan::execute(const std::vector<GroupedItem>& items, Stream stream) {
  for (const GroupedItem& it : items) {
    const Key key{it.m,        it.n,         it.k,         it.a.col_major, it.a.ld,
                  it.b.col_major, it.b.ld, alignment(it.pa), alignment(it.pb), alignment(it.pd)};
    auto found = plans_.find(key);
    if (found == plans_.end()) {
      if (plans_.size() >= kMaxPlans) plans_.clear();
      found = plans_.emplace(key, make_(problem_of(p_, it))).first;
    }
    MatmulBuffers buf;
    buf.a = it.pa;
    buf.b = it.pb;
    buf.d = it.pd;
    buf.bias = it.bias;
    found->second->execute(buf, stream);
  }
}

}  // namespace gpula::detail
