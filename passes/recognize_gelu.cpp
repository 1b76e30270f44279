// Pass: GELU recognition. The two forms exporters write become one Gelu(x) (ONNX opset 20),
// an elementwise op that fuses into a kernel's epilogue or an elementwise loop:
//   erf:  x * 0.5 * (1 + Erf(x / sqrt(2)))                                  (PyTorch nn.GELU)
//   tanh: x * 0.5 * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))   {approximate="tanh"}
// x / sqrt(2) may be x * (1/sqrt(2)); x^3 may be Pow(x, 3) or x * x * x; the product of x,
// 0.5 and (1 + ...) may be associated either way, and the halving may be a Div by 2.
#include <cmath>

#include "passes/pass_manager.h"
#include "passes/rewrite.h"

namespace kiln::passes {

namespace {

constexpr double kSqrt2 = 1.4142135623730951;
constexpr double kSqrt2OverPi = 0.7978845608028654;
constexpr double kCubic = 0.044715;

// Binary node `n` (of `op`) reads `v` and a constant within tolerance of `c`.
bool reads_scalar(const ir::Node* n, const char* op, const ir::Value* v, double c) {
  return n && n->op() == op && other_input(*n, v) && is_f32_scalar(other_input(*n, v), c);
}

// The x of `arg` = x / sqrt(2) or x * (1/sqrt(2)) (read only by `user`), else nullptr.
ir::Value* erf_argument(const ir::Value* arg, const ir::Node* user, std::vector<ir::Node*>& nodes) {
  ir::Node* p = arg->producer();
  if (!p || single_user(arg) != user) return nullptr;
  if (p->op() == "Div" && is_f32_scalar(p->input(1), kSqrt2)) {
    nodes.push_back(p);
    return p->input(0);
  }
  if (p->op() == "Mul")
    for (size_t k = 0; k < 2; ++k)
      if (is_f32_scalar(p->input(k), 1.0 / kSqrt2)) {
        nodes.push_back(p);
        return p->input(1 - k);
      }
  return nullptr;
}

// Whether `v` (read only by `user`) is x^3: Pow(x, 3), x * (x * x) or (x * x) * x.
bool is_cube(const ir::Value* v, const ir::Node* user, const ir::Value* x, std::vector<ir::Node*>& nodes) {
  ir::Node* p = v->producer();
  if (!p || single_user(v) != user) return false;
  if (p->op() == "Pow" && p->input(0) == x && is_f32_scalar(p->input(1), 3.0)) {
    nodes.push_back(p);
    return true;
  }
  if (p->op() != "Mul") return false;
  ir::Value* sq = other_input(*p, x);
  ir::Node* q = sq ? producer_for(sq, "Mul", p) : nullptr;
  if (!q || q->input(0) != x || q->input(1) != x) return false;
  nodes.push_back(q);
  nodes.push_back(p);
  return true;
}

// The x of `arg` = sqrt(2/pi) * (x + 0.044715 * x^3) (read only by `user`), else nullptr.
ir::Value* tanh_argument(const ir::Value* arg, const ir::Node* user, std::vector<ir::Node*>& nodes) {
  ir::Node* scale = producer_for(arg, "Mul", user);
  if (!scale) return nullptr;
  for (size_t k = 0; k < 2; ++k) {
    if (!is_f32_scalar(scale->input(k), kSqrt2OverPi)) continue;
    ir::Node* sum = producer_for(scale->input(1 - k), "Add", scale);
    if (!sum) return nullptr;
    for (size_t j = 0; j < 2; ++j) {
      ir::Value* x = sum->input(j);
      ir::Node* term = producer_for(sum->input(1 - j), "Mul", sum);
      if (!term) continue;
      for (size_t i = 0; i < 2; ++i) {
        if (!is_f32_scalar(term->input(i), kCubic)) continue;
        std::vector<ir::Node*> cube;
        if (!is_cube(term->input(1 - i), term, x, cube)) continue;
        nodes.insert(nodes.end(), cube.begin(), cube.end());
        nodes.insert(nodes.end(), {term, sum, scale});
        return x;
      }
    }
  }
  return nullptr;
}

// `half` halves its input: a Mul by 0.5 or a Div by 2.
bool halves(const ir::Node* half, const ir::Value* v) {
  if (!half) return false;
  if (half->op() == "Div") return half->input(0) == v && is_f32_scalar(half->input(1), 2.0);
  return reads_scalar(half, "Mul", v, 0.5);
}

// The node computing x * 0.5 * a in any association, `a` read only by the first of them;
// appends the nodes to `nodes`. nullptr when it is not there.
ir::Node* times_half_x(ir::Value* a, ir::Value* x, std::vector<ir::Node*>& nodes) {
  ir::Node* p1 = single_user(a);
  if (!p1 || p1->op() != "Mul") return nullptr;
  ir::Value* other = other_input(*p1, a);
  if (!other) return nullptr;
  if (other == x || is_f32_scalar(other, 0.5)) {  // (a * x) * 0.5, (a * 0.5) * x, or (a * x) / 2
    ir::Node* p2 = single_user(p1->output(0));
    bool ok = other == x ? halves(p2, p1->output(0)) : (p2 && p2->op() == "Mul" && other_input(*p2, p1->output(0)) == x);
    if (!ok) return nullptr;
    nodes.insert(nodes.end(), {p1, p2});
    return p2;
  }
  ir::Node* h = other->producer();  // a * (x * 0.5) or a * (x / 2)
  if (!h || single_user(other) != p1 || !halves(h, x)) return nullptr;
  nodes.insert(nodes.end(), {h, p1});
  return p1;
}

bool try_recognize(ir::Graph& graph, ir::Node& f) {
  const bool erf = f.op() == "Erf";
  if (!erf && f.op() != "Tanh") return false;
  std::vector<ir::Node*> nodes;
  ir::Value* x = erf ? erf_argument(f.input(0), &f, nodes) : tanh_argument(f.input(0), &f, nodes);
  if (!x || !x->has_type() || x->dtype() != ir::DType::F32) return false;
  nodes.push_back(&f);
  ir::Node* plus_one = single_user(f.output(0));
  if (!reads_scalar(plus_one, "Add", f.output(0), 1.0)) return false;
  nodes.push_back(plus_one);
  ir::Node* last = times_half_x(plus_one->output(0), x, nodes);
  if (!last || !(last->output(0)->shape() == x->shape())) return false;
  ir::AttributeMap attrs;
  if (!erf) attrs["approximate"] = ir::Attribute(std::string("tanh"));
  replace_with_node(graph, nodes, last->output(0), "Gelu", {x}, std::move(attrs), f.name());
  return true;
}

}  // namespace

void recognize_gelu(ir::Graph& graph) { rewrite_until_done(graph, try_recognize); }

}  // namespace kiln::passes
