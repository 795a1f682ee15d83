// The CPU matmul backend, driven through MatmulProblem directly, against a float64 reference.
#include <gpula/error.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <numbers>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "backend/cpu/base/half.h"
#include "matmul/matmul_backend.h"

namespace gpula::detail {
namespace {

using cplx = std::complex<double>;

template <class T>
T load(const unsigned char* p, int64_t i) {
  T v;
  std::memcpy(&v, p + i * sizeof(T), sizeof(T));
  return v;
}
template <class T>
void put(unsigned char* p, int64_t i, T v) {
  std::memcpy(p + i * sizeof(T), &v, sizeof(T));
}

// A host buffer of any dtype, read and written through complex<double>.
struct Buffer {
  DType dtype = DType::f32;
  std::vector<unsigned char> bytes;

  Buffer() = default;
  Buffer(DType t, int64_t count) : dtype(t), bytes(count * size_of(t)) {}
  int64_t size() const { return static_cast<int64_t>(bytes.size() / size_of(dtype)); }
  void* data() { return bytes.data(); }

  cplx get(int64_t i) const {
    const unsigned char* p = bytes.data();
    switch (dtype) {
      case DType::f16:
        return cpu::f16_to_float(load<uint16_t>(p, i));
      case DType::bf16:
        return cpu::bf16_to_float(load<uint16_t>(p, i));
      case DType::f32:
        return load<float>(p, i);
      case DType::f64:
        return load<double>(p, i);
      case DType::c64:
        return cplx(load<std::complex<float>>(p, i));
      case DType::c128:
        return load<cplx>(p, i);
      default:
        ADD_FAILURE() << "unexpected dtype";
        return 0.0;
    }
  }
  void set(int64_t i, cplx v) {
    unsigned char* p = bytes.data();
    const auto r = static_cast<float>(v.real());
    switch (dtype) {
      case DType::f16:
        return put(p, i, cpu::float_to_f16(r));
      case DType::bf16:
        return put(p, i, cpu::float_to_bf16(r));
      case DType::f32:
        return put(p, i, r);
      case DType::f64:
        return put(p, i, v.real());
      case DType::c64:
        return put(p, i, std::complex<float>(v));
      case DType::c128:
        return put(p, i, v);
      default:
        ADD_FAILURE() << "unexpected dtype";
    }
  }
  void fill(cplx v) {
    for (int64_t i = 0; i < size(); ++i) set(i, v);
  }
};

struct Layout {
  bool col = false;
  int64_t pad = 0;  // extra leading dimension, and a gap between batch items
  bool bcast = false;
};

// A stack of matrices stored as its MatrixDesc says; padding holds NaN.
struct Stored {
  MatrixDesc desc;
  Buffer buf;
  cplx at(int64_t b, int64_t i, int64_t j) const {
    return buf.get(b * desc.batch_stride + (desc.col_major ? i + j * desc.ld : i * desc.ld + j));
  }
};

cplx random_value(DType t, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const double re = u(rng);
  return is_complex(t) ? cplx(re, u(rng)) : cplx(re);
}

Stored random_matrix(DType t, int64_t rows, int64_t cols, int64_t batch, Layout l,
                     std::mt19937& rng) {
  const int64_t inner = l.col ? rows : cols, outer = l.col ? cols : rows;
  const int64_t ld = std::max<int64_t>(inner, 1) + l.pad;
  const int64_t stride = l.bcast ? 0 : ld * outer + l.pad;
  const int64_t items = l.bcast ? 1 : batch;
  Stored s{{t, rows, cols, l.col, ld, stride},
           Buffer(t, std::max<int64_t>(items * (ld * outer + l.pad), 1))};
  s.buf.fill(std::numeric_limits<double>::quiet_NaN());
  for (int64_t b = 0; b < items; ++b) {
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t j = 0; j < cols; ++j) {
        s.buf.set(b * stride + (l.col ? i + j * ld : i * ld + j), random_value(t, rng));
      }
    }
  }
  return s;
}

