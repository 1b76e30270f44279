// If, Loop and Scan (ONNX's semantics; Scan from opset 9). Bodies are graph attributes whose
// trailing inputs take the node's trailing `num_captured` inputs (ir/control_flow.h). The
// references run the bodies with the interpreter.
#include <cstring>

#include "ir/control_flow.h"
#include "ir/interpreter.h"
#include "ir/ops/op_helpers.h"

namespace kiln::ir {

namespace {

Graph& body_of(const Node& node, const char* attr) {
  const auto& g = node.attr(attr).g();
  if (!g) fail("{}: attribute '{}' holds no graph", node.describe(), attr);
  return *g;
}

ValueType type_of(const Value* v) { return {v->dtype(), v->shape()}; }

std::vector<ValueType> captured_types(const Node& node) {
  std::vector<ValueType> types;
  for (size_t i = node.num_inputs() - num_captured(node); i < node.num_inputs(); ++i)
    types.push_back(type_of(node.input(i)));
  return types;
}

std::vector<Tensor> captured_values(const Node& node, std::span<const Tensor* const> inputs) {
  std::vector<Tensor> values;
  for (size_t i = node.num_inputs() - num_captured(node); i < node.num_inputs(); ++i) values.push_back(*inputs[i]);
  return values;
}

bool scalar_true(const Node& node, const Tensor& t, const char* what) {
  if (t.numel() != 1) fail("{}: {} has {} elements, expected one", node.describe(), what, t.numel());
  return t.as_int64(0) != 0;
}

void require_scalar_bool(const Node& node, const Value* v, const char* what) {
  if (v->dtype() != DType::Bool) fail("{}: {} is {}, expected bool", node.describe(), what, dtype_name(v->dtype()));
  if (v->shape().is_static() && v->shape().numel() != 1)
    fail("{}: {} has shape {}, expected a single element", node.describe(), what, v->shape().str());
}

// ---- If ----

void infer_if(Node& node) {
  require_scalar_bool(node, node.input(0), "cond");
  if (node.num_inputs() != 1 + num_captured(node))
    fail("{}: takes cond and {} captured values, got {} inputs", node.describe(), num_captured(node), node.num_inputs());
  Graph& then_g = body_of(node, "then_branch");
  Graph& else_g = body_of(node, "else_branch");
  std::vector<ValueType> captured = captured_types(node);
  // On a condition known at compile time only the branch taken counts (the other may not even
  // type-check with these inputs: an If on a rank).
  const Value* cond = node.input(0);
  if (cond->is_constant() && cond->constant().numel() == 1) {
    Graph& taken = cond->constant().as_int64(0) != 0 ? then_g : else_g;
    node.set_attr("untyped_branch", std::string());
    infer_body(node, taken, captured);
    if (taken.outputs().size() != node.num_outputs())
      fail("{}: has {} outputs, its branch gives {}", node.describe(), node.num_outputs(), taken.outputs().size());
    for (size_t i = 0; i < node.num_outputs(); ++i)
      node.output(i)->set_type(taken.outputs()[i]->dtype(), taken.outputs()[i]->shape());
    return;
  }
  // A branch that cannot be typed with these inputs (silero-vad's 8 kHz branch on a 16 kHz chunk)
  // is recorded, and running it is a run-time error; both failing is a compile-time one.
  std::string then_error, else_error;
  try {
    infer_body(node, then_g, captured);
  } catch (const Error& e) {
    then_error = e.what();
  }
  try {
    infer_body(node, else_g, captured);
  } catch (const Error& e) {
    else_error = e.what();
  }
  if (!then_error.empty() && !else_error.empty()) throw Error(then_error);
  node.set_attr("untyped_branch", then_error.empty() && else_error.empty() ? std::string()
                                  : !then_error.empty()                     ? "then_branch: " + then_error
                                                                            : "else_branch: " + else_error);
  if (!then_error.empty() || !else_error.empty()) {
    const Graph& typed = then_error.empty() ? then_g : else_g;
    if (typed.outputs().size() != node.num_outputs())
      fail("{}: has {} outputs, its branch gives {}", node.describe(), node.num_outputs(), typed.outputs().size());
    for (size_t i = 0; i < node.num_outputs(); ++i)
      node.output(i)->set_type(typed.outputs()[i]->dtype(), typed.outputs()[i]->shape());
    return;
  }
  if (then_g.outputs().size() != node.num_outputs() || else_g.outputs().size() != node.num_outputs())
    fail("{}: has {} outputs, its branches give {} and {}", node.describe(), node.num_outputs(),
         then_g.outputs().size(), else_g.outputs().size());
  for (size_t i = 0; i < node.num_outputs(); ++i) {
    ValueType t = merge_types(node, fmt::format("output {}", i), type_of(then_g.outputs()[i]),
                              type_of(else_g.outputs()[i]));
    node.output(i)->set_type(t.dtype, t.shape);
  }
}

void eval_if(const Node& node, std::span<const Tensor* const> inputs, std::vector<Tensor>& outputs) {
  const Graph& branch = body_of(node, scalar_true(node, *inputs[0], "cond") ? "then_branch" : "else_branch");
  outputs = interpret_body(branch, captured_values(node, inputs));
}

// ---- Loop ----

std::vector<ValueType> loop_body_types(const Node& node, const std::vector<ValueType>& carried) {
  std::vector<ValueType> types = {{DType::I64, Shape{}}, {DType::Bool, Shape{}}};
  types.insert(types.end(), carried.begin(), carried.end());
  for (const ValueType& t : captured_types(node)) types.push_back(t);
  return types;
}

// Infers the body until the carried values' types are a fixed point: a value whose shape
// changes between iterations gets unknown dims where it changes.
template <class BodyTypes>
std::vector<ValueType> infer_carried(Node& node, Graph& body, std::vector<ValueType> carried, size_t first_out,
                                     BodyTypes&& body_types) {
  for (int round = 0;; ++round) {
    infer_body(node, body, body_types(carried));
    if (body.outputs().size() < first_out + carried.size())
      fail("{}: body gives {} outputs, fewer than its {} carried values", node.describe(), body.outputs().size(),
           carried.size());
    bool fixed = true;
    for (size_t i = 0; i < carried.size(); ++i) {
      ValueType merged = merge_types(node, fmt::format("carried value {}", i), carried[i],
                                     type_of(body.outputs()[first_out + i]));
      fixed = fixed && merged.shape == carried[i].shape;
      carried[i] = merged;
    }
    if (fixed) return carried;
    if (round == 3) fail("{}: the carried values' shapes do not settle", node.describe());
  }
}

void infer_loop(Node& node) {
  const size_t n = loop_carried_count(node);
  if (node.has_input(0)) require_dtype(node, 0, {DType::I64});
  if (node.has_input(1)) require_scalar_bool(node, node.input(1), "cond");
  Graph& body = body_of(node, "body");
  std::vector<ValueType> carried;
  for (size_t i = 0; i < n; ++i) carried.push_back(type_of(node.input(2 + i)));
  carried = infer_carried(node, body, carried, 1, [&](const std::vector<ValueType>& c) { return loop_body_types(node, c); });
  if (body.outputs().empty() || body.outputs()[0]->dtype() != DType::Bool)
    fail("{}: the body's first output must be the bool condition", node.describe());
  const size_t k = body.outputs().size() - 1 - n;
  if (node.num_outputs() > n + k)
    fail("{}: has {} outputs, its body gives {} carried values and {} scan outputs", node.describe(),
         node.num_outputs(), n, k);
  const Dim trips = loop_runs_to_trip_count(node) ? Dim(loop_constant_trip_count(node)) : Dim::unknown();
  for (size_t i = 0; i < node.num_outputs(); ++i) {
    if (i < n) {
      node.output(i)->set_type(carried[i].dtype, carried[i].shape);
      continue;
    }
    const Value* y = body.outputs()[1 + i];
    std::vector<Dim> dims = {trips};
    dims.insert(dims.end(), y->shape().dims().begin(), y->shape().dims().end());
    node.output(i)->set_type(y->dtype(), Shape(std::move(dims)));
  }
}

// Stacks equally shaped tensors along a new `axis`.
// With no parts (no iteration ran), the element type is the body output's.
Tensor stack(const Node& node, const std::vector<Tensor>& parts, const Value* element, int64_t axis) {
  std::vector<int64_t> dims;
  DType dtype;
  if (!parts.empty()) {
    dims = parts[0].dims();
    dtype = parts[0].dtype();
  } else {
    if (!element->has_type() || !element->shape().is_static())
      fail("{}: no iteration ran, and scan output '{}' has no known element shape", node.describe(), element->name());
    for (const Dim& d : element->shape().dims()) dims.push_back(d.value());
    dtype = element->dtype();
  }
  for (const Tensor& p : parts)
    if (p.dims() != dims || p.dtype() != dtype)
      fail("{}: scan output parts differ in shape ({} and {}) or dtype", node.describe(), dims_str(dims), dims_str(p.dims()));
  const size_t esize = dtype_size(dtype);
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < static_cast<int64_t>(dims.size()); ++i) (i < axis ? outer : inner) *= dims[i];
  std::vector<int64_t> out_dims = dims;
  out_dims.insert(out_dims.begin() + axis, static_cast<int64_t>(parts.size()));
  Tensor out(dtype, out_dims);
  auto* dst = static_cast<uint8_t*>(out.mutable_raw());
  const size_t row = static_cast<size_t>(inner) * esize;
  for (int64_t o = 0; o < outer; ++o)
    for (size_t t = 0; t < parts.size(); ++t)
      std::memcpy(dst + (static_cast<size_t>(o) * parts.size() + t) * row,
                  static_cast<const uint8_t*>(parts[t].raw()) + static_cast<size_t>(o) * row, row);
  return out;
}

void eval_loop(const Node& node, std::span<const Tensor* const> inputs, std::vector<Tensor>& outputs) {
  const size_t n = loop_carried_count(node);
  const Graph& body = body_of(node, "body");
  const size_t k = body.outputs().size() - 1 - n;
  const Tensor* m = optional_input(inputs, 0);
  const Tensor* initial_cond = optional_input(inputs, 1);
  if (m && m->numel() != 1) fail("{}: M has {} elements, expected one", node.describe(), m->numel());
  const int64_t trips = m ? m->as_int64(0) : INT64_MAX;
  bool cond = initial_cond ? scalar_true(node, *initial_cond, "cond") : true;
  std::vector<Tensor> carried;
  for (size_t i = 0; i < n; ++i) carried.push_back(*inputs[2 + i]);
  const std::vector<Tensor> captured = captured_values(node, inputs);
  std::vector<std::vector<Tensor>> scans(k);
  for (int64_t it = 0; it < trips && cond; ++it) {
    std::vector<Tensor> args = {Tensor::scalar_i64(it), Tensor::from_vector<bool>(DType::Bool, {}, {cond})};
    args.insert(args.end(), carried.begin(), carried.end());
    args.insert(args.end(), captured.begin(), captured.end());
    std::vector<Tensor> results = interpret_body(body, std::move(args));
    cond = scalar_true(node, results[0], "the body's condition");
    for (size_t i = 0; i < n; ++i) carried[i] = std::move(results[1 + i]);
    for (size_t j = 0; j < k; ++j) scans[j].push_back(std::move(results[1 + n + j]));
  }
  outputs.resize(node.num_outputs());
  for (size_t i = 0; i < node.num_outputs(); ++i) {
    if (i < n) {
      outputs[i] = std::move(carried[i]);
    } else {
      const Value* y = body.outputs()[1 + i];
      outputs[i] = stack(node, scans[i - n], y, 0);
    }
  }
}

// ---- Scan ----

Shape without_axis(const Shape& s, int64_t axis) {
  std::vector<Dim> dims = s.dims();
  dims.erase(dims.begin() + axis);
  return Shape(std::move(dims));
}

void infer_scan(Node& node) {
  const size_t n = scan_state_count(node);
  const auto m = static_cast<size_t>(node.i("num_scan_inputs"));
  Graph& body = body_of(node, "body");
  std::vector<int64_t> in_axes = node.has_attr("scan_input_axes") ? node.ints("scan_input_axes")
                                                                   : std::vector<int64_t>(m, 0);
  if (in_axes.size() != m) fail("{}: scan_input_axes has {} values, expected {}", node.describe(), in_axes.size(), m);
  std::vector<ValueType> slices;
  Dim steps = Dim::unknown();
  for (size_t j = 0; j < m; ++j) {
    const Value* x = node.input(n + j);
    int64_t axis = require_axis(node, in_axes[j], static_cast<int64_t>(x->shape().rank()));
    const Dim& d = x->shape()[static_cast<size_t>(axis)];
    if (j == 0) steps = d;
    else if (d.is_static() && steps.is_static() && d.value() != steps.value())
      fail("{}: scan input {} has {} steps along axis {}, the first has {}", node.describe(), j, d.value(), axis,
           steps.value());
    slices.push_back({x->dtype(), without_axis(x->shape(), axis)});
  }
  std::vector<ValueType> states;
  for (size_t i = 0; i < n; ++i) states.push_back(type_of(node.input(i)));
  states = infer_carried(node, body, states, 0, [&](const std::vector<ValueType>& s) {
    std::vector<ValueType> types = s;
    types.insert(types.end(), slices.begin(), slices.end());
    for (const ValueType& t : captured_types(node)) types.push_back(t);
    return types;
  });
  const ScanLayout layout = scan_layout(node);
  if (node.num_outputs() != body.outputs().size())
    fail("{}: has {} outputs, its body gives {}", node.describe(), node.num_outputs(), body.outputs().size());
  for (size_t i = 0; i < node.num_outputs(); ++i) {
    if (i < n) {
      node.output(i)->set_type(states[i].dtype, states[i].shape);
      continue;
    }
    const Value* y = body.outputs()[i];
    std::vector<Dim> dims = y->shape().dims();
    dims.insert(dims.begin() + layout.output_axes[i - n], steps);
    node.output(i)->set_type(y->dtype(), Shape(std::move(dims)));
  }
}

// Element `index` of `x` along `axis`, without that axis.
Tensor slice_at(const Tensor& x, int64_t axis, int64_t index) {
  const std::vector<int64_t>& dims = x.dims();
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < x.rank(); ++i)
    if (i < axis) outer *= dims[i];
    else if (i > axis) inner *= dims[i];
  std::vector<int64_t> out_dims = dims;
  out_dims.erase(out_dims.begin() + axis);
  Tensor out(x.dtype(), out_dims);
  const size_t row = static_cast<size_t>(inner) * dtype_size(x.dtype());
  const auto* src = static_cast<const uint8_t*>(x.raw());
  auto* dst = static_cast<uint8_t*>(out.mutable_raw());
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(dst + static_cast<size_t>(o) * row, src + static_cast<size_t>(o * dims[axis] + index) * row, row);
  return out;
}

