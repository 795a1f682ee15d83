// Core types: DType, TensorView, Tensor, copy, DLPack, logging, the error hierarchy.
#include <dlpack/dlpack.h>
#include <gpula/gpula.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

#include "core/format.h"
#include "support/common.h"

namespace {

using namespace gpula;
using core_test::HostTensor;
using core_test::Layout;
using core_test::make_host;

const std::vector<DType> kAllDTypes = {DType::f16, DType::bf16, DType::f32,     DType::f64,
                                       DType::c64, DType::c128, DType::f8_e4m3, DType::f8_e5m2,
                                       DType::i32, DType::i64,  DType::u8};

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// ---------------------------------------------------------------------------------------------
// DType

TEST(DTypeTest, SizesAndNames) {
  struct Row {
    DType t;
    std::size_t size;
    const char* name;
  };
  const Row rows[] = {{DType::f16, 2, "float16"},
                      {DType::bf16, 2, "bfloat16"},
                      {DType::f32, 4, "float32"},
                      {DType::f64, 8, "float64"},
                      {DType::c64, 8, "complex64"},
                      {DType::c128, 16, "complex128"},
                      {DType::f8_e4m3, 1, "float8_e4m3fn"},
                      {DType::f8_e5m2, 1, "float8_e5m2"},
                      {DType::i32, 4, "int32"},
                      {DType::i64, 8, "int64"},
                      {DType::u8, 1, "uint8"}};
  for (const Row& r : rows) {
    EXPECT_EQ(size_of(r.t), r.size) << r.name;
    EXPECT_EQ(name(r.t), r.name);
    EXPECT_EQ(dtype_from_name(r.name), r.t);
  }
}

TEST(DTypeTest, UnknownNameIsDTypeError) {
  EXPECT_THROW(dtype_from_name("float128"), DTypeError);
  EXPECT_THROW(dtype_from_name(""), DTypeError);
  try {
    dtype_from_name("half");
    FAIL() << "no exception";
  } catch (const DTypeError& e) {
    EXPECT_TRUE(contains(e.what(), "half")) << e.what();
  }
}

TEST(DTypeTest, Predicates) {
  EXPECT_TRUE(is_complex(DType::c64));
  EXPECT_TRUE(is_complex(DType::c128));
  EXPECT_FALSE(is_complex(DType::f64));
  EXPECT_TRUE(is_float8(DType::f8_e4m3));
  EXPECT_TRUE(is_float8(DType::f8_e5m2));
  EXPECT_FALSE(is_float8(DType::f16));
  EXPECT_TRUE(is_half(DType::f16));
  EXPECT_TRUE(is_half(DType::bf16));
  EXPECT_FALSE(is_half(DType::f32));
  EXPECT_TRUE(is_floating(DType::f8_e4m3));
  EXPECT_FALSE(is_floating(DType::i32));
  EXPECT_FALSE(is_floating(DType::i64));
  EXPECT_FALSE(is_floating(DType::u8));
  EXPECT_EQ(real_type(DType::c64), DType::f32);
  EXPECT_EQ(real_type(DType::c128), DType::f64);
  EXPECT_EQ(real_type(DType::bf16), DType::bf16);
}

TEST(DTypeTest, DLPackRoundTrip) {
  for (DType t : kAllDTypes) {
    uint8_t code = 255, bits = 0;
    uint16_t lanes = 0;
    dtype_to_dlpack(t, code, bits, lanes);
    EXPECT_EQ(lanes, 1);
    EXPECT_EQ(bits, 8 * size_of(t)) << name(t);
    EXPECT_EQ(dtype_from_dlpack(code, bits, lanes), t) << name(t);
  }
  // The codes DLPack defines for the common types.
  EXPECT_EQ(dtype_from_dlpack(kDLFloat, 32, 1), DType::f32);
  EXPECT_EQ(dtype_from_dlpack(kDLFloat, 16, 1), DType::f16);
  EXPECT_EQ(dtype_from_dlpack(kDLBfloat, 16, 1), DType::bf16);
  EXPECT_EQ(dtype_from_dlpack(kDLComplex, 128, 1), DType::c128);
  EXPECT_EQ(dtype_from_dlpack(kDLInt, 64, 1), DType::i64);
  EXPECT_EQ(dtype_from_dlpack(kDLUInt, 8, 1), DType::u8);
}

TEST(DTypeTest, UnknownDLPackCodeIsDTypeError) {
  EXPECT_THROW(dtype_from_dlpack(kDLOpaqueHandle, 64, 1), DTypeError);
  EXPECT_THROW(dtype_from_dlpack(kDLFloat, 8, 1), DTypeError);   // no such float
  EXPECT_THROW(dtype_from_dlpack(kDLInt, 16, 1), DTypeError);    // int16 is not taken
  EXPECT_THROW(dtype_from_dlpack(kDLFloat, 32, 4), DTypeError);  // vector lanes
  EXPECT_THROW(dtype_from_dlpack(200, 32, 1), DTypeError);
  // Messages name the type as NumPy does, not by DLPack code.
  auto message = [](uint8_t code, uint8_t bits, uint16_t lanes) {
    try {
      dtype_from_dlpack(code, bits, lanes);
    } catch (const DTypeError& e) {
      return std::string(e.what());
    }
    return std::string("no exception");
  };
  EXPECT_TRUE(contains(message(kDLFloat, 32, 4), "dtype float32 x4 (vector) is not supported"))
      << message(kDLFloat, 32, 4);
  EXPECT_TRUE(contains(message(kDLInt, 16, 1), "dtype int16 is not supported"))
      << message(kDLInt, 16, 1);
  EXPECT_TRUE(contains(message(6, 8, 1), "dtype bool is not supported"))  // kDLBool (DLPack 0.8)
      << message(6, 8, 1);
  EXPECT_TRUE(contains(message(kDLOpaqueHandle, 64, 1), "type code 3 of 64 bits"))
      << message(kDLOpaqueHandle, 64, 1);
  EXPECT_FALSE(contains(message(kDLInt, 16, 1), "code")) << message(kDLInt, 16, 1);
}

// ---------------------------------------------------------------------------------------------
// TensorView and Tensor

TEST(TensorViewTest, NumelAndContiguity) {
  TensorView v{nullptr, DType::f32, {2, 3, 4}, {12, 4, 1}, Device::cpu()};
  EXPECT_EQ(v.numel(), 24);
  EXPECT_EQ(v.ndim(), 3);
  EXPECT_TRUE(v.is_contiguous());
  EXPECT_EQ(contiguous_strides({2, 3, 4}), (Shape{12, 4, 1}));

  TensorView t{nullptr, DType::f32, {4, 3}, {1, 4}, Device::cpu()};  // a transpose
  EXPECT_FALSE(t.is_contiguous());
  TensorView padded{nullptr, DType::f32, {3, 4}, {5, 1}, Device::cpu()};
  EXPECT_FALSE(padded.is_contiguous());
  TensorView ones{nullptr, DType::f32, {1, 4, 1}, {99, 1, 7}, Device::cpu()};
  EXPECT_TRUE(ones.is_contiguous());  // size-1 dims may have any stride

  TensorView scalar{nullptr, DType::f64, {}, {}, Device::cpu()};
  EXPECT_EQ(scalar.numel(), 1);
  EXPECT_TRUE(scalar.is_contiguous());
  TensorView empty{nullptr, DType::f64, {0, 3}, {3, 1}, Device::cpu()};
  EXPECT_EQ(empty.numel(), 0);
}

TEST(TensorViewTest, Describe) {
  TensorView v{nullptr, DType::f32, {3, 4}, {4, 1}, Device::cpu()};
  EXPECT_EQ(v.shape_str(), "(3, 4)");
  EXPECT_EQ(v.describe(), "float32 (3, 4) on cpu");
  TensorView w{nullptr, DType::bf16, {5}, {1}, Device::cuda(1)};
  EXPECT_EQ(w.shape_str(), "(5,)");
  EXPECT_EQ(w.describe(), "bfloat16 (5,) on cuda:1");
  TensorView s{nullptr, DType::f64, {}, {}, Device::cpu()};
  EXPECT_EQ(s.shape_str(), "()");
}

TEST(DeviceTest, Basics) {
  EXPECT_EQ(to_string(Device::cpu()), "cpu");
  EXPECT_EQ(to_string(Device::cuda(2)), "cuda:2");
  EXPECT_TRUE(Device::cuda().is_cuda());
  EXPECT_FALSE(Device::cpu().is_cuda());
  EXPECT_EQ(Device::cuda(0), Device::cuda(0));
  EXPECT_NE(Device::cuda(0), Device::cuda(1));
  EXPECT_GE(cuda_device_count(), 0);
  if (!cuda_compiled()) {
    EXPECT_EQ(cuda_device_count(), 0);
  }
  const std::string d = describe_devices();
  EXPECT_TRUE(contains(d, "cpu")) << d;
  EXPECT_TRUE(contains(d, "cuda")) << d;
  // The CPU line names OpenBLAS's version, kernel set and threads; generic kernels on a CPU with
  // AVX2 come with the OPENBLAS_CORETYPE that would select the fast ones.
  EXPECT_TRUE(contains(d, "cpu: OpenBLAS ")) << d;
  EXPECT_TRUE(contains(d, "(core ")) << d;
#if defined(__x86_64__)
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  EXPECT_EQ(contains(d, "OPENBLAS_CORETYPE="), avx2 && contains(d, "(core Prescott,")) << d;
#endif
}

TEST(TensorTest, LargeHostAllocationsAreHugePageAligned) {
  // From 4 MiB on, host memory is 2 MiB aligned (advised as transparent huge pages); below, 64.
  Tensor big = Tensor::empty({(4 << 20) / 8 + 1}, DType::f64, Stream{});
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(big.data()) % (2u << 20), 0u);
  auto* p = static_cast<double*>(big.data());
  p[0] = 1.0;
  p[(4 << 20) / 8] = 2.0;  // the last element is inside the allocation
  EXPECT_EQ(p[(4 << 20) / 8], 2.0);
  Tensor small = Tensor::empty({1000}, DType::f32, Stream{});
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(small.data()) % 64, 0u);
}

