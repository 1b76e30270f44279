// Helpers for op unit tests: build a one-node graph, run its shape rule and reference.
#pragma once

#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/op_registry.h"

namespace kiln::ir::test {

inline Tensor f32(std::vector<int64_t> dims, const std::vector<float>& v) {
  return Tensor::from_vector<float>(DType::F32, std::move(dims), v);
}
inline Tensor i64(std::vector<int64_t> dims, const std::vector<int64_t>& v) {
  return Tensor::from_vector<int64_t>(DType::I64, std::move(dims), v);
}
inline Tensor i64s(const std::vector<int64_t>& v) {
  return i64({static_cast<int64_t>(v.size())}, v);
}
inline Tensor iota(DType dtype, std::vector<int64_t> dims, double start = 0) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = start + static_cast<double>(i);
  return Tensor::from_vector<double>(dtype, std::move(dims), v);
}

// `dims` filled with seeded pseudo-random values in [-1, 1) (the same for every dtype).
inline Tensor random(DType dtype, std::vector<int64_t> dims, uint32_t seed) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = static_cast<double>(seed >> 8) / static_cast<double>(1u << 23) - 1.0;
  }
  return Tensor::from_vector<double>(dtype, std::move(dims), v);
}

inline std::vector<double> values(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(t.as_double(i));
  return v;
}

// Element-by-element comparison with a relative and absolute tolerance.
inline void check_close(const Tensor& t, const std::vector<double>& expected, double tol = 1e-5) {
  std::vector<double> got = values(t);
  REQUIRE(got.size() == expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": got " << got[i] << ", expected " << expected[i]);
    CHECK(std::abs(got[i] - expected[i]) <= tol * (1 + std::abs(expected[i])));
  }
}

// A graph with one node under test. Inputs are either typed graph inputs (fed at eval) or
// constants.
class OpTest {
 public:
  // A graph input: shape for inference, `data` used at eval time.
  Value* input(const std::string& name, Tensor data) {
    Value* v = g.add_value(name, data.dtype(), data.shape());
    feeds_[v] = std::move(data);
    return v;
  }
  // A graph input with only a type (for shape-inference-only tests).
  Value* input(const std::string& name, DType dtype, Shape shape) {
    return g.add_value(name, dtype, std::move(shape));
  }
  Value* constant(const std::string& name, Tensor t) { return g.add_constant(name, std::move(t)); }

  Node* node(const std::string& op, std::vector<Value*> inputs, AttributeMap attrs = {},
             size_t num_outputs = 1) {
    std::vector<std::string> outs;
    for (size_t i = 0; i < num_outputs; ++i) outs.push_back("y" + std::to_string(i));
    return g.add_node(op, std::move(inputs), outs, std::move(attrs), "n");
  }

  // Runs the shape rule, then the reference; checks the result matches the inferred type.
  std::vector<Tensor> run(Node* n) {
    infer_node(*n);
    std::vector<Tensor> out = eval(n);
    for (size_t i = 0; i < out.size(); ++i) {
      CHECK(out[i].dtype() == n->output(i)->dtype());
      const Shape& s = n->output(i)->shape();
      REQUIRE(out[i].rank() == static_cast<int64_t>(s.rank()));
      for (size_t d = 0; d < s.rank(); ++d)
        if (s[d].is_static()) CHECK(out[i].dims()[d] == s[d].value());
    }
    return out;
  }
  std::vector<Tensor> eval(Node* n) {
    std::vector<const Tensor*> ptrs;
    for (Value* v : n->inputs())
      ptrs.push_back(!v ? nullptr : v->is_constant() ? &v->constant() : &feeds_.at(v));
    return eval_node(*n, ptrs);
  }
  // The message of the error the reference raises, or "<no error>".
  std::string eval_error(Node* n) {
    try {
      eval(n);
    } catch (const Error& e) {
      return e.what();
    }
    return "<no error>";
  }
  // Runs the node's one-output op and returns output 0.
  Tensor run1(Node* n) { return run(n).at(0); }

  Graph g;

 private:
  std::map<Value*, Tensor> feeds_;
};

// Shape rule only: returns output 0's shape.
inline Shape infer(Node* n) {
  infer_node(*n);
  return n->output(0)->shape();
}

// The message of the error the shape rule raises, or "<no error>".
inline std::string infer_error(Node* n) {
  try {
    infer_node(*n);
  } catch (const Error& e) {
    return e.what();
  }
  return "<no error>";
}

inline Shape sym(std::initializer_list<Dim> dims) { return Shape(std::vector<Dim>(dims)); }

}  // namespace kiln::ir::test
