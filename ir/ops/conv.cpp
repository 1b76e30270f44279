// Conv: N-D convolution (1-D, 2-D, 3-D in practice) with groups, dilations, strides, pads,
// auto_pad and an optional bias; f32 1-D and 2-D ones run kiln::rt's conv2d_f32, the kernel
// generated code calls, the rest a loop over output positions. ConvTranspose: its transpose (gradient), with output_padding
// and output_shape, computed by kiln::rt's GEMM + col2im kernels.
#include "ir/ops/conv.h"

#include <algorithm>

#include "ir/ops/op_helpers.h"
#include "ir/ops/window.h"
#include "ir/symbolic_params.h"
#include "kiln/rt/conv.h"
#include "kiln/rt/conv_transpose.h"

namespace kiln::ir {

rt::Conv2dParams conv2d_params(const std::vector<int64_t>& x, const std::vector<int64_t>& w, int64_t group,
                               const ResolvedWindow& window) {
  const bool one_d = x.size() == 3;
  // The H value of a per-axis list: its first entry, or `lifted` for a 1-D convolution.
  auto h = [&](const std::vector<int64_t>& v, int64_t lifted) { return one_d ? lifted : v[0]; };
  return rt::Conv2dParams{x[0],
                          x[1],
                          one_d ? 1 : x[2],
                          x.back(),
                          w[0],
                          h(window.kernel, 1),
                          window.kernel.back(),
                          h(window.out_dims, 1),
                          window.out_dims.back(),
                          h(window.strides, 1),
                          window.strides.back(),
                          h(window.pads_begin, 0),
                          window.pads_begin.back(),
                          h(window.dilations, 1),
                          window.dilations.back(),
                          group};
}

namespace {

struct ConvGeometry {
  Shape out;
  ResolvedWindow window;  // out_dims -1 where a spatial dim is symbolic
};

// The output shape and window of Conv for input shapes x, w and (optional) b. Shared by the
// shape rule and the reference, so both validate the same way.
ConvGeometry conv_geometry(const Node& node, const Shape& x, const Shape& w, const Shape* b) {
  if (x.rank() < 3)
    fail("{}: input X must have rank >= 3 (N, C, spatial...), got {}", node.describe(), x.str());
  if (w.rank() != x.rank())
    fail("{}: weight W has shape {}, expected rank {} like X {}", node.describe(), w.str(),
         x.rank(), x.str());
  const size_t n = x.rank() - 2;
  const int64_t group = node.i("group");
  if (group < 1) fail("{}: group must be positive, got {}", node.describe(), group);
  const Dim c = x[1], m = w[0], cg = w[1];
  if (c.is_static() && c.value() % group != 0)
    fail("{}: group {} does not divide the {} input channels", node.describe(), group, c.value());
  if (m.is_static() && m.value() % group != 0)
    fail("{}: group {} does not divide the {} output channels", node.describe(), group, m.value());
  if (c.is_static() && cg.is_static() && cg.value() * group != c.value())
    fail("{}: weight W {} expects {} input channels per group, X {} has {} channels in {} groups",
         node.describe(), w.str(), cg.value(), x.str(), c.value(), group);
  if (b) {
    if (b->rank() != 1) fail("{}: bias B must be 1-D, got {}", node.describe(), b->str());
    if ((*b)[0].is_static() && m.is_static() && (*b)[0].value() != m.value())
      fail("{}: bias B {} does not match the {} output channels", node.describe(), b->str(),
           m.value());
  }

  std::vector<int64_t> kernel;
  bool kernel_known = true;
  if (node.has_attr("kernel_shape")) {
    kernel = node.ints("kernel_shape");
    if (kernel.size() != n)
      fail("{}: kernel_shape {} has {} dims, input has {} spatial dims", node.describe(),
           ints_str(kernel), kernel.size(), n);
    for (size_t i = 0; i < n; ++i)
      if (w[i + 2].is_static() && w[i + 2].value() != kernel[i])
        fail("{}: kernel_shape {} does not match weight W {}", node.describe(), ints_str(kernel),
             w.str());
  } else {
    for (size_t i = 0; i < n; ++i) {
      kernel.push_back(w[i + 2].is_static() ? w[i + 2].value() : 1);
      kernel_known = kernel_known && w[i + 2].is_static();
    }
  }
  std::vector<int64_t> in(n);
  for (size_t i = 0; i < n; ++i)
    in[i] = kernel_known && x[i + 2].is_static() ? x[i + 2].value() : -1;

  ConvGeometry g;
  g.window = resolve_window(node, in, kernel);
  std::vector<Dim> dims = {x[0], m};
  const std::vector<Dim> spatial(x.dims().begin() + 2, x.dims().end());
  for (const Dim& d : kernel_known ? window_out_dims(node, spatial, kernel, g.window) : window_out_dims(g.window))
    dims.push_back(d);
  g.out = Shape(std::move(dims));
  return g;
}

void infer_conv(Node& node) {
  require_float(node, 0);
  require_same_dtype(node, 0, 1);
  if (node.has_input(2)) require_same_dtype(node, 0, 2);
  const Shape* b = node.has_input(2) ? &node.input(2)->shape() : nullptr;
  ConvGeometry g = conv_geometry(node, node.input(0)->shape(), node.input(1)->shape(), b);
  node.output(0)->set_type(node.input(0)->dtype(), g.out);
}

void eval_conv(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  const Tensor& w = *in[1];
  const Tensor* b = optional_input(in, 2);
  Shape b_shape = b ? b->shape() : Shape();
  ConvGeometry g = conv_geometry(node, x.shape(), w.shape(), b ? &b_shape : nullptr);
  const std::vector<int64_t> y_dims = g.out.values();
  out[0] = Tensor(x.dtype(), y_dims);

  const int64_t group = node.i("group");
  if (x.dtype() == DType::F32 && (x.rank() == 3 || x.rank() == 4) && x.numel() > 0 && w.numel() > 0 &&
      out[0].numel() > 0) {
    const rt::Conv2dParams p = conv2d_params(x.dims(), w.dims(), group, g.window);
    std::vector<float> scratch(rt::conv2d_scratch_floats(p));
    rt::conv2d_f32(p, x.data<float>(), w.data<float>(), b ? b->data<float>() : nullptr,
                   out[0].mutable_data<float>(), scratch.data(), nullptr);
    return;
  }

  const int64_t batch = x.dims()[0], channels = x.dims()[1], maps = w.dims()[0];
  const int64_t cg = channels / group, mg = maps / group;
  const std::vector<int64_t> in_spatial(x.dims().begin() + 2, x.dims().end());
  const int64_t in_plane = numel(in_spatial), out_plane = numel(g.window.out_dims);
  const int64_t kernel_size = numel(g.window.kernel);

  visit_dtype(x.dtype(), [&]<class S>() {
    using C = compute_t<S>;
    if constexpr (std::is_floating_point_v<C>) {
      const S* px = x.data<S>();
      const S* pw = w.data<S>();
      const S* pb = b ? b->data<S>() : nullptr;
      S* py = out[0].mutable_data<S>();
      std::vector<WindowTap> taps;
      int64_t padded = 0;
      std::vector<int64_t> o(g.window.out_dims.size(), 0);
      if (out_plane == 0) return;
      int64_t p = 0;
      do {
        window_taps(g.window, in_spatial, o, taps, padded);
        for (int64_t nb = 0; nb < batch; ++nb)
          for (int64_t gi = 0; gi < group; ++gi)
            for (int64_t mi = 0; mi < mg; ++mi) {
              const int64_t mo = gi * mg + mi;
              C acc = pb ? static_cast<C>(pb[mo]) : C(0);
              for (int64_t ci = 0; ci < cg; ++ci) {
                const S* xc = px + (nb * channels + gi * cg + ci) * in_plane;
                const S* wc = pw + (mo * cg + ci) * kernel_size;
                for (const WindowTap& t : taps)
                  acc += static_cast<C>(xc[t.input_offset]) * static_cast<C>(wc[t.kernel_index]);
              }
              py[(nb * maps + mo) * out_plane + p] = S(acc);
            }
        ++p;
      } while (next_index(o, g.window.out_dims));
    } else {
      fail("{} is not supported", dtype_name(x.dtype()));
    }
  });
}

Cost conv_cost(const Node& node) {
  Cost c;
  c.bytes = io_bytes(node);
  const Shape& y = node.output(0)->shape();
  const Shape& w = node.input(1)->shape();
  if (!y.is_static() || !w.is_static()) return c;
  // Each output element: C/group * kernel multiply-adds (W's dims 1.. are exactly that).
  const std::vector<int64_t> wd = w.values();
  const double per_output = static_cast<double>(numel(wd) / std::max<int64_t>(wd[0], 1));
  c.flops = 2.0 * per_output * static_cast<double>(y.numel());
  if (node.has_input(2)) c.flops += static_cast<double>(y.numel());
  return c;
}


// --- ConvTranspose ---------------------------------------------------------------------------

// Bounds every attribute value so that the output-size arithmetic cannot overflow.
constexpr int64_t kMaxValue = int64_t{1} << 30;

std::vector<int64_t> ints_attr(const Node& node, std::string_view name, size_t n, int64_t fill,
                               int64_t min_value) {
  if (!node.has_attr(name)) return std::vector<int64_t>(n, fill);
  const std::vector<int64_t>& v = node.ints(name);
  if (v.size() != n)
    fail("{}: attribute '{}' has {} values, expected {}", node.describe(), name, v.size(), n);
  for (int64_t x : v)
    if (x < min_value || x > kMaxValue)
      fail("{}: attribute '{}' value {} is out of range [{}, {}]", node.describe(), name, x,
           min_value, kMaxValue);
  return v;
}

int64_t floor_div2(int64_t a) { return a >= 0 ? a / 2 : -((-a + 1) / 2); }

void infer_conv_transpose(Node& node) {
  require_float(node, 0);
  require_same_dtype(node, 0, 1);
  if (node.has_input(2)) require_same_dtype(node, 0, 2);
  const Shape& x = node.input(0)->shape();
  const Shape& w = node.input(1)->shape();
  auto values = [](const Shape& s) {
    std::vector<int64_t> v;
    for (const Dim& d : s.dims()) v.push_back(d.is_static() ? d.value() : -1);
    return v;
  };
  ConvTransposeGeometry g = conv_transpose_geometry(node, values(x), values(w));
  if (node.has_input(2)) {
    const Shape& b = node.input(2)->shape();
    if (b.rank() != 1 || (b[0].is_static() && g.out_channels >= 0 && b[0].value() != g.out_channels))
      fail("{}: bias B has shape {}, expected [{}] (one per output channel)", node.describe(), b.str(),
           g.out_channels);
  }
  std::vector<Dim> dims = {x[0], g.out_channels >= 0 ? Dim(g.out_channels) : Dim::unknown()};
  for (size_t i = 0; i < g.out.size(); ++i) {
    Dim o = g.out[i] >= 0 ? Dim(g.out[i]) : Dim::unknown();
    const Dim& in = x[i + 2];
    if (o.is_unknown() && !in.is_unknown() && node.output(0)->graph()) {
      // A symbolic input dim: the output dim as a polynomial of its symbols (symbolic_params.h).
      std::vector<int64_t> xs = values(x);
      auto lifted = lift_params(in.symbols(), node.output(0)->graph()->dim_ranges(),
                                [&](const std::map<std::string, int64_t>& at) {
                                  const Dim b = in.bind(at);
                                  if (!b.is_static()) fail("dim {} is not known at a sample point", in.name());
                                  xs[i + 2] = b.value();
                                  return std::vector<int64_t>{conv_transpose_geometry(node, xs, values(w)).out[i]};
                                });
      if (lifted) o = (*lifted)[0];
    }
    dims.push_back(o);
  }
  node.output(0)->set_type(node.input(0)->dtype(), Shape(std::move(dims)));
}

rt::ConvTransposeParams conv_transpose_params(const std::vector<int64_t>& x, int64_t out_channels,
                                              const ConvTransposeGeometry& g,
                                              const std::vector<int64_t>& in_spatial) {
  return rt::ConvTransposeParams{x[0],
                                 x[1],
                                 out_channels,
                                 g.group,
                                 static_cast<int64_t>(g.kernel.size()),
                                 in_spatial.data(),
                                 g.out.data(),
                                 g.kernel.data(),
                                 g.strides.data(),
                                 g.dilations.data(),
                                 g.pads_begin.data()};
}

void eval_conv_transpose(const Node& node, std::span<const Tensor* const> in,
                         std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  const Tensor& w = *in[1];
  const Tensor* b = optional_input(in, 2);
  ConvTransposeGeometry g = conv_transpose_geometry(node, x.dims(), w.dims());
  if (b && (b->rank() != 1 || b->dims()[0] != g.out_channels))
    fail("{}: bias B has shape {}, expected [{}] (one per output channel)", node.describe(),
         dims_str(b->dims()), g.out_channels);
  std::vector<int64_t> y_dims = {x.dims()[0], g.out_channels};
  y_dims.insert(y_dims.end(), g.out.begin(), g.out.end());
  out[0] = Tensor(x.dtype(), y_dims);
  if (out[0].numel() == 0) return;
  const std::vector<int64_t> in_spatial(x.dims().begin() + 2, x.dims().end());
  const rt::ConvTransposeParams p = conv_transpose_params(x.dims(), g.out_channels, g, in_spatial);
  visit_dtype(x.dtype(), [&]<class S>() {
    using C = compute_t<S>;
    if constexpr (std::is_same_v<S, float>) {
      std::vector<float> scratch(rt::conv_transpose_scratch_floats(p));
      rt::conv_transpose_f32(p, x.data<float>(), w.data<float>(), b ? b->data<float>() : nullptr,
                             out[0].mutable_data<float>(), scratch.data(), nullptr);
    } else if constexpr (std::is_floating_point_v<C>) {
      std::vector<C> scratch(rt::conv_transpose_scratch_elements(p));
      rt::conv_transpose<S, C>(p, x.data<S>(), w.data<S>(), b ? b->data<S>() : nullptr,
                               out[0].mutable_data<S>(), scratch.data());
    } else {
      fail("{} is not supported", dtype_name(x.dtype()));
    }
  });
}

Cost conv_transpose_cost(const Node& node) {
  Cost c;
  c.bytes = io_bytes(node);
  const Shape& x = node.input(0)->shape();
  const Shape& w = node.input(1)->shape();
  if (!x.is_static() || !w.is_static()) return c;
  // Each input element: (M / group) * kernel multiply-adds (W's dims 1.. are exactly that).
  const std::vector<int64_t> wd = w.values();
  const double per_input = static_cast<double>(numel(wd) / std::max<int64_t>(wd[0], 1));
  c.flops = 2.0 * per_input * static_cast<double>(x.numel());
  return c;
}

// --- Col2Im ----------------------------------------------------------------------------------

std::vector<int64_t> int_input(const Tensor& t) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(static_cast<int64_t>(t.as_double(i)));
  return v;
}

void infer_col2im(Node& node) {
  require_float(node, 0);
  require_dtype(node, 1, {DType::I64});
  require_dtype(node, 2, {DType::I64});
  const Shape& x = node.input(0)->shape();
  if (x.is_static() && node.input(1)->is_constant() && node.input(2)->is_constant()) {
    Col2ImGeometry g = col2im_geometry(node, x.values(), int_input(node.input(1)->constant()),
                                       int_input(node.input(2)->constant()));
    std::vector<int64_t> dims = {x[0].value(), g.channels};
    dims.insert(dims.end(), g.image.begin(), g.image.end());
    node.output(0)->set_type(node.input(0)->dtype(), Shape::of(dims));
    return;
  }
  const Shape& is = node.input(1)->shape();
  if (x.rank() != 3) fail("{}: input must be 3-D (N, C * block, L), got {}", node.describe(), x.str());
  if (is.rank() != 1 || !is[0].is_static())
    fail("{}: image_shape must be a 1-D tensor of known length, got {}", node.describe(), is.str());
  std::vector<Dim> dims(static_cast<size_t>(2 + is[0].value()), Dim::unknown());
  dims[0] = x[0];
  node.output(0)->set_type(node.input(0)->dtype(), Shape(std::move(dims)));
}

void eval_col2im(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  Col2ImGeometry g = col2im_geometry(node, x.dims(), int_input(*in[1]), int_input(*in[2]));
  std::vector<int64_t> dims = {x.dims()[0], g.channels};
  dims.insert(dims.end(), g.image.begin(), g.image.end());
  out[0] = Tensor(x.dtype(), dims);
  if (out[0].numel() == 0) return;
  const rt::ConvTransposeParams p{x.dims()[0], g.channels, g.channels, 1, static_cast<int64_t>(g.image.size()),
                                  g.blocks.data(), g.image.data(), g.block.data(), g.strides.data(),
                                  g.dilations.data(), g.pads_begin.data()};
  visit_dtype(x.dtype(), [&]<class S>() {
    if constexpr (std::is_same_v<S, float> || std::is_same_v<S, double>) {
      rt::col2im<S>(p, x.data<S>(), out[0].mutable_data<S>());
    } else {
      fail("{}: {} is not supported", node.describe(), dtype_name(x.dtype()));
    }
  });
}

// --- DeformConv -------------------------------------------------------------------------------

void infer_deform_conv(Node& node) {
  require_float(node, 0);
  for (size_t i = 1; i < node.num_inputs(); ++i)
    if (node.has_input(i)) require_same_dtype(node, 0, i);
  const Shape& x = node.input(0)->shape();
  const Shape& w = node.input(1)->shape();
  const Shape* b = node.has_input(3) ? &node.input(3)->shape() : nullptr;
  if (x.rank() != 4) fail("{}: only 2-D DeformConv is supported, X is {}", node.describe(), x.str());
  ConvGeometry g = conv_geometry(node, x, w, b);
  node.output(0)->set_type(node.input(0)->dtype(), g.out);
}

// The kernel's parameters, after checking offset and mask against the output.
rt::DeformConvParams deform_conv_params(const Node& node, const std::vector<int64_t>& x,
                                        const std::vector<int64_t>& w, const std::vector<int64_t>& offset,
                                        const std::vector<int64_t>* mask, const ResolvedWindow& win) {
  const int64_t og = node.i("offset_group");
  if (og < 1 || x[1] % og != 0)
    fail("{}: offset_group {} must be positive and divide the {} input channels", node.describe(), og, x[1]);
  const int64_t K = w[2] * w[3];
  const std::vector<int64_t> want = {x[0], og * K * 2, win.out_dims[0], win.out_dims[1]};
  if (offset != want)
    fail("{}: offset has shape {}, expected {}", node.describe(), dims_str(offset), dims_str(want));
  if (mask) {
    const std::vector<int64_t> want_mask = {x[0], og * K, win.out_dims[0], win.out_dims[1]};
    if (*mask != want_mask)
      fail("{}: mask has shape {}, expected {}", node.describe(), dims_str(*mask), dims_str(want_mask));
  }
  return rt::DeformConvParams{x[0], x[1], x[2], x[3], w[0], w[2], w[3], win.out_dims[0], win.out_dims[1],
                              win.strides[0], win.strides[1], win.pads_begin[0], win.pads_begin[1],
                              win.dilations[0], win.dilations[1], node.i("group"), og};
}

void eval_deform_conv(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  const Tensor& w = *in[1];
  const Tensor& offset = *in[2];
  const Tensor* b = optional_input(in, 3);
  const Tensor* mask = optional_input(in, 4);
  if (x.rank() != 4) fail("{}: only 2-D DeformConv is supported, X is {}", node.describe(), dims_str(x.dims()));
  Shape b_shape = b ? b->shape() : Shape();
  ConvGeometry g = conv_geometry(node, x.shape(), w.shape(), b ? &b_shape : nullptr);
  const rt::DeformConvParams p =
      deform_conv_params(node, x.dims(), w.dims(), offset.dims(), mask ? &mask->dims() : nullptr, g.window);
  out[0] = Tensor(x.dtype(), g.out.values());
  visit_dtype(x.dtype(), [&]<class S>() {
    using C = compute_t<S>;
    if constexpr (std::is_floating_point_v<C>) {
      rt::deform_conv2d<S, C>(p, x.data<S>(), w.data<S>(), offset.data<S>(), b ? b->data<S>() : nullptr,
                              mask ? mask->data<S>() : nullptr, out[0].mutable_data<S>());
    } else {
      fail("{}: {} is not supported", node.describe(), dtype_name(x.dtype()));
    }
  });
}

}  // namespace

