// The machines kiln builds for (--target, --cpu): a GNU triple, the -march levels it may
// assume, and the C++ compiler and archiver that build for it. The generated sources and the
// runtime's are the same for every target; the runtime picks its kernels by architecture
// (x86-64's by CPU feature at run time), so a target changes only how the builder compiles.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kiln::codegen::cpp {

struct Target {
  std::string_view triple;                 // "aarch64-linux-gnu"
  std::string_view debian_package;         // the cross compiler, for messages: "g++-aarch64-linux-gnu"
                                           // (and binutils-aarch64-linux-gnu its archiver)
  std::vector<std::string_view> levels;    // --cpu values besides generic and native (-march=LEVEL)
};

// Every target, in --help order, and their triples as "x86_64-linux-gnu, aarch64-linux-gnu".
const std::vector<Target>& known_targets();
std::string known_triples();

// The target this kiln runs on, or nullptr where it is none of known_targets().
const Target* host_target();

// The target named `triple`; fails listing the known ones.
const Target& find_target(std::string_view triple);

// The -march value (empty: the compiler's baseline) for --cpu `cpu` on `target`; fails naming
// the values the target takes. native is the compiling machine's, so only the host's.
std::string march_for(const Target& target, const std::string& cpu);

// What builds for a target: on the host $CXX, else c++, and ar; elsewhere TRIPLE-g++ and
// TRIPLE-ar, which must be on PATH (fails naming the compiler and its Debian package).
struct Toolchain {
  std::string cxx;
  std::string ar;
};
Toolchain toolchain_for(const Target& target);

}  // namespace kiln::codegen::cpp
