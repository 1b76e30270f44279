#include "codegen/cpp/cpp_backend.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "codegen/cpp/api_files.h"
#include "codegen/cpp/content_hash.h"
#include "codegen/cpp/batch_loop.h"
#include "codegen/cpp/control_flow.h"
#include "codegen/cpp/emit_context.h"
#include "codegen/cpp/emitter.h"
#include "codegen/cpp/graph_plan.h"
#include "codegen/cpp/weight_blob.h"
#include "ir/error.h"
#include "ir/op_registry.h"

namespace kiln::codegen::cpp {

namespace {

constexpr size_t kAlign = 64;

// Bytes planned for a value: with symbolic dims, for their maxima (--dim NAME=MIN..MAX).
size_t value_bytes(const ir::Value* v) { return max_value_bytes(v); }

// The bytes a value holds in this run, as C++.
std::string run_bytes(const EmitContext& ctx, const ir::Value* v) { return ctx.run_bytes(v); }

// A node the emitter runs item by item over a symbolic batch (batch_loop.h): its batch dim.
std::optional<ir::Dim> item_batch(const Emitter& e, const ir::Node& node) {
  return e.batch_items && e.batch_items(node) ? batch_dim(node) : std::nullopt;
}

// Scratch bytes: for one item when the node runs item by item (each item reuses them).
size_t item_scratch_bytes(const Emitter& e, const ir::Node& node, const EmitOptions& options) {
  std::optional<ir::Dim> b = item_batch(e, node);
  if (!b) return e.scratch_bytes(node, options);
  BatchOne one(node, *b);
  return e.scratch_bytes(node, options);
}

// Whether the emitter packs constant input i itself, judged for one item when the node runs
// item by item.
bool packs_item_input(const Emitter& e, const ir::Node& node, size_t i) {
  if (!e.packs_input) return false;
  std::optional<ir::Dim> b = item_batch(e, node);
  if (!b) return e.packs_input(node, i);
  BatchOne one(node, *b);
  return e.packs_input(node, i);
}

void emit_node(EmitContext& ctx, const Emitter& e, const ir::Node& node) {
  std::optional<ir::Dim> b = item_batch(e, node);
  if (!b) {
    e.emit(ctx, node);
    return;
  }
  const std::string count = ctx.dim(*b);
  BatchOne one(node, *b);
  ctx.begin_batch_loop(count, one.items());
  e.emit(ctx, node);
  ctx.end_batch_loop();
}

// Why the emitter cannot emit the node ("" when it can), judged for one item when it runs
// item by item.
std::string unsupported_reason(const Emitter& e, const ir::Node& node) {
  if (!e.unsupported) return "";
  std::optional<ir::Dim> b = item_batch(e, node);
  if (!b) return e.unsupported(node);
  BatchOne one(node, *b);
  return e.unsupported(node);
}

// Elementwise nodes may write their result over input `i` when the two have the same
// dtype and shape: every element is read before the same element is written.
bool may_write_over(const ir::Node& n, size_t i) {
  const ir::Value* in = n.input(i);
  const bool elementwise = !n.def().scalar_expr.empty() || n.op() == "kiln.Elementwise";
  return elementwise && n.num_outputs() == 1 && in && in->dtype() == n.output(0)->dtype() &&
         in->shape() == n.output(0)->shape();
}

}  // namespace

Plan plan_graph(const ir::Graph& graph, WeightBlob& weights, const EmitOptions& options, const BodyFunctions& bodies,
                const DeviceLowering* device) {
  Plan plan;
  const EmitterRegistry& registry = emitters();

  for (size_t i = 0; i < graph.inputs().size(); ++i)
    plan.locations[graph.inputs()[i]] = {Location::Input, i, 0};

  // A graph output is written in place by its producer unless it is a graph input, a
  // constant, listed twice, or the view of another value; those are copied at the end.
  std::unordered_set<const ir::Value*> homed;
  for (size_t j = 0; j < graph.outputs().size(); ++j) {
    const ir::Value* v = graph.outputs()[j];
    if (v->producer() && !homed.count(v)) {
      plan.locations[v] = {Location::Output, j, 0};
      homed.insert(v);
    } else {
      plan.final_copies.emplace_back(j, v);
    }
  }

  // Aliases: a view shares its root's storage; the root then lives as long as any view.
  // In-place results (below) join their input's root the same way; chains are followed.
  std::unordered_map<const ir::Value*, const ir::Value*> root;
  auto root_of = [&](const ir::Value* v) {
    for (auto it = root.find(v); it != root.end(); it = root.find(v)) v = it->second;
    return v;
  };
  for (const auto& n : graph.nodes()) {
    const Emitter* e = registry.find(n->op());
    if (e->alias_input >= 0 && !homed.count(n->output(0))) {
      plan.lowering[n.get()] = Lowering::Alias;
      root[n->output(0)] = root_of(n->input(static_cast<size_t>(e->alias_input)));
    } else {
      plan.lowering[n.get()] = e->alias_input >= 0 ? Lowering::Copy : Lowering::Emit;
    }
  }

  // Constants that code reads go into the weights blob.
  auto place_weight = [&](const ir::Value* v) {
    if (v && v->is_constant() && !plan.locations.count(v))
      plan.locations[v] = weights.add(v->constant());
  };
  for (const auto& n : graph.nodes()) {
    if (plan.lowering[n.get()] == Lowering::Alias) continue;
    const Emitter* e = registry.find(n->op());
    for (size_t i = 0; i < n->num_inputs(); ++i) {
      const ir::Value* v = n->input(i);
      const bool packed = device && device->on_device(*n) ? !device->reads_weight(*n, i) : packs_item_input(*e, *n, i);
      if (v && v->is_constant() && packed) continue;  // packed at emission
      place_weight(root_of(v));
    }
  }
  for (const auto& [j, v] : plan.final_copies) place_weight(root_of(v));

  plan.views = root.size();

  // Last step that reads each storage root (graph outputs copied at the end: past the end).
  std::unordered_map<const ir::Value*, int> last_read;
  {
    int s = 0;
    for (const auto& n : graph.nodes()) {
      for (const ir::Value* v : n->inputs())
        if (v) last_read[root_of(v)] = s;
      ++s;
    }
    for (const auto& [j, v] : plan.final_copies) last_read[root_of(v)] = static_cast<int>(graph.nodes().size());
  }

  // Lifetimes of arena values (roots only) and of per-node scratch, in node steps.
  std::unordered_map<const ir::Value*, std::pair<int, int>> life;
  int step = 0;
  const int end = static_cast<int>(graph.nodes().size());
  std::vector<passes::BufferRequest> requests;
  std::vector<const ir::Node*> scratch_nodes;
  for (const auto& n : graph.nodes()) {
    for (const ir::Value* v : n->inputs())
      if (v) {
        auto it = life.find(root_of(v));
        if (it != life.end()) it->second.second = std::max(it->second.second, step);
      }
    // In place: an elementwise result takes the storage of an arena input that dies here.
    bool in_place = false;
    if (plan.lowering[n.get()] == Lowering::Emit && !plan.locations.count(n->output(0)))
      for (size_t i = 0; i < n->num_inputs() && !in_place; ++i) {
        if (!may_write_over(*n, i)) continue;
        const ir::Value* r = root_of(n->input(i));
        if (!life.count(r) || last_read[r] != step || value_bytes(r) != value_bytes(n->output(0))) continue;
        root[n->output(0)] = r;
        last_read[r] = last_read.count(n->output(0)) ? last_read[n->output(0)] : step;
        in_place = true;
        ++plan.in_place;
      }
    if (plan.lowering[n.get()] != Lowering::Alias && !in_place)
      for (const ir::Value* out : n->outputs())
        if (!plan.locations.count(out)) life[out] = {step, step};
    const Emitter* e = registry.find(n->op());
    const bool on_device = device && device->on_device(*n);
    if ((e->scratch_bytes || is_control_flow(*n) || on_device) && plan.lowering[n.get()] == Lowering::Emit) {
      size_t bytes = on_device               ? device->scratch_bytes(*n)
                     : is_control_flow(*n) ? control_flow_scratch(*n, bodies)
                                           : item_scratch_bytes(*e, *n, options);
      if (bytes > 0) {
        requests.push_back({bytes, step, step});
        scratch_nodes.push_back(n.get());
      }
    }
    ++step;
  }
  for (const auto& [j, v] : plan.final_copies) {
    auto it = life.find(root_of(v));
    if (it != life.end()) it->second.second = end;
  }

  // Deterministic order: by first step, then by name.
  std::vector<const ir::Value*> arena_values;
  for (const auto& [v, l] : life) arena_values.push_back(v);
  std::sort(arena_values.begin(), arena_values.end(), [&](const ir::Value* a, const ir::Value* b) {
    if (life[a].first != life[b].first) return life[a].first < life[b].first;
    return a->name() < b->name();
  });
  size_t n_scratch = requests.size();
  for (const ir::Value* v : arena_values)
    requests.push_back({value_bytes(v), life[v].first, life[v].second});
  plan.memory = passes::plan_memory(requests, kAlign);
  plan.requests = requests;
  for (size_t i = 0; i < n_scratch; ++i) plan.scratch[scratch_nodes[i]] = plan.memory.offsets[i];
  for (size_t i = 0; i < arena_values.size(); ++i)
    plan.locations[arena_values[i]] = {Location::Arena, 0, plan.memory.offsets[n_scratch + i]};
  plan.arena_values = arena_values;

  for (const auto& [view, r] : root) plan.locations[view] = plan.locations.at(root_of(view));
  return plan;
}

namespace {

// The statements of a test hook (TestHooks) for node `n`, after its kernel call.
void emit_test_hooks(EmitContext& ctx, const ir::Node& n, const TestHooks& hooks) {
  if (n.name() == hooks.perturb_node) {
    const ir::Value* v = n.output(0);
    if (!ir::is_float(v->dtype()))
      fail("test hook: cannot perturb {}: its output is {}, not a float type", n.describe(),
           ir::dtype_name(v->dtype()));
    ctx.line(fmt::format("for (size_t i = 0; i < static_cast<size_t>({}); ++i) {}[i] += {};  // test hook: perturbed",
                         ctx.numel(v), ctx.out(n, 0), float_literal(hooks.perturb_delta, v->dtype())));
  }
  if (n.name() == hooks.delay_node)
    ctx.line(fmt::format("for (const uint64_t until = kiln::rt::now_ns() + {}; kiln::rt::now_ns() < until;) {{}}  "
                         "// test hook: delayed",
                         static_cast<uint64_t>(hooks.delay_ms * 1e6)));
}

// Fails when a test hook names a node the generated code does not run.
void check_test_hooks(const ir::Graph& graph, const TestHooks& hooks, const Plan& plan) {
  for (const std::string* name : {&hooks.perturb_node, &hooks.delay_node}) {
    if (name->empty()) continue;
    bool found = false;
    for (const auto& n : graph.nodes())
      if (n->name() == *name && plan.lowering.at(n.get()) != Lowering::Alias) found = true;
    if (!found)
      fail("test hook: no node '{}' with a kernel call in the optimized graph (see kiln inspect --plan)", *name);
  }
}

// What emitting one graph (the main graph or a control-flow body) produced.
struct GraphCode {
  Plan plan;
  std::string body, copies, node_names, node_ops;
  size_t timed = 0;  // nodes with a kernel call
};

// The weights and the emission context shared by the main graph and every body, and the
// functions generated for the bodies (innermost first, each before its callers).
class ModelCode {
 public:
  ModelCode(const EmitOptions& emit, passes::Precision precision, std::string name, const TestHooks* hooks,
            DeviceLowering* device = nullptr)
      : weights(precision), ctx({}, {}, emit, &weights), name_(std::move(name)), hooks_(hooks), device_(device) {}

