// Cast and CastLike: conversion between any two of kiln's dtypes, the storage-only ones
// (float8, float4, int4, int2) included. The scalar rule is kiln::rt::convert
// (runtime/include/kiln/rt/lowp.h; kiln::rt::cast for the others), shared with generated code.
// BitCast: the same bytes read as another dtype.
#include <cstring>

#include "ir/ops/elementwise_eval.h"

namespace kiln::ir {

namespace {

kiln::rt::RoundMode round_mode(const Node& n) {
  const std::string& m = n.s("round_mode");
  if (m == "up") return kiln::rt::RoundMode::up;
  if (m == "down") return kiln::rt::RoundMode::down;
  if (m == "nearest") return kiln::rt::RoundMode::nearest;
  fail("{}: round_mode '{}' is not one of up, down, nearest", n.describe(), m);
}

void infer_cast(Node& n) {
  round_mode(n);
  int64_t to = n.i("to");
  std::optional<DType> t = to >= 0 && to <= 64 ? dtype_from_code(static_cast<int>(to)) : std::nullopt;
  if (!t) fail("{}: cast to dtype code {} is not supported (kiln has no such dtype)", n.describe(), to);
  n.output(0)->set_type(*t, n.input(0)->shape());
}

void infer_cast_like(Node& n) {
  round_mode(n);
  n.output(0)->set_type(n.input(1)->dtype(), n.input(0)->shape());
}

void convert(const Node& n, const Tensor& x, DType to, std::vector<Tensor>& out) {
  const kiln::rt::CastMode mode{n.i("saturate") != 0, round_mode(n)};
  out[0] = Tensor(to, x.dims());
  visit_any_dtype(x.dtype(), [&]<class I>() {
    visit_any_dtype(to, [&]<class O>() {
      const I* in = x.data<I>();
      O* y = out[0].mutable_data<O>();
      for (int64_t i = 0; i < x.numel(); ++i) y[i] = kiln::rt::convert<O>(in[i], mode);
    });
  });
}

Cost cast_cost(const Node& node) { return {0, io_bytes(node)}; }

// BitCast: the same bytes read as another dtype of the same width. The 4- and 2-bit types
// are refused: kiln holds them one per byte, so their bytes are not ONNX's.
DType bitcast_target(const Node& n) {
  int64_t to = n.i("to");
  std::optional<DType> t = to >= 0 && to <= 64 ? dtype_from_code(static_cast<int>(to)) : std::nullopt;
  if (!t) fail("{}: bitcast to dtype code {} is not supported (kiln has no such dtype)", n.describe(), to);
  return *t;
}

void infer_bitcast(Node& n) {
  const DType from = n.input(0)->dtype(), to = bitcast_target(n);
  for (DType t : {from, to})
    if (t == DType::I4 || t == DType::U4 || t == DType::I2 || t == DType::U2 || t == DType::F4E2M1)
      fail("{}: bitcast of {} is not supported (kiln stores it unpacked)", n.describe(), dtype_name(t));
  if (dtype_size(from) != dtype_size(to))
    fail("{}: bitcast needs dtypes of the same width: {} is {} bytes, {} is {}", n.describe(),
         dtype_name(from), dtype_size(from), dtype_name(to), dtype_size(to));
  n.output(0)->set_type(to, n.input(0)->shape());
}

void eval_bitcast(const Node& n, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  out[0] = Tensor(bitcast_target(n), in[0]->dims());
  auto* y = static_cast<uint8_t*>(out[0].mutable_raw());
  if (out[0].nbytes()) std::memcpy(y, in[0]->raw(), out[0].nbytes());
  if (out[0].dtype() == DType::Bool)
    for (size_t i = 0; i < out[0].nbytes(); ++i) y[i] = y[i] != 0;  // kiln's bools are 0 or 1
}

// Attributes that matter only for float8 results: saturation (clamp instead of infinity or
// NaN) and how e8m0 rounds.
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
            convert(n, *in[0], *dtype_from_code(static_cast<int>(n.i("to"))), out);
          },
      .cost = cast_cost,
      .storage_dtypes = true,
      .elementwise = true,
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
            convert(n, *in[0], in[1]->dtype(), out);
          },
      .cost = cast_cost,
      .storage_dtypes = true,
  });
  r.add(OpDef{
      .name = "BitCast",
      .summary = "the same bytes as dtype `to` of the same width",
      .inputs = {{"input"}},
      .outputs = {"output"},
      .attrs = {{"to", AttrType::Int, std::nullopt}},
      .infer = infer_bitcast,
      .eval = eval_bitcast,
      .cost = cast_cost,
      .storage_dtypes = true,
  });
}

}  // namespace kiln::ir
