#include "frontend/torch_export/pt2_graph.h"

#include <map>
#include <string_view>

#include "frontend/torch_export/pt2_schema.h"
#include "frontend/torchscript/aten_ops.h"
#include "ir/error.h"

namespace kiln::frontend::torch_export {

namespace ts = kiln::frontend::torchscript;
using ts::TKind;
using ts::TValue;

namespace {

constexpr std::string_view kAtenPrefix = "torch.ops.aten.";

// The aten table's view of the graph being built: where() names the node being lowered.
class Pt2Builder final : public ts::AtenBuilder {
 public:
  explicit Pt2Builder(ir::Graph& graph) { graph_ = &graph; }
  void at(const std::string& node, const std::string& target) {
    node_ = node;
    target_ = target;
    node_prefix_ = node;
  }
  std::string where() const override { return fmt::format("node '{}' ({})", node_, target_); }

 private:
  std::string node_;
  std::string target_;
};

class GraphImporter {
 public:
  GraphImporter(const Pt2Contents& contents, const Pt2ImportOptions& options, Pt2ModelInfo& info)
      : contents_(contents), options_(options), dims_(options.dims), limits_(options.limits), info_(info),
        graph_(std::make_unique<ir::Graph>()), builder_(*graph_) {}

  std::unique_ptr<ir::Graph> run() {
    const JsonValue& root = contents_.program;
    read_versions(root);
    const JsonValue& module = field(root, "graph_module", "program");
    const JsonValue& graph = field(module, "graph", "graph_module");
    const JsonValue& signature = field(module, "signature", "graph_module");
    index_values(graph);
    read_inputs(array_of(field(signature, "input_specs", "signature"), "signature.input_specs"));
    check_dims(root);
    const auto& nodes = array_of(field(graph, "nodes", "graph"), "graph.nodes");
    if (nodes.size() > limits_.max_nodes)
      fail("{} nodes, over the node limit of {} (--max-nodes)", nodes.size(), limits_.max_nodes);
    for (size_t i = 0; i < nodes.size(); ++i) import_node(nodes[i], i);
    read_outputs(array_of(field(signature, "output_specs", "signature"), "signature.output_specs"));
    if (info_.checks_dropped)
      info_.notes.push_back(fmt::format("{} run-time shape assertions dropped: the shapes are fixed at compile time",
                                        info_.checks_dropped));
    return std::move(graph_);
  }

 private:
  void read_versions(const JsonValue& root) {
    if (const JsonValue* v = optional_field(root, "torch_version", "program"); v && v->is_string())
      info_.torch_version = v->string();
    if (const JsonValue* v = optional_field(root, "schema_version", "program")) {
      int64_t major = int_of(field(*v, "major", "schema_version"), "schema_version.major");
      int64_t minor = int_of(field(*v, "minor", "schema_version"), "schema_version.minor");
      info_.schema_version = fmt::format("{}.{}", major, minor);
    }
  }

  void index_values(const JsonValue& graph) {
    if (const JsonValue* tv = optional_field(graph, "tensor_values", "graph"))
      for (const auto& [name, meta] : tv->members()) tensor_values_[name] = &meta;
    for (const char* key : {"sym_int_values", "sym_float_values", "sym_bool_values"})
      if (const JsonValue* sv = optional_field(graph, key, "graph"))
        for (const auto& [name, value] : sv->members()) sym_values_[name] = &value;
  }

  // --dim values against the program's range_constraints ({"s77": {min_val, max_val}}).
  void check_dims(const JsonValue& root) {
    const JsonValue* ranges = optional_field(root, "range_constraints", "program");
    if (!ranges) return;
    for (const auto& [name, value] : dims_) {
      const JsonValue* range = optional_field(*ranges, name, "range_constraints");
      if (!range) continue;
      std::string what = fmt::format("range_constraints.{}", name);
      const JsonValue* lo = optional_field(*range, "min_val", what);
      const JsonValue* hi = optional_field(*range, "max_val", what);
      // Unbounded ends are null, or numbers past int64 (sympy's oo as a huge int).
      bool below = lo && lo->is_integer() && value < lo->integer();
      bool above = hi && hi->is_integer() && value > hi->integer();
      if (below || above)
        fail("--dim {}={}: the program allows {} in [{}, {}]", name, value, name,
             lo && lo->is_integer() ? std::to_string(lo->integer()) : "-inf",
             hi && hi->is_integer() ? std::to_string(hi->integer()) : "inf");
    }
  }

