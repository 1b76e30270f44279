// Pass: Transpose sinking. Channels-last frontends (StableHLO, TensorFlow) wrap each NCHW op
// in Transposes: Transpose(NHWC->NCHW), Conv, Transpose(NCHW->NHWC). Between two convolutions
// the bias Add and the Relu then sit between a Transpose and its inverse, where
// fold_transposes cannot cancel them. This pass moves Transposes down past the ops that read
// them until they meet the next Transpose and compose with it (into nothing, when inverse).
//
// The ops a Transpose moves past: those the registry marks elementwise (OpDef::elementwise;
// every other input must be transposed the same way, a constant, which is transposed here, an
// Expand of a constant or one element), Concat and Softmax/LogSoftmax (axis remapped), the
// Reduce ops with constant axes (remapped; with keepdims 0 the result needs a smaller
// Transpose, or none) and Pad with constant pads. From each Transpose the pass grows the
// region of such ops that its result reaches in its layout, joined by the other Transposes of
// the same perm they read, and rewrites the region only when that removes more Transposes than
// it adds where the region's results leave it (read by other ops, or graph outputs): a graph
// whose Transposes lead nowhere is left as it is. Graph outputs keep their names and layouts.
#include <algorithm>
#include <map>
#include <numeric>
#include <set>

#include "ir/op_registry.h"
#include "ir/ops/fused.h"
#include "passes/pass_manager.h"
#include "passes/rewrite.h"

namespace kiln::passes {

namespace {

using Perm = std::vector<int64_t>;

// A Transpose's perm, or empty when its input's shape is not known (then it is left alone).
Perm perm_of(const ir::Node& t) {
  const ir::Value* x = t.input(0);
  if (!x || !x->has_type() || !x->shape().is_known()) return {};
  const int64_t rank = static_cast<int64_t>(x->shape().rank());
  if (t.has_attr("perm")) return t.ints("perm");
  Perm p(static_cast<size_t>(rank));
  for (int64_t i = 0; i < rank; ++i) p[static_cast<size_t>(i)] = rank - 1 - i;
  return p;
}

Perm inverse(const Perm& p) {
  Perm inv(p.size());
  for (size_t i = 0; i < p.size(); ++i) inv[static_cast<size_t>(p[i])] = static_cast<int64_t>(i);
  return inv;
}

bool is_identity(const Perm& p) {
  for (size_t i = 0; i < p.size(); ++i)
    if (p[i] != static_cast<int64_t>(i)) return false;
  return true;
}

// The perm of Transpose(Transpose(x, p), q): empty when the ranks differ.
Perm compose(const Perm& p, const Perm& q) {
  if (p.size() != q.size()) return {};
  Perm composed(q.size());
  for (size_t i = 0; i < q.size(); ++i) composed[i] = p[static_cast<size_t>(q[i])];
  return composed;
}

// How an op is rewritten to read the untransposed tensor.
enum class Kind { None, Elementwise, Concat, Softmax, Reduce, Pad };

const char* const kReduceOps[] = {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
                                  "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"};

Kind kind_of(const ir::Node& n) {
  if (n.num_outputs() != 1) return Kind::None;
  if (n.def().elementwise) return Kind::Elementwise;
  const std::string& op = n.op();
  if (op == "Concat") return Kind::Concat;
  if (op == "Softmax" || op == "LogSoftmax") return Kind::Softmax;
  if (op == "Pad") return Kind::Pad;
  for (const char* r : kReduceOps)
    if (op == r) return Kind::Reduce;
  return Kind::None;
}

// The inputs a Transpose moves through (the others are axes, pads, fill values, left as they are).
bool is_data_input(Kind kind, size_t i) {
  return kind == Kind::Elementwise || kind == Kind::Concat || i == 0;
}

int64_t normalized_axis(int64_t axis, size_t rank) {
  return axis < 0 ? axis + static_cast<int64_t>(rank) : axis;
}

// `v`'s elements as int64 when it is a constant (axes, pads).
std::optional<std::vector<int64_t>> int_constant(const ir::Value* v) {
  if (!v || !v->is_constant() || !ir::is_integer(v->dtype())) return std::nullopt;
  return v->constant().to_int64_vector();
}

// The Reduce op's reduced axes (of `rank`) once checked: nullopt when unknown at compile time,
// all axes when none are given (empty when noop_with_empty_axes makes the op an identity).
std::optional<std::vector<int64_t>> reduced_axes(const ir::Node& n, size_t rank) {
  std::vector<int64_t> axes;
  if (n.has_input(1)) {
    std::optional<std::vector<int64_t>> a = int_constant(n.input(1));
    if (!a) return std::nullopt;
    axes = *a;
  }
  if (axes.empty()) {
    if (n.i("noop_with_empty_axes") != 0) return axes;
    axes.resize(rank);
    std::iota(axes.begin(), axes.end(), 0);
  }
  for (int64_t& a : axes) {
    a = normalized_axis(a, rank);
    if (a < 0 || a >= static_cast<int64_t>(rank)) return std::nullopt;
  }
  return axes;
}

// The region of ops that a set of Transposes of one perm reaches: `layout` holds the values that
// are transposed by `perm` (the Transposes' results and the region ops' results).
class Region {
 public:
  Region(ir::Graph& graph, Perm perm) : graph_(graph), perm_(std::move(perm)) {}

