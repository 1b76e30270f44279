// Cast to and from the storage-only dtypes, BitCast, QuantizeLinear, DequantizeLinear and
// DynamicQuantizeLinear through the registry; the refusal of storage-only dtypes elsewhere;
// Clip with min > max. Values computed by hand (the scalar rules are tested in
// tests/runtime/test_lowp.cpp).
#include <cmath>
#include <limits>

#include "op_test_util.h"

namespace kiln::ir::test {

namespace {

template <class T>
Tensor of(DType dtype, std::vector<int64_t> dims, const std::vector<T>& v) {
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

TEST_CASE("Clip with min greater than max gives max everywhere (numpy.clip)") {
  OpTest t;
  Tensor y = t.run1(t.node("Clip", {t.input("x", f32({3}, {-5, 0, 5})), t.input("lo", f32({}, {2})),
                                    t.input("hi", f32({}, {1}))}));
  check_close(y, {1, 1, 1});
}

}  // namespace kiln::ir::test