bool in(Epilog e, std::initializer_list<Epilog> set) {
  return std::find(set.begin(), set.end(), e) != set.end();
}
bool has_bias(Epilog e) {
  return in(e, {Epilog::BIAS, Epilog::RELU_BIAS, Epilog::RELU_AUX_BIAS, Epilog::GELU_BIAS,
                Epilog::GELU_AUX_BIAS});
}
bool relu_act(Epilog e) {
  return in(e, {Epilog::RELU, Epilog::RELU_AUX, Epilog::RELU_BIAS, Epilog::RELU_AUX_BIAS});
}
bool gelu_act(Epilog e) {
  return in(e, {Epilog::GELU, Epilog::GELU_AUX, Epilog::GELU_BIAS, Epilog::GELU_AUX_BIAS});
}
bool aux_out(Epilog e) {
  return in(e, {Epilog::RELU_AUX, Epilog::RELU_AUX_BIAS, Epilog::GELU_AUX, Epilog::GELU_AUX_BIAS});
}
bool drelu(Epilog e) { return in(e, {Epilog::DRELU, Epilog::DRELU_BGRAD}); }
bool dgelu(Epilog e) { return in(e, {Epilog::DGELU, Epilog::DGELU_BGRAD}); }
bool bgrad_d(Epilog e) { return in(e, {Epilog::DRELU_BGRAD, Epilog::DGELU_BGRAD}); }
bool any_bgrad(Epilog e) { return bgrad_d(e) || in(e, {Epilog::BGRADA, Epilog::BGRADB}); }

double gelu_ref(double x) {
  const double s = std::sqrt(2.0 / std::numbers::pi);
  return 0.5 * x * (1.0 + std::tanh(s * (x + 0.044715 * x * x * x)));
}
double gelu_grad_ref(double x) {
  const double s = std::sqrt(2.0 / std::numbers::pi);
  const double t = std::tanh(s * (x + 0.044715 * x * x * x));
  return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * s * (1.0 + 3.0 * 0.044715 * x * x);
}

double tolerance(DType t) {
  switch (t) {
    case DType::f64:
    case DType::c128:
      return 1e-12;
    case DType::f32:
    case DType::c64:
      return 1e-5;
    default:
      return 1e-2;
  }
}

// Relative Frobenius error; absolute when the reference is zero.
double rel_error(const std::vector<cplx>& got, const std::vector<cplx>& ref) {
  double num = 0.0, den = 0.0;
  for (size_t i = 0; i < ref.size(); ++i) {
    num += std::norm(got[i] - ref[i]);
    den += std::norm(ref[i]);
  }
  return den > 0.0 ? std::sqrt(num / den) : std::sqrt(num);
}

struct Case {
  DType dt = DType::f32;
  std::optional<DType> out;  // the type of A and B when unset
  int64_t m = 3, n = 4, k = 5, batch = 1;
  Layout a, b, c;
  bool has_c = false;
  bool c_is_d = false;  // C is D's memory, read through c's layout
  cplx alpha = 1.0, beta = 0.0;
  Epilog epilog = Epilog::DEFAULT;
  const Buffer* aux_in = nullptr;  // DRELU*/DGELU*: the aux of a forward call

  std::string describe() const {
    std::ostringstream s;
    s << name(dt) << "->" << name(out.value_or(dt)) << " m=" << m << " n=" << n << " k=" << k
      << " batch=" << batch << " a(col=" << a.col << " pad=" << a.pad << " bcast=" << a.bcast
      << ") b(col=" << b.col << " pad=" << b.pad << " bcast=" << b.bcast << ") c(has=" << has_c
      << " is_d=" << c_is_d << " col=" << c.col << " pad=" << c.pad << " bcast=" << c.bcast
      << ") alpha=" << alpha << " beta=" << beta << " epilog=" << name(epilog);
    return s.str();
  }
};

struct Outcome {
  Buffer d, aux, bgrad;
};

int64_t round_up(int64_t v, int64_t to) { return (v + to - 1) / to * to; }

bool mask_bit(const Buffer& aux, int64_t aux_ld, int64_t row, int64_t j) {
  return (aux.bytes[row * aux_ld / 8 + j / 8] >> (j % 8)) & 1;
}

