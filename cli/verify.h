// kiln compile --verify-against ENGINE [--bisect]: the compiled model checked against a
// framework on generated inputs; with --bisect, the first node that disagrees is named.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

#include "ir/graph.h"

namespace kiln::cli {

struct VerifyOptions {
  std::string engine;  // "onnxruntime"
  bool bisect = false;
  double rtol = 1e-3, atol = 1e-4;  // |kiln - baseline| <= atol + rtol * |baseline|
  std::string python;               // empty: $KILN_PYTHON, else python3
  uint64_t seed = 42;
};

// Builds an executable of the same model in which every intermediate value of the
// optimized graph is also an output; returns its path (made under `dir`).
using BuildProbeExe = std::function<std::filesystem::path(const std::filesystem::path& dir)>;

// Runs `exe` (compiled from `model`, whose optimized graph is `graph`) and the baseline on
// the same generated inputs. Fails naming the first output that disagrees, or with --bisect
// the first node whose output disagrees. Prints one line on success.
void verify_compiled(const std::string& model, const ir::Graph& graph, const std::filesystem::path& exe,
                     const VerifyOptions& options, const BuildProbeExe& build_probe);

// Makes every node output of `graph` (static, and not clashing with another's file name in
// an output folder) a graph output too, in node order.
void expose_intermediates(ir::Graph& graph);

}  // namespace kiln::cli
