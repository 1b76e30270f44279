// Tensor data held by the IR: constants, initializers and the interpreter's values. The bytes
// live in a shared, read-only Buffer (owned memory or a memory-mapped file), so copying a
// Tensor is cheap and weights are never duplicated.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "ir/dtype.h"
#include "ir/error.h"
#include "ir/shape.h"
#include "kiln/rt/dtype.h"
#include "kiln/rt/lowp.h"

namespace kiln::ir {

using f16 = kiln::rt::f16;
using bf16 = kiln::rt::bf16;

class Buffer {
 public:
  virtual ~Buffer() = default;
  virtual const uint8_t* data() const = 0;
  virtual size_t size() const = 0;
};

// Heap memory, 64-byte aligned.
class OwnedBuffer final : public Buffer {
 public:
  explicit OwnedBuffer(size_t size);
  ~OwnedBuffer() override;
  OwnedBuffer(const OwnedBuffer&) = delete;
  OwnedBuffer& operator=(const OwnedBuffer&) = delete;
  const uint8_t* data() const override { return data_; }
  uint8_t* mutable_data() { return data_; }
  size_t size() const override { return size_; }

 private:
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

// A whole file mapped read-only. Throws kiln::Error naming the file on failure.
std::shared_ptr<const Buffer> map_file(const std::string& path);

class Tensor {
 public:
  Tensor() = default;
  // Zero-filled tensor with its own memory.
  Tensor(DType dtype, std::vector<int64_t> dims);
  // A view of `buffer` bytes [offset, offset + nbytes); checks that they are in bounds.
  static Tensor view(DType dtype, std::vector<int64_t> dims, std::shared_ptr<const Buffer> buffer,
                     size_t offset);
  template <class T>
  static Tensor from_vector(DType dtype, std::vector<int64_t> dims, const std::vector<T>& values);
  static Tensor scalar_i64(int64_t v) { return from_vector<int64_t>(DType::I64, {}, {v}); }

  bool defined() const { return buffer_ != nullptr; }
  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& dims() const { return dims_; }
  Shape shape() const { return Shape::of(dims_); }
  int64_t rank() const { return static_cast<int64_t>(dims_.size()); }
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return static_cast<size_t>(numel_) * dtype_size(dtype_); }

  const void* raw() const { return buffer_ ? buffer_->data() + offset_ : nullptr; }
  // Only for tensors made by the constructor above (interpreter outputs being filled).
  void* mutable_raw();
  template <class T>
  const T* data() const {
    check_type<T>();
    return static_cast<const T*>(raw());
  }
  template <class T>
  T* mutable_data() {
    check_type<T>();
    return static_cast<T*>(mutable_raw());
  }

  // Element i converted to double / int64, whatever the dtype.
  double as_double(int64_t i) const;
  int64_t as_int64(int64_t i) const;
  // All elements as int64 (shape tensors, indices, axes).
  std::vector<int64_t> to_int64_vector() const;
  // Same dims, dtype and bytes.
  bool same_as(const Tensor& other) const;
  // Same data reinterpreted with other dims of the same element count.
  Tensor reshaped(std::vector<int64_t> dims) const;

 private:
  template <class T>
  void check_type() const;