void eval_scan(const Node& node, std::span<const Tensor* const> inputs, std::vector<Tensor>& outputs) {
  const size_t n = scan_state_count(node);
  const auto m = static_cast<size_t>(node.i("num_scan_inputs"));
  const Graph& body = body_of(node, "body");
  const size_t k = body.outputs().size() - n;
  std::vector<int64_t> in_ranks;
  for (size_t j = 0; j < m; ++j) in_ranks.push_back(inputs[n + j]->rank());
  ScanLayout layout = scan_layout(node, in_ranks, std::vector<int64_t>(k, -1));
  const int64_t steps = inputs[n]->dims()[layout.input_axes[0]];
  for (size_t j = 1; j < m; ++j)
    if (inputs[n + j]->dims()[layout.input_axes[j]] != steps)
      fail("{}: scan input {} has {} steps, the first has {}", node.describe(), j,
           inputs[n + j]->dims()[layout.input_axes[j]], steps);
  std::vector<Tensor> states;
  for (size_t i = 0; i < n; ++i) states.push_back(*inputs[i]);
  const std::vector<Tensor> captured = captured_values(node, inputs);
  std::vector<std::vector<Tensor>> scans(k);
  for (int64_t t = 0; t < steps; ++t) {
    std::vector<Tensor> args = states;
    for (size_t j = 0; j < m; ++j)
      args.push_back(slice_at(*inputs[n + j], layout.input_axes[j], layout.input_directions[j] ? steps - 1 - t : t));
    args.insert(args.end(), captured.begin(), captured.end());
    std::vector<Tensor> results = interpret_body(body, std::move(args));
    for (size_t i = 0; i < n; ++i) states[i] = std::move(results[i]);
    for (size_t j = 0; j < k; ++j) scans[j].push_back(std::move(results[n + j]));
  }
  if (steps > 0) {  // the output axes are relative to the parts' rank
    std::vector<int64_t> out_ranks;
    for (size_t j = 0; j < k; ++j) out_ranks.push_back(scans[j][0].rank());
    layout = scan_layout(node, in_ranks, out_ranks);
  }
  outputs.resize(n + k);
  for (size_t i = 0; i < n; ++i) outputs[i] = std::move(states[i]);
  for (size_t j = 0; j < k; ++j) {
    if (layout.output_directions[j]) std::reverse(scans[j].begin(), scans[j].end());
    const Value* y = body.outputs()[n + j];
    outputs[n + j] = stack(node, scans[j], y, layout.output_axes[j]);
  }
}

}  // namespace

