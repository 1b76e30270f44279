#include "ir/interpreter.h"

#include <unordered_map>

#include "ir/op_registry.h"

namespace kiln::ir {

void check_input(const Value& declared, const Tensor& t, std::map<std::string, int64_t>& bindings) {
  if (t.dtype() != declared.dtype())
    fail("input '{}': dtype {} does not match the model's {}", declared.name(),
         dtype_name(t.dtype()), dtype_name(declared.dtype()));
  const Shape& want = declared.shape();
  bool ok = t.rank() == static_cast<int64_t>(want.rank());
  for (size_t i = 0; ok && i < want.rank(); ++i) {
    const Dim& d = want[i];
    int64_t got = t.dims()[i];
    if (d.is_static()) {
      ok = d.value() == got;
    } else if (!d.name().empty()) {
      auto [it, inserted] = bindings.emplace(d.name(), got);
      if (!inserted && it->second != got)
        fail("input '{}': dim {} ({}) is {} but another input set it to {}", declared.name(), i,
             d.name(), got, it->second);
    }
  }
  if (!ok)
    fail("input '{}': shape {} does not match the model's {}", declared.name(),
         dims_str(t.dims()), want.str());
}

namespace {

// Runs the nodes of `graph` over `env` (its inputs already bound) and returns its outputs.
std::vector<Tensor> run_nodes(const Graph& graph, std::unordered_map<const Value*, Tensor> env,
                              const ValueObserver& observe) {
  // Remaining reads per value, so intermediates are freed after their last use.
  std::unordered_map<const Value*, size_t> reads;
  for (const auto& n : graph.nodes())
    for (const Value* v : n->inputs())
      if (v) ++reads[v];

  auto lookup = [&](const Value* v) -> const Tensor* {
    if (v->is_constant()) return &v->constant();
    auto it = env.find(v);
    return it == env.end() ? nullptr : &it->second;
  };

  for (const auto& n : graph.nodes()) {
    std::vector<const Tensor*> args;
    for (const Value* v : n->inputs()) {
      if (!v) {
        args.push_back(nullptr);
        continue;
      }
      const Tensor* t = lookup(v);
      if (!t) fail("{}: input '{}' has no value", n->describe(), v->name());
      args.push_back(t);
    }
    std::vector<Tensor> results = eval_node(*n, args);
    for (size_t i = 0; i < results.size(); ++i) {
      if (observe) observe(*n->output(i), results[i]);
      env[n->output(i)] = std::move(results[i]);
    }
    for (const Value* v : n->inputs())
      if (v && --reads[v] == 0 && !graph.is_graph_output(v) && !v->is_constant()) env.erase(v);
  }

  std::vector<Tensor> outputs;
  for (const Value* out : graph.outputs()) {
    const Tensor* t = lookup(out);
    if (!t) fail("graph output '{}' was not computed", out->name());
    outputs.push_back(*t);
  }
  return outputs;
}

}  // namespace

std::vector<Tensor> interpret(const Graph& graph, const std::map<std::string, Tensor>& inputs) {
  return interpret(graph, inputs, nullptr);
}

std::vector<Tensor> interpret(const Graph& graph, const std::map<std::string, Tensor>& inputs,
                              const ValueObserver& observe) {
  std::unordered_map<const Value*, Tensor> env;
  std::map<std::string, int64_t> bindings;
  for (const auto& [name, t] : inputs) {
    bool known = false;
    for (const Value* in : graph.inputs()) known |= in->name() == name;
    if (!known) fail("unknown input '{}'", name);
  }
  for (const Value* in : graph.inputs()) {
    auto it = inputs.find(in->name());
    if (it == inputs.end()) fail("missing input '{}'", in->name());
    check_input(*in, it->second, bindings);
    env[in] = it->second;
    if (observe) observe(*in, it->second);
  }

  return run_nodes(graph, std::move(env), observe);
}

std::vector<Tensor> interpret_body(const Graph& body, std::vector<Tensor> inputs) {
  if (inputs.size() != body.inputs().size())
    fail("body '{}' takes {} inputs, got {}", body.name(), body.inputs().size(), inputs.size());
  std::unordered_map<const Value*, Tensor> env;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value* in = body.inputs()[i];
    if (in->is_constant()) continue;
    if (in->has_type() && inputs[i].dtype() != in->dtype())
      fail("body '{}': input '{}' is {}, the body expects {}", body.name(), in->name(),
           dtype_name(inputs[i].dtype()), dtype_name(in->dtype()));
    env[in] = std::move(inputs[i]);
  }
  return run_nodes(body, std::move(env), nullptr);
}

}  // namespace kiln::ir
