// The aten table's pieces that the end-to-end tests reach only indirectly: torch's type
// promotion, Python's arithmetic on numbers, --input-shape parsing, and a few lowerings
// checked on constant inputs (which fold, so their values can be read back).
#include <doctest/doctest.h>

#include "frontend/torchscript/aten_internal.h"
#include "frontend/torchscript/torchscript_importer.h"

namespace kiln::frontend::torchscript {
namespace {

class TestBuilder final : public AtenBuilder {
 public:
  explicit TestBuilder(ir::Graph& g) { graph_ = &g; }
  std::string where() const override { return "test"; }
};

TValue f32_tensor(ir::Graph& g, std::vector<int64_t> dims, std::vector<float> values) {
  return TValue::of(g.add_constant("t", ir::Tensor::from_vector<float>(ir::DType::F32, std::move(dims), values)));
}

TValue call(AtenBuilder& b, const std::string& name, std::vector<TValue> args) {
  auto r = lower_aten(b, AtenCall{name, std::move(args), {}});
  REQUIRE(r.has_value());
  return *r;
}

TEST_CASE("torch's result type: dimensioned tensors, then 0-d tensors, then Python numbers") {
  ir::Graph g;
  TValue f32 = f32_tensor(g, {2}, {1, 2});
  TValue i64 = TValue::of(g.add_constant("i", ir::Tensor::from_vector<int64_t>(ir::DType::I64, {2}, {1, 2})));
  TValue f64_0d = TValue::of(g.add_constant("d", ir::Tensor::from_vector<double>(ir::DType::F64, {}, {0.5})));
  TValue i64_0d = TValue::of(g.add_constant("j", ir::Tensor::from_vector<int64_t>(ir::DType::I64, {}, {3})));
  CHECK(aten::promote(f32, TValue::integer(2)) == ir::DType::F32);
  CHECK(aten::promote(i64, TValue::real(0.5)) == ir::DType::F32);  // the default float type
  CHECK(aten::promote(f32, f64_0d) == ir::DType::F32);             // a 0-d tensor of the same category yields
  CHECK(aten::promote(i64, f64_0d) == ir::DType::F64);             // a higher category does not
  CHECK(aten::promote(i64, i64_0d) == ir::DType::I64);
  CHECK(aten::promote(TValue::integer(1), TValue::real(2)) == ir::DType::F32);
}

TEST_CASE("Python arithmetic on numbers: floor division and modulo follow the divisor's sign") {
  auto num = [](const std::string& op, TValue a, TValue b) { return *aten::scalar_binary(op, a, b); };
  CHECK(num("floordiv", TValue::integer(-7), TValue::integer(2)).i == -4);
  CHECK(num("remainder", TValue::integer(-7), TValue::integer(2)).i == 1);
  CHECK(num("remainder", TValue::real(7.5), TValue::integer(-2)).f == doctest::Approx(-0.5));
  CHECK(num("div", TValue::integer(7), TValue::integer(2)).f == doctest::Approx(3.5));
  CHECK(num("pow", TValue::integer(3), TValue::integer(4)).i == 81);
  CHECK(num("eq", TValue::list({TValue::integer(1)}), TValue::list({TValue::real(1.0)})).b);
  CHECK(num("add", TValue::string("a"), TValue::string("b")).s == "ab");
  CHECK_THROWS_WITH(aten::scalar_binary("floordiv", TValue::integer(1), TValue::integer(0)), "integer division by zero");
}

TEST_CASE("--input-shape: a name, dims and a dtype; bad dims refused") {
  InputSpec s = frontend::parse_input_shape("ids=1,128:i64");
  CHECK(s.name == "ids");
  CHECK(s.dims == std::vector<int64_t>{1, 128});
  CHECK(s.dtype == ir::DType::I64);
  InputSpec u = frontend::parse_input_shape("2,3");
  CHECK(u.name.empty());
  CHECK(u.dtype == ir::DType::F32);
  CHECK_THROWS_WITH(frontend::parse_input_shape("x=1,-3"), "--input-shape x=1,-3: '-3' is not a non-negative integer");
  CHECK_THROWS_WITH(frontend::parse_input_shape("x=1:q9"), doctest::Contains("unknown dtype 'q9'"));
  // Bounds with a step, and a dtype after them: the colon before digits is the step's.
  InputSpec r = frontend::parse_input_shape("x=1..4,3,32..960:32,48:f16");
  CHECK(r.dims == std::vector<int64_t>{4, 3, 960, 48});
  CHECK(r.ranges.at(2) == std::pair<int64_t, int64_t>{32, 960});
  CHECK(r.steps.at(2) == 32);
  CHECK_FALSE(r.steps.count(0));
  CHECK(r.dtype == ir::DType::F16);
  CHECK_THROWS_WITH(frontend::parse_input_shape("x=1,3,30..960:32"), doctest::Contains("divide MIN and MAX"));
}

TEST_CASE("lowerings on constants fold to torch's values") {
  ir::Graph g;
  TestBuilder b(g);
  TValue x = f32_tensor(g, {2, 5}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  // view with -1, then chunk into uneven parts (torch: sizes 2, 2, 1 for 5 in 3 chunks)
  TValue v = call(b, "view", {x, TValue::list({TValue::integer(-1), TValue::integer(5)})});
  CHECK(v.tensor->shape() == ir::Shape{2, 5});
  TValue parts = call(b, "chunk", {x, TValue::integer(3), TValue::integer(1)});
  REQUIRE(parts.items->size() == 3);
  CHECK((*parts.items)[2].tensor->shape() == ir::Shape{2, 1});
  CHECK((*parts.items)[2].tensor->constant().as_double(1) == 9);
  // slice clamps like Python; select drops the dim; negative index counts from the end
  TValue s = call(b, "slice", {x, TValue::integer(1), TValue::integer(-2), TValue::integer(100), TValue::integer(1)});
  CHECK(s.tensor->shape() == ir::Shape{2, 2});
  TValue row = call(b, "select", {x, TValue::integer(0), TValue::integer(-1)});
  CHECK(row.tensor->shape() == ir::Shape{5});
  CHECK(row.tensor->constant().as_double(0) == 5);
  // remainder of tensors takes the divisor's sign, as Python's %
  TValue m = call(b, "remainder", {f32_tensor(g, {2}, {-7, 7}), TValue::integer(3)});
  CHECK(m.tensor->constant().as_double(0) == doctest::Approx(2));
  CHECK(m.tensor->constant().as_double(1) == doctest::Approx(1));
  // size: a list of ints, or one dim
  CHECK(call(b, "size", {x, TValue::none()}).items->size() == 2);
  CHECK(call(b, "size", {x, TValue::integer(-1)}).i == 5);
}

TEST_CASE("unknown ops and bad arguments are reported by name") {
  ir::Graph g;
  TestBuilder b(g);
  CHECK_FALSE(lower_aten(b, AtenCall{"frobnicate", {}, {}}).has_value());
  CHECK_THROWS_WITH(lower_aten(b, AtenCall{"relu", {}, {}}), "test: aten::relu: missing argument 'self'");
  CHECK_THROWS_WITH(lower_aten(b, AtenCall{"relu", {TValue::none()}, {{"bogus", TValue::integer(1)}}}),
                    "test: aten::relu has no argument 'bogus'");
}

}  // namespace
}  // namespace kiln::frontend::torchscript
