// What code generators need from the elementwise op lists beyond OpDef::scalar_expr.
#pragma once

#include <string_view>

namespace kiln::ir {

// A variadic elementwise op (Sum, Mean, Min, Max): its inputs, broadcast together, are folded
// with `combine` (an expression in a and b) and the result is `finish` (an expression in x and
// n, the number of inputs); `T` is the compute type.
struct VariadicExprs {
  std::string_view combine;
  std::string_view finish;
};

// The op's expressions, or nullptr when `op` is not a variadic elementwise op.
const VariadicExprs* variadic_exprs(std::string_view op);

}  // namespace kiln::ir
