// The conformance report (report.md for people, report.json for scripts/gen_ops_table.py),
// the totals printed at the end, and the check that every op listed as supported still
// passes all its cases.
#pragma once

#include <string>
#include <vector>

#include "tests/conformance/results.h"

namespace kiln::conformance {

struct RunInfo {
  std::string data_dir;
  std::string data_version;  // data_dir/VERSION, e.g. "onnx 1.22.0 wheel"
  std::string filter;
  double seconds = 0;
  int jobs = 0;
  std::string opt;
  bool compiled = true;  // false with --no-compiled
  std::vector<std::string> registry_ops;  // every op kiln's registry defines
};

void write_reports(const std::vector<CaseResult>& results, const RunInfo& info, const std::string& out_dir);

// A few lines of totals for the end of the run.
std::string totals_text(const std::vector<CaseResult>& results, const RunInfo& info);

// Ops listed in `path` (one a line; '#' starts a comment) must pass every case that tests
// them, and every case made only of listed ops must pass, on both paths. Returns one line
// per violation (empty: all good); `notes` gets ops that pass everything but are not listed.
std::vector<std::string> check_supported(const std::vector<CaseResult>& results, const std::string& path,
                                         bool compiled, std::vector<std::string>& notes);

}  // namespace kiln::conformance
