// Building small ONNX models in C++ for the frontend tests.
#pragma once

#include <doctest/doctest.h>
#include <onnx/onnx_pb.h>
#include <stdlib.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <variant>
#include <vector>

#include "frontend/onnx/onnx_importer.h"
#include "ir/error.h"
#include "ir/graph.h"

namespace kiln::test {

namespace fs = std::filesystem;

// A fresh directory under /tmp, removed with everything in it at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "kiln_frontend_XXXXXX").string();
    REQUIRE(mkdtemp(tmpl.data()) != nullptr);
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

inline void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(out.good());
}

template <class T>
std::string bytes_of(const std::vector<T>& values) {
  std::string s(values.size() * sizeof(T), '\0');
  if (!values.empty()) std::memcpy(s.data(), values.data(), s.size());
  return s;
}

// A dim of a declared shape: a number, a symbol name, or "?" for an unknown dim.
using TestDim = std::variant<int64_t, std::string>;

inline void set_tensor_type(onnx::ValueInfoProto* vi, int elem_type, const std::vector<TestDim>& dims) {
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem_type);
  auto* shape = tt->mutable_shape();
  for (const TestDim& d : dims) {
    auto* dim = shape->add_dim();
    if (const auto* v = std::get_if<int64_t>(&d))
      dim->set_dim_value(*v);
    else if (std::get<std::string>(d) != "?")
      dim->set_dim_param(std::get<std::string>(d));
  }
}

// A ModelProto under construction: default-domain opset `opset`, IR version 8.
struct ModelBuilder {
  onnx::ModelProto model;
  onnx::GraphProto* graph;

  explicit ModelBuilder(int opset = 17) {
    model.set_ir_version(8);
    model.set_producer_name("kiln-test");
    model.set_producer_version("1.0");
    auto* op = model.add_opset_import();
    op->set_domain("");
    op->set_version(opset);
    graph = model.mutable_graph();
    graph->set_name("test");
  }

  onnx::ValueInfoProto* input(const std::string& name, int elem_type, const std::vector<TestDim>& dims) {
    auto* vi = graph->add_input();
    vi->set_name(name);
    set_tensor_type(vi, elem_type, dims);
    return vi;
  }
  onnx::ValueInfoProto* output(const std::string& name, int elem_type = onnx::TensorProto::FLOAT,
                               const std::vector<TestDim>& dims = {}) {
    auto* vi = graph->add_output();
    vi->set_name(name);
    if (elem_type) set_tensor_type(vi, elem_type, dims);
    return vi;
  }
  onnx::ValueInfoProto* value_info(const std::string& name, int elem_type,
                                   const std::vector<TestDim>& dims) {
    auto* vi = graph->add_value_info();
    vi->set_name(name);
    set_tensor_type(vi, elem_type, dims);
    return vi;
  }
  onnx::NodeProto* node(const std::string& op, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const std::string& name = "") {
    auto* n = graph->add_node();
    n->set_op_type(op);
    if (!name.empty()) n->set_name(name);
    for (const auto& i : inputs) n->add_input(i);
    for (const auto& o : outputs) n->add_output(o);
    return n;
  }
  onnx::TensorProto* initializer(const std::string& name, int data_type,
                                 const std::vector<int64_t>& dims) {
    auto* t = graph->add_initializer();
    t->set_name(name);
    t->set_data_type(data_type);
    for (int64_t d : dims) t->add_dims(d);
    return t;
  }
  onnx::TensorProto* initializer_f32(const std::string& name, const std::vector<int64_t>& dims,
                                     const std::vector<float>& values, bool raw = false) {
    auto* t = initializer(name, onnx::TensorProto::FLOAT, dims);
    if (raw)
      t->set_raw_data(bytes_of(values));
    else
      for (float v : values) t->add_float_data(v);
    return t;
  }
  std::string save(const TempDir& dir, const std::string& name = "model.onnx") const {
    std::string path = dir.file(name);
    std::string bytes;
    REQUIRE(model.SerializeToString(&bytes));
    write_file(path, bytes);
    return path;
  }
};

inline onnx::AttributeProto* add_attr(onnx::NodeProto* n, const std::string& name) {
  auto* a = n->add_attribute();
  a->set_name(name);
  return a;
}
inline void attr_i(onnx::NodeProto* n, const std::string& name, int64_t v) {
  auto* a = add_attr(n, name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}
inline void attr_f(onnx::NodeProto* n, const std::string& name, float v) {
  auto* a = add_attr(n, name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}
inline void attr_ints(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = add_attr(n, name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

// The message of the kiln::Error that `fn` throws ("" if none).
template <class Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const kiln::Error& e) {
    return e.what();
  }
  return "";
}

inline std::string import_error(const std::string& path) {
  return error_of([&] { frontend::import_onnx(path); });
}

inline const ir::Node* find_node(const ir::Graph& g, const std::string& name) {
  for (const auto& n : g.nodes())
    if (n->name() == name) return n.get();
  return nullptr;
}

inline std::vector<std::string> op_sequence(const ir::Graph& g) {
  std::vector<std::string> ops;
  for (const auto& n : g.nodes()) ops.push_back(n->op());
  return ops;
}

template <class T>
std::vector<T> values_of(const ir::Tensor& t) {
  const T* p = t.data<T>();
  return std::vector<T>(p, p + t.numel());
}

}  // namespace kiln::test
