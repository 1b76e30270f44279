// Where every value of a graph lives when its generated code runs (graph inputs and outputs,
// the weights blob, arena offsets), how each node is lowered, and the memory plan: computed
// once, shared by the C++ backend and the LLVM backend (codegen/llvm).
#pragma once

#include <unordered_map>
#include <utility>
#include <vector>

#include "codegen/cpp/control_flow.h"
#include "codegen/cpp/device_lowering.h"
#include "codegen/cpp/emit_context.h"
#include "codegen/cpp/emit_options.h"
#include "ir/graph.h"
#include "passes/plan_memory.h"

namespace kiln::codegen::cpp {

class WeightBlob;

// How each node is lowered: its emitter's code, nothing (a view of its input), or a copy.
enum class Lowering { Emit, Alias, Copy };

struct Plan {
  std::unordered_map<const ir::Value*, Location> locations;
  std::unordered_map<const ir::Node*, size_t> scratch;
  std::unordered_map<const ir::Node*, Lowering> lowering;
  std::vector<std::pair<size_t, const ir::Value*>> final_copies;  // output index, source
  passes::MemoryPlan memory;
  std::vector<const ir::Value*> arena_values;
  std::vector<passes::BufferRequest> requests;
  size_t in_place = 0;
  size_t views = 0;
};

// Plans `graph` (which must compile: check_compilable), placing the constants its code reads
// in `weights`, shared by the main graph and the bodies of its control-flow nodes, whose
// functions are already in `bodies`. With `device`, its nodes' scratch and weights are the
// device code's (device_lowering.h).
Plan plan_graph(const ir::Graph& graph, WeightBlob& weights, const EmitOptions& options, const BodyFunctions& bodies,
                const DeviceLowering* device = nullptr);

}  // namespace kiln::codegen::cpp
