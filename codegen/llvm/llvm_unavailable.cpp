// The LLVM backend where kiln was built without LLVM (KILN_WITH_LLVM=OFF, or llvm-19-dev absent).
#include "codegen/llvm/llvm_backend.h"
#include "ir/error.h"

namespace kiln::codegen::llvm_ir {

namespace {

[[noreturn]] void unavailable() {
  fail("this kiln was built without LLVM: --backend llvm needs llvm-19-dev when kiln is built");
}

}  // namespace

bool available() { return false; }
std::vector<std::string> unsupported(const ir::Graph&) { unavailable(); }
LlvmModel write_object(const ir::Graph&, const LlvmOptions&, const std::filesystem::path&) { unavailable(); }
void write_main_object(const LlvmOptions&, const std::filesystem::path&) { unavailable(); }

}  // namespace kiln::codegen::llvm_ir
