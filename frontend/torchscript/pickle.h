// A restricted unpickler for the pickles PyTorch writes (data.pkl and constants.pkl in
// TorchScript archives, torch.save blobs in .pt2 archives). It executes nothing: it knows the
// opcodes of protocols 2 (and reads 0-5's simple ones), builds plain objects, and accepts
// only the globals in its list (module classes `__torch__.*` as plain objects, tensor
// rebuilders, `torch.jit._pickle` builders, storages, OrderedDict, torch.device); any other
// GLOBAL is an error naming it. Sizes, offsets, depth and counts are bounded, and cycles are
// refused.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/tensor.h"

namespace kiln::frontend::torchscript {

enum class PyKind { None, Bool, Int, Float, String, Bytes, Tuple, List, Dict, Object, Tensor, Global, Device };

struct PyObject;
using PyRef = std::shared_ptr<PyObject>;

struct PyObject {
  PyKind kind = PyKind::None;
  bool b = false;
  int64_t i = 0;
  double f = 0;
  std::string s;  // String and Bytes; Global: "module.name"; Device: "cpu"; Object: class name
  std::vector<PyRef> items;                     // Tuple, List
  std::vector<std::pair<PyRef, PyRef>> dict;    // Dict, in insertion order
  PyRef state;                                  // Object: what BUILD set (usually a Dict), or null
  ir::Tensor tensor;                            // Tensor: contiguous, in the storage's dtype
  bool requires_grad = false;                   // Tensor

  // Object and Dict with string keys: the value of `key`, or nullptr.
  PyRef attr(std::string_view key) const;
};

// The bytes of storage `key` (the persistent id's third field: "0", "1", ... in TorchScript,
// "data/0" style in torch.save); `numel` elements of `dtype` are expected. Throws if absent.
using StorageLoader =
    std::function<std::shared_ptr<const ir::Buffer>(const std::string& key, ir::DType dtype, uint64_t numel)>;

struct PickleLimits {
  uint64_t max_stack = 1'000'000;        // stack + memo entries
  uint64_t max_items = 100'000'000;      // container items in all
  int max_depth = 1000;                  // nesting of containers in the result
  uint64_t max_tensor_bytes = uint64_t{1} << 34;
  uint64_t max_elements = uint64_t{1} << 32;
};

// Unpickles `bytes`; `where` ("model.pt:data.pkl") prefixes every error.
PyRef unpickle(std::string_view bytes, const std::string& where, const StorageLoader& storages,
               const PickleLimits& limits = {});

// "int", "Tensor", "__torch__.a.B", ... for messages.
std::string py_kind_name(const PyObject& o);
// The kind with the value where it is short ("int 3", "str 'cpu'", "Tensor f32[2, 3]").
std::string describe(const PyObject& o);

}  // namespace kiln::frontend::torchscript
