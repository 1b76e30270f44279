// Object-detection ops: NonMaxSuppression (ONNX NonMaxSuppression-11) and RoiAlign
// (RoiAlign-16), as ONNX's reference computes them.
#pragma once

#include <cmath>
#include <cstdint>

namespace kiln::rt {

struct NmsParams {
  int64_t batches, classes, boxes;
  int64_t max_per_class;  // < 0 is taken as 0
  double iou_threshold;
  bool has_score_threshold;
  double score_threshold;
  bool center_point_box;  // boxes are (x_center, y_center, width, height), else corners (y1, x1, y2, x2)
};

// Most selected boxes NMS can return (its output buffer's rows).
int64_t nms_capacity(const NmsParams& p) noexcept;

// Greedy NMS per batch and class: boxes (batches x boxes x 4) by descending score (scores:
// batches x classes x boxes; ties by lower index) are kept unless their IoU with a kept box
// exceeds the threshold. Writes (batch, class, box) triples to `selected` (nms_capacity rows)
// and returns how many. `order` is scratch of `boxes` int64 values, `kept` of `boxes` too.
int64_t nms_f32(const NmsParams& p, const float* boxes, const float* scores, int64_t* selected, int64_t* order,
                int64_t* kept) noexcept;

struct RoiAlignParams {
  int64_t N, C, H, W, rois, out_h, out_w, sampling_ratio;
  double spatial_scale;
  bool half_pixel;  // coordinate_transformation_mode half_pixel (else output_half_pixel)
  bool max_mode;    // mode max (else avg)
};

// y (rois x C x out_h x out_w) pools bilinear samples of x (N x C x H x W) over each roi
// (x1, y1, x2, y2) of `rois` in image batch_indices[r]. Returns false when a batch index is
// outside [0, N).
template <class T, class I>
bool roi_align(const RoiAlignParams& p, const T* x, const T* rois, const I* batch_indices, T* y);

template <class T, class I>
bool roi_align(const RoiAlignParams& p, const T* x, const T* rois, const I* batch_indices, T* y) {
  const double offset = p.half_pixel ? 0.5 : 0.0;
  const int64_t H = p.H, W = p.W;
  for (int64_t r = 0; r < p.rois; ++r) {
    const int64_t b = static_cast<int64_t>(batch_indices[r]);
    if (b < 0 || b >= p.N) return false;
    const T* roi = rois + r * 4;
    const double start_w = static_cast<double>(roi[0]) * p.spatial_scale - offset;
    const double start_h = static_cast<double>(roi[1]) * p.spatial_scale - offset;
    double roi_w = static_cast<double>(roi[2]) * p.spatial_scale - offset - start_w;
    double roi_h = static_cast<double>(roi[3]) * p.spatial_scale - offset - start_h;
    if (!p.half_pixel) {
      roi_w = roi_w > 1.0 ? roi_w : 1.0;
      roi_h = roi_h > 1.0 ? roi_h : 1.0;
    }
    const double bin_h = roi_h / static_cast<double>(p.out_h), bin_w = roi_w / static_cast<double>(p.out_w);
    const int64_t grid_h = p.sampling_ratio > 0 ? p.sampling_ratio : static_cast<int64_t>(std::ceil(roi_h / p.out_h));
    const int64_t grid_w = p.sampling_ratio > 0 ? p.sampling_ratio : static_cast<int64_t>(std::ceil(roi_w / p.out_w));
    const int64_t count = grid_h * grid_w > 1 ? grid_h * grid_w : 1;
    for (int64_t c = 0; c < p.C; ++c) {
      const T* xc = x + (b * p.C + c) * H * W;
      T* yc = y + (r * p.C + c) * p.out_h * p.out_w;
      for (int64_t ph = 0; ph < p.out_h; ++ph)
        for (int64_t pw = 0; pw < p.out_w; ++pw) {
          double acc = 0;
          bool first = true;
          for (int64_t iy = 0; iy < grid_h; ++iy) {
            double yy = start_h + ph * bin_h + (iy + 0.5) * bin_h / static_cast<double>(grid_h);
            for (int64_t ix = 0; ix < grid_w; ++ix) {
              double xx = start_w + pw * bin_w + (ix + 0.5) * bin_w / static_cast<double>(grid_w);
              double v[4] = {0, 0, 0, 0};
              if (!(yy < -1.0 || yy > static_cast<double>(H) || xx < -1.0 || xx > static_cast<double>(W))) {
                double sy = yy > 0 ? yy : 0, sx = xx > 0 ? xx : 0;
                int64_t y_low = static_cast<int64_t>(sy), x_low = static_cast<int64_t>(sx), y_high, x_high;
                if (y_low >= H - 1) {
                  y_high = y_low = H - 1;
                  sy = static_cast<double>(y_low);
                } else {
                  y_high = y_low + 1;
                }
                if (x_low >= W - 1) {
                  x_high = x_low = W - 1;
                  sx = static_cast<double>(x_low);
                } else {
                  x_high = x_low + 1;
                }
                const double ly = sy - y_low, lx = sx - x_low, hy = 1 - ly, hx = 1 - lx;
                v[0] = hy * hx * static_cast<double>(xc[y_low * W + x_low]);
                v[1] = hy * lx * static_cast<double>(xc[y_low * W + x_high]);
                v[2] = ly * hx * static_cast<double>(xc[y_high * W + x_low]);
                v[3] = ly * lx * static_cast<double>(xc[y_high * W + x_high]);
              }
              if (p.max_mode) {
                double m = v[0];
                for (int k = 1; k < 4; ++k) m = v[k] > m ? v[k] : m;
                acc = first || m > acc ? m : acc;
                first = false;
              } else {
                acc += v[0] + v[1] + v[2] + v[3];
              }
            }
          }
          yc[ph * p.out_w + pw] = T(p.max_mode ? acc : acc / static_cast<double>(count));
        }
    }
  }
  return true;
}

}  // namespace kiln::rt