  void grow_from(const std::vector<ir::Node*>& seeds) {
    for (ir::Node* seed : seeds) add_source(seed);
    for (bool changed = true; changed;) {
      changed = false;
      const std::vector<const ir::Value*> values(layout_order_.begin(), layout_order_.end());
      for (const ir::Value* v : values)
        for (ir::Node* r : v->users())
          if (!op_set_.count(r) && r->op() != "Transpose" && accepts(*r)) {
            add_op(r);
            changed = true;
          }
    }
  }

  // Transposes removed minus Transposes added, once the region is rewritten: the sources that
  // only the region and Transposes read, and the Transposes reading the region's values that
  // compose into nothing, go; a Transpose comes after each region op whose result is read
  // outside the region by another op or is a graph output.
  int gain() const {
    int removed = 0, added = 0;
    for (const ir::Node* s : sources_) {
      if (!graph_.is_graph_output(s->output(0)) && only_region_or_transposes(s->output(0))) ++removed;
      removed += cancelling_readers(s->output(0), perm_);
    }
    for (const ir::Node* o : ops_) {
      const std::optional<Perm> p = output_perm(*o);
      if (!p) continue;
      const ir::Value* w = o->output(0);
      if (graph_.is_graph_output(w) || !only_region_or_transposes(w)) ++added;
      removed += cancelling_readers(w, *p);
    }
    return removed - added;
  }

  void rewrite() {
    std::map<const ir::Node*, size_t> order;
    for (size_t i = 0; i < graph_.nodes().size(); ++i) order[graph_.nodes()[i].get()] = i;
    std::vector<ir::Node*> ops = ops_;
    std::sort(ops.begin(), ops.end(), [&](const ir::Node* a, const ir::Node* b) { return order[a] < order[b]; });
    std::vector<ir::Node*> transposes(sources_.begin(), sources_.end());
    std::sort(transposes.begin(), transposes.end(),
              [&](const ir::Node* a, const ir::Node* b) { return order[a] < order[b]; });
    for (ir::Node* o : ops)
      if (ir::Node* t = rewrite_op(*o)) transposes.push_back(t);
    for (size_t i = 0; i < transposes.size(); ++i)
      if (transposes[i]) compose_readers(i, transposes);
    // Then what nobody reads any more (a Transpose may read another; Expands of constants).
    transposes.insert(transposes.end(), expands_.begin(), expands_.end());
    for (bool removed = true; removed;) {
      removed = false;
      for (ir::Node*& t : transposes)
        if (t && t->output(0)->users().empty() && !graph_.is_graph_output(t->output(0))) {
          ir::Node* dead = t;
          for (ir::Node*& entry : transposes)
            if (entry == dead) entry = nullptr;
          graph_.remove_nodes({dead});
          removed = true;
        }
    }
  }

 private:
  size_t rank() const { return perm_.size(); }

  // The value that `v` is the transpose of by perm_, or nullptr.
  ir::Value* untransposed(const ir::Value* v) const {
    const ir::Node* t = v ? v->producer() : nullptr;
    if (!t || t->op() != "Transpose" || perm_of(*t) != perm_) return nullptr;
    return t->input(0);
  }

  bool in_layout(const ir::Value* v) const { return layout_.count(v) || untransposed(v); }