TEST(TensorTest, EmptyOnCpu) {
  Tensor t = Tensor::empty({3, 5}, DType::f64, Stream{});
  ASSERT_TRUE(t.defined());
  EXPECT_EQ(t.shape(), (Shape{3, 5}));
  EXPECT_EQ(t.dtype(), DType::f64);
  EXPECT_EQ(t.device(), Device::cpu());
  EXPECT_TRUE(t.view().is_contiguous());
  EXPECT_EQ(t.view().strides, (Shape{5, 1}));
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(t.data()) % 64, 0u);
  auto* p = static_cast<double*>(t.data());
  for (int i = 0; i < 15; ++i) p[i] = i;  // writable
  EXPECT_EQ(p[14], 14.0);

  Tensor z = Tensor::empty({0, 4}, DType::f32, Stream{});
  EXPECT_TRUE(z.defined());
  EXPECT_EQ(z.view().numel(), 0);
  EXPECT_FALSE(Tensor().defined());
}

TEST(TensorTest, EmptyWithAnImpossibleShapeIsATypedError) {
  // 2^62 float64 elements need 2^65 bytes: the byte count must not wrap around to a small buffer.
  EXPECT_THROW(Tensor::empty({int64_t{1} << 31, int64_t{1} << 31}, DType::f64, Stream{}),
               OutOfMemory);
  EXPECT_THROW(Tensor::empty({int64_t{1} << 40, int64_t{1} << 40}, DType::f32, Stream{}),
               InvalidArgument);  // 2^80 elements
  EXPECT_THROW(Tensor::empty({3, -1}, DType::f32, Stream{}), InvalidArgument);
}

