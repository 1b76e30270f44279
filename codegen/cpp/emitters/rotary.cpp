// RotaryEmbedding (f32) through the runtime's rotary_embedding_f32.
#include <fmt/format.h>

#include "codegen/cpp/emitters/emitter_util.h"
#include "ir/ops/rotary.h"

namespace kiln::codegen::cpp {

namespace {

void emit(EmitContext& ctx, const ir::Node& node) {
  const bool has_pos = node.has_input(3);
  const kiln::rt::RotaryParams p = ir::rotary_params(node, dims_of(node.input(0)), dims_of(node.input(1)),
                                                     dims_of(node.input(2)),
                                                     has_pos ? dims_of(node.input(3)) : std::vector<int64_t>{});
  ctx.line("kiln::rt::RotaryParams p;");
  ctx.line(fmt::format("p.batch = {}; p.heads = {}; p.seq = {}; p.head_dim = {}; p.rotary_dim = {};", p.batch,
                       p.heads, p.seq, p.head_dim, p.rotary_dim));
  ctx.line(fmt::format("p.interleaved = {}; p.cache_rows = {};", p.interleaved ? "true" : "false", p.cache_rows));
  ctx.line(fmt::format("p.layout = kiln::rt::AttentionLayout{{{}, {}, {}}};", p.layout.batch, p.layout.head,
                       p.layout.seq));
  ctx.line(fmt::format("if (!kiln::rt::rotary_embedding_f32(p, {}, {}, {}, {}, {})) {}", ctx.in(node, 0),
                       ctx.in(node, 1), ctx.in(node, 2), has_pos ? ctx.in(node, 3) : "nullptr", ctx.out(node, 0),
                       ctx.fail_stmt(node, fmt::format("a position id is outside the {} rows of the caches",
                                                       p.cache_rows))));
}

std::string unsupported(const ir::Node& node) {
  for (size_t i = 0; i < 3; ++i)
    if (node.input(i)->dtype() != ir::DType::F32)
      return fmt::format("input '{}' is {}; compiled RotaryEmbedding supports f32 only", node.input(i)->name(),
                         ir::dtype_name(node.input(i)->dtype()));
  return "";
}

}  // namespace

void register_rotary_emitters(EmitterRegistry& r) {
  r.add("RotaryEmbedding", Emitter{.emit = emit, .unsupported = unsupported});
}

}  // namespace kiln::codegen::cpp