  // A constant broadcast by Expand (what StableHLO's broadcast_in_dim of a bias becomes when too
  // big to fold): the op broadcasts the constant itself as well.
  static ir::Value* expanded_constant(const ir::Value* v) {
    const ir::Node* e = v->producer();
    return e && e->op() == "Expand" && e->input(0)->is_constant() ? e->input(0) : nullptr;
  }

  // Whether `n` can read the untransposed tensors, given the values now known to be transposed.
  bool accepts(const ir::Node& n) const {
    const Kind kind = kind_of(n);
    if (kind == Kind::None) return false;
    const ir::Value* out = n.output(0);
    if (!out->has_type() || !out->shape().is_known()) return false;
    bool transposed = false, expanded = false, full = false;
    for (size_t i = 0; i < n.num_inputs(); ++i) {
      const ir::Value* v = n.input(i);
      if (!v) continue;
      const bool data = is_data_input(kind, i);
      if (in_layout(v)) {
        if (!data || v->shape().rank() != rank()) return false;
        transposed = true;
        full = full || v->shape() == out->shape();
        continue;
      }
      if (!data) continue;
      if (!v->has_type() || !v->shape().is_known() || v->shape().rank() > rank()) return false;
      if (v->is_constant()) {
        if (kind == Kind::Concat && v->shape().rank() != rank()) return false;
      } else if (kind == Kind::Elementwise && expanded_constant(v)) {
        expanded = true;
      } else if (kind != Kind::Elementwise || !v->shape().is_static() || v->shape().numel() != 1) {
        return false;
      }
    }
    // Without its Expand the op's result keeps its shape only when a transposed input has it.
    if (!transposed || (expanded && !full)) return false;
    switch (kind) {
      case Kind::Reduce: return reduced_axes(n, rank()).has_value();
      case Kind::Pad: {
        std::optional<std::vector<int64_t>> pads = int_constant(n.input(1));
        if (!pads) return false;
        if (!n.has_input(3)) return pads->size() == 2 * rank();
        return int_constant(n.input(3)).has_value();
      }
      case Kind::None:
      case Kind::Elementwise:
      case Kind::Concat:
      case Kind::Softmax: return true;
    }
    return false;
  }

  // The perm of the Transpose that must follow `n` once rewritten: perm_ for ops that keep the
  // layout, a smaller one (or none: nullopt) for a Reduce that drops axes.
  std::optional<Perm> output_perm(const ir::Node& n) const {
    if (kind_of(n) != Kind::Reduce || n.i("keepdims") != 0) return perm_;
    std::vector<int64_t> axes = *reduced_axes(n, rank());
    std::vector<int64_t> kept;  // axes of the untransposed input kept, in the result's order
    for (size_t i = 0; i < rank(); ++i)
      if (std::find(axes.begin(), axes.end(), static_cast<int64_t>(i)) == axes.end()) kept.push_back(perm_[i]);
    std::vector<int64_t> sorted = kept;
    std::sort(sorted.begin(), sorted.end());
    Perm q(kept.size());
    for (size_t j = 0; j < kept.size(); ++j)
      q[j] = std::lower_bound(sorted.begin(), sorted.end(), kept[j]) - sorted.begin();
    if (is_identity(q)) return std::nullopt;
    return q;
  }

  // How many Transposes read `v`, which becomes the Transpose by `p` of a value, and undo `p`.
  static int cancelling_readers(const ir::Value* v, const Perm& p) {
    int n = 0;
    for (const ir::Node* r : v->users())
      if (r->op() == "Transpose") {
        const Perm composed = compose(p, perm_of(*r));
        n += !composed.empty() && is_identity(composed);
      }
    return n;
  }

  bool only_region_or_transposes(const ir::Value* v) const {
    for (const ir::Node* r : v->users())
      if (!op_set_.count(r) && r->op() != "Transpose") return false;
    return true;
  }

  void add_value(const ir::Value* v) {
    if (layout_.insert(v).second) layout_order_.push_back(v);
  }

  void add_source(ir::Node* t) {
    if (std::find(sources_.begin(), sources_.end(), t) == sources_.end()) sources_.push_back(t);
    add_value(t->output(0));
  }