  void check_name(const std::string& name, std::string_view kind) const {
    if (name.size() > limits_.max_name_length)
      fail("{} name '{}...' of {} bytes, over the name length limit of {} (--max-name-length)", kind,
           name.substr(0, 32), name.size(), limits_.max_name_length);
  }

  std::optional<TensorMeta> meta_of(const std::string& name) const {
    auto it = tensor_values_.find(name);
    if (it == tensor_values_.end()) return std::nullopt;
    return tensor_meta_of(*it->second, fmt::format("tensor_values.{}", name), limits_);
  }

  const ir::Tensor* state_tensor(const std::string& fqn, bool constants_first) const {
    const auto* first = constants_first ? &contents_.constants : &contents_.state_dict;
    const auto* second = constants_first ? &contents_.state_dict : &contents_.constants;
    if (auto it = first->find(fqn); it != first->end()) return &it->second;
    if (auto it = second->find(fqn); it != second->end()) return &it->second;
    return nullptr;
  }

  void lift(const std::string& placeholder, const std::string& fqn, bool constants_first, std::string_view kind) {
    check_name(placeholder, "input");
    const ir::Tensor* t = state_tensor(fqn, constants_first);
    if (!t) fail("{} '{}' (input '{}') is not in the archive's weights or constants", kind, fqn, placeholder);
    pending_[placeholder] = {fqn, t};
  }

  void read_inputs(const std::vector<JsonValue>& specs) {
    for (size_t i = 0; i < specs.size(); ++i) {
      std::string what = fmt::format("signature.input_specs[{}]", i);
      auto [kind, spec] = union_of(specs[i], what);
      auto arg_name = [&, &spec = spec] {
        return string_of(field(field(spec, "arg", what), "name", what), what + ".arg.name");
      };
      if (kind == "parameter") {
        lift(arg_name(), string_of(field(spec, "parameter_name", what), what), false, "parameter");
      } else if (kind == "buffer") {
        // Non-persistent buffers are kept with the constants.
        lift(arg_name(), string_of(field(spec, "buffer_name", what), what), false, "buffer");
      } else if (kind == "tensor_constant") {
        lift(arg_name(), string_of(field(spec, "tensor_constant_name", what), what), true, "tensor constant");
      } else if (kind == "constant_input") {
        const std::string& name = string_of(field(spec, "name", what), what + ".name");
        env_[name] = constant_value(field(spec, "value", what), what + ".value");
      } else if (kind == "user_input") {
        user_input(field(spec, "arg", what), what);
      } else {
        fail("{}: inputs of kind '{}' are not supported", what, kind);
      }
    }
  }

  TValue constant_value(const JsonValue& v, const std::string& what) {
    auto [kind, value] = union_of(v, what);
    if (kind == "as_none") return TValue::none();
    if (kind == "as_int") return TValue::integer(int_of(value, what));
    if (kind == "as_float") return TValue::real(float_of(value, what));
    if (kind == "as_bool") return TValue::boolean(bool_of(value, what));
    if (kind == "as_string") return TValue::string(string_of(value, what));
    fail("{}: a constant input of kind '{}' is not supported", what, kind);
  }

