// Normalization kernels.
#pragma once

#include <cstdint>

namespace kiln::rt {

// Inference batch normalization over x of shape N x C x spatial:
// y = (x - mean[c]) / sqrt(var[c] + eps) * scale[c] + bias[c]. y may equal x.
void batchnorm_f32(int64_t N, int64_t C, int64_t spatial, const float* x, const float* scale, const float* bias,
                   const float* mean, const float* var, float eps, float* y) noexcept;

// Softmax (log == false) or LogSoftmax (log == true) along the middle axis of
// x viewed as outer x axis_len x inner; subtracts the maximum first. y may equal x.
void softmax_f32(int64_t outer, int64_t axis_len, int64_t inner, const float* x, float* y, bool log) noexcept;

}  // namespace kiln::rt
