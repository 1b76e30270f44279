// Pass: some ops' output extents are known only when the node runs: NonZero's count of
// non-zero elements, NonMaxSuppression's count of boxes kept, Compress's count of slices kept
// by a condition that is not a constant, Unique's count of distinct slices. For compiling, each such extent
// becomes a symbol of its own ("NODE:count"), bounded by the most the op can produce and marked
// data-dependent: the output is planned for that capacity, the generated code stores the
// count it finds in the run's dims, and the shapes after it are expressions of that symbol.
// After fold_constants, which has typed every value (a NonZero of a constant is folded by then).
#include <fmt/format.h>

#include <algorithm>

#include "passes/pass_manager.h"

namespace kiln::passes {

namespace {

// The largest value of `d` within the graph's bounds.
std::optional<int64_t> max_of(const ir::Graph& g, const ir::Dim& d) {
  return d.is_unknown() ? std::nullopt : d.max_value(g.dim_ranges());
}

// The axis of output 0 that depends on the data, and the most it can be; nullopt when the
// node is not one of these ops, is already bounded, or its inputs are not.
std::optional<std::pair<size_t, int64_t>> data_dependent_extent(const ir::Graph& g, const ir::Node& n) {
  if ((n.op() != "NonZero" && n.op() != "NonMaxSuppression" && n.op() != "Compress" &&
       n.op() != "Unique") || !n.has_input(0) || !n.input(0)->has_type() ||
      n.num_outputs() == 0 || !n.output(0) || !n.output(0)->has_type())
    return std::nullopt;
  const ir::Shape& y = n.output(0)->shape();
  if (n.op() == "NonZero") {
    if (y.rank() != 2 || !y[1].is_unknown()) return std::nullopt;
    const std::optional<int64_t> capacity = n.input(0)->shape().max_numel(g.dim_ranges());
    if (!capacity) return std::nullopt;
    return std::pair{size_t{1}, *capacity};
  }
  if (n.op() == "Unique" || n.op() == "Compress") {
    // Along `axis` (the flattened input without one): at most every slice distinct, or kept;
    // Compress keeps no more than its condition has entries.
    const ir::Shape& x = n.input(0)->shape();
    size_t axis = 0;
    if (n.has_attr("axis")) {
      const std::optional<int64_t> a = ir::normalize_axis(n.i("axis"), static_cast<int64_t>(x.rank()));
      if (!a) return std::nullopt;
      axis = static_cast<size_t>(*a);
    }
    if (axis >= y.rank() || !y[axis].is_unknown()) return std::nullopt;
    std::optional<int64_t> len = n.has_attr("axis") ? max_of(g, x[axis]) : x.max_numel(g.dim_ranges());
    if (len && n.op() == "Compress") {
      if (!n.input(1)->has_type() || n.input(1)->shape().rank() != 1) return std::nullopt;
      const std::optional<int64_t> cond = max_of(g, n.input(1)->shape()[0]);
      len = cond ? std::optional<int64_t>(std::min(*len, *cond)) : std::nullopt;
    }
    if (!len) return std::nullopt;
    return std::pair{axis, *len};
  }
  if (n.op() == "NonMaxSuppression") {
    if (y.rank() != 2 || !y[0].is_unknown() || !n.input(1)->has_type()) return std::nullopt;
    const ir::Shape& scores = n.input(1)->shape();  // [batches, classes, boxes]
    if (scores.rank() != 3) return std::nullopt;
    std::optional<int64_t> batches = max_of(g, scores[0]), classes = max_of(g, scores[1]), boxes = max_of(g, scores[2]);
    if (!batches || !classes || !boxes) return std::nullopt;
    // A constant max_output_boxes_per_class caps each class's boxes.
    int64_t per_class = *boxes;
    if (n.has_input(2) && n.input(2)->is_constant() && n.input(2)->constant().numel() > 0)
      per_class = std::clamp<int64_t>(static_cast<int64_t>(n.input(2)->constant().as_double(0)), 0, per_class);
    return std::pair{size_t{0}, *batches * *classes * per_class};
  }
  return std::nullopt;
}

}  // namespace

void bound_data_dependent_dims(ir::Graph& graph) {
  bool added = false;
  for (const auto& n : graph.nodes()) {
    const auto extent = data_dependent_extent(graph, *n);
    if (!extent) continue;
    const std::string base = n->name().empty() ? n->op() : n->name();
    std::string name = base + ":count";
    for (int k = 2; graph.dim_ranges().count(name); ++k) name = fmt::format("{}:count{}", base, k);
    graph.dim_ranges()[name] =
        ir::DimRange{.min = 0, .max = extent->second, .opt = extent->second, .data_dependent = true};
    std::vector<ir::Dim> dims = n->output(0)->shape().dims();
    dims[extent->first] = ir::Dim::symbol(name);
    n->output(0)->set_type(n->output(0)->dtype(), ir::Shape(std::move(dims)));
    added = true;
  }
  if (!added) return;
  infer_shapes(graph);
  share_dim_ranges(graph);
}

}  // namespace kiln::passes
