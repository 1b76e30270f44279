// The kiln subcommands. Each adds itself to the CLI11 app and returns the function that runs
// it once the command line is parsed.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace kiln::cli {

struct Command {
  CLI::App* app;
  std::function<int()> run;
};

Command add_compile_command(CLI::App& app);
Command add_run_command(CLI::App& app);
Command add_inspect_command(CLI::App& app);
Command add_bench_command(CLI::App& app);

}  // namespace kiln::cli
