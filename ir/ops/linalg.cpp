// Linear algebra beyond matrix products: Einsum (any equation, as one loop nest over its
// labels) and Det. The kernels are the runtime's (kiln/rt/linalg.h), shared with the
// generated code.
#include "ir/ops/linalg.h"

#include <algorithm>
#include <map>
#include <type_traits>

#include "ir/ops/op_helpers.h"
#include "kiln/rt/linalg.h"

namespace kiln::ir {

namespace {

constexpr int kEllipsis = 52;  // label ids: a-z 0..25, A-Z 26..51, ellipsis dims from 52

int label_id(char c) { return c >= 'a' && c <= 'z' ? c - 'a' : c >= 'A' && c <= 'Z' ? 26 + (c - 'A') : -1; }
// For the implicit output's alphabetical order (ASCII: uppercase first).
char label_char(int id) { return static_cast<char>(id < 26 ? 'a' + id : 'A' + (id - 26)); }

// One term of the equation: its letters' ids, with kEllipsis where "..." stands.
std::vector<int> parse_term(const Node& node, const std::string& term) {
  std::vector<int> ids;
  bool ellipsis = false;
  for (size_t i = 0; i < term.size(); ++i) {
    if (term.compare(i, 3, "...") == 0) {
      if (ellipsis) fail("{}: term '{}' has more than one ellipsis", node.describe(), term);
      ellipsis = true;
      ids.push_back(kEllipsis);
      i += 2;
      continue;
    }
    const int id = label_id(term[i]);
    if (id < 0) fail("{}: equation term '{}' has '{}', expected letters or ...", node.describe(), term, term[i]);
    ids.push_back(id);
  }
  return ids;
}

// Each input's dims as label ids (its ellipsis expanded, right-aligned across inputs) and the
// output's label ids.
struct EinsumLabels {
  std::vector<std::vector<int>> inputs;
  std::vector<int> output;
};

EinsumLabels parse_einsum(const Node& node, const std::vector<size_t>& ranks) {
  std::string eq;
  for (char c : node.s("equation"))
    if (c != ' ') eq += c;
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::vector<int>> terms;
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    terms.push_back(parse_term(node, lhs.substr(start, comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != ranks.size())
    fail("{}: equation '{}' has {} input terms for {} inputs", node.describe(), node.s("equation"), terms.size(),
         ranks.size());
  int ellipsis_rank = 0;
  EinsumLabels out;
  for (size_t k = 0; k < terms.size(); ++k) {
    const bool has = std::count(terms[k].begin(), terms[k].end(), kEllipsis) > 0;
    const int64_t letters = static_cast<int64_t>(terms[k].size()) - (has ? 1 : 0);
    const int64_t covered = static_cast<int64_t>(ranks[k]) - letters;
    if (covered < 0 || (!has && covered != 0))
      fail("{}: term {} of equation '{}' does not match input {} of rank {}", node.describe(), k, node.s("equation"),
           k, ranks[k]);
    ellipsis_rank = std::max(ellipsis_rank, static_cast<int>(covered));
  }
  for (size_t k = 0; k < terms.size(); ++k) {
    const int covered = static_cast<int>(ranks[k]) - static_cast<int>(terms[k].size()) + 1;
    std::vector<int> dims;
    for (int id : terms[k])
      if (id == kEllipsis)
        for (int j = 0; j < covered; ++j) dims.push_back(kEllipsis + ellipsis_rank - covered + j);
      else
        dims.push_back(id);
    out.inputs.push_back(std::move(dims));
  }
  if (arrow != std::string::npos) {
    for (int id : parse_term(node, eq.substr(arrow + 2))) {
      if (id == kEllipsis) {
        for (int j = 0; j < ellipsis_rank; ++j) out.output.push_back(kEllipsis + j);
        continue;
      }
      if (std::count(out.output.begin(), out.output.end(), id))
        fail("{}: output label '{}' appears twice", node.describe(), label_char(id));
      bool found = false;
      for (const auto& in : out.inputs) found = found || std::count(in.begin(), in.end(), id);
      if (!found) fail("{}: output label '{}' is in no input term", node.describe(), label_char(id));
      out.output.push_back(id);
    }
  } else {
    // Implicit: ellipsis dims, then the letters used once, alphabetically.
    for (int j = 0; j < ellipsis_rank; ++j) out.output.push_back(kEllipsis + j);
    std::vector<char> once;
    for (int id = 0; id < kEllipsis; ++id) {
      int64_t uses = 0;
      for (const auto& in : out.inputs) uses += std::count(in.begin(), in.end(), id);
      if (uses == 1) once.push_back(label_char(id));
    }
    std::sort(once.begin(), once.end());
    for (char c : once) out.output.push_back(label_id(c));
  }
  return out;
}

std::vector<size_t> ranks_of(const std::vector<Shape>& shapes) {
  std::vector<size_t> r;
  for (const Shape& s : shapes) r.push_back(s.rank());
  return r;
}

// Each label's size: its dims must agree, except that ellipsis dims of 1 broadcast.
std::map<int, Dim> label_dims(const Node& node, const EinsumLabels& labels, const std::vector<Shape>& shapes) {
  std::map<int, Dim> dims;
  for (size_t k = 0; k < shapes.size(); ++k)
    for (size_t d = 0; d < shapes[k].rank(); ++d) {
      const int id = labels.inputs[k][d];
      const Dim& dim = shapes[k][d];
      auto it = dims.find(id);
      if (it == dims.end() || (it->second.is_static() && it->second.value() == 1 && id >= kEllipsis)) {
        dims[id] = dim;
      } else if (dim.is_static() && it->second.is_static() && dim.value() != it->second.value() &&
                 !(id >= kEllipsis && dim.value() == 1)) {
        fail("{}: label dims disagree: {} against {} (input {} dim {})", node.describe(), dim.value(),
             it->second.value(), k, d);
      }
    }
  return dims;
}

void infer_einsum(Node& node) {
  std::vector<Shape> shapes;
  for (size_t i = 0; i < node.num_inputs(); ++i) {
    require_same_dtype(node, 0, i);
    shapes.push_back(node.input(i)->shape());
  }
  EinsumLabels labels = parse_einsum(node, ranks_of(shapes));
  std::map<int, Dim> dims = label_dims(node, labels, shapes);
  std::vector<Dim> out;
  for (int id : labels.output) out.push_back(dims.at(id));
  node.output(0)->set_type(node.input(0)->dtype(), Shape(out));
}

void eval_einsum(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  std::vector<std::vector<int64_t>> dims;
  for (const Tensor* t : in) dims.push_back(t->dims());
  const EinsumPlan plan = einsum_plan(node, dims);
  out[0] = Tensor(in[0]->dtype(), plan.out_dims);
  visit_dtype(in[0]->dtype(), [&]<class S>() {
    using Acc = std::conditional_t<std::is_floating_point_v<compute_t<S>>, compute_t<S>, int64_t>;
    std::vector<const S*> ptrs;
    for (const Tensor* t : in) ptrs.push_back(t->data<S>());
    rt::einsum<S, Acc>(plan.n_out, static_cast<int>(plan.dims.size()) - plan.n_out, plan.dims.data(),
                       static_cast<int>(in.size()), ptrs.data(), plan.strides.data(), out[0].mutable_data<S>());
  });
}

// ---- Det -----------------------------------------------------------------------------------

void check_det(const Node& node, const Shape& x) {
  const size_t r = x.rank();
  if (r < 2 || (x[r - 1].is_static() && x[r - 2].is_static() && x[r - 1].value() != x[r - 2].value()))
    fail("{}: input {} must be square matrices [..., M, M]", node.describe(), x.str());
}

void infer_det(Node& node) {
  require_float(node, 0);
  const Shape& x = node.input(0)->shape();
  check_det(node, x);
  node.output(0)->set_type(node.input(0)->dtype(), Shape(std::vector<Dim>(x.dims().begin(), x.dims().end() - 2)));
}

void eval_det(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  check_det(node, x.shape());
  const int64_t n = x.dims().back();
  std::vector<int64_t> batch_dims(x.dims().begin(), x.dims().end() - 2);
  out[0] = Tensor(x.dtype(), batch_dims);
  visit_float(node, x.dtype(), [&]<class S>() {
    using C = compute_t<S>;
    std::vector<C> scratch(static_cast<size_t>(n * n));
    rt::det<S, C>(numel(batch_dims), n, x.data<S>(), out[0].mutable_data<S>(), scratch.data());
  });
}

}  // namespace

EinsumPlan einsum_plan(const Node& node, const std::vector<std::vector<int64_t>>& inputs) {
  std::vector<Shape> shapes;
  for (const auto& d : inputs) shapes.push_back(Shape::of(d));
  EinsumLabels labels = parse_einsum(node, ranks_of(shapes));
  std::map<int, Dim> dims = label_dims(node, labels, shapes);
  std::vector<int> order = labels.output;
  for (const auto& in : labels.inputs)
    for (int id : in)
      if (std::find(order.begin(), order.end(), id) == order.end()) order.push_back(id);
  EinsumPlan plan;
  plan.n_out = static_cast<int>(labels.output.size());
  for (int id : order) plan.dims.push_back(dims.at(id).value());
  for (int id : labels.output) plan.out_dims.push_back(dims.at(id).value());
  for (size_t k = 0; k < inputs.size(); ++k) {
    std::vector<int64_t> st = contiguous_strides(inputs[k]);
    std::vector<int64_t> row(order.size(), 0);
    for (size_t d = 0; d < inputs[k].size(); ++d) {
      const auto l = static_cast<size_t>(std::find(order.begin(), order.end(), labels.inputs[k][d]) - order.begin());
      if (inputs[k][d] != 1 || plan.dims[l] == 1) row[l] += st[d];
    }
    plan.strides.insert(plan.strides.end(), row.begin(), row.end());
  }
  return plan;
}

void register_linalg_ops(Registry& r) {
  r.add(OpDef{
      .name = "Einsum",
      .summary = "Einstein summation over the equation's labels (diagonals, transposes, contractions)",
      .inputs = {{"Inputs", false, true}},
      .outputs = {"Output"},
      .attrs = {{"equation", AttrType::String}},
      .infer = infer_einsum,
      .eval = eval_einsum,
  });
  r.add(OpDef{
      .name = "Det",
      .summary = "determinant of each square matrix in the last two dims",
      .inputs = {{"X"}},
      .outputs = {"Y"},
      .infer = infer_det,
      .eval = eval_det,
  });
}

}  // namespace kiln::ir
