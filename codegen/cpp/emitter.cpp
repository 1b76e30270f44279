#include "codegen/cpp/emitter.h"

namespace kiln::codegen::cpp {

#define KILN_EMITTER_FAMILY(family) void register_##family##_emitters(EmitterRegistry&);
#include "codegen/cpp/emitters/families.def"
#undef KILN_EMITTER_FAMILY

const Emitter* EmitterRegistry::find(std::string_view op) const {
  auto it = emitters_.find(op);
  return it == emitters_.end() ? nullptr : &it->second;
}

const EmitterRegistry& emitters() {
  static const EmitterRegistry instance = [] {
    EmitterRegistry r;
#define KILN_EMITTER_FAMILY(family) register_##family##_emitters(r);
#include "codegen/cpp/emitters/families.def"
#undef KILN_EMITTER_FAMILY
    return r;
  }();
  return instance;
}

}  // namespace kiln::codegen::cpp