// Builds the problem, runs the backend, and checks every output against the reference.
Outcome run_case(const Case& cs, std::mt19937& rng) {
  SCOPED_TRACE(cs.describe());
  const DType out = cs.out.value_or(cs.dt);
  const int64_t m = cs.m, n = cs.n, k = cs.k, batch = cs.batch, mn = m * n;
  const Epilog e = cs.epilog;
  const bool relu_family = relu_act(e) || drelu(e);
  const double tol = std::max(tolerance(cs.dt), tolerance(out));

  MatmulProblem p;
  p.m = m, p.n = n, p.k = k, p.batch = batch;
  p.alpha = cs.alpha, p.beta = cs.beta, p.epilog = e;
  p.compute =
      out == DType::f64 || out == DType::c128 ? ComputeType::COMPUTE_64F : ComputeType::COMPUTE_32F;
  const Stored a = random_matrix(cs.dt, m, k, batch, cs.a, rng);
  const Stored b = random_matrix(cs.dt, k, n, batch, cs.b, rng);
  p.a = a.desc, p.b = b.desc;
  p.d = {out, m, n, false, n, mn};
  Outcome o{Buffer(out, std::max<int64_t>(batch * mn, 1)), {}, {}};
  o.d.fill(std::numeric_limits<double>::quiet_NaN());
  MatmulBuffers buf{a.buf.bytes.data(), b.buf.bytes.data(), nullptr, o.d.data()};

  Stored c;
  p.has_c = cs.has_c;
  if (cs.c_is_d) {
    for (int64_t i = 0; i < o.d.size(); ++i) o.d.set(i, random_value(out, rng));
    const int64_t ld = cs.c.col ? std::max<int64_t>(m, 1) : std::max<int64_t>(n, 1);
    c = {{out, m, n, cs.c.col, ld, mn}, o.d};  // a copy of D as it was before the call
    buf.c = o.d.data();
  } else if (cs.has_c) {
    c = random_matrix(out, m, n, batch, cs.c, rng);
    buf.c = c.buf.bytes.data();
  }
  p.c = c.desc;

  p.bias_type = out;  // the result type, including for f16/bf16 results
  p.aux_type = out;
  Buffer bias;
  if (has_bias(e)) {
    bias = Buffer(p.bias_type, n);
    for (int64_t j = 0; j < n; ++j) bias.set(j, random_value(out, rng));
    buf.bias = bias.data();
  }
  if (aux_out(e) || drelu(e) || dgelu(e)) p.aux_ld = round_up(n, relu_family ? 128 : 8);
  const int64_t aux_count = batch * m * p.aux_ld;
  if (aux_out(e)) {
    o.aux = relu_family ? Buffer(DType::u8, std::max<int64_t>(aux_count / 8, 1))
                        : Buffer(p.aux_type, std::max<int64_t>(aux_count, 1));
    if (relu_family) {
      std::fill(o.aux.bytes.begin(), o.aux.bytes.end(), 0xff);  // padding bits must be cleared
    } else {
      o.aux.fill(7.0);  // padding must stay untouched
    }
    buf.aux_out = o.aux.data();
  }
  if (drelu(e) || dgelu(e)) buf.aux_in = cs.aux_in->bytes.data();
  if (any_bgrad(e)) {
    p.bgrad_len = e == Epilog::BGRADA ? m : n;
    o.bgrad = Buffer(p.bias_type, std::max<int64_t>(batch * p.bgrad_len, 1));
    o.bgrad.fill(std::numeric_limits<double>::quiet_NaN());
    buf.bgrad = o.bgrad.data();
  }

  cpu::make_matmul_plan(p, {})->execute(buf, Stream{});

  std::vector<cplx> ref_d(batch * mn), got_d(batch * mn), ref_pre, got_pre;
  std::vector<cplx> ref_bgrad, got_bgrad;
  int64_t mask_mismatch = 0, bad_padding = 0;
  double pre_rms = 0.0;
  std::vector<double> pre(batch * mn);
  for (int64_t bb = 0; bb < batch; ++bb) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        cplx acc = 0.0;
        for (int64_t kk = 0; kk < k; ++kk) acc += a.at(bb, i, kk) * b.at(bb, kk, j);
        cplx v = cs.alpha * acc + (cs.has_c ? cs.beta * c.at(bb, i, j) : cplx(0.0));
        const int64_t at = bb * mn + i * n + j, row = bb * m + i;
        if (!is_complex(out)) {
          double x = v.real() + (has_bias(e) ? bias.get(j).real() : 0.0);
          pre[at] = x;
          pre_rms += x * x;
          if (relu_act(e)) x = std::max(x, 0.0);
          if (gelu_act(e)) x = gelu_ref(x);
          if (drelu(e) && !mask_bit(*cs.aux_in, p.aux_ld, row, j)) x = 0.0;
          if (dgelu(e)) x *= gelu_grad_ref(cs.aux_in->get(row * p.aux_ld + j).real());
          v = x;
        }
        ref_d[at] = v;
        got_d[at] = o.d.get(at);
      }
    }
  }
  EXPECT_LE(rel_error(got_d, ref_d), tol) << "result";
  pre_rms = std::sqrt(pre_rms / std::max<double>(static_cast<double>(pre.size()), 1.0));

  if (aux_out(e)) {
    for (int64_t row = 0; row < batch * m; ++row) {
      for (int64_t j = 0; j < p.aux_ld; ++j) {
        if (relu_family && j >= n) {
          bad_padding += mask_bit(o.aux, p.aux_ld, row, j);
        } else if (relu_family) {
          const double x = pre[row * n + j];
          // Rounding may flip the sign of a pre-activation within the tolerance of zero.
          const bool ok =
              mask_bit(o.aux, p.aux_ld, row, j) == (x > 0.0) || std::abs(x) <= tol * pre_rms;
          mask_mismatch += !ok;
        } else if (j >= n) {
          bad_padding += o.aux.get(row * p.aux_ld + j) != cplx(7.0);
        } else {
          ref_pre.push_back(pre[row * n + j]);
          got_pre.push_back(o.aux.get(row * p.aux_ld + j));
        }
      }
    }
    EXPECT_EQ(mask_mismatch, 0) << "relu_aux bits";
    EXPECT_EQ(bad_padding, 0) << "aux padding";
    if (!relu_family) {
      EXPECT_LE(rel_error(got_pre, ref_pre), tol) << "gelu_aux";
    }
  }

  if (any_bgrad(e)) {
    for (int64_t bb = 0; bb < batch; ++bb) {
      for (int64_t x = 0; x < p.bgrad_len; ++x) {
        cplx s = 0.0;
        if (bgrad_d(e)) {
          for (int64_t i = 0; i < m; ++i) s += ref_d[bb * mn + i * n + x];
        } else if (e == Epilog::BGRADA) {
          for (int64_t kk = 0; kk < k; ++kk) s += a.at(bb, x, kk);
        } else {
          for (int64_t kk = 0; kk < k; ++kk) s += b.at(bb, kk, x);
        }
        ref_bgrad.push_back(s);
        got_bgrad.push_back(o.bgrad.get(bb * p.bgrad_len + x));
      }
    }
    EXPECT_LE(rel_error(got_bgrad, ref_bgrad), tol) << "bgrad";
  }
  return o;
}

