// Inside the torch.export frontend: an ExportedProgram (already read out of its archive)
// as an ir::Graph. See pt2_importer.h for the choices it makes.
#pragma once

#include <memory>

#include "frontend/torch_export/pt2_archive.h"
#include "frontend/torch_export/pt2_importer.h"
#include "ir/graph.h"

namespace kiln::frontend::torch_export {

// Errors name the node; the caller adds the file.
std::unique_ptr<ir::Graph> build_pt2_graph(const Pt2Contents& contents, const Pt2ImportOptions& options,
                                           Pt2ModelInfo& info);

}  // namespace kiln::frontend::torch_export
