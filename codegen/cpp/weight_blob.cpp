#include "codegen/cpp/weight_blob.h"

#include <cmath>

#include <fmt/format.h>

#include "kiln/rt/dtype.h"
#include "kiln/rt/gemm.h"

namespace kiln::codegen::cpp {

namespace {

constexpr size_t kAlign = 64;

size_t align_up(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

}  // namespace

size_t WeightBlob::append(const void* data, size_t bytes) {
  bytes_.resize(align_up(bytes_.size()), '\0');
  const size_t offset = bytes_.size();
  bytes_.append(static_cast<const char*>(data), bytes);
  return offset;
}

// fp16 keeps a tensor in fp32 when one of its finite values would overflow to infinity
// (beyond 65504: attention masks of -1e9, for instance); bf16 has fp32's range.
bool WeightBlob::halves(const float* data, size_t count) const {
  if (!passes::halves_weights(precision_) || count < kMinHalvedElements) return false;
  if (precision_ == passes::Precision::FP16)
    for (size_t i = 0; i < count; ++i)
      if (std::isfinite(data[i]) && std::isinf(static_cast<float>(kiln::rt::f16(data[i])))) return false;
  return true;
}

Location WeightBlob::add_floats(const float* data, size_t count) {
  if (!halves(data, count)) return {Location::Weight, 0, append(data, count * sizeof(float))};
  std::vector<uint16_t> half(count);
  const bool fp16 = precision_ == passes::Precision::FP16;
  for (size_t i = 0; i < count; ++i)
    half[i] = fp16 ? kiln::rt::f32_to_f16_bits(data[i]) : kiln::rt::f32_to_bf16_bits(data[i]);
  const size_t from = append(half.data(), count * sizeof(uint16_t));
  const size_t to = align_up(widened_bytes_);
  widened_bytes_ = to + count * sizeof(float);
  ranges_.push_back({from, to, count});
  return {Location::Widened, 0, to};
}

WeightBlob::GemmB WeightBlob::add_gemm_b_bf16(const std::vector<uint16_t>& packed, int64_t K, int64_t N,
                                              bool conv) {
  const size_t from = append(packed.data(), packed.size() * sizeof(uint16_t));
  const size_t to = align_up(widened_gemm_b_bytes_);
  const kiln::rt::WidenGemmB range{from, to, K, N, conv};
  widened_gemm_b_bytes_ = to + kiln::rt::gemm_bf16_widened_floats(range) * sizeof(float);
  gemm_b_bytes_ += packed.size() * sizeof(uint16_t);
  gemm_b_.push_back(range);
  return {from, to};
}

Location WeightBlob::add(const ir::Tensor& t) {
  if (t.dtype() == ir::DType::F32) return add_floats(t.data<float>(), static_cast<size_t>(t.numel()));
  return {Location::Weight, 0, append(t.raw(), t.nbytes())};
}

void WeightBlob::pad_if_empty() {
  if (bytes_.empty()) bytes_.assign(kAlign, '\0');
}

namespace {

// The MatMul/Gemm Bs and 1x1 Conv weights of a bf16 model: read as they are stored where the
// CPU has native bf16, widened into their own buffer (XB) at context creation elsewhere.
void add_gemm_b_code(const WeightBlob& blob, WidenCode& c) {
  std::string ranges;
  for (const kiln::rt::WidenGemmB& r : blob.gemm_b()) ranges += fmt::format("    {{{}, {}, {}, {}, {}}},\n", r.from, r.to, r.K, r.N, r.conv ? "true" : "false");
  c.member += "  unsigned char* widened_b = nullptr;  // the bf16 MatMul/Gemm/1x1 Conv weights as fp32, without native bf16\n";
  c.decls += fmt::format(
      "constexpr size_t kWidenedGemmBBytes = {};\n"
      "// bf16 MatMul/Gemm Bs and 1x1 Conv weights: byte offset in the weights, in the widened buffer, K, N, conv.\n"
      "const kiln::rt::WidenGemmB kWidenGemmB[] = {{\n{}}};\n",
      align_up(blob.widened_gemm_b_bytes()), ranges);
  c.create += fmt::format(
      "  if (!kiln::rt::gemm_bf16_native()) {{\n"
      "    ctx->widened_b = static_cast<unsigned char*>(std::aligned_alloc(64, kWidenedGemmBBytes));\n"
      "    if (!ctx->widened_b || !kiln::rt::widen_gemm_b_weights(ctx->weights, ctx->widened_b, kWidenGemmB, {})) {{\n"
      "      std::free(ctx->widened_b);\n"
      "      ctx->widened_b = nullptr;\n"
      "      ctx->error = \"out of memory widening the bf16 MatMul/Gemm/Conv weights to fp32\";\n"
      "      return ctx;\n"
      "    }}\n"
      "  }}\n",
      blob.gemm_b().size());
  c.check += " || (!ctx->widened_b && !kiln::rt::gemm_bf16_native())";
  c.run += "  const unsigned char* const XB = ctx->widened_b;\n  (void)XB;\n";
  c.destroy += "  std::free(ctx->widened_b);\n";
  c.note += fmt::format(
      "// {} MatMul/Gemm/1x1 Conv weights are stored as packed bf16 ({} bytes), computed in bf16 where the CPU has\n"
      "// AVX512_BF16 and widened to fp32 ({} bytes) when the context is created elsewhere.\n",
      blob.gemm_b().size(), blob.gemm_b_bytes(), blob.widened_gemm_b_bytes());
}

}  // namespace

WidenCode widen_code(const WeightBlob& blob) {
  WidenCode c;
  if (blob.widened().empty() && blob.gemm_b().empty()) return c;
  c.include = "#include \"kiln/rt/widen.h\"\n";
  if (!blob.widened().empty()) {
    const std::string_view kind = passes::precision_name(blob.precision());
    std::string ranges;
    for (const kiln::rt::WidenRange& r : blob.widened()) ranges += fmt::format("    {{{}, {}, {}}},\n", r.from, r.to, r.count);
    c.member = "  unsigned char* widened = nullptr;  // the halved weights as fp32 (kWidenedBytes)\n";
    c.decls = fmt::format(
        "constexpr size_t kWidenedBytes = {};\n"
        "// {} weights: byte offset in the weights, byte offset in the widened buffer, count.\n"
        "const kiln::rt::WidenRange kWiden[] = {{\n{}}};\n",
        align_up(blob.widened_bytes()), kind, ranges);
    c.create = fmt::format(
        "  ctx->widened = static_cast<unsigned char*>(std::aligned_alloc(64, kWidenedBytes));\n"
        "  if (!ctx->widened) {{\n"
        "    ctx->error = \"out of memory widening the {} weights to fp32\";\n"
        "    return ctx;\n"
        "  }}\n"
        "  kiln::rt::widen_weights(ctx->weights, ctx->widened, kWiden, {}, kiln::rt::widen_{});\n",
        kind, blob.widened().size(), kind == "fp16" ? "f16" : "bf16");
    c.check = " || !ctx->widened";
    c.run = "  const unsigned char* const X = ctx->widened;\n  (void)X;\n";
    c.destroy = "  std::free(ctx->widened);\n";
    c.note = fmt::format(
        "// {} of its float weights are stored as {} ({} bytes as fp32, widened when the context is created).\n",
        blob.widened().size(), kind, blob.widened_bytes());
  }
  if (!blob.gemm_b().empty()) add_gemm_b_code(blob, c);
  return c;
}

}  // namespace kiln::codegen::cpp
