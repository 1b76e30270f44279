#include "ir/shape.h"

#include <algorithm>

#include <fmt/format.h>

#include "ir/error.h"

namespace kiln::ir {

Dim Dim::symbol(std::string name) {
  Dim d;
  if (!name.empty()) d.terms_[{name}] = 1;
  d.name_ = std::move(name);
  return d;
}

bool Dim::is_symbol() const {
  return terms_.size() == 1 && terms_.begin()->second == 1 && terms_.begin()->first.size() == 1;
}

std::vector<std::string> Dim::symbols() const {
  std::vector<std::string> out;
  for (const auto& [m, c] : terms_)
    for (const std::string& s : m)
      if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
  return out;
}

const Dim::Terms& Dim::poly_terms(Terms& scratch) const {
  if (!is_static()) return terms_;
  scratch.clear();
  if (value_ != 0) scratch[{}] = value_;
  return scratch;
}

// Canonical form: zero terms dropped; a constant polynomial is a static dim (or unknown when
// negative, which no extent can be); the name lists the terms in order, constant last.
Dim Dim::from_terms(Terms terms) {
  for (auto it = terms.begin(); it != terms.end();) it = it->second == 0 ? terms.erase(it) : std::next(it);
  if (terms.empty()) return Dim(0);
  if (terms.size() == 1 && terms.begin()->first.empty()) {
    int64_t c = terms.begin()->second;
    return c >= 0 ? Dim(c) : unknown();
  }
  Dim d;
  std::string text;
  auto add = [&](const Monomial& m, int64_t c) {
    if (!text.empty()) text += c < 0 ? "-" : "+";
    else if (c < 0) text += "-";
    const int64_t a = c < 0 ? -c : c;
    std::string factors;
    for (const std::string& s : m) factors += (factors.empty() ? "" : "*") + s;
    if (factors.empty()) text += std::to_string(a);
    else text += a == 1 ? factors : std::to_string(a) + "*" + factors;
  };
  for (const auto& [m, c] : terms)
    if (!m.empty()) add(m, c);
  if (auto it = terms.find({}); it != terms.end()) add({}, it->second);
  d.name_ = std::move(text);
  d.terms_ = std::move(terms);
  return d;
}

Dim operator+(const Dim& a, const Dim& b) {
  if (a.is_unknown() || b.is_unknown()) return Dim::unknown();
  Dim::Terms sa, sb;
  Dim::Terms t = a.poly_terms(sa);
  for (const auto& [m, c] : b.poly_terms(sb))
    if (__builtin_add_overflow(t[m], c, &t[m])) return Dim::unknown();
  return Dim::from_terms(std::move(t));
}

Dim operator-(const Dim& a, const Dim& b) {
  if (a.is_unknown() || b.is_unknown()) return Dim::unknown();
  Dim::Terms sa, sb;
  Dim::Terms t = a.poly_terms(sa);
  for (const auto& [m, c] : b.poly_terms(sb))
    if (__builtin_sub_overflow(t[m], c, &t[m])) return Dim::unknown();
  return Dim::from_terms(std::move(t));
}

Dim operator*(const Dim& a, const Dim& b) {
  if (a.is_unknown() || b.is_unknown()) return Dim::unknown();
  Dim::Terms sa, sb, t;
  for (const auto& [ma, ca] : a.poly_terms(sa))
    for (const auto& [mb, cb] : b.poly_terms(sb)) {
      Dim::Monomial m = ma;
      m.insert(m.end(), mb.begin(), mb.end());
      std::sort(m.begin(), m.end());
      int64_t c;
      if (__builtin_mul_overflow(ca, cb, &c) || __builtin_add_overflow(t[m], c, &t[m])) return Dim::unknown();
    }
  return Dim::from_terms(std::move(t));
}

std::optional<Dim> Dim::exact_div(const Dim& b) const {
  if (is_unknown() || b.is_unknown()) return std::nullopt;
  if (*this == b && !is_static()) return Dim(1);
  Terms sa, sb;
  const Terms& tb = b.poly_terms(sb);
  if (tb.size() != 1) return std::nullopt;
  const auto& [mb, cb] = *tb.begin();
  Terms out;
  for (const auto& [m, c] : poly_terms(sa)) {
    if (c % cb != 0) return std::nullopt;
    Monomial rest = m;
    for (const std::string& s : mb) {
      auto it = std::find(rest.begin(), rest.end(), s);
      if (it == rest.end()) return std::nullopt;
      rest.erase(it);
    }
    out[rest] += c / cb;
  }
  return from_terms(std::move(out));
}

std::optional<int64_t> Dim::eval(const std::function<std::optional<int64_t>(const std::string&)>& value_of) const {
  if (is_static()) return value_;
  if (is_unknown()) return std::nullopt;
  int64_t sum = 0;
  for (const auto& [m, c] : terms_) {
    int64_t p = c;
    for (const std::string& s : m) {
      std::optional<int64_t> v = value_of(s);
      if (!v || __builtin_mul_overflow(p, *v, &p)) return std::nullopt;
    }
    if (__builtin_add_overflow(sum, p, &sum)) return std::nullopt;
  }
  return sum;
}

std::optional<int64_t> Dim::max_value(const DimRanges& ranges) const {
  if (is_static()) return value_;
  if (is_unknown()) return std::nullopt;
  int64_t sum = 0;
  for (const auto& [m, c] : terms_) {
    int64_t p = c;
    for (const std::string& s : m) {
      auto it = ranges.find(s);
      if (it == ranges.end() || __builtin_mul_overflow(p, c > 0 ? it->second.max : it->second.min, &p))
        return std::nullopt;
    }
    if (__builtin_add_overflow(sum, p, &sum)) return std::nullopt;
  }
  return std::max<int64_t>(sum, 0);
}

Dim Dim::bind(const std::map<std::string, int64_t>& values) const {
  if (is_static() || is_unknown()) return *this;
  Terms out;
  for (const auto& [m, c] : terms_) {
    int64_t p = c;
    Monomial rest;
    for (const std::string& s : m) {
      auto it = values.find(s);
      if (it == values.end()) rest.push_back(s);
      else if (__builtin_mul_overflow(p, it->second, &p)) return unknown();
    }
    if (__builtin_add_overflow(out[rest], p, &out[rest])) return unknown();
  }
  return from_terms(std::move(out));
}

Dim Dim::substitute(const std::string& symbol, const Dim& by) const {
  if (is_static() || is_unknown()) return *this;
  if (by.is_unknown()) return unknown();
  Terms scratch;
  const Terms& with = by.poly_terms(scratch);
  Terms out;
  for (const auto& [m, c] : terms_) {
    // The monomial's other symbols times `by` to the power of `symbol`'s count, times c
    // (as terms: a dim of a negative number would be unknown).
    Monomial rest;
    Terms product{{{}, c}};
    for (const std::string& s : m) {
      if (s != symbol) {
        rest.push_back(s);
        continue;
      }
      Terms next;
      for (const auto& [ma, ca] : product)
        for (const auto& [mb, cb] : with) {
          Monomial mm = ma;
          mm.insert(mm.end(), mb.begin(), mb.end());
          std::sort(mm.begin(), mm.end());
          int64_t v;
          if (__builtin_mul_overflow(ca, cb, &v) || __builtin_add_overflow(next[mm], v, &next[mm])) return unknown();
        }
      product = std::move(next);
    }
    for (const auto& [mp, cp] : product) {
      Monomial mm = mp;
      mm.insert(mm.end(), rest.begin(), rest.end());
      std::sort(mm.begin(), mm.end());
      if (__builtin_add_overflow(out[mm], cp, &out[mm])) return unknown();
    }
  }
  return from_terms(std::move(out));
}

std::optional<std::pair<std::string, int64_t>> Dim::scaled_symbol() const {
  if (terms_.size() != 1 || terms_.begin()->first.size() != 1 || terms_.begin()->second < 1) return std::nullopt;
  return std::make_pair(terms_.begin()->first[0], terms_.begin()->second);
}

std::string Dim::cpp(const std::function<std::string(const std::string&)>& symbol_expr) const {
  if (is_static()) return std::to_string(value_);
  std::string text;
  for (const auto& [m, c] : terms_) {
    std::string term = m.empty() || c != 1 ? fmt::format("int64_t{{{}}}", c) : "";
    for (const std::string& s : m) term += (term.empty() ? "" : " * ") + symbol_expr(s);
    text += (text.empty() ? "" : " + ") + term;
  }
  return "(" + text + ")";
}

Shape::Shape(std::initializer_list<int64_t> dims) {
  for (int64_t d : dims) dims_.emplace_back(d);
}

Shape Shape::of(const std::vector<int64_t>& dims) {
  Shape s;
  for (int64_t d : dims) s.dims_.emplace_back(d);
  return s;
}

bool Shape::is_static() const {
  for (const Dim& d : dims_)
    if (!d.is_static()) return false;
  return true;
}

bool Shape::is_known() const {
  for (const Dim& d : dims_)
    if (d.is_unknown()) return false;
  return true;
}

Dim Shape::product() const {
  Dim p(1);
  for (const Dim& d : dims_) p = p * d;
  return p;
}

std::optional<int64_t> Shape::max_numel(const DimRanges& ranges) const {
  int64_t n = 1;
  for (const Dim& d : dims_) {
    std::optional<int64_t> m = d.max_value(ranges);
    if (!m || __builtin_mul_overflow(n, *m, &n)) return std::nullopt;
  }
  return n;
}

int64_t Shape::numel() const { return kiln::ir::numel(values()); }

std::vector<int64_t> Shape::values() const {
  std::vector<int64_t> out;
  out.reserve(dims_.size());
  for (const Dim& d : dims_) {
    if (!d.is_static()) fail("shape {} is not static", str());
    out.push_back(d.value());
  }
  return out;
}

std::string Shape::str() const {
  std::string s = "[";
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (i) s += ",";
    const Dim& d = dims_[i];
    if (d.is_static())
      s += std::to_string(d.value());
    else
      s += d.name().empty() ? "?" : d.name();
  }
  return s + "]";
}

int64_t numel(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::string dims_str(const std::vector<int64_t>& dims) { return Shape::of(dims).str(); }

std::optional<int64_t> normalize_axis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

}  // namespace kiln::ir