void register_control_flow_ops(Registry& r) {
  const AttrSpec captured{"num_captured", AttrType::Int, Attribute(int64_t{0})};
  r.add(OpDef{
      .name = "If",
      .summary = "runs then_branch or else_branch by a bool condition; the trailing num_captured inputs feed "
                 "both branches' trailing inputs (values they read from enclosing graphs)",
      .inputs = {{"cond"}, {"captured", true, true}},
      .outputs = numbered_names("outputs", 256),
      .attrs = {{"else_branch", AttrType::Graph, std::nullopt}, captured,
                {"then_branch", AttrType::Graph, std::nullopt},
                // Set by the shape rule: "then_branch: why" when that branch cannot be typed with
                // these inputs (running it fails), "" when both can.
                {"untyped_branch", AttrType::String, Attribute(std::string())}},
      .infer = infer_if,
      .eval = eval_if,
  });
  r.add(OpDef{
      .name = "Loop",
      .summary = "runs body up to M times while its condition holds: carried values (v_initial...) go from one "
                 "iteration to the next, per-iteration scan outputs are stacked; then the captured values",
      .inputs = {{"M", true}, {"cond", true}, {"v_initial", true, true}},
      .outputs = numbered_names("outputs", 256),
      .min_outputs = 0,
      .attrs = {{"body", AttrType::Graph, std::nullopt}, captured},
      .infer = infer_loop,
      .eval = eval_loop,
  });
  r.add(OpDef{
      .name = "Scan",
      .summary = "runs body once per step along the scan inputs' axes: states carried, per-step scan outputs "
                 "stacked along scan_output_axes (opset 9 and later); then the captured values",
      .inputs = {{"initial_state_and_scan_inputs", false, true}},
      .outputs = numbered_names("outputs", 256),
      .attrs = {{"body", AttrType::Graph, std::nullopt}, captured,
                {"num_scan_inputs", AttrType::Int, std::nullopt},
                {"scan_input_axes", AttrType::Ints, std::nullopt, true},
                {"scan_input_directions", AttrType::Ints, std::nullopt, true},
                {"scan_output_axes", AttrType::Ints, std::nullopt, true},
                {"scan_output_directions", AttrType::Ints, std::nullopt, true}},
      .infer = infer_scan,
      .eval = eval_scan,
  });
}

}  // namespace kiln::ir
