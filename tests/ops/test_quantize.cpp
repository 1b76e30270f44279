// Cast to and from the storage-only dtypes, BitCast, QuantizeLinear, DequantizeLinear and
// DynamicQuantizeLinear through the registry; the refusal of storage-only dtypes elsewhere;
// Clip with min > max; the integer matmul and conv ops. Values computed by hand or by the
// plain reference loops of kiln/rt/qlinear.h (the scalar rules are tested in
// tests/runtime/test_lowp.cpp).
#include <cmath>
#include <limits>

#include "kiln/rt/qlinear.h"
#include "op_test_util.h"

namespace kiln::ir::test {

namespace {

template <class T>
Tensor of(DType dtype, std::vector<int64_t> dims, const std::vector<T>& v) {
  return Tensor::from_vector<T>(dtype, std::move(dims), v);
}

// `dims` filled with seeded pseudo-random 8-bit values over the whole range of T.
template <class T>
Tensor random_8bit(DType dtype, std::vector<int64_t> dims, uint32_t seed) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::vector<T> v(static_cast<size_t>(n));
  for (T& x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = static_cast<T>(static_cast<int>(seed >> 24) + (std::is_signed_v<T> ? -128 : 0));
  }
  return Tensor::from_vector<T>(dtype, std::move(dims), v);
}

Tensor cast(Tensor x, int64_t to, AttributeMap extra = {}) {
  OpTest t;
  extra["to"] = Attribute(to);
  return t.run1(t.node("Cast", {t.input("x", std::move(x))}, std::move(extra)));
}

}  // namespace

TEST_CASE("Cast to float8 saturates by default, to NaN or infinity with saturate=0") {
  Tensor x = f32({3}, {1.0f, 1000.0f, -1e6f});
  Tensor a = cast(x, 17);
  CHECK(a.dtype() == DType::F8E4M3FN);
  check_close(a, {1, 448, -448});
  Tensor b = cast(x, 17, {{"saturate", int64_t{0}}});
  CHECK(std::isnan(b.as_double(1)));
  Tensor c = cast(x, 19, {{"saturate", int64_t{0}}});  // e5m2
  CHECK(c.as_double(2) == -std::numeric_limits<double>::infinity());
  Tensor back = cast(c, 1);
  CHECK(back.as_double(0) == 1);
  CHECK(back.as_double(1) == 1024);  // 1000 rounds to 1024 (2 mantissa bits)
  CHECK(back.as_double(2) == -std::numeric_limits<double>::infinity());
}

TEST_CASE("Cast to float8e8m0 follows round_mode") {
  Tensor x = f32({2}, {1.5f, 3.0f});
  check_close(cast(x, 24), {2, 4});
  check_close(cast(x, 24, {{"round_mode", Attribute("down")}}), {1, 2});
  OpTest t;
  CHECK(infer_error(t.node("Cast", {t.input("x", DType::F32, Shape{1})},
                           {{"to", int64_t{24}}, {"round_mode", Attribute("sideways")}})) ==
        "node 'n' (Cast): round_mode 'sideways' is not one of up, down, nearest");
}

TEST_CASE("Cast to int4 and uint2 wraps; from them widens") {
  Tensor i = cast(f32({4}, {-9, 7.9f, 8, -0.5f}), 22);
  CHECK(i.dtype() == DType::I4);
  check_close(i, {7, 7, -8, 0});
  check_close(cast(i, 3), {7, 7, -8, 0});
  check_close(cast(f32({2}, {-3, 5}), 25), {1, 1});
}

TEST_CASE("ops other than conversions refuse storage-only dtypes") {
  OpTest t;
  Value* x = t.input("x", DType::F8E4M3FN, Shape{2});
  CHECK(infer_error(t.node("Relu", {x})) ==
        "node 'n' (Relu): input 'x' is f8e4m3fn, a storage-only dtype this op does not accept "
        "(convert it with Cast first)");
}

TEST_CASE("BitCast keeps the bytes") {
  OpTest t;
  Tensor y = t.run1(t.node("BitCast", {t.input("x", f32({2}, {1.0f, -2.0f}))}, {{"to", int64_t{6}}}));
  CHECK(y.dtype() == DType::I32);
  CHECK(y.as_int64(0) == 0x3f800000);
  CHECK(y.as_int64(1) == static_cast<int32_t>(0xc0000000u));
  OpTest u;
  CHECK(infer_error(u.node("BitCast", {u.input("x", DType::F32, Shape{1})}, {{"to", int64_t{7}}})) ==
        "node 'n' (BitCast): bitcast needs dtypes of the same width: f32 is 4 bytes, i64 is 8");
}

