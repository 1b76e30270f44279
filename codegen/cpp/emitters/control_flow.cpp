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

}  // namespace

void register_control_flow_emitters(EmitterRegistry& r) {
  for (const char* op : {"If", "Loop", "Scan"}) r.add(op, Emitter{.emit = emit_by_backend});
}

}  // namespace kiln::codegen::cpp
