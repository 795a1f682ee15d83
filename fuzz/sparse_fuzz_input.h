#pragma once
// The sparse validator's fuzz case: decodes bytes into a CSR / COO / CSC construction (or a direct
// check_csr + validate_csr on a view, or with_values) on CPU memory, runs it, and checks the
// outcome against an independent oracle. Shared by the libFuzzer target
// (fuzz/fuzz_sparse_validate.cpp) and the corpus replay test (tests/cpp/sparse/fuzz_corpus_test.cpp).
//
// run_sparse_case(data, size) returns "" when the library behaved as documented, else a
// description of the violation:
//   - an exception other than gpula::InvalidArgument (DTypeError included) escaped;
//   - an error message does not start with "[op] ", names no array, or (for bad contents of
//     well-formed arrays) does not name the offending position as "array[";
//   - input the oracle knows is valid was rejected, or invalid input was accepted;
//   - a built matrix breaks the CSR invariants (lengths rows + 1 / nnz / nnz, indptr[0] == 0,
//     non-decreasing, indptr[rows] == nnz, indices in [0, cols), strictly increasing within each
//     row: the builders canonicalize), the dtypes asked for, or the summed-duplicate values;
//   - canonical CSR input shared its pattern or copied its values (the docs promise the
//     pattern is the matrix's own copy and the values are shared).
// Crashes and sanitizer reports are caught by the sanitizers themselves.
//
// Byte layout (a missing byte reads as 0):
//   0  mode % 5: 0 from_csr, 1 from_coo, 2 from_csc, 3 check_csr + validate_csr + is_canonical on
//      a view, 4 from_csr then with_values
//   1  dtypes: bit0 int64 indices (else int32); bits1-2 value dtype f32 f64 c64 c128; bit3 the
//      second index array gets the other index dtype; bit4 values get a non-value dtype (bit5:
//      int64, else float16); bit6 the first index array gets float32
//   2  layout defects: bits0-2 mask of arrays (first index array, second, values); bits3-4 kind:
//      0 2-D shape (n, 1), 1 stride 2, 2 null data, 3 negative length -1 - n
//   3  rows, 4 cols: b < 0xE0: b % 40; 0xE0..0xFB: -(b - 0xDF); 0xFC INT32_MAX + 1; 0xFD
//      INT32_MAX; 0xFE INT64_MIN; 0xFF INT64_MAX (rows of COO / CSC, whose output indptr is
//      allocated, take only the INT64 specials; the INT32 ones fall back to b % 40)
//   5  nnz: b % 48 (the length of the second index array and values before perturbation)
//   6, 7, 8  length perturbation of the three arrays: b < 0xC0: 0, else (b & 7) - 3
//   9  pointer array generation (CSR / CSC / view): bit0 raw entries; else cumulative: bit1 first
//      entry raw (else 0), each next = previous + (b & 3), minus 1 when b >= 0xFC; bit2 force the
//      last entry to the second array's length
//   then the entries of the first, second array (one byte each: 0x7F max, 0x80 min, 0x7E
//   INT32_MAX, 0x81 INT32_MIN of the index type, else int8), then values (one byte each, two for
//   complex: 0xFF NaN, 0xFE +inf, 0xFD -inf, 0xFC -0.0, else int8 / 4)
//   with_values: one more byte: bits0-2 length perturbation (b & 7) - 3 when bit3 is set; bits4-5
//   dtype f32 f64 c64 c128; bit6 dtype int32 instead; bit7 stride 2
#include <gpula/error.h>
#include <gpula/sparse.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gpula_fuzz {

