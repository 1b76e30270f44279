// The StableHLO importer's driver: the entry function's arguments (inputs or --params
// constants), each op through the lowering tables, func.call inlined, the results as outputs.
#include "frontend/stablehlo/stablehlo_importer.h"

#include <fmt/format.h>

#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <set>
#include <sstream>

#include "frontend/stablehlo/mlir_bytecode.h"
#include "frontend/stablehlo/stablehlo_internal.h"
#include "frontend/torchscript/zip_archive.h"
#include "ir/error.h"
#include "ir/op_registry.h"
#include "kiln/rt/npy.h"

namespace kiln::frontend {
namespace stablehlo {

// ---- Lowering helpers ------------------------------------------------------------------------

void Lowering::fail_op(const std::string& problem) const {
  fail("{}:{}:{}: {}: {}", module_.file, op_->loc.line, op_->loc.col, op_->name, problem);
}

ir::Value* Lowering::node(const std::string& op, std::vector<ir::Value*> inputs, ir::AttributeMap attrs) {
  std::string name = part_ == 0 ? base_ : fmt::format("{}_{}", base_, part_);
  ++part_;
  if (graph_.nodes().size() >= limits_.max_nodes)
    fail_op(fmt::format("the model has more than {} nodes, the node limit (--max-nodes)", limits_.max_nodes));
  try {
    ir::Node* n = graph_.add_node(op, std::move(inputs), {name}, std::move(attrs), name);
    ir::infer_node(*n);
    return n->output(0);
  } catch (const Error& e) {
    fail_op(e.what());
  }
}

ir::Value* Lowering::constant(ir::Tensor t) {
  std::string name = fmt::format("{}_c{}", base_, part_++);
  return graph_.add_constant(name, std::move(t));
}

ir::Value* Lowering::i64s(const std::vector<int64_t>& v) {
  return constant(ir::Tensor::from_vector<int64_t>(ir::DType::I64, {static_cast<int64_t>(v.size())}, v));
}

ir::Value* Lowering::scalar(double v, ir::DType dt) {
  return constant(ir::Tensor::from_vector<double>(dt, {}, {v}));
}

ir::Value* Lowering::reshape(ir::Value* v, const std::vector<int64_t>& d) {
  if (dims(v) == d) return v;
  return node("Reshape", {v, i64s(d)});
}

ir::Value* Lowering::transpose(ir::Value* v, const std::vector<int64_t>& perm) {
  bool identity = true;
  for (size_t k = 0; k < perm.size(); ++k) identity = identity && perm[k] == static_cast<int64_t>(k);
  if (identity) return v;
  return node("Transpose", {v}, {{"perm", perm}});
}

ir::Value* Lowering::cast(ir::Value* v, ir::DType dt) {
  if (v->dtype() == dt) return v;
  return node("Cast", {v}, {{"to", static_cast<int64_t>(dt)}});
}

std::vector<int64_t> Lowering::dims(const ir::Value* v) const {
  if (!v->has_type() || !v->shape().is_static()) fail_op(fmt::format("'{}' has no static shape", v->name()));
  return v->shape().values();
}

const Attr* Lowering::find_attr(const std::string& key) const {
  auto it = op_->attrs.find(key);
  return it == op_->attrs.end() ? nullptr : &it->second;
}

const Attr& Lowering::attr(const std::string& key) const {
  const Attr* a = find_attr(key);
  if (!a) fail_op(fmt::format("missing attribute '{}'", key));
  return *a;
}

std::vector<int64_t> Lowering::ints(const Attr& a, const std::string& what) const {
  std::vector<int64_t> out;
  switch (a.kind) {
    case Attr::Kind::List:
    case Attr::Kind::DenseArray:
      for (const Attr& item : a.items) {
        if (item.kind != Attr::Kind::Int) fail_op(fmt::format("{}: expected integers, found {}", what, item.describe()));
        out.push_back(item.i);
      }
      return out;
    case Attr::Kind::Dense: {
      if (!a.type) fail_op(fmt::format("{}: dense<...> without its type", what));
      if (ir::is_float(a.type->dtype)) fail_op(fmt::format("{}: expected integers, found {}", what, a.type->str()));
      try {
        return dense_tensor(a.s, *a.type, limits_).to_int64_vector();
      } catch (const Error& e) {
        fail_op(fmt::format("{}: {}", what, e.what()));
      }
    }
    default: fail_op(fmt::format("{}: expected a list of integers, found {}", what, a.describe()));
  }
}

int64_t Lowering::integer(const Attr& a, const std::string& what) const {
  if (a.kind != Attr::Kind::Int) fail_op(fmt::format("{}: expected an integer, found {}", what, a.describe()));
  return a.i;
}

std::string Lowering::opaque_word(const Attr& a) const {
  if (a.kind == Attr::Kind::Word) return a.s;
  std::string s = a.s;
  while (!s.empty() && (s.back() == '>' || std::isspace(static_cast<unsigned char>(s.back())))) s.pop_back();
  size_t k = s.size();
  while (k > 0 && (std::isalnum(static_cast<unsigned char>(s[k - 1])) || s[k - 1] == '_')) --k;
  return s.substr(k);
}

const TensorType& Lowering::result_type(size_t k) const {
  if (k >= op_->result_types.size()) fail_op("the op's result types are missing");
  return op_->result_types[k];
}

}  // namespace stablehlo

namespace {

using namespace stablehlo;

constexpr int kMaxCallDepth = 64;

const std::map<std::string, LowerFn>& lowering_table() {
  static const std::map<std::string, LowerFn> table = [] {
    std::map<std::string, LowerFn> t;
    add_basic_lowerings(t);
    add_nn_lowerings(t);
    return t;
  }();
  return table;
}

std::string sanitize(const std::string& s) {
  std::string out;
  for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
  return out;
}

// "params['dense']['w']" -> "params.dense.w": the identifier parts of a pytree path.
std::string readable_name(const std::string& s) {
  std::string out, part;
  for (char c : s + ' ') {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
      part += c;
    } else if (!part.empty()) {
      if (!out.empty()) out += '.';
      out += part;
      part.clear();
    }
  }
  return out.size() > 128 ? out.substr(0, 128) : out;
}

// "add_3" for `%3 = stablehlo.add`, "relu.maximum_1" inside an inlined @relu.
std::string node_base(const Op& op, const std::string& prefix) {
  std::string kind = op.name.substr(op.name.rfind('.') + 1);
  std::string result = op.results.empty() ? "" : op.results[0].substr(1);
  size_t hash = result.find('#');
  if (hash != std::string::npos) result = result.substr(0, hash);
  return result.empty() ? fmt::format("{}{}", prefix, kind) : fmt::format("{}{}_{}", prefix, kind, sanitize(result));
}

class Importer {
 public:
  Importer(const Module& module, const StableHloImportOptions& options, ir::Graph& graph)
      : module_(module), options_(options), graph_(graph), lowering_(graph, module, options.limits) {}

