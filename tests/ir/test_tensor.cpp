// Tensor data, dims and shapes, and the broadcasting helper.
#include <doctest/doctest.h>

#include <cmath>

#include "ir/ops/op_helpers.h"
#include "ir/tensor.h"

using namespace kiln::ir;

TEST_CASE("tensor views are bounds-checked") {
  auto buf = std::make_shared<OwnedBuffer>(16);
  float* p = reinterpret_cast<float*>(buf->mutable_data());
  for (int i = 0; i < 4; ++i) p[i] = static_cast<float>(i);

  Tensor whole = Tensor::view(DType::F32, {2, 2}, buf, 0);
  CHECK(whole.numel() == 4);
  CHECK(whole.nbytes() == 16);
  CHECK(whole.data<float>()[3] == 3.f);
  Tensor tail = Tensor::view(DType::F32, {2}, buf, 8);
  CHECK(tail.data<float>()[0] == 2.f);
  Tensor empty = Tensor::view(DType::F32, {0}, buf, 16);
  CHECK(empty.numel() == 0);

  CHECK_THROWS_WITH_AS(Tensor::view(DType::F32, {4}, buf, 4),
                       "tensor data of 16 bytes at offset 4 exceeds its buffer of 16 bytes", kiln::Error);
  CHECK_THROWS_AS(Tensor::view(DType::F32, {1}, buf, 17), kiln::Error);
  CHECK_THROWS_AS(Tensor::view(DType::F64, {3}, buf, 0), kiln::Error);
  CHECK_THROWS_AS(Tensor::view(DType::F32, {-1}, buf, 0), kiln::Error);
}

namespace {
// Read-only memory, as a memory-mapped file gives.
class StaticBuffer final : public Buffer {
 public:
  const uint8_t* data() const override { return bytes_; }
  size_t size() const override { return sizeof(bytes_); }

 private:
  uint8_t bytes_[8] = {};
};
}  // namespace

TEST_CASE("views of read-only buffers are read-only; typed access is checked") {
  Tensor v = Tensor::view(DType::I32, {2}, std::make_shared<StaticBuffer>(), 0);
  CHECK_THROWS_WITH_AS(v.mutable_raw(), "tensor is read-only", kiln::Error);
  CHECK_THROWS_WITH_AS(v.data<float>(), "tensor of i32 accessed as f32", kiln::Error);
  Tensor owned(DType::I32, {2});
  owned.mutable_data<int32_t>()[1] = 7;
  CHECK(owned.as_int64(1) == 7);
  CHECK(owned.as_int64(0) == 0);  // zero-filled
}

TEST_CASE("reshaped shares the data and checks the count") {
  Tensor t = Tensor::from_vector<int64_t>(DType::I64, {2, 3}, {0, 1, 2, 3, 4, 5});
  Tensor r = t.reshaped({3, 2});
  CHECK(r.dims() == std::vector<int64_t>{3, 2});
  CHECK(r.raw() == t.raw());
  CHECK(r.to_int64_vector() == t.to_int64_vector());
  CHECK(t.reshaped({6}).rank() == 1);
  CHECK_THROWS_WITH_AS(t.reshaped({4}), "cannot reshape 6 elements to [4]", kiln::Error);
}

TEST_CASE("to_int64_vector and as_double convert every dtype") {
  CHECK(Tensor::from_vector<int>(DType::I32, {3}, {-1, 0, 5}).to_int64_vector() ==
        std::vector<int64_t>{-1, 0, 5});
  CHECK(Tensor::from_vector<int>(DType::U8, {2}, {200, 3}).to_int64_vector() == std::vector<int64_t>{200, 3});
  CHECK(Tensor::from_vector<float>(DType::F32, {2}, {2.75f, -1.5f}).to_int64_vector() ==
        std::vector<int64_t>{2, -1});
  CHECK(Tensor::from_vector<int>(DType::Bool, {2}, {1, 0}).to_int64_vector() == std::vector<int64_t>{1, 0});
  CHECK(Tensor::scalar_i64(42).to_int64_vector() == std::vector<int64_t>{42});
  CHECK(Tensor::scalar_i64(42).rank() == 0);
  CHECK(Tensor::from_vector<double>(DType::F64, {1}, {0.1}).as_double(0) == 0.1);
  CHECK_THROWS_WITH_AS(Tensor::from_vector<int>(DType::I32, {2}, {1}), "tensor of 2 elements given 1 values",
                       kiln::Error);
}

