#include "tests/conformance/prepare.h"

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "codegen/cpp/cpp_backend.h"
#include "frontend/onnx/onnx_importer.h"
#include "ir/error.h"
#include "ir/interpreter.h"
#include "ir/op_registry.h"
#include "passes/pass_manager.h"
#include "tests/conformance/compare.h"

namespace kiln::conformance {

namespace fs = std::filesystem;

namespace {

// For testing the runner itself: KILN_CONFORMANCE_SELFTEST="crash:NAME hang:NAME
// badcode:NAME" makes the case called NAME crash or hang in its child process, or generate
// C++ that does not compile, as a bug in kiln might.
bool selftest(const std::string& what, const std::string& name) {
  const char* t = std::getenv("KILN_CONFORMANCE_SELFTEST");
  return t && (std::string(" ") + t + " ").find(" " + what + ":" + name + " ") != std::string::npos;
}

// Messages name files by their full path; within a case folder the file name says enough.
std::string shorten(std::string message, const std::string& dir) {
  for (std::string prefix : {dir + "/", dir}) {
    for (size_t at; (at = message.find(prefix)) != std::string::npos;) message.erase(at, prefix.size());
  }
  return message;
}

std::vector<fs::path> numbered_files(const fs::path& dir, const std::string& stem) {
  std::vector<fs::path> files;
  for (size_t k = 0;; ++k) {
    fs::path p = dir / fmt::format("{}_{}.pb", stem, k);
    if (!fs::exists(p)) break;
    files.push_back(p);
  }
  return files;
}

std::vector<ir::Tensor> load_all(const std::vector<fs::path>& files) {
  std::vector<ir::Tensor> tensors;
  for (const fs::path& f : files) tensors.push_back(frontend::load_tensor_proto_file(f.string()));
  return tensors;
}

void write_bytes(const fs::path& path, const void* data, size_t n) {
  std::ofstream f(path, std::ios::binary);
  f.write(static_cast<const char*>(data), static_cast<std::streamsize>(n));
  if (!f) fail("{}: cannot write", path.string());
}

struct Outcome {
  std::string status;  // pass, fail, unsupported
  std::string detail;
};

// The interpreter on every data set, compared with the stored outputs.
Outcome interpret_case(const Case& c, const ir::Graph& graph) {
  for (const std::string& set : c.data_sets) {
    fs::path dir = fs::path(c.dir) / set;
    std::vector<ir::Tensor> inputs, expected;
    try {
      inputs = load_all(numbered_files(dir, "input"));
      expected = load_all(numbered_files(dir, "output"));
    } catch (const Error& e) {
      return {"unsupported", shorten(e.what(), c.dir)};
    }
    if (inputs.size() != graph.inputs().size())
      return {"fail", fmt::format("{}: {} input files for the imported graph's {} inputs", set, inputs.size(),
                                  graph.inputs().size())};
    std::map<std::string, ir::Tensor> feeds;
    for (size_t k = 0; k < inputs.size(); ++k) feeds[graph.inputs()[k]->name()] = inputs[k];
    std::vector<ir::Tensor> outputs;
    try {
      outputs = ir::interpret(graph, feeds);
    } catch (const Error& e) {
      return {"unsupported", shorten(e.what(), c.dir)};
    } catch (const std::exception& e) {
      return {"fail", fmt::format("crash: exception {}", e.what())};
    }
    if (outputs.size() != expected.size())
      return {"fail", fmt::format("{}: {} outputs, {} expected", set, outputs.size(), expected.size())};
    for (size_t k = 0; k < outputs.size(); ++k) {
      std::string diff = compare_tensor(graph.outputs()[k]->name(), expected[k], outputs[k], {c.rtol, c.atol});
      if (!diff.empty()) return {"fail", (c.data_sets.size() > 1 ? set + ": " : "") + diff};
    }
  }
  return {"pass", ""};
}

// Whether compiling failed only because some shape is not known before run time.
bool needs_static_values(const std::string& message) {
  return message.find("give each symbolic dim") != std::string::npos ||
         message.find("known at compile time") != std::string::npos ||
         message.find("needs static dims") != std::string::npos ||                  // Squeeze of [?, ...]
         message.find("neither constant nor of known length") != std::string::npos;  // a computed shape
}

// Whether some node reads `v` where its op says the values decide the output's shape
// (Resize's float scales).
bool sets_output_shape(const ir::Graph& graph, const ir::Value* v) {
  for (const auto& n : graph.nodes()) {
    const ir::OpDef* def = ir::registry().find(n->op());
    for (size_t i = 0; def && i < n->num_inputs() && i < def->inputs.size(); ++i)
      if (n->input(i) == v && def->inputs[i].sets_output_shape) return true;
  }
  return false;
}

// The default pipeline with static input shapes from `inputs`, then the C++ sources. With
// `freeze`, int64 inputs (ONNX's type for shapes, axes, pads, repeats) and inputs whose
// values decide an output's shape (InputSpec::sets_output_shape) become constants
// holding `inputs`' values, as they are in real models, provided some input stays an input
// and some node is left to run: the names of the frozen inputs go to `frozen`.
codegen::cpp::GeneratedModel generate(const Case& c, ir::Graph& graph, const std::vector<ir::Tensor>& inputs,
                                      const PrepareRequest& r, bool freeze, std::vector<size_t>& kept,
                                      std::string& frozen) {
  std::vector<ir::Value*> declared = graph.inputs();
  for (size_t k = 0; k < inputs.size(); ++k) declared[k]->set_type(inputs[k].dtype(), inputs[k].shape());
  kept.clear();
  frozen.clear();
  // An int64 input may be data (TopK's x): when freezing every int64 input would leave none,
  // only those whose values decide an output's shape are frozen.
  bool only_shape_setting = false;
  if (freeze) {
    bool any_kept = false;
    for (size_t k = 0; k < inputs.size(); ++k)
      any_kept = any_kept || !(inputs[k].dtype() == ir::DType::I64 || sets_output_shape(graph, declared[k]));
    only_shape_setting = !any_kept;
  }
  for (size_t k = 0; k < inputs.size(); ++k) {
    const bool shape_setting = sets_output_shape(graph, declared[k]);
    if (freeze && (shape_setting || (!only_shape_setting && inputs[k].dtype() == ir::DType::I64)))
      frozen += (frozen.empty() ? "'" : ", '") + declared[k]->name() + "'";
    else kept.push_back(k);
  }
  if (freeze) {
    if (frozen.empty() || kept.empty()) fail("no int64 input to make constant, or no other input");
    graph.inputs().clear();
    for (size_t k = 0; k < inputs.size(); ++k) {
      if (std::find(kept.begin(), kept.end(), k) != kept.end()) graph.inputs().push_back(declared[k]);
      else declared[k]->set_constant(inputs[k]);
    }
  }
  passes::run_pipeline(graph, passes::default_pipeline(), {});
  if (freeze && graph.nodes().empty()) fail("with its int64 inputs constant, nothing is left to compile");
  codegen::cpp::CppOptions options;
  options.name = r.model_name;
  options.source_model = c.suite + "/" + c.name + "/model.onnx";
  return codegen::cpp::generate_cpp(graph, options);
}

// Static shapes from the data, the default pipeline, the C++ sources and raw inputs on disk.
// A case whose shapes depend on int64 inputs' values (a Reshape's shape, a Reduce's axes:
// graph inputs in ONNX's node tests, constants in real models) is compiled again with those
// inputs as constants; the result says so.
Outcome generate_case(const Case& c, std::unique_ptr<ir::Graph> graph, const PrepareRequest& r) {
  std::vector<std::vector<ir::Tensor>> sets;
  try {
    for (const std::string& set : c.data_sets) sets.push_back(load_all(numbered_files(fs::path(c.dir) / set, "input")));
  } catch (const Error& e) {
    return {"unsupported", shorten(e.what(), c.dir)};
  }
  if (sets.empty()) return {"fail", "no test_data_set folder"};
  if (sets[0].size() != graph->inputs().size())
    return {"fail", fmt::format("{} input files for the imported graph's {} inputs", sets[0].size(),
                                graph->inputs().size())};
  for (size_t s = 1; s < sets.size(); ++s)
    for (size_t k = 0; k < sets[s].size() && k < sets[0].size(); ++k)
      if (sets[s][k].dims() != sets[0][k].dims())
        return {"unsupported", "data sets give one input different shapes; compiled code has static shapes"};
  codegen::cpp::GeneratedModel model;
  std::vector<size_t> kept;
  std::string frozen;
  try {
    model = generate(c, *graph, sets[0], r, false, kept, frozen);
  } catch (const Error& e) {
    std::string first = shorten(e.what(), c.dir);
    if (!r.freeze || !needs_static_values(first)) return {"unsupported", first};
    try {
      graph = frontend::import_onnx((fs::path(c.dir) / "model.onnx").string());
      model = generate(c, *graph, sets[0], r, true, kept, frozen);
    } catch (const Error& e) {
      // With constant inputs it got further: that error says more.
      bool tried = !frozen.empty() && !kept.empty();
      std::string second = shorten(e.what(), c.dir);
      if (!tried || needs_static_values(second)) return {"unsupported", first};
      return {"unsupported", fmt::format("with constant inputs {}: {}", frozen, second)};
    }
    for (size_t s = 1; s < sets.size(); ++s)
      for (size_t k = 0; k < sets[s].size(); ++k)
        if (std::find(kept.begin(), kept.end(), k) == kept.end() && !sets[s][k].same_as(sets[0][k]))
          return {"unsupported", first + " (and the data sets give its int64 inputs different values)"};
  }
  fs::path src = fs::path(r.work_dir) / "src";
  fs::create_directories(src);
  for (const auto& [path, text] : model.files)
    if (path != "CMakeLists.txt" && path != "main.cpp") write_bytes(src / path, text.data(), text.size());
  write_bytes(src / (model.name + ".weights"), model.weights.data(), model.weights.size());
  if (selftest("badcode", c.name)) {  // generated code that does not compile
    std::ofstream(src / "model.cpp", std::ios::app) << "#error kiln_conformance self-test\n";
  }
  for (size_t s = 0; s < sets.size(); ++s)
    for (size_t j = 0; j < kept.size(); ++j) {
      const ir::Tensor& t = sets[s][kept[j]];
      write_bytes(fs::path(r.work_dir) / fmt::format("set{}_input_{}.bin", s, j), t.raw(), t.nbytes());
    }
  return {"ready", frozen.empty() ? "" : "constant inputs: " + frozen};
}

}  // namespace

void append_result(const std::string& path, const std::string& key, const std::string& value) {
  std::string v;
  for (char ch : value) {
    if (ch == '\n') v += "\\n";
    else if (ch == '\t') v += "\\t";
    else if (ch == '\\') v += "\\\\";
    else v += ch;
  }
  std::ofstream f(path, std::ios::app);
  f << key << '\t' << v << '\n';
  f.flush();
}

std::map<std::string, std::string> read_result_file(const std::string& path) {
  std::map<std::string, std::string> out;
  std::ifstream f(path);
  for (std::string line; std::getline(f, line);) {
    size_t tab = line.find('\t');
    if (tab == std::string::npos) continue;
    std::string v;
    const std::string raw = line.substr(tab + 1);
    for (size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '\\' && i + 1 < raw.size()) {
        v += raw[i + 1] == 'n' ? '\n' : raw[i + 1] == 't' ? '\t' : raw[i + 1];
        ++i;
      } else {
        v += raw[i];
      }
    }
    out[line.substr(0, tab)] = v;
  }
  return out;
}

int prepare_case(const PrepareRequest& r) {
  const Case& c = *r.c;
  fs::create_directories(r.work_dir);
  const std::string result = (fs::path(r.work_dir) / "prepare.txt").string();
  auto record = [&](const std::string& key, const Outcome& o) { append_result(result, key, o.status + "\t" + o.detail); };

  if (r.interpret && selftest("crash", c.name)) std::raise(SIGSEGV);
  if (r.interpret && selftest("hang", c.name))
    for (;;) pause();
  std::unique_ptr<ir::Graph> graph;
  try {
    graph = frontend::import_onnx((fs::path(c.dir) / "model.onnx").string());
  } catch (const Error& e) {
    Outcome o{"unsupported", shorten(e.what(), c.dir)};
    if (r.interpret) record("interp", o);
    record("compiled", o);
    return 0;
  }
  if (r.interpret) record("interp", interpret_case(c, *graph));
  record("compiled", generate_case(c, std::move(graph), r));
  return 0;
}

}  // namespace kiln::conformance
