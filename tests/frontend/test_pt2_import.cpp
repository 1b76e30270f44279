// The torch.export frontend: its JSON reader, archives written here byte by byte (good and
// hostile), and the fixtures of models/torch_export/ (made by make_pt2_models.py with
// torch 2.15), checked against the shapes of their .npy files.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <iterator>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "frontend/torch_export/json.h"
#include "frontend/torch_export/pt2_importer.h"
#include "ir/error.h"

using namespace kiln;
using kiln::frontend::torch_export::JsonLimits;
using kiln::frontend::torch_export::JsonValue;
using kiln::frontend::torch_export::parse_json;

namespace {

std::string models_dir() { return KILN_PT2_MODELS; }

class TempDir {
 public:
  TempDir() {
    path_ = std::filesystem::temp_directory_path() /
            ("kiln_pt2_" + std::to_string(::getpid()) + "_" + std::to_string(counter_++));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
  static inline int counter_ = 0;
};

uint32_t crc32(std::string_view data) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t c = 0xFFFFFFFFu;
  for (unsigned char b : data) c = table[(c ^ b) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

void put16(std::string& s, uint32_t v) {
  s += static_cast<char>(v & 0xFF);
  s += static_cast<char>((v >> 8) & 0xFF);
}
void put32(std::string& s, uint32_t v) {
  put16(s, v & 0xFFFF);
  put16(s, v >> 16);
}

// A zip of stored entries under `prefix`, data aligned to 64 bytes with an "FB" extra field
// the way PyTorch's writer pads them.
std::string make_zip(const std::vector<std::pair<std::string, std::string>>& entries, const std::string& prefix) {
  std::string out, central;
  for (const auto& entry : entries) {  // no structured binding: Clang 14 cannot capture one in a lambda
    const std::string& data = entry.second;
    std::string full = prefix + entry.first;
    uint32_t offset = static_cast<uint32_t>(out.size());
    size_t unpadded = out.size() + 30 + full.size() + 4;
    size_t pad = (64 - unpadded % 64) % 64;
    auto header = [&](std::string& s, bool is_central) {
      put32(s, is_central ? 0x02014b50 : 0x04034b50);
      if (is_central) put16(s, 20);
      put16(s, 20);  // version needed
      put16(s, 0);   // flags
      put16(s, 0);   // stored
      put16(s, 0);
      put16(s, 0);  // time, date
      put32(s, crc32(data));
      put32(s, static_cast<uint32_t>(data.size()));
      put32(s, static_cast<uint32_t>(data.size()));
      put16(s, static_cast<uint32_t>(full.size()));
      put16(s, static_cast<uint32_t>(is_central ? 0 : pad + 4));
      if (is_central) {
        put16(s, 0);  // comment
        put16(s, 0);  // disk
        put16(s, 0);  // internal attributes
        put32(s, 0);  // external attributes
        put32(s, offset);
      }
      s += full;
      if (!is_central) {
        put16(s, 0x4246);
        put16(s, static_cast<uint32_t>(pad));
        s += std::string(pad, 'Z');
      }
    };
    header(out, false);
    out += data;
    header(central, true);
  }
  uint32_t cd_offset = static_cast<uint32_t>(out.size());
  out += central;
  put32(out, 0x06054b50);
  put16(out, 0);
  put16(out, 0);
  put16(out, static_cast<uint32_t>(entries.size()));
  put16(out, static_cast<uint32_t>(entries.size()));
  put32(out, static_cast<uint32_t>(central.size()));
  put32(out, cd_offset);
  put16(out, 0);
  return out;
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string floats(const std::vector<float>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

std::string sym_ints(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + ("{\"as_int\": " + std::to_string(v[i]) + "}");
  return s + "]";
}

std::string tensor_meta(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, int64_t offset = 0) {
  return "{\"dtype\": 7, \"sizes\": " + sym_ints(sizes) + ", \"requires_grad\": false, \"device\": {\"type\": \"cpu\"}, " +
         "\"strides\": " + sym_ints(strides) + ", \"storage_offset\": {\"as_int\": " + std::to_string(offset) +
         "}, \"layout\": 7}";
}

// A program y = add(x, w) (x: f32[2,3], w a parameter f32[3]) with `target` for the add;
// `more_nodes` and `more_inputs` are appended to the nodes and the input specs.
std::string add_program(const std::string& target = "torch.ops.aten.add.Tensor", const std::string& more_nodes = "",
                        const std::string& more_inputs = "") {
  return R"({"graph_module": {"graph": {
      "inputs": [{"as_tensor": {"name": "p_w"}}, {"as_tensor": {"name": "x"}}],
      "outputs": [{"as_tensor": {"name": "add"}}],
      "nodes": [{"target": ")" + target + R"(", "name": "add",
                 "inputs": [{"name": "self", "arg": {"as_tensor": {"name": "x"}}, "kind": 1},
                            {"name": "other", "arg": {"as_tensor": {"name": "p_w"}}, "kind": 1}],
                 "outputs": [{"as_tensor": {"name": "add"}}], "metadata": {}})" + more_nodes + R"(],
      "tensor_values": {"x": )" + tensor_meta({2, 3}, {3, 1}) + R"(, "p_w": )" + tensor_meta({3}, {1}) +
         R"(, "add": )" + tensor_meta({2, 3}, {3, 1}) + R"(},
      "sym_int_values": {}, "sym_bool_values": {}},
    "signature": {
      "input_specs": [{"parameter": {"arg": {"name": "p_w"}, "parameter_name": "w"}},
                      {"user_input": {"arg": {"as_tensor": {"name": "x"}}}})" + more_inputs + R"(],
      "output_specs": [{"user_output": {"arg": {"as_tensor": {"name": "add"}}}}]},
    "module_call_graph": []},
  "opset_version": {"aten": 10}, "range_constraints": {},
  "schema_version": {"major": 8, "minor": 20}, "torch_version": "2.15.0"})";
}

std::string weights_config(const std::string& entries) { return "{\"config\": {" + entries + "}}"; }

std::string weight_entry(const std::string& fqn, const std::string& file, const std::string& meta) {
  return "\"" + fqn + "\": {\"path_name\": \"" + file + "\", \"is_param\": true, \"use_pickle\": false, " +
         "\"tensor_meta\": " + meta + "}";
}

struct Archive {
  std::string program = add_program();
  std::string weights = weights_config(weight_entry("w", "weight_0", tensor_meta({3}, {1})));
  std::string weight_0 = floats({1, 2, 3});
  bool with_model = true;

