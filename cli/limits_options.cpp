#include "cli/limits_options.h"

namespace kiln::cli {

void add_limits_options(CLI::App* cmd, frontend::ImportLimits& limits) {
  const char* group = "Limits on untrusted models";
  auto positive = CLI::Range(uint64_t{1}, UINT64_MAX);
  cmd->add_option("--max-file-bytes", limits.max_file_bytes, "largest model file read")
      ->group(group)->capture_default_str()->check(CLI::Range(uint64_t{1}, uint64_t{(1u << 31) - 1}));
  cmd->add_option("--max-tensor-bytes", limits.max_tensor_bytes, "largest tensor (weight or input) in bytes")
      ->group(group)->capture_default_str()->check(positive);
  cmd->add_option("--max-elements", limits.max_elements, "most elements in one tensor or declared input")
      ->group(group)->capture_default_str()->check(positive);
  cmd->add_option("--max-rank", limits.max_rank, "highest tensor rank")
      ->group(group)->capture_default_str()->check(CLI::Range(0, 1 << 16));
  cmd->add_option("--max-nodes", limits.max_nodes, "most nodes, all graphs together")
      ->group(group)->capture_default_str()->check(positive);
  cmd->add_option("--max-subgraph-depth", limits.max_subgraph_depth, "deepest nesting of If/Loop bodies")
      ->group(group)->capture_default_str()->check(CLI::Range(0, 10000));
  cmd->add_option("--max-proto-depth", limits.max_proto_depth, "protobuf recursion limit while parsing")
      ->group(group)->capture_default_str()->check(CLI::Range(1, 10000));
  cmd->add_option("--max-name-length", limits.max_name_length, "longest name of a node, value or graph, in bytes")
      ->group(group)->capture_default_str()->check(positive);
}

}  // namespace kiln::cli
