#include "frontend/torchscript/ts_program.h"

#include <algorithm>

#include "frontend/torchscript/ts_parser.h"
#include "ir/error.h"

namespace kiln::frontend::torchscript {

Program::Program(const ZipArchive& zip, const ProgramLimits& limits) {
  for (const ZipEntry& e : zip.entries()) {
    std::string rel = e.name.substr(std::min(zip.prefix().size(), e.name.size()));
    if (rel.rfind("code/", 0) != 0 || rel.size() < 8 || rel.substr(rel.size() - 3) != ".py") continue;
    if (e.size > limits.max_source_bytes)
      fail("{}: entry '{}': {} bytes of code, over the limit of {}", zip.path(), e.name, e.size, limits.max_source_bytes);
    // code/__torch__/torchvision/models/resnet.py -> __torch__.torchvision.models.resnet
    std::string module = rel.substr(5, rel.size() - 8);
    std::replace(module.begin(), module.end(), '/', '.');
    ParseLimits pl;
    pl.max_source_bytes = limits.max_source_bytes;
    std::unique_ptr<Module> m;
    try {
      m = std::make_unique<Module>(parse_source(zip.read(e.name), e.name, pl));
    } catch (const Error& err) {
      fail("{}: {}", zip.path(), err.what());
    }
    index(*m, module);
    modules_.push_back(std::move(m));
  }
  for (const auto& [n, c] : classes_) names_.push_back(n);
  for (const auto& [n, f] : functions_) names_.push_back(n);
  std::sort(names_.begin(), names_.end());
}

void Program::index(const Module& m, const std::string& module_name) {
  for (const StmtPtr& s : m.body) {
    if (s->kind == StmtKind::Class) {
      classes_[module_name + "." + s->cls->name] = s->cls.get();
      class_files_[s->cls.get()] = m.file;
    } else if (s->kind == StmtKind::Def) {
      functions_[module_name + "." + s->def->name] = s->def.get();
    }
  }
}

const ClassDef* Program::find_class(const std::string& q) const {
  auto it = classes_.find(q);
  return it == classes_.end() ? nullptr : it->second;
}

const FunctionDef* Program::find_function(const std::string& q) const {
  auto it = functions_.find(q);
  return it == functions_.end() ? nullptr : it->second;
}

bool Program::is_namespace(const std::string& q) const {
  std::string prefix = q + ".";
  auto it = std::lower_bound(names_.begin(), names_.end(), prefix);
  return it != names_.end() && it->rfind(prefix, 0) == 0;
}

const std::string& Program::file_of(const ClassDef* cls) const {
  static const std::string none;
  auto it = class_files_.find(cls);
  return it == class_files_.end() ? none : it->second;
}

}  // namespace kiln::frontend::torchscript
