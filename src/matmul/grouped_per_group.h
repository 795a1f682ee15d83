#pragma once
// The per-group path of a grouped matmul, shared by both backends: one MatmulProblem per
// distinct group shape, layout and alignment, its plan made by the backend's matmul factory and
// kept, each group executed with its own pointers.
#include <array>
#include <functional>
#include <map>

#include "matmul/grouped_backend.h"

namespace gpula::detail {

class PerGroupPlan final : public GroupedBackendPlan {
 public:
  using Factory = std::function<std::unique_ptr<MatmulBackendPlan>(const MatmulProblem&)>;
  PerGroupPlan(const GroupedProblem& p, Factory make) : p_(p), make_(std::move(make)) {}

  GroupedAlgo algo() const override { return GroupedAlgo::per_group; }
  void execute(const std::vector<GroupedItem>& items, Stream stream) override;

  // The single-product problem of one group (exposed for tests).
  static MatmulProblem problem_of(const GroupedProblem& p, const GroupedItem& item);

 private:
  // m, n, k, a (col_major, ld), b (col_major, ld), alignments of A, B, D.
  using Key = std::array<int64_t, 10>;
  // Routing changes M every step: past this many plans the cache starts over.
  static constexpr std::size_t kMaxPlans = 4096;

  GroupedProblem p_;
  Factory make_;
  std::map<Key, std::unique_ptr<MatmulBackendPlan>> plans_;
};

}  // namespace gpula::detail
