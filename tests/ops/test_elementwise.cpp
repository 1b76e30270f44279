// Elementwise math, logic, comparison and bitwise ops, Where, Cast, activations and Hardmax:
// reference results computed by hand, dtype rules and shape rules.
#include <cmath>
#include <limits>

#include "op_test_util.h"

namespace kiln::ir::test {

namespace {

template <class T>
Tensor of(DType dtype, std::vector<int64_t> dims, const std::vector<T>& v) {
  return Tensor::from_vector<T>(dtype, std::move(dims), v);
}

Tensor unary(const std::string& op, Tensor x, AttributeMap attrs = {}) {
  OpTest t;
  return t.run1(t.node(op, {t.input("x", std::move(x))}, std::move(attrs)));
}

Tensor binary(const std::string& op, Tensor a, Tensor b, AttributeMap attrs = {}) {
  OpTest t;
  return t.run1(t.node(op, {t.input("a", std::move(a)), t.input("b", std::move(b))}, std::move(attrs)));
}

}  // namespace

TEST_CASE("rounding and sign") {
  check_close(unary("Floor", f32({4}, {-1.5f, -0.5f, 0.5f, 2.0f})), {-2, -1, 0, 2});
  check_close(unary("Ceil", f32({4}, {-1.5f, -0.5f, 0.5f, 2.0f})), {-1, -0.0, 1, 2});
  // Halves round to even.
  check_close(unary("Round", f32({6}, {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 2.6f})), {0, 2, 2, 0, -2, 3});
  check_close(unary("Sign", f32({3}, {-3, 0, 0.25f})), {-1, 0, 1});
  check_close(unary("Sign", of<int32_t>(DType::I32, {3}, {-7, 0, 9})), {-1, 0, 1});
  check_close(unary("Round", of<double>(DType::F64, {2}, {-2.5, 3.5})), {-2, 4});
}

TEST_CASE("trigonometric and hyperbolic functions") {
  check_close(unary("Sin", f32({2}, {0, 1})), {0, std::sin(1.0)});
  check_close(unary("Cos", f32({1}, {1})), {std::cos(1.0)});
  check_close(unary("Tan", f32({1}, {0.5f})), {std::tan(0.5)});
  check_close(unary("Asin", f32({1}, {0.5f})), {std::asin(0.5)});
  check_close(unary("Acos", f32({1}, {0.5f})), {std::acos(0.5)});
  check_close(unary("Atan", f32({1}, {1})), {std::atan(1.0)});
  check_close(unary("Sinh", f32({1}, {1})), {std::sinh(1.0)});
  check_close(unary("Cosh", f32({1}, {1})), {std::cosh(1.0)});
  check_close(unary("Asinh", f32({1}, {1})), {std::asinh(1.0)});
  check_close(unary("Acosh", f32({1}, {2})), {std::acosh(2.0)});
  check_close(unary("Atanh", f32({1}, {0.5f})), {std::atanh(0.5)});
  Tensor h = unary("Sin", of<float>(DType::F16, {1}, {0.5f}));
  CHECK(h.dtype() == DType::F16);
  check_close(h, {std::sin(0.5)}, 1e-3);
}

TEST_CASE("Pow: same and mixed dtypes, output in A's dtype") {
  check_close(binary("Pow", f32({3}, {2, 3, 4}), f32({3}, {3, 2, 0.5f})), {8, 9, 2});
  // int ** int is exact, also beyond float's 24-bit mantissa.
  check_close(binary("Pow", i64({2}, {3, -2}), i64({2}, {39, 3})), {4052555153018976267.0, -8});
  // int32 ** float truncates toward zero, float ** int64 stays float.
  Tensor a = binary("Pow", of<int32_t>(DType::I32, {2}, {2, 5}), f32({2}, {0.5f, 1.5f}));
  CHECK(a.dtype() == DType::I32);
  check_close(a, {1, 11});
  check_close(binary("Pow", f32({2}, {2, 0.5f}), i64({2}, {-1, 2})), {0.5, 0.25});
  check_close(binary("Pow", f32({2, 2}, {1, 2, 3, 4}), f32({1}, {2})), {1, 4, 9, 16});
}

TEST_CASE("Mod: the divisor's sign by default, the dividend's with fmod=1") {
  check_close(binary("Mod", of<int32_t>(DType::I32, {4}, {7, -7, 7, -7}), of<int32_t>(DType::I32, {4}, {3, 3, -3, -3})),
              {1, 2, -2, -1});
  check_close(binary("Mod", of<int32_t>(DType::I32, {4}, {7, -7, 7, -7}), of<int32_t>(DType::I32, {4}, {3, 3, -3, -3}),
                     {{"fmod", int64_t{1}}}),
              {1, -1, 1, -1});
  check_close(binary("Mod", f32({2}, {5.5f, -5.5f}), f32({2}, {2, 2}), {{"fmod", int64_t{1}}}), {1.5, -1.5});
  check_close(binary("Mod", of<uint8_t>(DType::U8, {2}, {200, 7}), of<uint8_t>(DType::U8, {2}, {7, 0})), {4, 0});
}

TEST_CASE("Sum, Mean, Min, Max: any number of inputs with broadcasting") {
  OpTest t;
  Value* a = t.input("a", f32({2, 2}, {1, 2, 3, 4}));
  Value* b = t.input("b", f32({2}, {10, 20}));
  Value* c = t.input("c", f32({2, 1}, {100, 200}));
  check_close(t.run1(t.node("Sum", {a, b, c})), {111, 122, 213, 224});
  check_close(t.run1(t.node("Mean", {a, b, c})), {37, 122.0 / 3, 71, 224.0 / 3});
  check_close(t.run1(t.node("Max", {a, b})), {10, 20, 10, 20});
  check_close(t.run1(t.node("Min", {a})), {1, 2, 3, 4});
  OpTest u;
  Value* x = u.input("x", f32({2}, {1, std::numeric_limits<float>::quiet_NaN()}));
  Value* y = u.input("y", f32({2}, {std::numeric_limits<float>::quiet_NaN(), 1}));
  Tensor m = u.run1(u.node("Min", {x, y}));
  CHECK(std::isnan(m.as_double(0)));  // NaN wins, as in numpy
  CHECK(std::isnan(m.as_double(1)));
  check_close(binary("Max", of<uint16_t>(DType::U16, {2}, {1, 65535}), of<uint16_t>(DType::U16, {2}, {2, 3})),
              {2, 65535});
  OpTest e;
  CHECK(infer_error(e.node("Sum", {e.input("a", DType::F32, Shape{2}), e.input("b", DType::I32, Shape{2})})) ==
        "node 'n' (Sum): inputs 'a' (f32) and 'b' (i32) must have the same dtype");
  CHECK(infer_error(e.node("Mean", {e.input("i", DType::I32, Shape{2})})) ==
        "node 'n' (Mean): input 'i' is i32, op supports float types");
}

TEST_CASE("comparisons give bool with broadcasting") {
  Tensor lt = binary("Less", f32({2, 2}, {1, 2, 3, 4}), f32({2}, {2, 2}));
  CHECK(lt.dtype() == DType::Bool);
  check_close(lt, {1, 0, 0, 0});
  check_close(binary("LessOrEqual", f32({3}, {1, 2, 3}), f32({1}, {2})), {1, 1, 0});
  check_close(binary("Greater", of<uint32_t>(DType::U32, {2}, {4000000000u, 1}), of<uint32_t>(DType::U32, {2}, {1, 1})),
              {1, 0});
  check_close(binary("GreaterOrEqual", of<int8_t>(DType::I8, {2}, {-1, 5}), of<int8_t>(DType::I8, {2}, {-1, 6})), {1, 0});
  check_close(binary("Equal", of<bool>(DType::Bool, {2}, {true, false}), of<bool>(DType::Bool, {2}, {true, true})),
              {1, 0});
  OpTest t;
  CHECK(infer_error(t.node("Less", {t.input("a", DType::Bool, Shape{1}), t.input("b", DType::Bool, Shape{1})})) ==
        "node 'n' (Less): input 'a' is bool, op supports numeric types");
}

TEST_CASE("logic and bitwise ops") {
  Tensor x = of<bool>(DType::Bool, {4}, {false, false, true, true});
  Tensor y = of<bool>(DType::Bool, {4}, {false, true, false, true});
  check_close(unary("Not", x), {1, 1, 0, 0});
  check_close(binary("And", x, y), {0, 0, 0, 1});
  check_close(binary("Or", x, y), {0, 1, 1, 1});
  check_close(binary("Xor", x, y), {0, 1, 1, 0});
  check_close(unary("BitwiseNot", of<uint8_t>(DType::U8, {2}, {0, 0x0f})), {255, 0xf0});
  check_close(unary("BitwiseNot", of<int32_t>(DType::I32, {1}, {5})), {-6});
  check_close(binary("BitwiseAnd", of<int16_t>(DType::I16, {1}, {0x0ff0}), of<int16_t>(DType::I16, {1}, {0x00ff})), {0xf0});
  check_close(binary("BitwiseOr", of<int16_t>(DType::I16, {1}, {0x0ff0}), of<int16_t>(DType::I16, {1}, {0x00ff})), {0xfff});
  check_close(binary("BitwiseXor", of<int16_t>(DType::I16, {1}, {0x0ff0}), of<int16_t>(DType::I16, {1}, {0x00ff})),
              {0xf0f});
  Tensor v = of<uint8_t>(DType::U8, {3}, {1, 0x81, 16});
  Tensor s = of<uint8_t>(DType::U8, {3}, {3, 1, 9});
  check_close(binary("BitShift", v, s, {{"direction", std::string("LEFT")}}), {8, 2, 0});
  check_close(binary("BitShift", v, s, {{"direction", std::string("RIGHT")}}), {0, 0x40, 0});
  OpTest t;
  Node* n = t.node("BitShift", {t.input("a", DType::U8, Shape{1}), t.input("b", DType::U8, Shape{1})},
                   {{"direction", std::string("UP")}});
  CHECK(infer_error(n) == "node 'n' (BitShift): attribute 'direction' is 'UP', expected one of: LEFT RIGHT");
  CHECK(infer_error(t.node("BitShift", {t.input("c", DType::I8, Shape{1}), t.input("d", DType::I8, Shape{1})},
                           {{"direction", std::string("LEFT")}})) ==
        "node 'n' (BitShift): input 'c' is i8, op supports unsigned integer types");
}

TEST_CASE("IsNaN and IsInf") {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  Tensor x = f32({4}, {1, nan, inf, -inf});
  check_close(unary("IsNaN", x), {0, 1, 0, 0});
  check_close(unary("IsInf", x), {0, 0, 1, 1});
  check_close(unary("IsInf", x, {{"detect_positive", int64_t{0}}}), {0, 0, 0, 1});
  check_close(unary("IsInf", x, {{"detect_negative", int64_t{0}}}), {0, 0, 1, 0});
}

TEST_CASE("Where selects with three-way broadcasting") {
  OpTest t;
  Node* n = t.node("Where", {t.input("c", of<bool>(DType::Bool, {2, 1}, {true, false})),
                             t.input("x", i64({2}, {1, 2})), t.input("y", i64({1}, {9}))});
  Tensor r = t.run1(n);
  CHECK(r.dims() == std::vector<int64_t>{2, 2});
  check_close(r, {1, 2, 9, 9});
  OpTest e;
  CHECK(infer_error(e.node("Where", {e.input("c", DType::F32, Shape{1}), e.input("x", DType::F32, Shape{1}),
                                     e.input("y", DType::F32, Shape{1})})) ==
        "node 'n' (Where): condition 'c' is f32, expected bool");
}

TEST_CASE("Cast and CastLike") {
  Tensor x = f32({5}, {-1.7f, 0, 2.9f, 300, std::numeric_limits<float>::quiet_NaN()});
  Tensor i = unary("Cast", x, {{"to", int64_t{3}}});  // int8: truncation, saturation, NaN -> 0
  CHECK(i.dtype() == DType::I8);
  check_close(i, {-1, 0, 2, 127, 0});
  check_close(unary("Cast", x, {{"to", int64_t{9}}}), {1, 0, 1, 1, 1});
  Tensor h = unary("Cast", f32({2}, {1.0f / 3, 65520}), {{"to", int64_t{10}}});
  CHECK(h.dtype() == DType::F16);
  CHECK(h.as_double(0) == 0.333251953125);
  CHECK(h.as_double(1) == std::numeric_limits<double>::infinity());  // 65520 rounds up to inf
  // double -> f16 rounds once: 1 + 2^-11 + 2^-40 is just above the halfway point.
  Tensor d = unary("Cast", of<double>(DType::F64, {1}, {1 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)}),
                   {{"to", int64_t{10}}});
  check_close(d, {1 + std::ldexp(1.0, -10)}, 0);
  check_close(unary("Cast", of<bool>(DType::Bool, {2}, {true, false}), {{"to", int64_t{7}}}), {1, 0});
  Tensor u = binary("CastLike", i64({2}, {-1, 257}), of<uint8_t>(DType::U8, {1}, {0}));
  CHECK(u.dtype() == DType::U8);
  check_close(u, {255, 1});
  OpTest t;
  CHECK(infer_error(t.node("Cast", {t.input("x", DType::F32, Shape{1})}, {{"to", int64_t{8}}})) ==
        "node 'n' (Cast): cast to dtype code 8 is not supported (kiln has no such dtype)");
}

