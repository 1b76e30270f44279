// Tensors for `kiln bench` and `kiln compile --verify-against`: the model's inputs
// (generated from a fixed seed, or read from a folder) and the comparison of two engines'
// outputs.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "kiln/rt/npy.h"

namespace kiln::cli {

struct TensorSpec {
  std::string name;
  ir::DType dtype = ir::DType::F32;
  std::vector<int64_t> dims;
};

// The graph's inputs or outputs (their shapes must be static).
std::vector<TensorSpec> tensor_specs(const std::vector<ir::Value*>& values);

// Writes DIR/input_K.npy for every input, in graph order, and returns the paths. Values
// come from `from_dir` when given (DIR/input_K.npy, else DIR/<name>.npy; checked against
// the spec), otherwise from a fixed seed: floats uniform in [-1, 1), integers in {0, 1},
// booleans either.
std::vector<std::filesystem::path> prepare_inputs(const std::vector<TensorSpec>& inputs,
                                                  const std::string& from_dir, uint64_t seed,
                                                  const std::filesystem::path& dir);

// How far one engine's output is from another's.
struct Agreement {
  std::string output;
  int64_t elements = 0;
  double max_abs_error = 0;
  double max_rel_error = 0;  // max_abs_error / the baseline's largest magnitude
  std::optional<double> top1_agreement;  // [N, C] float outputs: rows with the same argmax
  int64_t worst_index = 0;               // flat index of the largest abs error
  double value = 0, reference = 0;       // the two values there
  std::string problem;                   // shape or dtype mismatch: errors are meaningless
};

// Compares `value` (kiln) with `reference` (the baseline).
Agreement compare_tensors(const std::string& name, const rt::HostTensor& value,
                          const rt::HostTensor& reference);

// Whether every element satisfies |value - reference| <= atol + rtol * |reference| (NaN
// matches NaN); if not, `bad` is the first index that does not.
bool within_tolerance(const rt::HostTensor& value, const rt::HostTensor& reference, double rtol,
                      double atol, int64_t& bad);

rt::HostTensor read_tensor(const std::filesystem::path& path);
double element_at(const rt::HostTensor& t, int64_t i);

}  // namespace kiln::cli