TEST(TensorViewTest, CheckTensorViewRefusesMalformedViews) {
  float x[12] = {};
  using detail::check_tensor_view;
  EXPECT_NO_THROW(check_tensor_view("op", "a", {x, DType::f32, {3, 4}, {4, 1}, Device::cpu()}));
  EXPECT_NO_THROW(check_tensor_view("op", "a", {nullptr, DType::f32, {0, 4}, {4, 1}, {}}));
  EXPECT_THROW(check_tensor_view("op", "a", {x, DType::f32, {3, 4}, {1}, {}}), InvalidArgument);
  EXPECT_THROW(check_tensor_view("op", "a", {x, DType::f32, {3, -4}, {4, 1}, {}}), InvalidArgument);
  EXPECT_THROW(check_tensor_view("op", "a", {nullptr, DType::f32, {3, 4}, {4, 1}, {}}),
               InvalidArgument);
  try {
    check_tensor_view("linalg.x", "b", {x, DType::f32, {3, 4}, {1}, {}});
  } catch (const InvalidArgument& e) {
    EXPECT_TRUE(contains(e.what(), "[linalg.x] b has 2 dimensions but 1 strides")) << e.what();
  }
}

TEST(TensorTest, EmptyOnMissingGpuThrowsTypedError) {
  if (cuda_device_count() > 0) GTEST_SKIP() << "a GPU is present";
  if (!cuda_compiled()) {
    EXPECT_THROW(Tensor::empty({4}, DType::f32, Stream{Device::cuda(0)}), NotCompiled);
  } else {
    EXPECT_THROW(Tensor::empty({4}, DType::f32, Stream{Device::cuda(0)}), gpula::Error);
  }
}

