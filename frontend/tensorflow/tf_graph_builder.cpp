#include "frontend/tensorflow/tf_graph_builder.h"

#include <fmt/format.h>

#include "ir/error.h"

namespace kiln::frontend::tensorflow {

namespace {

constexpr int kMaxCallDepth = 64;

// Ops that pass their input through unchanged at inference.
bool is_pass_through(const std::string& op) {
  return op == "Identity" || op == "Snapshot" || op == "StopGradient" || op == "PreventGradient" ||
         op == "EnsureShape" || op == "CheckNumerics" || op == "CheckNumericsV2";
}

// The output arguments of the multi-output ops kiln lowers, in order (function bodies name an
// output "node:arg:k"); ops with one output argument are absent.
const std::map<std::string, std::vector<std::string>>& output_args() {
  static const std::map<std::string, std::vector<std::string>> args = {
      {"FusedBatchNorm", {"y", "batch_mean", "batch_variance", "reserve_space_1", "reserve_space_2"}},
      {"FusedBatchNormV2", {"y", "batch_mean", "batch_variance", "reserve_space_1", "reserve_space_2"}},
      {"FusedBatchNormV3", {"y", "batch_mean", "batch_variance", "reserve_space_1", "reserve_space_2", "reserve_space_3"}},
      {"TopKV2", {"values", "indices"}},
      {"Unique", {"y", "idx"}},
  };
  return args;
}

}  // namespace

std::string ir_name(const std::string& s) {
  std::string out;
  for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '/' || c == '.' ? c : '_';
  return out.size() > 200 ? out.substr(0, 200) : out;
}

// One node list being imported: the outer graph, or one call of a function.
struct GraphBuilder::Body {
  std::string where;   // "" for the outer graph, else the function's name
  std::string prefix;  // of IR names
  bool function_style = false;
  int depth = 0;
  std::vector<const kiln::tf::NodeDef*> nodes;
  std::map<std::string, size_t> index;   // node name -> position
  std::map<std::string, TfValue> args;   // a function's arguments by name
  std::map<std::string, TfValue> feeds;  // the outer graph's Placeholders by name
  std::vector<std::vector<TfValue>> outputs;
};

GraphBuilder::GraphBuilder(ir::Graph& graph, std::string file, const ImportLimits& limits,
                           const kiln::tf::FunctionDefLibrary& library, VariableSource* variables)
    : graph_(graph), file_(std::move(file)), limits_(limits), variables_(variables), lowering_(graph, limits, file_) {
  for (const auto& f : library.function()) functions_[f.signature().name()] = &f;
}

GraphBuilder::GraphBuilder(const GraphBuilder& parent, ir::Graph& graph)
    : graph_(graph),
      file_(parent.file_),
      limits_(parent.limits_),
      functions_(parent.functions_),
      variables_(parent.variables_),
      lowering_(graph, parent.limits_, parent.file_) {}

void GraphBuilder::fail_node(const Body& body, const kiln::tf::NodeDef& node, const std::string& problem) const {
  fail("{}{}node '{}' ({}): {}", file_, body.where.empty() ? ": " : fmt::format(": function '{}', ", body.where), node.name(),
       node.op(), problem);
}

size_t GraphBuilder::output_offset(const kiln::tf::NodeDef& node, const std::string& arg) const {
  std::vector<std::string> names;
  if (auto f = functions_.find(node.op()); f != functions_.end()) {
    for (const auto& a : f->second->signature().output_arg()) names.push_back(a.name());
  } else if (auto it = output_args().find(node.op()); it != output_args().end()) {
    names = it->second;
  } else {
    return 0;
  }
  for (size_t k = 0; k < names.size(); ++k)
    if (names[k] == arg) return k;
  fail("{}: node '{}' ({}) has no output '{}'", file_, node.name(), node.op(), arg);
}

GraphBuilder::Ref GraphBuilder::parse_ref(const Body& body, const std::string& text, const kiln::tf::NodeDef* user) const {
  const auto bad = [&](const std::string& why) -> Ref {
    if (user) fail_node(body, *user, fmt::format("input '{}' {}", text, why));
    fail("{}{}: output '{}' {}", file_, body.where.empty() ? "" : fmt::format(": function '{}'", body.where), text, why);
  };
  const size_t colon = text.find(':');
  const std::string name = text.substr(0, colon);
  if (body.function_style && colon == std::string::npos) {
    if (!body.args.count(name)) return bad("names no argument of the function");
    return Ref{true, name, 0, 0};
  }
  auto it = body.index.find(name);
  if (it == body.index.end()) return bad("names no node");
  Ref r{false, "", it->second, 0};
  std::string rest = colon == std::string::npos ? "" : text.substr(colon + 1);
  if (body.function_style) {  // node:arg:k
    const size_t second = rest.find(':');
    const std::string arg = rest.substr(0, second);
    r.output = output_offset(*body.nodes[r.node], arg);
    rest = second == std::string::npos ? "0" : rest.substr(second + 1);
  }
  if (!rest.empty()) {
    size_t k = 0;
    for (char c : rest) {
      if (c < '0' || c > '9' || k > 100000) return bad("has a bad output index");
      k = k * 10 + static_cast<size_t>(c - '0');
    }
    r.output += k;
  }
  return r;
}

std::vector<TfValue> GraphBuilder::import_graph(const kiln::tf::GraphDef& g, const std::map<std::string, TfValue>& feeds,
                                                const std::vector<std::string>& outputs) {
  Body body;
  body.feeds = feeds;
  for (const auto& n : g.node()) {
    if (!body.index.emplace(n.name(), body.nodes.size()).second) fail("{}: two nodes are named '{}'", file_, n.name());
    body.nodes.push_back(&n);
  }
  return run(body, outputs);
}

std::vector<TfValue> GraphBuilder::run(Body& body, const std::vector<std::string>& outputs) {
  body.outputs.assign(body.nodes.size(), {});
  std::vector<Ref> wanted;
  for (const std::string& o : outputs) wanted.push_back(parse_ref(body, o, nullptr));
  // Depth-first from the outputs over data inputs (control inputs order side effects, which
  // inference has none of), lowering each node after its inputs. State: 0 new, 1 on the
  // current path, 2 lowered.
  std::vector<char> state(body.nodes.size(), 0);
  std::vector<std::pair<size_t, bool>> stack;
  for (const Ref& r : wanted)
    if (!r.is_arg) stack.emplace_back(r.node, false);
  while (!stack.empty()) {
    auto [i, expanded] = stack.back();
    const kiln::tf::NodeDef& node = *body.nodes[i];
    if (state[i] == 2) {
      stack.pop_back();
      continue;
    }
    if (!expanded) {
      state[i] = 1;
      stack.back().second = true;
      for (const std::string& in : node.input()) {
        if (in.starts_with("^")) continue;
        Ref r = parse_ref(body, in, &node);
        if (r.is_arg || state[r.node] == 2) continue;
        if (state[r.node] == 1) fail_node(body, node, fmt::format("input '{}' depends on the node itself (a cycle)", in));
        stack.emplace_back(r.node, false);
      }
      continue;
    }
    std::vector<TfValue> in;
    for (const std::string& text : node.input()) {
      if (text.starts_with("^")) continue;
      Ref r = parse_ref(body, text, &node);
      if (r.is_arg) {
        in.push_back(body.args.at(r.arg));
        continue;
      }
      const auto& produced = body.outputs[r.node];
      if (r.output >= produced.size())
        fail_node(body, node, fmt::format("input '{}': node '{}' has {} outputs", text, body.nodes[r.node]->name(), produced.size()));
      in.push_back(produced[r.output]);
    }
    body.outputs[i] = lower(body, node, in);
    state[i] = 2;
    stack.pop_back();
  }
  std::vector<TfValue> result;
  for (size_t k = 0; k < wanted.size(); ++k) {
    const Ref& r = wanted[k];
    if (r.is_arg) {
      result.push_back(body.args.at(r.arg));
      continue;
    }
    const auto& produced = body.outputs[r.node];
    if (r.output >= produced.size())
      fail("{}: output '{}': node '{}' has {} outputs", file_, outputs[k], body.nodes[r.node]->name(), produced.size());
    result.push_back(produced[r.output]);
  }
  return result;
}

std::vector<TfValue> GraphBuilder::lower(Body& body, const kiln::tf::NodeDef& node, const std::vector<TfValue>& in) {
  const std::string& op = node.op();
  if (op == "Placeholder" || op == "PlaceholderWithDefault") {
    auto it = body.feeds.find(node.name());
    if (it != body.feeds.end()) return {it->second};
    if (op == "PlaceholderWithDefault" && !in.empty()) return {in[0]};
    fail_node(body, node, "the Placeholder is not one of the model's inputs (name it with --input-node)");
  }
  if (op == "NoOp") return {};
  if (is_pass_through(op)) {
    if (in.empty()) fail_node(body, node, "no input");
    return {in[0]};
  }
  if (op == "IdentityN") return in;
  if (op == "VarHandleOp" || op == "VariableV2" || op == "Variable") {
    const auto& attrs = node.attr();
    auto shared = attrs.find("shared_name");
    TfValue v;
    v.handle = shared != attrs.end() && !shared->second.s().empty() ? shared->second.s() : node.name();
    return {v};
  }
  if (op == "PartitionedCall" || op == "StatefulPartitionedCall") {
    auto f = node.attr().find("f");
    if (f == node.attr().end() || f->second.value_case() != kiln::tf::AttrValue::kFunc)
      fail_node(body, node, "no function attribute 'f'");
    return call(body, node, f->second.func().name(), in);
  }
  if (functions_.count(op)) return call(body, node, op, in);
  if (op == "If" || op == "StatelessIf") return lower_if(body, node, in);
  if (op == "While" || op == "StatelessWhile") return lower_while(body, node, in);
  if (op.starts_with("TensorList")) return lower_list(node, body.where, ir_name(body.prefix + node.name()), in);

  // The variables: a read gives the weights.
  if (op == "ReadVariableOp" || op == "ResourceGather") {
    if (in.empty() || !in[0].is_resource()) fail_node(body, node, "expects a variable handle");
    if (in[0].tensor) {  // read before an If or While, passed in
      if (op == "ReadVariableOp") return {TfValue{in[0].tensor}};
    } else if (in[0].variable < 0 || !variables_)
      fail_node(body, node, fmt::format("reads the variable '{}', which no saved object binds (a TF1 graph? freeze it first)", in[0].handle));
    ir::Value* w = in[0].tensor ? in[0].tensor : variables_->value(in[0].variable, graph_);
    if (op == "ReadVariableOp") return {TfValue{w}};
    std::vector<ir::Value*> args = {w, in.size() > 1 ? in[1].tensor : nullptr};
    if (!args[1]) fail_node(body, node, "expects indices");
    lowering_.begin(node, body.where, ir_name(body.prefix + node.name()));
    return {TfValue{lowering_.node("Gather", args, {{"axis", int64_t{0}}})}};
  }

  if (op == "Const") {
    auto value = node.attr().find("value");
    if (value == node.attr().end() || value->second.value_case() != kiln::tf::AttrValue::kTensor)
      fail_node(body, node, "no tensor attribute 'value'");
    ir::Tensor t = tensor_from_proto(value->second.tensor(), limits_,
                                     fmt::format("{}: {}node '{}'", file_, body.where.empty() ? "" : fmt::format("function '{}', ", body.where), node.name()));
    return {TfValue{graph_.add_constant(ir_name(body.prefix + node.name()), std::move(t))}};
  }

  auto it = lowering_table().find(op);
  if (it == lowering_table().end()) fail_node(body, node, "unsupported op");
  std::vector<ir::Value*> tensors;
  for (const TfValue& v : in) {
    if (v.is_list()) fail_node(body, node, "an input is a TensorList, not a tensor");
    if (!v.tensor) fail_node(body, node, fmt::format("an input is the resource '{}', not a tensor", v.handle));
    tensors.push_back(v.tensor);
  }
  lowering_.begin(node, body.where, ir_name(body.prefix + node.name()));
  std::vector<TfValue> out;
  for (ir::Value* v : it->second(lowering_, tensors)) out.push_back(TfValue{v});
  return out;
}

std::vector<TfValue> GraphBuilder::call(Body& caller, const kiln::tf::NodeDef& node, const std::string& function,
                                        std::vector<TfValue> args) {
  auto it = functions_.find(function);
  if (it == functions_.end()) fail_node(caller, node, fmt::format("calls '{}', which the library does not define", function));
  if (caller.depth >= kMaxCallDepth) fail_node(caller, node, fmt::format("calls nest deeper than {}", kMaxCallDepth));
  const kiln::tf::FunctionDef& f = *it->second;
  const auto& sig = f.signature();
  if (static_cast<size_t>(sig.input_arg_size()) != args.size())
    fail_node(caller, node, fmt::format("passes {} arguments to '{}', which takes {}", args.size(), function, sig.input_arg_size()));
  // The variables the saved function captures fill its trailing arguments, whatever handle
  // the caller passed (the outer graph's VarHandleOps carry no checkpoint key).
  if (variables_) {
    std::vector<int> bound = variables_->bound_variables(function);
    if (bound.size() > args.size())
      fail_node(caller, node, fmt::format("'{}' captures {} objects but takes {} arguments", function, bound.size(), args.size()));
    for (size_t k = 0; k < bound.size(); ++k) {
      TfValue& a = args[args.size() - bound.size() + k];
      if (a.is_resource() && !a.tensor) {
        a.variable = bound[k];
        a.handle = variables_->name(bound[k]);
      }
    }
  }
  Body body;
  body.where = function;
  body.function_style = true;
  body.depth = caller.depth + 1;
  body.prefix = caller.depth == 0 && caller.where.empty() ? "" : caller.prefix + node.name() + "/";
  for (int k = 0; k < sig.input_arg_size(); ++k) body.args[sig.input_arg(k).name()] = args[static_cast<size_t>(k)];
  for (const auto& n : f.node_def()) {
    if (body.args.count(n.name()) || !body.index.emplace(n.name(), body.nodes.size()).second)
      fail("{}: function '{}': two nodes or arguments are named '{}'", file_, function, n.name());
    body.nodes.push_back(&n);
  }
  std::vector<std::string> outputs;
  for (const auto& a : sig.output_arg()) {
    auto ret = f.ret().find(a.name());
    if (ret == f.ret().end()) fail("{}: function '{}' returns nothing for its output '{}'", file_, function, a.name());
    outputs.push_back(ret->second);
  }
  return run(body, outputs);
}

}  // namespace kiln::frontend::tensorflow