  std::string write(const TempDir& dir) const {
    std::vector<std::pair<std::string, std::string>> entries = {
        {"data/weights/weight_0", weight_0},
        {"data/weights/model_weights_config.json", weights},
        {"data/constants/model_constants_config.json", "{\"config\": {}}"}};
    if (with_model) entries.emplace_back("models/model.json", program);
    entries.emplace_back("archive_format", "pt2");
    entries.emplace_back("archive_version", "0");
    entries.emplace_back("byteorder", "little");
    std::string path = dir.file("model.pt2");
    write_file(path, make_zip(entries, "model/"));
    return path;
  }
};

std::string import_error(const std::string& path, const frontend::Pt2ImportOptions& options = {}) {
  try {
    frontend::import_pt2(path, options);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

std::string json_error(std::string_view text, const JsonLimits& limits = {}) {
  try {
    parse_json(text, "doc", limits);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

// The shape in a .npy file's header ("'shape': (1, 3, 16, 16)").
std::vector<int64_t> npy_shape(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string header(256, '\0');
  in.read(header.data(), static_cast<std::streamsize>(header.size()));
  size_t open = header.find("'shape': (");
  REQUIRE(open != std::string::npos);
  std::vector<int64_t> dims;
  std::istringstream s(header.substr(open + 10, header.find(')', open) - open - 10));
  std::string item;
  while (std::getline(s, item, ','))
    if (item.find_first_not_of(' ') != std::string::npos) dims.push_back(std::stoll(item));
  return dims;
}

}  // namespace

TEST_CASE("json: values of every kind") {
  JsonValue v = parse_json(R"( {"a": [1, -2, 3.5, 1e3, -2.5E-2, 0], "b": {"c": null, "d": true, "e": false},
                               "s": "x\"\\\/\b\f\n\r\tq\u00e9\ud83d\ude00", "big": 12345678901234567890,
                               "huge": 1e400, "tiny": -1e-400, "n": NaN, "inf": -Infinity} )", "doc");
  REQUIRE(v.is_object());
  const auto& a = v.find("a")->items();
  REQUIRE(a.size() == 6);
  CHECK(a[0].is_integer());
  CHECK(a[0].integer() == 1);
  CHECK(a[1].integer() == -2);
  CHECK(!a[2].is_integer());
  CHECK(a[2].number() == 3.5);
  CHECK(a[3].number() == 1000);
  CHECK(!a[3].is_integer());
  CHECK(a[4].number() == doctest::Approx(-0.025));
  CHECK(a[5].integer() == 0);
  CHECK(v.find("b")->find("c")->is_null());
  CHECK(v.find("b")->find("d")->boolean());
  CHECK(!v.find("b")->find("e")->boolean());
  CHECK(v.find("s")->string() == "x\"\\/\b\f\n\r\tq\xC3\xA9\xF0\x9F\x98\x80");
  CHECK(!v.find("big")->is_integer());
  CHECK(v.find("big")->number() == doctest::Approx(1.2345678901234567e19));
  CHECK(std::isinf(v.find("huge")->number()));
  CHECK(v.find("tiny")->number() == 0.0);
  CHECK(std::isnan(v.find("n")->number()));
  CHECK(v.find("inf")->number() < 0);
  CHECK(std::isinf(v.find("inf")->number()));
  CHECK(v.find("missing") == nullptr);
  CHECK(parse_json("\xEF\xBB\xBF[]", "doc").is_array());
  CHECK(parse_json("\"\xE2\x82\xAC\"", "doc").string() == "\xE2\x82\xAC");
}

TEST_CASE("json: hostile documents fail with the place") {
  CHECK(json_error("") == "doc: line 1, column 1: unexpected end of the document");
  CHECK(json_error("{\"a\": 1,\n \"a\": 2}") == "doc: line 2, column 2: duplicate key 'a'");
  CHECK(json_error("[1, 2") == "doc: line 1, column 6: expected ',' or ']' in an array");
  CHECK(json_error("{\"a\" 1}").find("expected ':' after key 'a'") != std::string::npos);
  CHECK(json_error("\"abc").find("unterminated string") != std::string::npos);
  CHECK(json_error("\"a\\qb\"").find("invalid escape '\\q'") != std::string::npos);
  CHECK(json_error("\"\\ud800\"").find("without its low surrogate") != std::string::npos);
  CHECK(json_error("\"\\ud800\\u0041\"").find("followed by") != std::string::npos);
  CHECK(json_error("\"\\udc00\"").find("unpaired low surrogate") != std::string::npos);
  CHECK(json_error("\"\\u12g4\"").find("invalid hex digit") != std::string::npos);
  CHECK(json_error("\"a\nb\"").find("control character 0x0a") != std::string::npos);
  CHECK(json_error("\"\xC0\xAF\"").find("invalid UTF-8") != std::string::npos);  // overlong '/'
  CHECK(json_error("\"\xED\xA0\x80\"").find("invalid UTF-8") != std::string::npos);  // a surrogate
  CHECK(json_error("\"\xF0\x9F\x98\"").find("UTF-8") != std::string::npos);  // truncated
  CHECK(json_error("01").find("leading zero") != std::string::npos);
  CHECK(json_error("1.").find("expected digits after '.'") != std::string::npos);
  CHECK(json_error("1e+").find("expected digits in an exponent") != std::string::npos);
  CHECK(json_error("-").find("expected digits") != std::string::npos);
  CHECK(json_error("[1] x").find("unexpected 'x' after the document") != std::string::npos);
  CHECK(json_error("tru").find("unexpected 't'") != std::string::npos);
  CHECK(json_error("\x01").find("unexpected '\\x01'") != std::string::npos);

  JsonLimits limits;
  limits.max_depth = 10;
  CHECK(json_error(std::string(10, '[') + std::string(10, ']'), limits) == "(no error)");
  CHECK(json_error(std::string(11, '[') + std::string(11, ']'), limits).find("nesting deeper than 10") !=
        std::string::npos);
  // Far deeper than the stack could take if the parser trusted it.
  CHECK(json_error(std::string(1'000'000, '['), {}).find("nesting deeper than 100") != std::string::npos);
  JsonLimits huge;
  huge.max_depth = 1 << 30;
  CHECK(json_error(std::string(1'000'000, '['), huge).find("nesting deeper than 512") != std::string::npos);
  limits = {};
  limits.max_values = 3;
  CHECK(json_error("[1, 2]", limits) == "(no error)");
  CHECK(json_error("[1, 2, 3]", limits).find("more than 3 values") != std::string::npos);
  limits = {};
  limits.max_bytes = 4;
  CHECK(json_error("[1, 2]", limits).find("6 bytes of JSON, over the limit of 4") != std::string::npos);
}

TEST_CASE("a minimal hand-made archive") {
  TempDir dir;
  Archive archive;
  frontend::Pt2ModelInfo info;
  auto graph = frontend::import_pt2(archive.write(dir), {}, &info);
  CHECK(info.layout == "pt2 archive");
  CHECK(info.torch_version == "2.15.0");
  CHECK(info.schema_version == "8.20");
  CHECK(info.target_histogram.at("torch.ops.aten.add.Tensor") == 1);
  REQUIRE(graph->inputs().size() == 1);
  CHECK(graph->inputs()[0]->name() == "x");
  CHECK(graph->inputs()[0]->shape() == ir::Shape{2, 3});
  CHECK(graph->inputs()[0]->dtype() == ir::DType::F32);
  REQUIRE(graph->outputs().size() == 1);
  CHECK(graph->outputs()[0]->dtype() == ir::DType::F32);
  CHECK(graph->outputs()[0]->shape() == ir::Shape{2, 3});
  const ir::Value* w = graph->find_value("w");
  REQUIRE(w);
  REQUIRE(w->is_constant());
  CHECK(w->constant().dims() == std::vector<int64_t>{3});
  CHECK(w->constant().data<float>()[2] == 3.0f);
}

TEST_CASE("weights: shared files, strided views and offsets") {
  TempDir dir;
  Archive archive;
  // Both operands from one file: w2 is the transpose of the first four floats, w the last three.
  archive.weight_0 = floats({1, 2, 3, 4, 10, 20, 30});
  archive.weights = weights_config(weight_entry("w", "weight_0", tensor_meta({3}, {1}, 4)) + ", " +
                                   weight_entry("w2", "weight_0", tensor_meta({2, 2}, {1, 2})));
  // w2 is used by a second node (whose result is not an output).
  archive.program = add_program("torch.ops.aten.add.Tensor", R"(, {"target": "torch.ops.aten.add.Tensor", "name": "add2",
                  "inputs": [{"name": "self", "arg": {"as_tensor": {"name": "p_w2"}}, "kind": 1},
                             {"name": "other", "arg": {"as_tensor": {"name": "p_w2"}}, "kind": 1}],
                  "outputs": [{"as_tensor": {"name": "add2"}}], "metadata": {}})",
                                R"(, {"parameter": {"arg": {"name": "p_w2"}, "parameter_name": "w2"}})");
  auto graph = frontend::import_pt2(archive.write(dir));
  const ir::Value* w = graph->find_value("w");
  const ir::Value* w2 = graph->find_value("w2");
  REQUIRE(w);
  REQUIRE(w2);
  CHECK(std::vector<float>(w->constant().data<float>(), w->constant().data<float>() + 3) ==
        std::vector<float>{10, 20, 30});
  CHECK(std::vector<float>(w2->constant().data<float>(), w2->constant().data<float>() + 4) ==
        std::vector<float>{1, 3, 2, 4});
}

TEST_CASE("hostile archives fail with one clear line") {
  TempDir dir;
  Archive archive;
  SUBCASE("a weight file shorter than its tensor_meta") {
    archive.weight_0 = floats({1, 2});
    std::string path = archive.write(dir);
    std::string e = import_error(path);
    CHECK(e.starts_with(path + ": data/weights/model_weights_config.json: 'w': sizes [3], strides [1] and storage offset "
                               "0 reach past the end of data/weights/weight_0 (2 f32 elements, 8 bytes)"));
  }
  SUBCASE("an offset past the end") {
    archive.weights = weights_config(weight_entry("w", "weight_0", tensor_meta({3}, {1}, 1)));
    CHECK(import_error(archive.write(dir)).find("storage offset 1 reach past the end") != std::string::npos);
  }
  SUBCASE("strides that overflow") {
    archive.weights = weights_config(weight_entry("w", "weight_0", tensor_meta({3}, {4611686018427387904})));
    CHECK(import_error(archive.write(dir)).find("reach past the end") != std::string::npos);
  }
  SUBCASE("a few bytes repeated into gigabytes") {
    archive.weights = weights_config(weight_entry("w", "weight_0", tensor_meta({1 << 15, 1 << 15}, {0, 0})));
    CHECK(import_error(archive.write(dir)).find("repeat the 12 bytes of data/weights/weight_0 into 4294967296 bytes") !=
          std::string::npos);
  }
  SUBCASE("a file that is not whole elements") {
    archive.weight_0 = "1234567";
    CHECK(import_error(archive.write(dir)).find("holds 7 bytes, not a whole number of f32 elements") !=
          std::string::npos);
  }
  SUBCASE("a path_name that leaves the folder") {
    archive.weights = weights_config(weight_entry("w", "../weight_0", tensor_meta({3}, {1})));
    CHECK(import_error(archive.write(dir)).find("path_name '../weight_0' is not a file name") != std::string::npos);
  }
  SUBCASE("a weight whose shape disagrees with the program") {
    archive.weight_0 = floats({1, 2, 3, 4});
    archive.weights = weights_config(weight_entry("w", "weight_0", tensor_meta({4}, {1})));
    CHECK(import_error(archive.write(dir)).find("weight 'w' is f32[4] in the archive, the program expects f32[3]") !=
          std::string::npos);
  }
  SUBCASE("a weight over the element limit") {
    archive.weights = weights_config(weight_entry("w", "weight_0", tensor_meta({1 << 20, 1 << 20}, {1 << 20, 1})));
    CHECK(import_error(archive.write(dir)).find("the element limit (--max-elements)") != std::string::npos);
  }
  SUBCASE("an unknown target") {
    archive.program = add_program("torch.ops.aten.frobnicate.default");
    std::string path = archive.write(dir);
    CHECK(import_error(path) == path +
                                    ": models/model.json: node 'add' (torch.ops.aten.frobnicate.default): unsupported "
                                    "target 'torch.ops.aten.frobnicate.default' (aten op 'frobnicate' is not in kiln's "
                                    "table)");
  }
  SUBCASE("a target outside aten") {
    archive.program = add_program("torch.ops.higher_order.cond");
    CHECK(import_error(archive.write(dir)).find("unsupported target 'torch.ops.higher_order.cond'") !=
          std::string::npos);
  }
  SUBCASE("no models/model.json") {
    archive.with_model = false;
    std::string path = archive.write(dir);
    CHECK(import_error(path) == path + ": missing models/model.json (the archive has no models/*.json)");
  }
  SUBCASE("deeply nested JSON") {
    archive.program = std::string(100'000, '[') + std::string(100'000, ']');
    std::string path = archive.write(dir);
    CHECK(import_error(path) == path + ": models/model.json: line 1, column 101: nesting deeper than 100");
  }
  SUBCASE("a program that is not an object") {
    archive.program = "[1, 2]";
    std::string path = archive.write(dir);
    CHECK(import_error(path) == path + ": models/model.json: program: expected an object, found array");
  }
  SUBCASE("a tensor used before it is defined") {
    std::string program = add_program();
    program.replace(program.find("{\"name\": \"x\"}}, \"kind\""), 13, "{\"name\": \"zz\"}");
    archive.program = program;
    CHECK(import_error(archive.write(dir)).find("node 'add' (torch.ops.aten.add.Tensor): argument 'self': tensor 'zz' "
                                                "is not defined before its use") != std::string::npos);
  }
  SUBCASE("too many nodes") {
    frontend::Pt2ImportOptions options;
    options.limits.max_nodes = 0;
    CHECK(import_error(archive.write(dir), options).find("1 nodes, over the node limit of 0 (--max-nodes)") !=
          std::string::npos);
  }
  SUBCASE("not a zip at all") {
    std::string path = dir.file("junk.pt2");
    write_file(path, "hello, this is not an archive");
    CHECK(import_error(path).starts_with(path + ": "));
    CHECK(!frontend::is_pt2_file(path));
  }
  SUBCASE("a zip that is not a torch.export archive") {
    std::string path = dir.file("other.pt2");
    write_file(path, make_zip({{"data.pkl", "x"}}, "other/"));
    CHECK(import_error(path).find("a TorchScript or torch.save archive, not a torch.export program") !=
          std::string::npos);
  }
}

struct Fixture {
  const char* name;
  const char* input;
  ir::Shape input_shape;
  const char* output;
  ir::Shape output_shape;
};

TEST_CASE("the fixtures import with the inputs and outputs PyTorch gave them") {
  const Fixture fixtures[] = {
      {"cnn", "x", ir::Shape{1, 3, 16, 16}, "linear", ir::Shape{1, 10}},
      {"cnn_core_aten", "x", ir::Shape{1, 3, 16, 16}, "addmm", ir::Shape{1, 10}},
      {"cnn_dynamic", "x", ir::Shape{2, 3, 16, 16}, "linear", ir::Shape{2, 10}},
      {"transformer", "src", ir::Shape{1, 5, 16}, "layer_norm_3", ir::Shape{1, 5, 16}},
      {"mlp", "x", ir::Shape{4, 12}, "softmax", ir::Shape{4, 5}},
  };
  for (const Fixture& f : fixtures) {
    CAPTURE(f.name);
    std::string dir = models_dir() + "/" + f.name;
    CHECK(frontend::is_pt2_file(dir + "/model.pt2"));
    frontend::Pt2ModelInfo info;
    frontend::Pt2ImportOptions options;
    options.dims["s77"] = 2;  // the dynamic batch, bound as --dim binds it (its .npy files have another)
    auto graph = frontend::import_pt2(dir + "/model.pt2", options, &info);
    CHECK(info.layout == "pt2 archive");
    CHECK(info.torch_version.starts_with("2."));
    REQUIRE(graph->inputs().size() == 1);
    const ir::Value* in = graph->inputs()[0];
    CHECK(in->name() == f.input);
    CHECK(in->dtype() == ir::DType::F32);
    CHECK(in->shape() == f.input_shape);
    REQUIRE(graph->outputs().size() == 1);
    const ir::Value* out = graph->outputs()[0];
    CHECK(out->dtype() == ir::DType::F32);
    CHECK(out->shape() == f.output_shape);
#ifdef KILN_PT2_TEST_STUBS
    CHECK(out->name() == f.output);  // the stand-in names values after their nodes
#endif
    // The .npy files PyTorch wrote agree (but the dynamic model's batch, bound above).
    std::vector<int64_t> npy_in = npy_shape(dir + "/input_0.npy");
    std::vector<int64_t> npy_out = npy_shape(dir + "/expected_0.npy");
    REQUIRE(npy_in.size() == in->shape().rank());
    REQUIRE(npy_out.size() == out->shape().rank());
    for (size_t i = 0; i < npy_in.size(); ++i)
      if (i > 0 || std::string(f.name) != "cnn_dynamic") CHECK(npy_in[i] == in->shape()[i].value());
    for (size_t i = 0; i < npy_out.size(); ++i)
      if (i > 0 || std::string(f.name) != "cnn_dynamic") CHECK(npy_out[i] == out->shape()[i].value());
  }
}

TEST_CASE("fixtures: weights, targets and the dynamic batch") {
  std::string cnn = models_dir() + "/cnn/model.pt2";
  frontend::Pt2ModelInfo info;
  auto graph = frontend::import_pt2(cnn, {}, &info);
  CHECK(info.target_histogram.at("torch.ops.aten.conv2d.default") == 4);
  const ir::Value* w = graph->find_value("conv1.weight");
  REQUIRE(w);
  CHECK(w->constant().dims() == std::vector<int64_t>{8, 3, 3, 3});
  CHECK(graph->find_value("bn1.num_batches_tracked") == nullptr);  // unused buffers are left out

  std::string dynamic = models_dir() + "/cnn_dynamic/model.pt2";
  frontend::Pt2ImportOptions options;
  options.dims["s77"] = 64;
  CHECK_NOTHROW(frontend::import_pt2(dynamic, options));
  options.dims["s77"] = 65;
  CHECK(import_error(dynamic, options) == dynamic + ": models/model.json: --dim s77=65: the program allows s77 in [0, 64]");
}

TEST_CASE("the legacy layout (torch 2.1-2.7)") {
  std::string path = models_dir() + "/cnn_legacy/model.pt2";
  CHECK(frontend::is_pt2_file(path));
#ifdef KILN_PT2_TEST_STUBS
  // The state dict is a torch.save blob: the stand-in unpickler refuses it, naming the entry.
  CHECK(import_error(path).find("serialized_state_dict.pt:data.pkl: the unpickler is not linked") != std::string::npos);
#else
  frontend::Pt2ModelInfo info;
  auto graph = frontend::import_pt2(path, {}, &info);
  CHECK(info.layout == "legacy");
  REQUIRE(graph->inputs().size() == 1);
  CHECK(graph->inputs()[0]->shape() == ir::Shape{1, 3, 16, 16});
  REQUIRE(graph->outputs().size() == 1);
  CHECK(graph->outputs()[0]->shape() == ir::Shape{1, 10});
  auto modern = frontend::import_pt2(models_dir() + "/cnn/model.pt2");
  const ir::Value* a = graph->find_value("fc.weight");
  const ir::Value* b = modern->find_value("fc.weight");
  REQUIRE(a);
  REQUIRE(b);
  CHECK(a->constant().same_as(b->constant()));
#endif
}

#ifdef KILN_PT2_TEST_STUBS
#include "frontend/torchscript/aten_ops.h"

namespace kiln::frontend::torchscript {
std::vector<AtenCall>& stub_aten_calls();  // aten_stub_for_tests.cpp
}

namespace {

// A program over input x: f32[s0, 3] (s0 in [1, 8], example 2) whose `nodes` end in a tensor
// named "y" with `y_meta`.
std::string sym_program(const std::string& nodes, const std::string& y_meta, const std::string& sym_values,
                        const std::string& more_outputs = "") {
  std::string s0 = R"J({"as_expr": {"expr_str": "Symbol('s0', positive=True, integer=True)", "hint": {"as_int": 2}}})J";
  std::string x_meta = R"({"dtype": 7, "sizes": [)" + s0 + R"(, {"as_int": 3}], "requires_grad": false,
      "device": {"type": "cpu"}, "strides": [{"as_int": 3}, {"as_int": 1}], "storage_offset": {"as_int": 0}, "layout": 7})";
  return R"({"graph_module": {"graph": {"inputs": [], "outputs": [], "nodes": [)" + nodes + R"(],
      "tensor_values": {"x": )" + x_meta + R"(, "y": )" + y_meta + R"(}, "sym_int_values": )" + sym_values + R"(},
    "signature": {"input_specs": [{"user_input": {"arg": {"as_tensor": {"name": "x"}}}}],
      "output_specs": [{"user_output": {"arg": {"as_tensor": {"name": "y"}}}})" + more_outputs + R"(]}},
    "range_constraints": {"s0": {"min_val": 1, "max_val": 8}}})";
}