  GraphCode emit(const ir::Graph& graph, bool main) {
    for (const auto& n : graph.nodes())
      if (is_control_flow(*n))
        for (const ir::Graph* b : bodies_of(*n))
          if (!bodies.count(b)) add_body(*b);
    GraphCode code;
    DeviceLowering* device = main ? device_ : nullptr;  // bodies run on the host
    code.plan = plan_graph(graph, weights, ctx.options(), bodies, device);
    Plan& plan = code.plan;
    if (main && hooks_) check_test_hooks(graph, *hooks_, plan);
    ctx.set_graph(plan.locations, plan.scratch);
    if (device) device->begin(ctx, plan, weights);
    for (const auto& n : graph.nodes()) {
      Lowering how = plan.lowering[n.get()];
      if (how == Lowering::Alias) continue;  // a view: nothing to run
      ctx.begin_node(*n);
      ctx.line("const uint64_t kiln_t0 = kiln::rt::node_begin(prof);");
      const bool on_device = device && device->on_device(*n);
      if (on_device) device->emit(ctx, *n);
      else if (device) device->before_host(ctx, *n);
      if (on_device)
        ;
      else if (how == Lowering::Copy)
        ctx.line(fmt::format("std::memcpy({}, {}, {});", ctx.out(*n, 0), ctx.in(*n, 0), run_bytes(ctx, n->output(0))));
      else if (is_control_flow(*n))
        emit_control_flow(ctx, *n, bodies);
      else
        emit_node(ctx, *emitters().find(n->op()), *n);
      if (device && !on_device) device->after_host(ctx, *n);
      if (main && hooks_) emit_test_hooks(ctx, *n, *hooks_);
      ctx.line(fmt::format("kiln::rt::node_end(prof, {}, run_start, kiln_t0);", code.timed++));
      ctx.end_node();
      code.node_names += fmt::format("    {},\n", string_literal(n->name()));
      code.node_ops += fmt::format("    {},\n", string_literal(n->op()));
    }
    if (device) device->end(ctx, plan.final_copies);
    for (const auto& [j, v] : plan.final_copies)
      if (!device) code.copies += fmt::format("  std::memcpy(out[{}], {}, {});  // output '{}'\n", j, ctx.value_ptr(v, false),
                                 run_bytes(ctx, v), comment_text(v->name()));
    code.body = ctx.body();
    return code;
  }

