#include "kiln/rt/detection.h"

#include <algorithm>

namespace kiln::rt {
namespace {

struct Corners {
  double x_min, x_max, y_min, y_max;
};

Corners corners(const float* b, bool center_point_box) {
  if (center_point_box) {
    const double w = b[2] / 2.0, h = b[3] / 2.0;
    return {b[0] - w, b[0] + w, b[1] - h, b[1] + h};
  }
  return {std::min<double>(b[1], b[3]), std::max<double>(b[1], b[3]), std::min<double>(b[0], b[2]),
          std::max<double>(b[0], b[2])};
}

// Whether box a suppresses box b: their IoU exceeds the threshold.
bool suppresses(const float* a, const float* b, bool center_point_box, double iou_threshold) {
  const Corners p = corners(a, center_point_box), q = corners(b, center_point_box);
  const double ix_min = std::max(p.x_min, q.x_min), ix_max = std::min(p.x_max, q.x_max);
  if (ix_max <= ix_min) return false;
  const double iy_min = std::max(p.y_min, q.y_min), iy_max = std::min(p.y_max, q.y_max);
  if (iy_max <= iy_min) return false;
  const double inter = (ix_max - ix_min) * (iy_max - iy_min);
  const double area_p = (p.x_max - p.x_min) * (p.y_max - p.y_min);
  const double area_q = (q.x_max - q.x_min) * (q.y_max - q.y_min);
  const double uni = area_p + area_q - inter;
  if (inter <= 0 || area_p <= 0 || area_q <= 0 || uni <= 0) return false;
  return inter / uni > iou_threshold;
}

}  // namespace

int64_t nms_capacity(const NmsParams& p) noexcept {
  const int64_t per_class = std::min(std::max<int64_t>(p.max_per_class, 0), p.boxes);
  return p.batches * p.classes * per_class;
}

int64_t nms_f32(const NmsParams& p, const float* boxes, const float* scores, int64_t* selected, int64_t* order,
                int64_t* kept) noexcept {
  const int64_t max_per_class = std::max<int64_t>(p.max_per_class, 0);
  int64_t n_selected = 0;
  for (int64_t b = 0; b < p.batches; ++b)
    for (int64_t c = 0; c < p.classes; ++c) {
      const float* s = scores + (b * p.classes + c) * p.boxes;
      int64_t n = 0;
      for (int64_t i = 0; i < p.boxes; ++i)
        if (!p.has_score_threshold || s[i] > p.score_threshold) order[n++] = i;
      // Descending score, ties by lower index.
      std::stable_sort(order, order + n, [&](int64_t i, int64_t j) { return s[i] > s[j]; });
      int64_t n_kept = 0;
      for (int64_t k = 0; k < n && n_kept < max_per_class; ++k) {
        const float* box = boxes + (b * p.boxes + order[k]) * 4;
        bool keep = true;
        for (int64_t j = 0; j < n_kept && keep; ++j)
          keep = !suppresses(box, boxes + (b * p.boxes + kept[j]) * 4, p.center_point_box, p.iou_threshold);
        if (!keep) continue;
        kept[n_kept++] = order[k];
        selected[n_selected * 3] = b;
        selected[n_selected * 3 + 1] = c;
        selected[n_selected * 3 + 2] = order[k];
        ++n_selected;
      }
    }
  return n_selected;
}

}  // namespace kiln::rt