std::string write_program(const TempDir& dir, const std::string& program) {
  Archive archive;
  archive.program = program;
  archive.weights = weights_config("");
  return archive.write(dir);
}

}  // namespace

TEST_CASE("arguments reach the aten table as TorchScript would pass them") {
  TempDir dir;
  std::string node = R"({"target": "torch.ops.aten.view.default", "name": "y", "inputs": [
      {"name": "self", "arg": {"as_tensor": {"name": "x"}}, "kind": 1},
      {"name": "size", "arg": {"as_sym_ints": [{"as_name": "sym_size_int"}, {"as_int": 3}]}, "kind": 1},
      {"name": "dtype", "arg": {"as_scalar_type": 13}, "kind": 2},
      {"name": "layout", "arg": {"as_layout": 7}, "kind": 2},
      {"name": "memory_format", "arg": {"as_memory_format": 4}, "kind": 2},
      {"name": "device", "arg": {"as_device": {"type": "cpu", "index": 0}}, "kind": 2},
      {"name": "value", "arg": {"as_float": "-Infinity"}, "kind": 2},
      {"name": "tensors", "arg": {"as_optional_tensors": [{"as_tensor": {"name": "x"}}, {"as_none": true}]}},
      {"name": "flags", "arg": {"as_bools": [true, false]}, "kind": 2},
      {"name": "reduce", "arg": {"as_string": "mean"}, "kind": 2}],
    "outputs": [{"as_tensor": {"name": "y"}}], "metadata": {}})";
  std::string size = R"({"target": "torch.ops.aten.sym_size.int", "name": "sym_size_int", "inputs": [
      {"name": "self", "arg": {"as_tensor": {"name": "x"}}, "kind": 1}, {"name": "dim", "arg": {"as_int": 0}, "kind": 1}],
    "outputs": [{"as_sym_int": {"as_name": "sym_size_int"}}], "metadata": {}})";
  std::string y_meta = R"({"dtype": 7, "sizes": [{"as_expr": {"expr_str": "s0", "hint": {"as_int": 2}}}, {"as_int": 3}],
      "requires_grad": false, "device": {"type": "cpu"}, "strides": [], "storage_offset": {"as_int": 0}, "layout": 7})";
  std::string sym_values =
      R"J({"sym_size_int": {"as_expr": {"expr_str": "Symbol('s0', positive=True, integer=True)", "hint": {"as_int": 2}}}})J";
  std::string path = write_program(dir, sym_program(size + ", " + node, y_meta, sym_values));

  using kiln::frontend::torchscript::TKind;
  auto& calls = kiln::frontend::torchscript::stub_aten_calls();
  auto keyword = [&](const std::string& name) {
    for (const auto& [k, v] : calls.back().keywords)
      if (k == name) return v;
    FAIL("no keyword " << name);
    return kiln::frontend::torchscript::TValue{};
  };
  SUBCASE("with the example's size") {
    calls.clear();
    auto graph = frontend::import_pt2(path);
    REQUIRE(calls.size() == 1);  // sym_size is not lowered: its value is known
    CHECK(calls[0].name == "view");
    REQUIRE(calls[0].positional.size() == 2);
    CHECK(calls[0].positional[0].is_tensor());
    const auto& sizes = *calls[0].positional[1].items;
    CHECK(sizes[0].i == 2);  // the hint
    CHECK(sizes[1].i == 3);
    CHECK(keyword("dtype").i == 15);  // c10::ScalarType::BFloat16
    CHECK(keyword("layout").i == 0);  // torch.strided
    CHECK(keyword("memory_format").i == 1);  // torch.preserve_format
    CHECK(keyword("device").s == "cpu:0");
    CHECK(keyword("value").f == -std::numeric_limits<double>::infinity());
    CHECK(keyword("tensors").items->at(1).is_none());  // no kind: bound by name
    CHECK(keyword("flags").items->at(0).b);
    CHECK(keyword("reduce").s == "mean");
    CHECK(graph->inputs()[0]->shape() == ir::Shape({ir::Dim::symbol("s0"), 3}));
    CHECK(graph->outputs()[0]->shape() == ir::Shape({ir::Dim::symbol("s0"), 3}));
  }
  SUBCASE("with --dim") {
    calls.clear();
    frontend::Pt2ImportOptions options;
    options.dims["s0"] = 5;
    frontend::import_pt2(path, options);
    REQUIRE(calls.size() == 1);
    CHECK(calls[0].positional[1].items->at(0).i == 5);
    options.dims["s0"] = 9;
    CHECK(import_error(path, options).ends_with("--dim s0=9: the program allows s0 in [1, 8]"));
  }
  SUBCASE("an expression of a bound symbol is refused") {
    std::string doubled = R"({"sym_size_int": {"as_expr": {"expr_str": "2*s0", "hint": {"as_int": 4}}}})";
    std::string p2 = write_program(dir, sym_program(size + ", " + node, y_meta, doubled));
    CHECK_NOTHROW(frontend::import_pt2(p2));  // unbound: the hint
    frontend::Pt2ImportOptions options;
    options.dims["s0"] = 5;
    CHECK(import_error(p2, options).find("'sym_size_int' is the expression 2*s0 of --dim s0, which kiln cannot "
                                         "evaluate") != std::string::npos);
  }
}