  void add_op(ir::Node* n) {
    ops_.push_back(n);
    op_set_.insert(n);
    for (const ir::Value* v : n->inputs())
      if (v && !layout_.count(v))
        if (untransposed(v)) add_source(v->producer());
    if (kind_of(*n) != Kind::Reduce || n->i("keepdims") != 0) add_value(n->output(0));
  }

  // `c` for the untransposed op: given leading 1 dims up to the rank (numpy broadcasting), then
  // transposed by the inverse perm. One element broadcasts the same either way.
  ir::Value* untransposed_constant(ir::Value* c) {
    const ir::Tensor& t = c->constant();
    if (t.numel() == 1) return c;
    std::vector<int64_t> dims(rank() - t.dims().size(), 1);
    dims.insert(dims.end(), t.dims().begin(), t.dims().end());
    ir::Tensor padded = t.reshaped(dims);
    ir::Tensor result = ir::eval_op("Transpose", {{"perm", ir::Attribute(inverse(perm_))}}, {&padded});
    return graph_.add_constant(graph_.unique_value_name(c->name() + "_transposed"), std::move(result));
  }

  ir::Value* constant_i64(const std::string& base, const std::vector<int64_t>& values) {
    return graph_.add_constant(
        graph_.unique_value_name(base),
        ir::Tensor::from_vector<int64_t>(ir::DType::I64, {static_cast<int64_t>(values.size())}, values));
  }

  // Rewrites `o` to read the untransposed inputs and returns the Transpose now computing its
  // result (nullptr when none is needed).
  ir::Node* rewrite_op(ir::Node& o) {
    const Kind kind = kind_of(o);
    const std::optional<Perm> out_perm = output_perm(o);
    std::vector<ir::Value*> inputs;
    for (size_t i = 0; i < o.num_inputs(); ++i) {
      ir::Value* v = o.input(i);
      if (v && is_data_input(kind, i)) {
        if (ir::Value* x = untransposed(v)) {
          v = x;
        } else if (v->is_constant()) {
          v = untransposed_constant(v);
        } else if (ir::Value* c = expanded_constant(v)) {
          expands_.push_back(v->producer());
          v = untransposed_constant(c);
        }
      }
      inputs.push_back(v);
    }
    ir::AttributeMap attrs = o.attrs();
    if (kind == Kind::Concat || kind == Kind::Softmax)
      attrs["axis"] = ir::Attribute(perm_[static_cast<size_t>(normalized_axis(o.i("axis"), rank()))]);
    if (kind == Kind::Reduce && o.has_input(1) && !int_constant(o.input(1))->empty()) {
      std::vector<int64_t> axes = *reduced_axes(o, rank());
      for (int64_t& a : axes) a = perm_[static_cast<size_t>(a)];
      std::sort(axes.begin(), axes.end());
      inputs[1] = constant_i64(o.input(1)->name() + "_transposed", axes);
    }
    if (kind == Kind::Pad && o.has_input(3)) {
      std::vector<int64_t> axes = *int_constant(o.input(3));
      for (int64_t& a : axes) a = perm_[static_cast<size_t>(normalized_axis(a, rank()))];
      inputs[3] = constant_i64(o.input(3)->name() + "_transposed", axes);
    } else if (kind == Kind::Pad) {
      std::vector<int64_t> pads = *int_constant(o.input(1)), moved(pads.size());
      for (size_t i = 0; i < rank(); ++i) {
        moved[static_cast<size_t>(perm_[i])] = pads[i];
        moved[rank() + static_cast<size_t>(perm_[i])] = pads[rank() + i];
      }
      inputs[1] = constant_i64(o.input(1)->name() + "_transposed", moved);
    }

    ir::Value* w = o.output(0);
    const std::string op = o.op(), name = o.name();
    if (!out_perm) {
      replace_with_node(graph_, {&o}, w, op, inputs, attrs, name);
      return nullptr;
    }
    const ir::AttributeMap transpose_attrs = {{"perm", ir::Attribute(*out_perm)}};
    if (graph_.is_graph_output(w)) {  // the Transpose keeps computing the graph output
      ir::Node* inner = graph_.add_node(op, inputs, {graph_.unique_value_name(w->name())}, attrs, name);
      graph_.move_last_before(&o);
      ir::infer_node(*inner);
      return replace_with_node(graph_, {&o}, w, "Transpose", {inner->output(0)}, transpose_attrs,
                               name + "_transpose");
    }
    // The rewritten op keeps the result's name; its readers read the Transpose after it.
    ir::Node* inner = replace_with_node(graph_, {&o}, w, op, inputs, attrs, name);
    ir::Value* y = inner->output(0);
    ir::Node* t = add_node_after(graph_, y, "Transpose", {y}, y->name() + "_transpose", transpose_attrs);
    const std::vector<ir::Node*> readers = y->users();
    for (ir::Node* r : readers) {
      if (r == t) continue;
      for (size_t i = 0; i < r->num_inputs(); ++i)
        if (r->input(i) == y) r->set_input(i, t->output(0));
    }
    return t;
  }

