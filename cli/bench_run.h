// Running `kiln bench` engines: each in its own worker process (kiln/rt/bench_worker.h),
// measured in alternating rounds so that drift of the machine's speed hits all alike.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "cli/bench_result.h"

namespace kiln::cli {

struct EngineLaunch {
  std::vector<std::string> argv;  // starts a worker that speaks the protocol
  std::filesystem::path log;      // its stderr
};

struct RoundPlan {
  int rounds = 10;
  int runs_per_round = 10;
  int warmup = 5;
  int batch = 1;
};

// Starts every engine in `results` (one launch each), warms each up, runs the rounds, has
// each write its outputs to `outputs_dir`/<engine>/output_K.npy and stops it. Fills the
// measurements of `results`; a baseline that fails is marked failed (kiln failing is an
// error). Progress goes to stderr.
void run_engines(const std::vector<EngineLaunch>& launches, std::vector<EngineResult>& results,
                 const RoundPlan& plan, const std::filesystem::path& outputs_dir);

}  // namespace kiln::cli