  // The body functions, once the weights (and so what they need widened) are final.
  std::string body_functions(const WidenCode& widen) const {
    std::string text = functions_;
    for (size_t at; (at = text.find(kWidenMarker)) != std::string::npos;) text.replace(at, kWidenMarker.size(), widen.run);
    return text;
  }

  WeightBlob weights;
  EmitContext ctx;
  BodyFunctions bodies;

 private:
  static constexpr std::string_view kWidenMarker = "@KILN_WIDEN_RUN@";

  void add_body(const ir::Graph& g) {
    GraphCode code = emit(g, false);
    const std::string fn = fmt::format("kiln_body_{}", bodies.size());
    functions_ += fmt::format(R"cpp(// Body '{comment}' of a control-flow node: {nodes} nodes, {arena} bytes of arena.
int {fn}({N}_context* ctx, unsigned char* const A, const void* const* in, void* const* out) {{
  const unsigned char* const W = ctx->weights;
  const int64_t* const D = ctx->dims;  // the symbolic dims of this run
  (void)D;
  kiln::rt::ThreadPool* const pool = &ctx->pool_storage;
  kiln::rt::NodeTime* const prof = nullptr;  // a body's nodes are timed as part of their node
  const uint64_t run_start = 0;
  (void)run_start;
{widen}  (void)A;
  (void)W;
  (void)pool;
  (void)in;
  (void)out;
{body}{copies}  return 0;
}}

)cpp",
                              fmt::arg("comment", comment_text(g.name())), fmt::arg("nodes", g.nodes().size()),
                              fmt::arg("arena", code.plan.memory.arena_size), fmt::arg("fn", fn), fmt::arg("N", name_),
                              fmt::arg("widen", kWidenMarker), fmt::arg("body", code.body),
                              fmt::arg("copies", code.copies));
    bodies[&g] = {fn, code.plan.memory.arena_size};
  }

