// CPU backend of Matmul: one BLAS gemm per batch item, then the epilogue in one fused pass.
//
// Work type W: f64 -> double, c64 -> complex<float>, c128 -> complex<double>, anything else
// (f16, bf16, f32) -> float. f16/bf16 operands are widened to f32 once and results narrowed once.
// Every compute type short of 64F (16F, 32F_FAST_16F, 32F_FAST_16BF, 32F_FAST_TF32) runs in full
// f32 here: the CPU has no faster reduced-precision path, and full f32 meets every promise those
// modes make. Bias gradients are accumulated in double for every type.
#include <omp.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "backend/cpu/base/blas.h"
#include "backend/cpu/base/half.h"
#include "backend/cpu/base/parallel.h"
#include "core/dtype_dispatch.h"
#include "matmul/matmul_backend.h"

namespace gpula::detail::cpu {
namespace {

// Threads (backend/cpu/base/parallel.h): a pass over the operands or the result runs on the
// calling thread unless its serial work is worth waking the OpenMP pool for. A GELU or its
// derivative counts kGeluWork units an element (~2.5 ns, measured), so a bias + GELU pass over
// 128 x 512 (~0.17 ms) stays serial, one over 256 x 512 does not.
constexpr double kGeluWork = 12.0;
constexpr double kSmallProduct = 64.0 * 64.0 * 64.0;  // OpenBLAS runs these single-threaded
constexpr int64_t kBgradChunks = 64;  // fixed row split: bias gradients do not depend on threads
// Products up to this many multiply-adds (about a millisecond on one core) run on one thread,
// the BLAS call too (blas::SerialScope): waking gpula's 16 OpenBLAS threads while NumPy's spin
// (~0.1 s after each NumPy call) cost 8-20 ms on a 16-core host (bench/probes/probe_cpu_wake.py,
// H100 host, 2026-12-07: 128x256x512 f32 0.11 ms on 16 threads alone, 19.9 ms right after a
// NumPy a @ b; on one thread 0.27 and 0.48 ms).
constexpr double kSerialProduct = double(int64_t{1} << 25);

template <class W>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<W, float>) return DType::f32;
  if constexpr (std::is_same_v<W, double>) return DType::f64;
  if constexpr (std::is_same_v<W, std::complex<float>>) return DType::c64;
  return DType::c128;
}

// Real <-> complex conversions; complex -> real only drops an imaginary part the plan's checks
// guarantee is never there (complex and real operands are not mixed).
template <class To, class From>
To cast(From v) {
  if constexpr (is_complex_v<To>) {
    using R = typename To::value_type;
    if constexpr (is_complex_v<From>) {
      return To(static_cast<R>(v.real()), static_cast<R>(v.imag()));
    } else {
      return To(static_cast<R>(v), R(0));
    }
  } else if constexpr (is_complex_v<From>) {
    return static_cast<To>(v.real());
  } else {
    return static_cast<To>(v);
  }
}

// Storage types: the stored bits and the arithmetic type they widen to.
struct F16 {
  using raw = uint16_t;
  using value = float;
  static float load(raw v) { return f16_to_float(v); }
  static raw store(float v) { return float_to_f16(v); }
};
struct BF16 {
  using raw = uint16_t;
  using value = float;
  static float load(raw v) { return bf16_to_float(v); }
  static raw store(float v) { return float_to_bf16(v); }
};
template <class T>
struct Plain {
  using raw = T;
  using value = T;
  static T load(T v) { return v; }
  static T store(T v) { return v; }
};

// Calls f with the storage type of t; the plan refuses every dtype not listed.
template <class F>
void visit_storage(DType t, F&& f) {
  switch (t) {
    case DType::f16:
      return f(F16{});
    case DType::bf16:
      return f(BF16{});
    case DType::f32:
      return f(Plain<float>{});
    case DType::f64:
      return f(Plain<double>{});
    case DType::c64:
      return f(Plain<std::complex<float>>{});
    default:
      return f(Plain<std::complex<double>>{});
  }
}