  // An input's shape with its symbols bound: --input-shape for this input (by name, else the
  // next unnamed one) binds the symbols it sits on, and --dim values replace the rest. The
  // lowering needs static shapes.
  ir::Shape bind_input_dims(const std::string& name, ir::Shape shape, const std::string& what) {
    const ts::InputSpec* spec = nullptr;
    for (const ts::InputSpec& s : options_.inputs)
      if (s.name == name) spec = &s;
    if (!spec) {
      size_t seen = 0;
      for (const ts::InputSpec& s : options_.inputs)
        if (s.name.empty() && seen++ == unnamed_used_) spec = &s;
      if (spec) ++unnamed_used_;
    }
    if (spec) {
      if (spec->dims.size() != shape.rank())
        fail("{}: --input-shape gives input '{}' {} dims, the program declares {}", what, name, spec->dims.size(), shape.str());
      for (size_t k = 0; k < shape.rank(); ++k) {
        const ir::Dim& d = shape[k];
        if (d.is_static() && d.value() != spec->dims[k])
          fail("{}: --input-shape gives input '{}' dim {} the value {}, the program fixes it at {}", what, name, k,
               spec->dims[k], d.value());
        if (!d.is_static() && !d.name().empty()) {
          auto [it, added] = dims_.emplace(d.name(), spec->dims[k]);
          if (!added && it->second != spec->dims[k])
            fail("{}: --input-shape gives {} the value {}, already bound to {}", what, d.name(), spec->dims[k], it->second);
        }
      }
    }
    std::vector<ir::Dim> dims = shape.dims();
    for (ir::Dim& d : dims) {
      if (d.is_static()) continue;
      auto it = dims_.find(d.name());
      if (it == dims_.end())
        fail("{}: input '{}' has the shape {}: give its symbolic dims values (--dim {}=N or --input-shape {}=...)", what,
             name, shape.str(), d.name().empty() ? "NAME" : d.name(), name);
      d = ir::Dim(it->second);
    }
    return ir::Shape(dims);
  }

  void user_input(const JsonValue& arg, const std::string& what) {
    auto [kind, value] = union_of(arg, what + ".arg");
    if (kind == "as_tensor") {
      const std::string& name = string_of(field(value, "name", what), what + ".arg.as_tensor.name");
      check_name(name, "input");
      auto meta = meta_of(name);
      if (!meta) fail("{}: input '{}' has no entry in tensor_values", what, name);
      ir::Value* v = graph_->add_value(name, meta->dtype, bind_input_dims(name, meta->shape, what));
      graph_->inputs().push_back(v);
      env_[name] = TValue::of(v);
      return;
    }
    // Scalars were specialized by export: nodes carry the value itself.
    if (kind == "as_int" || kind == "as_float" || kind == "as_bool" || kind == "as_string" || kind == "as_none")
      return;
    fail("{}: a user input of kind '{}' is not supported (only tensors and specialized scalars)", what, kind);
  }

  ir::Value* tensor(const std::string& name, const std::string& what) {
    if (auto it = env_.find(name); it != env_.end()) {
      if (it->second.is_tensor()) return it->second.tensor;
      fail("{}: '{}' is {}, not a tensor", what, name, ts::tkind_name(it->second.kind));
    }
    auto it = pending_.find(name);
    if (it == pending_.end()) fail("{}: tensor '{}' is not defined before its use", what, name);
    const auto& [fqn, t] = it->second;
    if (auto meta = meta_of(name)) {
      if (meta->dtype != t->dtype() || (meta->shape.is_static() && meta->shape.values() != t->dims()))
        fail("{}: weight '{}' is {}{} in the archive, the program expects {}{}", what, fqn, ir::dtype_name(t->dtype()),
             ir::dims_str(t->dims()), ir::dtype_name(meta->dtype), meta->shape.str());
    }
    ir::Value* v = graph_->add_constant(fqn, *t);
    env_[name] = TValue::of(v);
    pending_.erase(it);
    return v;
  }