TEST_CASE("QuantizeLinear per axis with zero points, DequantizeLinear back") {
  OpTest t;
  Value* x = t.input("x", f32({2, 2}, {2, 4, -2, 100}));
  Value* s = t.input("s", f32({2}, {2, 4}));
  Value* z = t.input("z", of<uint8_t>(DType::U8, {2}, {10, 20}));
  Tensor q = t.run1(t.node("QuantizeLinear", {x, s, z}, {{"axis", int64_t{1}}}));
  CHECK(q.dtype() == DType::U8);
  check_close(q, {11, 21, 9, 45});
  OpTest d;
  Tensor y = d.run1(d.node("DequantizeLinear", {d.input("q", q), d.input("s", f32({2}, {2, 4})),
                                                d.input("z", of<uint8_t>(DType::U8, {2}, {10, 20}))},
                           {{"axis", int64_t{1}}}));
  check_close(y, {2, 4, -2, 100});
}

TEST_CASE("QuantizeLinear: blocked scales, int4 result, shape errors") {
  OpTest t;
  Value* x = t.input("x", f32({1, 4}, {3, -3, 20, -20}));
  Value* s = t.input("s", f32({1, 2}, {1, 2}));
  Tensor q = t.run1(t.node("QuantizeLinear", {x, s}, {{"axis", int64_t{1}}, {"block_size", int64_t{2}},
                                                       {"output_dtype", int64_t{22}}}));
  CHECK(q.dtype() == DType::I4);
  check_close(q, {3, -3, 7, -8});
  OpTest u;
  CHECK(infer_error(u.node("QuantizeLinear", {u.input("x", DType::F32, Shape{2, 3}), u.input("s", DType::F32, Shape{2})})) ==
        "node 'n' (QuantizeLinear): per-axis scale must be 1-D of x's axis 1 length 3, got [2]");
}

TEST_CASE("DynamicQuantizeLinear returns the scale and zero point") {
  OpTest t;
  std::vector<Tensor> out = t.run(t.node("DynamicQuantizeLinear", {t.input("x", f32({3}, {0, 3, -1}))}, {}, 3));
  CHECK(out[1].as_double(0) == doctest::Approx(4.0 / 255));
  CHECK(out[2].as_int64(0) == 64);  // 1 / (4 / 255) = 63.75
  check_close(out[0], {64, 255, 0});
}

TEST_CASE("MatMulInteger, QLinearMatMul and ConvInteger subtract zero points in int32") {
  auto u8 = [](std::vector<int64_t> dims, std::vector<uint8_t> v) { return of<uint8_t>(DType::U8, std::move(dims), v); };
  OpTest t;
  Tensor y = t.run1(t.node("MatMulInteger", {t.input("a", u8({2, 2}, {1, 2, 3, 4})), t.input("b", u8({2, 1}, {5, 6})),
                                             t.input("az", u8({}, {1})), t.input("bz", u8({}, {5}))}));
  CHECK(y.dtype() == DType::I32);
  check_close(y, {1, 3});
  OpTest q;
  Tensor z = q.run1(q.node("QLinearMatMul",
                           {q.input("a", u8({1, 2}, {2, 4})), q.input("as", f32({}, {1})), q.input("az", u8({}, {0})),
                            q.input("b", u8({2, 1}, {1, 1})), q.input("bs", f32({}, {1})), q.input("bz", u8({}, {0})),
                            q.input("ys", f32({}, {2})), q.input("yz", u8({}, {10}))}));
  check_close(z, {13});  // 6 / 2 + 10
  OpTest c;
  Tensor v = c.run1(c.node("ConvInteger", {c.input("x", u8({1, 1, 2, 2}, {1, 2, 3, 4})), c.input("w", u8({1, 1, 1, 1}, {2})),
                                           c.input("xz", u8({}, {1}))}));
  check_close(v, {0, 2, 4, 6});
}

