#include "tests/conformance/cases.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

namespace kiln::conformance {

namespace fs = std::filesystem;

namespace {

// Ops whose outputs are random draws: the issue leaves them out of the denominator. No schema
// marks an op as random, so this is the one hand list (the issue's own); ImageDecoder is
// named there too.
const std::set<std::string> kRandomOps = {"RandomUniform", "RandomUniformLike", "RandomNormal",
                                          "RandomNormalLike", "Bernoulli", "Multinomial"};
const std::set<std::string> kOutOfScopeDomains = {"ai.onnx.ml", "ai.onnx.preview.training"};

bool is_default_domain(const std::string& d) { return d.empty() || d == "ai.onnx"; }

// What makes a model out of scope, gathered over the graph and its subgraphs.
struct ScopeScan {
  std::map<std::string, int> opsets;  // domain -> version, from opset_import
  std::set<std::string> ops;
  std::set<std::string> reasons;

  void type(const onnx::TypeProto& t, const std::string& where) {
    switch (t.value_case()) {
      case onnx::TypeProto::kTensorType:
        if (t.tensor_type().elem_type() == onnx::TensorProto::STRING)
          reasons.insert("string tensor (" + where + ")");
        break;
      case onnx::TypeProto::kSequenceType: reasons.insert("sequence type (" + where + ")"); break;
      case onnx::TypeProto::kOptionalType: reasons.insert("optional type (" + where + ")"); break;
      case onnx::TypeProto::kMapType: reasons.insert("map type (" + where + ")"); break;
      default: break;
    }
  }

  void tensor(const onnx::TensorProto& t, const std::string& where) {
    if (t.data_type() == onnx::TensorProto::STRING) reasons.insert("string tensor (" + where + ")");
  }

  // An op whose schema takes or gives only sequences, optionals or maps (SequenceAt,
  // SplitToSequence, Optional...), or only strings (StringNormalizer, RegexFullMatch...),
  // from the schemas of the ONNX library kiln builds against.
  void schema(const onnx::NodeProto& n) {
    std::string domain = is_default_domain(n.domain()) ? "" : n.domain();
    auto it = opsets.find(domain);
    int version = it == opsets.end() ? 1000 : it->second;
    const onnx::OpSchema* s = onnx::OpSchemaRegistry::Schema(n.op_type(), version, domain);
    if (!s) return;
    std::map<std::string, std::vector<std::string>> allowed;
    for (const auto& c : s->typeConstraintParams()) allowed[c.type_param_str] = c.allowed_type_strs;
    auto check = [&](const std::vector<onnx::OpSchema::FormalParameter>& params) {
      for (const auto& p : params) {
        auto a = allowed.find(p.GetTypeStr());
        std::vector<std::string> types = a == allowed.end() ? std::vector<std::string>{p.GetTypeStr()} : a->second;
        if (types.empty()) continue;
        bool all_non_tensor = true, all_string = true;
        for (const std::string& t : types) {
          if (t.rfind("tensor(", 0) == 0) all_non_tensor = false;
          if (t != "tensor(string)") all_string = false;
        }
        if (all_non_tensor)
          reasons.insert(fmt_reason(types[0].substr(0, types[0].find('(')) + " type", n.op_type()));
        else if (all_string)
          reasons.insert(fmt_reason("string tensor", n.op_type()));
      }
    };
    check(s->inputs());
    check(s->outputs());
  }

  static std::string fmt_reason(const std::string& what, const std::string& op) {
    std::string w = what == "seq type" ? "sequence type" : what;
    return w + " (op " + op + ")";
  }

  void graph(const onnx::GraphProto& g) {
    for (const auto& v : g.input()) type(v.type(), "value '" + v.name() + "'");
    for (const auto& v : g.output()) type(v.type(), "value '" + v.name() + "'");
    for (const auto& v : g.value_info()) type(v.type(), "value '" + v.name() + "'");
    for (const auto& t : g.initializer()) tensor(t, "initializer '" + t.name() + "'");
    for (const auto& n : g.node()) node(n);
  }