  // A symbolic value's compile-time value: the bound dim when the expression is one symbol
  // that --dim binds, else the program's hint.
  TValue sym_value(const std::string& name, const std::string& what) {
    if (auto it = env_.find(name); it != env_.end()) return it->second;
    auto it = sym_values_.find(name);
    if (it == sym_values_.end()) fail("{}: symbolic value '{}' is not in the graph's sym_*_values", what, name);
    auto [kind, value] = union_of(*it->second, what);
    if (kind == "as_int") return TValue::integer(int_of(value, what));
    if (kind == "as_float") return TValue::real(float_of(value, what));
    if (kind == "as_bool") return TValue::boolean(bool_of(value, what));
    if (kind != "as_expr") fail("{}: symbolic value '{}' of kind '{}'", what, name, kind);
    const std::string& expr = string_of(field(value, "expr_str", what), what);
    if (auto symbol = single_symbol(expr)) {
      if (auto bound = dims_.find(*symbol); bound != dims_.end()) return TValue::integer(bound->second);
    }
    for (const std::string& s : expr_symbols(expr))
      if (dims_.count(s))
        fail("{}: '{}' is the expression {} of --dim {}, which kiln cannot evaluate", what, name, expr, s);
    const JsonValue* hint = optional_field(value, "hint", what);
    if (!hint) fail("{}: symbolic value '{}' ({}) has no hint; bind its symbols with --dim", what, name, expr);
    if (hint->is_integer()) return TValue::integer(hint->integer());  // schemas before SymExprHint
    TValue v = constant_value(*hint, what + ".hint");
    if (v.is_none()) fail("{}: symbolic value '{}' has no usable hint", what, name);
    return v;
  }

  TValue sym_arg(const JsonValue& a, const std::string& what) {
    auto [kind, value] = union_of(a, what);
    if (kind == "as_name") return sym_value(string_of(value, what), what);
    if (kind == "as_int") return TValue::integer(int_of(value, what));
    if (kind == "as_float") return TValue::real(float_of(value, what));
    if (kind == "as_bool") return TValue::boolean(bool_of(value, what));
    fail("{}: a symbolic argument of kind '{}'", what, kind);
  }

  template <class Fn>
  TValue list(const JsonValue& v, const std::string& what, Fn&& item) {
    std::vector<TValue> items;
    const auto& a = array_of(v, what);
    for (size_t i = 0; i < a.size(); ++i) items.push_back(item(a[i], fmt::format("{}[{}]", what, i)));
    return TValue::list(std::move(items));
  }

  TValue optional_tensor(const JsonValue& v, const std::string& what) {
    auto [kind, value] = union_of(v, what);
    if (kind == "as_none") return TValue::none();
    if (kind == "as_tensor") return TValue::of(tensor(string_of(field(value, "name", what), what), what));
    fail("{}: expected as_tensor or as_none, found '{}'", what, kind);
  }

  TValue argument(const JsonValue& a, const std::string& what) {
    auto [kind, v] = union_of(a, what);
    auto tensor_arg = [&](const JsonValue& t, const std::string& w) {
      return TValue::of(tensor(string_of(field(t, "name", w), w), w));
    };
    auto int_arg = [&](const JsonValue& x, const std::string& w) { return TValue::integer(int_of(x, w)); };
    auto float_arg = [&](const JsonValue& x, const std::string& w) { return TValue::real(float_of(x, w)); };
    auto bool_arg = [&](const JsonValue& x, const std::string& w) { return TValue::boolean(bool_of(x, w)); };
    auto sym = [&](const JsonValue& x, const std::string& w) { return sym_arg(x, w); };
    if (kind == "as_none") return TValue::none();
    if (kind == "as_tensor") return tensor_arg(v, what);
    if (kind == "as_tensors") return list(v, what, tensor_arg);
    if (kind == "as_int") return int_arg(v, what);
    if (kind == "as_ints") return list(v, what, int_arg);
    if (kind == "as_float") return float_arg(v, what);
    if (kind == "as_floats") return list(v, what, float_arg);
    if (kind == "as_bool") return bool_arg(v, what);
    if (kind == "as_bools") return list(v, what, bool_arg);
    if (kind == "as_string") return TValue::string(string_of(v, what));
    if (kind == "as_strings")
      return list(v, what, [](const JsonValue& x, const std::string& w) { return TValue::string(string_of(x, w)); });
    if (kind == "as_sym_int" || kind == "as_sym_float" || kind == "as_sym_bool") return sym_arg(v, what);
    if (kind == "as_sym_ints" || kind == "as_sym_floats" || kind == "as_sym_bools") return list(v, what, sym);
    if (kind == "as_scalar_type") return TValue::integer(ts_enum(c10_scalar_type, v, what));
    if (kind == "as_memory_format") return TValue::integer(ts_enum(c10_memory_format, v, what));
    if (kind == "as_layout") return TValue::integer(ts_enum(c10_layout, v, what));
    if (kind == "as_device") {
      std::string device = string_of(field(v, "type", what), what);
      if (const JsonValue* index = optional_field(v, "index", what)) device += fmt::format(":{}", int_of(*index, what));
      return TValue::device(device);
    }
    if (kind == "as_optional_tensor") return optional_tensor(v, what);
    if (kind == "as_optional_tensors")
      return list(v, what, [&](const JsonValue& x, const std::string& w) { return optional_tensor(x, w); });
    if (kind == "as_int_lists")
      return list(v, what, [&](const JsonValue& x, const std::string& w) { return list(x, w, int_arg); });
    if (kind == "as_float_lists")
      return list(v, what, [&](const JsonValue& x, const std::string& w) { return list(x, w, float_arg); });
    fail("{}: arguments of kind '{}' are not supported", what, kind);
  }

