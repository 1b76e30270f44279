// Signal processing: DFT and STFT (kernels in kiln/rt/dft.h), and the generators HannWindow,
// HammingWindow, BlackmanWindow and MelWeightMatrix, whose shapes are the values of their inputs
// (so compiled code needs those constant, and then folds them).
#include "ir/ops/signal.h"

#include <cmath>
#include <numbers>

#include "ir/ops/op_helpers.h"

namespace kiln::ir {
namespace {

DType window_dtype(const Node& node) {
  const int64_t code = node.i("output_datatype");
  std::optional<DType> t = dtype_from_code(static_cast<int>(code));
  if (!t || !is_float(*t))
    fail("{}: output_datatype {} is not a floating-point type", node.describe(), code);
  return *t;
}

int64_t window_size(const Node& node, const Tensor& size) {
  if (size.numel() != 1) fail("{}: size must be a scalar, got {}", node.describe(), dims_str(size.dims()));
  const int64_t n = static_cast<int64_t>(size.as_double(0));
  if (n < 0 || n > (int64_t{1} << 32)) fail("{}: size {} is out of range", node.describe(), n);
  return n;
}

void infer_window(Node& node) {
  require_dtype(node, 0, {DType::I32, DType::I64});
  const int64_t periodic = node.i("periodic");
  if (periodic != 0 && periodic != 1) fail("{}: periodic must be 0 or 1, got {}", node.describe(), periodic);
  const Value* size = node.input(0);
  Dim len = size->is_constant() ? Dim(window_size(node, size->constant())) : Dim::unknown();
  node.output(0)->set_type(window_dtype(node), Shape({len}));
}

// The window's value at n of a window of length `size` (periodic: as if one longer).
double window_value(const std::string& op, int64_t n, int64_t size, bool periodic) {
  const double N = static_cast<double>(periodic ? size : size - 1), x = static_cast<double>(n);
  constexpr double pi = std::numbers::pi;
  if (op == "HannWindow") {
    const double s = std::sin(pi * x / N);
    return s * s;
  }
  if (op == "HammingWindow") {
    constexpr double alpha = 25.0 / 46.0;
    return alpha - std::cos(2 * pi * x / N) * (1 - alpha);
  }
  return 0.42 - 0.5 * std::cos(2 * pi * x / N) + 0.08 * std::cos(4 * pi * x / N);  // Blackman
}

void eval_window(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  const int64_t size = window_size(node, *in[0]);
  const bool periodic = node.i("periodic") != 0;
  std::vector<double> v;
  for (int64_t n = 0; n < size; ++n) v.push_back(window_value(node.op(), n, size, periodic));
  out[0] = Tensor::from_vector<double>(window_dtype(node), {size}, v);
}

// A scalar integer input's value, or nullopt when omitted or not known yet.
std::optional<int64_t> scalar_int(const Node& node, size_t i, std::span<const Tensor* const> in) {
  const Tensor* t = nullptr;
  if (!in.empty()) t = optional_input(in, i);
  else if (node.has_input(i) && node.input(i)->is_constant()) t = &node.input(i)->constant();
  if (!t || t->numel() == 0) return std::nullopt;
  if (t->numel() != 1) fail("{}: input {} must be a scalar, got {}", node.describe(), i, dims_str(t->dims()));
  return static_cast<int64_t>(t->as_double(0));
}

void infer_dft(Node& node) {
  require_float(node, 0);
  for (size_t i : {size_t{1}, size_t{2}})
    if (node.has_input(i)) require_dtype(node, i, {DType::I32, DType::I64});
  const Shape& x = node.input(0)->shape();
  const bool known = (!node.has_input(1) || node.input(1)->is_constant()) &&
                     (!node.has_input(2) || node.input(2)->is_constant());
  if (x.is_static() && known) {
    int64_t axis = 0;
    const rt::DftParams p = dft_params(node, x.values(), axis);
    std::vector<int64_t> dims = dft_out_dims(x.values(), axis, p);
    node.output(0)->set_type(node.input(0)->dtype(), Shape::of(dims));
    return;
  }
  if (x.rank() < 2) fail("{}: input must have rank >= 2, got {}", node.describe(), x.str());
  std::vector<Dim> dims(x.rank(), Dim::unknown());
  node.output(0)->set_type(node.input(0)->dtype(), Shape(std::move(dims)));
}

void eval_dft(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  int64_t axis = 0;
  const rt::DftParams p = dft_params(node, x.dims(), axis, in);
  out[0] = Tensor(x.dtype(), dft_out_dims(x.dims(), axis, p));
  visit_dtype(x.dtype(), [&]<class S>() {
    if constexpr (std::is_floating_point_v<compute_t<S>>) rt::dft<S>(p, x.data<S>(), out[0].mutable_data<S>());
    else fail("{}: {} is not supported", node.describe(), dtype_name(x.dtype()));
  });
}

void infer_stft(Node& node) {
  require_float(node, 0);
  require_dtype(node, 1, {DType::I32, DType::I64});
  if (node.has_input(2)) require_same_dtype(node, 0, 2);
  if (node.has_input(3)) require_dtype(node, 3, {DType::I32, DType::I64});
  const Shape& x = node.input(0)->shape();
  const bool known = node.input(1)->is_constant() && (!node.has_input(3) || node.input(3)->is_constant()) &&
                     (node.has_input(3) || (node.has_input(2) && node.input(2)->shape().is_static()));
  if (x.is_static() && known) {
    const rt::StftParams p = stft_params(node, x.values(), node.has_input(2) ? node.input(2)->shape().values()
                                                                              : std::vector<int64_t>{});
    node.output(0)->set_type(node.input(0)->dtype(), Shape({p.batch, p.frames, p.bins, 2}));
    return;
  }
  node.output(0)->set_type(node.input(0)->dtype(), Shape({x.rank() > 0 ? x[0] : Dim::unknown(), Dim::unknown(),
                                                          Dim::unknown(), Dim(2)}));
}

void eval_stft(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  const Tensor* window = optional_input(in, 2);
  const rt::StftParams p = stft_params(node, x.dims(), window ? window->dims() : std::vector<int64_t>{}, in);
  out[0] = Tensor(x.dtype(), {p.batch, p.frames, p.bins, 2});
  visit_dtype(x.dtype(), [&]<class S>() {
    if constexpr (std::is_floating_point_v<compute_t<S>>)
      rt::stft<S>(p, x.data<S>(), window ? window->data<S>() : nullptr, out[0].mutable_data<S>());
    else fail("{}: {} is not supported", node.describe(), dtype_name(x.dtype()));
  });
}

// MelWeightMatrix: (dft_length / 2 + 1) x num_mel_bins triangular filters, spaced evenly on the
// mel scale between the edge frequencies; the arithmetic follows ONNX's reference (the edge mels
// in single precision, the rest in double) so that the bin boundaries agree.
void infer_mel(Node& node) {
  for (size_t i = 0; i < 3; ++i) require_dtype(node, i, {DType::I32, DType::I64});
  require_float(node, 3);
  require_float(node, 4);
  std::vector<Dim> dims = {Dim::unknown(), Dim::unknown()};
  if (node.input(0)->is_constant() && node.input(1)->is_constant()) {
    dims[0] = Dim(static_cast<int64_t>(node.input(1)->constant().as_double(0)) / 2 + 1);
    dims[1] = Dim(static_cast<int64_t>(node.input(0)->constant().as_double(0)));
  }
  node.output(0)->set_type(window_dtype(node), Shape(std::move(dims)));
}

void eval_mel(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  for (size_t i = 0; i < 5; ++i)
    if (in[i]->numel() != 1) fail("{}: input {} must be a scalar", node.describe(), i);
  const int64_t bins = static_cast<int64_t>(in[0]->as_double(0));
  const int64_t dft_length = static_cast<int64_t>(in[1]->as_double(0));
  const int64_t sample_rate = static_cast<int64_t>(in[2]->as_double(0));
  const float lower = static_cast<float>(in[3]->as_double(0)), upper = static_cast<float>(in[4]->as_double(0));
  if (bins < 1 || bins > (1 << 20) || dft_length < 1 || dft_length > (1 << 26) || sample_rate < 1)
    fail("{}: num_mel_bins {}, dft_length {} and sample_rate {} must be positive (and not huge)", node.describe(),
         bins, dft_length, sample_rate);
  const int64_t rows = dft_length / 2 + 1;
  auto mel = [](float hz) { return static_cast<double>(2595.0f * std::log1p(hz / 700.0f)) / std::log(10.0); };
  const double low = mel(lower), step = (mel(upper) - low) / static_cast<double>(bins + 2);
  std::vector<int64_t> f(static_cast<size_t>(bins + 2));
  for (int64_t i = 0; i < bins + 2; ++i) {
    const double hz = 700 * std::expm1((static_cast<double>(i) * step + low) / 2595 * std::log(10.0));
    f[i] = static_cast<int64_t>(std::floor(static_cast<double>(dft_length + 1) * hz / static_cast<double>(sample_rate)));
    if (f[i] < 0 || f[i] >= rows) fail("{}: mel bin edge {} falls outside the {} spectrogram bins", node.describe(), f[i], rows);
  }
  std::vector<double> w(static_cast<size_t>(rows * bins), 0.0);
  for (int64_t i = 0; i < bins; ++i) {
    const int64_t left = f[i], centre = f[i + 1], right = f[i + 2];
    if (centre == left) w[centre * bins + i] = 1;
    else
      for (int64_t j = left; j <= centre; ++j)
        w[j * bins + i] = static_cast<double>(j - left) / static_cast<double>(centre - left);
    for (int64_t j = centre; j < right; ++j)
      w[j * bins + i] = static_cast<double>(right - j) / static_cast<double>(right - centre);
  }
  out[0] = Tensor::from_vector<double>(window_dtype(node), {rows, bins}, w);
}

}  // namespace

rt::DftParams dft_params(const Node& node, const std::vector<int64_t>& x, int64_t& axis,
                         std::span<const Tensor* const> in) {
  const int64_t rank = static_cast<int64_t>(x.size());
  if (rank < 2 || (x.back() != 1 && x.back() != 2))
    fail("{}: input {} must have rank >= 2 and a last dim of 1 (real) or 2 (complex)", node.describe(),
         dims_str(x));
  axis = require_axis(node, scalar_int(node, 2, in).value_or(-2), rank);
  if (axis == rank - 1) fail("{}: axis {} is the real/complex dim", node.describe(), axis);
  rt::DftParams p{};
  p.inverse = node.i("inverse") != 0;
  p.onesided = node.i("onesided") != 0;
  p.complex_input = x.back() == 2;
  p.n_in = x[axis];
  p.length = scalar_int(node, 1, in).value_or(p.inverse && p.onesided ? 2 * (p.n_in - 1) : p.n_in);
  if (p.length < 1 || p.length > (int64_t{1} << 31))
    fail("{}: dft_length {} must be positive", node.describe(), p.length);
  p.n_out = !p.inverse && p.onesided ? p.length / 2 + 1 : p.length;
  p.outer = 1;
  p.inner = 1;
  for (int64_t d = 0; d < axis; ++d) p.outer *= x[d];
  for (int64_t d = axis + 1; d + 1 < rank; ++d) p.inner *= x[d];
  return p;
}

std::vector<int64_t> dft_out_dims(const std::vector<int64_t>& x, int64_t axis, const rt::DftParams& p) {
  std::vector<int64_t> dims = x;
  dims[axis] = p.n_out;
  dims.back() = p.inverse && p.onesided ? 1 : 2;
  return dims;
}

rt::StftParams stft_params(const Node& node, const std::vector<int64_t>& x, const std::vector<int64_t>& window,
                           std::span<const Tensor* const> in) {
  if (x.size() != 3 || (x[2] != 1 && x[2] != 2))
    fail("{}: signal {} must be [batch, length, 1 or 2]", node.describe(), dims_str(x));
  const std::optional<int64_t> step = scalar_int(node, 1, in);
  if (!step || *step < 1) fail("{}: frame_step must be a positive scalar", node.describe());
  std::optional<int64_t> frame_length = scalar_int(node, 3, in);
  if (!window.empty()) {
    if (window.size() != 1) fail("{}: window must be 1-D, got {}", node.describe(), dims_str(window));
    if (frame_length && *frame_length != window[0])
      fail("{}: frame_length {} differs from the window's length {}", node.describe(), *frame_length, window[0]);
    frame_length = window[0];
  }
  if (!frame_length || *frame_length < 1 || *frame_length > x[1])
    fail("{}: frame_length (or a window) must be given, positive and at most the signal's length {}",
         node.describe(), x[1]);
  rt::StftParams p{};
  p.batch = x[0];
  p.length = x[1];
  p.step = *step;
  p.frame_length = *frame_length;
  p.frames = 1 + (x[1] - *frame_length) / *step;
  p.bins = node.i("onesided") != 0 ? *frame_length / 2 + 1 : *frame_length;
  p.complex_input = x[2] == 2;
  return p;
}

void register_signal_ops(Registry& r) {
  r.add(OpDef{
      .name = "DFT",
      .summary = "discrete Fourier transform (or its inverse) along one axis; real or complex",
      .inputs = {{"input"},
                 {.name = "dft_length", .optional = true, .sets_output_shape = true},
                 {.name = "axis", .optional = true, .sets_output_shape = true}},
      .outputs = {"output"},
      .attrs = {{"inverse", AttrType::Int, Attribute(int64_t{0})}, {"onesided", AttrType::Int, Attribute(int64_t{0})}},
      .infer = infer_dft,
      .eval = eval_dft,
  });
  r.add(OpDef{
      .name = "MelWeightMatrix",
      .summary = "triangular mel-scale filters mapping DFT bins to mel bins",
      .inputs = {{.name = "num_mel_bins", .sets_output_shape = true},
                 {.name = "dft_length", .sets_output_shape = true},
                 {"sample_rate"},
                 {"lower_edge_hertz"},
                 {"upper_edge_hertz"}},
      .outputs = {"output"},
      .attrs = {{"output_datatype", AttrType::Int, Attribute(int64_t{1})}},
      .infer = infer_mel,
      .eval = eval_mel,
  });
  r.add(OpDef{
      .name = "STFT",
      .summary = "short-time Fourier transform: DFTs of windowed frames",
      .inputs = {{"signal"},
                 {.name = "frame_step", .sets_output_shape = true},
                 {"window", true},
                 {.name = "frame_length", .optional = true, .sets_output_shape = true}},
      .outputs = {"output"},
      .attrs = {{"onesided", AttrType::Int, Attribute(int64_t{1})}},
      .infer = infer_stft,
      .eval = eval_stft,
  });
  for (const char* name : {"HannWindow", "HammingWindow", "BlackmanWindow"})
    r.add(OpDef{
        .name = name,
        .summary = "a window function of length size (periodic or symmetric)",
        .inputs = {{.name = "size", .sets_output_shape = true}},
        .outputs = {"output"},
        .attrs = {{"output_datatype", AttrType::Int, Attribute(int64_t{1})},
                  {"periodic", AttrType::Int, Attribute(int64_t{1})}},
        .infer = infer_window,
        .eval = eval_window,
    });
}

}  // namespace kiln::ir