constexpr DType kAllTypes[] = {DType::f16, DType::bf16, DType::f32,
                               DType::f64, DType::c64,  DType::c128};
constexpr DType kRealTypes[] = {DType::f16, DType::bf16, DType::f32, DType::f64};

cplx some_scalar(DType t, double re, double im) { return is_complex(t) ? cplx(re, im) : cplx(re); }

class CpuMatmul : public ::testing::Test {
 protected:
  unsigned seed_ = std::random_device{}();
  std::mt19937 rng_{seed_};
  ::testing::ScopedTrace trace_{__FILE__, __LINE__, "seed " + std::to_string(seed_)};
};

TEST(CpuHalf, ConvertsWithRoundToNearestEven) {
  using namespace cpu;
  EXPECT_EQ(float_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(float_to_bf16(1.0f + 0x1p-8f), 0x3f80);      // tie to even: down
  EXPECT_EQ(float_to_bf16(1.0f + 3 * 0x1p-8f), 0x3f82);  // tie to even: up
  EXPECT_EQ(float_to_bf16(1.0f + 0x1p-8f + 0x1p-20f), 0x3f81);
  EXPECT_EQ(float_to_bf16(-2.5f), 0xc020);
  EXPECT_EQ(float_to_bf16(std::numeric_limits<float>::max()), 0x7f80);  // rounds to inf
  EXPECT_EQ(float_to_bf16(std::numeric_limits<float>::infinity()), 0x7f80);
  const float low_nan = std::bit_cast<float>(0x7f800001u);  // payload only in the low half
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(low_nan))));
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(-low_nan))));
  EXPECT_TRUE(std::signbit(bf16_to_float(float_to_bf16(-low_nan))));
  EXPECT_EQ(bf16_to_float(0x3f81), 1.0f + 0x1p-7f);

  EXPECT_EQ(float_to_f16(1.0f), 0x3c00);
  EXPECT_EQ(float_to_f16(1.0f + 0x1p-11f), 0x3c00);      // tie to even: down
  EXPECT_EQ(float_to_f16(1.0f + 3 * 0x1p-11f), 0x3c02);  // tie to even: up
  EXPECT_EQ(float_to_f16(65504.0f), 0x7bff);
  EXPECT_EQ(float_to_f16(65520.0f), 0x7c00);
  EXPECT_EQ(f16_to_float(0x0001), 0x1p-24f);  // subnormal
  EXPECT_TRUE(std::isnan(f16_to_float(float_to_f16(std::nanf("")))));

  const float src[] = {0.5f, -3.25f, 1e-3f};
  uint16_t mid[3];
  float back[3];
  float_to_f16(src, mid, 3);
  f16_to_float(mid, back, 3);
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(back[i], src[i], std::abs(src[i]) * 1e-3f);
  float_to_bf16(src, mid, 3);
  bf16_to_float(mid, back, 3);
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(back[i], src[i], std::abs(src[i]) * 1e-2f);
}

