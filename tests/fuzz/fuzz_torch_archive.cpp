// libFuzzer target: arbitrary bytes as a PyTorch zip archive (torch.jit.save, torch.save),
// every *.pkl entry unpickled with its storages read from the same archive. Mutated archives
// mostly fail their CRC check before a pickle is read, so an input that does not start like a
// zip ("PK") is unpickled directly, with zero-filled storages of the size its persistent ids
// ask for. kiln::Error is the expected way to refuse; anything else (a crash, a sanitizer
// report, another exception, a leak) is a finding.
#include <cstdint>
#include <cstring>
#include <string>

#include "frontend/torchscript/pickle.h"
#include "frontend/torchscript/zip_archive.h"
#include "ir/error.h"

using namespace kiln::frontend::torchscript;

namespace {

// Small enough that a hostile size cannot exhaust the fuzzer's memory limit.
ZipLimits zip_limits() {
  ZipLimits l;
  l.max_entry_bytes = 1 << 24;
  l.max_total_bytes = 1 << 26;
  return l;
}

PickleLimits pickle_limits() {
  PickleLimits l;
  l.max_tensor_bytes = 1 << 24;
  l.max_elements = 1 << 22;
  l.max_stack = 100'000;
  l.max_items = 1'000'000;
  return l;
}

void unpickle_checked(std::string_view bytes, const std::string& where, const StorageLoader& loader) {
  try {
    PyRef root = unpickle(bytes, where, loader, pickle_limits());
    if (root) (void)describe(*root);
  } catch (const kiln::Error&) {
  }
}

void fuzz_archive(const uint8_t* data, size_t size) {
  auto bytes = std::make_shared<kiln::ir::OwnedBuffer>(size);
  std::memcpy(bytes->mutable_data(), data, size);
  try {
    auto zip = ZipArchive::from_buffer(bytes, "fuzz.pt", zip_limits());
    for (const ZipEntry& e : zip->entries()) {
      if (!e.name.ends_with(".pkl")) continue;
      // constants.pkl keeps its storages in constants/, the others in data/.
      std::string folder = e.name.ends_with("constants.pkl") ? "constants/" : "data/";
      StorageLoader loader = [&](const std::string& key, kiln::ir::DType, uint64_t) {
        return zip->read_buffer(folder + key);
      };
      std::string pickle;
      try {
        pickle = zip->read(e.name);
      } catch (const kiln::Error&) {
        continue;
      }
      unpickle_checked(pickle, "fuzz.pt:" + e.name, loader);
    }
  } catch (const kiln::Error&) {
  }
}

void fuzz_pickle(const uint8_t* data, size_t size) {
  StorageLoader zeros = [](const std::string&, kiln::ir::DType dtype, uint64_t numel) {
    return std::make_shared<kiln::ir::OwnedBuffer>(numel * kiln::ir::dtype_size(dtype));
  };
  unpickle_checked(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.pkl", zeros);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size >= 2 && data[0] == 'P' && data[1] == 'K')
    fuzz_archive(data, size);
  else
    fuzz_pickle(data, size);
  return 0;
}
