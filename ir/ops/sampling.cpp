// Sampling at computed coordinates: GridSample (nearest, linear, cubic; zeros, border,
// reflection padding) and AffineGrid, which builds GridSample's grid from affine matrices.
// Kernels: kiln::rt::grid_sample and affine_grid, shared with the generated code.
#include "ir/ops/sampling.h"

#include "ir/ops/op_helpers.h"

namespace kiln::ir {
namespace {

std::vector<int64_t> dims_or_unknown(const Shape& s) {
  std::vector<int64_t> v;
  for (const Dim& d : s.dims()) v.push_back(d.is_static() ? d.value() : -1);
  return v;
}

void infer_grid_sample(Node& node) {
  require_float(node, 1);
  const Shape& x = node.input(0)->shape();
  const Shape& grid = node.input(1)->shape();
  std::vector<int64_t> in, out;
  grid_sample_params(node, dims_or_unknown(x), dims_or_unknown(grid), in, out);
  std::vector<Dim> dims = {x[0], x[1]};
  for (size_t d = 1; d + 1 < grid.rank(); ++d) dims.push_back(grid[d]);
  node.output(0)->set_type(node.input(0)->dtype(), Shape(std::move(dims)));
}

void eval_grid_sample(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  const Tensor& grid = *in[1];
  std::vector<int64_t> in_dims, out_dims;
  const rt::GridSampleParams p = grid_sample_params(node, x.dims(), grid.dims(), in_dims, out_dims);
  std::vector<int64_t> y_dims = {x.dims()[0], x.dims()[1]};
  y_dims.insert(y_dims.end(), out_dims.begin(), out_dims.end());
  out[0] = Tensor(x.dtype(), y_dims);
  if (grid.dtype() != x.dtype())
    fail("{}: grid is {} and X {}; only the same type is supported", node.describe(), dtype_name(grid.dtype()),
         dtype_name(x.dtype()));
  visit_dtype(x.dtype(), [&]<class S>() {
    using C = compute_t<S>;
    if constexpr (std::is_floating_point_v<C>) {
      rt::grid_sample<S, C>(p, x.data<S>(), grid.data<S>(), out[0].mutable_data<S>());
    } else {
      fail("{}: {} is not supported", node.describe(), dtype_name(x.dtype()));
    }
  });
}

void infer_affine_grid(Node& node) {
  require_float(node, 0);
  require_dtype(node, 1, {DType::I64});
  const Shape& theta = node.input(0)->shape();
  if (theta.rank() != 3) fail("{}: theta must be 3-D (N, rank, rank + 1), got {}", node.describe(), theta.str());
  const Value* size = node.input(1);
  if (size->is_constant()) {
    const Tensor& s = size->constant();
    std::vector<int64_t> sv;
    for (int64_t i = 0; i < s.numel(); ++i) sv.push_back(static_cast<int64_t>(s.as_double(i)));
    node.output(0)->set_type(node.input(0)->dtype(), Shape::of(affine_grid_dims(node, dims_or_unknown(theta), sv)));
    return;
  }
  const Shape& ss = size->shape();
  if (ss.rank() != 1 || !ss[0].is_static())
    fail("{}: size must be a 1-D tensor of known length, got {}", node.describe(), ss.str());
  const int64_t rank = ss[0].value() - 2;
  std::vector<Dim> dims(static_cast<size_t>(rank + 2), Dim::unknown());
  dims.back() = Dim(rank);
  node.output(0)->set_type(node.input(0)->dtype(), Shape(std::move(dims)));
}

void eval_affine_grid(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  const Tensor& theta = *in[0];
  const Tensor& size = *in[1];
  std::vector<int64_t> sv;
  for (int64_t i = 0; i < size.numel(); ++i) sv.push_back(static_cast<int64_t>(size.as_double(i)));
  const std::vector<int64_t> dims = affine_grid_dims(node, theta.dims(), sv);
  out[0] = Tensor(theta.dtype(), dims);
  const int64_t rank = dims.back();
  const std::vector<int64_t> spatial(sv.begin() + 2, sv.end());
  visit_dtype(theta.dtype(), [&]<class S>() {
    if constexpr (std::is_floating_point_v<compute_t<S>>) {
      rt::affine_grid<S>(dims[0], rank, spatial.data(), node.i("align_corners") != 0, theta.data<S>(),
                         out[0].mutable_data<S>());
    } else {
      fail("{}: {} is not supported", node.describe(), dtype_name(theta.dtype()));
    }
  });
}

}  // namespace

rt::GridSampleParams grid_sample_params(const Node& node, const std::vector<int64_t>& x,
                                        const std::vector<int64_t>& grid, std::vector<int64_t>& in,
                                        std::vector<int64_t>& out) {
  if (x.size() < 3 || x.size() > 10)
    fail("{}: X must have rank 3 to 10 (N, C, spatial...), got {}", node.describe(), dims_str(x));
  if (grid.size() != x.size())
    fail("{}: grid has shape {}, expected rank {} like X {}", node.describe(), dims_str(grid), x.size(),
         dims_str(x));
  const int64_t rank = static_cast<int64_t>(x.size()) - 2;
  if (grid.back() >= 0 && grid.back() != rank)
    fail("{}: grid's last dim is {}, expected {} (one coordinate per spatial axis of X)", node.describe(),
         grid.back(), rank);
  if (x[0] >= 0 && grid[0] >= 0 && x[0] != grid[0])
    fail("{}: grid has batch {}, X has {}", node.describe(), grid[0], x[0]);
  rt::GridSampleParams p{};
  const std::string& mode = node.s("mode");
  if (mode == "nearest") p.mode = rt::GridSampleMode::Nearest;
  else if (mode == "linear") p.mode = rt::GridSampleMode::Linear;
  else if (mode == "cubic") p.mode = rt::GridSampleMode::Cubic;
  else fail("{}: mode '{}' is not one of nearest, linear, cubic", node.describe(), mode);
  if (p.mode == rt::GridSampleMode::Cubic && rank != 2)
    fail("{}: cubic mode needs 2 spatial dims, X {} has {}", node.describe(), dims_str(x), rank);
  const std::string& pad = node.s("padding_mode");
  if (pad == "zeros") p.padding = rt::GridSamplePadding::Zeros;
  else if (pad == "border") p.padding = rt::GridSamplePadding::Border;
  else if (pad == "reflection") p.padding = rt::GridSamplePadding::Reflection;
  else fail("{}: padding_mode '{}' is not one of zeros, border, reflection", node.describe(), pad);
  const int64_t align = node.i("align_corners");
  if (align != 0 && align != 1) fail("{}: align_corners must be 0 or 1, got {}", node.describe(), align);
  in.assign(x.begin() + 2, x.end());
  out.assign(grid.begin() + 1, grid.end() - 1);
  p.N = x[0];
  p.C = x[1];
  p.rank = rank;
  p.in = in.data();
  p.out = out.data();
  p.align_corners = align != 0;
  return p;
}

std::vector<int64_t> affine_grid_dims(const Node& node, const std::vector<int64_t>& theta,
                                      const std::vector<int64_t>& size) {
  if (size.size() != 4 && size.size() != 5)
    fail("{}: size has {} values, expected 4 (N, C, H, W) or 5 (N, C, D, H, W)", node.describe(), size.size());
  const int64_t rank = static_cast<int64_t>(size.size()) - 2;
  if (theta.size() != 3 || (theta[1] >= 0 && theta[1] != rank) || (theta[2] >= 0 && theta[2] != rank + 1))
    fail("{}: theta has shape {}, expected [N,{},{}] for size {}", node.describe(), dims_str(theta), rank,
         rank + 1, ints_str(size));
  if (theta[0] >= 0 && theta[0] != size[0])
    fail("{}: theta has batch {}, size says {}", node.describe(), theta[0], size[0]);
  std::vector<int64_t> dims = {size[0]};
  for (int64_t d = 2; d < static_cast<int64_t>(size.size()); ++d) {
    if (size[d] < 1 || size[d] > (int64_t{1} << 31))
      fail("{}: size {} has a spatial dim out of range", node.describe(), ints_str(size));
    dims.push_back(size[d]);
  }
  dims.push_back(rank);
  return dims;
}

void register_sampling_ops(Registry& r) {
  r.add(OpDef{
      .name = "GridSample",
      .summary = "samples X at normalized grid coordinates (nearest, linear, cubic)",
      .inputs = {{"X"}, {"grid"}},
      .outputs = {"Y"},
      .attrs = {{"align_corners", AttrType::Int, Attribute(int64_t{0})},
                {"mode", AttrType::String, Attribute("linear")},
                {"padding_mode", AttrType::String, Attribute("zeros")}},
      .infer = infer_grid_sample,
      .eval = eval_grid_sample,
  });
  r.add(OpDef{
      .name = "AffineGrid",
      .summary = "normalized sampling grid from affine matrices theta, for GridSample",
      .inputs = {{"theta"}, {.name = "size", .sets_output_shape = true}},
      .outputs = {"grid"},
      .attrs = {{"align_corners", AttrType::Int, Attribute(int64_t{0})}},
      .infer = infer_affine_grid,
      .eval = eval_affine_grid,
  });
}

}  // namespace kiln::ir
