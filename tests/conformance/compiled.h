// The compiled path for many cases at once: the runtime compiled once, models compiled in
// batches (many models per translation unit and per executable, each in its own namespace
// with its own symbol prefix, plus a driver main that runs one model on raw input files),
// then each case's data sets run through its executable and compared.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "tests/conformance/results.h"

namespace kiln::conformance {

struct CompileSettings {
  std::string cxx = "c++";
  std::string opt = "-O0";      // for the models: compile time matters more than speed here
  int jobs = 2;                 // compilers or cases at once
  size_t batch_size = 60;       // models per executable
  double compile_timeout_s = 1200;
  double run_timeout_s = 60;
  std::string work_dir;   // batches are built in work_dir/batches
  std::string cache_dir;  // runtime objects, kept between runs
};

// Fills results[i].compiled for every case whose sources are ready. A batch that does not
// compile is split in halves until the models that do not compile are found; those fail
// with the compiler's first error.
void build_and_run_compiled(std::vector<CaseResult>& results, const CompileSettings& settings, std::ostream& log);

}  // namespace kiln::conformance
