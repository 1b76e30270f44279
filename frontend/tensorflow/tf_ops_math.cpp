// TF elementwise ops, activations, reductions and softmax onto IR ops.
#include <fmt/format.h>

#include "frontend/tensorflow/tf_internal.h"

namespace kiln::frontend::tensorflow {
namespace {

using Values = std::vector<ir::Value*>;

// TF ops that are one IR op of the same arity, with the same broadcasting (numpy's).
const std::map<std::string, std::string>& same_ops() {
  static const std::map<std::string, std::string> ops = {
      {"Relu", "Relu"},       {"Sigmoid", "Sigmoid"},   {"Tanh", "Tanh"},       {"Exp", "Exp"},
      {"Log", "Log"},         {"Sqrt", "Sqrt"},         {"Erf", "Erf"},         {"Neg", "Neg"},
      {"Abs", "Abs"},         {"Floor", "Floor"},       {"Ceil", "Ceil"},       {"Round", "Round"},
      {"Sign", "Sign"},       {"Sin", "Sin"},           {"Cos", "Cos"},         {"Reciprocal", "Reciprocal"},
      {"Inv", "Reciprocal"},  {"Softplus", "Softplus"}, {"Softsign", "Softsign"}, {"Elu", "Elu"},
      {"Selu", "Selu"},       {"LogicalNot", "Not"},    {"IsNan", "IsNaN"},     {"Atan", "Atan"},
      {"AddV2", "Add"},       {"Add", "Add"},           {"Sub", "Sub"},         {"Mul", "Mul"},
      {"RealDiv", "Div"},     {"Div", "Div"},  // C division on integers, as TF's Div
      {"Maximum", "Max"},       {"Minimum", "Min"},     {"Pow", "Pow"},
      {"Equal", "Equal"},     {"Less", "Less"},         {"LessEqual", "LessOrEqual"},
      {"Greater", "Greater"}, {"GreaterEqual", "GreaterOrEqual"}, {"LogicalAnd", "And"},
      {"LogicalOr", "Or"},    {"SelectV2", "Where"},    {"AddN", "Sum"},
  };
  return ops;
}

Values same(TfLowering& L, const Values& in) { return {L.node(same_ops().at(L.tf_node().op()), in)}; }

Values not_equal(TfLowering& L, const Values& in) { return {L.node("Not", {L.node("Equal", in)})}; }

Values rsqrt(TfLowering& L, const Values& in) { return {L.node("Reciprocal", {L.node("Sqrt", in)})}; }
Values square(TfLowering& L, const Values& in) { return {L.node("Mul", {in[0], in[0]})}; }
Values squared_difference(TfLowering& L, const Values& in) {
  ir::Value* d = L.node("Sub", in);
  return {L.node("Mul", {d, d})};
}
Values log1p(TfLowering& L, const Values& in) { return {L.node("Log", {L.node("Add", {in[0], L.scalar(1, in[0]->dtype())})})}; }
Values expm1(TfLowering& L, const Values& in) { return {L.node("Sub", {L.node("Exp", in), L.scalar(1, in[0]->dtype())})}; }

Values erfc(TfLowering& L, const Values& in) { return {L.node("Sub", {L.scalar(1, in[0]->dtype()), L.node("Erf", in)})}; }

Values relu6(TfLowering& L, const Values& in) {
  const ir::DType dt = in[0]->dtype();
  return {L.node("Clip", {in[0], L.scalar(0, dt), L.scalar(6, dt)})};
}

Values leaky_relu(TfLowering& L, const Values& in) {
  return {L.node("LeakyRelu", in, {{"alpha", L.attr_float("alpha", 0.2f)}})};
}

// Select (v1): a condition of the same shape as the branches works as SelectV2; a vector
// condition picks whole rows.
Values select(TfLowering& L, const Values& in) {
  ir::Value* cond = in[0];
  const size_t rank = L.rank(in[1]);
  if (L.rank(cond) == 1 && rank > 1) {
    std::vector<int64_t> axes;
    for (size_t k = 1; k < rank; ++k) axes.push_back(static_cast<int64_t>(k));
    cond = L.node("Unsqueeze", {cond, L.i64s(axes)});
  }
  return {L.node("Where", {cond, in[1], in[2]})};
}

// BiasAdd: the bias runs along the channels, the last axis (NHWC) or axis 1 (NCHW).
Values bias_add(TfLowering& L, const Values& in) {
  const std::string format = L.attr_string("data_format", "NHWC");
  const size_t rank = L.rank(in[0]);
  if (format == "NCHW" && rank > 2) {
    std::vector<int64_t> axes;
    for (size_t k = 2; k < rank; ++k) axes.push_back(static_cast<int64_t>(k - 1));
    return {L.node("Add", {in[0], L.node("Unsqueeze", {in[1], L.i64s(axes)})})};
  }
  return {L.node("Add", in)};
}

// FloorDiv and FloorMod round toward negative infinity (Python's // and %).
Values floor_div(TfLowering& L, const Values& in) {
  if (ir::is_float(in[0]->dtype())) return {L.node("Floor", {L.node("Div", in)})};
  ir::Value* mod = L.node("Mod", in, {{"fmod", int64_t{0}}});  // the sign of the divisor
  return {L.node("Div", {L.node("Sub", {in[0], mod}), in[1]})};
}

Values floor_mod(TfLowering& L, const Values& in) {
  if (!ir::is_float(in[0]->dtype())) return {L.node("Mod", in, {{"fmod", int64_t{0}}})};
  ir::Value* q = L.node("Floor", {L.node("Div", in)});
  return {L.node("Sub", {in[0], L.node("Mul", {q, in[1]})})};
}

Values cast(TfLowering& L, const Values& in) { return {L.cast(in[0], L.attr_dtype("DstT"))}; }

// Mean, Sum, Max, Min, Prod (reduction_indices an input known at compile time, keep_dims).
Values reduce(TfLowering& L, const Values& in) {
  static const std::map<std::string, std::string> ops = {
      {"Mean", "ReduceMean"}, {"Sum", "ReduceSum"}, {"Max", "ReduceMax"}, {"Min", "ReduceMin"},
      {"Prod", "ReduceProd"}, {"All", "ReduceMin"}, {"Any", "ReduceMax"}};
  const std::string& op = L.tf_node().op();
  std::vector<int64_t> axes = L.const_ints(in[1], "the reduction axes");
  const int64_t keep = L.attr_bool("keep_dims", false) ? 1 : 0;
  ir::Value* x = in[0];
  const bool logical = op == "All" || op == "Any";  // on bools: min/max of 0/1
  if (logical) x = L.cast(x, ir::DType::I32);
  ir::Value* y = L.node(ops.at(op), {x, L.i64s(axes)}, {{"keepdims", keep}, {"noop_with_empty_axes", int64_t{1}}});
  return {logical ? L.cast(y, ir::DType::Bool) : y};
}

Values arg_max(TfLowering& L, const Values& in) {
  std::vector<int64_t> axis = L.const_ints(in[1], "the axis");
  if (axis.size() != 1) L.fail_node("the axis must be one integer");
  const std::string op = L.tf_node().op() == "ArgMax" ? "ArgMax" : "ArgMin";
  ir::Value* y = L.node(op, {in[0]}, {{"axis", axis[0]}, {"keepdims", int64_t{0}}});
  const ir::DType out = L.has_attr("output_type") ? L.attr_dtype("output_type") : ir::DType::I64;
  return {L.cast(y, out)};
}

Values softmax(TfLowering& L, const Values& in) {
  return {L.node(L.tf_node().op() == "Softmax" ? "Softmax" : "LogSoftmax", in, {{"axis", int64_t{-1}}})};
}

}  // namespace

void add_math_lowerings(std::map<std::string, TfLowerFn>& t) {
  for (const auto& [op, ir_op] : same_ops()) t[op] = same;
  t["NotEqual"] = not_equal;
  t["Rsqrt"] = rsqrt;
  t["Square"] = square;
  t["SquaredDifference"] = squared_difference;
  t["Log1p"] = log1p;
  t["Expm1"] = expm1;
  t["Erfc"] = erfc;
  t["Relu6"] = relu6;
  t["LeakyRelu"] = leaky_relu;
  t["Select"] = select;
  t["BiasAdd"] = bias_add;
  t["FloorDiv"] = floor_div;
  t["FloorMod"] = floor_mod;
  t["Cast"] = cast;
  for (const char* op : {"Mean", "Sum", "Max", "Min", "Prod", "All", "Any"}) t[op] = reduce;
  t["ArgMax"] = arg_max;
  t["ArgMin"] = arg_max;
  t["Softmax"] = softmax;
  t["LogSoftmax"] = softmax;
}

}  // namespace kiln::frontend::tensorflow
