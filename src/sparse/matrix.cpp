// CsrMatrix: validation of CSR contents and the CSR / COO / CSC builders (canonicalizing).
#include <gpula/sparse.h>

#include <algorithm>
#include <complex>
#include <cstring>
#include <limits>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "core/dtype_dispatch.h"
#include "core/format.h"

namespace gpula::sparse {

namespace {

using gpula::detail::throw_error;

// A host copy of `t` (or `t` itself, shared, when it is already on the host).
Tensor host_copy(const TensorView& t) {
  Tensor h = Tensor::empty(t.shape, t.dtype, Stream{Device::cpu(), nullptr});
  if (t.numel() > 0) copy(t, h.view(), Stream{t.device, nullptr});
  return h;
}

Tensor to_device(const Tensor& host, Device device) {
  if (!device.is_cuda()) return host;
  Tensor d = Tensor::empty(host.shape(), host.dtype(), Stream{device, nullptr});
  if (host.view().numel() > 0) copy(host.view(), d.view(), Stream{device, nullptr});
  return d;
}

std::vector<int64_t> read_index(const TensorView& t) {
  const int64_t n = t.shape.empty() ? 0 : t.shape[0];
  std::vector<int64_t> out(static_cast<size_t>(n));
  if (n == 0) return out;
  Tensor h = t.device.is_cuda() ? host_copy(t) : Tensor(t, nullptr);
  if (h.dtype() == DType::i32) {
    const auto* p = static_cast<const int32_t*>(h.data());
    std::copy(p, p + n, out.begin());
  } else {
    const auto* p = static_cast<const int64_t*>(h.data());
    std::copy(p, p + n, out.begin());
  }
  return out;
}

// ptr (length ptr_len >= 1) and ind (length nnz) as validate_csr checks them, read in place.
template <class I>
void validate_typed(const I* ptr, int64_t ptr_len, const I* ind, int64_t nnz, int64_t bound,
                    const char* ptr_name, const char* ind_name, const std::string& op) {
  if (ptr[0] != 0)
    throw_error<InvalidArgument>(op.c_str(), ptr_name, "[0] must be 0, got ", ptr[0]);
  for (int64_t i = 1; i < ptr_len; ++i) {
    if (ptr[i] < ptr[i - 1]) {
      throw_error<InvalidArgument>(op.c_str(), ptr_name, " must be non-decreasing: ", ptr_name, "[",
                                   i, "] = ", ptr[i], " < ", ptr_name, "[", i - 1,
                                   "] = ", ptr[i - 1]);
    }
  }
  if (ptr[ptr_len - 1] != nnz) {
    throw_error<InvalidArgument>(op.c_str(), ptr_name, "[", ptr_len - 1, "] must equal nnz = ", nnz,
                                 ", got ", ptr[ptr_len - 1]);
  }
  // One pass without branches on the common path; the position is looked up on failure only.
  bool ok = true;
  for (int64_t k = 0; k < nnz; ++k) ok &= ind[k] >= 0 && static_cast<int64_t>(ind[k]) < bound;
  if (ok) return;
  for (int64_t k = 0; k < nnz; ++k) {
    if (ind[k] < 0 || static_cast<int64_t>(ind[k]) >= bound) {
      throw_error<InvalidArgument>(op.c_str(), ind_name, "[", k, "] = ", ind[k],
                                   " is out of range [0, ", bound, ")");
    }
  }
}

// Host-readable copies of a view's index arrays: the arrays themselves on the CPU.
struct HostPattern {
  Tensor ptr, ind;
  explicit HostPattern(const TensorView& p, const TensorView& i)
      : ptr(p.device.is_cuda() ? host_copy(p) : Tensor(p, nullptr)),
        ind(i.device.is_cuda() ? host_copy(i) : Tensor(i, nullptr)) {}
};

void validate_index_arrays(const TensorView& ptr, const TensorView& ind, int64_t bound,
                           const char* ptr_name, const char* ind_name, const std::string& op) {
  const HostPattern h(ptr, ind);
  const int64_t ptr_len = ptr.shape[0], nnz = ind.shape[0];
  if (ptr.dtype == DType::i32) {
    validate_typed(static_cast<const int32_t*>(h.ptr.data()), ptr_len,
                   static_cast<const int32_t*>(h.ind.data()), nnz, bound, ptr_name, ind_name, op);
  } else {
    validate_typed(static_cast<const int64_t*>(h.ptr.data()), ptr_len,
                   static_cast<const int64_t*>(h.ind.data()), nnz, bound, ptr_name, ind_name, op);
  }
}

template <class I>
bool canonical_typed(const I* ptr, int64_t rows, const I* ind) {
  for (int64_t i = 0; i < rows; ++i) {
    for (I k = ptr[i] + 1; k < ptr[i + 1]; ++k) {
      if (ind[k] <= ind[k - 1]) return false;
    }
  }
  return true;
}

// A copy of a 1-D array on its own device.
Tensor copy_of(const Tensor& t) {
  const Stream s{t.view().device, nullptr};
  Tensor c = Tensor::empty(t.shape(), t.dtype(), s);
  if (t.view().numel() > 0) copy(t.view(), c.view(), s);
  return c;
}

// Builds canonical CSR (sorted, duplicates summed) from triplets on the host.
template <class V>
void triplets_to_csr(int64_t rows, const std::vector<int64_t>& r, const std::vector<int64_t>& c,
                     const V* v, std::vector<int64_t>& ptr, std::vector<int64_t>& ind,
                     std::vector<V>& val) {
  const size_t n = r.size();
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return r[a] != r[b] ? r[a] < r[b] : c[a] < c[b]; });
  ptr.assign(static_cast<size_t>(rows + 1), 0);
  ind.clear();
  val.clear();
  int64_t last_r = -1, last_c = -1;
  for (int64_t k : order) {
    if (r[k] == last_r && c[k] == last_c) {
      val.back() += v[k];
      continue;
    }
    last_r = r[k];
    last_c = c[k];
    ind.push_back(c[k]);
    val.push_back(v[k]);
    ++ptr[static_cast<size_t>(r[k] + 1)];
  }
  for (int64_t i = 0; i < rows; ++i) ptr[i + 1] += ptr[i];
}