// dst[r] = src[offset + r * stride] for r < count, widened to W.
template <class W>
void load_row(DType t, const void* src, int64_t offset, int64_t stride, int64_t count, W* dst) {
  visit_storage(t, [&](auto s) {
    using S = decltype(s);
    const auto* p = static_cast<const typename S::raw*>(src) + offset;
    if (stride == 1) {
      for (int64_t r = 0; r < count; ++r) dst[r] = cast<W>(S::load(p[r]));
    } else {
      for (int64_t r = 0; r < count; ++r) dst[r] = cast<W>(S::load(p[r * stride]));
    }
  });
}

// dst[offset + j] = src[j] for j < count, narrowed to t.
template <class W>
void store_row(DType t, void* dst, int64_t offset, const W* src, int64_t count) {
  visit_storage(t, [&](auto s) {
    using S = decltype(s);
    auto* p = static_cast<typename S::raw*>(dst) + offset;
    for (int64_t j = 0; j < count; ++j) p[j] = S::store(cast<typename S::value>(src[j]));
  });
}

// dst[o * inner + r] = src[offset + o * outer_stride + r * inner_stride], widened to W.
template <class W>
void gather(DType t, const void* src, int64_t offset, int64_t outer, int64_t inner,
            int64_t outer_stride, int64_t inner_stride, W* dst, int threads) {
  threads = pass_threads(static_cast<double>(outer) * static_cast<double>(inner), threads);
#pragma omp parallel for num_threads(threads) if (threads > 1)
  for (int64_t o = 0; o < outer; ++o) {
    load_row(t, src, offset + o * outer_stride, inner_stride, inner, dst + o * inner);
  }
}

enum class Act : uint8_t { none, relu, gelu };

struct EpilogTraits {
  bool bias = false;
  Act act = Act::none;   // forward activation
  bool aux_out = false;  // keep the pre-activation (a bitmask for ReLU)
  Act grad = Act::none;  // multiply by this activation's derivative at aux_in
  bool bgrad_d = false;  // column sums of the final D
  bool bgrad_a = false;  // row sums of A
  bool bgrad_b = false;  // column sums of B
};

constexpr EpilogTraits traits_of(Epilog e) {
  switch (e) {
    case Epilog::DEFAULT:
      return {};
    case Epilog::RELU:
      return {.act = Act::relu};
    case Epilog::RELU_AUX:
      return {.act = Act::relu, .aux_out = true};
    case Epilog::BIAS:
      return {.bias = true};
    case Epilog::RELU_BIAS:
      return {.bias = true, .act = Act::relu};
    case Epilog::RELU_AUX_BIAS:
      return {.bias = true, .act = Act::relu, .aux_out = true};
    case Epilog::GELU:
      return {.act = Act::gelu};
    case Epilog::GELU_AUX:
      return {.act = Act::gelu, .aux_out = true};
    case Epilog::GELU_BIAS:
      return {.bias = true, .act = Act::gelu};
    case Epilog::GELU_AUX_BIAS:
      return {.bias = true, .act = Act::gelu, .aux_out = true};
    case Epilog::DRELU:
      return {.grad = Act::relu};
    case Epilog::DRELU_BGRAD:
      return {.grad = Act::relu, .bgrad_d = true};
    case Epilog::DGELU:
      return {.grad = Act::gelu};
    case Epilog::DGELU_BGRAD:
      return {.grad = Act::gelu, .bgrad_d = true};
    case Epilog::BGRADA:
      return {.bgrad_a = true};
    case Epilog::BGRADB:
      return {.bgrad_b = true};
  }
  return {};
}

template <Epilog E>
using EpilogC = std::integral_constant<Epilog, E>;

// Calls f with e as a compile-time constant, so each epilogue gets its own branch-free loop.
// Epilog's values run without gaps from DEFAULT to BGRADB.
template <int I = 0, class F>
void visit_epilog(Epilog e, F&& f) {
  if constexpr (I <= static_cast<int>(Epilog::BGRADB)) {
    if (static_cast<int>(e) == I) return f(EpilogC<static_cast<Epilog>(I)>{});
    visit_epilog<I + 1>(e, f);
  }
}

constexpr double kSqrt2OverPi = 0.79788456080286535588;
constexpr double kGeluCubic = 0.044715;

