#include "ir/symbolic_params.h"

#include <algorithm>

#include "ir/error.h"

namespace kiln::ir {

namespace {

// Interpolation on the points 2, 3, 5: 6 * l_i(s) = kBasis[i][0] + kBasis[i][1] s + kBasis[i][2] s^2,
// the Lagrange basis scaled to integers.
constexpr int64_t kPoints[3] = {2, 3, 5};
constexpr int64_t kBasis[3][3] = {{30, -16, 2}, {-30, 21, -3}, {6, -5, 1}};

// The index tuples {0,1,2}^k in order.
std::vector<std::vector<int>> grid(size_t k) {
  std::vector<std::vector<int>> out(1);
  for (size_t j = 0; j < k; ++j) {
    std::vector<std::vector<int>> next;
    for (const auto& t : out)
      for (int i = 0; i < 3; ++i) {
        next.push_back(t);
        next.back().push_back(i);
      }
    out = std::move(next);
  }
  return out;
}

std::optional<std::vector<int64_t>> evaluate(const ParamsAt& params, const std::map<std::string, int64_t>& at) {
  try {
    return params(at);
  } catch (const Error&) {
    return std::nullopt;
  }
}

}  // namespace

std::optional<std::vector<Dim>> lift_params(const std::vector<std::string>& symbols, const DimRanges& ranges,
                                            const ParamsAt& params) {
  const size_t k = symbols.size();
  if (k > 3) return std::nullopt;
  const std::vector<std::vector<int>> points = grid(k);
  std::vector<std::vector<int64_t>> values;
  for (const auto& idx : points) {
    std::map<std::string, int64_t> at;
    for (size_t j = 0; j < k; ++j) at[symbols[j]] = kPoints[idx[j]];
    std::optional<std::vector<int64_t>> v = evaluate(params, at);
    if (!v || (!values.empty() && v->size() != values[0].size())) return std::nullopt;
    values.push_back(std::move(*v));
  }
  int64_t scale = 1;
  for (size_t j = 0; j < k; ++j) scale *= 6;
  const size_t n = values.empty() ? 0 : values[0].size();
  std::vector<Dim> out;
  for (size_t f = 0; f < n; ++f) {
    Dim poly(0);
    for (const auto& e : points) {  // exponents, the same tuples
      __int128 c = 0;
      for (size_t p = 0; p < points.size(); ++p) {
        __int128 w = values[p][f];
        for (size_t j = 0; j < k; ++j) w *= kBasis[points[p][j]][e[j]];
        c += w;
      }
      if (c % scale != 0) return std::nullopt;
      c /= scale;
      if (c > INT64_MAX || c < INT64_MIN) return std::nullopt;
      if (c == 0) continue;
      Dim term(1);
      for (size_t j = 0; j < k; ++j)
        for (int x = 0; x < e[j]; ++x) term = term * Dim::symbol(symbols[j]);
      // A negative coefficient through subtraction: dims hold no negative numbers.
      poly = c > 0 ? poly + term * Dim(static_cast<int64_t>(c)) : poly - term * Dim(static_cast<int64_t>(-c));
      if (poly.is_unknown()) return std::nullopt;
    }
    out.push_back(poly);
  }
  // Checks: every combination of each symbol's bounds and the samples 7 and 11. A symbol at 1
  // is left out: there broadcasting takes over and a stride along that axis may differ (0
  // instead of 1), which changes nothing since an axis of length 1 reads one element.
  std::vector<std::vector<int64_t>> checks(1);
  for (const std::string& s : symbols) {
    std::vector<int64_t> vals = {7, 11};
    if (auto it = ranges.find(s); it != ranges.end()) {
      if (it->second.min > 1) vals.push_back(it->second.min);
      if (it->second.max > 1) vals.push_back(it->second.max);
    }
    std::vector<std::vector<int64_t>> next;
    for (const auto& c : checks)
      for (int64_t v : vals) {
        next.push_back(c);
        next.back().push_back(v);
      }
    checks = std::move(next);
  }
  for (const auto& c : checks) {
    std::map<std::string, int64_t> at;
    for (size_t j = 0; j < k; ++j) at[symbols[j]] = c[j];
    std::optional<std::vector<int64_t>> v = evaluate(params, at);
    if (!v || v->size() != n) return std::nullopt;
    auto value_of = [&](const std::string& s) -> std::optional<int64_t> { return at.at(s); };
    for (size_t f = 0; f < n; ++f)
      if (out[f].eval(value_of) != (*v)[f]) return std::nullopt;
  }
  return out;
}

std::vector<std::string> node_symbols(const Node& node) {
  std::vector<std::string> out;
  auto add = [&](const Value* v) {
    if (!v || !v->has_type()) return;
    for (const Dim& d : v->shape().dims())
      for (const std::string& s : d.symbols())
        if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
  };
  for (const Value* v : node.inputs()) add(v);
  for (const Value* v : node.outputs()) add(v);
  return out;
}

std::vector<int64_t> bound_dims(const Value* v, const std::map<std::string, int64_t>& symbols) {
  std::vector<int64_t> out;
  for (const Dim& d : v->shape().dims()) {
    const Dim b = d.bind(symbols);
    if (!b.is_static()) fail("value '{}': dim {} is not known at a sample point", v->name(), d.name());
    out.push_back(b.value());
  }
  return out;
}

}  // namespace kiln::ir