template <class I>
Tensor make_index(const std::vector<int64_t>& src, Device device) {
  const DType dt = sizeof(I) == 4 ? DType::i32 : DType::i64;
  Tensor h = Tensor::empty({static_cast<int64_t>(src.size())}, dt, Stream{Device::cpu(), nullptr});
  auto* p = static_cast<I*>(h.data());
  for (size_t i = 0; i < src.size(); ++i) p[i] = static_cast<I>(src[i]);
  return to_device(h, device);
}

Tensor make_index(const std::vector<int64_t>& src, DType dt, Device device) {
  return dt == DType::i32 ? make_index<int32_t>(src, device) : make_index<int64_t>(src, device);
}

struct CsrArrays {
  Tensor indptr, indices, values;
};

// The canonical CSR arrays of triplets, on `device`, with index dtype `idt`.
CsrArrays from_triplets(int64_t rows, const std::vector<int64_t>& r, const std::vector<int64_t>& c,
                        const TensorView& values, DType idt, Device device) {
  Tensor hv = values.device.is_cuda() ? host_copy(values) : Tensor(values, nullptr);
  Tensor indptr, indices, vals;
  gpula::detail::visit_float(values.dtype, [&](auto zero) {
    using V = decltype(zero);
    std::vector<int64_t> ptr, ind;
    std::vector<V> val;
    triplets_to_csr<V>(rows, r, c, static_cast<const V*>(hv.data()), ptr, ind, val);
    indptr = make_index(ptr, idt, device);
    indices = make_index(ind, idt, device);
    Tensor h = Tensor::empty({static_cast<int64_t>(val.size())}, values.dtype,
                             Stream{Device::cpu(), nullptr});
    if (!val.empty()) std::memcpy(h.data(), val.data(), val.size() * sizeof(V));
    vals = to_device(h, device);
  });
  return {indptr, indices, vals};
}

