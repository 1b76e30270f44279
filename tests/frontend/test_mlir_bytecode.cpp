// The MLIR bytecode reader (frontend/stablehlo/mlir_bytecode.cpp): a tiny VHLO module written
// byte by byte here (an identity @main), then hostile variants of it and of the mlp_export
// fixture: truncations, every byte changed, huge counts, out-of-range string, attribute and
// type indices, and attributes and types that refer to themselves. Each must import or fail
// with kiln::Error; nothing else may escape.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "frontend/stablehlo/mlir_bytecode.h"
#include "frontend/stablehlo/stablehlo_importer.h"
#include "ir/error.h"
#include "ir/interpreter.h"
#include "kiln/rt/npy.h"

using namespace kiln;

namespace {

std::string varint(uint64_t v) {
  std::string s;
  if (v < 128) return std::string(1, static_cast<char>(v << 1 | 1));
  if (v < (1u << 14)) {
    const uint64_t x = v << 2 | 2;
    return {static_cast<char>(x & 0xff), static_cast<char>(x >> 8)};
  }
  s.push_back('\0');
  for (int k = 0; k < 8; ++k) s.push_back(static_cast<char>(v >> (8 * k)));
  return s;
}

std::string section(int id, const std::string& data) { return std::string(1, static_cast<char>(id)) + varint(data.size()) + data; }

// The pieces of a bytecode file, each replaceable by a test.
struct Tiny {
  std::vector<std::string> strings = {"builtin", "vhlo", "module", "func_v1", "return_v1", "main"};
  // VHLO types: f32, tensor<2xf32>, (tensor<2xf32>) -> tensor<2xf32>
  std::vector<std::string> types = {varint(4), varint(20) + varint(1) + varint(4) + varint(0),
                                    varint(8) + varint(1) + varint(1) + varint(1) + varint(1)};
  // VHLO attributes: "main", the function type, [] (also every location)
  std::vector<std::string> attrs = {varint(14) + varint(5), varint(17) + varint(2), varint(1) + varint(0)};
  std::string string_count;  // replaces the string count when set

