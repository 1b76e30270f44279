// Per-op emitters of the C++ backend: how a node becomes C++ that calls the runtime.
// Each op family registers its emitters in codegen/cpp/emitters/<family>.cpp; the list of
// families is emitters/families.def. An op's semantics stay in its IR registry entry.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>

#include "codegen/cpp/emit_options.h"
#include "ir/graph.h"

namespace kiln::codegen::cpp {

class EmitContext;

struct Emitter {
  void (*emit)(EmitContext& ctx, const ir::Node& node) = nullptr;
  // Why this particular node cannot be emitted (a dtype, rank or attribute the kernels lack),
  // or an empty string.
  std::string (*unsupported)(const ir::Node& node) = nullptr;
  // Bytes of temporary memory the node needs while it runs (placed in the arena), for the code
  // `emit` writes under `options`.
  size_t (*scratch_bytes)(const ir::Node& node, const EmitOptions& options) = nullptr;
  // When >= 0: output 0 is input `alias_input`'s bytes unchanged (Reshape and friends), so
  // no code is emitted and the output shares the input's memory.
  int alias_input = -1;
  // True when `emit` (and `scratch_bytes`) write run-time extents (EmitContext::dim, extent,
  // numel) wherever a shape has symbolic dims bounded with --dim NAME=MIN..MAX; nodes with
  // such shapes are refused by the other emitters.
  bool dynamic_shapes = false;
  // True when the emitter embeds its own compile-time form of constant input `i` (weights
  // packed for the GEMM kernel, written with EmitContext::add_weight_floats) and never
  // reads the original, which then stays out of the weights (unless another node reads it).
  bool (*packs_input)(const ir::Node& node, size_t i) = nullptr;
  // True for a node whose op computes each item of the leading (batch) dim on its own, with
  // the same weights: when its only symbolic dim is that leading dim, it runs as a loop over
  // the batch of the code `emit` writes for one item (codegen/cpp/batch_loop.h), so
  // convolutions and pools take a bounded batch (--dim batch=1..N) without writing run-time
  // extents themselves. `every_item` says so for every node of the op.
  bool (*batch_items)(const ir::Node& node) = nullptr;
};

inline bool every_item(const ir::Node&) { return true; }

class EmitterRegistry {
 public:
  void add(const std::string& op, Emitter e) { emitters_[op] = e; }
  const Emitter* find(std::string_view op) const;

 private:
  std::map<std::string, Emitter, std::less<>> emitters_;
};

const EmitterRegistry& emitters();

}  // namespace kiln::codegen::cpp
