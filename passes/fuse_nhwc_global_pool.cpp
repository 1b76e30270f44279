// Pass: an 8-bit channels-last chain that ends in an f32 GlobalAveragePool (MobileNetV2's and
// ResNet-50's heads: kiln.FromNhwc, a per-tensor DequantizeLinear, GlobalAveragePool, each read
// only by the next) becomes one kiln.DequantizeGlobalAveragePoolNhwc, which averages the
// channels-last bytes where they are: no reorder and no f32 tensor between (MobileNetV2 at one
// thread: 17 us for the three, rt::dequantize_global_avgpool_nhwc's values bit for bit).
#include "ir/dtype.h"
#include "passes/pass_manager.h"
#include "passes/rewrite.h"

namespace kiln::passes {

namespace {

bool one_element_constant(const ir::Value* v) {
  return v && v->is_constant() && v->has_type() && v->shape().is_static() && v->shape().numel() == 1;
}

bool try_fuse(ir::Graph& graph, ir::Node& gap) {
  if (gap.op() != "GlobalAveragePool" || !gap.input(0)->has_type() || gap.input(0)->shape().rank() != 4) return false;
  ir::Node* dq = producer_for(gap.input(0), "DequantizeLinear", &gap);
  if (!dq || dq->output(0)->dtype() != ir::DType::F32) return false;
  if (dq->has_attr("block_size") && dq->i("block_size") != 0) return false;
  float scale;
  if (!f32_scalar(dq->input(1), scale)) return false;
  const bool has_zp = dq->has_input(2);
  if (has_zp && !one_element_constant(dq->input(2))) return false;
  ir::Node* from = producer_for(dq->input(0), "kiln.FromNhwc", dq);
  if (!from) return false;
  ir::Value* x = from->input(0);
  if (x->dtype() != ir::DType::U8 && x->dtype() != ir::DType::I8) return false;
  std::vector<ir::Value*> inputs{x, dq->input(1)};
  if (has_zp) inputs.push_back(dq->input(2));
  replace_with_node(graph, {from, dq, &gap}, gap.output(0), "kiln.DequantizeGlobalAveragePoolNhwc", inputs, {},
                    gap.name());
  return true;
}

}  // namespace

void fuse_nhwc_global_pool(ir::Graph& graph) { rewrite_until_done(graph, try_fuse); }

}  // namespace kiln::passes