CsrView view_of(int64_t rows, int64_t cols, const TensorView& p, const TensorView& i,
                const TensorView& v) {
  return CsrView{rows, cols, p, i, v};
}

}  // namespace

void validate_csr(const CsrView& a, std::string_view op_view) {
  const std::string op(op_view);
  check_csr(a, op);
  validate_index_arrays(a.indptr, a.indices, a.cols, "indptr", "indices", op);
}

bool is_canonical(const CsrView& a) {
  const HostPattern h(a.indptr, a.indices);
  if (a.index_dtype() == DType::i32) {
    return canonical_typed(static_cast<const int32_t*>(h.ptr.data()), a.rows,
                           static_cast<const int32_t*>(h.ind.data()));
  }
  return canonical_typed(static_cast<const int64_t*>(h.ptr.data()), a.rows,
                         static_cast<const int64_t*>(h.ind.data()));
}

CsrView CsrMatrix::view() const {
  return view_of(rows_, cols_, indptr_.view(), indices_.view(), values_.view());
}

CsrMatrix CsrMatrix::from_csr(int64_t rows, int64_t cols, Tensor indptr, Tensor indices,
                              Tensor values, std::string_view op) {
  const CsrView v = view_of(rows, cols, indptr.view(), indices.view(), values.view());
  validate_csr(v, op);
  if (!is_canonical(v)) {
    const auto ptr = read_index(v.indptr);
    std::vector<int64_t> r(static_cast<size_t>(v.nnz()));
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t k = ptr[i]; k < ptr[i + 1]; ++k) r[k] = i;
    }
    CsrArrays c = from_triplets(rows, r, read_index(v.indices), v.values, v.index_dtype(),
                                v.device());
    return adopt(rows, cols, std::move(c.indptr), std::move(c.indices), std::move(c.values));
  }
  // The pattern is the matrix's own from here on (a caller's later writes to its index arrays
  // cannot make it invalid); the values stay shared.
  return adopt(rows, cols, copy_of(indptr), copy_of(indices), std::move(values));
}

CsrMatrix CsrMatrix::adopt(int64_t rows, int64_t cols, Tensor indptr, Tensor indices,
                           Tensor values) {
  CsrMatrix m;
  m.rows_ = rows;
  m.cols_ = cols;
  m.indptr_ = std::move(indptr);
  m.indices_ = std::move(indices);
  m.values_ = std::move(values);
  return m;
}

CsrMatrix CsrMatrix::with_values(Tensor values, std::string_view op_view) const {
  const std::string op(op_view);
  const TensorView& vv = values.view();
  if (vv.ndim() != 1 || vv.shape[0] != nnz()) {
    throw_error<InvalidArgument>(op.c_str(), "values must have shape (", nnz(), ",), got ",
                                 vv.shape_str());
  }
  const CsrView v = view_of(rows_, cols_, indptr_.view(), indices_.view(), vv);
  check_csr(v, op);
  CsrMatrix m = *this;
  m.values_ = std::move(values);
  return m;
}