  void run(std::map<std::string, ir::Tensor> params) {
    auto it = module_.funcs.find(options_.entry);
    if (it == module_.funcs.end()) fail("{}: no function @{} (the entry point)", module_.file, options_.entry);
    const Func& main = it->second;
    if (main.results.empty()) fail("{}: @{} returns nothing", module_.file, main.name);
    Scope scope;
    std::set<std::string> used;
    int next_input = 0;
    for (size_t k = 0; k < main.args.size(); ++k) {
      const auto& [arg, type] = main.args[k];
      check_type(type, main.loc);
      const std::string& loc_name = main.arg_locs[k];
      std::string key = fmt::format("arg{}", k);
      auto given = params.find(key);
      if (given == params.end() && !loc_name.empty()) given = params.find(loc_name);
      if (given != params.end()) {
        const ir::Tensor& t = given->second;
        if (t.dtype() != type.dtype || t.dims() != type.dims)
          fail("{}: parameter '{}' is {} of shape {}, argument {} of @{} is {}", module_.file, given->first,
               ir::dtype_name(t.dtype()), ir::dims_str(t.dims()), k, main.name, type.str());
        std::string name = readable_name(loc_name).empty() ? key : readable_name(loc_name);
        scope[arg] = graph_.add_constant(name, t);
        used.insert(given->first);
      } else {
        std::string name = readable_name(loc_name).empty() ? key : readable_name(loc_name);
        ir::Value* in = graph_.add_value(name, type.dtype, ir::Shape::of(type.dims));
        graph_.inputs().push_back(in);
        scope[arg] = in;
        ++next_input;
      }
    }
    for (const auto& [name, t] : params)
      if (!used.count(name)) {
        std::string args;
        for (size_t k = 0; k < main.args.size(); ++k)
          args += fmt::format("{}arg{}{}", k ? ", " : "", k,
                              main.arg_locs[k].empty() ? "" : fmt::format(" ({})", main.arg_locs[k]));
        fail("{}: parameter '{}' matches no argument of @{} (its arguments: {})", module_.file, name, main.name,
             args.empty() ? "none" : args);
      }
    std::vector<ir::Value*> results = body(main, scope, "", 0);
    for (size_t k = 0; k < results.size(); ++k) {
      ir::Node* n = graph_.add_node("Identity", {results[k]}, {fmt::format("output_{}", k)}, {}, fmt::format("output_{}", k));
      ir::infer_node(*n);
      graph_.outputs().push_back(n->output(0));
    }
  }