TEST_CASE("f16 and bf16 elements are stored rounded and read as float") {
  Tensor h = Tensor::from_vector<float>(DType::F16, {3}, {1.5f, -2.f, 65504.f});
  CHECK(h.nbytes() == 6);
  CHECK(h.data<f16>()[0].bits == 0x3e00);
  CHECK(static_cast<float>(h.data<f16>()[1]) == -2.f);
  CHECK(h.as_double(2) == 65504.0);
  CHECK(Tensor::from_vector<float>(DType::F16, {1}, {0.1f}).as_double(0) == doctest::Approx(0.1).epsilon(1e-3));

  Tensor b = Tensor::from_vector<float>(DType::BF16, {2}, {1.f, 3.015625f});
  CHECK(b.data<bf16>()[0].bits == 0x3f80);
  CHECK(b.as_double(1) == 3.015625);
  CHECK(b.to_int64_vector() == std::vector<int64_t>{1, 3});
  CHECK_THROWS_AS(b.data<f16>(), kiln::Error);
}

TEST_CASE("same_as compares dtype, dims and bytes") {
  Tensor a = Tensor::from_vector<float>(DType::F32, {2}, {1, 2});
  CHECK(a.same_as(Tensor::from_vector<float>(DType::F32, {2}, {1, 2})));
  CHECK_FALSE(a.same_as(Tensor::from_vector<float>(DType::F32, {2}, {1, 3})));
  CHECK_FALSE(a.same_as(Tensor::from_vector<float>(DType::F32, {1, 2}, {1, 2})));
  CHECK_FALSE(a.same_as(Tensor::from_vector<int>(DType::I32, {2}, {1, 2})));
}

TEST_CASE("dims are static, symbolic or unknown") {
  Dim s(3), n = Dim::symbol("N"), u = Dim::unknown();
  CHECK(s.is_static());
  CHECK(s.value() == 3);
  CHECK_FALSE(n.is_static());
  CHECK(n.name() == "N");
  CHECK(n.value() == -1);
  CHECK(u.name().empty());
  CHECK(n != u);
  CHECK(Dim::symbol("N") == n);

  Shape shape({Dim(1), Dim(3), n, u});
  CHECK(shape.str() == "[1,3,N,?]");
  CHECK(shape.rank() == 4);
  CHECK_FALSE(shape.is_static());
  CHECK_THROWS_WITH_AS(shape.numel(), "shape [1,3,N,?] is not static", kiln::Error);
  CHECK(Shape{2, 3, 4}.numel() == 24);
  CHECK(Shape{}.numel() == 1);
  CHECK(Shape{}.str() == "[]");
  CHECK(Shape::of({2, 5}).values() == std::vector<int64_t>{2, 5});
  CHECK(dims_str({4, 0}) == "[4,0]");
}

TEST_CASE("normalize_axis") {
  CHECK(normalize_axis(-1, 4) == 3);
  CHECK(normalize_axis(0, 4) == 0);
  CHECK(normalize_axis(3, 4) == 3);
  CHECK_FALSE(normalize_axis(4, 4).has_value());
  CHECK_FALSE(normalize_axis(-5, 4).has_value());
}

TEST_CASE("broadcast_shapes follows numpy rules, with symbols") {
  CHECK(broadcast_shapes(Shape{2, 1, 3}, Shape{4, 1}) == Shape{2, 4, 3});
  CHECK(broadcast_shapes(Shape{}, Shape{5}) == Shape{5});
  CHECK(broadcast_shapes(Shape{0, 1}, Shape{1, 7}) == Shape{0, 7});
  Dim n = Dim::symbol("N");
  CHECK(broadcast_shapes(Shape({n, Dim(3)}), Shape{1, 3}) == Shape({n, Dim(3)}));
  CHECK(broadcast_shapes(Shape({n}), Shape({n})) == Shape({n}));
  CHECK(broadcast_shapes(Shape({n}), Shape({Dim(4)})) == Shape{4});
  CHECK(broadcast_shapes(Shape({n}), Shape({Dim::symbol("M")})) == Shape({Dim::unknown()}));
  CHECK_THROWS_WITH_AS(broadcast_shapes(Shape{2}, Shape{3}), "shapes [2] and [3] cannot be broadcast",
                       kiln::Error);
  CHECK(broadcast_dims({3, 1}, {1, 4}) == std::vector<int64_t>{3, 4});
  CHECK(broadcast_strides({3, 1}, {2, 3, 4}) == std::vector<int64_t>{0, 1, 0});
  CHECK(contiguous_strides({2, 3, 4}) == std::vector<int64_t>{12, 4, 1});
}