  std::string name_;
  const TestHooks* hooks_;
  DeviceLowering* device_;
  std::string functions_;
};

// The inputs' and outputs' shapes at run time: the tables that check an input's extents
// against its bounds and the function that binds the symbolic dims (D) from them and
// computes the outputs' extents. A model without symbolic dims has the same code, its
// minima equal to its maxima.
std::string shape_code(const ir::Graph& graph, const EmitContext& ctx, const std::string& N) {
  const ir::DimRanges& ranges = graph.dim_ranges();
  std::vector<std::string> sym, lo, hi, step, off, names;
  size_t at = 0;
  for (const ir::Value* v : graph.inputs()) {
    off.push_back(std::to_string(at));
    for (const ir::Dim& d : v->shape().dims()) {
      // A symbol, or a stepped dim: step * symbol (passes::set_dim_ranges).
      const auto scaled = d.scaled_symbol();
      auto it = scaled ? ranges.find(scaled->first) : ranges.end();
      if (!d.is_static() && it == ranges.end())
        fail("input '{}': its dim {} is neither a number nor a bounded symbolic dim", v->name(), d.name());
      const int64_t k = scaled ? scaled->second : 1;
      sym.push_back(it == ranges.end() ? "-1" : std::to_string(std::distance(ranges.begin(), it)));
      lo.push_back(std::to_string(d.is_static() ? d.value() : it->second.min * k));
      hi.push_back(std::to_string(d.is_static() ? d.value() : it->second.max * k));
      step.push_back(std::to_string(k));
      ++at;
    }
  }
  off.push_back(std::to_string(at));
  for (const auto& [name, r] : ranges) names.push_back(string_literal(name));
  std::string outputs;
  size_t out_at = 0;
  std::vector<std::string> out_off;
  for (const ir::Value* v : graph.outputs()) {
    out_off.push_back(std::to_string(out_at));
    for (const ir::Dim& d : v->shape().dims()) outputs += fmt::format("  O[{}] = {};\n", out_at++, ctx.dim(d));
  }
  out_off.push_back(std::to_string(out_at));
  // Data-dependent dims start at their capacity: the outputs' shapes before a run are the
  // buffers they need; after a run, the sizes found.
  std::string capacities;
  bool data_dependent = false;
  for (const auto& [name, r] : ranges)
    if (r.data_dependent) {
      capacities += fmt::format("  D[{}] = {};  // '{}': its capacity until a run sets it\n",
                                std::distance(ranges.begin(), ranges.find(name)), r.max, comment_text(name));
      data_dependent = true;
    }
  auto list = [](const std::vector<std::string>& v) { return v.empty() ? std::string("0") : fmt::format("{}", fmt::join(v, ", ")); };
  return fmt::format(R"cpp(constexpr size_t kNumDims = {n_dims};  // symbolic dims bounded at compile time
const char* const kDimNames[] = {{{names}nullptr}};
// Input i's axes are kIn*[kInAt[i] .. kInAt[i + 1]): the symbolic dim each reads (-1: a
// number) and its bounds.
const size_t kInAt[] = {{{in_at}}};
const int kInSym[] = {{{in_sym}}};
const int64_t kInMin[] = {{{in_min}}};
const int64_t kInMax[] = {{{in_max}}};
// A stepped dim's step (--dim H=32..960:32): its symbol counts steps.
const int64_t kInStep[] = {{{in_step}}};
const size_t kOutAt[] = {{{out_at}}};
constexpr size_t kInDims = {in_dims}, kOutDims = {out_dims};
// True when a node sets a dim while the model runs (NonZero's count): the outputs' extents
// are then computed again after each run.
constexpr bool kDataDependentDims = {data_dependent};

// The outputs' extents from the symbolic dims D.
void output_shapes(const int64_t* D, int64_t* O) {{
  (void)D;
  (void)O;
{outputs}}}

// Binds the symbolic dims from the inputs' extents and computes the outputs' (their
// capacities, where a dim depends on the data).
int bind_shapes({N}_context* ctx) {{
  if (ctx->shapes_bound) return 0;
  int64_t D[kNumDims + 1] = {{}};
  size_t seen[kNumDims + 1];
  for (size_t k = 0; k <= kNumDims; ++k) seen[k] = SIZE_MAX;
  for (size_t i = 0; i + 1 < sizeof kInAt / sizeof kInAt[0]; ++i)
    for (size_t a = kInAt[i]; a < kInAt[i + 1]; ++a) {{
      const int s = kInSym[a];
      if (s < 0) continue;
      const int64_t v = ctx->in_shape[a] / kInStep[a];
      if (seen[s] != SIZE_MAX && D[s] != v) {{
        ctx->error = std::string("inputs '") + {N}_input_name(seen[s]) + "' and '" + {N}_input_name(i) +
                     "' disagree on the symbolic dim '" + kDimNames[s] + "': " + std::to_string(D[s]) + " and " +
                     std::to_string(v);
        return 1;
      }}
      D[s] = v;
      seen[s] = i;
    }}
{capacities}  for (size_t k = 0; k < kNumDims; ++k) ctx->dims[k] = D[k];
  output_shapes(D, ctx->out_capacity);
  for (size_t k = 0; k < kOutDims; ++k) ctx->out_shape[k] = ctx->out_capacity[k];
  ctx->shapes_bound = true;
  return 0;
}}

int set_input_shape({N}_context* ctx, size_t i, int rank, const int64_t* dims) {{
  if (i >= {N}_num_inputs()) return fail(ctx, "no such input");
  const size_t at = kInAt[i], n = kInAt[i + 1] - at;
  if (rank < 0 || static_cast<size_t>(rank) != n || (rank > 0 && !dims)) {{
    ctx->error = std::string("input '") + {N}_input_name(i) + "': rank " + std::to_string(rank) + ", the model's is " +
                 std::to_string(n);
    return 1;
  }}
  for (size_t a = 0; a < n; ++a)
    if (dims[a] < kInMin[at + a] || dims[a] > kInMax[at + a] || dims[a] % kInStep[at + a] != 0) {{
      const int s = kInSym[at + a];
      if (s >= 0 && kInStep[at + a] > 1) {{
        const std::string dim_name(kDimNames[s]);
        ctx->error = std::string("input '") + {N}_input_name(i) + "': dim " + std::to_string(a) + " is " +
                     std::to_string(dims[a]) + ", outside the bounds of '" + dim_name.substr(0, dim_name.rfind('/')) +
                     "', " + std::to_string(kInMin[at + a]) + ".." + std::to_string(kInMax[at + a]) + " in steps of " +
                     std::to_string(kInStep[at + a]);
        return 1;
      }}
      ctx->error = std::string("input '") + {N}_input_name(i) + "': dim " + std::to_string(a) + " is " +
                   std::to_string(dims[a]) +
                   (kInSym[at + a] < 0 ? ", the model's is " + std::to_string(kInMax[at + a])
                                       : std::string(", outside the bounds of '") + kDimNames[kInSym[at + a]] +
                                             "', " + std::to_string(kInMin[at + a]) + ".." +
                                             std::to_string(kInMax[at + a]));
      return 1;
    }}
  for (size_t a = 0; a < n; ++a) ctx->in_shape[at + a] = dims[a];
  ctx->shapes_bound = false;
  return 0;
}}
)cpp",
                     fmt::arg("n_dims", ranges.size()), fmt::arg("names", names.empty() ? "" : fmt::format("{}, ", fmt::join(names, ", "))),
                     fmt::arg("in_at", list(off)), fmt::arg("in_sym", list(sym)), fmt::arg("in_min", list(lo)),
                     fmt::arg("in_max", list(hi)), fmt::arg("in_step", list(step)), fmt::arg("out_at", list(out_off)),
                     fmt::arg("in_dims", std::max<size_t>(at, 1)), fmt::arg("out_dims", std::max<size_t>(out_at, 1)),
                     fmt::arg("N", N), fmt::arg("outputs", outputs), fmt::arg("capacities", capacities),
                     fmt::arg("data_dependent", data_dependent ? "true" : "false"));
}