  // The entry function lowered with `args` as its arguments (their types must be the
  // arguments'), node names prefixed by `prefix`; returns its results.
  std::vector<ir::Value*> call_entry(const std::vector<ir::Value*>& args, const std::string& prefix) {
    auto it = module_.funcs.find(options_.entry);
    if (it == module_.funcs.end()) fail("{}: no function @{} (the entry point)", module_.file, options_.entry);
    const Func& main = it->second;
    if (args.size() != main.args.size())
      fail("{}: {} values given, @{} takes {} arguments", module_.file, args.size(), main.name, main.args.size());
    Scope scope;
    for (size_t k = 0; k < args.size(); ++k) {
      const TensorType& t = main.args[k].second;
      check_type(t, main.loc);
      if (!args[k]->has_type() || !args[k]->shape().is_static() || args[k]->dtype() != t.dtype ||
          args[k]->shape().values() != t.dims)
        fail("{}: argument {} of @{} is {}, the value given is '{}' ({})", module_.file, k, main.name, t.str(),
             args[k]->name(), args[k]->has_type() ? args[k]->shape().str() : "of unknown type");
      scope[main.args[k].first] = args[k];
    }
    return body(main, scope, prefix, 0);
  }

 private:
  using Scope = std::map<std::string, ir::Value*>;

  void check_type(const TensorType& type, const Loc& loc) const {
    if (type.dims.size() > static_cast<size_t>(options_.limits.max_rank))
      fail("{}:{}:{}: {} has rank {}, over the rank limit of {} (--max-rank)", module_.file, loc.line, loc.col,
           type.str(), type.dims.size(), options_.limits.max_rank);
    uint64_t count = 1;
    for (int64_t d : type.dims)
      if (__builtin_mul_overflow(count, static_cast<uint64_t>(d), &count) || count > options_.limits.max_elements)
        fail("{}:{}:{}: {} has more than {} elements, the element limit (--max-elements)", module_.file, loc.line,
             loc.col, type.str(), options_.limits.max_elements);
  }

  [[noreturn]] void fail_at(const Op& op, const std::string& msg) const {
    fail("{}:{}:{}: {}: {}", module_.file, op.loc.line, op.loc.col, op.name, msg);
  }

  ir::Value* lookup(const Scope& scope, const Op& op, const std::string& name) const {
    auto it = scope.find(name);
    if (it == scope.end()) {
      // `%0#0` for the single result `%0`, and `%0` for `%0:1`.
      size_t hash = name.find('#');
      if (hash != std::string::npos && name.substr(hash) == "#0") it = scope.find(name.substr(0, hash));
      else if (hash == std::string::npos) it = scope.find(name + "#0");
    }
    if (it == scope.end()) fail_at(op, fmt::format("use of undefined value {}", name));
    return it->second;
  }

  // Lowers `f`'s body with its arguments bound in `scope`; returns what it returns.
  std::vector<ir::Value*> body(const Func& f, Scope& scope, const std::string& prefix, int depth) {
    for (const Op& op : f.body.ops) {
      std::vector<ir::Value*> in;
      for (const std::string& name : op.operands) in.push_back(lookup(scope, op, name));
      if (op.name == "func.return") {
        if (in.size() != f.results.size())
          fail_at(op, fmt::format("returns {} values, @{} declares {}", in.size(), f.name, f.results.size()));
        for (size_t k = 0; k < in.size(); ++k) check_result(op, in[k], f.results[k]);
        return in;
      }
      std::vector<ir::Value*> out;
      if (op.name == "func.call") {
        out = call(op, in, prefix, depth);
      } else {
        auto it = lowering_table().find(op.name);
        if (it == lowering_table().end())
          fail("{}:{}:{}: unsupported op '{}'", module_.file, op.loc.line, op.loc.col, op.name);
        for (const TensorType& t : op.result_types) check_type(t, op.loc);
        lowering_.begin(op, node_base(op, prefix));
        out = it->second(lowering_, in);
      }
      if (out.size() != op.results.size())
        fail_at(op, fmt::format("gives {} results, the text names {}", out.size(), op.results.size()));
      for (size_t k = 0; k < out.size(); ++k) {
        if (k < op.result_types.size()) check_result(op, out[k], op.result_types[k]);
        if (scope.count(op.results[k])) fail_at(op, fmt::format("{} is defined twice", op.results[k]));
        scope[op.results[k]] = out[k];
      }
    }
    fail("{}:{}:{}: @{} has no return", module_.file, f.loc.line, f.loc.col, f.name);
  }