  DType dtype_ = DType::F32;
  std::vector<int64_t> dims_;
  int64_t numel_ = 0;
  std::shared_ptr<const Buffer> buffer_;
  size_t offset_ = 0;
};

// The C++ type that stores each DType, and the visitor that dispatches on it.
template <DType D> struct StorageOf;
template <> struct StorageOf<DType::F32> { using type = float; };
template <> struct StorageOf<DType::F64> { using type = double; };
template <> struct StorageOf<DType::F16> { using type = f16; };
template <> struct StorageOf<DType::BF16> { using type = bf16; };
template <> struct StorageOf<DType::I8> { using type = int8_t; };
template <> struct StorageOf<DType::U8> { using type = uint8_t; };
template <> struct StorageOf<DType::I16> { using type = int16_t; };
template <> struct StorageOf<DType::U16> { using type = uint16_t; };
template <> struct StorageOf<DType::U32> { using type = uint32_t; };
template <> struct StorageOf<DType::U64> { using type = uint64_t; };
template <> struct StorageOf<DType::I32> { using type = int32_t; };
template <> struct StorageOf<DType::I64> { using type = int64_t; };
template <> struct StorageOf<DType::Bool> { using type = bool; };
template <> struct StorageOf<DType::F8E4M3FN> { using type = kiln::rt::f8e4m3fn; };
template <> struct StorageOf<DType::F8E4M3FNUZ> { using type = kiln::rt::f8e4m3fnuz; };
template <> struct StorageOf<DType::F8E5M2> { using type = kiln::rt::f8e5m2; };
template <> struct StorageOf<DType::F8E5M2FNUZ> { using type = kiln::rt::f8e5m2fnuz; };
template <> struct StorageOf<DType::F8E8M0> { using type = kiln::rt::f8e8m0; };
template <> struct StorageOf<DType::F4E2M1> { using type = kiln::rt::f4e2m1; };
template <> struct StorageOf<DType::I4> { using type = kiln::rt::i4; };
template <> struct StorageOf<DType::U4> { using type = kiln::rt::u4; };
template <> struct StorageOf<DType::I2> { using type = kiln::rt::i2; };
template <> struct StorageOf<DType::U2> { using type = kiln::rt::u2; };

template <class T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<float>() { return DType::F32; }
template <> constexpr DType dtype_of<double>() { return DType::F64; }
template <> constexpr DType dtype_of<f16>() { return DType::F16; }
template <> constexpr DType dtype_of<bf16>() { return DType::BF16; }
template <> constexpr DType dtype_of<int8_t>() { return DType::I8; }
template <> constexpr DType dtype_of<uint8_t>() { return DType::U8; }
template <> constexpr DType dtype_of<int16_t>() { return DType::I16; }
template <> constexpr DType dtype_of<uint16_t>() { return DType::U16; }
template <> constexpr DType dtype_of<uint32_t>() { return DType::U32; }
template <> constexpr DType dtype_of<uint64_t>() { return DType::U64; }
template <> constexpr DType dtype_of<int32_t>() { return DType::I32; }
template <> constexpr DType dtype_of<int64_t>() { return DType::I64; }
template <> constexpr DType dtype_of<bool>() { return DType::Bool; }
template <> constexpr DType dtype_of<kiln::rt::f8e4m3fn>() { return DType::F8E4M3FN; }
template <> constexpr DType dtype_of<kiln::rt::f8e4m3fnuz>() { return DType::F8E4M3FNUZ; }
template <> constexpr DType dtype_of<kiln::rt::f8e5m2>() { return DType::F8E5M2; }
template <> constexpr DType dtype_of<kiln::rt::f8e5m2fnuz>() { return DType::F8E5M2FNUZ; }
template <> constexpr DType dtype_of<kiln::rt::f8e8m0>() { return DType::F8E8M0; }
template <> constexpr DType dtype_of<kiln::rt::f4e2m1>() { return DType::F4E2M1; }
template <> constexpr DType dtype_of<kiln::rt::i4>() { return DType::I4; }
template <> constexpr DType dtype_of<kiln::rt::u4>() { return DType::U4; }
template <> constexpr DType dtype_of<kiln::rt::i2>() { return DType::I2; }
template <> constexpr DType dtype_of<kiln::rt::u2>() { return DType::U2; }

// Arithmetic on 16-bit floats is done in float.
template <class T> struct ComputeOf { using type = T; };
template <> struct ComputeOf<f16> { using type = float; };
template <> struct ComputeOf<bf16> { using type = float; };
template <class T> using compute_t = typename ComputeOf<T>::type;
// The storage-only types are read as the type kiln::rt::widen_storage() gives (float or int).
template <class T> using widen_t = decltype(kiln::rt::widen_storage(T{}));

// Calls fn.template operator()<T>() with T the storage type of `dtype`. The storage-only
// dtypes (float8, float4, int4, int2...) are not visited: they fail here, so ops that compute
// never instantiate them; the few that handle them use visit_any_dtype.
template <class Fn>
decltype(auto) visit_dtype(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::F32: return fn.template operator()<float>();
    case DType::F64: return fn.template operator()<double>();
    case DType::F16: return fn.template operator()<f16>();
    case DType::BF16: return fn.template operator()<bf16>();
    case DType::I8: return fn.template operator()<int8_t>();
    case DType::U8: return fn.template operator()<uint8_t>();
    case DType::I16: return fn.template operator()<int16_t>();
    case DType::U16: return fn.template operator()<uint16_t>();
    case DType::U32: return fn.template operator()<uint32_t>();
    case DType::U64: return fn.template operator()<uint64_t>();
    case DType::I32: return fn.template operator()<int32_t>();
    case DType::I64: return fn.template operator()<int64_t>();
    case DType::Bool: return fn.template operator()<bool>();
    case DType::F8E4M3FN:
    case DType::F8E4M3FNUZ:
    case DType::F8E5M2:
    case DType::F8E5M2FNUZ:
    case DType::F8E8M0:
    case DType::F4E2M1:
    case DType::I4:
    case DType::U4:
    case DType::I2:
    case DType::U2: fail("{} is a storage-only dtype: only conversions accept it", dtype_name(dtype));
  }
  fail("invalid dtype code {}", static_cast<int>(dtype));
}