TEST_F(CpuMatmul, EveryDtypeAndTranspose) {
  for (DType t : kAllTypes) {
    run_case({.dt = t, .m = 1, .n = 1, .k = 1}, rng_);
    for (bool ac : {false, true}) {
      for (bool bc : {false, true}) {
        run_case({.dt = t, .m = 67, .n = 70, .k = 130, .a = {.col = ac}, .b = {.col = bc}}, rng_);
        run_case({.dt = t,
                  .m = 9,
                  .n = 5,
                  .k = 13,
                  .a = {.col = ac, .pad = 3},
                  .b = {.col = bc, .pad = 2}},
                 rng_);
      }
    }
  }
}

TEST_F(CpuMatmul, BatchesAndBroadcast) {
  for (DType t : kAllTypes) {
    for (int bcast = 0; bcast < 3; ++bcast) {
      run_case({.dt = t,
                .m = 20,
                .n = 17,
                .k = 11,
                .batch = 3,
                .a = {.col = true, .pad = 1, .bcast = bcast == 1},
                .b = {.pad = 2, .bcast = bcast == 2}},
               rng_);
    }
    // Many small items go through the items-in-parallel path.
    run_case({.dt = t, .m = 5, .n = 6, .k = 7, .batch = 37, .b = {.col = true, .bcast = true}},
             rng_);
  }
}

TEST_F(CpuMatmul, AlphaBetaAndC) {
  for (DType t : kAllTypes) {
    const cplx alpha = some_scalar(t, 0.75, -0.25), beta = some_scalar(t, -1.25, 0.5);
    const Case base{.dt = t,
                    .m = 33,
                    .n = 21,
                    .k = 19,
                    .batch = 2,
                    .has_c = true,
                    .alpha = alpha,
                    .beta = beta};
    for (Layout c : {Layout{}, Layout{.col = true, .pad = 3}, Layout{.pad = 1, .bcast = true}}) {
      Case cs = base;
      cs.c = c;
      run_case(cs, rng_);
    }
    Case in_place = base;
    in_place.c_is_d = true;
    run_case(in_place, rng_);
    in_place.c.col = true;  // D's memory read as a column-major C
    run_case(in_place, rng_);
    Case zero_k = base;
    zero_k.k = 0;
    run_case(zero_k, rng_);
    zero_k.has_c = false;
    run_case(zero_k, rng_);
  }
}

TEST_F(CpuMatmul, HalfInputsWithFloatResult) {
  for (DType t : {DType::f16, DType::bf16}) {
    run_case({.dt = t,
              .out = DType::f32,
              .m = 40,
              .n = 30,
              .k = 50,
              .batch = 2,
              .a = {.col = true},
              .has_c = true,
              .beta = 0.5,
              .epilog = Epilog::GELU_AUX_BIAS},
             rng_);
  }
}

TEST_F(CpuMatmul, ForwardEpilogues) {
  for (DType t : kRealTypes) {
    for (Epilog e :
         {Epilog::RELU, Epilog::RELU_AUX, Epilog::BIAS, Epilog::RELU_BIAS, Epilog::RELU_AUX_BIAS,
          Epilog::GELU, Epilog::GELU_AUX, Epilog::GELU_BIAS, Epilog::GELU_AUX_BIAS}) {
      run_case({.dt = t,
                .m = 67,
                .n = 70,
                .k = 33,
                .batch = 2,
                .a = {.col = true, .pad = 2},
                .b = {.pad = 1},
                .has_c = true,
                .alpha = 1.5,
                .beta = 0.5,
                .epilog = e},
               rng_);
      run_case({.dt = t, .m = 1, .n = 1, .k = 1, .epilog = e}, rng_);
    }
  }
}

TEST_F(CpuMatmul, ReluAuxPaddingBitsAreZero) {
  for (int64_t n : {1, 5, 8, 127, 128, 129}) {
    run_case({.dt = DType::f32, .m = 4, .n = n, .k = 6, .batch = 2, .epilog = Epilog::RELU_AUX},
             rng_);
  }
}