// (1 + tanh(u)) / 2 = 1 / (1 + e^(-2u)) in float, as straight-line arithmetic so that the
// epilogue's loop vectorizes (std::tanh is a scalar libm call, ~25 ns an element). GELU is
// written with it, x s and s + 2 x s (1 - s) du: 1 + tanh(u) and 1 - tanh(u)^2 computed from a
// tanh lose all relative accuracy where tanh(u) nears -1 (x < -3), s keeps it. e^(-2u) = 2^j 2^r
// with j an integer and |r| <= 1/2, 2^r by its Taylor polynomial (relative error < 1e-8).
// u is clamped to [-44.5, 10]: from 10 on s is exactly 1; at -44.5 2^j is the infinity bit
// pattern (j = 128), so s is exactly 0 there and the formula's -inf * 0 = NaN at x = -inf
// stays as the tanh form gives it; a NaN u clamps to 10 and the NaN x carries on. The clamps
// are selects and the rounding an addition, so the loop has no branch (CMakeLists.txt compiles
// this file with -fno-trapping-math, without which GCC keeps the selects as branches).
inline float sigmoid_2u(float u) {
  constexpr float kLog2e = 1.44269504088896341f, kLn2 = 0.693147180559945309f;
  constexpr float kRound = 12582912.0f;  // 1.5 * 2^23: (z + kRound) - kRound is z rounded
  float c = u < 10.0f ? u : 10.0f;       // (NaN -> 10: no NaN reaches the int)
  c = c < -44.5f ? -44.5f : c;
  const float z = -2.0f * kLog2e * c;  // log2(e^(-2c)), -29 < z < 129
  const float j = (z + kRound) - kRound;
  const float r = (z - j) * kLn2;  // |r| <= ln(2) / 2
  float p = 1.0f / 5040;
  p = p * r + 1.0f / 720;
  p = p * r + 1.0f / 120;
  p = p * r + 1.0f / 24;
  p = p * r + 1.0f / 6;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const float e = p * std::bit_cast<float>((static_cast<int32_t>(j) + 127) << 23);  // 2^j or inf
  return 1.0f / (1.0f + e);
}

// The tanh approximation, as cuBLASLt computes it.
template <class W>
W gelu(W x) {
  const W u = W(kSqrt2OverPi) * (x + W(kGeluCubic) * x * x * x);
  if constexpr (std::is_same_v<W, float>) {
    return x * sigmoid_2u(u);
  } else {
    return W(0.5) * x * (W(1) + std::tanh(u));
  }
}

template <class W>
W gelu_grad(W x) {
  const W x2 = x * x;
  const W u = W(kSqrt2OverPi) * x * (W(1) + W(kGeluCubic) * x2);
  const W du = W(kSqrt2OverPi) * (W(1) + W(3.0 * kGeluCubic) * x2);
  if constexpr (std::is_same_v<W, float>) {
    const float s = sigmoid_2u(u);
    return s + 2.0f * x * s * (1.0f - s) * du;
  } else {
    const W t = std::tanh(u);
    return W(0.5) * (W(1) + t) + W(0.5) * x * (W(1) - t * t) * du;
  }
}

// Whether BLAS can read the stored operand in place (else it is gathered into a W buffer).
template <class W>
bool blas_ready(const MatrixDesc& m) {
  const int64_t inner = m.col_major ? m.rows : m.cols;
  const int64_t outer = m.col_major ? m.cols : m.rows;
  const bool ld_ok =
      m.ld >= std::max<int64_t>(inner, 1) && m.ld <= std::numeric_limits<blas::Int>::max();
  return m.dtype == dtype_of<W>() && (outer <= 1 || ld_ok);
}

// The leading dimension BLAS is given; any value is fine for a single row or column.
int64_t blas_ld(const MatrixDesc& m) {
  const int64_t inner = m.col_major ? m.rows : m.cols;
  const int64_t outer = m.col_major ? m.cols : m.rows;
  return outer <= 1 ? std::max<int64_t>(inner, 1) : m.ld;
}

template <class W>
struct Operand {
  const W* ptr = nullptr;
  bool trans = false;  // stored column-major: row-major BLAS sees its transpose
  int64_t ld = 1;
};