// ---------------------------------------------------------------------------------------------
// copy

TEST(CopyTest, ContiguousAndTransposed) {
  HostTensor src = make_host({3, 4}, DType::f32);
  for (int i = 0; i < 12; ++i) static_cast<float*>(src.view.data)[i] = static_cast<float>(i);
  HostTensor dst = make_host({3, 4}, DType::f32);
  gpula::copy(src.view, dst.view);
  for (int i = 0; i < 12; ++i) EXPECT_EQ(static_cast<float*>(dst.view.data)[i], i);

  // Source: the transpose of a (4, 3) buffer; destination contiguous.
  HostTensor t = make_host({3, 4}, DType::f32, Layout::col);
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 4; ++j) t.set({i, j}, 10.0 * i + j);
  gpula::copy(t.view, dst.view);
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 4; ++j) EXPECT_EQ(dst.get({i, j}).real(), 10.0 * i + j);
}

// Large enough for the tiled transposing path (both unit-stride dimensions >= 8 long): every
// element size, sizes that are not multiples of the 32 x 32 tile, a batch, and a destination
// whose batch dimension sits between the two transposed ones.
TEST(CopyTest, TiledTransposeEveryElementSize) {
  for (DType t : {DType::f16, DType::f32, DType::f64, DType::c128}) {
    const int64_t es = static_cast<int64_t>(gpula::size_of(t));
    const int64_t nb = 3, ni = 37, nj = 70;
    std::vector<unsigned char> src(static_cast<size_t>(nb * ni * nj * es));
    for (size_t k = 0; k < src.size(); ++k) src[k] = static_cast<unsigned char>((k * 131 + k / 97) & 0xFF);
    // Source row-major [b][i][j]; destination column-major per item, and [i][b][j]^T-like.
    const std::vector<Shape> dst_strides = {{ni * nj, 1, ni}, {ni, 1, nb * ni}};
    for (const Shape& ds : dst_strides) {
      std::vector<unsigned char> dst(src.size(), 0xEE);
      TensorView sv{src.data(), t, {nb, ni, nj}, {ni * nj, nj, 1}, Device::cpu()};
      TensorView dv{dst.data(), t, {nb, ni, nj}, ds, Device::cpu()};
      gpula::copy(sv, dv);
      for (int64_t b = 0; b < nb; ++b)
        for (int64_t i = 0; i < ni; ++i)
          for (int64_t j = 0; j < nj; ++j) {
            const int64_t so = (b * ni * nj + i * nj + j) * es;
            const int64_t dof = (b * ds[0] + i * ds[1] + j * ds[2]) * es;
            ASSERT_EQ(std::memcmp(&src[static_cast<size_t>(so)], &dst[static_cast<size_t>(dof)],
                                  static_cast<size_t>(es)),
                      0)
                << gpula::name(t) << " at " << b << "," << i << "," << j;
          }
    }
  }
}

TEST(CopyTest, StridedDestinationLeavesGapsAlone) {
  HostTensor src = make_host({2, 3}, DType::f64);
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j) src.set({i, j}, 1.0 + 3 * i + j);
  HostTensor dst = make_host({2, 3}, DType::f64, Layout::strided);  // every other element
  auto* raw = static_cast<double*>(dst.view.data);
  for (int64_t e = 0; e < dst.storage_elems; ++e) raw[e] = -7.0;
  gpula::copy(src.view, dst.view);
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j) EXPECT_EQ(dst.get({i, j}).real(), 1.0 + 3 * i + j);
  int untouched = 0;
  for (int64_t e = 0; e < dst.storage_elems; ++e) untouched += raw[e] == -7.0;
  EXPECT_EQ(untouched, dst.storage_elems - 6);
}