class ByteReader {
 public:
  ByteReader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t next() { return pos_ < size_ ? data_[pos_++] : 0; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

inline int64_t decode_dim(uint8_t b, bool allow_int32_specials) {
  switch (b) {
    case 0xFF:
      return std::numeric_limits<int64_t>::max();
    case 0xFE:
      return std::numeric_limits<int64_t>::min();
    case 0xFD:
      return allow_int32_specials ? int64_t{std::numeric_limits<int32_t>::max()} : b % 40;
    case 0xFC:
      return allow_int32_specials ? int64_t{std::numeric_limits<int32_t>::max()} + 1 : b % 40;
    default:
      break;
  }
  if (b < 0xE0) return b % 40;
  return -static_cast<int64_t>(b - 0xDF);
}

inline int64_t decode_index(uint8_t b, bool i64) {
  const int64_t max = i64 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int32_t>::max();
  const int64_t min = i64 ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int32_t>::min();
  switch (b) {
    case 0x7F:
      return max;
    case 0x80:
      return min;
    case 0x7E:
      return std::numeric_limits<int32_t>::max();
    case 0x81:
      return std::numeric_limits<int32_t>::min();
    default:
      return static_cast<int8_t>(b);
  }
}

inline double decode_real(uint8_t b) {
  switch (b) {
    case 0xFF:
      return std::numeric_limits<double>::quiet_NaN();
    case 0xFE:
      return std::numeric_limits<double>::infinity();
    case 0xFD:
      return -std::numeric_limits<double>::infinity();
    case 0xFC:
      return -0.0;
    default:
      return static_cast<int8_t>(b) / 4.0;
  }
}

inline int64_t perturb(uint8_t b) { return b < 0xC0 ? 0 : (b & 7) - 3; }

inline bool is_value_dtype(gpula::DType d) {
  return d == gpula::DType::f32 || d == gpula::DType::f64 || d == gpula::DType::c64 ||
         d == gpula::DType::c128;
}

inline gpula::DType value_dtype(unsigned code) {
  static const gpula::DType t[4] = {gpula::DType::f32, gpula::DType::f64, gpula::DType::c64,
                                    gpula::DType::c128};
  return t[code & 3];
}

// One decoded array: its buffer (exactly as many bytes as the view reaches, so ASan sees any
// read past it), its view and the logical entries (as int64 / complex<double>).
struct Array {
  std::shared_ptr<void> owner;
  gpula::TensorView view;
  std::vector<int64_t> ints;                // index arrays
  std::vector<std::complex<double>> vals;   // value arrays
  bool well_formed = true;                  // 1-D, contiguous (or length <= 1), data, length >= 0
  gpula::Tensor tensor() const { return gpula::Tensor(view, owner); }
};

enum class Defect { none, two_d, stride2, null_data, negative };

inline void store(void* p, gpula::DType d, int64_t k, int64_t v) {
  if (d == gpula::DType::i32) {
    const auto x = static_cast<int32_t>(v);
    std::memcpy(static_cast<char*>(p) + 4 * k, &x, 4);
  } else if (d == gpula::DType::i64) {
    std::memcpy(static_cast<char*>(p) + 8 * k, &v, 8);
  } else {
    // A non-index dtype: fill with the bytes of the value, whatever they mean.
    const size_t s = gpula::size_of(d);
    for (size_t i = 0; i < s; ++i) static_cast<char*>(p)[s * k + i] = static_cast<char>(v >> (i % 8));
  }
}

inline void store_value(void* p, gpula::DType d, int64_t k, std::complex<double> v) {
  char* c = static_cast<char*>(p);
  switch (d) {
    case gpula::DType::f32: {
      const float x = static_cast<float>(v.real());
      std::memcpy(c + 4 * k, &x, 4);
      break;
    }
    case gpula::DType::f64: {
      const double x = v.real();
      std::memcpy(c + 8 * k, &x, 8);
      break;
    }
    case gpula::DType::c64: {
      const std::complex<float> x(static_cast<float>(v.real()), static_cast<float>(v.imag()));
      std::memcpy(c + 8 * k, &x, 8);
      break;
    }
    case gpula::DType::c128:
      std::memcpy(c + 16 * k, &v, 16);
      break;
    default:
      store(p, d, k, std::isfinite(v.real()) ? static_cast<int64_t>(v.real()) : 0);
      break;
  }
}

// Lays out `n` logical entries of dtype `d` with `defect`; fill(p, k) writes entry k.
template <class Fill>
Array make_array(int64_t n, gpula::DType d, Defect defect, Fill fill) {
  Array a;
  const int64_t stride = defect == Defect::stride2 ? 2 : 1;
  const int64_t span = n > 0 ? (n - 1) * stride + 1 : 0;
  const size_t bytes = static_cast<size_t>(span) * gpula::size_of(d);
  a.owner = std::shared_ptr<void>(std::malloc(bytes ? bytes : 1), std::free);
  if (bytes) std::memset(a.owner.get(), 0, bytes);
  a.view.data = a.owner.get();
  a.view.dtype = d;
  a.view.device = gpula::Device::cpu();
  a.view.shape = {n};
  a.view.strides = {stride};
  for (int64_t k = 0; k < n; ++k) fill(static_cast<char*>(a.owner.get()), k * stride);
  switch (defect) {
    case Defect::two_d:
      a.view.shape = {n, 1};
      a.view.strides = {1, 1};
      a.well_formed = false;
      break;
    case Defect::stride2:
      a.well_formed = n <= 1;
      break;
    case Defect::null_data:
      a.view.data = nullptr;
      a.well_formed = n == 0;
      break;
    case Defect::negative:
      a.view.shape = {-1 - n};
      a.well_formed = false;
      break;
    case Defect::none:
      break;
  }
  return a;
}

inline Array index_array(const std::vector<int64_t>& v, gpula::DType d, Defect defect) {
  Array a = make_array(static_cast<int64_t>(v.size()), d, defect,
                       [&](char* p, int64_t at) { store(p, d, at, v[static_cast<size_t>(at / (defect == Defect::stride2 ? 2 : 1))]); });
  a.ints = v;
  return a;
}

inline Array value_array(const std::vector<std::complex<double>>& v, gpula::DType d,
                         Defect defect) {
  Array a = make_array(static_cast<int64_t>(v.size()), d, defect, [&](char* p, int64_t at) {
    store_value(p, d, at, v[static_cast<size_t>(at / (defect == Defect::stride2 ? 2 : 1))]);
  });
  a.vals = v;
  return a;
}

// What the library was asked to do, as the oracle sees it.
struct Case {
  int mode = 0;
  int64_t rows = 0, cols = 0;
  bool i64 = false;
  gpula::DType vdt = gpula::DType::f32;
  bool complex_values = false;
  Array a, b, c;  // first index array (indptr / row / colptr), second (indices / col / rowind), values
  uint8_t extra = 0;
};

// Typed round trip of a value, as the library stores it.
inline std::complex<double> as_stored(std::complex<double> v, gpula::DType d) {
  switch (d) {
    case gpula::DType::f32:
      return {static_cast<double>(static_cast<float>(v.real())), 0.0};
    case gpula::DType::f64:
      return {v.real(), 0.0};
    case gpula::DType::c64:
      return {static_cast<double>(static_cast<float>(v.real())),
              static_cast<double>(static_cast<float>(v.imag()))};
    default:
      return v;
  }
}

inline std::complex<double> read_value(const gpula::TensorView& t, int64_t k) {
  const char* c = static_cast<const char*>(t.data);
  switch (t.dtype) {
    case gpula::DType::f32: {
      float x;
      std::memcpy(&x, c + 4 * k, 4);
      return {x, 0.0};
    }
    case gpula::DType::f64: {
      double x;
      std::memcpy(&x, c + 8 * k, 8);
      return {x, 0.0};
    }
    case gpula::DType::c64: {
      std::complex<float> x;
      std::memcpy(&x, c + 8 * k, 8);
      return {x.real(), x.imag()};
    }
    default: {
      std::complex<double> x;
      std::memcpy(&x, c + 16 * k, 16);
      return x;
    }
  }
}

inline int64_t read_int(const gpula::TensorView& t, int64_t k) {
  if (t.dtype == gpula::DType::i32) {
    int32_t x;
    std::memcpy(&x, static_cast<const char*>(t.data) + 4 * k, 4);
    return x;
  }
  int64_t x;
  std::memcpy(&x, static_cast<const char*>(t.data) + 8 * k, 8);
  return x;
}

// The sum, in the value type and in input order (the order the library sums in), of the values
// at each (row, col).
template <class V>
std::map<std::pair<int64_t, int64_t>, std::complex<double>> summed(
    const std::vector<std::pair<int64_t, int64_t>>& rc, const std::vector<std::complex<double>>& v) {
  std::map<std::pair<int64_t, int64_t>, V> m;
  for (size_t k = 0; k < rc.size(); ++k) {
    V x;
    if constexpr (std::is_same_v<V, float> || std::is_same_v<V, double>) {
      x = static_cast<V>(v[k].real());
    } else {
      using R = typename V::value_type;
      x = V(static_cast<R>(v[k].real()), static_cast<R>(v[k].imag()));
    }
    auto it = m.find(rc[k]);
    if (it == m.end()) {
      m.emplace(rc[k], x);
    } else {
      it->second += x;
    }
  }
  std::map<std::pair<int64_t, int64_t>, std::complex<double>> out;
  for (const auto& [key, x] : m) {
    if constexpr (std::is_same_v<V, float> || std::is_same_v<V, double>) {
      out.emplace(key, std::complex<double>(x, 0.0));
    } else {
      out.emplace(key, std::complex<double>(x.real(), x.imag()));
    }
  }
  return out;
}

inline bool same_value(std::complex<double> a, std::complex<double> b) {
  auto eq = [](double x, double y) { return x == y || (std::isnan(x) && std::isnan(y)); };
  return eq(a.real(), b.real()) && eq(a.imag(), b.imag());
}

// Contents of a well-formed pointer + index pair: "" when valid, else the array whose contents
// are bad (the message must then name a position in it).
inline std::string bad_contents(const std::vector<int64_t>& ptr, const std::vector<int64_t>& ind,
                                int64_t bound, const char* ptr_name, const char* ind_name) {
  if (ptr.empty() || ptr[0] != 0) return ptr_name;
  for (size_t i = 1; i < ptr.size(); ++i)
    if (ptr[i] < ptr[i - 1]) return ptr_name;
  if (ptr.back() != static_cast<int64_t>(ind.size())) return ptr_name;
  for (int64_t x : ind)
    if (x < 0 || x >= bound) return ind_name;
  return "";
}

// Checks the invariants of a built CSR matrix and its values against the triplets it came from.
inline std::string check_built(const gpula::sparse::CsrMatrix& m, const Case& cs,
                               const std::vector<std::pair<int64_t, int64_t>>& rc,
                               const std::vector<std::complex<double>>& v) {
  using gpula::DType;
  const gpula::sparse::CsrView mv = m.view();
  const DType idt = cs.i64 ? DType::i64 : DType::i32;
  if (m.rows() != cs.rows || m.cols() != cs.cols) return "built matrix has the wrong shape";
  if (mv.indptr.dtype != idt || mv.indices.dtype != idt) return "built matrix has the wrong index dtype";
  if (mv.values.dtype != cs.vdt) return "built matrix has the wrong value dtype";
  if (mv.indptr.ndim() != 1 || mv.indices.ndim() != 1 || mv.values.ndim() != 1)
    return "built matrix arrays are not 1-D";
  const int64_t nnz = mv.values.shape[0];
  if (mv.indptr.shape[0] != cs.rows + 1) return "built indptr length is not rows + 1";
  if (mv.indices.shape[0] != nnz) return "built indices length is not nnz";
  for (const auto* t : {&mv.indptr, &mv.indices, &mv.values}) {
    if (t->shape[0] > 1 && t->strides[0] != 1) return "built array is not contiguous";
    if (t->shape[0] > 0 && t->data == nullptr) return "built array has no data";
    if (t->device != gpula::Device::cpu()) return "built array is not on the CPU";
  }
  if (read_int(mv.indptr, 0) != 0) return "built indptr[0] != 0";
  for (int64_t i = 0; i < cs.rows; ++i) {
    const int64_t p0 = read_int(mv.indptr, i), p1 = read_int(mv.indptr, i + 1);
    if (p1 < p0) return "built indptr decreases at " + std::to_string(i + 1);
    if (p1 > nnz) return "built indptr exceeds nnz at " + std::to_string(i + 1);
    for (int64_t k = p0; k < p1; ++k) {
      const int64_t c = read_int(mv.indices, k);
      if (c < 0 || c >= cs.cols) return "built indices[" + std::to_string(k) + "] out of range";
      if (k > p0 && c <= read_int(mv.indices, k - 1))
        return "built row " + std::to_string(i) + " is not sorted and unique (canonical)";
    }
  }
  if (read_int(mv.indptr, cs.rows) != nnz) return "built indptr[rows] != nnz";
  if (!gpula::sparse::is_canonical(mv)) return "is_canonical is false on a built matrix";
  std::map<std::pair<int64_t, int64_t>, std::complex<double>> want;
  switch (cs.vdt) {
    case DType::f32:
      want = summed<float>(rc, v);
      break;
    case DType::f64:
      want = summed<double>(rc, v);
      break;
    case DType::c64:
      want = summed<std::complex<float>>(rc, v);
      break;
    default:
      want = summed<std::complex<double>>(rc, v);
      break;
  }
  if (static_cast<int64_t>(want.size()) != nnz)
    return "built nnz " + std::to_string(nnz) + " != distinct entries " + std::to_string(want.size());
  auto it = want.begin();
  for (int64_t i = 0; i < cs.rows; ++i) {
    for (int64_t k = read_int(mv.indptr, i); k < read_int(mv.indptr, i + 1); ++k, ++it) {
      if (it->first != std::make_pair(i, read_int(mv.indices, k)))
        return "built pattern differs from the input's at entry " + std::to_string(k);
      if (!same_value(it->second, read_value(mv.values, k)))
        return "built value at entry " + std::to_string(k) + " is not the sum of the input's";
    }
  }
  return "";
}

inline std::string check_message(const std::string& what, const std::string& op,
                                 const std::string& content_array) {
  if (what.rfind("[" + op + "] ", 0) != 0) return "error message does not start with [" + op + "]: " + what;
  static const char* names[] = {"indptr", "indices", "values", "row", "col", "colptr", "rowind", "shape"};
  bool named = false;
  for (const char* n : names) named = named || what.find(n) != std::string::npos;
  if (!named) return "error message names no array: " + what;
  if (!content_array.empty() && what.find(content_array + "[") == std::string::npos)
    return "error message does not name the position in " + content_array + ": " + what;
  return "";
}

// Runs one case; "" when the library behaved as documented.
inline std::string run_sparse_case(const uint8_t* data, size_t size) {
  using gpula::DType;
  using gpula::sparse::CsrMatrix;
  ByteReader in(data, size);
  Case cs;
  cs.mode = in.next() % 5;
  const uint8_t dt = in.next();
  const uint8_t lay = in.next();
  const bool allocating_rows = cs.mode == 1 || cs.mode == 2;
  cs.rows = decode_dim(in.next(), !allocating_rows);
  cs.cols = decode_dim(in.next(), true);
  const int64_t nnz0 = in.next() % 48;
  const int64_t pert[3] = {perturb(in.next()), perturb(in.next()), perturb(in.next())};
  const uint8_t pgen = in.next();

  cs.i64 = dt & 1;
  const DType idt = cs.i64 ? DType::i64 : DType::i32;
  cs.vdt = value_dtype(dt >> 1);
  const DType other_idt = cs.i64 ? DType::i32 : DType::i64;
  const DType a_dt = (dt & 0x40) ? DType::f32 : idt;
  const DType b_dt = (dt & 0x08) ? other_idt : idt;
  const DType c_dt = (dt & 0x10) ? ((dt & 0x20) ? DType::i64 : DType::f16) : cs.vdt;
  const bool dtypes_ok = a_dt == idt && b_dt == idt && c_dt == cs.vdt;
  Defect defect[3] = {Defect::none, Defect::none, Defect::none};
  const Defect kinds[4] = {Defect::two_d, Defect::stride2, Defect::null_data, Defect::negative};
  for (int k = 0; k < 3; ++k)
    if (lay & (1 << k)) defect[k] = kinds[(lay >> 3) & 3];
  if (cs.mode == 4) defect[0] = defect[1] = defect[2] = Defect::none;

  // Lengths: the pointer array's expected length is ptr_dim + 1 (clamped to a small one when
  // the shape is negative or huge: such a shape must be rejected whatever the arrays are).
  const bool has_ptr = cs.mode != 1;
  const int64_t ptr_dim = cs.mode == 2 ? cs.cols : cs.rows;
  const int64_t ptr_expect = (ptr_dim >= 0 && ptr_dim < 64) ? ptr_dim + 1 : (pgen >> 4);
  int64_t len[3];
  len[0] = std::max<int64_t>(0, (has_ptr ? ptr_expect : nnz0) + pert[0]);
  len[1] = std::max<int64_t>(0, nnz0 + pert[1]);
  len[2] = std::max<int64_t>(0, nnz0 + pert[2]);

  std::vector<int64_t> av(static_cast<size_t>(len[0])), bv(static_cast<size_t>(len[1]));
  if (has_ptr && !(pgen & 1)) {
    for (int64_t k = 0; k < len[0]; ++k) {
      if (k == 0) {
        av[0] = (pgen & 2) ? decode_index(in.next(), cs.i64) : 0;
      } else {
        const uint8_t s = in.next();
        // Small steps; a huge (raw) first entry is kept as is, not stepped past the type's range.
        const bool huge = av[k - 1] > (int64_t{1} << 40) || av[k - 1] < -(int64_t{1} << 40);
        av[k] = huge ? av[k - 1] : av[k - 1] + (s & 3) - (s >= 0xFC ? 1 : 0);
      }
    }
    if ((pgen & 4) && len[0] > 0) av.back() = len[1];
  } else {
    for (auto& x : av) x = decode_index(in.next(), cs.i64);
  }
  if (!cs.i64) {
    for (auto& x : av) x = static_cast<int32_t>(x);  // what an int32 array holds
  }
  for (auto& x : bv) x = decode_index(in.next(), cs.i64);
  if (b_dt == DType::i32) {
    for (auto& x : bv) x = static_cast<int32_t>(x);
  }
  std::vector<std::complex<double>> cv(static_cast<size_t>(len[2]));
  const bool cplx = cs.vdt == DType::c64 || cs.vdt == DType::c128;
  for (auto& x : cv) {
    const double re = decode_real(in.next());
    const double im = cplx ? decode_real(in.next()) : 0.0;
    x = as_stored({re, im}, cs.vdt);
  }
  cs.extra = in.next();

  cs.a = index_array(av, a_dt, defect[0]);
  cs.b = index_array(bv, b_dt, defect[1]);
  cs.c = value_array(cv, c_dt, defect[2]);

  // ---- the oracle: must the call succeed? ----
  const bool arrays_ok = cs.a.well_formed && cs.b.well_formed && cs.c.well_formed;
  // rows + 1 (and, for CSC, cols + 1) must fit in int64: the pointer arrays have that length.
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  const bool shape_ok = cs.rows >= 0 && cs.cols >= 0 && cs.rows < kMax && (cs.mode != 2 || cs.cols < kMax);
  bool lengths_ok = false;
  std::string content_bad;  // the array whose contents are bad (lengths and structure fine)
  std::vector<std::pair<int64_t, int64_t>> rc;
  const char* op = "sparse.csr_matrix";
  switch (cs.mode) {
    case 0:
    case 3:
    case 4:
      lengths_ok = len[0] - 1 == cs.rows && len[1] == len[2];
      if (lengths_ok) {
        content_bad = bad_contents(av, bv, cs.cols, "indptr", "indices");
        if (content_bad.empty()) {
          for (int64_t i = 0; i < cs.rows; ++i)
            for (int64_t k = av[i]; k < av[i + 1]; ++k) rc.emplace_back(i, bv[k]);
        }
      }
      if (cs.mode == 3) op = "fuzz.validate";
      break;
    case 1:
      lengths_ok = len[0] == len[2] && len[1] == len[2];
      if (lengths_ok) {
        for (int64_t k = 0; k < len[2] && content_bad.empty(); ++k) {
          if (av[k] < 0 || av[k] >= cs.rows) content_bad = "row";
          else if (bv[k] < 0 || bv[k] >= cs.cols) content_bad = "col";
        }
        if (content_bad.empty())
          for (int64_t k = 0; k < len[2]; ++k) rc.emplace_back(av[k], bv[k]);
      }
      break;
    case 2:
      lengths_ok = len[0] - 1 == cs.cols && len[1] == len[2];
      if (lengths_ok) {
        content_bad = bad_contents(av, bv, cs.rows, "colptr", "rowind");
        if (content_bad.empty()) {
          for (int64_t j = 0; j < cs.cols; ++j)
            for (int64_t k = av[j]; k < av[j + 1]; ++k) rc.emplace_back(bv[k], j);
        }
      }
      break;
  }
  const bool structure_ok = arrays_ok && shape_ok && lengths_ok && dtypes_ok;
  const bool valid = structure_ok && content_bad.empty();
  const std::string pos_array = structure_ok ? content_bad : std::string();

  std::optional<CsrMatrix> built;
  bool view_valid = false;
  try {
    switch (cs.mode) {
      case 0:
      case 4:
        built = CsrMatrix::from_csr(cs.rows, cs.cols, cs.a.tensor(), cs.b.tensor(), cs.c.tensor());
        break;
      case 1:
        built = CsrMatrix::from_coo(cs.rows, cs.cols, cs.a.view, cs.b.view, cs.c.view);
        break;
      case 2:
        built = CsrMatrix::from_csc(cs.rows, cs.cols, cs.a.view, cs.b.view, cs.c.view);
        break;
      case 3: {
        const gpula::sparse::CsrView v{cs.rows, cs.cols, cs.a.view, cs.b.view, cs.c.view};
        gpula::sparse::check_csr(v, op);
        gpula::sparse::validate_csr(v, op);
        view_valid = true;
        break;
      }
    }
  } catch (const gpula::InvalidArgument& e) {
    if (valid) return std::string("valid input rejected: ") + e.what();
    return check_message(e.what(), op, pos_array);
  } catch (const std::exception& e) {
    return std::string("undocumented exception: ") + e.what();
  } catch (...) {
    return "undocumented exception (not a std::exception)";
  }
  if (!valid) return "invalid input accepted (mode " + std::to_string(cs.mode) + ")";

  if (cs.mode == 3) {
    bool canonical = true;
    for (int64_t i = 0; i < cs.rows; ++i)
      for (int64_t k = av[i] + 1; k < av[i + 1]; ++k) canonical = canonical && bv[k] > bv[k - 1];
    const gpula::sparse::CsrView v{cs.rows, cs.cols, cs.a.view, cs.b.view, cs.c.view};
    if (view_valid && gpula::sparse::is_canonical(v) != canonical) return "is_canonical is wrong";
    return "";
  }

  std::string bad = check_built(*built, cs, rc, cv);
  if (!bad.empty()) return bad;
  if (cs.mode == 0) {
    bool canonical = true;
    for (int64_t i = 0; i < cs.rows; ++i)
      for (int64_t k = av[i] + 1; k < av[i + 1]; ++k) canonical = canonical && bv[k] > bv[k - 1];
    const bool pattern_shared = built->indptr().data() == cs.a.view.data ||
                                (built->nnz() > 0 && built->indices().data() == cs.b.view.data);
    if (canonical && pattern_shared) return "canonical CSR input's pattern was shared, not copied";
    if (canonical && built->values().data() != cs.c.view.data)
      return "canonical CSR input's values were copied, not shared";
  }

  if (cs.mode == 4) {
    const int64_t nnz = built->nnz();
    const int64_t n = std::max<int64_t>(0, nnz + ((cs.extra & 8) ? (cs.extra & 7) - 3 : 0));
    const DType wdt = (cs.extra & 0x40) ? DType::i32 : value_dtype(cs.extra >> 4);
    const Defect wdef = (cs.extra & 0x80) ? Defect::stride2 : Defect::none;
    std::vector<std::complex<double>> wv(static_cast<size_t>(n), {1.5, -2.0});
    Array w = value_array(wv, wdt, wdef);
    const bool w_ok = n == nnz && wdt != DType::i32 && w.well_formed;
    const char* wop = "sparse.with_values";
    try {
      CsrMatrix m2 = built->with_values(w.tensor(), wop);
      if (!w_ok) return "with_values accepted bad values";
      if (m2.indptr().data() != built->indptr().data() ||
          m2.indices().data() != built->indices().data())
        return "with_values did not share the pattern";
      if (m2.values().data() != w.view.data || m2.values().dtype() != wdt)
        return "with_values did not take the values given";
    } catch (const gpula::InvalidArgument& e) {
      if (w_ok) return std::string("with_values rejected good values: ") + e.what();
      return check_message(e.what(), wop, "");
    } catch (const std::exception& e) {
      return std::string("with_values: undocumented exception: ") + e.what();
    }
  }
  return "";
}

}  // namespace gpula_fuzz
