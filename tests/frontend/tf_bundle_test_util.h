// Helpers of the tensor bundle tests: in-memory bundles under the name "mem/variables", checks
// that a kiln::Error names the file and says what, and the small bundle most tests spoil.
#pragma once

#include <doctest/doctest.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "frontend/tensorflow/tensor_bundle.h"
#include "ir/error.h"
#include "tf_bundle_writer.h"

namespace kiln::test::tf {

using kiln::frontend::tensorflow::TensorBundle;

inline constexpr const char* kPrefix = "mem/variables";
inline constexpr const char* kIndex = "mem/variables.index";

inline TensorBundle bundle_of(const std::string& index, const std::string& data,
                              const frontend::ImportLimits& limits = {}) {
  return TensorBundle(kPrefix, index, {data}, limits);
}

// The message of the kiln::Error `fn` throws; fails the test if it throws nothing.
inline std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  FAIL("no kiln::Error thrown");
  return {};
}

// Checks that `fn` throws a kiln::Error naming `file` and saying `what`.
inline void check_refused(const std::function<void()>& fn, const std::string& file,
                          const std::string& what) {
  const std::string message = error_of(fn);
  INFO("message: ", message);
  CHECK(message.find(file) != std::string::npos);
  CHECK(message.find(what) != std::string::npos);
}

inline void check_index_refused(const std::string& index, const std::string& data,
                                const std::string& what) {
  check_refused([&] { bundle_of(index, data); }, kIndex, what);
}

// Opens the bundle and reads every tensor, failing on the first refusal.
inline void read_all(const TensorBundle& b) {
  for (const auto& key : b.keys()) {
    if (b.entry(key).dtype == 7) {
      b.strings(key);
    } else {
      b.tensor(key);
    }
  }
}

template <class T>
inline std::vector<T> values_of(const ir::Tensor& t) {
  std::vector<T> out(static_cast<size_t>(t.numel()));
  if (!out.empty()) std::memcpy(out.data(), t.raw(), t.nbytes());
  return out;
}

inline BundleWriter small_bundle() {
  BundleWriter w;
  w.add<float>("dense/kernel", 1, {2, 3}, {1.5f, -2, 3, 4, 5, 6.25f});
  w.add<int64_t>("step", 9, {}, {42});
  return w;
}

// A table of one data block holding `contents` as given (hostile or not; its trailer's CRC
// right), under each of `index_keys` in the index.
inline std::string with_single_block(const std::vector<std::string>& index_keys,
                                     const std::string& contents, uint8_t type = 0) {
  std::string file;
  const Handle data = append_block(file, contents, type);
  KeyValues index;
  for (const auto& key : index_keys) index.emplace_back(key, handle_bytes(data));
  const Handle meta = append_block(file, block_of({}));
  const Handle idx = append_block(file, block_of(index, 1));
  return file + footer_of(meta, idx);
}

}  // namespace kiln::test::tf
