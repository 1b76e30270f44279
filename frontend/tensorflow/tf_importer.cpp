// The TensorFlow frontend's entry: SavedModel directories (tf_saved_model.cpp) and frozen
// GraphDefs (here).
#include "frontend/tensorflow/tf_importer.h"

#include <filesystem>
#include <fstream>
#include <set>

#include <fmt/format.h>

#include "frontend/tensorflow/tf_files.h"
#include "frontend/tensorflow/tf_saved_model.h"
#include "frontend/tensorflow/tf_signature.h"
#include "frontend/tensorflow/tf_types.h"
#include "ir/error.h"
#include "ir/op_registry.h"

namespace kiln::frontend {

namespace tensorflow {

TfValue add_graph_input(ir::Graph& graph, const std::string& name, int dtype, const kiln::tf::TensorShapeProto& shape,
                        const ImportLimits& limits, const std::string& where) {
  const auto dt = tf_dtype(dtype);
  if (!dt) fail("{}: input '{}' is {}, which kiln cannot feed", where, name, tf_dtype_name(dtype));
  const auto dims = dims_from_proto(shape);
  if (!dims) fail("{}: input '{}' has no known rank; give its shape with --input-shape", where, name);
  if (dims->size() > static_cast<size_t>(limits.max_rank))
    fail("{}: input '{}' has rank {}, over the rank limit of {} (--max-rank)", where, name, dims->size(), limits.max_rank);
  std::vector<ir::Dim> out;
  for (size_t k = 0; k < dims->size(); ++k) {
    if ((*dims)[k] >= 0) out.emplace_back((*dims)[k]);
    else out.push_back(ir::Dim::symbol(k == 0 ? "batch" : fmt::format("{}_{}", name, k)));
  }
  ir::Value* v = graph.add_value(name, *dt, ir::Shape(std::move(out)));
  graph.inputs().push_back(v);
  return TfValue{v};
}

void add_graph_output(ir::Graph& graph, const std::string& name, const TfValue& value, const std::string& where) {
  if (!value.tensor) fail("{}: output '{}' is the resource '{}', not a tensor", where, name, value.handle);
  ir::Node* n = graph.add_node("Identity", {value.tensor}, {name}, {}, name);
  ir::infer_node(*n);
  graph.outputs().push_back(n->output(0));
}

namespace {

// "node:0" and "node" name the same tensor; the Placeholder of "x:0" is "x".
std::string node_of(const std::string& tensor) { return tensor.substr(0, tensor.find(':')); }

std::unique_ptr<ir::Graph> import_frozen_graph(const std::string& path, const TensorFlowImportOptions& options) {
  kiln::tf::GraphDef g;
  parse_message(read_file(path, options.limits), g, path, "a GraphDef", options.limits);
  if (static_cast<uint64_t>(g.node_size()) > options.limits.max_nodes)
    fail("{}: {} nodes, over the node limit of {} (--max-nodes)", path, g.node_size(), options.limits.max_nodes);
  auto graph = std::make_unique<ir::Graph>();
  graph->set_name(std::filesystem::path(path).stem().string());

  std::map<std::string, const kiln::tf::NodeDef*> by_name;
  for (const auto& n : g.node()) by_name[n.name()] = &n;
  std::vector<std::string> inputs = options.inputs;
  if (inputs.empty())
    for (const auto& n : g.node())
      if (n.op() == "Placeholder") inputs.push_back(n.name());
  std::map<std::string, tensorflow::TfValue> feeds;
  for (const std::string& name : inputs) {
    auto it = by_name.find(node_of(name));
    if (it == by_name.end() || (it->second->op() != "Placeholder" && it->second->op() != "PlaceholderWithDefault"))
      fail("{}: --input-node '{}' names no Placeholder of the graph", path, name);
    const auto& attrs = it->second->attr();
    auto dtype = attrs.find("dtype");
    auto shape = attrs.find("shape");
    if (dtype == attrs.end()) fail("{}: Placeholder '{}' has no dtype", path, name);
    kiln::tf::TensorShapeProto unknown;
    unknown.set_unknown_rank(true);
    feeds[it->first] = add_graph_input(*graph, it->first, dtype->second.type(), shape == attrs.end() ? unknown : shape->second.shape(),
                                       options.limits, path);
  }
  std::vector<std::string> outputs = options.outputs;
  if (outputs.empty()) {  // the nodes nobody reads
    std::set<std::string> read;
    for (const auto& n : g.node())
      for (const std::string& in : n.input()) read.insert(node_of(in.starts_with("^") ? in.substr(1) : in));
    for (const auto& n : g.node())
      if (!read.count(n.name()) && n.op() != "NoOp" && n.op() != "Const" && n.op() != "Placeholder") outputs.push_back(n.name());
    if (outputs.empty()) fail("{}: the graph computes nothing; name its outputs with --output-node", path);
  }
  tensorflow::GraphBuilder builder(*graph, path, options.limits, g.library(), nullptr);
  std::vector<tensorflow::TfValue> values = builder.import_graph(g, feeds, outputs);
  for (size_t k = 0; k < outputs.size(); ++k) {
    std::string name = outputs[k];
    if (name.ends_with(":0")) name.resize(name.size() - 2);
    tensorflow::add_graph_output(*graph, name, values[k], path);
  }
  return graph;
}

}  // namespace
}  // namespace tensorflow

bool is_saved_model_dir(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_directory(path, ec) && std::filesystem::exists(std::filesystem::path(path) / "saved_model.pb", ec);
}

bool is_graphdef_file(const std::string& path) {
  if (std::filesystem::path(path).extension() != ".pb") return false;
  std::ifstream in(path, std::ios::binary);
  char first = 0;
  return in.get(first) && first == 0x0a;  // field 1 (GraphDef.node), length-delimited
}

std::unique_ptr<ir::Graph> import_tensorflow(const std::string& path, const TensorFlowImportOptions& options) {
  if (is_saved_model_dir(path)) {
    if (!options.inputs.empty() || !options.outputs.empty())
      fail("{}: --input-node and --output-node apply to frozen GraphDefs; a SavedModel's come from its signature (--signature)", path);
    return tensorflow::import_saved_model(path, options);
  }
  return tensorflow::import_frozen_graph(path, options);
}

}  // namespace kiln::frontend
