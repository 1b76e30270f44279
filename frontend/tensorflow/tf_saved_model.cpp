// A SavedModel's signature into an ir::Graph. The variables a function captures are found
// through the SavedObjectGraph (the concrete function's bound_inputs name object ids) and the
// checkpoint's TrackableObjectGraph (walked beside it from the root by child names, to the
// object's VARIABLE_VALUE checkpoint key), then read from the tensor bundle. Keras 3 stores
// every weight twice, under variables/N and _all_variables/N: going through the object graph
// finds the one the function uses, never a weight by position.
#include "frontend/tensorflow/tf_saved_model.h"

#include <deque>
#include <filesystem>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "frontend/tensorflow/proto/tf_saved_model.pb.h"
#include "frontend/tensorflow/tensor_bundle.h"
#include "frontend/tensorflow/tf_files.h"
#include "frontend/tensorflow/tf_signature.h"
#include "frontend/tensorflow/tf_types.h"
#include "ir/error.h"

namespace kiln::frontend::tensorflow {
namespace {

class SavedVariables final : public VariableSource {
 public:
  SavedVariables(std::string dir, const kiln::tf::SavedObjectGraph& objects, const ImportLimits& limits)
      : dir_(std::move(dir)), objects_(objects), limits_(limits) {}

  std::vector<int> bound_variables(const std::string& function) override {
    auto it = objects_.concrete_functions().find(function);
    if (it == objects_.concrete_functions().end()) return {};
    std::vector<int> ids;
    for (int id : it->second.bound_inputs()) {
      if (id < 0 || id >= objects_.nodes_size())
        fail("{}: function '{}' captures object {}, and the object graph has {}", where(), function, id, objects_.nodes_size());
      ids.push_back(id);
    }
    return ids;
  }

  std::string name(int id) override {
    const auto& obj = objects_.nodes(id);
    if (obj.kind_case() == kiln::tf::SavedObject::kVariable && !obj.variable().name().empty()) return obj.variable().name();
    return fmt::format("object {}", id);
  }

  ir::Value* value(int id, ir::Graph& graph) override {
    if (auto it = values_.find({&graph, id}); it != values_.end()) return it->second;
    const auto& obj = objects_.nodes(id);
    if (obj.kind_case() != kiln::tf::SavedObject::kVariable)
      fail("{}: a function reads object {} as a variable, but it is not one", where(), id);
    const std::string key = checkpoint_key(id);
    ir::Tensor t = bundle().tensor(key);
    const auto& var = obj.variable();
    if (auto dt = tf_dtype(var.dtype()); dt && *dt != t.dtype())
      fail("{}: variable '{}' is {} in the object graph, {} in the bundle (key '{}')", where(), var.name(),
           tf_dtype_name(var.dtype()), ir::dtype_name(t.dtype()), key);
    if (auto dims = dims_from_proto(var.shape()); dims && *dims != t.dims())
      fail("{}: variable '{}' has shape {} in the object graph, {} in the bundle (key '{}')", where(), var.name(),
           ir::dims_str(*dims), ir::dims_str(t.dims()), key);
    ir::Value* v = graph.add_constant(var.name().empty() ? key : var.name(), std::move(t));
    values_[{&graph, id}] = v;
    return v;
  }

 private:
  std::string where() const { return dir_; }

  TensorBundle& bundle() {
    if (!bundle_) bundle_.emplace((std::filesystem::path(dir_) / "variables" / "variables").string(), limits_);
    return *bundle_;
  }

  // Saved object id -> checkpoint object id: both graphs walked from their roots by child name.
  const std::string& checkpoint_key(int id) {
    if (!keys_) {
      keys_.emplace();
      const std::string graph_key = "_CHECKPOINTABLE_OBJECT_GRAPH";
      if (!bundle().contains(graph_key)) fail("{}: the variables hold no {}", where(), graph_key);
      std::vector<std::string> s = bundle().strings(graph_key);
      if (s.size() != 1) fail("{}: {} holds {} strings, expected 1", where(), graph_key, s.size());
      kiln::tf::TrackableObjectGraph checkpoint;
      parse_message(s[0], checkpoint, bundle_path(), "a TrackableObjectGraph", limits_);
      std::deque<std::pair<int, int>> todo;  // (saved id, checkpoint id)
      std::set<int> seen;
      if (objects_.nodes_size() > 0 && checkpoint.nodes_size() > 0) todo.emplace_back(0, 0);
      while (!todo.empty()) {
        auto [saved, ckpt] = todo.front();
        todo.pop_front();
        if (!seen.insert(saved).second) continue;
        const auto& tracked = checkpoint.nodes(ckpt);
        for (const auto& attr : tracked.attributes())
          if (attr.name() == "VARIABLE_VALUE") (*keys_)[saved] = attr.checkpoint_key();
        std::map<std::string, int> ckpt_children;
        for (const auto& c : tracked.children())
          if (c.node_id() >= 0 && c.node_id() < checkpoint.nodes_size()) ckpt_children[c.local_name()] = c.node_id();
        for (const auto& c : objects_.nodes(saved).children()) {
          auto m = ckpt_children.find(c.local_name());
          if (m != ckpt_children.end() && c.node_id() >= 0 && c.node_id() < objects_.nodes_size())
            todo.emplace_back(c.node_id(), m->second);
        }
      }
    }
    auto it = keys_->find(id);
    if (it == keys_->end())
      fail("{}: variable '{}' (object {}) has no value in the checkpoint", where(), name(id), id);
    return it->second;
  }