TEST_CASE("signature: buffer mutations are dropped with a note, other kinds refused") {
  TempDir dir;
  std::string y_meta = R"({"dtype": 7, "sizes": [{"as_int": 2}, {"as_int": 3}], "requires_grad": false,
      "device": {"type": "cpu"}, "strides": [], "storage_offset": {"as_int": 0}, "layout": 7})";
  std::string relu = R"({"target": "torch.ops.aten.relu.default", "name": "y", "inputs": [
      {"name": "self", "arg": {"as_tensor": {"name": "x"}}, "kind": 1}], "outputs": [{"as_tensor": {"name": "y"}}]})";
  std::string check = R"({"target": "torch.ops.aten._assert_scalar.default", "name": "check", "inputs": [
      {"name": "self", "arg": {"as_sym_bool": {"as_name": "eq"}}, "kind": 1}], "outputs": [{"as_none": true}]})";
  frontend::Pt2ModelInfo info;
  std::string path = write_program(
      dir, sym_program(check + ", " + relu, y_meta, "{}",
                       R"(, {"buffer_mutation": {"arg": {"name": "y"}, "buffer_name": "bn.running_mean"}})"));
  auto graph = frontend::import_pt2(path, {}, &info);
  CHECK(graph->outputs().size() == 1);
  REQUIRE(info.notes.size() == 2);
  CHECK(info.notes[0] == "the update of buffer 'bn.running_mean' is dropped: a compiled model keeps its weights");
  CHECK(info.notes[1] == "1 run-time shape assertions dropped: the shapes are fixed at compile time");
  CHECK(graph->outputs()[0]->shape() == ir::Shape{2, 3});

  std::string mutation = write_program(
      dir, sym_program(relu, y_meta, "{}", R"(, {"user_input_mutation": {"arg": {"name": "y"}, "user_input_name": "x"}})"));
  CHECK(import_error(mutation).ends_with("signature.output_specs[1]: outputs of kind 'user_input_mutation' are not "
                                         "supported"));
}
#endif