namespace kiln::frontend::tensorflow {

std::string GraphBuilder::function_attr(const Body& body, const kiln::tf::NodeDef& node, const std::string& key) const {
  auto it = node.attr().find(key);
  if (it == node.attr().end() || it->second.value_case() != kiln::tf::AttrValue::kFunc)
    fail_node(body, node, fmt::format("no function attribute '{}'", key));
  return it->second.func().name();
}

ir::Value* GraphBuilder::tensor_of(const Body& body, const kiln::tf::NodeDef& node, const TfValue& v) {
  if (v.is_list() && (!v.tensor || !v.tensor->has_type()))
    fail_node(body, node, "passes a TensorList whose element shape is not known yet (nothing was written to it)");
  if (v.tensor) return v.tensor;
  if (v.variable < 0 || !variables_) fail_node(body, node, fmt::format("passes the variable '{}', which no saved object binds", v.handle));
  return variables_->value(v.variable, graph_);
}

namespace {

// A body input standing for `outer` (same name, type, resource-ness and list-ness).
TfValue body_input(ir::Graph& g, const ir::Value* outer, const TfValue& like) {
  ir::Value* v = g.add_value(outer->name(), outer->dtype(), outer->shape());
  g.inputs().push_back(v);
  TfValue t = like;
  t.tensor = v;
  return t;
}

// A body input for a reserved TensorList whose element shape is not known yet: untyped until
// the body writes an item to it (lower_list types it then).
TfValue untyped_list_input(ir::Graph& g, const std::string& name, const TfValue& like) {
  ir::Value* v = g.add_value(name);
  g.inputs().push_back(v);
  TfValue t = like;
  t.tensor = v;
  return t;
}

ir::Value* as_bool_scalar(TfLowering& L, ir::Value* v) {
  if (v->dtype() != ir::DType::Bool) v = L.node("Not", {L.node("Equal", {v, L.scalar(0, v->dtype())})});
  if (v->has_type() && v->shape().rank() != 0) v = L.node("Reshape", {v, L.i64s({})});
  return v;
}

}  // namespace

// If / StatelessIf (cond, args...): the IR's If, each branch a graph whose inputs take the
// args (captured); a variable is read outside and enters as its weights.
std::vector<TfValue> GraphBuilder::lower_if(Body& body, const kiln::tf::NodeDef& node, const std::vector<TfValue>& in) {
  if (in.empty() || !in[0].tensor) fail_node(body, node, "expects a condition tensor");
  std::vector<ir::Value*> captured;
  for (size_t k = 1; k < in.size(); ++k) captured.push_back(tensor_of(body, node, in[k]));
  ir::AttributeMap attrs = {{"num_captured", static_cast<int64_t>(captured.size())}};
  size_t outputs = 0;
  for (const char* branch : {"then_branch", "else_branch"}) {
    auto g = std::make_shared<ir::Graph>();
    g->set_name(branch);
    std::vector<TfValue> args;
    for (size_t k = 0; k < captured.size(); ++k) args.push_back(body_input(*g, captured[k], in[k + 1]));
    GraphBuilder child(*this, *g);
    Body scope;
    scope.where = body.where;
    scope.prefix = body.prefix + node.name() + "/";
    scope.depth = body.depth + 1;
    for (const TfValue& v : child.call(scope, node, function_attr(body, node, branch), args)) {
      if (!v.tensor || v.is_resource()) fail_node(body, node, fmt::format("{} returns a resource", branch));
      g->outputs().push_back(v.tensor);
    }
    if (outputs && outputs != g->outputs().size()) fail_node(body, node, "the branches return different numbers of values");
    outputs = g->outputs().size();
    attrs[branch] = std::move(g);
  }
  lowering_.begin(node, body.where, body.prefix + node.name());
  std::vector<ir::Value*> ins = {as_bool_scalar(lowering_, in[0].tensor)};
  ins.insert(ins.end(), captured.begin(), captured.end());
  std::vector<TfValue> out;
  for (ir::Value* v : lowering_.nodes("If", ins, outputs, attrs)) out.push_back(TfValue{v});
  return out;
}

// While / StatelessWhile (args...): the IR's Loop with no trip count. The tensors are carried;
// variables (TF passes them through unchanged) enter as captured weights. The condition is
// computed once before the loop and again at the end of each iteration, in the body.
std::vector<TfValue> GraphBuilder::lower_while(Body& body, const kiln::tf::NodeDef& node, const std::vector<TfValue>& in) {
  const std::string cond_fn = function_attr(body, node, "cond"), body_fn = function_attr(body, node, "body");
  std::vector<size_t> carried, resources;
  std::vector<ir::Value*> captured;
  for (size_t k = 0; k < in.size(); ++k) {
    if (in[k].is_resource()) {
      resources.push_back(k);
      captured.push_back(tensor_of(body, node, in[k]));
    } else {
      if (!in[k].tensor && !in[k].reserved) fail_node(body, node, "an argument has no value");
      carried.push_back(k);
    }
  }
  Body scope;
  scope.where = body.where;
  scope.prefix = body.prefix + node.name() + "/";
  scope.depth = body.depth + 1;
  // The condition before the first iteration, in this graph.
  std::vector<TfValue> first_args = in;
  for (size_t r = 0; r < resources.size(); ++r) first_args[resources[r]].tensor = captured[r];
  std::vector<TfValue> first = call(scope, node, cond_fn, first_args);
  if (first.size() != 1 || !first[0].tensor) fail_node(body, node, "the condition must return one tensor");
  lowering_.begin(node, body.where, body.prefix + node.name() + "/cond0");
  ir::Value* cond0 = as_bool_scalar(lowering_, first[0].tensor);

  auto g = std::make_shared<ir::Graph>();
  g->set_name("body");
  ir::Value* iteration = g->add_value("iteration", ir::DType::I64, ir::Shape::of({}));
  ir::Value* cond_in = g->add_value("cond_in", ir::DType::Bool, ir::Shape::of({}));
  g->inputs() = {iteration, cond_in};
  std::vector<TfValue> args(in.size());
  for (size_t k : carried)
    args[k] = in[k].tensor ? body_input(*g, in[k].tensor, in[k]) : untyped_list_input(*g, fmt::format("list_{}", k), in[k]);
  for (size_t r = 0; r < resources.size(); ++r) args[resources[r]] = body_input(*g, captured[r], in[resources[r]]);
  GraphBuilder child(*this, *g);
  std::vector<TfValue> next = child.call(scope, node, body_fn, args);
  if (next.size() != in.size()) fail_node(body, node, fmt::format("the body returns {} values for {} arguments", next.size(), in.size()));
  for (size_t r = 0; r < resources.size(); ++r) next[resources[r]] = args[resources[r]];  // unchanged
  std::vector<TfValue> again = child.call(scope, node, cond_fn, next);
  if (again.size() != 1 || !again[0].tensor) fail_node(body, node, "the condition must return one tensor");
  child.lowering_.begin(node, body.where, body.prefix + node.name() + "/cond");
  g->outputs().push_back(as_bool_scalar(child.lowering_, again[0].tensor));
  // A reserved list carried in starts as zeros of the element shape the body's writes gave it.
  std::vector<ir::Value*> initial;
  for (size_t k : carried) {
    if (in[k].tensor) {
      initial.push_back(in[k].tensor);
      continue;
    }
    const TfReservedList& r = *in[k].reserved;
    if (!r.resolved)
      fail_node(body, node, fmt::format("argument {} is a TensorList the loop never writes to, of unknown element shape", k));
    std::vector<ir::Dim> dims = {ir::Dim(r.size)};
    dims.insert(dims.end(), r.resolved->begin(), r.resolved->end());
    lowering_.begin(node, body.where, body.prefix + node.name() + fmt::format("/list_{}", k));
    initial.push_back(zeros(r.dtype, dims));
  }
  for (size_t k : carried) {
    if (!next[k].tensor || next[k].is_resource()) fail_node(body, node, "the body returns a resource for a tensor");
    if (next[k].is_list() != in[k].is_list()) fail_node(body, node, fmt::format("the body returns argument {} as another kind of value", k));
    if (!next[k].tensor->has_type())
      fail_node(body, node, fmt::format("the body passes on the TensorList of argument {} without writing to it, and its element shape is not known", k));
    g->outputs().push_back(next[k].tensor);
  }

  std::vector<ir::Value*> ins = {nullptr, cond0};
  ins.insert(ins.end(), initial.begin(), initial.end());
  ins.insert(ins.end(), captured.begin(), captured.end());
  lowering_.begin(node, body.where, body.prefix + node.name());
  std::vector<ir::Value*> loop =
      lowering_.nodes("Loop", ins, carried.size(), {{"body", std::move(g)}, {"num_captured", static_cast<int64_t>(captured.size())}});
  std::vector<TfValue> out = in;
  for (size_t j = 0; j < carried.size(); ++j) {
    out[carried[j]] = TfValue{loop[j]};
    out[carried[j]].list = in[carried[j]].is_list();
  }
  return out;
}

}  // namespace kiln::frontend::tensorflow
