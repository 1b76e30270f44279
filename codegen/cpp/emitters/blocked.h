// What the channel-blocked ops' emitters compute at compile time, for the other backend
// (codegen/llvm) as well: the convolutions' parameters and the max pool's fields.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "kiln/rt/conv.h"
#include "kiln/rt/conv_nchwc.h"

namespace kiln::codegen::cpp {

// kiln.ConvNchwc's kernel parameters (static shapes), or nullopt where the kernel does not apply.
std::optional<kiln::rt::ConvNchwcParams> nchwc_conv_params(const ir::Node& node);
// kiln.DepthwiseConvNchwc's kernel parameters (static shapes), or nullopt where the kernel does
// not apply; the reason it does not, or "".
std::optional<kiln::rt::Conv2dParams> nchwc_depthwise_params(const ir::Node& node);
std::string unsupported_depthwise(const ir::Node& node);
// kiln.MaxPoolNchwc's Pool2dParams, its first 14 fields (static shapes).
std::vector<int64_t> nchwc_pool_fields(const ir::Node& node);

}  // namespace kiln::codegen::cpp