TEST(CopyTest, BroadcastSourceWithStrideZero) {
  HostTensor row = make_host({1, 4}, DType::c128);
  for (int64_t j = 0; j < 4; ++j) row.set({0, j}, core_test::cdouble(j, -j));
  TensorView src = core_test::broadcast_dim(row.view, 0, 3);  // (3, 4), stride (0, 1)
  HostTensor dst = make_host({3, 4}, DType::c128);
  gpula::copy(src, dst.view);
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 4; ++j) EXPECT_EQ(dst.get({i, j}), core_test::cdouble(j, -j));

  // A scalar broadcast to everything (all strides 0), into a column-major destination.
  HostTensor one = make_host({1, 1}, DType::f16);
  one.set({0, 0}, 2.5);
  TensorView all = core_test::broadcast_dim(core_test::broadcast_dim(one.view, 0, 5), 1, 2);
  HostTensor cm = make_host({5, 2}, DType::f16, Layout::col);
  gpula::copy(all, cm.view);
  for (int64_t i = 0; i < 5; ++i)
    for (int64_t j = 0; j < 2; ++j) EXPECT_EQ(cm.get({i, j}).real(), 2.5);
}

// A window of one column-major workspace into another (the unit-stride dimension is the same
// on both sides, >= 8 long): the run-by-run path. Every element size, a batch, a source that
// broadcasts over the batch, and gaps in the destination left alone.
TEST(CopyTest, RunsAlongSharedUnitStride) {
  for (DType t : {DType::f8_e4m3, DType::f16, DType::f32, DType::f64, DType::c128}) {
    const int64_t es = static_cast<int64_t>(gpula::size_of(t));
    const int64_t nb = 3, rows = 19, cols = 5, sld = 23, dld = 21;  // rows x cols windows
    std::vector<unsigned char> src(static_cast<size_t>(nb * sld * cols * es));
    for (size_t k = 0; k < src.size(); ++k)
      src[k] = static_cast<unsigned char>((k * 37 + k / 11) & 0xFF);
    for (bool broadcast : {false, true}) {
      const Shape ss = {broadcast ? 0 : sld * cols, 1, sld}, ds = {dld * cols, 1, dld};
      std::vector<unsigned char> dst(static_cast<size_t>(nb * dld * cols * es), 0xEE);
      TensorView sv{src.data(), t, {nb, rows, cols}, ss, Device::cpu()};
      TensorView dv{dst.data(), t, {nb, rows, cols}, ds, Device::cpu()};
      gpula::copy(sv, dv);
      for (int64_t b = 0; b < nb; ++b)
        for (int64_t j = 0; j < cols; ++j)
          for (int64_t i = 0; i < dld; ++i) {
            const auto* d = &dst[static_cast<size_t>((b * ds[0] + i + j * dld) * es)];
            if (i >= rows) {  // the gap below each column's window
              for (int64_t e = 0; e < es; ++e) ASSERT_EQ(d[e], 0xEE);
              continue;
            }
            const auto* sp = &src[static_cast<size_t>((b * ss[0] + i + j * sld) * es)];
            ASSERT_EQ(std::memcmp(sp, d, static_cast<size_t>(es)), 0)
                << gpula::name(t) << " at " << b << "," << i << "," << j;
          }
    }
  }
}

TEST(CopyTest, ScalarsAndEmpty) {
  HostTensor a = make_host({}, DType::i64), b = make_host({}, DType::i64);
  *static_cast<int64_t*>(a.view.data) = 42;
  gpula::copy(a.view, b.view);
  EXPECT_EQ(*static_cast<int64_t*>(b.view.data), 42);
  TensorView e1{nullptr, DType::f32, {0, 3}, {3, 1}, Device::cpu()};
  TensorView e2{nullptr, DType::f32, {0, 3}, {1, 1}, Device::cpu()};
  EXPECT_NO_THROW(gpula::copy(e1, e2));  // nothing to do, null data is fine
}

TEST(CopyTest, ShapeAndDTypeMismatch) {
  HostTensor a = make_host({2, 3}, DType::f32), b = make_host({3, 2}, DType::f32);
  HostTensor c = make_host({2, 3}, DType::f64);
  try {
    gpula::copy(a.view, b.view);
    FAIL() << "no exception";
  } catch (const InvalidArgument& e) {
    EXPECT_TRUE(contains(e.what(), "[copy]")) << e.what();
    EXPECT_TRUE(contains(e.what(), "(2, 3)")) << e.what();
    EXPECT_TRUE(contains(e.what(), "(3, 2)")) << e.what();
  }
  try {
    gpula::copy(a.view, c.view);
    FAIL() << "no exception";
  } catch (const DTypeError& e) {
    EXPECT_TRUE(contains(e.what(), "float32")) << e.what();
    EXPECT_TRUE(contains(e.what(), "float64")) << e.what();
  }
}