// Runs one execution of a plan with work type W.
template <class W>
class Runner {
 public:
  Runner(const MatmulProblem& p, const MatmulBuffers& buf)
      : p_(p), buf_(buf), t_(traits_of(p.epilog)), d_direct_(p.d.dtype == dtype_of<W>()) {}

  void run() {
    prepare_shared();
    const int max_threads = omp_get_max_threads();
    const double product =
        static_cast<double>(p_.m) * static_cast<double>(p_.n) * static_cast<double>(p_.k);
    // Small products: OpenBLAS would run each on one thread, so spread the items instead, when
    // they are worth a pool's wake (a multiply-add counts a quarter of an element operation).
    const double batch_work = product * static_cast<double>(p_.batch) / 4.0;
    if (p_.batch > 1 && product < kSmallProduct && max_threads > 1 &&
        pass_threads(batch_work, max_threads) > 1) {
      const int lanes_n = static_cast<int>(std::min<int64_t>(max_threads, p_.batch));
      std::vector<Lane> lanes;
      lanes.reserve(lanes_n);
      for (int i = 0; i < lanes_n; ++i) lanes.push_back(make_lane(1));
#pragma omp parallel for num_threads(lanes_n) schedule(static)
      for (int64_t b = 0; b < p_.batch; ++b) run_item(b, lanes[omp_get_thread_num()]);
      return;
    }
    const bool serial = product * static_cast<double>(p_.batch) <= kSerialProduct;
    const blas::SerialScope scope(serial && max_threads > 1);
    Lane lane = make_lane(serial ? 1 : max_threads);
    for (int64_t b = 0; b < p_.batch; ++b) run_item(b, lane);
  }

 private:
  // Scratch of one thread of batch items; allocated before any parallel region.
  struct Lane {
    int threads = 1;
    std::vector<W> a, b, d;  // gathered operands and the W result when D is not W
    std::vector<W> rows;     // one row of n per epilogue thread
    std::vector<W> bgrad;
    std::vector<double> partial;
  };

  static int64_t stored_size(const MatrixDesc& m) { return m.rows * m.cols; }

  Lane make_lane(int threads) const {
    Lane l;
    l.threads = threads;
    if (!blas_ready<W>(p_.a) && !a_shared_) l.a.resize(stored_size(p_.a));
    if (!blas_ready<W>(p_.b) && !b_shared_) l.b.resize(stored_size(p_.b));
    if (!d_direct_) l.d.resize(p_.m * p_.n);
    l.rows.resize(static_cast<size_t>(threads) * p_.n);
    if (t_.bgrad_d || t_.bgrad_a || t_.bgrad_b) l.bgrad.resize(p_.bgrad_len);
    if (t_.bgrad_d) l.partial.resize(std::min(p_.m, kBgradChunks) * p_.n);
    if (t_.bgrad_a || t_.bgrad_b) l.partial.resize(std::max<int64_t>(p_.bgrad_len, 1));
    return l;
  }

  static bool shared_operand(const MatrixDesc& m, int64_t batch) {
    return !blas_ready<W>(m) && (m.batch_stride == 0 || batch == 1);
  }

  void gather_operand(const MatrixDesc& m, const void* data, int64_t b, W* dst, int threads) const {
    const int64_t inner = m.col_major ? m.rows : m.cols;
    const int64_t outer = m.col_major ? m.cols : m.rows;
    gather<W>(m.dtype, data, b * m.batch_stride, outer, inner, m.ld, 1, dst, threads);
  }

  // Row-major m x n from C in any layout.
  void gather_c(int64_t b, W* dst, int threads) const {
    const MatrixDesc& c = p_.c;
    gather<W>(c.dtype, buf_.c, b * c.batch_stride, p_.m, p_.n, c.col_major ? 1 : c.ld,
              c.col_major ? c.ld : 1, dst, threads);
  }

  bool c_has_d_layout() const {
    const MatrixDesc& c = p_.c;
    return c.dtype == p_.d.dtype && !c.col_major && (c.ld == p_.n || p_.m <= 1) &&
           (c.batch_stride == p_.m * p_.n || p_.batch <= 1);
  }

