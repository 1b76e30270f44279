// Loss functions, header-only so that the element and index types inline:
// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (LogSoftmax over the classes, then
// the former). T is the storage type, I the target index type (int32_t or int64_t), Acc the
// type sums are kept in (float for f16/bf16/f32, double for f64).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

namespace kiln::rt {

enum class LossReduction { None, Sum, Mean };

// NegativeLogLikelihoodLoss of x [N, C, D] (D: the product of the trailing dims, 1 for none)
// against target [N, D]: loss[n][d] = -x[n][target[n][d]][d] * weight[target[n][d]] (weight 1
// when null), 0 where target == ignore_index (when has_ignore). y holds N * D losses (None),
// their sum (Sum), or their sum divided by the sum of the weights used (Mean; with no
// weights, the count of targets not ignored). Returns -1 on success, else the position of
// the first target outside [0, C) that is not ignored (nothing meaningful is written then).
template <class T, class I, class Acc>
int64_t nll_loss(int64_t N, int64_t C, int64_t D, const T* x, const I* target, const T* weight, bool has_ignore,
                 int64_t ignore_index, LossReduction reduction, T* y) {
  Acc total = 0, weights = 0;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t d = 0; d < D; ++d) {
      const int64_t at = n * D + d;
      const int64_t t = static_cast<int64_t>(target[at]);
      Acc loss = 0, w = 0;
      if (!has_ignore || t != ignore_index) {
        if (t < 0 || t >= C) return at;
        w = weight ? static_cast<Acc>(weight[t]) : Acc(1);
        loss = -static_cast<Acc>(x[(n * C + t) * D + d]) * w;
      }
      if (reduction == LossReduction::None) y[at] = static_cast<T>(loss);
      total += loss;
      weights += w;
    }
  if (reduction == LossReduction::Sum) y[0] = static_cast<T>(total);
  if (reduction == LossReduction::Mean) y[0] = static_cast<T>(total / weights);
  return -1;
}

// LogSoftmax along the middle axis of x [outer, len, inner], the maximum subtracted first.
template <class T, class Acc>
void log_softmax(int64_t outer, int64_t len, int64_t inner, const T* x, T* y) {
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t base = o * len * inner + i;
      Acc peak = -std::numeric_limits<Acc>::infinity();
      for (int64_t k = 0; k < len; ++k) {
        const Acc v = static_cast<Acc>(x[base + k * inner]);
        if (v > peak) peak = v;
      }
      if (std::isinf(peak)) peak = 0;
      Acc sum = 0;
      for (int64_t k = 0; k < len; ++k) sum += std::exp(static_cast<Acc>(x[base + k * inner]) - peak);
      const Acc lse = peak + std::log(sum);
      for (int64_t k = 0; k < len; ++k)
        y[base + k * inner] = static_cast<T>(static_cast<Acc>(x[base + k * inner]) - lse);
    }
}

// SoftmaxCrossEntropyLoss of scores x [N, C, D] against labels [N, D]: log_prob (N * C * D
// values, the caller's output or scratch) = LogSoftmax of x over C, then nll_loss of log_prob.
// Returns what nll_loss returns.
template <class T, class I, class Acc>
int64_t softmax_cross_entropy(int64_t N, int64_t C, int64_t D, const T* x, const I* labels, const T* weight,
                              bool has_ignore, int64_t ignore_index, LossReduction reduction, T* y, T* log_prob) {
  log_softmax<T, Acc>(N, C, D, x, log_prob);
  return nll_loss<T, I, Acc>(N, C, D, log_prob, labels, weight, has_ignore, ignore_index, reduction, y);
}

}  // namespace kiln::rt
