#include "passes/pass_manager.h"

#include <algorithm>
#include <chrono>
#include <map>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "ir/error.h"
#include "ir/printer.h"
#include "ir/verifier.h"

namespace kiln::passes {

const std::vector<PassInfo>& all_passes() {
  static const std::vector<PassInfo> passes = {
#define KILN_PASS(name, function, summary) {#name, summary, &function},
#include "passes/passes.def"
#undef KILN_PASS
  };
  return passes;
}

const PassInfo* find_pass(const std::string& name) {
  for (const PassInfo& p : all_passes())
    if (p.name == name) return &p;
  return nullptr;
}

std::vector<std::string> default_pipeline() { return pipeline_for_level(2); }

std::vector<std::string> pipeline_for_level(int level) {
  // fold_constants infers each node's shape just before folding it, in order: a shape computed
  // from Shape, Size and ConstantOfShape (LayerNormalization's function body) is folded before
  // the Reshape that reads it needs its length, which a separate infer_shapes pass first cannot.
  std::vector<std::string> p = {"fold_constants", "bound_data_dependent_dims", "eliminate_dead_code"};
  if (level == 0) return p;
  if (level < 0 || level > 2) fail("-O{}: unknown optimization level (expected 0, 1 or 2)", level);
  // Before fold_constants turns the weights' DequantizeLinear into f32 constants.
  p.insert(p.begin(), "fuse_qdq");
  // sink_transposes once, after the first fold_constants (the biases it transposes are folded
  // constants by then) and before fold_transposes, which cancels what it leaves adjacent. No
  // later pass makes Transposes it could move (recognize_attention's are read by Attention) or
  // the constants it needs, so it need not run again.
  for (const char* name : {"eliminate_identities", "eliminate_common_subexpressions", "sink_transposes",
                           "fold_transposes", "fold_batch_norm", "fold_constants",
                           "eliminate_dead_code"})
    p.push_back(name);
  if (level == 1) return p;
  for (const char* name : {"recognize_layer_norm", "recognize_gelu", "recognize_swish", "recognize_attention",
                           "fuse_matmul_add", "fuse_epilogue", "fuse_expand_depthwise", "layout_nchwc", "layout_nhwc",
                           "fuse_nhwc_global_pool", "fuse_elementwise",
                           "eliminate_dead_code"})
    p.push_back(name);
  return p;
}

std::string node_count_summary(const ir::Graph& graph) {
  std::map<std::string, int> ops;
  for (const auto& n : graph.nodes()) ++ops[n->op()];
  std::vector<std::string> parts;
  for (const auto& [op, count] : ops) parts.push_back(fmt::format("{} {}", op, count));
  return fmt::format("{} nodes: {}", graph.nodes().size(), fmt::join(parts, ", "));
}

namespace {

// The data-dependent dims the bodies' nodes set (a NonZero's count inside an If branch), into
// `into`: they belong to the whole model, whose generated code keeps every symbol in one table.
// Two of one name (sibling bodies' nodes of one name) keep the larger capacity.
void gather_body_ranges(const ir::Graph& graph, ir::DimRanges& into) {
  for (const auto& n : graph.nodes())
    for (const auto& [name, a] : n->attrs())
      if (a.type() == ir::AttrType::Graph && a.g()) {
        for (const auto& [symbol, r] : a.g()->dim_ranges()) {
          if (!r.data_dependent) continue;
          auto [it, added] = into.emplace(symbol, r);
          if (!added && it->second.data_dependent) it->second.max = it->second.opt = std::max(it->second.max, r.max);
        }
        gather_body_ranges(*a.g(), into);
      }
}

void give_bodies_ranges(ir::Graph& graph) {
  for (const auto& n : graph.nodes())
    for (const auto& [name, a] : n->attrs())
      if (a.type() == ir::AttrType::Graph && a.g()) {
        a.g()->dim_ranges() = graph.dim_ranges();
        give_bodies_ranges(*a.g());
      }
}

// Runs `pass` on the bodies of control-flow nodes, innermost last, once the node's shape rule
// has typed their inputs (passes work on typed graphs; an untyped body waits for a later pass).
void run_on_bodies(const PassInfo& pass, ir::Graph& graph) {
  for (const auto& n : graph.nodes())
    for (const auto& [name, a] : n->attrs()) {
      if (a.type() != ir::AttrType::Graph || !a.g()) continue;
      // An If branch that cannot be typed with these inputs is never optimized (running it fails).
      if (n->has_attr("untyped_branch") && n->s("untyped_branch").starts_with(name + ":")) continue;
      ir::Graph& body = *a.g();
      // A body's shapes use the model's symbolic dims, and the data-dependent ones of its own.
      ir::DimRanges own = std::move(body.dim_ranges());
      body.dim_ranges() = graph.dim_ranges();
      for (const auto& [symbol, r] : own)
        if (r.data_dependent) body.dim_ranges().emplace(symbol, r);
      bool typed = true;
      for (const ir::Value* in : body.inputs()) typed = typed && in->has_type();
      if (!typed) continue;
      pass.run(body);
      run_on_bodies(pass, body);
    }
  gather_body_ranges(graph, graph.dim_ranges());
}

}  // namespace

void share_dim_ranges(ir::Graph& graph) {
  gather_body_ranges(graph, graph.dim_ranges());
  give_bodies_ranges(graph);
}

void run_pipeline(ir::Graph& graph, const std::vector<std::string>& passes,
                  const PipelineOptions& options) {
  share_dim_ranges(graph);
  for (const std::string& name : passes) {
    const PassInfo* pass = find_pass(name);
    if (!pass) fail("unknown pass '{}'", name);
    if (options.disabled.count(name)) {
      if (options.log && options.time) fmt::print(*options.log, "  pass {:<32} disabled\n", name);
      continue;
    }
    auto start = std::chrono::steady_clock::now();
    pass->run(graph);
    run_on_bodies(*pass, graph);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                    .count();
#ifndef NDEBUG
    const bool verify = true;  // debug builds always verify
#else
    const bool verify = options.verify_each;
#endif
    if (verify) {
      try {
        ir::verify_graph(graph);
      } catch (const Error& e) {
        fail("after pass {}: {}", name, e.what());
      }
    }
    if (options.log && options.time) fmt::print(*options.log, "  pass {:<32} {:8.2f} ms\n", name, ms);
    if (options.log && options.stats)
      fmt::print(*options.log, "  after {:<31} {}\n", name, node_count_summary(graph));
    if (options.log && (options.print_after.count(name) || options.print_after.count("all")))
      fmt::print(*options.log, "// IR after {}\n{}", name, ir::print_graph(graph));
  }
  share_dim_ranges(graph);  // bodies a pass made
}

namespace {

ir::Shape bind_shape(const ir::Shape& s, const std::map<std::string, int64_t>& values,
                     std::set<std::string>& used) {
  std::vector<ir::Dim> dims = s.dims();
  for (ir::Dim& d : dims) {
    if (d.is_static() || d.is_unknown()) continue;
    for (const std::string& sym : d.symbols())
      if (values.count(sym)) used.insert(sym);
    d = d.bind(values);
  }
  return ir::Shape(std::move(dims));
}

}  // namespace

void bind_dims(ir::Graph& graph, const std::map<std::string, int64_t>& values) {
  std::set<std::string> used;
  for (const auto& v : graph.values())
    if (v->has_type() && !v->is_constant())
      v->set_type(v->dtype(), bind_shape(v->shape(), values, used));
  for (const auto& v : graph.values())
    if (v->shape_value()) {
      std::vector<ir::Dim> dims = *v->shape_value();
      for (ir::Dim& d : dims) d = d.bind(values);
      v->set_shape_value(std::move(dims));
    }
  for (const auto& [name, value] : values) {
    if (value < 0) fail("--dim {}={}: a dim must be non-negative", name, value);
    if (!used.count(name)) {
      std::set<std::string> known;
      for (const ir::Value* in : graph.inputs())
        for (const ir::Dim& d : in->shape().dims())
          if (!d.is_static() && !d.name().empty()) known.insert(d.name());
      fail("--dim {}: the model has no such symbolic dim (it has: {})", name,
           known.empty() ? std::string("none") : fmt::format("{}", fmt::join(known, ", ")));
    }
  }
}

void set_dim_ranges(ir::Graph& graph, const ir::DimRanges& extra) {
  // Bounds already on the graph (--input-shape NAME=MIN..MAX,...) and those of --dim.
  ir::DimRanges ranges = graph.dim_ranges();
  for (const auto& [name, r] : extra)
    if (!ranges.emplace(name, r).second && !(ranges[name] == r))
      fail("--dim {}={}..{}: the symbolic dim '{}' is already bounded {}..{} by --input-shape", name, r.min, r.max, name,
           ranges[name].min, ranges[name].max);
  std::set<std::string> on_inputs;
  for (const ir::Value* in : graph.inputs())
    for (const ir::Dim& d : in->shape().dims())
      if (d.is_symbol()) on_inputs.insert(d.name());
  for (const auto& [name, r] : ranges) {
    if (!on_inputs.count(name))
      fail("--dim {}={}..{}: no input of the model has the symbolic dim '{}' (it has: {})", name, r.min, r.max, name,
           on_inputs.empty() ? std::string("none") : fmt::format("{}", fmt::join(on_inputs, ", ")));
    if (r.min < 1 || r.max < r.min || r.max > (int64_t{1} << 31))
      fail("--dim {}={}..{}: the bounds must satisfy 1 <= MIN <= MAX <= 2^31", name, r.min, r.max);
    if (r.opt < r.min || r.opt > r.max)
      fail("--dim {}={}..{}@{}: the tuning point must lie within the bounds", name, r.min, r.max, r.opt);
  }
  // A stepped dim H (MIN..MAX:STEP) becomes STEP * "H/STEP": a convolution of stride 2 then
  // halves a polynomial exactly (ir::Dim holds no floor division).
  for (auto it = ranges.begin(); it != ranges.end();) {
    const auto [name, r] = *it;
    if (r.step == 1) {
      ++it;
      continue;
    }
    if (r.step < 1 || r.min % r.step != 0 || r.max % r.step != 0 || r.opt % r.step != 0)
      fail("--dim {}={}..{}:{}: the step must divide the bounds and the tuning point", name, r.min, r.max, r.step);
    const std::string fresh = fmt::format("{}/{}", name, r.step);
    const ir::Dim by = ir::Dim(r.step) * ir::Dim::symbol(fresh);
    for (const auto& v : graph.values()) {
      if (v->has_type() && !v->is_constant()) {
        std::vector<ir::Dim> dims = v->shape().dims();
        for (ir::Dim& d : dims) d = d.substitute(name, by);
        v->set_type(v->dtype(), ir::Shape(std::move(dims)));
      }
      if (v->shape_value()) {
        std::vector<ir::Dim> dims = *v->shape_value();
        for (ir::Dim& d : dims) d = d.substitute(name, by);
        v->set_shape_value(std::move(dims));
      }
    }
    it = ranges.erase(it);
    ranges[fresh] = ir::DimRange{.min = r.min / r.step, .max = r.max / r.step, .opt = r.opt / r.step};
  }
  graph.dim_ranges() = ranges;
  share_dim_ranges(graph);
}

}  // namespace kiln::passes
