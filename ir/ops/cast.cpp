// Cast and CastLike: conversion between any two of kiln's dtypes. The scalar rule is
// kiln::rt::cast (runtime/include/kiln/rt/scalar_ops.h), shared with generated code.
#include "ir/ops/elementwise_eval.h"

namespace kiln::ir {

namespace {

void infer_cast(Node& n) {
  int64_t to = n.i("to");
  std::optional<DType> t = to >= 0 && to <= 64 ? dtype_from_code(static_cast<int>(to)) : std::nullopt;
  if (!t) fail("{}: cast to dtype code {} is not supported (kiln has no such dtype)", n.describe(), to);
  n.output(0)->set_type(*t, n.input(0)->shape());
}

void infer_cast_like(Node& n) { n.output(0)->set_type(n.input(1)->dtype(), n.input(0)->shape()); }

void convert(const Tensor& x, DType to, std::vector<Tensor>& out) {
  out[0] = Tensor(to, x.dims());
  visit_dtype(x.dtype(), [&]<class I>() {
    visit_dtype(to, [&]<class O>() {
      const I* in = x.data<I>();
      O* y = out[0].mutable_data<O>();
      for (int64_t i = 0; i < x.numel(); ++i) y[i] = kiln::rt::cast<O>(in[i]);
    });
  });
}

Cost cast_cost(const Node& node) { return {0, io_bytes(node)}; }

// Attributes that matter only for dtypes kiln lacks (float8 saturation, float8e8m0 rounding).
std::vector<AttrSpec> float8_attrs() {
  return {{"saturate", AttrType::Int, Attribute(int64_t{1})},
          {"round_mode", AttrType::String, Attribute("up")}};
}

}  // namespace

void register_cast_ops(Registry& r) {
  std::vector<AttrSpec> cast_attrs = float8_attrs();
  cast_attrs.insert(cast_attrs.begin(), {"to", AttrType::Int, std::nullopt});
  r.add(OpDef{
      .name = "Cast",
      .summary = "converts to dtype `to`: floats to integers truncate, anything to bool is != 0",
      .inputs = {{"input"}},
      .outputs = {"output"},
      .attrs = cast_attrs,
      .infer = infer_cast,
      .eval =
          [](const Node& n, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
            convert(*in[0], *dtype_from_code(static_cast<int>(n.i("to"))), out);
          },
      .cost = cast_cost,
  });
  r.add(OpDef{
      .name = "CastLike",
      .summary = "Cast to the dtype of `target_type`",
      .inputs = {{"input"}, {"target_type"}},
      .outputs = {"output"},
      .attrs = float8_attrs(),
      .infer = infer_cast_like,
      .eval =
          [](const Node& n, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
            convert(*in[0], in[1]->dtype(), out);
          },
      .cost = cast_cost,
  });
}

}  // namespace kiln::ir
