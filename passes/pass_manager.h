// Runs graph passes by name, with verification, printing and timing between them.
#pragma once

#include <functional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace kiln::passes {

struct PassInfo {
  std::string name;
  std::string summary;
  void (*run)(ir::Graph&);
};

// Every registered pass, in passes.def order.
const std::vector<PassInfo>& all_passes();
const PassInfo* find_pass(const std::string& name);

// The passes `kiln compile` runs at -O2, in order.
std::vector<std::string> default_pipeline();
// The pipeline for an optimization level: 0 (only what code generation needs: shapes,
// constants, dead code), 1 (also simplifications: identities, CSE, BatchNorm and Transpose
// folding) or 2 (also fusion). Fails on another level.
std::vector<std::string> pipeline_for_level(int level);

struct PipelineOptions {
  int opt_level = 2;                 // which pipeline_for_level the CLI runs
  bool verify_each = false;          // run the verifier after every pass (always in debug builds)
  std::set<std::string> disabled;    // passes to skip
  std::set<std::string> print_after; // print the IR after these passes ("all" for every one)
  std::ostream* log = nullptr;       // where IR dumps, timings and statistics go
  bool time = false;                 // log each pass's time
  bool stats = false;                // log node counts by op after each pass
};

// "12 nodes: Conv 5, Relu 4, Add 3", ops sorted by name.
std::string node_count_summary(const ir::Graph& graph);

void run_pipeline(ir::Graph& graph, const std::vector<std::string>& passes,
                  const PipelineOptions& options);

// Gives symbolic dims fixed values (graph inputs and every value), e.g. {"batch": 1}.
// Unknown symbols are an error naming them.
void bind_dims(ir::Graph& graph, const std::map<std::string, int64_t>& values);
// Leaves the symbols in `ranges` open, bounded (--dim NAME=MIN..MAX): each must be a dim of
// a graph input; fails naming the symbol otherwise.
void set_dim_ranges(ir::Graph& graph, const ir::DimRanges& ranges);
// Gives every control-flow body, nested ones too, the graph's bounds: a body's shapes are in
// the model's symbolic dims, and planning a body needs their maxima.
void share_dim_ranges(ir::Graph& graph);

#define KILN_PASS(name, function, summary) void function(ir::Graph& graph);
#include "passes/passes.def"
#undef KILN_PASS

}  // namespace kiln::passes