std::string model_source(const ir::Graph& graph, const CppOptions& options, ModelCode& model, const GraphCode& main,
                         const DeviceCode& dev) {
  const Plan& plan = main.plan;
  const std::string& node_names = main.node_names;
  const std::string& node_ops = main.node_ops;
  const size_t timed = main.timed;
  const std::string& copies = main.copies;
  const EmitContext& ctx = model.ctx;
  model.weights.pad_if_empty();
  const WidenCode widen = widen_code(model.weights);
  const std::string& N = options.name;
  std::string weights_decl =
      options.external_weights
          ? ""
          : fmt::format("extern \"C\" const unsigned char kiln_{}_weights[];  // {}_weights.cpp\n\n", N, N);
  std::string load_weights =
      options.external_weights
          ? fmt::format(R"cpp(  const char* path = options && options->weights_path ? options->weights_path : "{0}.weights";
  if (!ctx->mapped.open(path, ctx->error)) return ctx;
  if (ctx->mapped.size() != kWeightsBytes) {{
    ctx->error = std::string(path) + ": weights file has " + std::to_string(ctx->mapped.size()) +
                 " bytes, model {0} needs " + std::to_string(kWeightsBytes);
    return ctx;
  }}
  ctx->weights = ctx->mapped.data();
)cpp",
                        N)
          : fmt::format("  ctx->weights = kiln_{}_weights;\n", N);

  size_t in_dims = 0, out_dims = 0;
  for (const ir::Value* v : graph.inputs()) in_dims += v->shape().rank();
  for (const ir::Value* v : graph.outputs()) out_dims += v->shape().rank();
  std::string hooks_note;
  if (!options.test_hooks.perturb_node.empty() || !options.test_hooks.delay_node.empty())
    hooks_note = "// TEST BUILD: a KILN_TEST_* hook made this model deliberately wrong or slow.\n";
  return fmt::format(R"cpp(// Generated by kiln {version} from {source}; do not edit.
// Model '{N}': {nodes} nodes, {weights} bytes of weights, {arena} bytes of arena
// (lower bound {lower}, unplanned {naive}).
{widen_note}{hooks_note}{dev_prelude}#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <cmath>
#include <limits>
#include <new>
#include <string>

#include "kiln/rt/kiln_rt.h"
#include "kiln/rt/mapped_file.h"
{widen_include}{dev_includes}#include "{N}.h"

{weights_decl}struct {N}_context {{
  explicit {N}_context(int threads) : pool_storage(threads < 1 ? kiln::rt::physical_core_count() : threads) {{}}
  kiln::rt::ThreadPool pool_storage;
  unsigned char* arena = nullptr;
  bool owns_arena = false;
  const unsigned char* weights = nullptr;
{widen_member}  kiln::rt::MappedFile mapped;
  std::string error;
  kiln::rt::NodeTime* times = nullptr;  // per-node timings, while profiling
  bool profiling = false;
  bool profiled = false;                // times hold a complete run
  // The run's shapes (--dim NAME=MIN..MAX): the inputs' extents as set, the symbolic dims
  // bound from them (D in the generated code) and the outputs' extents.
  int64_t in_shape[{in_dims}] = {{}};
  int64_t dims[{n_dims}] = {{}};
  int64_t out_shape[{out_dims}] = {{}};     // after a run: the extents it produced
  int64_t out_capacity[{out_dims}] = {{}};  // the extents output buffers must have
  bool shapes_bound = false;
{dev_members}}};

namespace {{

constexpr size_t kArenaBytes = {arena};
constexpr size_t kWeightsBytes = {weights};
{widen_decls}constexpr size_t kNumNodes = {timed};  // nodes with a kernel call, in run order
const char* const kNodeNames[] = {{
{node_names}    nullptr}};
const char* const kNodeOps[] = {{
{node_ops}    nullptr}};

{arrays}
{functions}
int fail({N}_context* ctx, const char* message) {{
  ctx->error = message;
  return 1;
}}

{shape_code}
{dev_functions}{bodies}int run_graph({N}_context* ctx, const void* const* in, void* const* out) {{
  unsigned char* const A = ctx->arena;
  const unsigned char* const W = ctx->weights;
  kiln::rt::ThreadPool* const pool = &ctx->pool_storage;
  kiln::rt::NodeTime* const prof = ctx->profiling ? ctx->times : nullptr;  // null: profiling off
  const uint64_t run_start = prof ? kiln::rt::now_ns() : 0;
  const int64_t* const D = ctx->dims;  // the symbolic dims of this run
  (void)run_start;
  (void)D;
{dev_prologue}{widen_run}  (void)A;
  (void)W;
  (void)pool;
  (void)in;
{body}{copies}  return 0;
}}

}}  // namespace

extern "C" {{

{N}_context* {N}_create(const {N}_options* options) {{
  int threads = options && options->threads > 0 ? options->threads : 1;
  {N}_context* ctx = new (std::nothrow) {N}_context(threads);
  if (!ctx) return nullptr;
  for (size_t a = 0; a < kInAt[{N}_num_inputs()]; ++a) ctx->in_shape[a] = kInMax[a];  // the maxima until set
{load_weights}{widen_create}  if (options && options->arena) {{
    if (options->arena_size < kArenaBytes || reinterpret_cast<uintptr_t>(options->arena) % 64 != 0) {{
      ctx->error = "the caller's arena must be 64-byte aligned and hold " + std::to_string(kArenaBytes) + " bytes";
      return ctx;
    }}
    ctx->arena = static_cast<unsigned char*>(options->arena);
  }} else {{
    ctx->arena = static_cast<unsigned char*>(std::aligned_alloc(64, (kArenaBytes + 63) / 64 * 64 + 64));
    ctx->owns_arena = true;
    if (!ctx->arena) ctx->error = "out of memory allocating the arena";
  }}
{dev_create}  return ctx;
}}

int {N}_run({N}_context* ctx, const void* const* inputs, void* const* outputs) {{
  if (!ctx) return 1;
  if (!ctx->arena || !ctx->weights{widen_check}{dev_check}) return 1;  // creation failed: see {N}_error
  if (!inputs || !outputs) return fail(ctx, "inputs and outputs must not be null");
  for (size_t i = 0; i < {N}_num_inputs(); ++i)
    if (!inputs[i]) return fail(ctx, "an input pointer is null");
  for (size_t i = 0; i < {N}_num_outputs(); ++i)
    if (!outputs[i]) return fail(ctx, "an output pointer is null");
  ctx->error.clear();
  if (bind_shapes(ctx) != 0) return 1;
  try {{
    const int rc = {run_call};
    ctx->profiled = rc == 0 && ctx->profiling;
    if (rc == 0 && kDataDependentDims) output_shapes(ctx->dims, ctx->out_shape);
    return rc;
  }} catch (...) {{
    return fail(ctx, "unexpected failure while running the model");
  }}
}}

int {N}_run_checked({N}_context* ctx, const {N}_tensor* inputs, size_t n_inputs, const {N}_tensor* outputs, size_t n_outputs) {{
  if (!ctx) return 1;
  if (n_inputs != {N}_num_inputs() || n_outputs != {N}_num_outputs()) {{
    ctx->error = "model {N} takes " + std::to_string({N}_num_inputs()) + " inputs and " +
                 std::to_string({N}_num_outputs()) + " outputs, got " + std::to_string(n_inputs) +
                 " and " + std::to_string(n_outputs);
    return 1;
  }}
  const void* in[{n_in_array}];
  void* out[{n_out_array}];
  // Inputs first: their extents (within the bounds) decide the outputs'.
  for (size_t k = 0; k < n_inputs + n_outputs; ++k) {{
    bool is_in = k < n_inputs;
    size_t i = is_in ? k : k - n_inputs;
    if (!is_in && bind_shapes(ctx) != 0) return 1;
    const {N}_tensor& t = is_in ? inputs[i] : outputs[i];
    const char* name = is_in ? {N}_input_name(i) : {N}_output_name(i);
    int dtype = is_in ? {N}_input_dtype(i) : {N}_output_dtype(i);
    int rank = is_in ? {N}_input_rank(i) : {N}_output_rank(i);
    const int64_t* dims = is_in ? ctx->in_shape + kInAt[i] : ctx->out_capacity + kOutAt[i];
    bool same = t.data && t.dtype == dtype && t.rank == rank && (rank == 0 || t.dims);
    for (int d = 0; same && d < rank; ++d)
      same = is_in ? kInSym[kInAt[i] + d] >= 0 || t.dims[d] == kInMax[kInAt[i] + d] : t.dims[d] == dims[d];
    if (!same) {{
      ctx->error = std::string(is_in ? "input '" : "output '") + name + "': " +
                   (t.data ? "dtype or shape does not match the model's" : "data pointer is null");
      return 1;
    }}
    if (is_in && set_input_shape(ctx, i, t.rank, t.dims) != 0) return 1;
    if (is_in) in[i] = t.data; else out[i] = t.data;
  }}
  return {N}_run(ctx, in, out);
}}

int {N}_set_input_shape({N}_context* ctx, size_t i, int rank, const int64_t* dims) {{
  if (!ctx) return 1;
  return set_input_shape(ctx, i, rank, dims);
}}

const int64_t* {N}_output_shape({N}_context* ctx, size_t i) {{
  if (!ctx || i >= {N}_num_outputs() || bind_shapes(ctx) != 0) return nullptr;
  return ctx->out_shape + kOutAt[i];
}}

const int64_t* {N}_input_shape(const {N}_context* ctx, size_t i) {{
  if (!ctx || i >= {N}_num_inputs()) return nullptr;
  return ctx->in_shape + kInAt[i];
}}

const int64_t* {N}_input_min_dims(size_t i) {{ return i < {N}_num_inputs() ? kInMin + kInAt[i] : nullptr; }}
const int64_t* {N}_input_dim_steps(size_t i) {{ return i < {N}_num_inputs() ? kInStep + kInAt[i] : nullptr; }}

const char* {N}_error(const {N}_context* ctx) {{
  if (!ctx) return "no context (out of memory)";
  return ctx->error.empty() ? nullptr : ctx->error.c_str();
}}

void {N}_destroy({N}_context* ctx) {{
  if (!ctx) return;
  if (ctx->owns_arena) std::free(ctx->arena);
{widen_destroy}{dev_destroy}  delete[] ctx->times;
  delete ctx;
}}

int {N}_set_profiling({N}_context* ctx, int on) {{
  if (!ctx) return 1;
  if (on && !ctx->times) {{
    ctx->times = new (std::nothrow) kiln::rt::NodeTime[kNumNodes + 1]();
    if (!ctx->times) return fail(ctx, "out of memory allocating the profile");
  }}
  ctx->profiling = on != 0;
  ctx->profiled = false;
  return 0;
}}

size_t {N}_num_nodes(void) {{ return kNumNodes; }}
const char* {N}_node_name(size_t i) {{ return i < kNumNodes ? kNodeNames[i] : nullptr; }}
const char* {N}_node_op(size_t i) {{ return i < kNumNodes ? kNodeOps[i] : nullptr; }}

int {N}_node_time(const {N}_context* ctx, size_t i, uint64_t* start_ns, uint64_t* duration_ns) {{
  if (!ctx || !ctx->profiled || i >= kNumNodes || !start_ns || !duration_ns) return 1;
  *start_ns = ctx->times[i].start_ns;
  *duration_ns = ctx->times[i].duration_ns;
  return 0;
}}

size_t {N}_arena_size(void) {{ return kArenaBytes; }}
{dev_api}
}}  // extern "C"
{dev_epilogue})cpp",
                     fmt::arg("version", KILN_VERSION_STRING), fmt::arg("source", options.source_model),
                     fmt::arg("N", N), fmt::arg("nodes", graph.nodes().size()),
                     fmt::arg("weights", model.weights.bytes().size()), fmt::arg("arena", plan.memory.arena_size),
                     fmt::arg("lower", plan.memory.lower_bound), fmt::arg("naive", plan.memory.naive_size),
                     fmt::arg("weights_decl", weights_decl), fmt::arg("arrays", ctx.arrays()), fmt::arg("functions", ctx.functions()),
                     fmt::arg("body", main.body), fmt::arg("copies", copies),
                     fmt::arg("bodies", model.body_functions(widen)),
                     fmt::arg("load_weights", load_weights),
                     fmt::arg("n_in_array", std::max<size_t>(graph.inputs().size(), 1)),
                     fmt::arg("n_out_array", std::max<size_t>(graph.outputs().size(), 1)),
                     fmt::arg("hooks_note", hooks_note), fmt::arg("timed", timed),
                     fmt::arg("node_names", node_names), fmt::arg("node_ops", node_ops),
                     fmt::arg("widen_note", widen.note), fmt::arg("widen_include", widen.include),
                     fmt::arg("widen_member", widen.member), fmt::arg("widen_decls", widen.decls),
                     fmt::arg("widen_run", widen.run), fmt::arg("widen_create", widen.create),
                     fmt::arg("widen_check", widen.check), fmt::arg("widen_destroy", widen.destroy),
                     fmt::arg("shape_code", shape_code(graph, ctx, N)), fmt::arg("in_dims", std::max<size_t>(in_dims, 1)),
                     fmt::arg("out_dims", std::max<size_t>(out_dims, 1)),
                     fmt::arg("n_dims", graph.dim_ranges().size() + 1), fmt::arg("dev_includes", dev.includes),
                     fmt::arg("dev_members", dev.context_members), fmt::arg("dev_functions", dev.functions),
                     fmt::arg("dev_prologue", dev.run_prologue), fmt::arg("dev_create", dev.create),
                     fmt::arg("dev_check", dev.check),
                     fmt::arg("run_call", dev.run_call.empty() ? "run_graph(ctx, inputs, outputs)" : dev.run_call),
                     fmt::arg("dev_destroy", dev.destroy), fmt::arg("dev_api", dev.api),
                     fmt::arg("dev_prelude", dev.device_prelude.empty()
                                                 ? std::string()
                                                 : dev.device_prelude +
                                                       "\n// The host's code: not parsed by the device passes.\n#if !defined(__CUDA_ARCH__)\n"),
                     fmt::arg("dev_epilogue", dev.device_prelude.empty() ? "" : "#endif  // !defined(__CUDA_ARCH__)\n"));
}

}  // namespace