  void node(const onnx::NodeProto& n) {
    bool default_domain = is_default_domain(n.domain());
    ops.insert(default_domain ? n.op_type() : n.domain() + ":" + n.op_type());
    if (kOutOfScopeDomains.count(n.domain())) reasons.insert("domain " + n.domain());
    if (default_domain && kRandomOps.count(n.op_type())) reasons.insert("random-number op " + n.op_type());
    if (default_domain && n.op_type() == "ImageDecoder") reasons.insert("ImageDecoder");
    schema(n);
    for (const auto& a : n.attribute()) {
      if (a.has_t()) tensor(a.t(), "attribute '" + a.name() + "' of " + n.op_type());
      if (a.has_g()) graph(a.g());
      for (const auto& g : a.graphs()) graph(g);
      if ((n.op_type() == "Cast" || n.op_type() == "ConstantOfShape") && a.name() == "to" &&
          a.i() == onnx::TensorProto::STRING)
        reasons.insert("string tensor (Cast to string)");
    }
  }
};

std::string read_text(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// rtol and atol from a case's data.json, as ONNX's loader reads them.
void read_tolerances(const fs::path& dir, Case& c) {
  fs::path json = dir / "data.json";
  if (!fs::exists(json)) return;
  std::string text = read_text(json);
  std::smatch m;
  static const std::regex rtol(R"re("rtol"\s*:\s*([0-9.eE+-]+))re");
  static const std::regex atol(R"re("atol"\s*:\s*([0-9.eE+-]+))re");
  if (std::regex_search(text, m, rtol)) c.rtol = std::stod(m[1]);
  if (std::regex_search(text, m, atol)) c.atol = std::stod(m[1]);
}

void scan_model(const fs::path& model, Case& c) {
  onnx::ModelProto proto;
  std::ifstream f(model, std::ios::binary);
  if (!f || !proto.ParseFromIstream(&f)) return;  // the importer will say what is wrong
  ScopeScan scan;
  for (const auto& o : proto.opset_import())
    scan.opsets[is_default_domain(o.domain()) ? "" : o.domain()] = static_cast<int>(o.version());
  scan.graph(proto.graph());
  for (const auto& fn : proto.functions())
    for (const auto& n : fn.node()) scan.node(n);
  c.ops.assign(scan.ops.begin(), scan.ops.end());
  std::string reasons;
  size_t n = 0;
  for (const std::string& r : scan.reasons)
    if (n++ < 3) reasons += (reasons.empty() ? "" : "; ") + r;
  if (n > 3) reasons += "; and " + std::to_string(n - 3) + " more";
  c.out_of_scope = reasons;
}

}  // namespace

std::vector<Case> scan_cases(const std::string& root, const std::vector<std::string>& suites,
                             const std::string& filter) {
  std::vector<Case> all;
  for (const std::string& suite : suites) {
    fs::path dir = fs::path(root) / suite;
    if (!fs::is_directory(dir)) continue;
    std::vector<fs::path> folders;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.is_directory()) folders.push_back(e.path());
    std::sort(folders.begin(), folders.end());
    for (const fs::path& folder : folders) {
      Case c;
      c.suite = suite;
      c.name = folder.filename().string();
      c.dir = fs::absolute(folder).string();
      for (const auto& e : fs::directory_iterator(folder))
        if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0)
          c.data_sets.push_back(e.path().filename().string());
      std::sort(c.data_sets.begin(), c.data_sets.end(), [](const std::string& a, const std::string& b) {
        return a.size() != b.size() ? a.size() < b.size() : a < b;
      });
      read_tolerances(folder, c);
      scan_model(folder / "model.onnx", c);
      all.push_back(std::move(c));
    }
  }

  // What each node case tests: its one op, or for an _expanded case its sibling's op.
  std::map<std::string, const Case*> node_cases;
  for (const Case& c : all)
    if (c.suite == "node") node_cases[c.name] = &c;
  for (Case& c : all) {
    if (c.suite != "node" || c.name.find("_expanded") != std::string::npos) continue;
    std::vector<std::string> ops;
    for (const std::string& op : c.ops)
      if (op != "Constant") ops.push_back(op);
    if (ops.empty()) ops = c.ops;
    // Several ops (none in onnx 1.22's data): the one whose name the case name spells out.
    auto squash = [](std::string s) {
      std::string out;
      for (char ch : s)
        if (ch != '_') out += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      return out;
    };
    std::string name = squash(c.name);
    for (const std::string& op : ops)
      if (name.find(squash(op)) != std::string::npos && op.size() > c.tested_op.size()) c.tested_op = op;
    if (c.tested_op.empty() && !ops.empty()) c.tested_op = ops[0];
  }
  for (Case& c : all) {
    size_t at = c.name.find("_expanded");
    if (c.suite != "node" || at == std::string::npos) continue;
    auto it = node_cases.find(c.name.substr(0, at));
    c.tested_op = it != node_cases.end() ? it->second->tested_op : "";
  }
  for (Case& c : all)
    if (c.suite == "node" && c.tested_op.empty()) c.tested_op = "(unknown)";

  std::vector<std::string> patterns;
  for (size_t at = 0; at <= filter.size();) {
    size_t comma = std::min(filter.find(',', at), filter.size());
    if (comma > at) patterns.push_back(filter.substr(at, comma - at));
    at = comma + 1;
  }
  std::vector<Case> kept;
  for (Case& c : all) {
    bool keep = patterns.empty();
    for (const std::string& p : patterns) keep = keep || (c.suite + "/" + c.name).find(p) != std::string::npos;
    if (keep) kept.push_back(std::move(c));
  }
  return kept;
}

}  // namespace kiln::conformance