  // The lowering's result must have the type the text declares.
  void check_result(const Op& op, const ir::Value* v, const TensorType& t) const {
    if (!v->has_type() || !v->shape().is_static()) fail_at(op, "a result has no static shape");
    if (v->dtype() != t.dtype || v->shape().values() != t.dims)
      fail_at(op, fmt::format("the result is {} of shape {}, the text says {}", ir::dtype_name(v->dtype()),
                              v->shape().str(), t.str()));
  }

  std::vector<ir::Value*> call(const Op& op, const std::vector<ir::Value*>& in, const std::string& prefix, int depth) {
    auto it = module_.funcs.find(op.callee);
    if (it == module_.funcs.end()) fail_at(op, fmt::format("calls @{}, which is not defined", op.callee));
    const Func& callee = it->second;
    if (depth >= kMaxCallDepth || active_.count(callee.name))
      fail_at(op, fmt::format("calls @{} recursively (or more than {} deep)", callee.name, kMaxCallDepth));
    if (in.size() != callee.args.size())
      fail_at(op, fmt::format("passes {} arguments, @{} takes {}", in.size(), callee.name, callee.args.size()));
    Scope scope;
    for (size_t k = 0; k < in.size(); ++k) {
      const TensorType& t = callee.args[k].second;
      if (in[k]->dtype() != t.dtype || in[k]->shape().values() != t.dims)
        fail_at(op, fmt::format("argument {} is {} of shape {}, @{} takes {}", k, ir::dtype_name(in[k]->dtype()),
                                in[k]->shape().str(), callee.name, t.str()));
      scope[callee.args[k].first] = in[k];
    }
    active_.insert(callee.name);
    std::string inner = fmt::format("{}{}_{}.", prefix, sanitize(callee.name), ++calls_);
    std::vector<ir::Value*> out = body(callee, scope, inner, depth + 1);
    active_.erase(callee.name);
    return out;
  }

  const Module& module_;
  const StableHloImportOptions& options_;
  ir::Graph& graph_;
  Lowering lowering_;
  std::set<std::string> active_;
  int calls_ = 0;
};

std::string read_text_file(const std::string& path, const ImportLimits& limits) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) fail("{}: no such file", path);
  auto size = std::filesystem::file_size(path, ec);
  if (ec) fail("{}: cannot read: {}", path, ec.message());
  if (size > limits.max_file_bytes)
    fail("{}: {} bytes, over the file size limit of {} (--max-file-bytes)", path, size, limits.max_file_bytes);
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("{}: cannot open", path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

std::map<std::string, ir::Tensor> read_npz(const std::string& path, const ImportLimits& limits) {
  std::unique_ptr<torchscript::ZipArchive> zip = torchscript::ZipArchive::open(path);
  std::map<std::string, ir::Tensor> out;
  for (const torchscript::ZipEntry& e : zip->entries()) {
    if (e.name.size() < 4 || e.name.compare(e.name.size() - 4, 4, ".npy") != 0)
      fail("{}: entry '{}' is not an .npy array", path, e.name);
    if (e.size > limits.max_tensor_bytes + 4096)
      fail("{}: entry '{}' has {} bytes, over the tensor size limit (--max-tensor-bytes)", path, e.name, e.size);
    std::string bytes = zip->read(e.name);
    rt::HostTensor host;
    std::string error;
    std::string where = fmt::format("{}: {}", path, e.name);
    if (!rt::parse_npy(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), where, host, error))
      throw Error(error);
    auto dtype = ir::dtype_from_code(static_cast<int>(host.dtype));
    if (!dtype) fail("{}: unsupported dtype", where);
    if (static_cast<uint64_t>(host.numel()) > limits.max_elements)
      fail("{}: more than {} elements, the element limit (--max-elements)", where, limits.max_elements);
    ir::Tensor t(*dtype, host.shape);
    if (!host.data.empty()) std::memcpy(t.mutable_raw(), host.data.data(), host.data.size());
    std::string key = e.name.substr(0, e.name.size() - 4);
    if (!out.emplace(key, std::move(t)).second) fail("{}: array '{}' appears twice", path, key);
  }
  return out;
}