  // Work done once per execution: broadcast operands widened once, bias widened, aliasing C.
  void prepare_shared() {
    const int threads = omp_get_max_threads();
    a_shared_ = shared_operand(p_.a, p_.batch);
    b_shared_ = shared_operand(p_.b, p_.batch);
    if (a_shared_) {
      shared_a_.resize(stored_size(p_.a));
      gather_operand(p_.a, buf_.a, 0, shared_a_.data(), threads);
    }
    if (b_shared_) {
      shared_b_.resize(stored_size(p_.b));
      gather_operand(p_.b, buf_.b, 0, shared_b_.data(), threads);
    }
    if (t_.bias) {
      bias_.resize(p_.n);
      load_row(p_.bias_type, buf_.bias, 0, 1, p_.n, bias_.data());
    }
    if (p_.has_c && buf_.c == buf_.d) {
      if (c_has_d_layout()) {
        c_in_place_ = d_direct_;  // else each item is read into its W buffer before it is written
      } else {
        // C overlaps D in another layout: writing item b could clobber C for a later item.
        const int64_t items = p_.c.batch_stride == 0 ? 1 : p_.batch;
        const int64_t mn = p_.m * p_.n;
        c_snapshot_.resize(items * mn);
        for (int64_t b = 0; b < items; ++b) gather_c(b, c_snapshot_.data() + b * mn, threads);
        c_snapshotted_ = true;
      }
    }
  }

  Operand<W> operand(const MatrixDesc& m, const void* data, bool shared,
                     const std::vector<W>& shared_buf, int64_t b, std::vector<W>& scratch,
                     int threads) const {
    const int64_t inner = m.col_major ? m.rows : m.cols;
    if (blas_ready<W>(m)) {
      return {static_cast<const W*>(data) + b * m.batch_stride, m.col_major, blas_ld(m)};
    }
    if (!shared) gather_operand(m, data, b, scratch.data(), threads);
    return {shared ? shared_buf.data() : scratch.data(), m.col_major, std::max<int64_t>(inner, 1)};
  }

  void run_item(int64_t b, Lane& lane) const {
    const int64_t m = p_.m, n = p_.n, k = p_.k, mn = m * n;
    const Operand<W> a = operand(p_.a, buf_.a, a_shared_, shared_a_, b, lane.a, lane.threads);
    const Operand<W> bm = operand(p_.b, buf_.b, b_shared_, shared_b_, b, lane.b, lane.threads);
    W* d = d_direct_ ? static_cast<W*>(buf_.d) + b * mn : lane.d.data();
    if (p_.has_c && !c_in_place_) {
      if (c_snapshotted_) {
        const W* src = c_snapshot_.data() + (p_.c.batch_stride == 0 ? 0 : b * mn);
        std::copy(src, src + mn, d);
      } else {
        gather_c(b, d, lane.threads);
      }
    }
    const W alpha = cast<W>(p_.alpha);
    const W beta = p_.has_c ? cast<W>(p_.beta) : W(0);
    if (mn > 0 && k == 0) {
      for (int64_t e = 0; e < mn; ++e) d[e] = beta == W(0) ? W(0) : beta * d[e];
    } else if (mn > 0) {
      using blas::Int;
      blas::gemm(CblasRowMajor, blas::trans(a.trans), blas::trans(bm.trans), static_cast<Int>(m),
                 static_cast<Int>(n), static_cast<Int>(k), alpha, a.ptr, static_cast<Int>(a.ld),
                 bm.ptr, static_cast<Int>(bm.ld), beta, d, static_cast<Int>(n));
    }
    if constexpr (is_complex_v<W>) {
      if (!d_direct_) rows_pass<Epilog::DEFAULT>(b, d, lane);
    } else {
      visit_epilog(p_.epilog, [&](auto e) {
        if (decltype(e)::value != Epilog::DEFAULT || !d_direct_)
          rows_pass<decltype(e)::value>(b, d, lane);
      });
      // Sums of the operands as stored, before alpha.
      if (t_.bgrad_a) reduce(a.ptr, m, k, a.trans ? 1 : a.ld, a.trans ? a.ld : 1, b, lane);
      if (t_.bgrad_b) reduce(bm.ptr, n, k, bm.trans ? bm.ld : 1, bm.trans ? 1 : bm.ld, b, lane);
    }
  }