std::string c_identifier(const std::string& name) {
  std::string id;
  for (char c : name) id += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (id.empty() || std::isdigit(static_cast<unsigned char>(id[0]))) id = "m" + id;
  return id;
}

bool is_reserved_name(const std::string& id) {
  // The keywords of C23 and C++20, C++'s alternative operator names, and macros of the C
  // and POSIX headers (or of GCC in GNU modes) that would replace the wrapper class's name.
  static const char* const reserved[] = {
      "alignas", "alignof", "and", "and_eq", "asm", "atomic_cancel", "atomic_commit", "atomic_noexcept",
      "auto", "bitand", "bitor", "bool", "break", "case", "catch", "char", "char8_t", "char16_t", "char32_t",
      "class", "co_await", "co_return", "co_yield", "compl", "concept", "const", "consteval", "constexpr",
      "constinit", "const_cast", "continue", "decltype", "default", "delete", "do", "double", "dynamic_cast",
      "else", "enum", "explicit", "export", "extern", "false", "float", "for", "friend", "goto", "if", "inline",
      "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq", "nullptr", "operator", "or",
      "or_eq", "private", "protected", "public", "reflexpr", "register", "reinterpret_cast", "requires",
      "restrict", "return", "short", "signed", "sizeof", "static", "static_assert", "static_cast", "struct",
      "switch", "synchronized", "template", "this", "thread_local", "throw", "true", "try", "typedef", "typeid",
      "typename", "typeof", "typeof_unqual", "union", "unsigned", "using", "virtual", "void", "volatile",
      "wchar_t", "while", "xor", "xor_eq", "_Alignas", "_Alignof", "_Atomic", "_BitInt", "_Bool", "_Complex",
      "_Decimal32", "_Decimal64", "_Decimal128", "_Generic", "_Imaginary", "_Noreturn", "_Static_assert",
      "_Thread_local",
      "NULL", "EOF", "assert", "errno", "offsetof", "linux", "unix", "i386"};
  for (const char* r : reserved)
    if (id == r) return true;
  return false;
}