// The large models of make_pt2_models.py --big, when KILN_PT2_BIG_DIR names their folder.
TEST_CASE("big models (KILN_PT2_BIG_DIR)") {
  const char* big = std::getenv("KILN_PT2_BIG_DIR");
  if (!big) return;
  for (const char* name : {"resnet18", "mobilenet_v2", "transformer_256"}) {
    CAPTURE(name);
    std::string dir = std::string(big) + "/" + name;
    auto graph = frontend::import_pt2(dir + "/model.pt2");
    REQUIRE(graph->outputs().size() == 1);
    std::vector<int64_t> npy_out = npy_shape(dir + "/expected_0.npy");
    CHECK(graph->outputs()[0]->shape() == ir::Shape::of(npy_out));
  }
}

// Random damage to a real program's JSON: an error or a graph, never a crash or a hang.
TEST_CASE("damaged programs fail cleanly") {
  std::string source = models_dir() + "/mlp/model.pt2";
  auto zip_bytes = [&] {
    std::ifstream in(source, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  // The stored entries of the fixture (found through its central directory), rewritten with
  // a damaged models/model.json.
  std::vector<std::pair<std::string, std::string>> entries;
  {
    auto u16 = [&](size_t p) { return static_cast<uint8_t>(zip_bytes[p]) | (static_cast<uint8_t>(zip_bytes[p + 1]) << 8); };
    auto u32 = [&](size_t p) { return static_cast<uint32_t>(u16(p)) | (static_cast<uint32_t>(u16(p + 2)) << 16); };
    size_t eocd = zip_bytes.rfind(std::string("PK\x05\x06", 4));
    REQUIRE(eocd != std::string::npos);
    size_t at = u32(eocd + 16);
    for (size_t i = 0, n = u16(eocd + 10); i < n; ++i) {
      REQUIRE(zip_bytes.compare(at, 4, std::string("PK\x01\x02", 4)) == 0);
      size_t size = u32(at + 24), name_len = u16(at + 28), local = u32(at + 42);
      std::string name = zip_bytes.substr(at + 46, name_len);
      size_t data = local + 30 + u16(local + 26) + u16(local + 28);
      entries.emplace_back(name.substr(name.find('/') + 1), zip_bytes.substr(data, size));
      at += 46 + name_len + u16(at + 30) + u16(at + 32);
    }
  }
  auto program = std::find_if(entries.begin(), entries.end(), [](const auto& e) { return e.first == "models/model.json"; });
  REQUIRE(program != entries.end());
  const std::string original = program->second;
  TempDir dir;
  std::string path = dir.file("model.pt2");
  uint32_t seed = 12345;
  auto next = [&] { return seed = seed * 1664525u + 1013904223u; };
  int failed = 0, imported = 0;
  for (int round = 0; round < 300; ++round) {
    std::string damaged = original;
    int edits = 1 + next() % 4;
    for (int k = 0; k < edits; ++k) {
      size_t at = next() % damaged.size();
      switch (next() % 4) {
        case 0: damaged[at] = static_cast<char>(next()); break;
        case 1: damaged[at] = "0123456789-[]{}\",:e"[next() % 20]; break;
        case 2: damaged.erase(at, 1 + next() % 16); break;
        default: damaged.insert(at, std::to_string(next())); break;
      }
    }
    program->second = damaged;
    write_file(path, make_zip(entries, "model/"));
    try {
      frontend::import_pt2(path);
      ++imported;
    } catch (const Error& e) {
      CHECK(std::string(e.what()).starts_with(path + ": "));
      ++failed;
    }
  }
  CHECK(failed > 0);
  MESSAGE(failed << " damaged programs refused, " << imported << " imported");
}
