// XlaCallModule, the op of a jax2tf SavedModel (jax2tf.convert(f, native_serialization=True)):
// its `module` attribute is a StableHLO module as MLIR bytecode (VHLO), lowered in place by
// the StableHLO frontend with the node's inputs (variables already read) as its arguments.
#include <fmt/format.h>

#include "frontend/stablehlo/stablehlo_importer.h"
#include "frontend/tensorflow/tf_internal.h"

namespace kiln::frontend::tensorflow {
namespace {

std::vector<ir::Value*> xla_call_module(TfLowering& L, const std::vector<ir::Value*>& in) {
  const kiln::tf::AttrValue* module = L.find_attr("module");
  if (!module || module->value_case() != kiln::tf::AttrValue::kS) L.fail_node("no string attribute 'module'");
  if (L.attr_bool("has_token_input_output", false)) L.fail_node("modules with token arguments are not supported");
  if (const kiln::tf::AttrValue* dims = L.find_attr("dim_args_spec"); dims && dims->list().s_size() > 0)
    L.fail_node("shape-polymorphic modules (dim_args_spec) are not supported");
  if (const kiln::tf::AttrValue* fns = L.find_attr("function_list"); fns && fns->list().func_size() > 0)
    L.fail_node("modules that call TF functions (function_list) are not supported");
  if (const kiln::tf::AttrValue* platforms = L.find_attr("platforms"); platforms && platforms->list().s_size() > 1)
    L.fail_node("modules lowered for several platforms (an extra platform index argument) are not supported");
  const std::string prefix = ir_name(L.tf_node().name()) + ".";
  try {
    return lower_stablehlo_into(module->s(), "module", L.graph(), in, prefix, L.limits());
  } catch (const Error& e) {
    L.fail_node(e.what());
  }
}

}  // namespace

void add_xla_lowerings(std::map<std::string, TfLowerFn>& table) { table["XlaCallModule"] = xla_call_module; }

}  // namespace kiln::frontend::tensorflow