namespace {

stablehlo::Module parse_any(const std::string& bytes, const std::string& name) {
  if (stablehlo::is_mlir_bytecode(bytes)) return stablehlo::parse_bytecode(bytes, name);
  if (std::optional<std::string> inner = stablehlo::jax_exported_bytecode(bytes))
    return stablehlo::parse_bytecode(*inner, name + " (mlir_module_serialized)");
  if (std::filesystem::path(name).extension() == ".jax_exported")
    fail("{}: not a jax.export artifact (no MLIR bytecode in a field mlir_module_serialized; truncated?)", name);
  for (size_t i = 0; i < bytes.size(); ++i)
    if (bytes[i] == '\0') fail("{}: a NUL byte at offset {}: not MLIR text", name, i);
  std::set<std::string> known = {"func.call", "func.return", "stablehlo.return"};
  for (const auto& [op, lower] : lowering_table()) known.insert(op);
  return stablehlo::parse_module(bytes, name, known);
}

std::unique_ptr<ir::Graph> import_module(const stablehlo::Module& module, const std::string& name,
                                         const StableHloImportOptions& options) {
  std::map<std::string, ir::Tensor> params = options.params;
  if (!options.params_path.empty())
    for (auto& [k, v] : read_npz(options.params_path, options.limits)) params[k] = std::move(v);
  auto graph = std::make_unique<ir::Graph>();
  std::string stem = std::filesystem::path(name).stem().string();
  graph->set_name(stem.empty() ? "main" : sanitize(stem));
  Importer(module, options, *graph).run(std::move(params));
  graph->remove_unused_values();
  return graph;
}

}  // namespace

std::unique_ptr<ir::Graph> import_stablehlo_text(const std::string& text, const std::string& name,
                                                 const StableHloImportOptions& options) {
  if (text.size() > options.limits.max_file_bytes)
    fail("{}: {} bytes, over the file size limit of {} (--max-file-bytes)", name, text.size(), options.limits.max_file_bytes);
  for (size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\0') fail("{}: a NUL byte at offset {}: not MLIR text", name, i);
  return import_module(parse_any(text, name), name, options);
}

std::unique_ptr<ir::Graph> import_stablehlo_bytes(const std::string& bytes, const std::string& name,
                                                  const StableHloImportOptions& options) {
  if (bytes.size() > options.limits.max_file_bytes)
    fail("{}: {} bytes, over the file size limit of {} (--max-file-bytes)", name, bytes.size(), options.limits.max_file_bytes);
  return import_module(parse_any(bytes, name), name, options);
}


std::vector<ir::Value*> lower_stablehlo_into(const std::string& bytes, const std::string& name, ir::Graph& graph,
                                             const std::vector<ir::Value*>& args, const std::string& prefix,
                                             const ImportLimits& limits) {
  if (bytes.size() > limits.max_file_bytes)
    fail("{}: {} bytes, over the file size limit of {} (--max-file-bytes)", name, bytes.size(), limits.max_file_bytes);
  stablehlo::Module module = parse_any(bytes, name);
  StableHloImportOptions options;
  options.limits = limits;
  return Importer(module, options, graph).call_entry(args, prefix);
}

std::unique_ptr<ir::Graph> import_stablehlo(const std::string& path, const StableHloImportOptions& options) {
  return import_stablehlo_bytes(read_text_file(path, options.limits), path, options);
}

bool is_stablehlo_file(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  if (ext == ".mlir" || ext == ".stablehlo" || ext == ".mlirbc" || ext == ".jax_exported") return true;
  std::ifstream in(path, std::ios::binary);
  char buf[256] = {};
  in.read(buf, sizeof buf);
  std::string head(buf, static_cast<size_t>(in.gcount()));
  size_t k = 0;
  while (k < head.size() && std::isspace(static_cast<unsigned char>(head[k]))) ++k;
  head = head.substr(k);
  if (head.rfind("module", 0) == 0 || head.rfind("func.func", 0) == 0 || head.rfind("#loc", 0) == 0) return true;
  if (stablehlo::is_mlir_bytecode(std::string(buf, static_cast<size_t>(in.gcount())))) return true;
  // A jax.export artifact: a flatbuffer whose mlir_module_serialized field holds bytecode. Its
  // root table comes first (flatbuffers are built back to front), so a far root offset rules
  // a file out before it is read whole.
  if (in.gcount() < 8) return false;
  uint32_t root = 0;
  std::memcpy(&root, buf, 4);
  if (root >= 4096 || root % 4) return false;
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec || size > (uint64_t{1} << 26) || ext == ".onnx" || ext == ".pb" || ext == ".pt" || ext == ".pt2") return false;
  std::ifstream all(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(all)), std::istreambuf_iterator<char>());
  return stablehlo::jax_exported_bytecode(bytes).has_value();
}

}  // namespace kiln::frontend