// ---------------------------------------------------------------------------------------------
// DLPack

std::atomic<int> g_deleted{0};

struct OwnedDL {
  std::vector<float> data;
  std::vector<int64_t> shape, strides;
  DLManagedTensor managed{};
};

DLManagedTensor* make_dl(std::vector<int64_t> shape, std::vector<int64_t> strides,
                         DLDataType dt = {kDLFloat, 32, 1}, DLDevice dev = {kDLCPU, 0}) {
  auto* o = new OwnedDL;
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  o->data.resize(std::max<int64_t>(n, 1) + 4);
  std::iota(o->data.begin(), o->data.end(), 0.0f);
  o->shape = std::move(shape);
  o->strides = std::move(strides);
  DLTensor& t = o->managed.dl_tensor;
  t.data = o->data.data();
  t.device = dev;
  t.ndim = static_cast<int32_t>(o->shape.size());
  t.dtype = dt;
  t.shape = o->shape.data();
  t.strides = o->strides.empty() ? nullptr : o->strides.data();
  t.byte_offset = 0;
  o->managed.manager_ctx = o;
  o->managed.deleter = [](DLManagedTensor* m) {
    delete static_cast<OwnedDL*>(m->manager_ctx);
    ++g_deleted;
  };
  return &o->managed;
}

TEST(DLPackTest, ImportTakesOwnershipAndDeletesOnce) {
  g_deleted = 0;
  {
    DLManagedTensor* m = make_dl({2, 3}, {});  // null strides: C order
    Tensor t = Tensor::from_dlpack(m);
    EXPECT_EQ(t.shape(), (Shape{2, 3}));
    EXPECT_EQ(t.view().strides, (Shape{3, 1}));
    EXPECT_EQ(t.dtype(), DType::f32);
    EXPECT_EQ(t.device(), Device::cpu());
    EXPECT_EQ(static_cast<float*>(t.data())[4], 4.0f);
    Tensor copy1 = t;
    { Tensor copy2 = copy1; }
    EXPECT_EQ(g_deleted.load(), 0);
  }
  EXPECT_EQ(g_deleted.load(), 1);
}

TEST(DLPackTest, ImportHonoursStridesAndByteOffset) {
  g_deleted = 0;
  {
    DLManagedTensor* m = make_dl({3, 2}, {1, 3});
    m->dl_tensor.byte_offset = 2 * sizeof(float);
    Tensor t = Tensor::from_dlpack(m);
    EXPECT_EQ(t.view().strides, (Shape{1, 3}));
    EXPECT_FALSE(t.view().is_contiguous());
    EXPECT_EQ(core_test::at(t.view(), {1, 1}).real(), 2.0 + 1 + 3);
  }
  EXPECT_EQ(g_deleted.load(), 1);
}

TEST(DLPackTest, ImportDevices) {
  g_deleted = 0;
  {
    Tensor pinned = Tensor::from_dlpack(make_dl({2}, {}, {kDLFloat, 32, 1}, {kDLCUDAHost, 0}));
    EXPECT_EQ(pinned.device(), Device::cpu());
    Tensor gpu = Tensor::from_dlpack(make_dl({2}, {}, {kDLFloat, 32, 1}, {kDLCUDA, 1}));
    EXPECT_EQ(gpu.device(), Device::cuda(1));  // only describes; nothing is dereferenced
    Tensor bf = Tensor::from_dlpack(make_dl({2}, {}, {kDLBfloat, 16, 1}));
    EXPECT_EQ(bf.dtype(), DType::bf16);
  }
  EXPECT_EQ(g_deleted.load(), 3);
}

TEST(DLPackTest, ImportErrorsStillReleaseTheTensorOnce) {
  g_deleted = 0;
  EXPECT_THROW(Tensor::from_dlpack(nullptr), InvalidArgument);
  EXPECT_THROW(Tensor::from_dlpack(make_dl({2}, {}, {kDLFloat, 32, 2})), DTypeError);
  EXPECT_EQ(g_deleted.load(), 1);
  EXPECT_THROW(Tensor::from_dlpack(make_dl({2}, {}, {kDLFloat, 32, 1}, {kDLOpenCL, 0})),
               NotSupported);
  EXPECT_EQ(g_deleted.load(), 2);
}