  // Each Transpose reading the result of transposes[i] becomes one Transpose of its input, or
  // goes; entries of `transposes` that are replaced or removed are updated.
  void compose_readers(size_t i, std::vector<ir::Node*>& transposes) {
    const ir::Node& t = *transposes[i];
    const Perm p = perm_of(t);
    ir::Value* x = t.input(0);
    const std::vector<ir::Node*> readers = t.output(0)->users();
    for (ir::Node* r : readers) {
      if (r->op() != "Transpose") continue;
      const Perm composed = compose(p, perm_of(*r));
      if (composed.empty()) continue;
      ir::Value* out = r->output(0);
      ir::Node* replaced = nullptr;
      if (!is_identity(composed)) {
        replaced = replace_with_node(graph_, {r}, out, "Transpose", {x}, {{"perm", ir::Attribute(composed)}}, r->name());
      } else if (graph_.is_graph_output(out)) {
        replaced = replace_with_node(graph_, {r}, out, "Identity", {x}, {}, r->name());
      } else {
        graph_.replace_all_uses(out, x);
        graph_.remove_nodes({r});
      }
      for (ir::Node*& other : transposes)
        if (other == r) other = replaced && replaced->op() == "Transpose" ? replaced : nullptr;
    }
  }

  ir::Graph& graph_;
  const Perm perm_;
  std::vector<ir::Node*> sources_;  // the Transposes by perm_ that region ops read
  std::vector<ir::Node*> ops_;
  std::vector<ir::Node*> expands_;  // Expands of constants that rewritten ops no longer read
  std::set<const ir::Node*> op_set_;
  std::set<const ir::Value*> layout_;
  std::vector<const ir::Value*> layout_order_;
};

// Grows a region from each Transpose in turn and rewrites the first that gains; false when none does.
// The region first grows from every Transpose of the same perm at once: a residual network's
// Add reads two branches that each start at their own Transpose (the block's last convolution,
// and the shortcut or the previous block's output), so no single one of them reaches it with
// both inputs in the layout. Where the whole set gains nothing, each Transpose is tried alone,
// and so is every Transpose whose perm is its own inverse: there the set holds both the
// Transposes into a layout and those back out of it, and one region cannot tell them apart.
bool sink_one_region(ir::Graph& graph) {
  for (const auto& n : graph.nodes()) {
    if (n->op() != "Transpose" || graph.is_graph_output(n->output(0))) continue;
    Perm p = perm_of(*n);
    if (p.empty() || is_identity(p)) continue;
    std::vector<ir::Node*> same;
    if (!is_identity(compose(p, p)))
      for (const auto& m : graph.nodes())
        if (m->op() == "Transpose" && !graph.is_graph_output(m->output(0)) && perm_of(*m) == p) same.push_back(m.get());
    for (const std::vector<ir::Node*>& seeds : {same, std::vector<ir::Node*>{n.get()}}) {
      if (seeds.empty()) continue;
      Region region(graph, p);
      region.grow_from(seeds);
      if (region.gain() <= 0) continue;
      region.rewrite();
      return true;
    }
  }
  return false;
}

}  // namespace

void sink_transposes(ir::Graph& graph) {
  // Each rewrite removes at least one Transpose, so this ends; the count guards against a
  // gain estimate that a rewrite does not make good.
  auto transposes = [&] {
    return std::count_if(graph.nodes().begin(), graph.nodes().end(),
                         [](const auto& n) { return n->op() == "Transpose"; });
  };
  for (auto before = transposes(); sink_one_region(graph);) {
    const auto after = transposes();
    if (after >= before) break;
    before = after;
  }
  graph.remove_unused_values();
}

}  // namespace kiln::passes