namespace {

// 64-bit FNV-1a: NAME.h's KILN_MODEL_<NAME>_HASH (an identity, not a security measure).

// Every dim a number, or a polynomial of symbols bounded with --dim NAME=MIN..MAX.
bool all_bounded(const std::vector<ir::Value*>& values, const ir::DimRanges& ranges) {
  for (const ir::Value* v : values)
    if (v && (!v->has_type() || !v->shape().max_numel(ranges))) return false;
  return true;
}

bool all_static(const std::vector<ir::Value*>& values) {
  for (const ir::Value* v : values)
    if (v && (!v->has_type() || !v->shape().is_static())) return false;
  return true;
}

}  // namespace

namespace {

// The problems of one graph (`where` prefixes those of a body), bodies included.
void collect_problems(const ir::Graph& graph, const std::string& where, std::vector<std::string>& problems) {
  // Symbolic dims of graph inputs are the root of every other non-static shape; each must be
  // pinned or bounded.
  const ir::DimRanges& ranges = graph.dim_ranges();
  if (where.empty())
    for (const ir::Value* v : graph.inputs()) {
      bool ok = true;
      for (const ir::Dim& d : v->shape().dims()) {
        const auto scaled = d.scaled_symbol();  // a symbol, or a stepped dim: step * symbol
        ok = ok && (d.is_static() || (scaled && ranges.count(scaled->first)));
      }
      if (!ok)
        problems.push_back(fmt::format(
            "input '{}' has shape {}: give each symbolic dim a value with --dim NAME=VALUE, or bounds with --dim "
            "NAME=MIN..MAX",
            v->name(), v->shape().str()));
    }
  // One line per problem (op and reason), listing its nodes. Nodes whose inputs are not
  // static yet are judged once those are.
  std::map<std::string, std::vector<std::string>> by_reason;
  for (const auto& n : graph.nodes()) {
    const Emitter* e = emitters().find(n->op());
    std::string reason;
    if (!e) {
      reason = "no C++ code generator";
    } else if (all_bounded(n->inputs(), ranges)) {
      // Outputs whose shape is not even bounded keep their own message (which the conformance
      // runner answers by making shape inputs constants).
      const bool outputs_bounded = all_bounded(n->outputs(), ranges);
      const bool symbolic = !all_static(n->inputs()) || !all_static(n->outputs());
      try {
        if (symbolic && outputs_bounded && !e->dynamic_shapes && !item_batch(*e, *n))
          reason = "no code for symbolic dims yet (pin them with --dim NAME=VALUE)";
        else
          reason = unsupported_reason(*e, *n);
      } catch (const Error& err) {
        reason = err.what();
      }
      if (reason.empty() && !outputs_bounded)
        reason = n->op() == "Loop" ? "its scan outputs' length depends on when the loop stops, known only at run time"
                                   : "its output shape depends on input values, which must be known at compile time";
    }
    if (!reason.empty()) by_reason[fmt::format("{}{}: {}", where, n->op(), reason)].push_back(n->name());
    if (is_control_flow(*n))
      for (const ir::Graph* b : bodies_of(*n))
        collect_problems(*b, fmt::format("{}{} body '{}': ", where, n->describe(), b->name()), problems);
  }
  for (const auto& [reason, names] : by_reason) {
    std::vector<std::string> shown(names.begin(), names.begin() + std::min<size_t>(names.size(), 8));
    problems.push_back(fmt::format("{} (nodes: {}{})", reason, fmt::join(shown, ", "),
                                   names.size() > shown.size() ? fmt::format(" and {} more", names.size() - shown.size()) : ""));
  }
  if (problems.empty())
    for (const auto& v : graph.values())
      if (!v->has_type() || !v->shape().max_numel(ranges))
        problems.push_back(fmt::format("{}value '{}' has no static or bounded type", where, v->name()));
}

}  // namespace

