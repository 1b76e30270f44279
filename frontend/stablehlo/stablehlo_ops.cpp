// StableHLO's elementwise, constant, shape and layout ops as IR nodes.
#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "frontend/stablehlo/stablehlo_internal.h"
#include "ir/error.h"

namespace kiln::frontend::stablehlo {
namespace {

using Values = std::vector<ir::Value*>;

void arity(Lowering& L, const Values& in, size_t n) {
  if (in.size() != n) L.fail_op(fmt::format("expected {} operands, found {}", n, in.size()));
}

template <const char* Op>
Values binary(Lowering& L, const Values& in) {
  arity(L, in, 2);
  return {L.node(Op, {in[0], in[1]})};
}
template <const char* Op>
Values unary(Lowering& L, const Values& in) {
  arity(L, in, 1);
  return {L.node(Op, {in[0]})};
}

constexpr char kAdd[] = "Add", kSub[] = "Sub", kMul[] = "Mul", kDiv[] = "Div", kMax[] = "Max", kMin[] = "Min",
               kPow[] = "Pow", kExp[] = "Exp", kLog[] = "Log", kTanh[] = "Tanh", kSigmoid[] = "Sigmoid",
               kSqrt[] = "Sqrt", kNeg[] = "Neg", kAbs[] = "Abs", kErf[] = "Erf", kFloor[] = "Floor",
               kCeil[] = "Ceil", kSign[] = "Sign", kSin[] = "Sin", kCos[] = "Cos", kTan[] = "Tan",
               kRound[] = "Round";

Values rsqrt(Lowering& L, const Values& in) {
  arity(L, in, 1);
  return {L.node("Reciprocal", {L.node("Sqrt", {in[0]})})};
}

Values erfc(Lowering& L, const Values& in) {
  arity(L, in, 1);
  return {L.node("Sub", {L.scalar(1, in[0]->dtype()), L.node("Erf", {in[0]})})};
}

Values square(Lowering& L, const Values& in) {
  arity(L, in, 1);
  return {L.node("Mul", {in[0], in[0]})};
}

Values expm1(Lowering& L, const Values& in) {
  arity(L, in, 1);
  return {L.node("Sub", {L.node("Exp", {in[0]}), L.scalar(1, in[0]->dtype())})};
}

Values log1p(Lowering& L, const Values& in) {
  arity(L, in, 1);
  return {L.node("Log", {L.node("Add", {in[0], L.scalar(1, in[0]->dtype())})})};
}

Values remainder(Lowering& L, const Values& in) {
  arity(L, in, 2);
  return {L.node("Mod", {in[0], in[1]}, {{"fmod", int64_t{1}}})};
}

// and, or, xor, not: logical on i1, bitwise on integers.
Values logical(Lowering& L, const Values& in) {
  const std::string kind = L.op().name.substr(L.op().name.rfind('.') + 1);
  const bool is_bool = !in.empty() && in[0]->dtype() == ir::DType::Bool;
  if (kind == "not") {
    arity(L, in, 1);
    return {L.node(is_bool ? "Not" : "BitwiseNot", {in[0]})};
  }
  arity(L, in, 2);
  std::string op = kind == "and" ? "And" : kind == "or" ? "Or" : "Xor";
  return {L.node(is_bool ? op : "Bitwise" + op, {in[0], in[1]})};
}

Values is_finite(Lowering& L, const Values& in) {
  arity(L, in, 1);
  return {L.node("Not", {L.node("Or", {L.node("IsInf", {in[0]}), L.node("IsNaN", {in[0]})})})};
}

// reverse: a Slice from the end with step -1 along each dim.
Values reverse(Lowering& L, const Values& in) {
  arity(L, in, 1);
  const Attr* a = L.find_attr("dims");
  if (!a) a = &L.attr("dimensions");
  std::vector<int64_t> axes = L.ints(*a, "dims");
  const size_t rank = L.dims(in[0]).size();
  for (int64_t d : axes)
    if (d < 0 || d >= static_cast<int64_t>(rank)) L.fail_op(fmt::format("dim {} is out of range for rank {}", d, rank));
  if (axes.empty()) return {in[0]};
  std::vector<int64_t> starts(axes.size(), -1), ends(axes.size(), INT64_MIN), steps(axes.size(), -1);
  return {L.node("Slice", {in[0], L.i64s(starts), L.i64s(ends), L.i64s(axes), L.i64s(steps)})};
}

Values clamp(Lowering& L, const Values& in) {
  arity(L, in, 3);  // min, operand, max
  return {L.node("Min", {L.node("Max", {in[1], in[0]}), in[2]})};
}

Values constant(Lowering& L, const Values& in) {
  arity(L, in, 0);
  const Attr& value = L.attr("value");
  if (value.kind != Attr::Kind::Dense) L.fail_op(fmt::format("expected a dense<...> value, found {}", value.describe()));
  const TensorType& type = L.result_type();
  if (value.type && (value.type->dtype != type.dtype || value.type->dims != type.dims))
    L.fail_op(fmt::format("the value is {}, the result {}", value.type->str(), type.str()));
  try {
    return {L.constant(dense_tensor(value.s, type, L.limits()))};
  } catch (const Error& e) {
    L.fail_op(e.what());
  }
}

Values convert(Lowering& L, const Values& in) {
  arity(L, in, 1);
  return {L.cast(in[0], L.result_type().dtype)};
}

// broadcast_in_dim: operand dim i goes to result dim dims[i]; size-1 dims stretch.
Values broadcast_in_dim(Lowering& L, const Values& in) {
  arity(L, in, 1);
  const Attr* a = L.find_attr("dims");
  if (!a) a = &L.attr("broadcast_dimensions");
  std::vector<int64_t> map = L.ints(*a, "dims");
  std::vector<int64_t> src = L.dims(in[0]);
  const std::vector<int64_t>& out = L.result_type().dims;
  if (map.size() != src.size())
    L.fail_op(fmt::format("dims has {} entries, the operand has rank {}", map.size(), src.size()));
  std::vector<bool> seen(out.size(), false);
  for (size_t i = 0; i < map.size(); ++i) {
    if (map[i] < 0 || map[i] >= static_cast<int64_t>(out.size()) || seen[static_cast<size_t>(map[i])])
      L.fail_op(fmt::format("dims [{}] are not distinct dims of the rank-{} result", fmt::join(map, ", "), out.size()));
    seen[static_cast<size_t>(map[i])] = true;
    if (src[i] != 1 && src[i] != out[static_cast<size_t>(map[i])])
      L.fail_op(fmt::format("operand dim {} ({}) cannot broadcast to result dim {} ({})", i, src[i], map[i],
                            out[static_cast<size_t>(map[i])]));
  }
  // Operand dims in result order, then 1s where the result has dims of its own, then Expand.
  std::vector<int64_t> order(map.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return map[static_cast<size_t>(x)] < map[static_cast<size_t>(y)]; });
  ir::Value* v = L.transpose(in[0], order);
  std::vector<int64_t> shape(out.size(), 1);
  for (size_t i = 0; i < map.size(); ++i) shape[static_cast<size_t>(map[i])] = src[i];
  v = L.reshape(v, shape);
  if (shape != out) v = L.node("Expand", {v, L.i64s(out)});
  return {v};
}

Values reshape(Lowering& L, const Values& in) {
  arity(L, in, 1);
  const std::vector<int64_t>& out = L.result_type().dims;
  std::vector<int64_t> src = L.dims(in[0]);
  if (ir::numel(src) != ir::numel(out))
    L.fail_op(fmt::format("cannot reshape {} to {}", ir::dims_str(src), ir::dims_str(out)));
  return {L.reshape(in[0], out)};
}

Values transpose(Lowering& L, const Values& in) {
  arity(L, in, 1);
  const Attr* a = L.find_attr("dims");
  if (!a) a = &L.attr("permutation");
  std::vector<int64_t> perm = L.ints(*a, "dims");
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (size_t k = 0; k < sorted.size(); ++k)
    if (sorted[k] != static_cast<int64_t>(k) || sorted.size() != L.dims(in[0]).size())
      L.fail_op(fmt::format("dims [{}] are not a permutation of the operand's {} dims", fmt::join(perm, ", "),
                            L.dims(in[0]).size()));
  return {L.node("Transpose", {in[0]}, {{"perm", perm}})};
}

Values concatenate(Lowering& L, const Values& in) {
  if (in.empty()) L.fail_op("no operands");
  const Attr* a = L.find_attr("dim");
  if (!a) a = &L.attr("dimension");
  int64_t axis = L.integer(*a, "dim");
  if (axis < 0 || axis >= static_cast<int64_t>(L.dims(in[0]).size()))
    L.fail_op(fmt::format("dim {} is out of range for rank {}", axis, L.dims(in[0]).size()));
  return {L.node("Concat", in, {{"axis", axis}})};
}

Values slice(Lowering& L, const Values& in) {
  arity(L, in, 1);
  std::vector<int64_t> starts, limits, strides;
  if (!L.op().slice.empty()) {
    for (const auto& d : L.op().slice) {
      starts.push_back(d[0]);
      limits.push_back(d[1]);
      strides.push_back(d.size() > 2 ? d[2] : 1);
    }
  } else {
    starts = L.ints(L.attr("start_indices"), "start_indices");
    limits = L.ints(L.attr("limit_indices"), "limit_indices");
    strides = L.find_attr("strides") ? L.ints(L.attr("strides"), "strides") : std::vector<int64_t>(starts.size(), 1);
  }
  std::vector<int64_t> src = L.dims(in[0]);
  if (starts.size() != src.size() || limits.size() != src.size() || strides.size() != src.size())
    L.fail_op(fmt::format("the slice gives {} dims, the operand has {}", starts.size(), src.size()));
  std::vector<int64_t> axes(src.size());
  std::iota(axes.begin(), axes.end(), 0);
  for (size_t k = 0; k < src.size(); ++k)
    if (starts[k] < 0 || limits[k] < starts[k] || limits[k] > src[k] || strides[k] < 1)
      L.fail_op(fmt::format("dim {}: {}:{}:{} is not a slice of {} elements", k, starts[k], limits[k], strides[k], src[k]));
  return {L.node("Slice", {in[0], L.i64s(starts), L.i64s(limits), L.i64s(axes), L.i64s(strides)})};
}

// iota: a compile-time constant counting along one dim.
Values iota(Lowering& L, const Values& in) {
  arity(L, in, 0);
  const Attr* a = L.find_attr("dim");
  if (!a) a = &L.attr("iota_dimension");
  int64_t dim = L.integer(*a, "dim");
  const TensorType& type = L.result_type();
  if (dim < 0 || dim >= static_cast<int64_t>(type.dims.size()))
    L.fail_op(fmt::format("dim {} is out of range for {}", dim, type.str()));
  uint64_t count = 1;
  for (int64_t d : type.dims) count *= static_cast<uint64_t>(d);
  if (count > L.limits().max_elements) L.fail_op("the result is over the element limit (--max-elements)");
  int64_t inner = 1;
  for (size_t k = static_cast<size_t>(dim) + 1; k < type.dims.size(); ++k) inner *= type.dims[k];
  const int64_t len = type.dims[static_cast<size_t>(dim)];
  std::vector<double> values(count);
  for (uint64_t i = 0; i < count; ++i) values[i] = static_cast<double>((static_cast<int64_t>(i) / inner) % len);
  return {L.constant(ir::Tensor::from_vector<double>(type.dtype, type.dims, values))};
}

Values compare(Lowering& L, const Values& in) {
  arity(L, in, 2);
  std::string dir;
  if (!L.op().words.empty()) dir = L.op().words[0];
  else dir = L.opaque_word(L.attr("comparison_direction"));
  ir::Value* a = in[0];
  ir::Value* b = in[1];
  if (dir == "EQ") return {L.node("Equal", {a, b})};
  if (dir == "NE") return {L.node("Not", {L.node("Equal", {a, b})})};
  if (dir == "LT") return {L.node("Less", {a, b})};
  if (dir == "LE") return {L.node("LessOrEqual", {a, b})};
  if (dir == "GT") return {L.node("Greater", {a, b})};
  if (dir == "GE") return {L.node("GreaterOrEqual", {a, b})};
  L.fail_op(fmt::format("unknown comparison direction '{}'", dir));
}

Values select(Lowering& L, const Values& in) {
  arity(L, in, 3);
  if (in[0]->dtype() != ir::DType::Bool) L.fail_op("the predicate must be i1");
  return {L.node("Where", {in[0], in[1], in[2]})};
}

Values pad(Lowering& L, const Values& in) {
  arity(L, in, 2);
  auto get = [&](const char* pretty, const char* generic) {
    const Attr* a = L.find_attr(pretty);
    if (!a) a = &L.attr(generic);
    return L.ints(*a, pretty);
  };
  std::vector<int64_t> low = get("low", "edge_padding_low"), high = get("high", "edge_padding_high"),
                       interior = get("interior", "interior_padding");
  const size_t rank = L.dims(in[0]).size();
  if (low.size() != rank || high.size() != rank || interior.size() != rank)
    L.fail_op(fmt::format("padding for {} dims, the operand has {}", low.size(), rank));
  for (size_t k = 0; k < rank; ++k) {
    if (interior[k] != 0) L.fail_op("interior padding is not supported");
    if (low[k] < 0 || high[k] < 0) L.fail_op("negative padding is not supported");
  }
  std::vector<int64_t> pads = low;
  pads.insert(pads.end(), high.begin(), high.end());
  return {L.node("Pad", {in[0], L.i64s(pads), in[1]}, {{"mode", "constant"}})};
}

// stablehlo.dot (the older op): vector and matrix products.
Values dot(Lowering& L, const Values& in) {
  arity(L, in, 2);
  if (L.dims(in[0]).size() > 2 || L.dims(in[1]).size() > 2) L.fail_op("operands of rank over 2");
  return {L.cast(L.node("MatMul", {in[0], in[1]}), L.result_type().dtype)};
}

}  // namespace

