// If, Loop and Scan: their code calls the functions generated for their bodies, which the
// backend plans and emits itself (codegen/cpp/control_flow.h); these entries make them known to
// the emitter table (weights placement, check_compilable).
#include "codegen/cpp/emitter.h"
#include "ir/error.h"

namespace kiln::codegen::cpp {

namespace {

void emit_by_backend(EmitContext&, const ir::Node& node) {
  fail("internal: {} is emitted by the backend with its bodies, not by an emitter", node.describe());
}

// Scan's slicing along its axes is laid out at compile time: its shapes must be numbers.
std::string unsupported_scan(const ir::Node& node) {
  for (const ir::Value* v : node.inputs())
    if (v && !v->shape().is_static()) return "no code for symbolic dims yet (pin them with --dim NAME=VALUE)";
  return "";
}

}  // namespace

// If and Loop take symbolic dims: their bodies are planned for the bounds and read the run's
// dims (D) like the main graph, and what they copy is sized at run time.
void register_control_flow_emitters(EmitterRegistry& r) {
  for (const char* op : {"If", "Loop"}) r.add(op, Emitter{.emit = emit_by_backend, .dynamic_shapes = true});
  r.add("Scan", Emitter{.emit = emit_by_backend, .unsupported = unsupported_scan, .dynamic_shapes = true});
}

}  // namespace kiln::codegen::cpp