  static int64_t ts_enum(int64_t (*convert)(int64_t, std::string_view), const JsonValue& v, const std::string& what) {
    return convert(int_of(v, what), what);
  }

  static bool is_symbolic_output(const JsonValue& out, const std::string& what) {
    auto [kind, value] = union_of(out, what);
    return kind == "as_sym_int" || kind == "as_sym_float" || kind == "as_sym_bool";
  }

  void import_node(const JsonValue& node, size_t index) {
    std::string what = fmt::format("graph.nodes[{}]", index);
    const std::string& target = string_of(field(node, "target", what), what + ".target");
    const auto& outputs = array_of(field(node, "outputs", what), what + ".outputs");
    std::string name = node_name(node, outputs, index);
    check_name(name, "node");
    ++info_.target_histogram[target];
    what = fmt::format("node '{}' ({})", name, target);
    // Sizes and arithmetic on them: their values are known (bound dims or hints).
    bool symbolic = !outputs.empty();
    for (size_t i = 0; i < outputs.size(); ++i)
      symbolic = symbolic && is_symbolic_output(outputs[i], fmt::format("{}: outputs[{}]", what, i));
    if (symbolic) {
      for (size_t i = 0; i < outputs.size(); ++i) {
        std::string w = fmt::format("{}: outputs[{}]", what, i);
        const auto& [kind, arg] = union_of(outputs[i], w);
        auto [akind, aval] = union_of(arg, w);
        if (akind == "as_name") {
          const std::string& out = string_of(aval, w);
          env_[out] = sym_value(out, w);
        }
      }
      return;
    }
    if (is_runtime_check(target)) {
      ++info_.checks_dropped;
      return;
    }
    ts::AtenCall call;
    bool keywords = false;
    const auto& inputs = array_of(field(node, "inputs", what), what + ".inputs");
    for (size_t i = 0; i < inputs.size(); ++i) {
      std::string w = fmt::format("{}: inputs[{}]", what, i);
      const std::string& arg_name = string_of(field(inputs[i], "name", w), w + ".name");
      w = fmt::format("{}: argument '{}'", what, arg_name);
      TValue value = argument(field(inputs[i], "arg", w), w);
      const JsonValue* kind = optional_field(inputs[i], "kind", w);
      // 1 positional, 2 keyword; without a kind (older schemas) the schema name binds it.
      keywords = keywords || !kind || int_of(*kind, w + ".kind") != 1;
      if (keywords)
        call.keywords.emplace_back(arg_name, std::move(value));
      else
        call.positional.push_back(std::move(value));
    }
    if (target == "_operator.getitem" || target == "operator.getitem") return getitem(call, outputs, what);
    if (target.rfind(kAtenPrefix, 0) != 0)
      fail("{}: unsupported target '{}' (only torch.ops.aten ops are)", what, target);
    std::string_view op = std::string_view(target).substr(kAtenPrefix.size());
    op = op.substr(0, op.rfind('.'));  // drop the overload: "conv2d.default" -> "conv2d"
    if (op.empty() || op.find('.') != std::string_view::npos) fail("{}: malformed target '{}'", what, target);
    call.name = std::string(op);
    builder_.at(name, target);
    std::optional<TValue> result;
    try {
      result = ts::lower_aten(builder_, call);
    } catch (const Error& e) {
      std::string message = e.what();
      if (message.find("node '" + name + "'") != std::string::npos) throw;
      fail("{}: {}", what, message);
    }
    if (!result) fail("{}: unsupported target '{}' (aten op '{}' is not in kiln's table)", what, target, op);
    bind_outputs(outputs, *result, what);
  }