// The interpreter runs these ops on the compiled code's int8 kernels (qgemm, qconv2d); the
// plain loops of kiln/rt/qlinear.h are the reference here: batches, signed operands, zero
// points, per-channel scales, groups, padding and stride.
TEST_CASE("MatMulInteger, QLinearMatMul and QLinearConv match the reference loops") {
  namespace rt = kiln::rt;
  auto i8 = [](int8_t v) { return of<int8_t>(DType::I8, {}, {v}); };
  auto u8 = [](uint8_t v) { return of<uint8_t>(DType::U8, {}, {v}); };

  const int64_t M = 5, K = 7, N = 19;  // N past one 16-column panel
  Tensor a = random_8bit<int8_t>(DType::I8, {2, M, K}, 1), b = random_8bit<int8_t>(DType::I8, {K, N}, 2);
  OpTest t;
  Tensor y = t.run1(t.node("MatMulInteger", {t.input("a", a), t.input("b", b), t.input("az", i8(-3)), t.input("bz", i8(2))}));
  std::vector<int32_t> want(2 * M * N);
  for (int64_t i = 0; i < 2; ++i)
    rt::matmul_integer<int8_t, int8_t>(a.data<int8_t>() + i * M * K, b.data<int8_t>(), want.data() + i * M * N, M, K,
                                       N, -3, 2);
  CHECK(std::equal(want.begin(), want.end(), y.data<int32_t>()));

  Tensor qa = random_8bit<uint8_t>(DType::U8, {3, M, K}, 3), qb = random_8bit<int8_t>(DType::I8, {K, N}, 4);
  OpTest q;
  Tensor z = q.run1(q.node("QLinearMatMul", {q.input("a", qa), q.input("as", f32({}, {0.02f})), q.input("az", u8(131)),
                                              q.input("b", qb), q.input("bs", f32({}, {0.01f})), q.input("bz", i8(-1)),
                                              q.input("ys", f32({}, {0.5f})), q.input("yz", i8(-5))}));
  const auto mult = static_cast<float>(rt::qlinear_multiplier<float>(0.02f, 0.01f, 0.5f));
  std::vector<int8_t> want8(3 * M * N);
  for (int64_t i = 0; i < 3; ++i)
    rt::qlinear_matmul<uint8_t, int8_t, int8_t>(qa.data<uint8_t>() + i * M * K, qb.data<int8_t>(), want8.data() + i * M * N,
                                                M, K, N, 131, -1, mult, -5);
  CHECK(std::equal(want8.begin(), want8.end(), z.data<int8_t>()));

  // 4 -> 6 channels in 2 groups, 3x3, stride 2, pads 1, on a 7 x 6 plane.
  const rt::Conv2dParams p{1, 4, 7, 6, 6, 3, 3, 4, 3, 2, 2, 1, 1, 1, 1, 2};
  Tensor x = random_8bit<uint8_t>(DType::U8, {1, 4, 7, 6}, 5), w = random_8bit<int8_t>(DType::I8, {6, 2, 3, 3}, 6);
  const std::vector<float> w_scale = {0.01f, 0.02f, 0.005f, 0.03f, 0.01f, 0.002f};
  const std::vector<int32_t> bias = {100, -2000, 0, 7, -1, 30000};
  OpTest c;
  Tensor v = c.run1(c.node("QLinearConv",
                           {c.input("x", x), c.input("xs", f32({}, {0.05f})), c.input("xz", u8(120)), c.input("w", w),
                            c.input("ws", f32({6}, w_scale)), c.input("wz", of<int8_t>(DType::I8, {6}, {0, 0, 0, 0, 0, 0})),
                            c.input("ys", f32({}, {0.25f})), c.input("yz", u8(128)),
                            c.input("B", of<int32_t>(DType::I32, {6}, bias))},
                           {{"group", int64_t{2}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}},
                            {"strides", std::vector<int64_t>{2, 2}}}));
  std::vector<int32_t> acc(6 * 12);
  std::vector<uint8_t> want_conv(6 * 12);
  const std::vector<int8_t> wz(6, 0);
  rt::qlinear_conv2d<uint8_t, int8_t, uint8_t, float>(p, x.data<uint8_t>(), 0.05f, 120, w.data<int8_t>(), w_scale.data(), 6,
                                                      wz.data(), 6, 0.25f, 128, bias.data(), acc.data(),
                                                      want_conv.data());
  REQUIRE(v.numel() == 6 * 12);
  CHECK(std::equal(want_conv.begin(), want_conv.end(), v.data<uint8_t>()));
}

TEST_CASE("Clip with min greater than max gives max everywhere (numpy.clip)") {
  OpTest t;
  Tensor y = t.run1(t.node("Clip", {t.input("x", f32({3}, {-5, 0, 5})), t.input("lo", f32({}, {2})),
                                    t.input("hi", f32({}, {1}))}));
  check_close(y, {1, 1, 1});
}

}  // namespace kiln::ir::test
