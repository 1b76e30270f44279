// Reductions and scans through the runtime's typed templates (kiln/rt/reduce.h): Reduce*,
// ArgMax, ArgMin, CumSum, CumProd, TopK; and the generated-value ops ConstantOfShape, Range, Size,
// EyeLike, Trilu (usually folded away; emitted when they are not).
#include <fmt/format.h>

#include "codegen/cpp/emitters/emitter_util.h"
#include "ir/ops/reduce.h"

namespace kiln::codegen::cpp {

namespace {

// The type sums are kept in.
std::string acc_type(ir::DType t) {
  if (ir::is_float(t)) return t == ir::DType::F64 ? "double" : "float";
  return "int64_t";
}

std::string reduce_kind(const std::string& op) {
  return "kiln::rt::Reduce::" + op.substr(std::string("Reduce").size());
}

void outer_len_inner(const std::vector<int64_t>& x, int64_t axis, int64_t& outer, int64_t& len,
                     int64_t& inner) {
  outer = inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x[d];
  for (size_t d = axis + 1; d < x.size(); ++d) inner *= x[d];
  len = x[axis];
}

std::string need_constant(const ir::Node& node, size_t i, const char* what) {
  if (node.has_input(i) && !node.input(i)->is_constant())
    return fmt::format("input '{}' ({}) must be known at compile time", node.input(i)->name(), what);
  return "";
}

void emit_reduce(EmitContext& ctx, const ir::Node& node) {
  // Dims, which may be symbolic (--dim NAME=MIN..MAX): the tables are then computed at run time.
  const std::vector<ir::Dim> x = node.input(0)->shape().dims();
  std::vector<bool> red = *ir::reduced_dims(node, static_cast<int64_t>(x.size()));
  std::vector<ir::Dim> st(x.size(), ir::Dim(1));
  for (size_t d = x.size(); d-- > 1;) st[d - 1] = st[d] * x[d];
  std::vector<ir::Dim> od, os, rd, rs;
  for (size_t d = 0; d < x.size(); ++d) {
    (red[d] ? rd : od).push_back(x[d]);
    (red[d] ? rs : os).push_back(st[d]);
  }
  if (rd.empty()) {  // nothing reduced: a copy
    ctx.line(fmt::format("std::memcpy({}, {}, static_cast<size_t>({}) * {});", ctx.out(node, 0), ctx.in(node, 0),
                         ctx.numel(node.input(0)), ir::dtype_size(node.input(0)->dtype())));
    return;
  }
  if (od.empty()) {
    od = {ir::Dim(1)};
    os = {ir::Dim(0)};
  }
  const ir::DType t = node.input(0)->dtype();
  const std::string odn = ctx.dims(od), osn = ctx.dims(os), rdn = ctx.dims(rd), rsn = ctx.dims(rs);
  ctx.line(fmt::format("kiln::rt::reduce<{}, {}, {}>({}, {}, {}, {}, {}, {}, {}, {});", reduce_kind(node.op()),
                       cpp_type(t), acc_type(t), od.size(), odn, osn, rd.size(), rdn, rsn, ctx.in(node, 0),
                       ctx.out(node, 0)));
}

void emit_arg(EmitContext& ctx, const ir::Node& node) {
  std::vector<int64_t> x = dims_of(node.input(0));
  int64_t outer, len, inner;
  outer_len_inner(x, ir::reduce_axis(node, static_cast<int64_t>(x.size())), outer, len, inner);
  const ir::DType t = node.input(0)->dtype();
  ctx.line(fmt::format("kiln::rt::arg_reduce<{}, {}, {}>({}, {}, {}, {}, {}, {});",
                       node.op() == "ArgMax" ? "true" : "false", cpp_type(t), cpp_compute_type(t),
                       outer, len, inner, node.i("select_last_index") != 0, ctx.in(node, 0),
                       ctx.out(node, 0)));
}

// The axis may be read at run time: the geometry of every possible axis is known here.
void emit_cumsum(EmitContext& ctx, const ir::Node& node) {
  std::vector<int64_t> x = dims_of(node.input(0));
  const int64_t rank = static_cast<int64_t>(x.size());
  std::vector<int64_t> outers, lens, inners;
  for (int64_t a = 0; a < rank; ++a) {
    int64_t outer, len, inner;
    outer_len_inner(x, a, outer, len, inner);
    outers.push_back(outer);
    lens.push_back(len);
    inners.push_back(inner);
  }
  if (node.input(1)->is_constant()) {
    ctx.line(fmt::format("const int64_t axis = {};", ir::reduce_axis(node, rank)));
  } else {
    ctx.line(fmt::format("int64_t axis = static_cast<int64_t>({}[0]);", ctx.in(node, 1)));
    ctx.line(fmt::format("if (axis < 0) axis += {};", rank));
    ctx.line(fmt::format("if (axis < 0 || axis >= {}) {}", rank,
                         ctx.fail_stmt(node, fmt::format("axis is out of range for rank {}", rank))));
  }
  const ir::DType t = node.input(0)->dtype();
  ctx.line(fmt::format("kiln::rt::scan<{}, {}, {}>({}[axis], {}[axis], {}[axis], {}, {}, {}, {});",
                       node.op() == "CumProd", cpp_type(t), acc_type(t), ctx.array(outers), ctx.array(lens),
                       ctx.array(inners), node.i("exclusive") != 0, node.i("reverse") != 0,
                       ctx.in(node, 0), ctx.out(node, 0)));
}

size_t topk_scratch(const ir::Node& node, const EmitOptions&) {
  std::vector<int64_t> x = dims_of(node.input(0));
  const int64_t axis = ir::reduce_axis(node, static_cast<int64_t>(x.size()));
  return static_cast<size_t>(x[axis] + numel_of(node.output(0))) * 8;
}

void emit_topk(EmitContext& ctx, const ir::Node& node) {
  std::vector<int64_t> x = dims_of(node.input(0));
  int64_t outer, len, inner;
  outer_len_inner(x, ir::reduce_axis(node, static_cast<int64_t>(x.size())), outer, len, inner);
  const ir::DType t = node.input(0)->dtype();
  ctx.line(fmt::format("int64_t* order = reinterpret_cast<int64_t*>{};", ctx.scratch(node)));
  std::string indices = node.num_outputs() > 1 ? ctx.out(node, 1) : fmt::format("order + {}", len);
  ctx.line(fmt::format("kiln::rt::topk<{}, {}>({}, {}, {}, {}, {}, {}, {}, {}, order);",
                       cpp_type(t), cpp_compute_type(t), outer, len, inner, *ir::topk_k(node),
                       node.i("largest") != 0, ctx.in(node, 0), ctx.out(node, 0), indices));
}

// ---- generated values ----------------------------------------------------------------------

void emit_fill(EmitContext& ctx, const ir::Node& node) {
  ir::Tensor v = node.has_attr("value") ? node.attr("value").t()
                                        : ir::Tensor::from_vector<float>(ir::DType::F32, {1}, {0});
  const size_t es = ir::dtype_size(v.dtype());
  std::vector<int64_t> bytes;
  for (size_t i = 0; i < es; ++i) bytes.push_back(static_cast<const uint8_t*>(v.raw())[i]);
  ctx.line(fmt::format("const unsigned char value[] = {{{}}};", fmt::join(bytes, ", ")));
  ctx.line(fmt::format("for (int64_t i = 0; i < {}; ++i) std::memcpy(reinterpret_cast<unsigned char*>({}) + i * {}, value, {});",
                       numel_of(node.output(0)), ctx.out(node, 0), es, es));
}

void emit_range(EmitContext& ctx, const ir::Node& node) {
  const ir::DType t = node.input(0)->dtype();
  const std::string s = cpp_type(t), c = ir::is_float(t) ? "double" : "int64_t";
  ctx.line(fmt::format("const {0} start = static_cast<{0}>({1}[0]), delta = static_cast<{0}>({2}[0]);",
                       c, ctx.in(node, 0), ctx.in(node, 2)));
  ctx.line(fmt::format("for (int64_t i = 0; i < {}; ++i) {}[i] = static_cast<{}>(static_cast<{}>(start + static_cast<{}>(i) * delta));",
                       ctx.numel(node.output(0)), ctx.out(node, 0), s, cpp_compute_type(t), c));
}

void emit_size(EmitContext& ctx, const ir::Node& node) {
  ctx.line(fmt::format("{}[0] = {};", ctx.out(node, 0), numel_of(node.input(0))));
}

void emit_eye_like(EmitContext& ctx, const ir::Node& node) {
  std::vector<int64_t> y = dims_of(node.output(0));
  const ir::DType t = node.output(0)->dtype();
  const size_t es = ir::dtype_size(t);
  ctx.line(fmt::format("std::memset({}, 0, {});", ctx.out(node, 0), numel_of(node.output(0)) * es));
  ctx.line(fmt::format("for (int64_t i = 0; i < {}; ++i) if (i + {} >= 0 && i + {} < {}) {}[i * {} + i + {}] = static_cast<{}>(1);",
                       y[0], node.i("k"), node.i("k"), y[1], ctx.out(node, 0), y[1], node.i("k"),
                       cpp_type(t)));
}

void emit_trilu(EmitContext& ctx, const ir::Node& node) {
  std::vector<int64_t> x = dims_of(node.input(0));
  const int64_t rows = x[x.size() - 2], cols = x.back();
  const int64_t batch = numel_of(node.input(0)) / std::max<int64_t>(rows * cols, 1);
  std::string k = node.has_input(1) ? ctx.in(node, 1) + "[0]" : "0";
  ctx.line(fmt::format("kiln::rt::trilu_bytes({}, {}, {}, {}, {}, {}, {}, {});",
                       ir::dtype_size(node.input(0)->dtype()), batch, rows, cols, k,
                       node.i("upper") != 0, ctx.in(node, 0), ctx.out(node, 0)));
}

}  // namespace

void register_reduce_emitters(EmitterRegistry& r) {
  for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
                         "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp",
                         "ReduceSumSquare"})
    r.add(op, Emitter{.emit = emit_reduce,
                      .unsupported = [](const ir::Node& n) { return need_constant(n, 1, "axes"); },
                      .dynamic_shapes = true});
  r.add("ArgMax", Emitter{.emit = emit_arg});
  r.add("ArgMin", Emitter{.emit = emit_arg});
  r.add("CumSum", Emitter{.emit = emit_cumsum});
  r.add("CumProd", Emitter{.emit = emit_cumsum});
  r.add("TopK", Emitter{.emit = emit_topk,
                        .unsupported = [](const ir::Node& n) { return need_constant(n, 1, "K"); },
                        .scratch_bytes = topk_scratch});
  r.add("ConstantOfShape", Emitter{.emit = emit_fill});
  r.add("Range", Emitter{.emit = emit_range, .dynamic_shapes = true});
  r.add("Size", Emitter{.emit = emit_size});
  r.add("EyeLike", Emitter{.emit = emit_eye_like});
  r.add("Trilu", Emitter{.emit = emit_trilu});
}

}  // namespace kiln::codegen::cpp
