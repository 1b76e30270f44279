// libFuzzer target: arbitrary bytes as an ONNX model file, through import_onnx and shape
// inference. kiln::Error is the expected way to refuse; anything else (a crash, a sanitizer
// report, another exception, a leak) is a finding.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "frontend/onnx/onnx_importer.h"
#include "ir/error.h"
#include "passes/pass_manager.h"

namespace {

// One file per fuzzing process, rewritten for every input.
const std::string& scratch_path() {
  static const std::string path = [] {
    char name[] = "/tmp/kiln-fuzz-onnx-XXXXXX";
    int fd = mkstemp(name);
    if (fd >= 0) close(fd);
    return std::string(name) + "";
  }();
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = scratch_path();
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  if (size) std::fwrite(data, 1, size, f);
  std::fclose(f);
  kiln::frontend::OnnxImportOptions options;
  options.allow_unsupported = true;
  // Small enough that a hostile shape cannot exhaust the fuzzer's memory limit.
  options.limits.max_tensor_bytes = 1 << 24;
  options.limits.max_elements = 1 << 22;
  options.limits.max_nodes = 10000;
  try {
    std::unique_ptr<kiln::ir::Graph> graph = kiln::frontend::import_onnx(path, options);
    if (graph) kiln::passes::infer_shapes(*graph);
  } catch (const kiln::Error&) {
  }
  return 0;
}