std::atomic<int> g_export_deleted{0};
void (*g_export_deleter)(DLManagedTensor*) = nullptr;

TEST(DLPackTest, ExportThenImportRoundTrip) {
  HostTensor h = make_host({2, 4}, DType::f64, Layout::padded);
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 4; ++j) h.set({i, j}, 100.0 * i + j);
  g_export_deleted = 0;
  std::weak_ptr<std::byte> alive = h.mem;
  {
    // A Tensor that keeps the host buffer alive through its owner.
    Tensor t(h.view, std::shared_ptr<void>(h.mem, h.mem.get()));
    DLManagedTensor* m = t.to_dlpack();
    ASSERT_NE(m, nullptr);
    const DLTensor& dl = m->dl_tensor;
    EXPECT_EQ(dl.ndim, 2);
    EXPECT_EQ(dl.shape[0], 2);
    EXPECT_EQ(dl.shape[1], 4);
    EXPECT_EQ(dl.strides[0], 7);  // padded leading dimension
    EXPECT_EQ(dl.strides[1], 1);
    EXPECT_EQ(dl.dtype.code, kDLFloat);
    EXPECT_EQ(dl.dtype.bits, 64);
    EXPECT_EQ(dl.dtype.lanes, 1);
    EXPECT_EQ(dl.device.device_type, kDLCPU);
    EXPECT_EQ(dl.data, h.view.data);
    // Count the deleter's runs by wrapping it.
    g_export_deleter = m->deleter;
    m->deleter = [](DLManagedTensor* x) {
      ++g_export_deleted;
      g_export_deleter(x);
    };
    {
      Tensor u = Tensor::from_dlpack(m);
      EXPECT_EQ(u.data(), h.view.data);
      EXPECT_EQ(u.shape(), (Shape{2, 4}));
      EXPECT_EQ(u.view().strides, (Shape{7, 1}));
      EXPECT_EQ(core_test::at(u.view(), {1, 3}).real(), 103.0);
      Tensor u2 = u;
      t = Tensor();  // the export keeps the memory alive on its own
      EXPECT_EQ(core_test::at(u2.view(), {1, 2}).real(), 102.0);
    }
    EXPECT_EQ(g_export_deleted.load(), 1);
  }
  EXPECT_EQ(g_export_deleted.load(), 1);
  h = HostTensor();
  EXPECT_TRUE(alive.expired());  // nothing leaked a reference
}

TEST(DLPackTest, ExportedDeleterAloneReleases) {
  Tensor t = Tensor::empty({3}, DType::c64, Stream{});
  DLManagedTensor* m = t.to_dlpack();
  EXPECT_EQ(m->dl_tensor.dtype.code, kDLComplex);
  EXPECT_EQ(m->dl_tensor.dtype.bits, 64);
  m->deleter(m);  // a consumer that never imports still frees the export context
  EXPECT_TRUE(t.defined());
}

// ---------------------------------------------------------------------------------------------
// Logging

class LogTest : public ::testing::Test {
 protected:
  void TearDown() override {
    set_log_sink(nullptr);
    set_log_level(LogLevel::warning);
  }
};

TEST_F(LogTest, SinkAndLevel) {
  std::mutex mu;
  std::vector<std::pair<LogLevel, std::string>> got;
  set_log_sink([&](LogLevel l, const std::string& m) {
    std::lock_guard lock(mu);
    got.emplace_back(l, m);
  });
  set_log_level(LogLevel::info);
  EXPECT_EQ(log_level(), LogLevel::info);
  gpula::log(LogLevel::debug, "hidden");
  gpula::log(LogLevel::info, "shown");
  gpula::log(LogLevel::error, "also shown");
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].first, LogLevel::info);
  EXPECT_EQ(got[0].second, "shown");
  EXPECT_EQ(got[1].first, LogLevel::error);

  set_log_level(LogLevel::off);
  gpula::log(LogLevel::error, "silenced");
  EXPECT_EQ(got.size(), 2u);

  // A per-call logger receives the message whatever the global level, and the global sink not.
  std::vector<std::string> mine;
  gpula::log(LogLevel::debug, "to mine",
             [&](LogLevel, const std::string& m) { mine.push_back(m); });
  ASSERT_EQ(mine.size(), 1u);
  EXPECT_EQ(mine[0], "to mine");
  EXPECT_EQ(got.size(), 2u);
}

