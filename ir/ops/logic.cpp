// Logic, comparison, bitwise and floating-point class ops, and Where (ir/ops/logic_ops.def).
#include "ir/ops/elementwise_eval.h"

namespace kiln::ir {

void register_logic_ops(Registry& r) {
  using namespace elementwise;
#define KILN_UNARY_OP KILN_EW_UNARY
#define KILN_BINARY_OP KILN_EW_BINARY
#define KILN_SELECT_OP KILN_EW_SELECT
#include "ir/ops/logic_ops.def"
#undef KILN_UNARY_OP
#undef KILN_BINARY_OP
#undef KILN_SELECT_OP
}

}  // namespace kiln::ir