  // Asserts export adds for shape guards: checks of the example's assumptions at run time,
  // with no result. A compiled model's shapes are fixed when it is compiled.
  static bool is_runtime_check(const std::string& target) {
    for (std::string_view op : {"_assert_scalar.default", "_assert_tensor_metadata.default", "_assert_async.msg",
                                "sym_constrain_range.default", "sym_constrain_range_for_size.default"})
      if (target.size() == kAtenPrefix.size() + op.size() && target.ends_with(op) && target.starts_with(kAtenPrefix))
        return true;
    return false;
  }

  static std::string node_name(const JsonValue& node, const std::vector<JsonValue>& outputs, size_t index) {
    if (const JsonValue* n = node.find("name"); n && n->is_string() && !n->string().empty()) return n->string();
    if (!outputs.empty() && outputs[0].is_object() && outputs[0].members().size() == 1) {
      const JsonValue& arg = outputs[0].members()[0].second;
      if (const JsonValue* n = arg.is_object() ? arg.find("name") : nullptr; n && n->is_string()) return n->string();
    }
    return fmt::format("node_{}", index);
  }

  // An unlowered getitem (schemas that kept it): element `index` of a list argument.
  void getitem(const ts::AtenCall& call, const std::vector<JsonValue>& outputs, const std::string& what) {
    std::vector<TValue> args = call.positional;
    for (const auto& kw : call.keywords) args.push_back(kw.second);
    if (args.size() != 2 || !args[0].is_sequence() || args[1].kind != TKind::Int)
      fail("{}: expected a list and an index", what);
    int64_t i = args[1].i, n = static_cast<int64_t>(args[0].items->size());
    if (i < -n || i >= n) fail("{}: index {} out of range for {} items", what, i, n);
    bind_outputs(outputs, (*args[0].items)[i < 0 ? i + n : i], what);
  }

  void bind_outputs(const std::vector<JsonValue>& outputs, const TValue& result, const std::string& what) {
    if (outputs.size() == 1) {
      bool one = result.is_sequence() && result.items->size() == 1 && union_of(outputs[0], what).first == "as_tensor";
      return bind(outputs[0], one ? (*result.items)[0] : result, what + ": output");
    }
    if (!result.is_sequence() || result.items->size() != outputs.size())
      fail("{}: the lowering gave {} for {} outputs", what, ts::describe(result), outputs.size());
    for (size_t i = 0; i < outputs.size(); ++i)
      bind(outputs[i], (*result.items)[i], fmt::format("{}: output {}", what, i));
  }