rt::DeformConvParams deform_conv_params(const Node& node, const std::vector<int64_t>& x,
                                        const std::vector<int64_t>& w, const std::vector<int64_t>& offset,
                                        const std::vector<int64_t>* mask) {
  Shape xs = Shape::of(x), ws = Shape::of(w);
  ConvGeometry g = conv_geometry(node, xs, ws, nullptr);
  return deform_conv_params(node, x, w, offset, mask, g.window);
}

Col2ImGeometry col2im_geometry(const Node& node, const std::vector<int64_t>& x, const std::vector<int64_t>& image,
                               const std::vector<int64_t>& block) {
  if (x.size() != 3) fail("{}: input must be 3-D (N, C * block, L), got {}", node.describe(), dims_str(x));
  const size_t n = image.size();
  if (n < 1 || n > 8 || block.size() != n)
    fail("{}: image_shape {} and block_shape {} must have the same length, 1 to 8", node.describe(),
         ints_str(image), ints_str(block));
  Col2ImGeometry g;
  g.image = image;
  g.block = block;
  int64_t kernel = 1, blocks = 1;
  for (size_t i = 0; i < n; ++i) {
    if (image[i] < 1 || image[i] > kMaxValue || block[i] < 1 || block[i] > kMaxValue)
      fail("{}: image_shape {} and block_shape {} must be positive", node.describe(), ints_str(image),
           ints_str(block));
    kernel *= block[i];
  }
  g.strides = ints_attr(node, "strides", n, 1, 1);
  g.dilations = ints_attr(node, "dilations", n, 1, 1);
  const std::vector<int64_t> pads = ints_attr(node, "pads", 2 * n, 0, 0);
  g.pads_begin.assign(pads.begin(), pads.begin() + static_cast<ptrdiff_t>(n));
  for (size_t i = 0; i < n; ++i) {
    const int64_t span = g.dilations[i] * (block[i] - 1) + 1;
    const int64_t padded = image[i] + pads[i] + pads[i + n];
    if (padded < span)
      fail("{}: block {} (dilated) does not fit the padded image {}", node.describe(), ints_str(block),
           ints_str(image));
    g.blocks.push_back((padded - span) / g.strides[i] + 1);
    blocks *= g.blocks.back();
  }
  if (x[1] % kernel != 0)
    fail("{}: input dim 1 ({}) is not a multiple of the block size {}", node.describe(), x[1], kernel);
  if (x[2] != blocks)
    fail("{}: input dim 2 is {}, but the image has {} sliding blocks", node.describe(), x[2], blocks);
  g.channels = x[1] / kernel;
  return g;
}