void add_basic_lowerings(std::map<std::string, LowerFn>& t) {
  t["stablehlo.add"] = binary<kAdd>;
  t["stablehlo.subtract"] = binary<kSub>;
  t["stablehlo.multiply"] = binary<kMul>;
  t["stablehlo.divide"] = binary<kDiv>;
  t["stablehlo.maximum"] = binary<kMax>;
  t["stablehlo.minimum"] = binary<kMin>;
  t["stablehlo.power"] = binary<kPow>;
  t["stablehlo.remainder"] = remainder;
  t["stablehlo.and"] = logical;
  t["stablehlo.or"] = logical;
  t["stablehlo.xor"] = logical;
  t["stablehlo.not"] = logical;
  t["stablehlo.exponential"] = unary<kExp>;
  t["stablehlo.exponential_minus_one"] = expm1;
  t["stablehlo.log"] = unary<kLog>;
  t["stablehlo.log_plus_one"] = log1p;
  t["stablehlo.tanh"] = unary<kTanh>;
  t["stablehlo.logistic"] = unary<kSigmoid>;
  t["stablehlo.sqrt"] = unary<kSqrt>;
  t["stablehlo.rsqrt"] = rsqrt;
  t["stablehlo.negate"] = unary<kNeg>;
  t["stablehlo.abs"] = unary<kAbs>;
  t["stablehlo.floor"] = unary<kFloor>;
  t["stablehlo.ceil"] = unary<kCeil>;
  t["stablehlo.sign"] = unary<kSign>;
  t["stablehlo.sine"] = unary<kSin>;
  t["stablehlo.cosine"] = unary<kCos>;
  t["stablehlo.tan"] = unary<kTan>;
  t["stablehlo.round_nearest_even"] = unary<kRound>;
  t["stablehlo.clamp"] = clamp;
  t["stablehlo.is_finite"] = is_finite;
  t["stablehlo.reverse"] = reverse;
  t["chlo.erf"] = unary<kErf>;
  t["chlo.erfc"] = erfc;
  t["chlo.square"] = square;
  t["stablehlo.constant"] = constant;
  t["stablehlo.convert"] = convert;
  t["stablehlo.broadcast_in_dim"] = broadcast_in_dim;
  t["stablehlo.reshape"] = reshape;
  t["stablehlo.transpose"] = transpose;
  t["stablehlo.concatenate"] = concatenate;
  t["stablehlo.slice"] = slice;
  t["stablehlo.iota"] = iota;
  t["stablehlo.compare"] = compare;
  t["stablehlo.select"] = select;
  t["stablehlo.pad"] = pad;
  t["stablehlo.dot"] = dot;
}

}  // namespace kiln::frontend::stablehlo
