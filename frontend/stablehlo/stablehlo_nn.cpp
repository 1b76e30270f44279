// StableHLO's dot_general, convolution, reduce and reduce_window as IR nodes: MatMul, Conv,
// Reduce* and the pools, with the transposes and reshapes their layouts need.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <numeric>

#include "frontend/stablehlo/stablehlo_internal.h"
#include "ir/error.h"

namespace kiln::frontend::stablehlo {
namespace {

using Values = std::vector<ir::Value*>;

int64_t product(const std::vector<int64_t>& v) {
  return std::accumulate(v.begin(), v.end(), int64_t{1}, std::multiplies<>());
}

// `key = [1, 2]` inside an opaque attribute's text (#stablehlo.dot<...>), or `key = 3` as
// {3}; empty when absent.
std::vector<int64_t> opaque_ints(Lowering& L, const std::string& text, const std::string& key) {
  size_t at = 0;
  for (;;) {
    at = text.find(key, at);
    if (at == std::string::npos) return {};
    bool starts = at == 0 || !(std::isalnum(static_cast<unsigned char>(text[at - 1])) || text[at - 1] == '_');
    size_t after = at + key.size();
    while (after < text.size() && text[after] == ' ') ++after;
    if (starts && after < text.size() && text[after] == '=') {
      at = after + 1;
      break;
    }
    at += key.size();
  }
  while (at < text.size() && text[at] == ' ') ++at;
  if (at < text.size() && std::isdigit(static_cast<unsigned char>(text[at]))) {
    size_t end = at;
    while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
    if (end - at > 9) L.fail_op(fmt::format("'{}' in '{}' is not a dim number", text.substr(at, end - at), key));
    return {std::stoll(text.substr(at, end - at))};
  }
  size_t open = text.find('[', at), close = text.find(']', at);
  if (open == std::string::npos || close == std::string::npos || close < open)
    L.fail_op(fmt::format("malformed '{}' in {}", key, text));
  std::vector<int64_t> out;
  std::string item;
  for (size_t k = open + 1; k <= close; ++k) {
    char c = text[k];
    if (c == ',' || c == ']') {
      size_t a = item.find_first_not_of(' '), b = item.find_last_not_of(' ');
      if (a != std::string::npos) {
        std::string s = item.substr(a, b - a + 1);
        if (s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos)
          L.fail_op(fmt::format("'{}' in '{}' is not a dim number", s, key));
        out.push_back(std::stoll(s));
      }
      item.clear();
    } else {
      item += c;
    }
  }
  return out;
}

void check_dims(Lowering& L, const std::vector<int64_t>& d, size_t rank, const char* what) {
  for (int64_t x : d)
    if (x < 0 || x >= static_cast<int64_t>(rank)) L.fail_op(fmt::format("{} dim {} is out of range for rank {}", what, x, rank));
}

// ---- dot_general ----------------------------------------------------------------------------

Values dot_general(Lowering& L, const Values& in) {
  if (in.size() != 2) L.fail_op("expected 2 operands");
  std::vector<int64_t> lb, rb, lc, rc;
  if (const Attr* dn = L.find_attr("dot_dimension_numbers")) {
    lb = opaque_ints(L, dn->s, "lhs_batching_dimensions");
    rb = opaque_ints(L, dn->s, "rhs_batching_dimensions");
    lc = opaque_ints(L, dn->s, "lhs_contracting_dimensions");
    rc = opaque_ints(L, dn->s, "rhs_contracting_dimensions");
  } else {
    auto pair = [&](const char* key, std::vector<int64_t>& l, std::vector<int64_t>& r) {
      const Attr* a = L.find_attr(key);
      if (!a) return;
      if (a->kind != Attr::Kind::List || a->items.size() != 2 || a->s != "joined")
        L.fail_op(fmt::format("{}: expected [..] x [..]", key));
      l = L.ints(a->items[0], key);
      r = L.ints(a->items[1], key);
    };
    pair("batching_dims", lb, rb);
    pair("contracting_dims", lc, rc);
  }
  const std::vector<int64_t> A = L.dims(in[0]), B = L.dims(in[1]);
  check_dims(L, lb, A.size(), "lhs batching");
  check_dims(L, lc, A.size(), "lhs contracting");
  check_dims(L, rb, B.size(), "rhs batching");
  check_dims(L, rc, B.size(), "rhs contracting");
  if (lb.size() != rb.size() || lc.size() != rc.size())
    L.fail_op("lhs and rhs name different numbers of batching or contracting dims");
  std::vector<int> luse(A.size(), 0), ruse(B.size(), 0);
  for (size_t k = 0; k < lb.size(); ++k) {
    if (A[static_cast<size_t>(lb[k])] != B[static_cast<size_t>(rb[k])]) L.fail_op("batching dims differ in size");
    ++luse[static_cast<size_t>(lb[k])];
    ++ruse[static_cast<size_t>(rb[k])];
  }
  for (size_t k = 0; k < lc.size(); ++k) {
    if (A[static_cast<size_t>(lc[k])] != B[static_cast<size_t>(rc[k])]) L.fail_op("contracting dims differ in size");
    ++luse[static_cast<size_t>(lc[k])];
    ++ruse[static_cast<size_t>(rc[k])];
  }
  std::vector<int64_t> lfree, rfree;
  for (size_t d = 0; d < A.size(); ++d) {
    if (luse[d] > 1) L.fail_op(fmt::format("lhs dim {} is named twice", d));
    if (!luse[d]) lfree.push_back(static_cast<int64_t>(d));
  }
  for (size_t d = 0; d < B.size(); ++d) {
    if (ruse[d] > 1) L.fail_op(fmt::format("rhs dim {} is named twice", d));
    if (!ruse[d]) rfree.push_back(static_cast<int64_t>(d));
  }
  const ir::DType out_type = L.result_type().dtype;
  // x[..., K] . w[K, N] (a dense layer): MatMul as it stands.
  if (lb.empty() && lc.size() == 1 && lc[0] == static_cast<int64_t>(A.size()) - 1 && B.size() == 2 && A.size() >= 2) {
    ir::Value* w = rc[0] == 0 ? in[1] : L.transpose(in[1], {1, 0});
    return {L.cast(L.node("MatMul", {in[0], w}), out_type)};
  }
  auto gather = [](const std::vector<int64_t>& dims, const std::vector<int64_t>& which) {
    std::vector<int64_t> out;
    for (int64_t d : which) out.push_back(dims[static_cast<size_t>(d)]);
    return out;
  };
  std::vector<int64_t> batch = gather(A, lb);
  const int64_t M = product(gather(A, lfree)), K = product(gather(A, lc)), N = product(gather(B, rfree));
  std::vector<int64_t> lperm = lb, rperm = rb;
  lperm.insert(lperm.end(), lfree.begin(), lfree.end());
  lperm.insert(lperm.end(), lc.begin(), lc.end());
  rperm.insert(rperm.end(), rc.begin(), rc.end());
  rperm.insert(rperm.end(), rfree.begin(), rfree.end());
  std::vector<int64_t> lshape = batch, rshape = batch;
  lshape.insert(lshape.end(), {M, K});
  rshape.insert(rshape.end(), {K, N});
  ir::Value* l = L.reshape(L.transpose(in[0], lperm), lshape);
  ir::Value* r = L.reshape(L.transpose(in[1], rperm), rshape);
  ir::Value* y = L.node("MatMul", {l, r});
  std::vector<int64_t> out = batch;
  for (int64_t d : gather(A, lfree)) out.push_back(d);
  for (int64_t d : gather(B, rfree)) out.push_back(d);
  return {L.cast(L.reshape(y, out), out_type)};
}

// ---- convolution ------------------------------------------------------------------------------

// The three layouts of `[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]`, as tokens.
std::vector<std::vector<std::string>> conv_layouts(Lowering& L) {
  std::vector<std::vector<std::string>> out;
  if (const Attr* a = L.find_attr("dim_numbers")) {
    if (a->kind != Attr::Kind::List || a->items.size() != 3 || a->s != "joined")
      L.fail_op("dim_numbers: expected [..]x[..]->[..]");
    for (const Attr& list : a->items) {
      std::vector<std::string> tokens;
      for (const Attr& t : list.items) {
        if (t.kind == Attr::Kind::Int) tokens.push_back(std::to_string(t.i));
        else if (t.kind == Attr::Kind::Word) tokens.push_back(t.s);
        else L.fail_op(fmt::format("dim_numbers: unexpected {}", t.describe()));
      }
      out.push_back(tokens);
    }
    return out;
  }
  const Attr& a = L.attr("dimension_numbers");
  size_t open = a.s.find('<');
  std::string text = open == std::string::npos ? a.s : a.s.substr(open + 1);
  std::vector<std::string> tokens;
  std::string tok;
  bool inside = false;
  for (char c : text) {
    if (c == '[') {
      inside = true;
      tokens.clear();
      tok.clear();
    } else if (c == ',' || c == ']') {
      if (!inside) continue;
      size_t x = tok.find_first_not_of(' '), y = tok.find_last_not_of(' ');
      if (x != std::string::npos) tokens.push_back(tok.substr(x, y - x + 1));
      tok.clear();
      if (c == ']') {
        out.push_back(tokens);
        inside = false;
      }
    } else if (inside) {
      tok += c;
    }
  }
  if (out.size() != 3) L.fail_op(fmt::format("dimension_numbers: expected [..]x[..]->[..], found {}", a.s));
  return out;
}

// Position of each token of `layout`: the two letters first, then spatial 0..n-1.
std::vector<int64_t> layout_perm(Lowering& L, const std::vector<std::string>& layout, const char* first,
                                 const char* second, const char* what) {
  const size_t n = layout.size() < 2 ? 0 : layout.size() - 2;
  std::vector<int64_t> perm(layout.size(), -1);
  for (size_t k = 0; k < layout.size(); ++k) {
    const std::string& t = layout[k];
    int64_t slot = -1;
    if (t == first) slot = 0;
    else if (t == second) slot = 1;
    else if (!t.empty() && t.size() < 4 && std::all_of(t.begin(), t.end(), ::isdigit) && std::stoul(t) < n)
      slot = 2 + static_cast<int64_t>(std::stoul(t));
    if (slot < 0 || perm[static_cast<size_t>(slot)] != -1)
      L.fail_op(fmt::format("the {} layout [{}] is not {}, {} and spatial dims 0..{}", what, fmt::join(layout, ", "),
                            first, second, static_cast<int64_t>(n) - 1));
    perm[static_cast<size_t>(slot)] = static_cast<int64_t>(k);
  }
  return perm;
}

Values convolution(Lowering& L, const Values& in) {
  if (in.size() != 2) L.fail_op("expected 2 operands");
  auto layouts = conv_layouts(L);
  const std::vector<int64_t> X = L.dims(in[0]), W = L.dims(in[1]);
  if (layouts[0].size() != X.size() || layouts[1].size() != W.size() || layouts[2].size() != X.size())
    L.fail_op("the layouts do not match the operands' ranks");
  if (X.size() < 3) L.fail_op("convolution needs at least one spatial dim");
  const size_t n = X.size() - 2;
  std::vector<int64_t> xperm = layout_perm(L, layouts[0], "b", "f", "input");
  std::vector<int64_t> wperm = layout_perm(L, layouts[1], "o", "i", "kernel");
  std::vector<int64_t> yslots = layout_perm(L, layouts[2], "b", "f", "output");

  std::vector<int64_t> strides(n, 1), dilations(n, 1), lhs_dilate(n, 1), pads(2 * n, 0);
  std::vector<int64_t> pad_pairs;
  if (const Attr* window = L.find_attr("window")) {
    if (window->kind != Attr::Kind::Dict) L.fail_op("window: expected {...}");
    if (const Attr* a = window->find("stride")) strides = L.ints(*a, "stride");
    if (const Attr* a = window->find("rhs_dilate")) dilations = L.ints(*a, "rhs_dilate");
    if (const Attr* a = window->find("lhs_dilate")) lhs_dilate = L.ints(*a, "lhs_dilate");
    if (const Attr* a = window->find("pad")) {
      if (a->kind != Attr::Kind::List) L.fail_op("pad: expected [[lo, hi], ...]");
      for (const Attr& p : a->items) {
        std::vector<int64_t> pair = L.ints(p, "pad");
        if (pair.size() != 2) L.fail_op("pad: expected [lo, hi] pairs");
        pad_pairs.insert(pad_pairs.end(), pair.begin(), pair.end());
      }
    }
    if (const Attr* a = window->find("reverse"))
      for (const Attr& r : a->items)
        if (r.kind == Attr::Kind::Bool && r.i) L.fail_op("reversed windows are not supported");
  } else {
    if (const Attr* a = L.find_attr("window_strides")) strides = L.ints(*a, "window_strides");
    if (const Attr* a = L.find_attr("rhs_dilation")) dilations = L.ints(*a, "rhs_dilation");
    if (const Attr* a = L.find_attr("lhs_dilation")) lhs_dilate = L.ints(*a, "lhs_dilation");
    if (const Attr* a = L.find_attr("padding")) pad_pairs = L.ints(*a, "padding");
    if (const Attr* a = L.find_attr("window_reversal"))
      for (int64_t r : L.ints(*a, "window_reversal"))
        if (r) L.fail_op("reversed windows are not supported");
  }
  if (!pad_pairs.empty()) {
    if (pad_pairs.size() != 2 * n) L.fail_op(fmt::format("padding for {} dims, the convolution has {}", pad_pairs.size() / 2, n));
    for (size_t k = 0; k < n; ++k) {
      pads[k] = pad_pairs[2 * k];
      pads[n + k] = pad_pairs[2 * k + 1];
    }
  }
  if (strides.size() != n || dilations.size() != n || lhs_dilate.size() != n)
    L.fail_op(fmt::format("window attributes for the wrong number of spatial dims (expected {})", n));
  for (size_t k = 0; k < n; ++k) {
    if (lhs_dilate[k] != 1) L.fail_op("lhs_dilate (a transposed convolution) is not supported");
    if (strides[k] < 1 || dilations[k] < 1) L.fail_op("strides and dilations must be positive");
  }
  for (int64_t p : pads)
    if (p < 0) L.fail_op("negative padding is not supported");
  int64_t groups = 1;
  if (const Attr* a = L.find_attr("feature_group_count")) groups = L.integer(*a, "feature_group_count");
  if (const Attr* a = L.find_attr("batch_group_count"))
    if (L.integer(*a, "batch_group_count") != 1) L.fail_op("batch_group_count other than 1 is not supported");
  if (groups < 1) L.fail_op("feature_group_count must be positive");

  ir::Value* x = L.transpose(in[0], xperm);
  ir::Value* w = L.transpose(in[1], wperm);
  std::vector<int64_t> kernel;
  for (size_t k = 0; k < n; ++k) kernel.push_back(W[static_cast<size_t>(wperm[2 + k])]);
  ir::Value* y = L.node("Conv", {x, w},
                        {{"strides", strides}, {"pads", pads}, {"dilations", dilations}, {"group", groups},
                         {"kernel_shape", kernel}});
  // Result dim k is NCHW dim slot(k).
  std::vector<int64_t> back(yslots.size());
  for (size_t slot = 0; slot < yslots.size(); ++slot) back[static_cast<size_t>(yslots[slot])] = static_cast<int64_t>(slot);
  return {L.cast(L.transpose(y, back), L.result_type().dtype)};
}

// ---- reduce and reduce_window ------------------------------------------------------------------

// The combiner of a reduction: "stablehlo.add" etc., from `applies X` or a one-op body.
std::string reducer_kind(Lowering& L) {
  const Op& op = L.op();
  auto applies = std::find(op.words.begin(), op.words.end(), "applies");
  if (applies != op.words.end()) {
    if (applies + 1 == op.words.end()) L.fail_op("'applies' without an op");
    return *(applies + 1);
  }
  if (op.regions.size() != 1) L.fail_op("expected one reducer region");
  const Block& b = op.regions[0];
  if (b.args.size() != 2 || b.ops.size() != 2 || b.ops[1].name != "stablehlo.return" || b.ops[0].results.size() != 1 ||
      b.ops[1].operands.size() != 1 || b.ops[1].operands[0] != b.ops[0].results[0] || b.ops[0].operands.size() != 2)
    L.fail_op("only reducers of one binary op on the two block arguments are supported");
  const Op& body = b.ops[0];
  const bool args = (body.operands[0] == b.args[0].first && body.operands[1] == b.args[1].first) ||
                    (body.operands[0] == b.args[1].first && body.operands[1] == b.args[0].first);
  if (!args) L.fail_op("only reducers of one binary op on the two block arguments are supported");
  return body.name;
}

// Whether `init` is the identity of `kind` (no combining needed).
bool is_identity(const ir::Value* init, const std::string& kind) {
  const ir::Tensor* t = Lowering::constant_of(init);
  if (!t || t->numel() != 1) return false;
  const double v = t->as_double(0);
  if (kind == "stablehlo.add") return v == 0;
  if (kind == "stablehlo.multiply" || kind == "stablehlo.and") return v == 1;
  if (kind == "stablehlo.or") return v == 0;
  const double inf = std::numeric_limits<double>::infinity();
  if (ir::is_float(t->dtype())) return kind == "stablehlo.maximum" ? v == -inf : v == inf;
  int64_t i = t->as_int64(0);
  const int bits = static_cast<int>(8 * ir::dtype_size(t->dtype()));
  if (!ir::is_signed(t->dtype())) return kind == "stablehlo.maximum" ? i == 0 : false;
  const int64_t lo = bits >= 64 ? INT64_MIN : -(int64_t{1} << (bits - 1));
  const int64_t hi = bits >= 64 ? INT64_MAX : (int64_t{1} << (bits - 1)) - 1;
  return kind == "stablehlo.maximum" ? i == lo : i == hi;
}

const char* combine_op(Lowering& L, const std::string& kind) {
  if (kind == "stablehlo.and") return "And";
  if (kind == "stablehlo.or") return "Or";
  if (kind == "stablehlo.add") return "Add";
  if (kind == "stablehlo.maximum") return "Max";
  if (kind == "stablehlo.minimum") return "Min";
  if (kind == "stablehlo.multiply") return "Mul";
  L.fail_op(fmt::format("reductions with '{}' are not supported (add, maximum, minimum, multiply are)", kind));
}

// Whether `t` counts 0, 1, 2... along dim `d` (a stablehlo.iota, as argmax reduces it).
bool is_iota(const ir::Tensor* t, const std::vector<int64_t>& dims, int64_t d) {
  if (!t || t->dims() != dims) return false;
  int64_t inner = 1;
  for (size_t k = static_cast<size_t>(d) + 1; k < dims.size(); ++k) inner *= dims[k];
  for (int64_t i = 0; i < t->numel(); ++i)
    if (t->as_int64(i) != (i / inner) % dims[static_cast<size_t>(d)]) return false;
  return true;
}

// jnp.argmax / argmin: a reduce of (x, iota along one dim) whose body returns first a select
// between the two values of x by a GT/GE/LT/LE comparison of them (and the index of the
// chosen one). Becomes ReduceMax/Min and ArgMax/Min (the first index on ties; NaN, which JAX
// takes as the largest, is never chosen by kiln's reference).
Values arg_reduce(Lowering& L, const Values& in) {
  const Op& op = L.op();
  const std::string unsupported = "reductions of several operands are supported only as argmax and argmin";
  std::vector<int64_t> axes = L.ints(L.attr("dimensions"), "dimensions");
  const std::vector<int64_t> X = L.dims(in[0]);
  check_dims(L, axes, X.size(), "reduced");
  if (in.size() != 4 || axes.size() != 1 || op.regions.size() != 1 || !is_iota(Lowering::constant_of(in[1]), X, axes[0]))
    L.fail_op(unsupported);
  const Block& b = op.regions[0];
  if (b.ops.empty() || b.ops.back().name != "stablehlo.return" || b.ops.back().operands.size() != 2) L.fail_op(unsupported);
  const std::string& chosen = b.ops.back().operands[0];
  const Op* select = nullptr;
  for (const Op& o : b.ops)
    if (!o.results.empty() && o.results[0] == chosen && o.name == "stablehlo.select" && o.operands.size() == 3) select = &o;
  if (!select) L.fail_op(unsupported);
  const std::string& a = select->operands[1];
  const std::string& c = select->operands[2];
  int is_max = -1;
  for (const Op& o : b.ops) {
    if (o.name != "stablehlo.compare" || o.operands.size() != 2) continue;
    const bool forward = o.operands[0] == a && o.operands[1] == c, backward = o.operands[0] == c && o.operands[1] == a;
    auto generic = o.attrs.find("comparison_direction");
    const std::string dir = !o.words.empty() ? o.words[0] : generic != o.attrs.end() ? L.opaque_word(generic->second) : "";
    const bool greater = dir == "GT" || dir == "GE", less = dir == "LT" || dir == "LE";
    if ((forward || backward) && (greater || less)) is_max = greater == forward;
  }
  if (is_max < 0) L.fail_op(unsupported);
  const std::string kind = is_max ? "stablehlo.maximum" : "stablehlo.minimum";
  if (!is_identity(in[2], kind)) L.fail_op("argmax and argmin need the identity as the values' init");
  ir::Value* values = L.node(is_max ? "ReduceMax" : "ReduceMin", {in[0], L.i64s(axes)}, {{"keepdims", int64_t{0}}});
  ir::Value* index = L.node(is_max ? "ArgMax" : "ArgMin", {in[0]}, {{"axis", axes[0]}, {"keepdims", int64_t{0}}});
  return {values, L.cast(index, in[1]->dtype())};
}

Values reduce(Lowering& L, const Values& in) {
  const size_t inputs = L.op().num_inits ? in.size() - static_cast<size_t>(L.op().num_inits) : in.size() / 2;
  if (inputs == 2 && in.size() == 4) return arg_reduce(L, in);
  if (inputs != 1 || in.size() != 2)
    L.fail_op(fmt::format("reductions of {} operands together are not supported", in.size() / 2));
  const std::string kind = reducer_kind(L);
  const char* combine = combine_op(L, kind);
  const Attr* a = L.find_attr("dimensions");
  if (!a) L.fail_op("missing attribute 'dimensions'");
  std::vector<int64_t> axes = L.ints(*a, "dimensions");
  check_dims(L, axes, L.dims(in[0]).size(), "reduced");
  if (L.dims(in[1]).size() != 0) L.fail_op("the init value must be 0-d");
  ir::Value* y = in[0];
  const bool logical = kind == "stablehlo.and" || kind == "stablehlo.or";
  if (logical && in[0]->dtype() != ir::DType::Bool) L.fail_op("bitwise reductions of integers are not supported");
  if (logical && !axes.empty()) {  // all / any: the min / max of the values as 0 and 1
    ir::Value* m = L.node(kind == "stablehlo.and" ? "ReduceMin" : "ReduceMax",
                          {L.cast(in[0], ir::DType::U8), L.i64s(axes)}, {{"keepdims", int64_t{0}}});
    y = L.cast(m, ir::DType::Bool);
  } else if (!axes.empty()) {
    const char* op = kind == "stablehlo.add" ? "ReduceSum" : kind == "stablehlo.maximum" ? "ReduceMax"
                     : kind == "stablehlo.minimum" ? "ReduceMin" : "ReduceProd";
    y = L.node(op, {in[0], L.i64s(axes)}, {{"keepdims", int64_t{0}}});
  }
  if (!is_identity(in[1], kind)) y = L.node(combine, {y, in[1]});
  return {y};
}

Values reduce_window(Lowering& L, const Values& in) {
  if (in.size() != 2) L.fail_op(fmt::format("reductions of {} operands together are not supported", in.size() / 2));
  const std::string kind = reducer_kind(L);
  const char* combine = combine_op(L, kind);
  if (kind != "stablehlo.add" && kind != "stablehlo.maximum" && kind != "stablehlo.minimum")
    L.fail_op(fmt::format("windows reduced with '{}' are not supported (add, maximum, minimum are)", kind));
  const std::vector<int64_t> X = L.dims(in[0]);
  const size_t r = X.size();
  auto get = [&](const char* key, int64_t fill) {
    const Attr* a = L.find_attr(key);
    std::vector<int64_t> v = a ? L.ints(*a, key) : std::vector<int64_t>(r, fill);
    if (v.size() != r) L.fail_op(fmt::format("{} has {} entries, the operand has rank {}", key, v.size(), r));
    return v;
  };
  std::vector<int64_t> window = get("window_dimensions", 1), strides = get("window_strides", 1),
                       base = get("base_dilations", 1), wdil = get("window_dilations", 1);
  std::vector<int64_t> padding(2 * r, 0);
  if (const Attr* a = L.find_attr("padding")) padding = L.ints(*a, "padding");
  if (padding.size() != 2 * r) L.fail_op(fmt::format("padding has {} entries, expected {}", padding.size(), 2 * r));
  std::vector<int64_t> spatial, others;
  bool padded = false;
  for (size_t d = 0; d < r; ++d) {
    if (base[d] != 1) L.fail_op("base_dilations other than 1 are not supported");
    if (window[d] < 1 || strides[d] < 1 || wdil[d] < 1) L.fail_op("window sizes, strides and dilations must be positive");
    if (padding[2 * d] < 0 || padding[2 * d + 1] < 0) L.fail_op("negative padding is not supported");
    padded = padded || padding[2 * d] || padding[2 * d + 1];
    if (window[d] > 1 || strides[d] > 1 || padding[2 * d] || padding[2 * d + 1]) spatial.push_back(static_cast<int64_t>(d));
    else others.push_back(static_cast<int64_t>(d));
  }
  const bool identity = is_identity(in[1], kind);
  if (padded && !identity && kind == "stablehlo.add")
    L.fail_op("padded sum windows need a zero init value");
  ir::Value* y = in[0];
  if (!spatial.empty()) {
    std::vector<int64_t> perm = others;
    perm.insert(perm.end(), spatial.begin(), spatial.end());
    std::vector<int64_t> od, sd;
    for (int64_t d : others) od.push_back(X[static_cast<size_t>(d)]);
    for (int64_t d : spatial) sd.push_back(X[static_cast<size_t>(d)]);
    ir::Value* x = L.transpose(in[0], perm);
    std::vector<int64_t> nc = od.size() == 2 ? od : std::vector<int64_t>{1, product(od)};
    std::vector<int64_t> shape = nc;
    shape.insert(shape.end(), sd.begin(), sd.end());
    x = L.reshape(x, shape);
    std::vector<int64_t> kernel, st, dil, pads(2 * spatial.size());
    for (size_t k = 0; k < spatial.size(); ++k) {
      size_t d = static_cast<size_t>(spatial[k]);
      kernel.push_back(window[d]);
      st.push_back(strides[d]);
      dil.push_back(wdil[d]);
      pads[k] = padding[2 * d];
      pads[spatial.size() + k] = padding[2 * d + 1];
    }
    ir::AttributeMap attrs = {{"kernel_shape", kernel}, {"strides", st}, {"pads", pads}, {"dilations", dil}};
    ir::Value* p = nullptr;
    if (kind == "stablehlo.add") {
      attrs["count_include_pad"] = int64_t{1};
      p = L.node("AveragePool", {x}, attrs);
      p = L.node("Mul", {p, L.scalar(static_cast<double>(product(kernel)), p->dtype())});
    } else if (kind == "stablehlo.maximum") {
      p = L.node("MaxPool", {x}, attrs);
    } else {
      p = L.node("Neg", {L.node("MaxPool", {L.node("Neg", {x})}, attrs)});
    }
    std::vector<int64_t> pooled = L.dims(p);
    std::vector<int64_t> unflat = od;
    unflat.insert(unflat.end(), pooled.begin() + 2, pooled.end());
    p = L.reshape(p, unflat);
    std::vector<int64_t> inverse(r);
    for (size_t k = 0; k < r; ++k) inverse[static_cast<size_t>(perm[k])] = static_cast<int64_t>(k);
    y = L.transpose(p, inverse);
  }
  if (!identity) y = L.node(combine, {y, in[1]});
  return {y};
}

// ---- gather ------------------------------------------------------------------------------------

// gather as jnp.take and x[ids] emit it: slices of one index along one operand dim, the whole
// of every other dim. Becomes Gather on that dim (indices clamped into range, as gather
// clamps them) and a Transpose to where the dimension numbers put the batch dims.
Values gather(Lowering& L, const Values& in) {
  if (in.size() != 2) L.fail_op("expected 2 operands");
  auto get = [&](const char* key) {
    if (const Attr* dn = L.find_attr("dimension_numbers")) return opaque_ints(L, dn->s, key);
    const Attr* a = L.find_attr(key);
    return a ? (a->kind == Attr::Kind::Int ? std::vector<int64_t>{a->i} : L.ints(*a, key)) : std::vector<int64_t>{};
  };
  const std::vector<int64_t> offset = get("offset_dims"), collapsed = get("collapsed_slice_dims"),
                             index_map = get("start_index_map"), ivd_list = get("index_vector_dim");
  const std::vector<int64_t> X = L.dims(in[0]), I = L.dims(in[1]);
  const std::vector<int64_t> sizes = L.ints(L.attr("slice_sizes"), "slice_sizes");
  const std::string unsupported = "only gathers of one index along one dim (jnp.take, x[ids]) are supported";
  if (!get("operand_batching_dims").empty() || ivd_list.size() != 1 || index_map.size() != 1 || collapsed != index_map ||
      sizes.size() != X.size())
    L.fail_op(unsupported);
  const int64_t axis = index_map[0], ivd = ivd_list[0];
  check_dims(L, index_map, X.size(), "start_index_map");
  if (ivd < 0 || ivd > static_cast<int64_t>(I.size()) || (ivd < static_cast<int64_t>(I.size()) && I[static_cast<size_t>(ivd)] != 1))
    L.fail_op(unsupported);
  for (size_t d = 0; d < X.size(); ++d)
    if (sizes[d] != (static_cast<int64_t>(d) == axis ? 1 : X[d])) L.fail_op(unsupported);
  if (!ir::is_integer(in[1]->dtype())) L.fail_op("indices must be integers");
  std::vector<int64_t> batch;
  for (size_t d = 0; d < I.size(); ++d)
    if (static_cast<int64_t>(d) != ivd) batch.push_back(I[d]);
  const size_t out_rank = batch.size() + X.size() - 1;
  if (offset.size() != X.size() - 1) L.fail_op(unsupported);
  check_dims(L, offset, out_rank, "offset");
  ir::Value* idx = L.reshape(in[1], batch);
  const ir::DType it = idx->dtype();
  idx = L.node("Max", {L.node("Min", {idx, L.scalar(static_cast<double>(X[static_cast<size_t>(axis)] - 1), it)}), L.scalar(0, it)});
  ir::Value* y = L.node("Gather", {in[0], idx}, {{"axis", axis}});
  // Gather's result: operand dims before `axis`, the batch dims, operand dims after it.
  std::vector<int64_t> perm(out_rank, -1);
  std::vector<bool> is_offset(out_rank, false);
  for (size_t j = 0; j < offset.size(); ++j) {
    if (is_offset[static_cast<size_t>(offset[j])] || (j && offset[j] <= offset[j - 1])) L.fail_op(unsupported);
    is_offset[static_cast<size_t>(offset[j])] = true;
    perm[static_cast<size_t>(offset[j])] = static_cast<int64_t>(j) < axis ? static_cast<int64_t>(j) : static_cast<int64_t>(j + batch.size());
  }
  int64_t k = 0;
  for (size_t p = 0; p < out_rank; ++p)
    if (!is_offset[p]) perm[p] = axis + k++;
  return {L.transpose(y, perm)};
}

}  // namespace

void add_nn_lowerings(std::map<std::string, LowerFn>& t) {
  t["stablehlo.dot_general"] = dot_general;
  t["stablehlo.convolution"] = convolution;
  t["stablehlo.reduce"] = reduce;
  t["stablehlo.reduce_window"] = reduce_window;
  t["stablehlo.gather"] = gather;
}

}  // namespace kiln::frontend::stablehlo