ConvTransposeGeometry conv_transpose_geometry(const Node& node, const std::vector<int64_t>& x,
                                              const std::vector<int64_t>& w) {
  if (x.size() < 3)
    fail("{}: input X must have rank >= 3 (N, C, spatial...), got {}", node.describe(), dims_str(x));
  if (w.size() != x.size())
    fail("{}: weight W has shape {}, expected rank {} like X {}", node.describe(), dims_str(w),
         x.size(), dims_str(x));
  const size_t n = x.size() - 2;
  if (n > 8) fail("{}: {} spatial dims, at most 8 are supported", node.describe(), n);
  ConvTransposeGeometry g;
  g.group = node.i("group");
  if (g.group < 1 || g.group > kMaxValue) fail("{}: group must be positive, got {}", node.describe(), g.group);
  if (x[1] >= 0 && x[1] % g.group != 0)
    fail("{}: group {} does not divide the {} input channels", node.describe(), g.group, x[1]);
  if (x[1] >= 0 && w[0] >= 0 && w[0] != x[1])
    fail("{}: weight W {} expects {} input channels, X {} has {}", node.describe(), dims_str(w), w[0],
         dims_str(x), x[1]);
  g.out_channels = w[1] >= 0 ? w[1] * g.group : -1;

  if (node.has_attr("kernel_shape")) {
    g.kernel = ints_attr(node, "kernel_shape", n, 1, 1);
    for (size_t i = 0; i < n; ++i)
      if (w[i + 2] >= 0 && w[i + 2] != g.kernel[i])
        fail("{}: kernel_shape {} does not match weight W {}", node.describe(), ints_str(g.kernel),
             dims_str(w));
  } else {
    for (size_t i = 0; i < n; ++i) {
      if (w[i + 2] < 0) fail("{}: the kernel dims of W {} must be known", node.describe(), dims_str(w));
      g.kernel.push_back(w[i + 2]);
    }
  }
  g.strides = ints_attr(node, "strides", n, 1, 1);
  g.dilations = ints_attr(node, "dilations", n, 1, 1);
  const std::vector<int64_t> out_pad = ints_attr(node, "output_padding", n, 0, 0);
  for (size_t i = 0; i < n; ++i)
    if (out_pad[i] >= std::max(g.strides[i], g.dilations[i]))
      fail("{}: output_padding {} must be less than the stride or the dilation of its axis",
           node.describe(), ints_str(out_pad));
  std::vector<int64_t> output_shape;
  if (node.has_attr("output_shape")) {
    output_shape = node.ints("output_shape");
    if (output_shape.size() == n + 2) output_shape.erase(output_shape.begin(), output_shape.begin() + 2);
    if (output_shape.size() != n)
      fail("{}: attribute 'output_shape' has {} values, expected {} (one per spatial axis)",
           node.describe(), node.ints("output_shape").size(), n);
    for (int64_t o : output_shape)
      if (o < 1 || o > kMaxValue)
        fail("{}: output_shape {} must be positive", node.describe(), ints_str(output_shape));
  }
  const std::string auto_pad = node.s("auto_pad");
  if (auto_pad != "NOTSET" && auto_pad != "VALID" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER")
    fail("{}: unknown auto_pad '{}' (expected NOTSET, SAME_UPPER, SAME_LOWER or VALID)", node.describe(),
         auto_pad);
  const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";

  g.pads_begin.assign(n, 0);
  std::vector<int64_t> pads_end(n, 0);
  if (node.has_attr("pads") && auto_pad != "VALID") {
    const std::vector<int64_t> pads = ints_attr(node, "pads", 2 * n, 0, 0);
    std::copy(pads.begin(), pads.begin() + static_cast<ptrdiff_t>(n), g.pads_begin.begin());
    std::copy(pads.begin() + static_cast<ptrdiff_t>(n), pads.end(), pads_end.begin());
  }
  g.out.assign(n, -1);
  for (size_t i = 0; i < n; ++i) {
    const int64_t in = x[i + 2];
    const int64_t span = (g.kernel[i] - 1) * g.dilations[i] + 1;
    if (same && !node.has_attr("pads")) {
      // ONNX: total padding for the output size (given, or in * stride), split per auto_pad.
      if (in < 0 && output_shape.empty()) continue;
      const int64_t target = output_shape.empty() ? in * g.strides[i] : output_shape[i];
      if (in < 0) {
        g.out[i] = target;
        continue;
      }
      const int64_t total = g.strides[i] * (in - 1) + out_pad[i] + span - target;
      g.pads_begin[i] = auto_pad == "SAME_UPPER" ? floor_div2(total) : total - floor_div2(total);
      g.out[i] = target;
      continue;
    }
    if (!output_shape.empty()) {
      g.out[i] = output_shape[i];
      continue;
    }
    if (in < 0) continue;
    g.out[i] = g.strides[i] * (in - 1) + out_pad[i] + span - g.pads_begin[i] - pads_end[i];
    if (g.out[i] < 1)
      fail("{}: output spatial dim {} would be {}: pads exceed the output", node.describe(), i, g.out[i]);
  }
  return g;
}

void register_conv_ops(Registry& r) {
  r.add(OpDef{
      .name = "Conv",
      .summary = "N-D convolution with groups, dilations, strides, pads and optional bias",
      .inputs = {{"X"}, {"W"}, {"B", true}},
      .outputs = {"Y"},
      .attrs = {{"auto_pad", AttrType::String, Attribute("NOTSET")},
                {"dilations", AttrType::Ints, std::nullopt, true},
                {"group", AttrType::Int, Attribute(int64_t{1})},
                {"kernel_shape", AttrType::Ints, std::nullopt, true},
                {"pads", AttrType::Ints, std::nullopt, true},
                {"strides", AttrType::Ints, std::nullopt, true}},
      .infer = infer_conv,
      .eval = eval_conv,
      .cost = conv_cost,
  });
  r.add(OpDef{
      .name = "ConvTranspose",
      .summary = "N-D transposed convolution with groups, output_padding and output_shape",
      .inputs = {{"X"}, {"W"}, {"B", true}},
      .outputs = {"Y"},
      .attrs = {{"auto_pad", AttrType::String, Attribute("NOTSET")},
                {"dilations", AttrType::Ints, std::nullopt, true},
                {"group", AttrType::Int, Attribute(int64_t{1})},
                {"kernel_shape", AttrType::Ints, std::nullopt, true},
                {"output_padding", AttrType::Ints, std::nullopt, true},
                {"output_shape", AttrType::Ints, std::nullopt, true},
                {"pads", AttrType::Ints, std::nullopt, true},
                {"strides", AttrType::Ints, std::nullopt, true}},
      .infer = infer_conv_transpose,
      .eval = eval_conv_transpose,
      .cost = conv_transpose_cost,
  });
  r.add(OpDef{
      .name = "DeformConv",
      .summary = "2-D convolution whose taps move by per-position offsets, with an optional mask",
      .inputs = {{"X"}, {"W"}, {"offset"}, {"B", true}, {"mask", true}},
      .outputs = {"Y"},
      .attrs = {{"dilations", AttrType::Ints, std::nullopt, true},
                {"group", AttrType::Int, Attribute(int64_t{1})},
                {"kernel_shape", AttrType::Ints, std::nullopt, true},
                {"offset_group", AttrType::Int, Attribute(int64_t{1})},
                {"pads", AttrType::Ints, std::nullopt, true},
                {"strides", AttrType::Ints, std::nullopt, true}},
      .infer = infer_deform_conv,
      .eval = eval_deform_conv,
      .cost = conv_cost,
  });
  r.add(OpDef{
      .name = "Col2Im",
      .summary = "sums sliding blocks (columns) back into an image, the inverse of im2col",
      .inputs = {{"input"}, {.name = "image_shape", .sets_output_shape = true},
                 {.name = "block_shape", .sets_output_shape = true}},
      .outputs = {"output"},
      .attrs = {{"dilations", AttrType::Ints, std::nullopt, true},
                {"pads", AttrType::Ints, std::nullopt, true},
                {"strides", AttrType::Ints, std::nullopt, true}},
      .infer = infer_col2im,
      .eval = eval_col2im,
  });
}

}  // namespace kiln::ir