void check_compilable(const ir::Graph& graph) {
  std::vector<std::string> problems;
  collect_problems(graph, "", problems);
  if (!problems.empty())
    fail("cannot compile for the C++ backend:\n  {}", fmt::join(problems, "\n  "));
}

PlanReport plan_report(const ir::Graph& graph, const EmitOptions& options, size_t largest) {
  check_compilable(graph);
  ModelCode model(options, passes::Precision::FP32, "model", nullptr);
  model.ctx.set_dim_ranges(graph.dim_ranges());
  GraphCode main = model.emit(graph, true);
  const Plan& plan = main.plan;
  PlanReport r;
  r.memory = plan.memory;
  r.requests = plan.requests;
  r.values = plan.arena_values.size();
  r.in_place = plan.in_place;
  r.views = plan.views;
  std::vector<const ir::Value*> values = plan.arena_values;
  std::stable_sort(values.begin(), values.end(),
                   [](const ir::Value* a, const ir::Value* b) { return value_bytes(a) > value_bytes(b); });
  for (size_t i = 0; i < values.size() && i < largest; ++i)
    r.largest.emplace_back(values[i]->name(), value_bytes(values[i]));
  return r;
}

GeneratedModel generate_cpp(const ir::Graph& graph, const CppOptions& options) {
  check_compilable(graph);
  ModelCode model(options.emit, options.precision, options.name, &options.test_hooks, options.device);
  model.ctx.set_dim_ranges(graph.dim_ranges());
  GraphCode main = model.emit(graph, true);
  GeneratedModel out;
  out.name = options.name;
  const DeviceCode dev = options.device ? options.device->code() : DeviceCode{};
  out.files[dev.file_name] = model_source(graph, options, model, main, dev);
  out.files["main.cpp"] = main_source(options, !graph.dim_ranges().empty());
  out.files["metadata.cpp"] = metadata_source(graph, options);
  if (!options.external_weights)
    out.files[options.name + "_weights.cpp"] = weights_source(options);
  out.files["CMakeLists.txt"] = project_cmake(options);
  out.files[options.name + ".map"] = export_map(options);
  out.widened_weights = model.weights.widened().size();
  out.widened_bytes = model.weights.widened_bytes();
  out.bf16_gemm_weights = model.weights.gemm_b().size();
  out.bf16_gemm_bytes = model.weights.gemm_b_bytes();
  out.bf16_gemm_widened_bytes = model.weights.widened_gemm_b_bytes();
  out.weights = model.weights.take_bytes();
  out.plan = main.plan.memory;
  // The header last: it carries the hash of all the rest (files in name order).
  uint64_t hash = content_hash(options.build_identity);
  for (const auto& [path, text] : out.files) hash = content_hash(text, content_hash(path, hash));
  hash = content_hash(out.weights, hash);
  out.files[options.name + ".h"] = api_header(graph, options, fmt::format("{:016x}", hash));
  return out;
}

}  // namespace kiln::codegen::cpp
