// SavedModel directories: the MetaGraphDef, the signature, and the variables its functions
// capture.
#pragma once

#include <memory>
#include <string>

#include "frontend/tensorflow/tf_importer.h"

namespace kiln::frontend::tensorflow {

std::unique_ptr<ir::Graph> import_saved_model(const std::string& dir, const TensorFlowImportOptions& options);

}  // namespace kiln::frontend::tensorflow
