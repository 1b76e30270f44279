// Pass: multi-head attention recognition. Scaled dot-product attention as PyTorch exports it,
//   q = Transpose(Reshape(Q, [B,S,H,D]), [0,2,1,3])       k: perm [0,2,3,1] (K^T), v: as q
//   p = Softmax(MatMul(q, k) [/ c | * c] [+ mask], axis -1)
//   y = Reshape(Transpose(MatMul(p, v), [0,2,1,3]), [B,S,H*D])
// becomes one Attention(Q, K, V [, mask]) {q_num_heads, kv_num_heads, scale} (ONNX opset
// 23) on the packed [B,S,H*D] projections: no transposes, and the kernel never writes the
// score matrix. Where the inputs are not reshaped projections (4-D [B,H,S,D] values, K^T a
// Transpose of [B,H,S,D]), the MatMul..MatMul core alone becomes Attention on 4-D inputs.
// A scalar scale may also multiply q or k^T (both go into `scale`). f32 only; every value
// inside the pattern must be read only by the next node in it.
#include "ir/op_registry.h"
#include "passes/pass_manager.h"
#include "passes/rewrite.h"

namespace kiln::passes {

namespace {

using Perm = std::vector<int64_t>;

Perm perm_of(const ir::Node& n) {
  if (n.has_attr("perm")) return n.ints("perm");
  size_t rank = n.input(0)->shape().rank();
  Perm p(rank);
  for (size_t i = 0; i < rank; ++i) p[i] = static_cast<int64_t>(rank - 1 - i);
  return p;
}

// Where one operand of the score MatMul comes from: `v` walked back through single-reader
// Transposes (composed into `perm`, relative to `source`) and scalar Muls (into `scale`).
struct Operand {
  ir::Value* source = nullptr;  // the value before the Transposes
  Perm perm = {0, 1, 2, 3};     // operand axis i is source axis perm[i]
  float scale = 1.0f;
  std::vector<ir::Node*> nodes;
};

Operand walk_back(ir::Value* v, const ir::Node* user) {
  Operand o;
  o.source = v;
  for (;;) {
    ir::Node* p = o.source->producer();
    if (!p || single_user(o.source) != user || o.source->shape().rank() != 4) break;
    ir::Value* next = nullptr;
    if (p->op() == "Transpose") {
      Perm inner = perm_of(*p), composed(4);
      for (size_t i = 0; i < 4; ++i) composed[i] = inner[static_cast<size_t>(o.perm[i])];
      o.perm = composed;
      next = p->input(0);
    } else if (p->op() == "Mul") {
      float c = 0;
      for (size_t k = 0; k < 2 && !next; ++k)
        if (p->input(1 - k)->shape() == o.source->shape() && f32_scalar(p->input(k), c)) next = p->input(1 - k);
      if (!next) break;
      o.scale *= c;
    } else {
      break;
    }
    o.nodes.push_back(p);
    o.source = next;
    user = p;
  }
  return o;
}

// The packed [B,S,H*D] value reshaped into `v` = [B,S,H,D] (read only by `user`), else nullptr.
ir::Node* head_split(ir::Value* v, const ir::Node* user) {
  ir::Node* r = producer_for(v, "Reshape", user);
  if (!r || r->input(0)->shape().rank() != 3 || v->shape().rank() != 4) return nullptr;
  const ir::Shape &in = r->input(0)->shape(), &out = v->shape();
  if (!(in[0] == out[0]) || !(in[1] == out[1]) || in[2].value() != out[2].value() * out[3].value()) return nullptr;
  return r;
}

bool is_perm(const Perm& p, std::initializer_list<int64_t> want) { return p == Perm(want); }

bool try_recognize(ir::Graph& graph, ir::Node& qk) {
  if (qk.op() != "MatMul" || qk.output(0)->dtype() != ir::DType::F32 || qk.output(0)->shape().rank() != 4 ||
      !qk.output(0)->shape().is_known())
    return false;
  std::vector<ir::Node*> nodes;
  // Scores: scale, mask, Softmax over the keys.
  float scale = 1.0f;
  ir::Value* s = qk.output(0);
  ir::Node* n = single_user(s);
  if (n && (n->op() == "Div" || n->op() == "Mul") && n->input(0) == s) {
    float c = 0;
    if (!f32_scalar(n->input(1), c) || c == 0) return false;
    scale = n->op() == "Div" ? 1.0f / c : c;
  } else if (n && n->op() == "Mul" && n->input(1) == s) {
    if (!f32_scalar(n->input(0), scale)) return false;
  } else {
    n = nullptr;
  }
  if (n) {
    nodes.push_back(n);
    s = n->output(0);
  }
  ir::Value* mask = nullptr;
  if (ir::Node* add = single_user(s); add && add->op() == "Add" && other_input(*add, s)) {
    mask = other_input(*add, s);
    if (mask->dtype() != ir::DType::F32 || mask->shape().rank() > 4 || !(add->output(0)->shape() == s->shape()))
      return false;
    nodes.push_back(add);
    s = add->output(0);
  }
  ir::Node* softmax = single_user(s);
  if (!softmax || softmax->op() != "Softmax" || (softmax->i("axis") != -1 && softmax->i("axis") != 3)) return false;
  nodes.push_back(softmax);
  ir::Node* pv = single_user(softmax->output(0));
  if (!pv || pv->op() != "MatMul" || pv->input(0) != softmax->output(0) || pv->output(0)->shape().rank() != 4)
    return false;
  nodes.push_back(pv);

  Operand q = walk_back(qk.input(0), &qk), k = walk_back(qk.input(1), &qk), v = walk_back(pv->input(1), pv);
  const ir::Shape& y4 = pv->output(0)->shape();  // [B,H,S,Dv]

  // Packed mode: Q, K and V are [B,S,H*D] projections split into heads, the result is merged back.
  ir::Node *rq = head_split(q.source, q.nodes.empty() ? &qk : q.nodes.back()),
           *rk = head_split(k.source, k.nodes.empty() ? &qk : k.nodes.back()),
           *rv = head_split(v.source, v.nodes.empty() ? pv : v.nodes.back());
  ir::Node* merge_t = single_user(pv->output(0));
  ir::Node* merge_r = merge_t && merge_t->op() == "Transpose" && is_perm(perm_of(*merge_t), {0, 2, 1, 3})
                          ? single_user(merge_t->output(0))
                          : nullptr;
  const int64_t heads = y4[1].value();
  if (rq && rk && rv && is_perm(q.perm, {0, 2, 1, 3}) && is_perm(k.perm, {0, 2, 3, 1}) &&
      is_perm(v.perm, {0, 2, 1, 3}) && merge_r && merge_r->op() == "Reshape" &&
      merge_r->output(0)->shape().rank() == 3 && merge_r->output(0)->shape()[0] == y4[0] &&
      merge_r->output(0)->shape()[1] == y4[2] && merge_r->output(0)->shape()[2].value() == heads * y4[3].value() &&
      v.scale == 1.0f && q.source->shape()[2].value() == heads && k.source->shape()[2].value() == heads) {
    for (const Operand* o : {&q, &k, &v}) nodes.insert(nodes.end(), o->nodes.begin(), o->nodes.end());
    nodes.insert(nodes.end(), {rq, rk, rv, &qk, merge_t, merge_r});
    std::vector<ir::Value*> inputs = {rq->input(0), rk->input(0), rv->input(0)};
    if (mask) inputs.push_back(mask);
    ir::AttributeMap attrs;
    attrs["q_num_heads"] = ir::Attribute(heads);
    attrs["kv_num_heads"] = ir::Attribute(heads);
    attrs["scale"] = ir::Attribute(scale * q.scale * k.scale);
    replace_with_node(graph, nodes, merge_r->output(0), "Attention", inputs, std::move(attrs), qk.name());
    return true;
  }

  // 4-D mode: q and v as they are; K is k^T transposed back (a Transpose composed with the one
  // before k^T, or none when they cancel).
  ir::Node* kt = producer_for(qk.input(1), "Transpose", &qk);
  const ir::Shape &q4 = qk.input(0)->shape(), &k4t = qk.input(1)->shape(), &v4 = pv->input(1)->shape();
  if (!kt || q4.rank() != 4 || k4t.rank() != 4 || v4.rank() != 4) return false;
  for (size_t i = 0; i < 2; ++i)  // no broadcasting over batch and heads
    if (!(q4[i] == k4t[i]) || !(q4[i] == v4[i])) return false;
  Perm p = perm_of(*kt), to_k(4);
  const Perm swap = {0, 1, 3, 2};
  bool identity = true;
  for (size_t i = 0; i < 4; ++i) {
    to_k[i] = p[static_cast<size_t>(swap[i])];
    identity &= to_k[i] == static_cast<int64_t>(i);
  }
  ir::Value* k4 = kt->input(0);
  if (!identity) {
    ir::Node* t = graph.add_node("Transpose", {k4}, {graph.unique_value_name(kt->output(0)->name() + ".k")},
                                 {{"perm", ir::Attribute(to_k)}}, kt->name());
    graph.move_last_before(&qk);
    ir::infer_node(*t);
    k4 = t->output(0);
  }
  nodes.insert(nodes.end(), {kt, &qk});
  std::vector<ir::Value*> inputs = {qk.input(0), k4, pv->input(1)};
  if (mask) inputs.push_back(mask);
  ir::AttributeMap attrs;
  attrs["scale"] = ir::Attribute(scale);
  replace_with_node(graph, nodes, pv->output(0), "Attention", inputs, std::move(attrs), qk.name());
  return true;
}

}  // namespace

void recognize_attention(ir::Graph& graph) { rewrite_until_done(graph, try_recognize); }

}  // namespace kiln::passes
