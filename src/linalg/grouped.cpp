// Grouped calls: a list of matrices of different shapes through one batched call per distinct
// (shape, dtype, device), results back in the list's order; the rules of
// python/gpula/linalg/_grouped.py (grouped), in C++: eigh, cholesky, orthogonalize, inv_root,
// sqrtm_psd, polar.
#include <gpula/linalg.h>

#include <cstddef>
#include <exception>
#include <map>
#include <string>
#include <tuple>
#include <utility>

#include "linalg/exec.h"
#include "linalg/rethrow.h"

namespace gpula::linalg {

using detail::cat;
using detail::rethrow_edited;
using detail::product;
using detail::throw_error;

namespace {

// Item j of a batched result whose leading dimension runs over a bucket's items: a view of it,
// kept alive by the batched result (an undefined tensor stays undefined).
Tensor item_of(const Tensor& t, int64_t j) {
  if (!t.defined()) return t;
  TensorView v = t.view();
  v.data =
      static_cast<char*>(v.data) + j * v.strides.front() * static_cast<int64_t>(size_of(v.dtype));
  v.shape.erase(v.shape.begin());
  v.strides.erase(v.strides.begin());
  return t.alias(std::move(v));
}
Factor item_of(const Factor& f, int64_t j) { return {item_of(f.value, j), item_of(f.info, j)}; }
Eigh item_of(const Eigh& e, int64_t j) {
  return {item_of(e.w, j), item_of(e.v, j), item_of(e.info, j)};
}
Polar item_of(const Polar& r, int64_t j) { return {item_of(r.u, j), item_of(r.p, j)}; }

// The items of one bucket stacked into a (k, ...) batch on their device.
Tensor stack(std::span<const TensorView> items, const std::vector<std::size_t>& idx,
             Stream stream) {
  const TensorView& first = items[idx.front()];
  Shape shape = first.shape;
  shape.insert(shape.begin(), static_cast<int64_t>(idx.size()));
  const Stream on{first.device, stream.device == first.device ? stream.handle : nullptr};
  Tensor s = Tensor::empty(shape, first.dtype, on);
  for (std::size_t j = 0; j < idx.size(); ++j) {
    const Tensor slot = item_of(s, static_cast<int64_t>(j));
    if (slot.view().numel() > 0) copy(items[idx[j]], slot.view(), on);
  }
  return s;
}

// The batch index an error carries (-1: none).
int64_t batch_index_of(const std::exception_ptr& p) {
  try {
    std::rethrow_exception(p);
  } catch (const NotPositiveDefinite& e) {
    return e.batch_index();
  } catch (const SingularMatrix& e) {
    return e.batch_index();
  } catch (...) {
    return -1;
  }
}

// [fn(items[i]) for every i], computed as fn(stack(bucket)) for each bucket of items of one
// shape, dtype and device (an item alone in its bucket: fn(item)). Errors as linalg.h says.
template <class R, class F>
std::vector<R> grouped(const char* op, const char* arg, std::span<const TensorView> items,
                       Stream stream, F&& fn) {
  using Key = std::tuple<Shape, DType, int, int>;
  std::map<Key, std::size_t> slot;
  std::vector<std::vector<std::size_t>> buckets;  // in the order their first item comes
  for (std::size_t i = 0; i < items.size(); ++i) {
    const TensorView& v = items[i];
    const std::string item = cat(arg, "[", i, "]");
    detail::check_view(op, item.c_str(), v);
    if (v.ndim() < 2)
      throw_error<InvalidArgument>(op, item, " must be a matrix (..., m, n), got shape ",
                                   v.shape_str());
    const Key key{v.shape, v.dtype, static_cast<int>(v.device.kind), v.device.index};
    const auto [it, fresh] = slot.try_emplace(key, buckets.size());
    if (fresh) buckets.emplace_back();
    buckets[it->second].push_back(i);
  }
  std::vector<R> out(items.size());
  for (const auto& idx : buckets) {
    const TensorView& first = items[idx.front()];
    const int64_t per = product(detail::batch_of(first, 2));  // matrices per item
    // An error about item i: its message names it; a one-matrix item's batch index becomes i.
    auto in_item = [&](std::size_t i, int64_t bi) {
      rethrow_edited([&](const std::string& m) { return m + cat(" (list item ", i, ")"); },
                     per == 1 ? static_cast<int64_t>(i) : bi);
    };
    if (idx.size() == 1) {
      try {
        out[idx[0]] = fn(first);
      } catch (const Error&) {
        in_item(idx[0], -1);
      }
      continue;
    }
    try {
      const Tensor s = stack(items, idx, stream);
      const R r = fn(s.view());
      for (std::size_t j = 0; j < idx.size(); ++j)
        out[idx[j]] = item_of(r, static_cast<int64_t>(j));
    } catch (const Error&) {
      const std::exception_ptr batched = std::current_exception();
      const int64_t bi = batch_index_of(batched);
      if (per > 0 && bi >= 0 && bi < per * static_cast<int64_t>(idx.size()))
        in_item(idx[bi / per], bi % per);
      for (std::size_t i : idx) {  // which item? each alone
        try {
          fn(items[i]);
        } catch (const Error&) {
          in_item(i, -1);
        }
      }
      std::string list;
      for (std::size_t i : idx) list += cat(list.empty() ? "" : ", ", i);
      try {
        std::rethrow_exception(batched);
      } catch (const Error&) {
        rethrow_edited([&](const std::string& m) { return m + cat(" (list items ", list, ")"); });
      }
    }
  }
  return out;
}

}  // namespace

std::vector<Eigh> eigh(std::span<const TensorView> a, bool lower, bool eigvals_only,
                       const LinalgOptions& options, Stream stream) {
  return grouped<Eigh>("linalg.eigh", "a", a, stream, [&](const TensorView& v) {
    return eigh(v, lower, eigvals_only, options, stream);
  });
}

std::vector<Factor> cholesky(std::span<const TensorView> a, bool lower,
                             const LinalgOptions& options, Stream stream) {
  return grouped<Factor>("linalg.cholesky", "a", a, stream,
                         [&](const TensorView& v) { return cholesky(v, lower, options, stream); });
}

std::vector<Tensor> orthogonalize(std::span<const TensorView> g,
                                  const OrthogonalizeOptions& options, Stream stream) {
  return grouped<Tensor>("linalg.orthogonalize", "g", g, stream,
                         [&](const TensorView& v) { return orthogonalize(v, options, stream); });
}

std::vector<Tensor> inv_root(std::span<const TensorView> a, int p, double eps,
                             const InvRootOptions& options, Stream stream) {
  return grouped<Tensor>("linalg.inv_root", "a", a, stream,
                         [&](const TensorView& v) { return inv_root(v, p, eps, options, stream); });
}

std::vector<Tensor> sqrtm_psd(std::span<const TensorView> a, const SqrtmPsdOptions& options,
                              Stream stream) {
  return grouped<Tensor>("linalg.sqrtm_psd", "a", a, stream,
                         [&](const TensorView& v) { return sqrtm_psd(v, options, stream); });
}

std::vector<Polar> polar(std::span<const TensorView> a, PolarSide side,
                         const CommonOptions& options, Stream stream) {
  return grouped<Polar>("linalg.polar", "a", a, stream,
                        [&](const TensorView& v) { return polar(v, side, options, stream); });
}

}  // namespace gpula::linalg