  std::string bytes() const {
    std::string str = string_count.empty() ? varint(strings.size()) : string_count, data;
    for (auto it = strings.rbegin(); it != strings.rend(); ++it) str += varint(it->size() + 1);
    for (const std::string& s : strings) data += s + '\0';
    str += data;
    // dialects builtin, vhlo; op names builtin.module, vhlo.func_v1, vhlo.return_v1 (registered)
    std::string dialect = varint(2) + varint(0) + varint(2) + varint(3) + varint(0) + varint(1) + varint(2 << 1 | 1) +
                          varint(1) + varint(2) + varint(3 << 1 | 1) + varint(4 << 1 | 1);
    std::string at, offsets = varint(attrs.size()) + varint(types.size());
    offsets += varint(1) + varint(attrs.size());
    for (const std::string& a : attrs) offsets += varint(a.size() << 1 | 1), at += a;
    offsets += varint(1) + varint(types.size());
    for (const std::string& t : types) offsets += varint(t.size() << 1 | 1), at += t;
    // properties of func_v1: arg_attrs, function_type, res_attrs, sym_name, sym_visibility
    std::string prop = varint(2) + varint(1) + varint(2) + varint(0) + varint(0);
    std::string props = varint(1) + varint(prop.size()) + prop;
    // return_v1 %arg0
    std::string ret = varint(2) + std::string(1, 4) + varint(2) + varint(1) + varint(0);
    std::string body = varint(1) + varint(1) + varint(1 << 1 | 1) + varint(1) + varint(1 << 1) + std::string(1, 0) + ret;
    std::string func = varint(1) + std::string(1, 64 | 16) + varint(2) + varint(0) + varint(1 << 1 | 1) + section(4, body);
    std::string mod_region = varint(1) + varint(0) + varint(1 << 1) + func;
    std::string module = varint(0) + std::string(1, 16) + varint(2) + varint(1 << 1 | 1) + section(4, mod_region);
    std::string ir = varint(1 << 1) + module;
    return std::string("ML\xEFR", 4) + varint(6) + "test" + '\0' + section(1, dialect) + section(3, offsets) +
           section(2, at) + section(4, ir) + section(0, str) + section(8, props);
  }
};

std::string error_of(const std::string& bytes) {
  frontend::StableHloImportOptions options;
  options.limits.max_elements = 1 << 20;  // a changed dim must not make a huge constant
  options.limits.max_tensor_bytes = 1 << 24;
  try {
    frontend::import_stablehlo_bytes(bytes, "t.mlirbc", options);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("bytecode: a module written byte by byte imports and runs") {
  auto g = frontend::import_stablehlo_bytes(Tiny().bytes(), "t.mlirbc");
  REQUIRE(g->inputs().size() == 1);
  ir::Tensor x = ir::Tensor::from_vector<float>(ir::DType::F32, {2}, {1.5f, -2});
  auto out = ir::interpret(*g, {{g->inputs()[0]->name(), x}});
  REQUIRE(out.size() == 1);
  CHECK(out[0].as_double(1) == -2);
}

TEST_CASE("bytecode: hostile variants fail with kiln::Error naming the file and offset") {
  SUBCASE("huge string count") {
    Tiny t;
    t.string_count = varint(uint64_t{1} << 60);
    CHECK(contains(error_of(t.bytes()), "string count"));
  }
  SUBCASE("string index out of range") {
    Tiny t;
    t.attrs[0] = varint(14) + varint(99);
    CHECK(contains(error_of(t.bytes()), "string index 99 is out of range"));
  }
  SUBCASE("type index out of range") {
    Tiny t;
    t.attrs[1] = varint(17) + varint(77);
    CHECK(contains(error_of(t.bytes()), "type index 77 is out of range"));
  }
  SUBCASE("an attribute that contains itself") {
    Tiny t;
    t.attrs[1] = varint(1) + varint(1) + varint(1);  // attribute 1 = [attribute 1]
    CHECK(contains(error_of(t.bytes()), "refers to itself"));
  }
  SUBCASE("a tensor type whose element type is itself") {
    Tiny t;
    t.types[1] = varint(20) + varint(1) + varint(4) + varint(1);
    CHECK(contains(error_of(t.bytes()), "refers to itself"));
  }
  SUBCASE("a huge tensor rank") {
    Tiny t;
    t.types[1] = varint(20) + varint(uint64_t{1} << 40) + varint(0);
    CHECK(contains(error_of(t.bytes()), "tensor rank count"));
  }
  SUBCASE("an unknown attribute code") {
    Tiny t;
    t.attrs[0] = varint(99);
    CHECK(contains(error_of(t.bytes()), "unknown VHLO attribute code 99"));
  }
  SUBCASE("an op outside the table is refused by name") {
    Tiny t;
    t.strings[4] = "frobnicate_v1";
    CHECK(contains(error_of(t.bytes()), "unsupported op 'vhlo.frobnicate_v1'"));
  }
  SUBCASE("a dialect other than vhlo is refused by name") {
    Tiny t;
    t.strings[1] = "mhlo";
    CHECK(contains(error_of(t.bytes()), "found mhlo.func_v1"));
  }
  SUBCASE("every truncation") {
    const std::string b = Tiny().bytes();
    for (size_t n = 0; n < b.size(); ++n) {
      INFO("truncated to " << n);
      CHECK_FALSE(error_of(b.substr(0, n)).empty());
    }
  }
}

TEST_CASE("bytecode: every byte of the mlp_export fixture changed, and every truncation") {
  const std::filesystem::path dir = KILN_JAX_MODELS;
  const std::string bytecode = read_file(dir / "mlp_export" / "model.mlirbc");
  for (const char* file : {"model.mlirbc", "model.jax_exported"}) {
    const std::string b = read_file(dir / "mlp_export" / file);
    REQUIRE(b.size() > 100);
    size_t failures = 0;
    for (size_t n = 0; n < b.size(); ++n) failures += !error_of(b.substr(0, n)).empty();
    CHECK(failures > b.size() / 2);
    // The artifact's copy of the bytecode is changed byte by byte as model.mlirbc already
    // was; here only the flatbuffer around it (which halved the case's time under ASan).
    const size_t inner = file == std::string("model.jax_exported") ? b.find(bytecode) : std::string::npos;
    if (file == std::string("model.jax_exported")) REQUIRE(inner != std::string::npos);
    for (size_t k = 0; k < b.size(); ++k) {
      if (inner != std::string::npos && k >= inner && k < inner + bytecode.size()) continue;
      for (int change = 0; change < 3; ++change) {
        std::string m = b;
        m[k] = change == 0 ? '\0' : change == 1 ? '\xff' : static_cast<char>(m[k] ^ 1);
        error_of(m);  // an import or a kiln::Error; anything else escapes and fails the test
      }
    }
  }
}

TEST_CASE("bytecode: arguments named by their locations, and --params by those names") {
  // jax.export keeps loc("params['w1']") and loc("x") on @main's arguments, as as_text(debug_info=True).
  const std::filesystem::path m = std::filesystem::path(KILN_JAX_MODELS) / "mlp_export_params";
  const char* names[] = {"params['b1']", "params['b2']", "params['w1']", "params['w2']"};  // pytree order
  std::map<std::string, ir::Tensor> by_index = frontend::read_npz((m / "params.npz").string(), {});
  frontend::StableHloImportOptions options;
  for (int k = 0; k < 4; ++k) options.params[names[k]] = by_index.at("arg" + std::to_string(k));
  auto g = frontend::import_stablehlo((m / "model.jax_exported").string(), options);
  REQUIRE(g->inputs().size() == 1);
  CHECK(g->inputs()[0]->name() == "x");
  auto load = [](const std::filesystem::path& p) {
    rt::HostTensor h;
    std::string error;
    REQUIRE(rt::read_npy(p.string(), h, error));
    ir::Tensor t(*ir::dtype_from_code(static_cast<int>(h.dtype)), h.shape);
    std::memcpy(t.mutable_raw(), h.data.data(), h.data.size());
    return t;
  };
  auto out = ir::interpret(*g, {{"x", load(m / "input_0.npy")}});
  const ir::Tensor expected = load(m / "expected_0.npy");
  REQUIRE(out.size() == 1);
  REQUIRE(out[0].numel() == expected.numel());
  for (int64_t i = 0; i < expected.numel(); ++i) CHECK(std::abs(out[0].as_double(i) - expected.as_double(i)) < 1e-5);
}
