#include "ir/tensor.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <limits>

namespace kiln::ir {

OwnedBuffer::OwnedBuffer(size_t size) : size_(size) {
  size_t rounded = (size + 63) / 64 * 64;
  data_ = static_cast<uint8_t*>(std::aligned_alloc(64, rounded == 0 ? 64 : rounded));
  if (!data_) fail("out of memory allocating {} bytes", size);
  std::memset(data_, 0, rounded == 0 ? 64 : rounded);
}

OwnedBuffer::~OwnedBuffer() { std::free(data_); }

namespace {

class MappedBuffer final : public Buffer {
 public:
  MappedBuffer(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  ~MappedBuffer() override {
    if (size_) munmap(const_cast<uint8_t*>(data_), size_);
  }
  const uint8_t* data() const override { return data_; }
  size_t size() const override { return size_; }

 private:
  const uint8_t* data_;
  size_t size_;
};

// Checked element count: dims must be non-negative and the product must fit comfortably.
int64_t checked_numel(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) fail("negative dimension {} in tensor shape {}", d, dims_str(dims));
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / 16 / d)
      fail("tensor shape {} is too large", dims_str(dims));
    n *= d;
  }
  return n;
}

}  // namespace

std::shared_ptr<const Buffer> map_file(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("{}: cannot open: {}", path, std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    fail("{}: not a regular file", path);
  }
  size_t size = static_cast<size_t>(st.st_size);
  if (size == 0) {
    close(fd);
    return std::make_shared<MappedBuffer>(nullptr, 0);
  }
  void* p = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (p == MAP_FAILED) fail("{}: cannot map: {}", path, std::strerror(errno));
  return std::make_shared<MappedBuffer>(static_cast<const uint8_t*>(p), size);
}

Tensor::Tensor(DType dtype, std::vector<int64_t> dims)
    : dtype_(dtype), dims_(std::move(dims)), numel_(checked_numel(dims_)) {
  buffer_ = std::make_shared<OwnedBuffer>(nbytes());
}

Tensor Tensor::view(DType dtype, std::vector<int64_t> dims, std::shared_ptr<const Buffer> buffer,
                    size_t offset) {
  Tensor t;
  t.dtype_ = dtype;
  t.dims_ = std::move(dims);
  t.numel_ = checked_numel(t.dims_);
  if (offset > buffer->size() || t.nbytes() > buffer->size() - offset)
    fail("tensor data of {} bytes at offset {} exceeds its buffer of {} bytes", t.nbytes(), offset,
         buffer->size());
  t.buffer_ = std::move(buffer);
  t.offset_ = offset;
  return t;
}

void* Tensor::mutable_raw() {
  auto* owned = dynamic_cast<const OwnedBuffer*>(buffer_.get());
  if (!owned) fail("tensor is read-only");
  return const_cast<OwnedBuffer*>(owned)->mutable_data() + offset_;
}

double Tensor::as_double(int64_t i) const {
  return visit_any_dtype(dtype_, [&]<class T>() -> double {
    return static_cast<double>(static_cast<widen_t<T>>(data<T>()[i]));
  });
}

int64_t Tensor::as_int64(int64_t i) const {
  return visit_any_dtype(dtype_, [&]<class T>() -> int64_t {
    return static_cast<int64_t>(static_cast<widen_t<T>>(data<T>()[i]));
  });
}

std::vector<int64_t> Tensor::to_int64_vector() const {
  std::vector<int64_t> out(static_cast<size_t>(numel_));
  for (int64_t i = 0; i < numel_; ++i) out[static_cast<size_t>(i)] = as_int64(i);
  return out;
}

bool Tensor::same_as(const Tensor& other) const {
  return dtype_ == other.dtype_ && dims_ == other.dims_ &&
         (nbytes() == 0 || std::memcmp(raw(), other.raw(), nbytes()) == 0);
}

Tensor Tensor::reshaped(std::vector<int64_t> dims) const {
  Tensor t = *this;
  t.dims_ = std::move(dims);
  t.numel_ = checked_numel(t.dims_);
  if (t.numel_ != numel_)
    fail("cannot reshape {} elements to {}", numel_, dims_str(t.dims_));
  return t;
}

}  // namespace kiln::ir