TEST_F(LogTest, MatmulLogsItsPlanToTheOptionLogger) {
  HostTensor a = make_host({4, 3}, DType::f32), b = make_host({3, 2}, DType::f32);
  std::vector<std::string> lines;
  MatmulOptions o;
  o.logger = [&](LogLevel, const std::string& m) { lines.push_back(m); };
  Matmul mm(a.view, b.view, {}, 1.0, 0.0, o);
  mm.plan();
  ASSERT_FALSE(lines.empty());
  EXPECT_TRUE(contains(lines[0], "[matmul] planned")) << lines[0];
  EXPECT_TRUE(contains(lines[0], "float32")) << lines[0];
}

// ---------------------------------------------------------------------------------------------
// Errors

TEST(ErrorTest, Hierarchy) {
  // One base: every gpula exception is a gpula::Error (and so a std::exception).
  static_assert(std::is_base_of_v<std::runtime_error, gpula::Error>);
  static_assert(std::is_base_of_v<gpula::Error, InvalidArgument>);
  static_assert(std::is_base_of_v<InvalidArgument, DTypeError>);
  static_assert(std::is_base_of_v<gpula::Error, NotSupported>);
  static_assert(std::is_base_of_v<NotSupported, NotCompiled>);
  static_assert(std::is_base_of_v<gpula::Error, OutOfMemory>);
  static_assert(std::is_base_of_v<gpula::Error, VendorError>);
  static_assert(std::is_base_of_v<VendorError, CudaError>);
  static_assert(std::is_base_of_v<VendorError, CublasError>);
  static_assert(std::is_base_of_v<VendorError, CusolverError>);
  static_assert(std::is_base_of_v<VendorError, CusparseError>);
  static_assert(std::is_base_of_v<VendorError, CudssError>);
  static_assert(std::is_base_of_v<VendorError, NcclError>);
  static_assert(std::is_base_of_v<VendorError, CublasMpError>);
  static_assert(std::is_base_of_v<gpula::Error, LinAlgError>);
  static_assert(std::is_base_of_v<LinAlgError, NotPositiveDefinite>);
  static_assert(std::is_base_of_v<LinAlgError, SingularMatrix>);

  EXPECT_THROW(throw DTypeError("x"), InvalidArgument);
  EXPECT_THROW(throw InvalidArgument("x"), gpula::Error);
  EXPECT_THROW(throw NotCompiled("cuda"), NotSupported);
  EXPECT_THROW(throw OutOfMemory("x"), std::runtime_error);
  try {
    throw NotCompiled("cuda");
  } catch (const gpula::Error& e) {
    EXPECT_TRUE(contains(e.what(), "cuda")) << e.what();
  }
  // A bad argument from a real call is caught by the base.
  HostTensor a = make_host({3, 4}, DType::f32), b = make_host({5, 2}, DType::f32);
  try {
    gpula::matmul(a.view, b.view);
    ADD_FAILURE() << "no exception";
  } catch (const gpula::Error& e) {
    EXPECT_NE(dynamic_cast<const InvalidArgument*>(&e), nullptr) << e.what();
    EXPECT_TRUE(contains(e.what(), "[matmul]")) << e.what();
  }
}

TEST(ErrorTest, VendorErrorCarriesStatusAndName) {
  try {
    throw CublasError("[matmul] cublasLtMatmul failed", 13, "CUBLAS_STATUS_EXECUTION_FAILED");
  } catch (const VendorError& e) {
    EXPECT_EQ(e.status(), 13);
    EXPECT_EQ(e.status_name(), "CUBLAS_STATUS_EXECUTION_FAILED");
    EXPECT_STREQ(e.what(), "[matmul] cublasLtMatmul failed");
    EXPECT_NE(dynamic_cast<const CublasError*>(&e), nullptr);
  }
  try {
    throw CudaError("oom", 2, "cudaErrorMemoryAllocation");
  } catch (const gpula::Error& e) {
    const auto* v = dynamic_cast<const VendorError*>(&e);
    ASSERT_NE(v, nullptr);
    EXPECT_EQ(v->status(), 2);
  }
}

}  // namespace
