// Conv: N-D convolution (1-D, 2-D, 3-D in practice) with groups, dilations, strides, pads,
// auto_pad and an optional bias.
#include "ir/ops/op_helpers.h"
#include "ir/ops/window.h"

namespace kiln::ir {
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
  for (const Dim& d : window_out_dims(g.window)) dims.push_back(d);
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

  const int64_t batch = x.dims()[0], channels = x.dims()[1], maps = w.dims()[0];
  const int64_t group = node.i("group");
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

}  // namespace

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
}

}  // namespace kiln::ir
