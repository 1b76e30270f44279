#include "ir/control_flow.h"

#include "ir/op_registry.h"

namespace kiln::ir {

size_t num_captured(const Node& node) {
  int64_t c = node.has_attr("num_captured") ? node.i("num_captured") : 0;
  if (c < 0 || static_cast<size_t>(c) > node.num_inputs())
    fail("{}: num_captured {} is outside [0, {}] (its input count)", node.describe(), c, node.num_inputs());
  return static_cast<size_t>(c);
}

size_t loop_carried_count(const Node& loop) {
  size_t c = num_captured(loop);
  if (loop.num_inputs() < 2 && c == 0) return 0;  // M and cond omitted, nothing carried
  if (loop.num_inputs() < 2 + c)
    fail("{}: has {} inputs, fewer than M, cond and its {} captured values", loop.describe(), loop.num_inputs(), c);
  return loop.num_inputs() - 2 - c;
}

size_t scan_state_count(const Node& scan) {
  size_t c = num_captured(scan);
  int64_t m = scan.i("num_scan_inputs");
  if (m < 1 || static_cast<size_t>(m) + c > scan.num_inputs())
    fail("{}: num_scan_inputs {} does not fit its {} inputs ({} captured)", scan.describe(), m, scan.num_inputs(), c);
  return scan.num_inputs() - c - static_cast<size_t>(m);
}

void infer_body(const Node& owner, Graph& body, const std::vector<ValueType>& types) {
  if (body.inputs().size() != types.size())
    fail("{}: body '{}' has {} inputs, the op gives it {}", owner.describe(), body.name(), body.inputs().size(),
         types.size());
  for (size_t i = 0; i < types.size(); ++i) {
    Value* in = body.inputs()[i];
    if (!in->is_constant()) in->set_type(types[i].dtype, types[i].shape);
  }
  // Results known at compile time are folded as they are typed, as fold_constants does in the
  // main graph: shapes and conditions computed inside a body (an If on a rank) resolve here.
  std::vector<Node*> nodes;
  for (const auto& n : body.nodes()) nodes.push_back(n.get());
  try {
    for (Node* n : nodes) {
      infer_node(*n);
      if (n->def().fold)
        if (auto results = n->def().fold(*n)) {
          body.fold_node(n, std::move(*results));
          continue;
        }
      bool known = n->op() != "If" && n->op() != "Loop" && n->op() != "Scan";
      int64_t bytes = 0;
      for (const Value* v : n->inputs()) known = known && (!v || v->is_constant());
      for (const Value* v : n->outputs())
        bytes += v->shape().is_static() ? v->shape().numel() * static_cast<int64_t>(dtype_size(v->dtype())) : (1 << 30);
      if (!known || bytes > (1 << 16)) continue;  // small results only: shapes, indices, conditions
      std::vector<const Tensor*> args;
      for (const Value* v : n->inputs()) args.push_back(v ? &v->constant() : nullptr);
      body.fold_node(n, eval_node(*n, args));
    }
  } catch (const Error& e) {
    fail("{}: body '{}': {}", owner.describe(), body.name(), e.what());
  }
  for (const Value* out : body.outputs())
    if (!out->has_type()) fail("{}: body '{}': output '{}' has no type", owner.describe(), body.name(), out->name());
}

ValueType merge_types(const Node& owner, const std::string& what, const ValueType& a, const ValueType& b) {
  if (a.dtype != b.dtype)
    fail("{}: {} is {} in one place and {} in another", owner.describe(), what, dtype_name(a.dtype),
         dtype_name(b.dtype));
  if (a.shape.rank() != b.shape.rank())
    fail("{}: {} has shape {} in one place and {} in another; kiln needs the rank fixed", owner.describe(), what,
         a.shape.str(), b.shape.str());
  std::vector<Dim> dims;
  for (size_t i = 0; i < a.shape.rank(); ++i) dims.push_back(a.shape[i] == b.shape[i] ? a.shape[i] : Dim::unknown());
  return {a.dtype, Shape(std::move(dims))};
}

namespace {

bool constant_true(const Value* v) {
  return v && v->is_constant() && v->constant().numel() == 1 && v->constant().as_int64(0) != 0;
}

const Value* through_identities(const Value* v) {
  while (v && v->producer() && v->producer()->op() == "Identity") v = v->producer()->input(0);
  return v;
}

}  // namespace

int64_t loop_constant_trip_count(const Node& loop) {
  const Value* m = loop.input(0);
  if (!m || !m->is_constant() || m->constant().numel() != 1) return -1;
  return std::max<int64_t>(0, m->constant().as_int64(0));
}

bool loop_runs_to_trip_count(const Node& loop) {
  if (loop_constant_trip_count(loop) < 0) return false;
  if (loop.has_input(1) && !constant_true(loop.input(1))) return false;
  const Graph& body = *loop.attr("body").g();
  if (body.inputs().size() < 2 || body.outputs().empty()) return false;
  const Value* cond = through_identities(body.outputs()[0]);
  return constant_true(cond) || cond == body.inputs()[1];
}

ScanLayout scan_layout(const Node& scan, const std::vector<int64_t>& input_ranks,
                       const std::vector<int64_t>& output_ranks) {
  const Graph& body = *scan.attr("body").g();
  const size_t n = scan_state_count(scan);
  const auto m = static_cast<size_t>(scan.i("num_scan_inputs"));
  if (body.outputs().size() < n)
    fail("{}: body has {} outputs, fewer than its {} states", scan.describe(), body.outputs().size(), n);
  const size_t k = body.outputs().size() - n;
  ScanLayout l;
  auto list = [&](const char* attr, size_t count, int64_t fallback) {
    std::vector<int64_t> v = scan.has_attr(attr) ? scan.ints(attr) : std::vector<int64_t>(count, fallback);
    if (v.size() != count) fail("{}: {} has {} values, expected {}", scan.describe(), attr, v.size(), count);
    return v;
  };
  l.input_axes = list("scan_input_axes", m, 0);
  l.input_directions = list("scan_input_directions", m, 0);
  l.output_axes = list("scan_output_axes", k, 0);
  l.output_directions = list("scan_output_directions", k, 0);
  for (size_t j = 0; j < m; ++j) {
    const Value* x = scan.input(n + j);
    auto rank = j < input_ranks.size() ? input_ranks[j] : static_cast<int64_t>(x->shape().rank());
    int64_t& a = l.input_axes[j];
    if (a < -rank || a >= rank)
      fail("{}: scan_input_axes[{}] = {} is out of range for rank {}", scan.describe(), j, a, rank);
    if (a < 0) a += rank;
  }
  for (size_t j = 0; j < k; ++j) {
    const Value* y = body.outputs()[n + j];
    if (j < output_ranks.size() && output_ranks[j] < 0) continue;  // not known yet
    auto rank = (j < output_ranks.size() ? output_ranks[j] : static_cast<int64_t>(y->shape().rank())) + 1;
    int64_t& a = l.output_axes[j];
    if (a < -rank || a >= rank)
      fail("{}: scan_output_axes[{}] = {} is out of range for rank {}", scan.describe(), j, a, rank);
    if (a < 0) a += rank;
  }
  for (int64_t d : l.input_directions)
    if (d != 0 && d != 1) fail("{}: scan_input_directions holds {}, not 0 or 1", scan.describe(), d);
  for (int64_t d : l.output_directions)
    if (d != 0 && d != 1) fail("{}: scan_output_directions holds {}, not 0 or 1", scan.describe(), d);
  return l;
}

}  // namespace kiln::ir