  // The fused epilogue over the W result d of item b; narrows into D when D is not W.
  template <Epilog E>
  void rows_pass(int64_t b, W* d, Lane& lane) const {
    constexpr EpilogTraits t = traits_of(E);
    const int64_t m = p_.m, n = p_.n;
    const int64_t chunks = t.bgrad_d ? std::min(m, kBgradChunks) : m;
    double* partial = lane.partial.data();
    if constexpr (t.bgrad_d) std::fill(lane.partial.begin(), lane.partial.end(), 0.0);
    const double work = static_cast<double>(m) * static_cast<double>(n) *
                        (1.0 + (t.act == Act::gelu ? kGeluWork : 0.0) +
                         (t.grad == Act::gelu ? kGeluWork : 0.0));
    const int threads = pass_threads(work, lane.threads);
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (int64_t c = 0; c < chunks; ++c) {
      W* tmp = lane.rows.data() + static_cast<int64_t>(omp_get_thread_num()) * n;
      for (int64_t i = c * m / chunks; i < (c + 1) * m / chunks; ++i) {
        row<E>(b, i, d + i * n, tmp, t.bgrad_d ? partial + c * n : nullptr);
      }
    }
    if constexpr (t.bgrad_d) {
      for (int64_t j = 0; j < n; ++j) {
        double s = 0.0;
        for (int64_t c = 0; c < chunks; ++c) s += partial[c * n + j];
        lane.bgrad[j] = static_cast<W>(s);
      }
      store_row(p_.bias_type, buf_.bgrad, b * p_.bgrad_len, lane.bgrad.data(), n);
    }
  }

  template <Epilog E>
  void row(int64_t b, int64_t i, W* d, W* tmp, double* partial) const {
    constexpr EpilogTraits t = traits_of(E);
    const int64_t n = p_.n;
    const int64_t aux_row = (b * p_.m + i) * p_.aux_ld;  // bits for ReLU, elements for GELU
    uint8_t* mask_out = nullptr;
    const uint8_t* mask_in = nullptr;
    if constexpr (t.aux_out && t.act == Act::relu) {
      mask_out = static_cast<uint8_t*>(buf_.aux_out) + aux_row / 8;
      std::memset(mask_out, 0, p_.aux_ld / 8);  // padding bits must read as zero
    }
    if constexpr (t.grad == Act::relu)
      mask_in = static_cast<const uint8_t*>(buf_.aux_in) + aux_row / 8;
    if constexpr (t.grad == Act::gelu) load_row(p_.aux_type, buf_.aux_in, aux_row, 1, n, tmp);
    for (int64_t j = 0; j < n; ++j) {
      W v = d[j];
      if constexpr (t.bias) v += bias_[j];
      if constexpr (t.aux_out && t.act == Act::relu) {
        // cuBLASLt's convention, seen on the H200: the bit is set at exactly zero too, so the
        // gradient passes through a zero pre-activation.
        if (v >= W(0)) mask_out[j >> 3] |= static_cast<uint8_t>(1u << (j & 7));
      }
      if constexpr (t.aux_out && t.act == Act::gelu) tmp[j] = v;
      if constexpr (t.act == Act::relu) v = v < W(0) ? W(0) : v;  // NaN passes through
      if constexpr (t.act == Act::gelu) v = gelu(v);
      if constexpr (t.grad == Act::relu) v = ((mask_in[j >> 3] >> (j & 7)) & 1u) ? v : W(0);
      if constexpr (t.grad == Act::gelu) v *= gelu_grad(tmp[j]);
      if constexpr (t.bgrad_d) partial[j] += static_cast<double>(v);
      d[j] = v;
    }
    if constexpr (t.aux_out && t.act == Act::gelu) {
      store_row(p_.aux_type, buf_.aux_out, aux_row, tmp, n);
    }
    if (!d_direct_) store_row(p_.d.dtype, buf_.d, (b * p_.m + i) * n, d, n);
  }

