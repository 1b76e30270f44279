#include "kiln/rt/mapped_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>

#if defined(__unix__) || defined(__APPLE__)
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#define KILN_RT_HAVE_MMAP 1
#endif

namespace kiln::rt {

MappedFile::~MappedFile() { close(); }

MappedFile::MappedFile(MappedFile&& other) noexcept
    : data_(other.data_), size_(other.size_), mapped_(other.mapped_) {
  other.data_ = nullptr;
  other.size_ = 0;
}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    close();
    data_ = other.data_;
    size_ = other.size_;
    mapped_ = other.mapped_;
    other.data_ = nullptr;
    other.size_ = 0;
  }
  return *this;
}

void MappedFile::close() noexcept {
  if (data_ != nullptr) {
#ifdef KILN_RT_HAVE_MMAP
    if (mapped_) munmap(const_cast<unsigned char*>(data_), size_);
#endif
    if (!mapped_) delete[] data_;
  }
  data_ = nullptr;
  size_ = 0;
  mapped_ = false;
}

bool MappedFile::open(const std::string& path, std::string& error) noexcept {
  close();
  try {
    auto fail = [&](const char* what) {
      error = path + ": " + what + ": " + std::strerror(errno);
      return false;
    };
#ifdef KILN_RT_HAVE_MMAP
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return fail("cannot open");
    struct stat st;
    if (fstat(fd, &st) != 0) {
      const bool r = fail("cannot stat");
      ::close(fd);
      return r;
    }
    const size_t size = static_cast<size_t>(st.st_size);
    if (size > 0) {
      void* p = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
      if (p == MAP_FAILED) {
        const bool r = fail("cannot map");
        ::close(fd);
        return r;
      }
      data_ = static_cast<const unsigned char*>(p);
      mapped_ = true;
    }
    size_ = size;
    ::close(fd);
    return true;
#else
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) return fail("cannot open");
    std::fseek(f, 0, SEEK_END);
    const long n = std::ftell(f);
    std::rewind(f);
    if (n < 0) {
      std::fclose(f);
      return fail("cannot determine the size");
    }
    unsigned char* buf = n > 0 ? new (std::nothrow) unsigned char[static_cast<size_t>(n)] : nullptr;
    if (n > 0 && buf == nullptr) {
      std::fclose(f);
      error = path + ": out of memory reading the file";
      return false;
    }
    if (n > 0 && std::fread(buf, 1, static_cast<size_t>(n), f) != static_cast<size_t>(n)) {
      delete[] buf;
      std::fclose(f);
      return fail("read error");
    }
    std::fclose(f);
    data_ = buf;
    size_ = static_cast<size_t>(n);
    mapped_ = false;
    return true;
#endif
  } catch (...) {
    close();
    return false;
  }
}

}  // namespace kiln::rt