  std::string bundle_path() const { return (std::filesystem::path(dir_) / "variables" / "variables.index").string(); }

  std::string dir_;
  const kiln::tf::SavedObjectGraph& objects_;
  const ImportLimits& limits_;
  std::optional<TensorBundle> bundle_;
  std::optional<std::map<int, std::string>> keys_;
  std::map<std::pair<const ir::Graph*, int>, ir::Value*> values_;  // one constant per graph
};

const kiln::tf::MetaGraphDef& serving_meta_graph(const kiln::tf::SavedModel& model, const std::string& path) {
  if (model.meta_graphs_size() == 0) fail("{}: the SavedModel holds no MetaGraphDef", path);
  if (model.meta_graphs_size() == 1) return model.meta_graphs(0);
  for (const auto& m : model.meta_graphs())
    for (const auto& tag : m.meta_info_def().tags())
      if (tag == "serve") return m;
  fail("{}: {} MetaGraphDefs and none tagged 'serve'", path, model.meta_graphs_size());
}

}  // namespace

std::unique_ptr<ir::Graph> import_saved_model(const std::string& dir, const TensorFlowImportOptions& options) {
  const std::string path = (std::filesystem::path(dir) / "saved_model.pb").string();
  kiln::tf::SavedModel model;
  parse_message(read_file(path, options.limits), model, path, "a SavedModel", options.limits);
  const kiln::tf::MetaGraphDef& meta = serving_meta_graph(model, path);
  const auto& g = meta.graph_def();
  if (static_cast<uint64_t>(g.node_size()) > options.limits.max_nodes)
    fail("{}: {} nodes, over the node limit of {} (--max-nodes)", path, g.node_size(), options.limits.max_nodes);

  auto sig_it = meta.signature_def().find(options.signature);
  if (sig_it == meta.signature_def().end()) {
    std::vector<std::string> names;
    for (const auto& [name, s] : meta.signature_def())
      if (!name.starts_with("__")) names.push_back(name);  // __saved_model_init_op is not one to call
    std::sort(names.begin(), names.end());
    fail("{}: no signature '{}' (it has: {}); pick one with --signature", dir, options.signature,
         names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", ")));
  }
  const kiln::tf::SignatureDef& sig = sig_it->second;
  if (sig.outputs().empty()) fail("{}: signature '{}' has no outputs", dir, options.signature);

  auto graph = std::make_unique<ir::Graph>();
  graph->set_name(std::filesystem::path(dir).filename().empty() ? "model" : std::filesystem::path(dir).filename().string());
  // Inputs and outputs in key order: what the signature's dict gives Python.
  std::map<std::string, kiln::tf::TensorInfo> inputs(sig.inputs().begin(), sig.inputs().end());
  std::map<std::string, kiln::tf::TensorInfo> outputs(sig.outputs().begin(), sig.outputs().end());
  std::map<std::string, TfValue> feeds;
  for (const auto& [key, info] : inputs) {
    const std::string node = info.name().substr(0, info.name().find(':'));
    feeds[node] = add_graph_input(*graph, key, info.dtype(), info.tensor_shape(), options.limits,
                                  fmt::format("{}: signature '{}'", dir, options.signature));
  }
  SavedVariables variables(dir, meta.object_graph_def(), options.limits);
  GraphBuilder builder(*graph, dir, options.limits, g.library(), &variables);
  std::vector<std::string> names;
  for (const auto& [key, info] : outputs) names.push_back(info.name());
  std::vector<TfValue> values = builder.import_graph(g, feeds, names);
  size_t k = 0;
  for (const auto& [key, info] : outputs) add_graph_output(*graph, key, values[k++], dir);
  return graph;
}

}  // namespace kiln::frontend::tensorflow
