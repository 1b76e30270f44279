// Copies that reverse, select or overwrite parts of a tensor, header-only so that the element
// and index types inline: ReverseSequence, Compress, TensorScatter. T is the storage type,
// I an index type (int32_t or int64_t). Where a value read at run time can be out of range,
// the kernel returns -1 on success or the position of the offending value (and the output
// is then incomplete).
#pragma once

#include <algorithm>
#include <cstdint>

namespace kiln::rt {

// ReverseSequence of x [batch, time, inner] (batch_major) or [time, batch, inner]: the first
// lens[b] time steps of each batch item in reverse order, the rest copied.
template <class T, class I>
int64_t reverse_sequence(int64_t batch, int64_t time, int64_t inner, bool batch_major, const I* lens, const T* x,
                         T* y) {
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t len = static_cast<int64_t>(lens[b]);
    if (len < 0 || len > time) return b;
    for (int64_t t = 0; t < time; ++t) {
      const int64_t from = t < len ? len - 1 - t : t;
      const int64_t dst = batch_major ? b * time + t : t * batch + b;
      const int64_t src = batch_major ? b * time + from : from * batch + b;
      for (int64_t i = 0; i < inner; ++i) y[dst * inner + i] = x[src * inner + i];
    }
  }
  return -1;
}

// Compress of x [outer, len, inner] along len: the slices k < cond_len with cond[k] true, in
// order, into y [outer, count, inner].
template <class T>
void compress(int64_t outer, int64_t len, int64_t inner, const bool* cond, int64_t cond_len, const T* x, T* y) {
  T* out = y;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = 0; k < len && k < cond_len; ++k) {
      if (!cond[k]) continue;
      const T* src = x + (o * len + k) * inner;
      for (int64_t i = 0; i < inner; ++i) *out++ = src[i];
    }
}

// How many slices Compress keeps (true entries of cond), or -1 when one lies at or past the
// axis' length `len`.
inline int64_t compress_count(const bool* cond, int64_t cond_len, int64_t len) noexcept {
  int64_t count = 0;
  for (int64_t k = 0; k < cond_len; ++k)
    if (cond[k]) {
      if (k >= len) return -1;
      ++count;
    }
  return count;
}

// Unique of x [outer, len, inner] along len: the distinct slices (each the outer x inner values
// of one k, compared in that order), sorted ascending or in order of first occurrence, into
// y [outer, count, inner]; first (count) the index of each one's first occurrence, inverse
// (len) each slice's position in y, counts (count) how often each occurs. Any of first,
// inverse, counts may be null. `scratch` holds 4 * len int64 values. Returns count.
template <class T>
int64_t unique(int64_t outer, int64_t len, int64_t inner, const T* x, bool sorted, T* y, int64_t* first,
               int64_t* inverse, int64_t* counts, int64_t* scratch) {
  // Slice a before slice b, lexicographically over (o, i). NaN sorts after every number and
  // equals NaN: the data is the caller's, and std::sort needs a strict weak order whatever it holds.
  const auto before = [](T u, T v) {
    if (v != v) return u == u;  // a number before NaN; NaN not before NaN
    return u < v;               // false when u is NaN
  };
  const auto less = [&](int64_t a, int64_t b) {
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        const T va = x[(o * len + a) * inner + i], vb = x[(o * len + b) * inner + i];
        if (before(va, vb)) return true;
        if (before(vb, va)) return false;
      }
    return false;
  };
  int64_t* order = scratch;            // slices by value, equal ones by index
  int64_t* group = scratch + len;      // slice -> its group, groups numbered in value order
  int64_t* rep = scratch + 2 * len;    // group -> its first occurrence
  int64_t* place = scratch + 3 * len;  // group -> its position in y
  for (int64_t k = 0; k < len; ++k) order[k] = k;
  std::sort(order, order + len, [&](int64_t a, int64_t b) { return less(a, b) || (!less(b, a) && a < b); });
  int64_t count = 0;
  for (int64_t r = 0; r < len; ++r) {
    const int64_t k = order[r];
    if (r == 0 || less(order[r - 1], k)) rep[count++] = k;  // ties sorted by index: the first occurrence
    group[k] = count - 1;
  }
  if (sorted) {
    for (int64_t g = 0; g < count; ++g) place[g] = g;
  } else {
    int64_t next = 0;
    for (int64_t k = 0; k < len; ++k)
      if (rep[group[k]] == k) place[group[k]] = next++;
  }
  for (int64_t g = 0; g < count; ++g) {
    for (int64_t o = 0; o < outer; ++o)
      std::copy(x + (o * len + rep[g]) * inner, x + (o * len + rep[g] + 1) * inner,
                y + (o * count + place[g]) * inner);
    if (first) first[place[g]] = rep[g];
    if (counts) counts[place[g]] = 0;
  }
  for (int64_t k = 0; k < len; ++k) {
    if (inverse) inverse[k] = place[group[k]];
    if (counts) ++counts[place[group[k]]];
  }
  return count;
}

// TensorScatter: y = past [prefix, max_len, inner] with update [prefix, upd_len, inner]
// written at sequence positions write_indices[b] + s (modulo max_len when circular), b the
// batch item of each prefix row (prefix = batch * per_batch). write_indices null: all 0.
// Returns -1, or the batch item whose positions fall outside [0, max_len).
template <class T, class I>
int64_t tensor_scatter(int64_t batch, int64_t per_batch, int64_t max_len, int64_t upd_len, int64_t inner,
                       bool circular, const T* past, const T* update, const I* write_indices, T* y) {
  const int64_t total = batch * per_batch * max_len * inner;
  for (int64_t i = 0; i < total; ++i) y[i] = past[i];
  for (int64_t p = 0; p < batch * per_batch; ++p) {
    const int64_t b = p / per_batch;
    const int64_t start = write_indices ? static_cast<int64_t>(write_indices[b]) : 0;
    for (int64_t s = 0; s < upd_len; ++s) {
      int64_t at = start + s;
      if (circular && max_len > 0) at = ((at % max_len) + max_len) % max_len;
      if (at < 0 || at >= max_len) return b;
      const T* src = update + (p * upd_len + s) * inner;
      T* dst = y + (p * max_len + at) * inner;
      for (int64_t i = 0; i < inner; ++i) dst[i] = src[i];
    }
  }
  return -1;
}

}  // namespace kiln::rt
