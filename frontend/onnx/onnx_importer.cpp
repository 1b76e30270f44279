// import_onnx: read the model, check every node before converting any, then build the graph.
//
// Any opset is accepted: old forms are imported where the rules in onnx_op_rules.cpp and the
// attribute check cover every difference from the newest form, and reported otherwise.
#include "frontend/onnx/onnx_importer.h"

#include <algorithm>
#include <climits>
#include <tuple>

#include "frontend/onnx/onnx_graph_builder.h"
#include "frontend/onnx/onnx_internal.h"
#include "frontend/onnx/onnx_op_rules.h"
#include "ir/error.h"
#include "ir/op_registry.h"

namespace kiln::frontend {
namespace {

using namespace onnx_import;

// Names read by `g`'s nodes (and those of its subgraphs, which may read outer values) or
// listed as its outputs.
void collect_used(const onnx::GraphProto& g, std::set<std::string>& used) {
  for (const auto& n : g.node()) {
    used.insert(n.input().begin(), n.input().end());
    for (const auto& a : n.attribute()) {
      if (a.has_g()) collect_used(a.g(), used);
      for (const auto& sg : a.graphs()) collect_used(sg, used);
    }
  }
  for (const auto& o : g.output()) used.insert(o.name());
}

// Walks every graph before anything else looks at it: subgraph depth, node count and name
// lengths within `limits`, so the recursions that follow are bounded.
struct StructureCheck {
  const std::string& path;
  const ImportLimits& limits;
  uint64_t nodes = 0;

  void name(const std::string& n, const char* kind) const {
    if (n.size() > limits.max_name_length)
      fail("{}: {} '{}...' has a name of {} bytes, over the name length limit of {} "
           "(--max-name-length)",
           path, kind, n.substr(0, 32), n.size(), limits.max_name_length);
  }

  void graph(const onnx::GraphProto& g, int depth) {
    name(g.name(), "graph");
    for (const auto* list : {&g.input(), &g.output(), &g.value_info()})
      for (const auto& vi : *list) name(vi.name(), "value");
    for (const auto& init : g.initializer()) name(init.name(), "initializer");
    nodes += static_cast<uint64_t>(g.node_size());
    if (nodes > limits.max_nodes)
      fail("{}: more than {} nodes, the node limit (--max-nodes)", path, limits.max_nodes);
    for (int i = 0; i < g.node_size(); ++i) {
      const onnx::NodeProto& n = g.node(i);
      name(n.name(), "node");
      name(n.op_type(), "op type");
      name(n.domain(), "domain");
      for (const auto& v : n.input()) name(v, "value");
      for (const auto& v : n.output()) name(v, "value");
      for (const auto& a : n.attribute()) {
        name(a.name(), "attribute");
        if (!a.has_g() && a.graphs_size() == 0) continue;
        if (depth + 1 > limits.max_subgraph_depth)
          fail("{}: node '{}' ({}): subgraphs nested more than {} deep, the subgraph depth limit "
               "(--max-subgraph-depth)",
               path, n.name().empty() ? fmt::format("{}_{}", n.op_type(), i) : n.name(),
               n.op_type(), limits.max_subgraph_depth);
        if (a.has_g()) graph(a.g(), depth + 1);
        for (const auto& sg : a.graphs()) graph(sg, depth + 1);
      }
    }
  }
};

struct Scan {
  const onnx::ModelProto& model;
  const std::map<std::string, int>& opsets;
  std::vector<UnsupportedNode> unsupported;

  bool is_local_function(const onnx::NodeProto& n) const {
    return std::any_of(model.functions().begin(), model.functions().end(), [&](const auto& f) {
      return f.name() == n.op_type() && normalize_domain(f.domain()) == normalize_domain(n.domain());
    });
  }

  std::string reason(const onnx::NodeProto& n, int opset, const TypeHints& hints,
                     const std::set<std::string>& used) const {
    std::string domain = normalize_domain(n.domain());
    if (is_local_function(n)) return "calls a model-local function, which is not supported";
    if (!domain.empty() && !ir::registry().find(registry_op_name(n)))
      return fmt::format("domain {} is not supported", domain);
    if (opset == 0) return "the model imports no opset for the default domain";
    return unsupported_reason(NodeView{n, opset, hints, used});
  }