  void bind(const JsonValue& out, const TValue& value, const std::string& what) {
    auto [kind, arg] = union_of(out, what);
    if (kind == "as_none") return;
    if (kind == "as_tensor") return bind_tensor(string_of(field(arg, "name", what), what), value, what);
    if (kind == "as_tensors" || kind == "as_optional_tensors") {
      const auto& names = array_of(arg, what);
      if (!value.is_sequence() || value.items->size() != names.size())
        fail("{}: the lowering gave {} for a list of {} tensors", what, ts::describe(value), names.size());
      std::vector<TValue> items;
      for (size_t i = 0; i < names.size(); ++i) {
        std::string w = fmt::format("{}[{}]", what, i);
        const JsonValue* t = &names[i];
        if (kind == "as_optional_tensors") {
          auto [k, inner] = union_of(names[i], w);
          if (k == "as_none") continue;
          t = &inner;
        }
        bind_tensor(string_of(field(*t, "name", w), w), (*value.items)[i], w);
      }
      return;
    }
    fail("{}: outputs of kind '{}' are not supported", what, kind);
  }

  // Binds a result to its name, checking it against (or typing it from) tensor_values.
  void bind_tensor(const std::string& name, const TValue& value, const std::string& what) {
    check_name(name, "value");
    if (value.is_none()) {  // an output the lowering does not produce (max_pool2d's indices)
      env_[name] = value;
      return;
    }
    if (!value.is_tensor()) fail("{}: the lowering gave {} for tensor '{}'", what, ts::describe(value), name);
    ir::Value* v = value.tensor;
    if (auto meta = meta_of(name)) {
      if (!v->has_type()) {
        v->set_type(meta->dtype, meta->shape);
      } else if (v->dtype() != meta->dtype || !same_dims(v->shape(), meta->shape)) {
        fail("{}: '{}' is {}{} after lowering, the program says {}{}", what, name, ir::dtype_name(v->dtype()),
             v->shape().str(), ir::dtype_name(meta->dtype), meta->shape.str());
      }
    }
    env_[name] = value;
  }

  // Same rank, and equal where both are static.
  static bool same_dims(const ir::Shape& a, const ir::Shape& b) {
    if (a.rank() != b.rank()) return false;
    for (size_t i = 0; i < a.rank(); ++i)
      if (a[i].is_static() && b[i].is_static() && a[i].value() != b[i].value()) return false;
    return true;
  }

  void read_outputs(const std::vector<JsonValue>& specs) {
    for (size_t i = 0; i < specs.size(); ++i) {
      std::string what = fmt::format("signature.output_specs[{}]", i);
      auto [kind, spec] = union_of(specs[i], what);
      if (kind == "buffer_mutation") {
        info_.notes.push_back(fmt::format("the update of buffer '{}' is dropped: a compiled model keeps its weights",
                                          string_of(field(spec, "buffer_name", what), what)));
        continue;
      }
      if (kind != "user_output") fail("{}: outputs of kind '{}' are not supported", what, kind);
      auto [akind, arg] = union_of(field(spec, "arg", what), what + ".arg");
      if (akind != "as_tensor") fail("{}: a user output of kind '{}' (only tensors are supported)", what, akind);
      const std::string& name = string_of(field(arg, "name", what), what);
      graph_->outputs().push_back(tensor(name, what));
    }
    if (graph_->outputs().empty()) fail("the program has no tensor outputs");
  }

  const Pt2Contents& contents_;
  const Pt2ImportOptions& options_;
  std::map<std::string, int64_t> dims_;  // --dim, and the symbols --input-shape binds
  size_t unnamed_used_ = 0;
  const ImportLimits& limits_;
  Pt2ModelInfo& info_;
  std::unique_ptr<ir::Graph> graph_;
  Pt2Builder builder_;
  std::map<std::string, const JsonValue*> tensor_values_;
  std::map<std::string, const JsonValue*> sym_values_;
  std::map<std::string, TValue> env_;
  // Lifted placeholders not used yet: placeholder -> (state-dict name, tensor).
  std::map<std::string, std::pair<std::string, const ir::Tensor*>> pending_;
};

}  // namespace

std::unique_ptr<ir::Graph> build_pt2_graph(const Pt2Contents& contents, const Pt2ImportOptions& options,
                                           Pt2ModelInfo& info) {
  return GraphImporter(contents, options, info).run();
}

}  // namespace kiln::frontend::torch_export
