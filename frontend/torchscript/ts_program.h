// A TorchScript archive's program: its parsed code files, indexed by the qualified names the
// code uses (`__torch__.torchvision.models.resnet.ResNet`), and its pickled objects.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "frontend/torchscript/pickle.h"
#include "frontend/torchscript/ts_ast.h"
#include "frontend/torchscript/zip_archive.h"

namespace kiln::frontend::torchscript {

struct ProgramLimits {
  uint64_t max_steps = 50'000'000;       // statements and expressions evaluated in all
  uint64_t max_loop_iterations = 1'000'000;
  int max_call_depth = 200;
  uint64_t max_source_bytes = 64ull << 20;  // one code file
};

class Program {
 public:
  // Parses every code file of the archive (code/**.py) and indexes its classes and functions.
  Program(const ZipArchive& zip, const ProgramLimits& limits);

  const ClassDef* find_class(const std::string& qualified) const;
  const FunctionDef* find_function(const std::string& qualified) const;
  // True if `qualified` is a prefix of some class or function ("__torch__.torchvision").
  bool is_namespace(const std::string& qualified) const;
  const std::string& file_of(const ClassDef* cls) const;

 private:
  void index(const Module& m, const std::string& module_name);
  std::vector<std::unique_ptr<Module>> modules_;
  std::map<std::string, const ClassDef*, std::less<>> classes_;
  std::map<std::string, const FunctionDef*, std::less<>> functions_;
  std::map<const ClassDef*, std::string> class_files_;
  std::vector<std::string> names_;  // every qualified name, sorted, for is_namespace
};

}  // namespace kiln::frontend::torchscript