TEST_F(CpuMatmul, BackwardEpiloguesUseForwardAux) {
  for (DType t : kRealTypes) {
    for (auto [fwd, bwd] : {std::pair{Epilog::RELU_AUX, Epilog::DRELU},
                            std::pair{Epilog::RELU_AUX_BIAS, Epilog::DRELU_BGRAD},
                            std::pair{Epilog::GELU_AUX, Epilog::DGELU},
                            std::pair{Epilog::GELU_AUX_BIAS, Epilog::DGELU_BGRAD}}) {
      for (int64_t m : {1, 70, 150}) {  // 150 rows: more rows than bias-gradient chunks
        Case cs{.dt = t, .m = m, .n = 67, .k = 40, .batch = 2, .b = {.col = true}, .epilog = fwd};
        const Outcome forward = run_case(cs, rng_);
        cs.epilog = bwd;
        cs.aux_in = &forward.aux;
        cs.has_c = true;
        cs.beta = 0.25;
        run_case(cs, rng_);  // fresh A, B and C
      }
    }
  }
}

TEST_F(CpuMatmul, BiasGradientsOfOperands) {
  for (DType t : kRealTypes) {
    for (Epilog e : {Epilog::BGRADA, Epilog::BGRADB}) {
      for (bool col : {false, true}) {
        run_case({.dt = t,
                  .m = 45,
                  .n = 38,
                  .k = 90,
                  .batch = 3,
                  .a = {.col = col, .pad = 2},
                  .b = {.col = !col, .pad = 1, .bcast = true},
                  .has_c = true,
                  .alpha = 2.0,
                  .beta = -1.0,
                  .epilog = e},
                 rng_);
      }
      run_case({.dt = t, .m = 1, .n = 1, .k = 1, .epilog = e}, rng_);
    }
  }
}

TEST_F(CpuMatmul, LargeProductUsesThreads) {
  run_case({.dt = DType::f32,
            .m = 300,
            .n = 260,
            .k = 200,
            .a = {.col = true},
            .has_c = true,
            .beta = 1.0,
            .epilog = Epilog::GELU_BIAS},
           rng_);
  run_case(
      {.dt = DType::bf16, .m = 260, .n = 300, .k = 70, .batch = 2, .epilog = Epilog::RELU_AUX_BIAS},
      rng_);
}

MatmulProblem small_problem(DType t) {
  MatmulProblem p;
  p.m = p.n = p.k = 2;
  p.a = {t, 2, 2, false, 2, 4};
  p.b = p.a;
  p.d = p.a;
  return p;
}

TEST_F(CpuMatmul, PlanReportsOneBlasCandidate) {
  MatmulProblem p = small_problem(DType::f64);
  auto plan = cpu::make_matmul_plan(p, {});
  ASSERT_EQ(plan->candidates().size(), 1u);
  EXPECT_EQ(plan->candidates()[0].index, 0);
  EXPECT_EQ(plan->candidates()[0].algo_id, -1);
  double a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8}, d[4] = {};
  const AlgorithmInfo tuned = plan->autotune({a, b, nullptr, d}, 3, Stream{}, nullptr);
  EXPECT_GE(tuned.time_ms, 0.0f);
  EXPECT_EQ(plan->chosen().time_ms, tuned.time_ms);
  EXPECT_EQ(d[0], 19.0);
  EXPECT_EQ(d[1], 22.0);
  EXPECT_EQ(d[2], 43.0);
  EXPECT_EQ(d[3], 50.0);
}

TEST_F(CpuMatmul, RefusesWhatTheCpuCannotDo) {
  MatmulProblem p = small_problem(DType::f8_e4m3);
  p.fp8 = true;
  p.d.dtype = DType::bf16;
  try {
    cpu::make_matmul_plan(p, {});
    ADD_FAILURE() << "fp8 was accepted";
  } catch (const NotSupported& e) {
    EXPECT_STREQ(e.what(), "[matmul] fp8 is not supported on the CPU backend");
  }
  p = small_problem(DType::c64);
  p.epilog = Epilog::RELU;
  EXPECT_THROW(cpu::make_matmul_plan(p, {}), NotSupported);
  p = small_problem(DType::f32);
  double dummy[4] = {};
  EXPECT_THROW(cpu::make_matmul_plan(p, {})->execute({dummy, nullptr, nullptr, dummy}, Stream{}),
               InvalidArgument);
}

}  // namespace
}  // namespace gpula::detail
