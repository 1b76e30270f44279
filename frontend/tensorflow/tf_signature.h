// What the SavedModel and frozen-graph paths share: a graph input from a TF dtype and shape
// (unknown dims become symbols), and the graph's named outputs.
#pragma once

#include <string>
#include <vector>

#include "frontend/tensorflow/proto/tf_graph.pb.h"
#include "frontend/tensorflow/tf_graph_builder.h"

namespace kiln::frontend::tensorflow {

// A new graph input `name` of TF dtype `dtype` and `shape`. An unknown dim is the symbol
// "batch" when it is dim 0, else NAME_K. `where` names it in errors.
TfValue add_graph_input(ir::Graph& graph, const std::string& name, int dtype, const kiln::tf::TensorShapeProto& shape,
                        const ImportLimits& limits, const std::string& where);
// Makes `value` the graph output `name` (through an Identity that carries the name).
void add_graph_output(ir::Graph& graph, const std::string& name, const TfValue& value, const std::string& where);

}  // namespace kiln::frontend::tensorflow
