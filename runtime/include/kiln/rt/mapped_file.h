// A read-only view of a whole file (weights stored next to a compiled model).
#pragma once

#include <cstddef>
#include <string>

namespace kiln::rt {

// Memory-maps the file on POSIX systems; elsewhere reads it into memory.
// Movable, not copyable; the view ends when the object is destroyed.
class MappedFile {
 public:
  MappedFile() = default;
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  // Opens path (closing any previous file). On failure returns false and sets
  // error to one line naming the file, e.g. "m.weights: cannot open: No such
  // file or directory".
  bool open(const std::string& path, std::string& error) noexcept;
  void close() noexcept;

  const unsigned char* data() const noexcept { return data_; }  // nullptr when empty or closed
  size_t size() const noexcept { return size_; }

 private:
  const unsigned char* data_ = nullptr;
  size_t size_ = 0;
  bool mapped_ = false;  // true: munmap on close; false: delete[]
};

}  // namespace kiln::rt