// visit_dtype over every dtype, the storage-only ones included.
template <class Fn>
decltype(auto) visit_any_dtype(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::F8E4M3FN: return fn.template operator()<kiln::rt::f8e4m3fn>();
    case DType::F8E4M3FNUZ: return fn.template operator()<kiln::rt::f8e4m3fnuz>();
    case DType::F8E5M2: return fn.template operator()<kiln::rt::f8e5m2>();
    case DType::F8E5M2FNUZ: return fn.template operator()<kiln::rt::f8e5m2fnuz>();
    case DType::F8E8M0: return fn.template operator()<kiln::rt::f8e8m0>();
    case DType::F4E2M1: return fn.template operator()<kiln::rt::f4e2m1>();
    case DType::I4: return fn.template operator()<kiln::rt::i4>();
    case DType::U4: return fn.template operator()<kiln::rt::u4>();
    case DType::I2: return fn.template operator()<kiln::rt::i2>();
    case DType::U2: return fn.template operator()<kiln::rt::u2>();
    case DType::F32:
    case DType::F64:
    case DType::F16:
    case DType::BF16:
    case DType::I8:
    case DType::U8:
    case DType::I16:
    case DType::U16:
    case DType::U32:
    case DType::U64:
    case DType::I32:
    case DType::I64:
    case DType::Bool: break;
  }
  return visit_dtype(dtype, std::forward<Fn>(fn));
}

template <class T>
void Tensor::check_type() const {
  if (dtype_of<T>() != dtype_)
    fail("tensor of {} accessed as {}", dtype_name(dtype_), dtype_name(dtype_of<T>()));
}

template <class T>
Tensor Tensor::from_vector(DType dtype, std::vector<int64_t> dims, const std::vector<T>& values) {
  Tensor t(dtype, std::move(dims));
  if (static_cast<int64_t>(values.size()) != t.numel())
    fail("tensor of {} elements given {} values", t.numel(), values.size());
  visit_dtype(dtype, [&]<class S>() {
    S* out = static_cast<S*>(t.mutable_raw());
    for (size_t i = 0; i < values.size(); ++i) {
      if constexpr (std::is_same_v<S, f16> || std::is_same_v<S, bf16>)
        out[i] = S(static_cast<float>(values[i]));
      else
        out[i] = static_cast<S>(values[i]);
    }
  });
  return t;
}

}  // namespace kiln::ir