TEST_CASE("activations with attributes") {
  Tensor x = f32({3}, {-1, 0, 2});
  check_close(unary("LeakyRelu", x, {{"alpha", 0.1f}}), {-0.1, 0, 2});
  check_close(unary("LeakyRelu", x), {-0.01, 0, 2});
  check_close(unary("Elu", x, {{"alpha", 2.0f}}), {2 * (std::exp(-1.0) - 1), 0, 2});
  check_close(unary("Selu", x, {{"alpha", 2.0f}, {"gamma", 3.0f}}), {3 * 2 * (std::exp(-1.0) - 1), 0, 6});
  check_close(unary("Celu", x, {{"alpha", 2.0f}}), {2 * (std::exp(-0.5) - 1), 0, 2});
  check_close(unary("ThresholdedRelu", x, {{"alpha", 1.0f}}), {0, 0, 2});
  check_close(unary("HardSigmoid", x, {{"alpha", 0.5f}, {"beta", 0.6f}}), {0.1, 0.6, 1});
  check_close(unary("HardSwish", f32({3}, {-4, 1, 4})), {0, 1 * (1.0 / 6 + 0.5), 4});
  check_close(unary("Softsign", x), {-0.5, 0, 2.0 / 3});
  check_close(unary("Softplus", f32({3}, {-1, 0, 100})), {std::log1p(std::exp(-1.0)), std::log(2.0), 100});
  check_close(unary("Mish", f32({2}, {-1, 1})),
              {-std::tanh(std::log1p(std::exp(-1.0))), std::tanh(std::log1p(std::exp(1.0)))});
  check_close(unary("Shrink", f32({5}, {-2, -1, 0, 1, 2}), {{"bias", 0.5f}, {"lambd", 1.0f}}), {-1.5, 0, 0, 0, 1.5});
  check_close(unary("Gelu", x), {-0.5 * (1 + std::erf(-1 / std::sqrt(2.0))), 0, 2 * 0.5 * (1 + std::erf(2 / std::sqrt(2.0)))});
  double t = std::tanh(std::sqrt(2 / M_PI) * (2 + 0.044715 * 8));
  check_close(unary("Gelu", f32({1}, {2}), {{"approximate", std::string("tanh")}}), {2 * 0.5 * (1 + t)});
  OpTest e;
  CHECK(infer_error(e.node("Gelu", {e.input("x", DType::F32, Shape{1})}, {{"approximate", std::string("fast")}})) ==
        "node 'n' (Gelu): attribute 'approximate' is 'fast', expected one of: none tanh");
}

TEST_CASE("PRelu: the slope broadcasts to X's shape, not the other way") {
  check_close(binary("PRelu", f32({2, 2}, {-1, 2, -3, 4}), f32({2}, {0.5f, 0.25f})), {-0.5, 2, -1.5, 4});
  OpTest t;
  CHECK(infer_error(t.node("PRelu", {t.input("x", DType::F32, Shape{2}), t.input("s", DType::F32, Shape{2, 2})})) ==
        "node 'n' (PRelu): 's' of shape [2,2] does not broadcast to 'x' of shape [2]");
}

TEST_CASE("Hardmax: 1 at the first maximum along the axis") {
  OpTest t;
  Node* n = t.node("Hardmax", {t.input("x", f32({2, 3}, {1, 3, 3, 5, 2, 0}))}, {{"axis", int64_t{1}}});
  check_close(t.run1(n), {0, 1, 0, 1, 0, 0});
  OpTest u;
  Node* m = u.node("Hardmax", {u.input("x", f32({2, 3}, {1, 3, 3, 5, 2, 0}))}, {{"axis", int64_t{0}}});
  check_close(u.run1(m), {0, 1, 1, 1, 0, 0});
}

}  // namespace kiln::ir::test