  // bgrad of item b: out[o] = sum over r < count of src[o * so + r * sr], o < outer.
  void reduce(const W* src, int64_t outer, int64_t count, int64_t so, int64_t sr, int64_t b,
              Lane& lane) const {
    double* acc = lane.partial.data();
    if (so == 1) {  // the sums run across memory: add whole rows
      std::fill(acc, acc + outer, 0.0);
      for (int64_t r = 0; r < count; ++r) {
        const W* line = src + r * sr;
        for (int64_t o = 0; o < outer; ++o) acc[o] += static_cast<double>(line[o]);
      }
    } else {
      const int threads =
          pass_threads(static_cast<double>(outer) * static_cast<double>(count), lane.threads);
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
      for (int64_t o = 0; o < outer; ++o) {
        double s = 0.0;
        for (int64_t r = 0; r < count; ++r) s += static_cast<double>(src[o * so + r * sr]);
        acc[o] = s;
      }
    }
    for (int64_t o = 0; o < outer; ++o) lane.bgrad[o] = static_cast<W>(acc[o]);
    store_row(p_.bias_type, buf_.bgrad, b * p_.bgrad_len, lane.bgrad.data(), outer);
  }

  const MatmulProblem& p_;
  const MatmulBuffers& buf_;
  const EpilogTraits t_;
  const bool d_direct_;  // D has type W: BLAS and the epilogue write it in place
  bool a_shared_ = false, b_shared_ = false;
  std::vector<W> shared_a_, shared_b_, bias_, c_snapshot_;
  bool c_in_place_ = false, c_snapshotted_ = false;
};

bool cpu_float_type(DType t) {
  return t == DType::f16 || t == DType::bf16 || t == DType::f32 || t == DType::f64 ||
         t == DType::c64 || t == DType::c128;
}

void check_dtype(DType t, const char* what) {
  if (!cpu_float_type(t)) {
    throw DTypeError(std::string("[matmul] ") + what + " has dtype " + std::string(name(t)) +
                     ", which the CPU backend does not support");
  }
}

void check_problem(const MatmulProblem& p) {
  const EpilogTraits t = traits_of(p.epilog);
  const bool fp8 = p.fp8 || is_float8(p.a.dtype) || is_float8(p.b.dtype) || is_float8(p.d.dtype) ||
                   (p.has_c && is_float8(p.c.dtype));
  if (fp8) throw NotSupported("[matmul] fp8 is not supported on the CPU backend");
  check_dtype(p.a.dtype, "a");
  check_dtype(p.b.dtype, "b");
  check_dtype(p.d.dtype, "the result");
  if (p.has_c) check_dtype(p.c.dtype, "c");
  const bool complex = is_complex(p.a.dtype);
  if (is_complex(p.b.dtype) != complex || is_complex(p.d.dtype) != complex ||
      (p.has_c && is_complex(p.c.dtype) != complex)) {
    throw DTypeError("[matmul] the CPU backend cannot mix real and complex operands");
  }
  if (complex && p.epilog != Epilog::DEFAULT) {
    throw NotSupported("[matmul] epilogue " + std::string(name(p.epilog)) +
                       " is not supported for complex types");
  }
  if (p.m < 0 || p.n < 0 || p.k < 0 || p.batch < 0) {
    throw InvalidArgument("[matmul] negative size (m, n, k, batch) = (" + std::to_string(p.m) +
                          ", " + std::to_string(p.n) + ", " + std::to_string(p.k) + ", " +
                          std::to_string(p.batch) + ")");
  }
  blas::to_int(p.m, "matmul", "m (the rows of a, with any batch folded in)");
  blas::to_int(p.n, "matmul", "n (the columns of b, with any batch folded in)");
  blas::to_int(p.k, "matmul", "k (the columns of a and rows of b)");
  if (t.bias) check_dtype(p.bias_type, "bias");
  if (t.bias && is_complex(p.bias_type)) throw DTypeError("[matmul] bias must be real");
  if (t.aux_out || t.grad != Act::none) {
    const bool relu = t.act == Act::relu || t.grad == Act::relu;
    if (p.aux_ld < p.n || (relu && p.aux_ld % 8 != 0)) {
      throw InvalidArgument("[matmul] aux leading dimension " + std::to_string(p.aux_ld) +
                            " does not fit n = " + std::to_string(p.n));
    }
    if (!relu && (!cpu_float_type(p.aux_type) || is_complex(p.aux_type))) {
      throw DTypeError("[matmul] gelu aux has dtype " + std::string(name(p.aux_type)));
    }
  }
  if (t.bgrad_d || t.bgrad_a || t.bgrad_b) {
    if (!cpu_float_type(p.bias_type) || is_complex(p.bias_type)) {
      throw DTypeError("[matmul] bias gradient has dtype " + std::string(name(p.bias_type)));
    }
    const int64_t expect = t.bgrad_a ? p.m : p.n;
    if (p.bgrad_len != expect) {
      throw InvalidArgument("[matmul] bias gradient length " + std::to_string(p.bgrad_len) +
                            ", expected " + std::to_string(expect));
    }
  }
}