  void graph(const onnx::GraphProto& g, const TypeHints* parent) {
    TypeHints hints(g, parent);
    std::set<std::string> used;
    collect_used(g, used);
    for (int i = 0; i < g.node_size(); ++i) {
      const onnx::NodeProto& n = g.node(i);
      auto it = opsets.find(normalize_domain(n.domain()));
      int opset = it == opsets.end() ? 0 : it->second;
      std::string why = reason(n, opset, hints, used);
      if (!why.empty()) {
        std::string name = n.name().empty() ? fmt::format("{}_{}", n.op_type(), i) : n.name();
        unsupported.push_back({name, n.op_type(), n.domain(), opset, why});
      }
      for (const auto& a : n.attribute()) {
        if (a.has_g()) graph(a.g(), &hints);
        for (const auto& sg : a.graphs()) graph(sg, &hints);
      }
    }
  }
};

// "3 unsupported nodes: TfIdfVectorizer (tfidf_1), Foo in domain com.x (f1, f2), Dropout (d1:
// its mask output is used)", grouping nodes by op, domain and reason in order of appearance.
std::string describe_unsupported(const std::vector<UnsupportedNode>& list) {
  struct Group {
    const UnsupportedNode* first;
    std::vector<std::string> names;
  };
  std::vector<Group> groups;
  for (const UnsupportedNode& u : list) {
    auto same = [&](const Group& g) {
      return std::tie(g.first->op_type, g.first->domain, g.first->reason) ==
             std::tie(u.op_type, u.domain, u.reason);
    };
    auto it = std::find_if(groups.begin(), groups.end(), same);
    if (it == groups.end()) it = groups.insert(groups.end(), Group{&u, {}});
    it->names.push_back(u.name);
  }
  constexpr size_t kMaxNames = 5;
  std::string text = fmt::format("{} unsupported node{}: ", list.size(), list.size() == 1 ? "" : "s");
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    const Group& g = groups[gi];
    std::string domain = normalize_domain(g.first->domain);
    std::string names;
    for (size_t k = 0; k < g.names.size() && k < kMaxNames; ++k)
      names += (k ? ", " : "") + g.names[k];
    if (g.names.size() > kMaxNames) names += fmt::format(" and {} more", g.names.size() - kMaxNames);
    if (gi) text += ", ";
    if (!domain.empty())
      text += fmt::format("{} in domain {} ({})", g.first->op_type, domain, names);
    else if (g.first->reason == "not implemented")
      text += fmt::format("{} ({})", g.first->op_type, names);
    else
      text += fmt::format("{} ({}: {})", g.first->op_type, names, g.first->reason);
  }
  return text;
}

}  // namespace

std::unique_ptr<ir::Graph> import_onnx(const std::string& path, const OnnxImportOptions& options,
                                       OnnxModelInfo* info) {
  std::unique_ptr<onnx::ModelProto> model = read_model_proto(path, options.limits);
  StructureCheck{path, options.limits}.graph(model->graph(), 0);

  std::map<std::string, int> opsets;
  for (const auto& op : model->opset_import())
    opsets[normalize_domain(op.domain())] =
        static_cast<int>(std::clamp<int64_t>(op.version(), 0, INT_MAX));
  if (model->opset_import_size() == 0) opsets[""] = 1;  // IR version < 3: opset 1 implied

  Scan scan{*model, opsets, {}};
  scan.graph(model->graph(), nullptr);
  if (info) {
    info->ir_version = model->ir_version();
    info->producer = model->producer_name();
    if (!model->producer_version().empty())
      info->producer += (info->producer.empty() ? "" : " ") + model->producer_version();
    info->opsets = opsets;
    info->unsupported = scan.unsupported;
    info->op_histogram.clear();
    for (const auto& n : model->graph().node()) ++info->op_histogram[n.op_type()];
  }
  if (!scan.unsupported.empty()) {
    if (options.allow_unsupported) return nullptr;
    fail("{}: {}", path, describe_unsupported(scan.unsupported));
  }

  ModelContext context{path, opsets, TensorLoader(path, directory_of(path), options.limits),
                       options.limits};
  auto graph = std::make_unique<ir::Graph>();
  if (!model->graph().name().empty()) graph->set_name(model->graph().name());
  GraphBuilder(context, *model->mutable_graph(), *graph, nullptr).build();
  return graph;
}

ir::Tensor load_tensor_proto_file(const std::string& path, const ImportLimits& limits) {
  std::unique_ptr<onnx::TensorProto> proto = read_tensor_proto(path, limits);
  TensorLoader loader(path, directory_of(path), limits);
  std::string what = proto->name().empty() ? "tensor" : fmt::format("tensor '{}'", proto->name());
  return loader.load(*proto, what);
}

}  // namespace kiln::frontend
