#include "frontend/torchscript/pickle_torch.h"

#include <cstring>
#include <optional>

#include "ir/error.h"

namespace kiln::frontend::torchscript {

namespace {

// What an allowed global does when REDUCE or NEWOBJ calls it.
enum class Fn {
  TorchClass,  // __torch__.* : a plain object, filled by BUILD
  RebuildTensorV2,
  RebuildTensor,
  RebuildParameter,
  RebuildParameterWithState,
  IntList,
  DoubleList,
  BoolList,
  TensorList,
  RestoreTypeTag,
  OrderedDict,
  Device,
  Storage,  // a storage type: only a token inside persistent ids
};

struct Callable {
  std::string_view name;
  Fn fn;
};
constexpr Callable kCallables[] = {
    {"torch._utils._rebuild_tensor_v2", Fn::RebuildTensorV2},
    {"torch._utils._rebuild_tensor", Fn::RebuildTensor},
    {"torch._utils._rebuild_parameter", Fn::RebuildParameter},
    {"torch._utils._rebuild_parameter_with_state", Fn::RebuildParameterWithState},
    {"torch.jit._pickle.build_intlist", Fn::IntList},
    {"torch.jit._pickle.build_doublelist", Fn::DoubleList},
    {"torch.jit._pickle.build_boollist", Fn::BoolList},
    {"torch.jit._pickle.build_tensorlist", Fn::TensorList},
    {"torch.jit._pickle.restore_type_tag", Fn::RestoreTypeTag},
    {"collections.OrderedDict", Fn::OrderedDict},
    {"torch.device", Fn::Device},
};

struct StorageType {
  std::string_view name;
  ir::DType dtype;
};
// Untyped storages are bytes; a tensor rebuilt on one is u8 for its consumer to reinterpret.
constexpr StorageType kStorageTypes[] = {
    {"torch.FloatStorage", ir::DType::F32},    {"torch.DoubleStorage", ir::DType::F64},
    {"torch.HalfStorage", ir::DType::F16},     {"torch.BFloat16Storage", ir::DType::BF16},
    {"torch.LongStorage", ir::DType::I64},     {"torch.IntStorage", ir::DType::I32},
    {"torch.ShortStorage", ir::DType::I16},    {"torch.CharStorage", ir::DType::I8},
    {"torch.ByteStorage", ir::DType::U8},      {"torch.BoolStorage", ir::DType::Bool},
    {"torch.storage.UntypedStorage", ir::DType::U8}, {"torch.UntypedStorage", ir::DType::U8},
};

constexpr std::string_view kQuantized[] = {
    "torch._utils._rebuild_qtensor", "torch.QInt8Storage",    "torch.QUInt8Storage",
    "torch.QInt32Storage",           "torch.QUInt4x2Storage", "torch.QUInt2x4Storage",
};

constexpr int64_t kMaxRank = 32;

std::optional<ir::DType> storage_dtype(std::string_view name) {
  for (const StorageType& s : kStorageTypes)
    if (s.name == name) return s.dtype;
  return std::nullopt;
}

std::optional<Fn> callable_of(std::string_view name) {
  if (name.starts_with("__torch__.")) return Fn::TorchClass;
  for (const Callable& c : kCallables)
    if (c.name == name) return c.fn;
  if (storage_dtype(name)) return Fn::Storage;
  return std::nullopt;
}

}  // namespace

PyRef PickleContext::make_global(const std::string& module, const std::string& name) {
  std::string full = module + "." + name;
  if (!module.empty() && !name.empty() && callable_of(full)) {
    PyRef g = make(PyKind::Global);
    g->s = std::move(full);
    return g;
  }
  for (std::string_view q : kQuantized)
    if (full == q) bad("global '{}': quantized tensors are not supported", full);
  if (full == "torch.jit._pickle.build_tensor_from_id")
    bad("global '{}': tensors from a tensor table are not supported (only tensors in storages are)", full);
  bad("global '{}' is not allowed (kiln executes nothing from an archive)", full);
}

PyRef PickleContext::call(const PyRef& fn, const PyRef& args, const char* opcode) {
  if (fn->kind != PyKind::Global) bad("{} of a {}, not a global", opcode, py_kind_name(*fn));
  if (args->kind != PyKind::Tuple) bad("{} of '{}' with a {}, not a tuple", opcode, fn->s, py_kind_name(*args));
  const std::vector<PyRef>& a = args->items;
  Fn f = *callable_of(fn->s);
  auto arity = [&](size_t lo, size_t hi) {
    if (a.size() < lo || a.size() > hi)
      bad("'{}' takes {} arguments, not {}", fn->s, lo == hi ? fmt::format("{}", lo) : fmt::format("{} to {}", lo, hi),
          a.size());
  };
  if (f != Fn::TorchClass && std::string_view(opcode) != "REDUCE")
    bad("{} of '{}' (only classes under __torch__ make objects)", opcode, fn->s);
  switch (f) {
    case Fn::TorchClass: {
      if (!a.empty()) bad("{} of class '{}' with {} arguments (objects are made empty, then BUILD)", opcode, fn->s, a.size());
      PyRef o = make(PyKind::Object);
      o->s = fn->s;
      return o;
    }
    case Fn::RebuildTensorV2:
    case Fn::RebuildTensor: return rebuild_tensor(fn->s, a);
    case Fn::RebuildParameter:
    case Fn::RebuildParameterWithState: {
      arity(f == Fn::RebuildParameter ? 3 : 4, f == Fn::RebuildParameter ? 3 : 4);
      if (a[0]->kind != PyKind::Tensor || storages_.count(a[0].get()))
        bad("'{}' of a {}, not a tensor", fn->s, py_kind_name(*a[0]));
      if (a[1]->kind != PyKind::Bool) bad("'{}' with requires_grad a {}, not a bool", fn->s, py_kind_name(*a[1]));
      PyRef t = make(PyKind::Tensor);
      t->tensor = a[0]->tensor;
      t->requires_grad = a[1]->b;
      return t;
    }
    case Fn::IntList:
    case Fn::DoubleList:
    case Fn::BoolList:
    case Fn::TensorList: {
      arity(1, 1);
      PyKind want = f == Fn::IntList ? PyKind::Int
                    : f == Fn::DoubleList ? PyKind::Float
                    : f == Fn::BoolList  ? PyKind::Bool
                                         : PyKind::Tensor;
      if (a[0]->kind != PyKind::List) bad("'{}' of a {}, not a list", fn->s, py_kind_name(*a[0]));
      for (const PyRef& item : a[0]->items)
        if (item->kind != want) bad("'{}' of a list holding a {}", fn->s, py_kind_name(*item));
      return a[0];
    }
    case Fn::RestoreTypeTag: arity(1, 2); return a[0];
    case Fn::OrderedDict:
      // Items come afterwards by SETITEMS; CPython never passes them as arguments.
      arity(0, 0);
      return make(PyKind::Dict);
    case Fn::Device: {
      arity(1, 2);
      if (a[0]->kind != PyKind::String) bad("'torch.device' of a {}, not a string", py_kind_name(*a[0]));
      PyRef d = make(PyKind::Device);
      d->s = a[0]->s;
      if (a.size() == 2 && a[1]->kind == PyKind::Int) d->s += fmt::format(":{}", a[1]->i);
      else if (a.size() == 2 && a[1]->kind != PyKind::None)
        bad("'torch.device' with an index of type {}", py_kind_name(*a[1]));
      return d;
    }
    case Fn::Storage: bad("{} of storage type '{}' (storages come only from persistent ids)", opcode, fn->s);
  }
  bad("'{}' cannot be called", fn->s);
}

PyRef PickleContext::persistent_load(const PyRef& pid) {
  const std::vector<PyRef>& p = pid->items;
  if (pid->kind != PyKind::Tuple || p.size() != 5 || p[0]->kind != PyKind::String || p[0]->s != "storage")
    bad("persistent id is a {}, not ('storage', type, key, location, numel)", describe(*pid));
  if (p[1]->kind != PyKind::Global || !storage_dtype(p[1]->s))
    bad("persistent id names storage type {}, not a storage global", describe(*p[1]));
  if (p[2]->kind != PyKind::String || p[3]->kind != PyKind::String || p[4]->kind != PyKind::Int)
    bad("persistent id ({}, {}, {}) is not (key, location, numel)", describe(*p[2]), describe(*p[3]), describe(*p[4]));
  ir::DType dtype = *storage_dtype(p[1]->s);
  const std::string& key = p[2]->s;
  int64_t numel = p[4]->i;
  // Storages shared by several tensors come back by the memo, or by key from another pickle
  // object: either way the bytes are loaded once.
  if (auto it = storage_by_key_.find(key); it != storage_by_key_.end()) {
    const Storage& s = storages_.at(it->second.get());
    if (s.dtype != dtype || static_cast<int64_t>(s.numel) != numel)
      bad("storage '{}' is {} elements of {} here and {} of {} before", key, numel, ir::dtype_name(dtype), s.numel,
          ir::dtype_name(s.dtype));
    return it->second;
  }
  uint64_t esize = ir::dtype_size(dtype);
  if (numel < 0) bad("storage '{}' of {} elements", key, numel);
  if (static_cast<uint64_t>(numel) > limits_.max_tensor_bytes / esize)
    bad("storage '{}' of {} {} elements exceeds max_tensor_bytes ({})", key, numel, ir::dtype_name(dtype),
        limits_.max_tensor_bytes);
  if (!loader_) bad("storage '{}' but no storage loader", key);
  uint64_t nbytes = static_cast<uint64_t>(numel) * esize;
  std::shared_ptr<const ir::Buffer> bytes;
  try {
    bytes = loader_(key, dtype, static_cast<uint64_t>(numel));
  } catch (const Error& e) {
    bad("storage '{}': {}", key, e.what());
  }
  if (!bytes) bad("storage '{}' is missing", key);
  if (bytes->size() != nbytes)
    bad("storage '{}' has {} bytes, not the {} of {} {} elements", key, bytes->size(), nbytes, numel,
        ir::dtype_name(dtype));
  // A bool that is neither 0 nor 1 is undefined behaviour to read as bool.
  if (dtype == ir::DType::Bool)
    for (uint64_t i = 0; i < nbytes; ++i)
      if (bytes->data()[i] > 1) bad("storage '{}' of bools holds byte {} at {}", key, bytes->data()[i], i);
  PyRef o = make(PyKind::Tensor);
  o->tensor = ir::Tensor::view(dtype, {numel}, bytes, 0);
  storages_.emplace(o.get(), Storage{dtype, static_cast<uint64_t>(numel), std::move(bytes)});
  storage_by_key_.emplace(key, o);
  return o;
}

std::vector<int64_t> PickleContext::ints(const std::string& fn, const char* what, const PyRef& seq) {
  if (seq->kind != PyKind::Tuple && seq->kind != PyKind::List)
    bad("'{}' with {} a {}, not a tuple", fn, what, py_kind_name(*seq));
  if (static_cast<int64_t>(seq->items.size()) > kMaxRank)
    bad("'{}' with {} {}: rank over {}", fn, seq->items.size(), what, kMaxRank);
  std::vector<int64_t> out;
  for (const PyRef& v : seq->items) {
    if (v->kind != PyKind::Int) bad("'{}' with {} holding a {}", fn, what, py_kind_name(*v));
    if (v->i < 0) bad("'{}' with negative {} {}", fn, what, v->i);
    out.push_back(v->i);
  }
  return out;
}

// _rebuild_tensor_v2(storage, storage_offset, sizes, strides, requires_grad, backward_hooks[, metadata])
// and _rebuild_tensor(storage, storage_offset, sizes, strides).
PyRef PickleContext::rebuild_tensor(const std::string& fn, const std::vector<PyRef>& a) {
  bool v2 = fn.ends_with("_v2");
  if (v2 ? a.size() < 6 || a.size() > 7 : a.size() != 4)
    bad("'{}' takes {} arguments, not {}", fn, v2 ? "6 or 7" : "4", a.size());
  auto s = storages_.find(a[0].get());
  if (s == storages_.end()) bad("'{}' of a {}, not a storage", fn, py_kind_name(*a[0]));
  if (a[1]->kind != PyKind::Int || a[1]->i < 0) bad("'{}' with storage offset {}", fn, describe(*a[1]));
  std::vector<int64_t> sizes = ints(fn, "sizes", a[2]);
  std::vector<int64_t> strides = ints(fn, "strides", a[3]);
  bool requires_grad = false;
  if (v2) {
    if (a[4]->kind != PyKind::Bool) bad("'{}' with requires_grad a {}, not a bool", fn, py_kind_name(*a[4]));
    requires_grad = a[4]->b;
    // The math bits (pickler.cpp): data stored conjugated or negated, which kiln does not undo.
    if (a.size() == 7)
      for (const char* bit : {"conj", "neg"})
        if (PyRef v = a[6]->attr(bit); v && v->kind == PyKind::Bool && v->b)
          bad("'{}' of a tensor with the {} bit set is not supported", fn, bit);
  }
  PyRef t = make(PyKind::Tensor);
  t->tensor = tensor_of(fn, s->second, a[1]->i, std::move(sizes), strides);
  t->requires_grad = requires_grad;
  return t;
}

// The tensor `sizes` / `strides` (in elements) at `offset` of the storage, contiguous: a view
// of the storage's bytes when it already is, else a copy.
ir::Tensor PickleContext::tensor_of(const std::string& fn, const Storage& storage, int64_t offset,
                                    std::vector<int64_t> sizes, const std::vector<int64_t>& strides) {
  if (sizes.size() != strides.size()) bad("'{}' with {} sizes and {} strides", fn, sizes.size(), strides.size());
  auto shape = [&] { return fmt::format("sizes {} strides {} offset {}", ir::dims_str(sizes), ir::dims_str(strides), offset); };
  uint64_t esize = ir::dtype_size(storage.dtype);
  uint64_t numel = 1;
  for (int64_t d : sizes) {
    if (d != 0 && numel > limits_.max_elements / static_cast<uint64_t>(d))
      bad("'{}' with {}: more than max_elements ({})", fn, shape(), limits_.max_elements);
    numel *= static_cast<uint64_t>(d);
  }
  if (numel > limits_.max_tensor_bytes / esize)
    bad("'{}' with {}: more than max_tensor_bytes ({})", fn, shape(), limits_.max_tensor_bytes);
  if (numel == 0) return ir::Tensor(storage.dtype, std::move(sizes));

  // The last element addressed; every term stays under 2^126 and the sum is checked after each.
  unsigned __int128 last = static_cast<uint64_t>(offset);
  bool contiguous = true;
  uint64_t expect = 1;
  for (size_t k = sizes.size(); k-- > 0;) {
    last += static_cast<unsigned __int128>(sizes[k] - 1) * static_cast<uint64_t>(strides[k]);
    if (last >= storage.numel)
      bad("'{}' with {} addresses elements past its storage of {}", fn, shape(), storage.numel);
    if (sizes[k] != 1 && static_cast<uint64_t>(strides[k]) != expect) contiguous = false;
    expect *= static_cast<uint64_t>(sizes[k]);
  }
  if (last >= storage.numel) bad("'{}' with {} addresses elements past its storage of {}", fn, shape(), storage.numel);

  const uint8_t* base = storage.bytes->data();
  uint64_t byte_offset = static_cast<uint64_t>(offset) * esize;
  // Misaligned data (a hand-made archive; PyTorch aligns to 64 bytes) is copied so that its
  // consumers may read it as the element type.
  bool aligned = reinterpret_cast<uintptr_t>(base + byte_offset) % esize == 0;
  if (contiguous && aligned) return ir::Tensor::view(storage.dtype, std::move(sizes), storage.bytes, byte_offset);

  ir::Tensor out(storage.dtype, sizes);
  auto* dst = static_cast<uint8_t*>(out.mutable_raw());
  std::vector<int64_t> index(sizes.size(), 0);
  uint64_t at = static_cast<uint64_t>(offset);
  for (uint64_t n = 0; n < numel; ++n) {
    std::memcpy(dst + n * esize, base + at * esize, esize);
    for (size_t k = sizes.size(); k-- > 0;) {
      if (++index[k] < sizes[k]) {
        at += static_cast<uint64_t>(strides[k]);
        break;
      }
      at -= static_cast<uint64_t>((sizes[k] - 1) * strides[k]);
      index[k] = 0;
    }
  }
  return out;
}

}  // namespace kiln::frontend::torchscript