CsrMatrix CsrMatrix::from_coo(int64_t rows, int64_t cols, const TensorView& row,
                              const TensorView& col, const TensorView& values,
                              std::string_view op_view) {
  const std::string op(op_view);
  // Structural checks reuse check_csr with a dummy indptr-free layout: check each array.
  if (rows < 0 || cols < 0) {
    throw_error<InvalidArgument>(op.c_str(), "shape must be non-negative, got (", rows, ", ", cols,
                                 ")");
  }
  if (rows == std::numeric_limits<int64_t>::max()) {
    throw_error<InvalidArgument>(op.c_str(), "shape (", rows, ", ", cols,
                                 ") has too many rows: indptr would need rows + 1 entries");
  }
  if (row.dtype != DType::i32 && row.dtype != DType::i64) {
    throw_error<DTypeError>(op.c_str(), "row must be int32 or int64, got ", name(row.dtype));
  }
  if (col.dtype != row.dtype) {
    throw_error<DTypeError>(op.c_str(), "col must have row's dtype ", name(row.dtype), ", got ",
                            name(col.dtype));
  }
  const int64_t nnz = values.ndim() == 1 ? values.shape[0] : -1;
  for (const auto* t : {&row, &col, &values}) {
    if (t->ndim() != 1 || t->shape[0] != nnz || nnz < 0 || (nnz > 1 && t->strides[0] != 1)) {
      throw_error<InvalidArgument>(
          op.c_str(), "row, col and values must be 1-D contiguous of one length, got ",
          row.shape_str(), ", ", col.shape_str(), ", ", values.shape_str());
    }
  }
  {
    const std::pair<const TensorView*, const char*> arrays[] = {
        {&row, "row"}, {&col, "col"}, {&values, "values"}};
    for (const auto& [t, array_name] : arrays) {
      if (nnz > 0 && t->data == nullptr) {
        throw_error<InvalidArgument>(op.c_str(), array_name, " has no data");
      }
    }
  }
  if (row.device != values.device || col.device != values.device) {
    throw_error<InvalidArgument>(op.c_str(), "row, col and values must be on one device");
  }
  // Value dtype check through check_csr on an empty pattern.
  Tensor p0 = Tensor::empty({rows + 1}, row.dtype, Stream{Device::cpu(), nullptr});
  std::memset(p0.data(), 0, static_cast<size_t>(rows + 1) * size_of(row.dtype));
  TensorView empty_vals = values;
  empty_vals.shape = {0};
  TensorView empty_ind = row;
  empty_ind.shape = {0};
  TensorView p0v = p0.view();
  p0v.device = values.device;
  check_csr(CsrView{rows, cols, p0v, empty_ind, empty_vals}, op);
  const auto r = read_index(row);
  const auto c = read_index(col);
  for (int64_t k = 0; k < nnz; ++k) {
    if (r[k] < 0 || r[k] >= rows) {
      throw_error<InvalidArgument>(op.c_str(), "row[", k, "] = ", r[k], " is out of range [0, ",
                                   rows, ")");
    }
    if (c[k] < 0 || c[k] >= cols) {
      throw_error<InvalidArgument>(op.c_str(), "col[", k, "] = ", c[k], " is out of range [0, ",
                                   cols, ")");
    }
  }
  CsrArrays m = from_triplets(rows, r, c, values, row.dtype, values.device);
  return adopt(rows, cols, std::move(m.indptr), std::move(m.indices), std::move(m.values));
}

CsrMatrix CsrMatrix::from_csc(int64_t rows, int64_t cols, const TensorView& colptr,
                              const TensorView& rowind, const TensorView& values,
                              std::string_view op_view) {
  const std::string op(op_view);
  // A CSC matrix is the CSR of its transpose: check it as such.
  const CsrView t{cols, rows, colptr, rowind, values};
  check_csr(t, op);
  if (rows == std::numeric_limits<int64_t>::max()) {
    throw_error<InvalidArgument>(op.c_str(), "shape (", rows, ", ", cols,
                                 ") has too many rows: indptr would need rows + 1 entries");
  }
  validate_index_arrays(colptr, rowind, rows, "colptr", "rowind", op);
  const auto ptr = read_index(colptr);
  const auto r = read_index(rowind);
  std::vector<int64_t> c(r.size());
  for (int64_t j = 0; j < cols; ++j) {
    for (int64_t k = ptr[j]; k < ptr[j + 1]; ++k) c[k] = j;
  }
  CsrArrays m = from_triplets(rows, r, c, values, colptr.dtype, values.device);
  return adopt(rows, cols, std::move(m.indptr), std::move(m.indices), std::move(m.values));
}

}  // namespace gpula::sparse
