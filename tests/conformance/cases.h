// The conformance suite's cases: ONNX backend test folders (model.onnx and
// test_data_set_N/{input,output}_K.pb), what each one tests, and whether it is in scope.
#pragma once

#include <string>
#include <vector>

namespace kiln::conformance {

struct Case {
  std::string suite;  // node, pytorch-converted, pytorch-operator, simple
  std::string name;   // the folder name, e.g. test_add_bcast
  std::string dir;    // absolute path of the folder
  // Op types the model uses (subgraphs included), sorted; ops outside the default domain
  // are written DOMAIN:OP.
  std::vector<std::string> ops;
  // The op the case tests (node suite only, else empty): the model's op for a one-op case;
  // for an _expanded case (the op's function body spelled out in primitive ops) the op of
  // the case of the same name without the suffix.
  std::string tested_op;
  // Why the case is outside the denominator (a domain, a string, sequence or
  // optional type, a random-number op), or empty.
  std::string out_of_scope;
  std::vector<std::string> data_sets;  // test_data_set_N folder names, in order
  double rtol = 1e-3;                  // ONNX's defaults; a case's data.json may loosen them
  double atol = 1e-7;
};

// Every case folder under root/SUITE for each suite that exists, in suite then name order,
// keeping those whose "SUITE/NAME" contains one of the comma-separated texts in `filter`
// (all when empty). A folder without a
// readable model.onnx is still returned (ops empty), so that it is reported, not skipped.
std::vector<Case> scan_cases(const std::string& root, const std::vector<std::string>& suites,
                             const std::string& filter);

}  // namespace kiln::conformance
