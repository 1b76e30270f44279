// The evaluator's values and calls: pickled objects as TValues, names, attributes, calls to
// methods, functions, aten ops, prim ops and Python builtins.
#include "frontend/torchscript/ts_lowering.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "frontend/torchscript/aten_internal.h"
#include "ir/error.h"
#include "ir/op_registry.h"

namespace kiln::frontend::torchscript {

Lowering::Lowering(const Program& program, ir::Graph& graph, const ProgramLimits& limits,
                   const PickleLimits& pickle_limits, std::string archive)
    : program_(program), limits_(limits), pickle_limits_(pickle_limits), archive_(std::move(archive)) {
  graph_ = &graph;
}

std::string Lowering::where() const {
  if (!loc_) return archive_;
  return fmt::format("{}: {}:{}:{}", archive_, loc_->file, loc_->line, loc_->column);
}

void Lowering::step() {
  if (++steps_ > limits_.max_steps)
    fail_op(fmt::format("the code ran for more than {} steps at compile time (a loop that never ends?)",
                        limits_.max_steps));
}

// ---------------------------------------------------------------- pickled values

std::shared_ptr<ObjectInstance> Lowering::instance_of(const PyRef& o, const std::string& path) {
  auto it = converted_.find(o.get());
  if (it != converted_.end()) return it->second.object;
  auto inst = std::make_shared<ObjectInstance>();
  inst->class_name = o->s;
  inst->cls = program_.find_class(o->s);
  inst->path = path;
  inst->state = o->state;
  TValue v;
  v.kind = TKind::Object;
  v.object = inst;
  converted_[o.get()] = v;
  return inst;
}

TValue Lowering::from_py(const PyRef& o, const std::string& path) {
  if (!o) return TValue::none();
  switch (o->kind) {
    case PyKind::None: return TValue::none();
    case PyKind::Bool: return TValue::boolean(o->b);
    case PyKind::Int: return TValue::integer(o->i);
    case PyKind::Float: return TValue::real(o->f);
    case PyKind::String: return TValue::string(o->s);
    case PyKind::Bytes: return TValue::string(o->s);
    case PyKind::Device: return TValue::device(o->s);
    case PyKind::Global: return TValue::string(o->s);
    case PyKind::Tuple:
    case PyKind::List: {
      std::vector<TValue> items;
      for (size_t k = 0; k < o->items.size(); ++k) items.push_back(from_py(o->items[k], path + "." + std::to_string(k)));
      return o->kind == PyKind::List ? TValue::list(std::move(items)) : TValue::tuple(std::move(items));
    }
    case PyKind::Dict: {
      TValue d;
      d.kind = TKind::Dict;
      d.dict = std::make_shared<std::vector<std::pair<TValue, TValue>>>();
      for (const auto& [k, v] : o->dict) {
        TValue key = from_py(k, path);
        d.dict->push_back({key, from_py(v, key.kind == TKind::String ? path + "." + key.s : path)});
      }
      return d;
    }
    case PyKind::Tensor: {
      auto it = converted_.find(o.get());
      if (it != converted_.end()) return it->second;
      std::string name = path.empty() ? "weight" : path;
      TValue v = TValue::of(graph_->add_constant(name, o->tensor));
      converted_[o.get()] = v;
      return v;
    }
    case PyKind::Object: {
      TValue v;
      v.kind = TKind::Object;
      v.object = instance_of(o, path);
      return v;
    }
  }
  return TValue::none();
}

TValue Lowering::get_attr(const std::shared_ptr<ObjectInstance>& obj, const std::string& name) {
  auto it = obj->attrs.find(name);
  if (it != obj->attrs.end()) return it->second;
  // Saved models are compiled for inference: modules run as in eval(), whatever mode they were saved in.
  if (name == "training") return obj->attrs[name] = TValue::boolean(false);
  if (obj->state) {
    if (PyRef v = obj->state->attr(name)) {
      std::string path = obj->path.empty() ? name : obj->path + "." + name;
      return obj->attrs[name] = from_py(v, path);
    }
  }
  if (obj->cls) {
    for (const StmtPtr& s : obj->cls->body) {
      if (s->kind == StmtKind::Def && s->def->name == name) {
        TValue f;
        f.kind = TKind::Function;
        f.function = std::make_shared<FunctionRef>();
        f.function->kind = FunctionRef::Kind::Method;
        f.function->def = s->def.get();
        f.function->self = obj;
        return f;
      }
    }
    // class-level constants (`__constants__` members are assigned in the class body)
    for (const StmtPtr& s : obj->cls->body) {
      if ((s->kind == StmtKind::Assign || s->kind == StmtKind::AnnAssign) && s->value && !s->targets.empty() &&
          s->targets[0]->kind == ExprKind::Name && s->targets[0]->name == name)
        return eval(*s->value);
    }
  }
  fail_op(fmt::format("object of class {} has no attribute '{}'", obj->class_name, name));
}

// ---------------------------------------------------------------- the entry point

void Lowering::lower_forward(const PyRef& root, const PyRef& constants, const std::vector<InputSpec>& inputs) {
  if (!root || root->kind != PyKind::Object)
    fail("{}: data.pkl does not hold a module object (found {})", archive_, root ? py_kind_name(*root) : "nothing");
  constants_ = constants ? from_py(constants, "CONSTANTS") : TValue::tuple({});
  auto self = instance_of(root, "");
  if (!self->cls) fail("{}: the archive has no code for the root module's class {}", archive_, self->class_name);
  const FunctionDef* forward = nullptr;
  for (const StmtPtr& s : self->cls->body)
    if (s->kind == StmtKind::Def && s->def->name == "forward") forward = s->def.get();
  if (!forward) fail("{}: class {} has no forward method", archive_, self->class_name);
  // Graph inputs: forward's parameters after self, shaped by `inputs` (by name, else by position).
  std::vector<TValue> args;
  size_t position = 0;
  std::vector<std::string> used;
  for (size_t k = 1; k < forward->params.size(); ++k) {
    const Param& p = forward->params[k];
    const InputSpec* spec = nullptr;
    for (const InputSpec& s : inputs)
      if (s.name == p.name) spec = &s;
    if (!spec) {
      size_t seen = 0;
      for (const InputSpec& s : inputs)
        if (s.name.empty() && seen++ == position) spec = &s;
    }
    if (!spec) {
      if (p.default_value) break;  // optional trailing parameters keep their defaults
      fail("{}: forward's input '{}' needs a shape: give --input-shape {}=D0,D1,... (TorchScript archives do not "
           "record input shapes)", archive_, p.name, p.name);
    }
    if (spec->name.empty()) ++position;
    used.push_back(spec->name);
    ir::Value* in = graph_->add_value(p.name, spec->dtype, ir::Shape::of(spec->dims));
    graph_->inputs().push_back(in);
    args.push_back(TValue::of(in));
  }
  for (const InputSpec& s : inputs)
    if (!s.name.empty() && std::find(used.begin(), used.end(), s.name) == used.end())
      fail("{}: --input-shape names '{}', which is not an input of forward", archive_, s.name);
  size_t unnamed = std::count_if(inputs.begin(), inputs.end(), [](const InputSpec& s) { return s.name.empty(); });
  if (unnamed > position) fail("{}: {} unnamed --input-shape given, forward takes {} inputs", archive_, unnamed, position);

  TValue result = call_function(*forward, self, std::move(args), {}, program_.file_of(self->cls));
  loc_ = nullptr;
  // Outputs: a tensor, or the tensors of a (nested) tuple, list or dict, in order.
  std::vector<ir::Value*> outs;
  std::function<void(const TValue&)> collect = [&](const TValue& v) {
    if (v.is_tensor()) {
      outs.push_back(v.tensor);
    } else if (v.is_sequence()) {
      for (const TValue& x : *v.items) collect(x);
    } else if (v.kind == TKind::Dict) {
      for (const auto& [k, x] : *v.dict) collect(x);
    } else if (v.is_number()) {
      outs.push_back(scalar_tensor(v));
    } else {
      fail("{}: forward returns {}, which is not a tensor", archive_, describe(v));
    }
  };
  collect(result);
  if (outs.empty()) fail("{}: forward returns no tensor", archive_);
  node_prefix_.clear();
  // Outputs are named output_0, output_1 ... in forward's order (TorchScript has no names for
  // them), through an Identity each, which the optimizer removes.
  for (size_t k = 0; k < outs.size(); ++k) {
    ir::Node* n = graph_->add_node("Identity", {outs[k]}, {fmt::format("output_{}", k)}, {}, fmt::format("output_{}", k));
    ir::infer_node(*n);
    graph_->outputs().push_back(n->output(0));
  }
}

// ---------------------------------------------------------------- calls

TValue Lowering::call(const TValue& fn, std::vector<TValue> args, std::vector<std::pair<std::string, TValue>> kwargs) {
  if (fn.kind == TKind::Module) {
    FunctionRef f;
    f.name = fn.s;
    return call_builtin(f, std::move(args), std::move(kwargs));
  }
  if (fn.kind != TKind::Function) fail_op(fmt::format("{} is not callable", describe(fn)));
  const FunctionRef& f = *fn.function;
  switch (f.kind) {
    case FunctionRef::Kind::Method:
      return call_function(*f.def, f.self, std::move(args), std::move(kwargs),
                           f.self && f.self->cls ? program_.file_of(f.self->cls) : "");
    case FunctionRef::Kind::Function: return call_function(*f.def, nullptr, std::move(args), std::move(kwargs), f.name);
    case FunctionRef::Kind::Builtin: return call_builtin(f, std::move(args), std::move(kwargs));
    case FunctionRef::Kind::Class: {  // NamedTuple constructors: a tuple of the fields
      std::vector<TValue> items = args;
      for (auto& [k, v] : kwargs) items.push_back(v);
      return TValue::tuple(std::move(items));
    }
  }
  return TValue::none();
}

TValue Lowering::call_function(const FunctionDef& def, const std::shared_ptr<ObjectInstance>& self,
                               std::vector<TValue> args, std::vector<std::pair<std::string, TValue>> kwargs,
                               const std::string& file) {
  if (static_cast<int>(frames_.size()) >= limits_.max_call_depth)
    fail_op(fmt::format("calls nest deeper than {} (recursion?)", limits_.max_call_depth));
  Frame f;
  f.file = file;
  size_t first = 0;
  if (self) {
    TValue s;
    s.kind = TKind::Object;
    s.object = self;
    if (def.params.empty()) fail_op(fmt::format("method {} takes no self", def.name));
    f.locals[def.params[0].name] = s;
    first = 1;
  }
  if (args.size() > def.params.size() - first)
    fail_op(fmt::format("{}() takes {} arguments, {} given", def.name, def.params.size() - first, args.size()));
  std::vector<bool> set(def.params.size(), false);
  for (size_t k = 0; k < args.size(); ++k) {
    f.locals[def.params[first + k].name] = args[k];
    set[first + k] = true;
  }
  for (auto& [name, v] : kwargs) {
    size_t k = first;
    while (k < def.params.size() && def.params[k].name != name) ++k;
    if (k == def.params.size()) fail_op(fmt::format("{}() has no argument '{}'", def.name, name));
    f.locals[name] = v;
    set[k] = true;
  }
  for (size_t k = first; k < def.params.size(); ++k) {
    if (set[k]) continue;
    if (!def.params[k].default_value) fail_op(fmt::format("{}() is missing argument '{}'", def.name, def.params[k].name));
    f.locals[def.params[k].name] = eval(*def.params[k].default_value);
  }
  std::string saved_prefix = node_prefix_;
  if (self && !self->path.empty()) node_prefix_ = self->path;
  const SourceLoc* saved_loc = loc_;
  frames_.push_back(std::move(f));
  TValue result;
  try {
    Flow flow = exec(def.body);
    if (flow == Flow::Return) result = frames_.back().locals["@return"];
  } catch (...) {
    frames_.pop_back();
    throw;
  }
  frames_.pop_back();
  node_prefix_ = saved_prefix;
  loc_ = saved_loc;
  return result;
}

TValue Lowering::call_aten(const std::string& name, std::vector<TValue> args,
                           std::vector<std::pair<std::string, TValue>> kwargs) {
  if (name == "format" && args.size() > 1) {  // format(fmt, *args)
    std::vector<TValue> rest(args.begin() + 1, args.end());
    args = {args[0], TValue::list(std::move(rest))};
  }
  AtenCall c{name, std::move(args), std::move(kwargs)};
  ir::Value* mutated = nullptr;
  if (name.size() > 1 && name.back() == '_' && name.rfind("__", 0) != 0 && !c.positional.empty() &&
      c.positional[0].is_tensor())
    mutated = c.positional[0].tensor;
  std::optional<TValue> r = lower_aten(*this, c);
  if (!r) fail_op(fmt::format("unsupported aten op 'aten::{}'", name));
  // In-place ops (relu_, add_): every name bound to the old tensor now sees the new one.
  if (mutated && r->is_tensor() && r->tensor != mutated) rebind_tensor(mutated, r->tensor);
  return *r;
}

void Lowering::rebind_tensor(ir::Value* from, ir::Value* to) {
  for (Frame& f : frames_)
    for (auto& [name, v] : f.locals)
      if (v.is_tensor() && v.tensor == from) v.tensor = to;
}

TValue Lowering::call_builtin(const FunctionRef& f, std::vector<TValue> args,
                              std::vector<std::pair<std::string, TValue>> kwargs) {
  if (f.bound_self) args.insert(args.begin(), *f.bound_self);
  const std::string& n = f.name;
  if (n.rfind("torch.", 0) == 0) {
    std::string op = n.substr(6);
    if (op.find('.') == std::string::npos) return call_aten(op, std::move(args), std::move(kwargs));
    if (op == "jit._unwrap_optional" || op == "jit._unwrap_optional") return args.at(0);
  }
  if (n.rfind("ops.aten.", 0) == 0) return call_aten(n.substr(9), std::move(args), std::move(kwargs));
  if (n.rfind("ops.prim.", 0) == 0) return call_prim(n.substr(9), args);
  if (n.rfind("math.", 0) == 0) {
    std::string fn = n.substr(5);
    if (args.size() == 1)
      if (auto r = aten::scalar_unary(fn, args[0])) return *r;
    return call_aten(fn, std::move(args), std::move(kwargs));
  }
  bool handled = false;
  TValue r = call_python_builtin(n, args, kwargs, handled);
  if (handled) return r;
  fail_op(fmt::format("unsupported call '{}'", n));
}

// prim:: ops print as ops.prim.NAME(...)
TValue Lowering::call_prim(const std::string& name, std::vector<TValue>& args) {
  auto arg = [&](size_t i) -> const TValue& {
    if (i >= args.size()) fail_op(fmt::format("ops.prim.{} expects more arguments", name));
    return args[i];
  };
  if (name == "unchecked_cast" || name == "data" || name == "unchecked_unwrap_optional") return arg(0);
  if (name == "RaiseException") {
    std::string msg = args.empty() ? "" : describe(args[0]);
    fail_op(fmt::format("the model raises an exception at compile time: {}", msg));
  }
  if (name == "dtype") {
    if (!arg(0).is_tensor()) fail_op("ops.prim.dtype of a non-tensor");
    return TValue::integer(aten::scalar_type_of(arg(0).tensor->dtype()));
  }
  if (name == "device") return TValue::device("cpu");
  if (name == "layout") return TValue::integer(0);
  if (name == "is_cuda" || name == "is_quantized" || name == "is_mkldnn" || name == "is_sparse" ||
      name == "is_nested" || name == "is_meta" || name == "requires_grad" || name == "is_xpu" || name == "is_mps")
    return TValue::boolean(false);
  if (name == "NumToTensor") return TValue::of(scalar_tensor(arg(0)));
  if (name == "min" || name == "max") return call_aten(name, args, {});
  if (name == "shape") return call_aten("size", {arg(0)}, {});
  if (name == "TupleIndex") return call_aten("__getitem__", args, {});
  if (name == "abs") return call_aten("abs", args, {});
  if (name == "isinstance") fail_op("ops.prim.isinstance is not supported");
  if (name == "Uninitialized") return TValue::none();
  fail_op(fmt::format("unsupported prim op 'prim::{}'", name));
}

TValue Lowering::call_python_builtin(const std::string& n, std::vector<TValue>& args,
                                     std::vector<std::pair<std::string, TValue>>& kwargs, bool& handled) {
  handled = true;
  auto one = [&]() -> const TValue& {
    if (args.size() != 1) fail_op(fmt::format("{}() takes one argument, {} given", n, args.size()));
    return args[0];
  };
  if (n == "int") return call_aten("Int", {one()}, {});
  if (n == "float") return call_aten("Float", {one()}, {});
  if (n == "bool") return call_aten("Bool", {one()}, {});
  if (n == "str") return call_aten("str", {one()}, {});
  if (n == "len") return call_aten("len", {one()}, {});
  if (n == "abs") return call_aten("abs", {one()}, {});
  if (n == "min" || n == "max") return call_aten(n, args, {});
  if (n == "list") return args.empty() ? TValue::list({}) : call_aten("list", {one()}, {});
  if (n == "tuple") return args.empty() ? TValue::tuple({}) : TValue::tuple(*one().items);
  if (n == "range") {
    std::vector<int64_t> v;
    for (size_t k = 0; k < args.size(); ++k) {
      if (args[k].kind != TKind::Int && args[k].kind != TKind::Bool)
        fail_op(fmt::format("range() of {}: a loop whose trip count depends on tensor data is not supported", describe(args[k])));
      v.push_back(args[k].kind == TKind::Int ? args[k].i : args[k].b);
    }
    int64_t lo = v.size() >= 2 ? v[0] : 0, hi = v.size() >= 2 ? v[1] : v.at(0), st = v.size() == 3 ? v[2] : 1;
    if (st == 0) fail_op("range() step is zero");
    std::vector<TValue> items;
    for (int64_t i = lo; st > 0 ? i < hi : i > hi; i += st) {
      if (items.size() >= limits_.max_loop_iterations) fail_op("range() longer than the loop iteration limit");
      items.push_back(TValue::integer(i));
    }
    return TValue::list(std::move(items));
  }
  if (n == "enumerate") {
    std::vector<TValue> items;
    int64_t k = 0;
    for (const TValue& v : *one().items) items.push_back(TValue::tuple({TValue::integer(k++), v}));
    return TValue::list(std::move(items));
  }
  if (n == "zip") {
    std::vector<TValue> items;
    size_t len = SIZE_MAX;
    for (const TValue& a : args) {
      if (!a.is_sequence()) fail_op("zip() of a non-list");
      len = std::min(len, a.items->size());
    }
    for (size_t k = 0; k < len && !args.empty(); ++k) {
      std::vector<TValue> t;
      for (const TValue& a : args) t.push_back((*a.items)[k]);
      items.push_back(TValue::tuple(std::move(t)));
    }
    return TValue::list(std::move(items));
  }
  if (n == "getattr" || n == "hasattr") {
    if (args.size() < 2 || args[0].kind != TKind::Object || args[1].kind != TKind::String)
      fail_op(fmt::format("{}() of {}", n, args.empty() ? "nothing" : describe(args[0])));
    if (n == "hasattr") {
      auto& o = *args[0].object;
      return TValue::boolean(o.attrs.count(args[1].s) || (o.state && o.state->attr(args[1].s)));
    }
    return get_attr(args[0].object, args[1].s);
  }
  if (n == "print") return TValue::none();
  if (n == "annotate" || n == "unchecked_cast") {
    if (args.size() != 2) fail_op(fmt::format("{}() takes a type and a value", n));
    return args[1];
  }
  if (n == "uninitialized") return TValue::none();
  if (n == "torch.device" || n == "device") return TValue::device(args.empty() ? "cpu" : describe(args[0]));
  handled = false;
  return TValue::none();
}

}  // namespace kiln::frontend::torchscript
