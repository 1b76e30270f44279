#include "codegen/cpp/control_flow.h"

#include <fmt/format.h>

#include "ir/control_flow.h"
#include "ir/error.h"

namespace kiln::codegen::cpp {

namespace {

constexpr size_t kAlign = 64;

size_t align_up(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

// Buffers are laid out for the most a value holds (its symbolic dims at their bounds); copies
// move what it holds in this run (ctx.run_bytes).
size_t bytes_of(const ir::Value* v) { return max_value_bytes(v); }

const ir::Graph& body(const ir::Node& node, const char* attr) { return *node.attr(attr).g(); }

const BodyFunction& function_of(const BodyFunctions& bodies, const ir::Graph& g) {
  auto it = bodies.find(&g);
  if (it == bodies.end()) fail("internal: body '{}' has no generated function", g.name());
  return it->second;
}

// Where a node's own buffers sit in its scratch memory, after the body's arena (at offset 0).
struct Layout {
  size_t iter = 0, cond_in = 0, cond_out = 0;  // Loop
  std::vector<size_t> next;                     // carried values the body computes for the next step
  std::vector<size_t> state;                    // carried values without a node output (SIZE_MAX: the output)
  std::vector<size_t> in_slice;                 // Scan inputs gathered along a non-leading axis (else SIZE_MAX)
  std::vector<size_t> out_slice;                // per-step outputs written to scratch (else SIZE_MAX)
  size_t total = 0;
};

struct ScanShape {
  int64_t outer = 1;  // product of the dims before the axis
  size_t row = 0;     // bytes after it
};
ScanShape split_at(const ir::Shape& s, int64_t axis, size_t esize) {
  ScanShape r;
  size_t inner = esize;
  for (int64_t i = 0; i < static_cast<int64_t>(s.rank()); ++i)
    if (i < axis) r.outer *= s[static_cast<size_t>(i)].value();
    else if (i > axis) inner *= static_cast<size_t>(s[static_cast<size_t>(i)].value());
  r.row = inner;
  return r;
}

Layout layout_of(const ir::Node& node, const BodyFunctions& bodies) {
  Layout l;
  size_t at = 0;
  for (const ir::Graph* g : bodies_of(node)) at = std::max(at, function_of(bodies, *g).arena);
  at = align_up(at);
  auto take = [&](size_t n) {
    size_t off = at;
    at += align_up(std::max<size_t>(n, 1));
    return off;
  };
  if (node.op() == "If") {
    l.total = std::max(at, kAlign);  // never empty, so the node always has scratch to hand on
    return l;
  }
  const ir::Graph& b = body(node, "body");
  const bool loop = node.op() == "Loop";
  const size_t n = loop ? ir::loop_carried_count(node) : ir::scan_state_count(node);
  const size_t first_out = loop ? 1 : 0;  // Loop's body gives the condition first
  if (loop) {
    l.iter = take(8);
    l.cond_in = take(1);
    l.cond_out = take(1);
  }
  for (size_t i = 0; i < n; ++i) {
    const ir::Value* v = b.outputs()[first_out + i];
    l.next.push_back(take(bytes_of(v)));
    l.state.push_back(i < node.num_outputs() ? SIZE_MAX : take(bytes_of(v)));
  }
  if (!loop) {
    const ir::ScanLayout s = ir::scan_layout(node);
    for (size_t j = 0; j < s.input_axes.size(); ++j)
      l.in_slice.push_back(s.input_axes[j] == 0 ? SIZE_MAX : take(bytes_of(b.inputs()[n + j])));
    for (size_t k = 0; k < s.output_axes.size(); ++k) {
      const bool direct = s.output_axes[k] == 0 && n + k < node.num_outputs();
      l.out_slice.push_back(direct ? SIZE_MAX : take(bytes_of(b.outputs()[n + k])));
    }
  } else {
    for (size_t k = n + 1; k < b.outputs().size(); ++k)
      l.out_slice.push_back(k - 1 < node.num_outputs() ? SIZE_MAX : take(bytes_of(b.outputs()[k])));
  }
  l.total = at;
  return l;
}

std::string bytes_ptr(const std::string& typed) { return fmt::format("reinterpret_cast<unsigned char*>({})", typed); }
std::string cbytes_ptr(const std::string& typed) {
  return fmt::format("reinterpret_cast<const unsigned char*>({})", typed);
}

std::string array_of(const std::vector<std::string>& items) {
  std::string s;
  for (const std::string& i : items) s += i + ", ";
  return s + "nullptr";  // never empty
}

std::string captured_args(EmitContext& ctx, const ir::Node& node) {
  std::string s;
  for (size_t i = node.num_inputs() - ir::num_captured(node); i < node.num_inputs(); ++i) s += ctx.in(node, i) + ", ";
  return s;
}

// "then_branch" or "else_branch" when that branch could not be typed (ir/ops/control_flow.cpp).
std::string untyped_branch(const ir::Node& node) {
  const std::string& u = node.s("untyped_branch");
  return u.substr(0, u.find(':'));
}

std::string call(const BodyFunctions& bodies, const ir::Graph& g) {
  return fmt::format("if (const int rc = {}(ctx, S, kiln_in, kiln_out)) return rc;", function_of(bodies, g).name);
}

void emit_if(EmitContext& ctx, const ir::Node& node, const BodyFunctions& bodies) {
  std::vector<std::string> outs;
  for (size_t i = 0; i < node.num_outputs(); ++i) outs.push_back(ctx.out(node, i));
  ctx.line(fmt::format("unsigned char* const S = {};", ctx.scratch(node)));
  ctx.line(fmt::format("const void* const kiln_in[] = {{{}nullptr}};", captured_args(ctx, node)));
  ctx.line(fmt::format("void* const kiln_out[] = {{{}}};", array_of(outs)));
  auto branch = [&](const char* attr) {
    if (untyped_branch(node) != attr) return call(bodies, body(node, attr));
    const std::string& why = node.s("untyped_branch");
    return ctx.fail_stmt(node, fmt::format("the {} cannot run on these input shapes ({})", attr,
                                           why.substr(why.find(':') + 2)));
  };
  ctx.line(fmt::format("if (*{}) {{", ctx.in(node, 0)));
  ctx.line("  " + branch("then_branch"));
  ctx.line("} else {");
  ctx.line("  " + branch("else_branch"));
  ctx.line("}");
}

// The buffer holding carried value i between iterations: the node's output, or scratch.
std::string state_ptr(EmitContext& ctx, const ir::Node& node, const Layout& l, size_t i) {
  return l.state[i] == SIZE_MAX ? bytes_ptr(ctx.out(node, i)) : fmt::format("(S + {})", l.state[i]);
}

void emit_loop(EmitContext& ctx, const ir::Node& node, const BodyFunctions& bodies) {
  const Layout l = layout_of(node, bodies);
  const ir::Graph& b = body(node, "body");
  const size_t n = ir::loop_carried_count(node);
  ctx.line(fmt::format("unsigned char* const S = {};", ctx.scratch(node)));
  ctx.line(fmt::format("const int64_t kiln_trips = {};",
                       node.has_input(0) ? "*" + ctx.in(node, 0) : "std::numeric_limits<int64_t>::max()"));
  ctx.line(fmt::format("bool kiln_cond = {};", node.has_input(1) ? "*" + ctx.in(node, 1) : "true"));
  for (size_t i = 0; i < n; ++i)
    ctx.line(fmt::format("std::memcpy({}, {}, {});", state_ptr(ctx, node, l, i), ctx.in(node, 2 + i),
                         ctx.run_bytes(b.outputs()[1 + i])));
  std::vector<std::string> ins = {fmt::format("S + {}", l.iter), fmt::format("S + {}", l.cond_in)};
  for (size_t i = 0; i < n; ++i) ins.push_back(state_ptr(ctx, node, l, i));
  std::vector<std::string> outs = {fmt::format("S + {}", l.cond_out)};
  for (size_t i = 0; i < n; ++i) outs.push_back(fmt::format("S + {}", l.next[i]));
  for (size_t k = 0; k < l.out_slice.size(); ++k) {
    const ir::Value* y = b.outputs()[1 + n + k];
    outs.push_back(l.out_slice[k] == SIZE_MAX
                       ? fmt::format("{} + kiln_it * {}", bytes_ptr(ctx.out(node, n + k)), ctx.run_bytes(y))
                       : fmt::format("S + {}", l.out_slice[k]));
  }
  ctx.line("for (int64_t kiln_it = 0; kiln_it < kiln_trips && kiln_cond; ++kiln_it) {");
  ctx.line(fmt::format("  std::memcpy(S + {}, &kiln_it, 8);", l.iter));
  ctx.line(fmt::format("  std::memcpy(S + {}, &kiln_cond, 1);", l.cond_in));
  std::string in_list;
  for (const std::string& i : ins) in_list += i + ", ";
  ctx.line(fmt::format("  const void* const kiln_in[] = {{{}{}nullptr}};", in_list, captured_args(ctx, node)));
  ctx.line(fmt::format("  void* const kiln_out[] = {{{}}};", array_of(outs)));
  ctx.line("  " + call(bodies, b));
  for (size_t i = 0; i < n; ++i)
    ctx.line(fmt::format("  std::memcpy({}, S + {}, {});", state_ptr(ctx, node, l, i), l.next[i],
                         ctx.run_bytes(b.outputs()[1 + i])));
  ctx.line(fmt::format("  std::memcpy(&kiln_cond, S + {}, 1);", l.cond_out));
  ctx.line("}");
}

void emit_scan(EmitContext& ctx, const ir::Node& node, const BodyFunctions& bodies) {
  const Layout l = layout_of(node, bodies);
  const ir::Graph& b = body(node, "body");
  const ir::ScanLayout s = ir::scan_layout(node);
  const size_t n = ir::scan_state_count(node);
  const size_t m = s.input_axes.size();
  const int64_t steps = node.input(n)->shape()[static_cast<size_t>(s.input_axes[0])].value();
  ctx.line(fmt::format("unsigned char* const S = {};", ctx.scratch(node)));
  for (size_t i = 0; i < n; ++i)
    ctx.line(fmt::format("std::memcpy({}, {}, {});", state_ptr(ctx, node, l, i), ctx.in(node, i), bytes_of(b.outputs()[i])));
  ctx.line(fmt::format("for (int64_t kiln_t = 0; kiln_t < {}; ++kiln_t) {{", steps));
  std::string ins;
  for (size_t i = 0; i < n; ++i) ins += state_ptr(ctx, node, l, i) + ", ";
  for (size_t j = 0; j < m; ++j) {
    const ir::Value* x = node.input(n + j);
    const std::string index = s.input_directions[j] ? fmt::format("({} - 1 - kiln_t)", steps) : "kiln_t";
    const ScanShape sh = split_at(x->shape(), s.input_axes[j], ir::dtype_size(x->dtype()));
    if (l.in_slice[j] == SIZE_MAX) {
      ins += fmt::format("{} + {} * {}, ", cbytes_ptr(ctx.in(node, n + j)), index, sh.row);
      continue;
    }
    ctx.line(fmt::format("  for (int64_t o = 0; o < {}; ++o) std::memcpy(S + {} + o * {}, {} + (o * {} + {}) * {}, {});",
                         sh.outer, l.in_slice[j], sh.row, cbytes_ptr(ctx.in(node, n + j)), steps, index, sh.row, sh.row));
    ins += fmt::format("S + {}, ", l.in_slice[j]);
  }
  std::string outs;
  for (size_t i = 0; i < n; ++i) outs += fmt::format("S + {}, ", l.next[i]);
  for (size_t k = 0; k < s.output_axes.size(); ++k) {
    const ir::Value* y = b.outputs()[n + k];
    const std::string index = s.output_directions[k] ? fmt::format("({} - 1 - kiln_t)", steps) : "kiln_t";
    outs += l.out_slice[k] == SIZE_MAX
                ? fmt::format("{} + {} * {}, ", bytes_ptr(ctx.out(node, n + k)), index, bytes_of(y))
                : fmt::format("S + {}, ", l.out_slice[k]);
  }
  ctx.line(fmt::format("  const void* const kiln_in[] = {{{}{}nullptr}};", ins, captured_args(ctx, node)));
  ctx.line(fmt::format("  void* const kiln_out[] = {{{}nullptr}};", outs));
  ctx.line("  " + call(bodies, b));
  for (size_t k = 0; k < s.output_axes.size(); ++k) {
    if (l.out_slice[k] == SIZE_MAX || n + k >= node.num_outputs()) continue;
    const ir::Value* out = node.output(n + k);
    const std::string index = s.output_directions[k] ? fmt::format("({} - 1 - kiln_t)", steps) : "kiln_t";
    const ScanShape sh = split_at(out->shape(), s.output_axes[k], ir::dtype_size(out->dtype()));
    ctx.line(fmt::format("  for (int64_t o = 0; o < {}; ++o) std::memcpy({} + (o * {} + {}) * {}, S + {} + o * {}, {});",
                         sh.outer, bytes_ptr(ctx.out(node, n + k)), steps, index, sh.row, l.out_slice[k], sh.row,
                         sh.row));
  }
  for (size_t i = 0; i < n; ++i)
    ctx.line(fmt::format("  std::memcpy({}, S + {}, {});", state_ptr(ctx, node, l, i), l.next[i], bytes_of(b.outputs()[i])));
  ctx.line("}");
}

}  // namespace

bool is_control_flow(const ir::Node& node) {
  return node.op() == "If" || node.op() == "Loop" || node.op() == "Scan";
}

std::vector<const ir::Graph*> bodies_of(const ir::Node& node) {
  if (node.op() != "If") return {node.attr("body").g().get()};
  std::vector<const ir::Graph*> bodies;
  for (const char* b : {"then_branch", "else_branch"})
    if (untyped_branch(node) != b) bodies.push_back(node.attr(b).g().get());
  return bodies;
}

size_t control_flow_scratch(const ir::Node& node, const BodyFunctions& bodies) {
  return layout_of(node, bodies).total;
}

void emit_control_flow(EmitContext& ctx, const ir::Node& node, const BodyFunctions& bodies) {
  if (node.op() == "If") emit_if(ctx, node, bodies);
  else if (node.op() == "Loop") emit_loop(ctx, node, bodies);
  else emit_scan(ctx, node, bodies);
}

}  // namespace kiln::codegen::cpp
