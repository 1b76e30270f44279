// What the unpickler lets a pickle call (pickle.cpp runs the opcodes): the allow-list of
// globals, the persistent ids that load storages, and the rebuilders that make tensors of
// them. Internal to the unpickler.
#pragma once

#include <map>
#include <string>
#include <unordered_map>

#include "frontend/torchscript/pickle.h"

namespace kiln::frontend::torchscript {

class PickleContext {
 public:
  PickleContext(const std::string& where, const StorageLoader& loader, const PickleLimits& limits)
      : where_(where), loader_(loader), limits_(limits) {}
  virtual ~PickleContext() = default;

  // A new object; the unpickler tracks containers to break cycles.
  virtual PyRef make(PyKind kind) = 0;
  // Counts container items against max_items.
  virtual void count_items(uint64_t n) = 0;
  // "where: at byte N", the prefix of every message about the current opcode.
  virtual std::string at() const = 0;

 protected:
  // GLOBAL and STACK_GLOBAL: a Global for what the allow-list has, an error for the rest.
  PyRef make_global(const std::string& module, const std::string& name);
  // REDUCE and NEWOBJ (`opcode` names which) of `fn` on the tuple `args`.
  PyRef call(const PyRef& fn, const PyRef& args, const char* opcode);
  // BINPERSID: ('storage', storage type, key, location, numel), loaded once per key.
  PyRef persistent_load(const PyRef& pid);

  const std::string& where_;
  const StorageLoader& loader_;
  const PickleLimits& limits_;
  size_t op_at_ = 0;  // of the opcode being run

 private:
  struct Storage {
    ir::DType dtype;
    uint64_t numel;
    std::shared_ptr<const ir::Buffer> bytes;
  };
  template <class... Args>
  [[noreturn]] void bad(fmt::format_string<Args...> format, Args&&... args) const {
    fail("{}: {}", at(), fmt::format(format, std::forward<Args>(args)...));
  }
  PyRef rebuild_tensor(const std::string& fn, const std::vector<PyRef>& a);
  ir::Tensor tensor_of(const std::string& fn, const Storage& storage, int64_t offset, std::vector<int64_t> sizes,
                  const std::vector<int64_t>& strides);
  std::vector<int64_t> ints(const std::string& fn, const char* what, const PyRef& seq);

  std::map<std::string, PyRef, std::less<>> storage_by_key_;
  std::unordered_map<const PyObject*, Storage> storages_;  // the objects BINPERSID made
};

}  // namespace kiln::frontend::torchscript
