// Initializers: typed fields, raw_data and external data, and every size checked.
#include "onnx_test_util.h"

using namespace kiln;
using namespace kiln::test;
using onnx::TensorProto;

namespace {

// A model whose only output is the initializer `t` (filled in by the caller).
struct ConstModel {
  ModelBuilder m;
  TensorProto* t;
  ConstModel(int data_type, const std::vector<int64_t>& dims) {
    t = m.initializer("t", data_type, dims);
    m.output("t", 0);
  }
  ir::Tensor import(const TempDir& dir) {
    auto g = frontend::import_onnx(m.save(dir));
    const ir::Value* v = g->find_value("t");
    REQUIRE(v);
    REQUIRE(v->is_constant());
    return v->constant();
  }
  std::string error(const TempDir& dir) { return import_error(m.save(dir)); }
};

void set_external(TensorProto* t, const std::string& location, const std::string& offset = "",
                  const std::string& length = "") {
  t->set_data_location(TensorProto::EXTERNAL);
  auto add = [&](const char* k, const std::string& v) {
    auto* e = t->add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  add("location", location);
  if (!offset.empty()) add("offset", offset);
  if (!length.empty()) add("length", length);
}

}  // namespace

TEST_CASE("typed fields of every supported dtype") {
  TempDir dir;
  SUBCASE("float_data") {
    ConstModel c(TensorProto::FLOAT, {2, 2});
    for (float v : {1.5f, -2.0f, 3.0f, 0.25f}) c.t->add_float_data(v);
    ir::Tensor t = c.import(dir);
    CHECK(t.dims() == std::vector<int64_t>{2, 2});
    CHECK(values_of<float>(t) == std::vector<float>{1.5f, -2.0f, 3.0f, 0.25f});
  }
  SUBCASE("double_data") {
    ConstModel c(TensorProto::DOUBLE, {2});
    c.t->add_double_data(1e300);
    c.t->add_double_data(-1);
    CHECK(values_of<double>(c.import(dir)) == std::vector<double>{1e300, -1});
  }
  SUBCASE("int64_data") {
    ConstModel c(TensorProto::INT64, {3});
    for (int64_t v : {int64_t{1} << 40, int64_t{-1}, int64_t{0}}) c.t->add_int64_data(v);
    CHECK(values_of<int64_t>(c.import(dir)) == std::vector<int64_t>{int64_t{1} << 40, -1, 0});
  }
  SUBCASE("int32_data for int32, int16, int8, uint8 and bool") {
    ConstModel i32(TensorProto::INT32, {2});
    i32.t->add_int32_data(-7);
    i32.t->add_int32_data(1 << 30);
    CHECK(values_of<int32_t>(i32.import(dir)) == std::vector<int32_t>{-7, 1 << 30});
    ConstModel i16(TensorProto::INT16, {2});
    i16.t->add_int32_data(-300);
    i16.t->add_int32_data(300);
    CHECK(values_of<int16_t>(i16.import(dir)) == std::vector<int16_t>{-300, 300});
    ConstModel i8(TensorProto::INT8, {2});
    i8.t->add_int32_data(-128);
    i8.t->add_int32_data(127);
    CHECK(values_of<int8_t>(i8.import(dir)) == std::vector<int8_t>{-128, 127});
    ConstModel u8(TensorProto::UINT8, {2});
    u8.t->add_int32_data(0);
    u8.t->add_int32_data(255);
    CHECK(values_of<uint8_t>(u8.import(dir)) == std::vector<uint8_t>{0, 255});
    ConstModel b(TensorProto::BOOL, {3});
    for (int v : {1, 0, 1}) b.t->add_int32_data(v);
    CHECK(values_of<bool>(b.import(dir)) == std::vector<bool>{true, false, true});
    ConstModel u16(TensorProto::UINT16, {2});
    u16.t->add_int32_data(0);
    u16.t->add_int32_data(65535);
    CHECK(values_of<uint16_t>(u16.import(dir)) == std::vector<uint16_t>{0, 65535});
  }
  SUBCASE("uint64_data for uint32 and uint64") {
    ConstModel u32(TensorProto::UINT32, {2});
    u32.t->add_uint64_data(7);
    u32.t->add_uint64_data(0xffffffffu);
    CHECK(values_of<uint32_t>(u32.import(dir)) == std::vector<uint32_t>{7, 0xffffffffu});
    ConstModel u64(TensorProto::UINT64, {2});
    u64.t->add_uint64_data(~uint64_t{0});
    u64.t->add_uint64_data(1);
    CHECK(values_of<uint64_t>(u64.import(dir)) == std::vector<uint64_t>{~uint64_t{0}, 1});
    ConstModel big(TensorProto::UINT32, {1});
    big.t->add_uint64_data(uint64_t{1} << 32);
    CHECK(big.error(dir) == dir.file("model.onnx") +
                                ": initializer 't': uint64_data value 4294967296 at index 0 is out "
                                "of range for u32");
  }
  SUBCASE("int32_data holds float16 and bfloat16 bit patterns") {
    ConstModel h(TensorProto::FLOAT16, {2});
    h.t->add_int32_data(0x3c00);  // 1.0
    h.t->add_int32_data(0xc000);  // -2.0
    ir::Tensor th = h.import(dir);
    CHECK(th.dtype() == ir::DType::F16);
    CHECK(th.as_double(0) == 1.0);
    CHECK(th.as_double(1) == -2.0);
    ConstModel b(TensorProto::BFLOAT16, {1});
    b.t->add_int32_data(0x4040);  // 3.0
    CHECK(b.import(dir).as_double(0) == 3.0);
  }
  SUBCASE("4- and 2-bit types are unpacked, the first element in the low bits") {
    ConstModel i4(22, {3});  // INT4 (codes by number: the system onnx headers may predate them)
    i4.t->set_raw_data(std::string("\x8f\x07", 2));  // nibbles f, 8, 7: -1, -8, 7
    ir::Tensor t4 = i4.import(dir);
    CHECK(t4.dtype() == ir::DType::I4);
    CHECK(t4.to_int64_vector() == std::vector<int64_t>{-1, -8, 7});
    ConstModel u2(25, {4});  // UINT2
    u2.t->add_int32_data(0xe4);  // 11 10 01 00
    CHECK(u2.import(dir).to_int64_vector() == std::vector<int64_t>{0, 1, 2, 3});
    ConstModel short_raw(21, {3});  // UINT4
    short_raw.t->set_raw_data(std::string("\x01", 1));
    CHECK(short_raw.error(dir) ==
          dir.file("model.onnx") + ": initializer 't': raw_data has 1 bytes, expected 2 (3 elements of u4)");
    ConstModel f8(17, {1});  // FLOAT8E4M3FN
    f8.t->add_int32_data(0x38);  // 1.0
    CHECK(f8.import(dir).as_double(0) == 1.0);
  }
  SUBCASE("a scalar and an empty tensor") {
    ConstModel s(TensorProto::FLOAT, {});
    s.t->add_float_data(4);
    ir::Tensor ts = s.import(dir);
    CHECK(ts.rank() == 0);
    CHECK(ts.as_double(0) == 4);
    ConstModel e(TensorProto::FLOAT, {0, 3});
    CHECK(e.import(dir).numel() == 0);
  }
}

TEST_CASE("raw_data") {
  TempDir dir;
  ConstModel f(TensorProto::FLOAT, {3});
  f.t->set_raw_data(bytes_of(std::vector<float>{1, 2, 3}));
  CHECK(values_of<float>(f.import(dir)) == std::vector<float>{1, 2, 3});
  ConstModel i(TensorProto::INT64, {2});
  i.t->set_raw_data(bytes_of(std::vector<int64_t>{-5, 9}));
  CHECK(values_of<int64_t>(i.import(dir)) == std::vector<int64_t>{-5, 9});
  ConstModel b(TensorProto::BOOL, {2});
  b.t->set_raw_data(std::string("\x00\x07", 2));  // any non-zero byte is true
  CHECK(values_of<bool>(b.import(dir)) == std::vector<bool>{false, true});
}

TEST_CASE("sizes that do not match the data are errors naming the file and the tensor") {
  TempDir dir;
  std::string path = dir.file("model.onnx");
  SUBCASE("raw_data too short") {
    ConstModel c(TensorProto::FLOAT, {2, 3});
    c.t->set_raw_data(std::string(20, '\0'));
    CHECK(c.error(dir) ==
          path + ": initializer 't': raw_data has 20 bytes, expected 24 (6 elements of f32)");
  }
  SUBCASE("typed field with too few values") {
    ConstModel c(TensorProto::FLOAT, {4});
    c.t->add_float_data(1);
    CHECK(c.error(dir) == path + ": initializer 't': has 1 values in float_data, expected 4");
  }
  SUBCASE("no data at all") {
    ConstModel c(TensorProto::INT64, {4});
    CHECK(c.error(dir) ==
          path + ": initializer 't': has no data (expected 4 values in int64_data or raw_data)");
  }
  SUBCASE("data in the wrong field") {
    ConstModel c(TensorProto::FLOAT, {1});
    c.t->add_int32_data(1);
    CHECK(c.error(dir) ==
          path + ": initializer 't': has no data (expected 1 values in float_data or raw_data)");
  }
  SUBCASE("negative dim") {
    ConstModel c(TensorProto::FLOAT, {2, -1});
    CHECK(c.error(dir) == path + ": initializer 't': negative dimension -1 in shape [2,-1]");
  }
  SUBCASE("dims whose product overflows") {
    ConstModel c(TensorProto::FLOAT, {int64_t{1} << 31, int64_t{1} << 31, int64_t{1} << 31});
    CHECK(c.error(dir).starts_with(path + ": initializer 't': shape ["));
  }
  SUBCASE("int8 value out of range") {
    ConstModel c(TensorProto::INT8, {1});
    c.t->add_int32_data(300);
    CHECK(c.error(dir) ==
          path + ": initializer 't': int32_data value 300 at index 0 is out of range for i8");
  }
  SUBCASE("unsupported dtypes") {
    for (auto [code, name] : std::vector<std::pair<int, std::string>>{
             {TensorProto::STRING, "string"}, {TensorProto::COMPLEX64, "complex64"},
             {TensorProto::COMPLEX128, "complex128"}}) {
      ConstModel c(code, {1});
      CHECK(c.error(dir) == path + ": initializer 't': unsupported data type " + name);
    }
  }
}

TEST_CASE("external data") {
  TempDir dir;
  std::string path = dir.file("model.onnx");
  // weights.bin: 8 bytes of padding, then 4 floats.
  std::string weights = std::string(8, 'x') + bytes_of(std::vector<float>{1, 2, 3, 4});
  write_file(dir.file("weights.bin"), weights);

  SUBCASE("with offset and length, memory-mapped") {
    ConstModel c(TensorProto::FLOAT, {2, 2});
    set_external(c.t, "weights.bin", "8", "16");
    CHECK(values_of<float>(c.import(dir)) == std::vector<float>{1, 2, 3, 4});
  }
  SUBCASE("in a subdirectory, without a length") {
    std::filesystem::create_directory(dir.path() / "data");
    write_file(dir.file("data/w.bin"), bytes_of(std::vector<float>{7, 8}));
    ConstModel c(TensorProto::FLOAT, {2});
    set_external(c.t, "data/w.bin");
    CHECK(values_of<float>(c.import(dir)) == std::vector<float>{7, 8});
  }
  SUBCASE("an absolute path") {
    ConstModel c(TensorProto::FLOAT, {4});
    set_external(c.t, dir.file("weights.bin"), "8");
    CHECK(c.error(dir) == path + ": initializer 't': external data location '" + dir.file("weights.bin") +
                              "' is an absolute path; it must be relative to the model's directory");
  }
  SUBCASE("a path leaving the directory") {
    ConstModel c(TensorProto::FLOAT, {4});
    set_external(c.t, "../weights.bin", "8");
    CHECK(c.error(dir) ==
          path + ": initializer 't': external data location '../weights.bin' leaves the model's directory");
  }
  SUBCASE("a symlink leaving the directory") {
    TempDir other;
    write_file(other.file("secret.bin"), weights);
    std::filesystem::create_symlink(other.file("secret.bin"), dir.file("link.bin"));
    ConstModel c(TensorProto::FLOAT, {4});
    set_external(c.t, "link.bin", "8");
    CHECK(c.error(dir).starts_with(
        path + ": initializer 't': external data location 'link.bin' resolves to '"));
  }
  SUBCASE("a missing file") {
    ConstModel c(TensorProto::FLOAT, {4});
    set_external(c.t, "gone.bin");
    CHECK(c.error(dir) == path + ": initializer 't': external data file '" + dir.file("gone.bin") +
                              "' not found");
  }
  SUBCASE("a truncated file") {
    ConstModel c(TensorProto::FLOAT, {4});
    set_external(c.t, "weights.bin", "16", "16");
    CHECK(c.error(dir) == path + ": initializer 't': external data of 16 bytes at offset 16 is beyond "
                                 "the end of 'weights.bin' (24 bytes)");
    ConstModel d(TensorProto::FLOAT, {4});
    set_external(d.t, "weights.bin", "100");
    CHECK(d.error(dir) == path + ": initializer 't': external data offset 100 is beyond the end of "
                                 "'weights.bin' (24 bytes)");
  }
  SUBCASE("a length that does not match the shape") {
    ConstModel c(TensorProto::FLOAT, {4});
    set_external(c.t, "weights.bin", "12");  // 12 bytes left
    CHECK(c.error(dir) ==
          path + ": initializer 't': external data has 12 bytes, expected 16 (4 elements of f32)");
  }
  SUBCASE("an offset that is not a number") {
    ConstModel c(TensorProto::FLOAT, {4});
    set_external(c.t, "weights.bin", "-8");
    CHECK(c.error(dir) ==
          path + ": initializer 't': external data offset '-8' is not a non-negative integer");
  }
  SUBCASE("an unaligned offset is copied, not viewed") {
    std::string odd = std::string(3, 'x') + bytes_of(std::vector<float>{5, 6});
    write_file(dir.file("odd.bin"), odd);
    ConstModel c(TensorProto::FLOAT, {2});
    set_external(c.t, "odd.bin", "3", "8");
    CHECK(values_of<float>(c.import(dir)) == std::vector<float>{5, 6});
  }
}