void check_buffers(const MatmulProblem& p, const MatmulBuffers& buf) {
  const EpilogTraits t = traits_of(p.epilog);
  const bool any_d = p.batch > 0 && p.m > 0 && p.n > 0;
  const auto need = [&](const void* ptr, bool needed, const char* what) {
    if (needed && ptr == nullptr)
      throw InvalidArgument(std::string("[matmul] ") + what + " is null");
  };
  need(buf.a, p.batch > 0 && p.m > 0 && p.k > 0, "a");
  need(buf.b, p.batch > 0 && p.k > 0 && p.n > 0, "b");
  need(buf.c, any_d && p.has_c, "c");
  need(buf.d, any_d, "the result");
  need(buf.bias, p.n > 0 && t.bias, "bias");
  need(buf.aux_out, any_d && t.aux_out, "the aux output");
  need(buf.aux_in, any_d && t.grad != Act::none, "the aux input");
  need(buf.bgrad, p.batch > 0 && p.bgrad_len > 0 && (t.bgrad_d || t.bgrad_a || t.bgrad_b),
       "the bias gradient");
}

DType work_type(const MatmulProblem& p) {
  const auto wide = [](DType t) { return t == DType::f64 || t == DType::c128; };
  const bool w = wide(p.a.dtype) || wide(p.b.dtype);
  if (is_complex(p.a.dtype)) return w ? DType::c128 : DType::c64;
  return w ? DType::f64 : DType::f32;
}

class CpuMatmulPlan final : public MatmulBackendPlan {
 public:
  explicit CpuMatmulPlan(const MatmulProblem& p) : p_(p), work_(work_type(p)) {}

  std::vector<AlgorithmInfo> candidates() const override { return {algo_}; }
  AlgorithmInfo chosen() const override { return algo_; }

  AlgorithmInfo autotune(const MatmulBuffers& buffers, int iterations, Stream stream,
                         const LogSink&) override {
    std::vector<float> times;
    for (int i = 0; i < std::max(iterations, 1); ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      execute(buffers, stream);
      const auto t1 = std::chrono::steady_clock::now();
      times.push_back(std::chrono::duration<float, std::milli>(t1 - t0).count());
    }
    std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
    algo_.time_ms = times[times.size() / 2];
    return algo_;
  }

  void execute(const MatmulBuffers& buffers, Stream) override {
    check_buffers(p_, buffers);
    switch (work_) {
      case DType::f64:
        return Runner<double>(p_, buffers).run();
      case DType::c64:
        return Runner<std::complex<float>>(p_, buffers).run();
      case DType::c128:
        return Runner<std::complex<double>>(p_, buffers).run();
      default:
        return Runner<float>(p_, buffers).run();
    }
  }

 private:
  MatmulProblem p_;
  DType work_;
  AlgorithmInfo algo_{};  // index 0, algo_id -1: the one BLAS path
};

}  // namespace

std::unique_ptr<MatmulBackendPlan> make_matmul_plan(const MatmulProblem& p,
                                                    const PlanPreferences&) {
  check_problem(p);
  return std::make_unique<CpuMatmulPlan>(p);
}

}  // namespace gpula::detail::cpu
