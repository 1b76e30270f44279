// The restricted unpickler: hand-assembled pickles for each opcode family and for hostile
// inputs, then the pickles of real PyTorch archives (tests/frontend/data/torch/).
#include <doctest/doctest.h>

#include <cmath>

#include "frontend/torchscript/pickle.h"
#include "frontend/torchscript/zip_archive.h"
#include "torch_test_util.h"

using namespace kiln::frontend::torchscript;
using kiln::ir::DType;
using kiln::test::error_of;
using kiln::test::Pickle;
using kiln::test::Storages;

namespace {

PyRef load(const Pickle& p, Storages* storages = nullptr, const PickleLimits& limits = {}) {
  StorageLoader loader;
  if (storages) loader = storages->loader();
  return unpickle(p.b, "t.pkl", loader, limits);
}

std::string load_error(const Pickle& p, Storages* storages = nullptr, const PickleLimits& limits = {}) {
  return error_of([&] { load(p, storages, limits); });
}

std::vector<double> values_of(const kiln::ir::Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(t.as_double(i));
  return v;
}

// ('storage', FloatStorage, key, 'cpu', numel), memoized at `memo` the first time.
auto float_storage(const std::string& key, int64_t numel, uint8_t memo) {
  return [=](Pickle& p) { p.storage("FloatStorage", key, numel).put(memo); };
}
auto memo_get(uint8_t memo) {
  return [=](Pickle& p) { p.get(memo); };
}

std::vector<float> iota(int n) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i) v[i] = static_cast<float>(i);
  return v;
}

}  // namespace

TEST_CASE("pickle: scalars") {
  auto one = [](auto build) {
    Pickle p;
    build(p);
    return load(p.stop());
  };
  CHECK(one([](Pickle& p) { p.none(); })->kind == PyKind::None);
  CHECK(one([](Pickle& p) { p.boolean(true); })->b);
  CHECK_FALSE(one([](Pickle& p) { p.boolean(false); })->b);
  CHECK(one([](Pickle& p) { p.int1(200); })->i == 200);
  CHECK(one([](Pickle& p) { p.int2(60000); })->i == 60000);
  CHECK(one([](Pickle& p) { p.int4(-5); })->i == -5);
  CHECK(one([](Pickle& p) { p.long1(INT64_MIN); })->i == INT64_MIN);
  CHECK(one([](Pickle& p) { p.long1(-2, 1); })->i == -2);
  CHECK(one([](Pickle& p) { p.long1(0xffff, 3); })->i == 0xffff);
  CHECK(one([](Pickle& p) { p.op(0x8a).le(0, 1); })->i == 0);  // LONG1 of no bytes
  CHECK(one([](Pickle& p) { p.op(0x8b).le(2, 4).le(0x8000, 2); })->i == -32768);  // LONG4
  CHECK(one([](Pickle& p) { p.real(-1.25e300); })->f == -1.25e300);
  auto s = one([](Pickle& p) { p.str("weight"); });
  CHECK(s->kind == PyKind::String);
  CHECK(s->s == "weight");
  CHECK(one([](Pickle& p) { p.op(0x8c).le(2, 1).raw("ab"); })->s == "ab");              // SHORT_BINUNICODE
  CHECK(one([](Pickle& p) { p.op(0x8d).le(3, 8).raw("abc"); })->s == "abc");            // BINUNICODE8
  CHECK(one([](Pickle& p) { p.op('U').le(1, 1).raw("z"); })->s == "z");                 // SHORT_BINSTRING
  CHECK(one([](Pickle& p) { p.op('T').le(2, 4).raw("yz"); })->s == "yz");               // BINSTRING
  auto b = one([](Pickle& p) { p.op('C').le(3, 1).raw(std::string("\0\1\2", 3)); });  // SHORT_BINBYTES
  CHECK(b->kind == PyKind::Bytes);
  CHECK(b->s == std::string("\0\1\2", 3));
  CHECK(one([](Pickle& p) { p.op('B').le(1, 4).raw("x"); })->s == "x");    // BINBYTES
  CHECK(one([](Pickle& p) { p.op(0x8e).le(1, 8).raw("y"); })->s == "y");   // BINBYTES8
}

TEST_CASE("pickle: tuples, lists and dicts") {
  Pickle p;
  // ((), (1,), (1, 2), (1, 2, 3), (4, 5), [6, 7, 8, 9], {'a': 1, 'b': [2]}, {'c': 3})
  p.mark().empty_tuple();
  p.int1(1).op(0x85);
  p.int1(1).int1(2).op(0x86);
  p.int1(1).int1(2).int1(3).op(0x87);
  p.mark().int1(4).int1(5).tuple();
  p.op(']').int1(6).op('a').mark().int1(7).int1(8).op('e').mark().int1(9).op('l').op('a');
  p.op('}').str("a").int1(1).op('s').mark().str("b").op(']').int1(2).op('a').op('u');
  p.mark().str("c").int1(3).op('d');
  p.tuple().stop();
  PyRef r = load(p);
  REQUIRE(r->kind == PyKind::Tuple);
  REQUIRE(r->items.size() == 8);
  CHECK(r->items[0]->items.empty());
  CHECK(r->items[1]->items.size() == 1);
  CHECK(r->items[2]->items[1]->i == 2);
  CHECK(r->items[3]->items[2]->i == 3);
  CHECK(r->items[4]->items[0]->i == 4);
  const PyRef& list = r->items[5];
  REQUIRE(list->kind == PyKind::List);
  REQUIRE(list->items.size() == 4);
  CHECK(list->items[2]->i == 8);
  CHECK(list->items[3]->kind == PyKind::List);
  const PyRef& d = r->items[6];
  REQUIRE(d->kind == PyKind::Dict);
  CHECK(d->attr("a")->i == 1);
  CHECK(d->attr("b")->items[0]->i == 2);
  CHECK(d->attr("nope") == nullptr);
  CHECK(r->items[7]->attr("c")->i == 3);
}

TEST_CASE("pickle: memo, stack opcodes, frames and newer protocols") {
  Pickle p;
  p.b.clear();
  p.op(0x80).op(4).op(0x95).le(40, 8);  // PROTO 4, FRAME
  p.mark();
  p.str("x").put(0).op('r').le(1000, 4);         // BINPUT, LONG_BINPUT
  p.str("y").op(0x94);                           // MEMOIZE: index 2, the memo's size
  p.get(0).op('j').le(1000, 4).get(2);           // BINGET, LONG_BINGET
  p.op('2');                                     // DUP
  p.int1(9).op('0');                             // POP
  p.mark().int1(1).int1(2).op('1');              // POP_MARK
  p.tuple().stop();
  PyRef r = load(p);
  REQUIRE(r->items.size() == 6);
  CHECK(r->items[0]->s == "x");
  CHECK(r->items[1]->s == "y");
  CHECK(r->items[2] == r->items[0]);  // the same object, not a copy
  CHECK(r->items[3] == r->items[0]);
  CHECK(r->items[4]->s == "y");
  CHECK(r->items[5] == r->items[4]);
}

TEST_CASE("pickle: malformed pickles are refused with the byte offset") {
  auto err = [](const std::string& body) {
    Pickle p;
    p.raw(body);
    return load_error(p);
  };
  CHECK(err("I12\n.") == "t.pkl: at byte 2: opcode 0x49 ('I') is not supported");
  CHECK(err("K") == "t.pkl: at byte 2: opcode 0x4b needs 1 more bytes, the pickle has 0");
  CHECK(err("X\xff\xff\xff\x7f") == "t.pkl: at byte 2: opcode 0x58 needs 2147483647 more bytes, the pickle has 0");
  CHECK(err("N") == "t.pkl: ends at byte 3 without STOP");
  CHECK(err(".") == "t.pkl: at byte 2: STOP with an empty stack");
  CHECK(err("N(.") == "t.pkl: at byte 4: STOP with an empty stack");
  CHECK(err("0") == "t.pkl: at byte 2: opcode 0x30 pops an empty stack");
  CHECK(err("N(0") == "t.pkl: at byte 4: opcode 0x30 pops an empty stack");
  CHECK(err("Ne") == "t.pkl: at byte 3: opcode 0x65 without a MARK");
  CHECK(err("t") == "t.pkl: at byte 2: opcode 0x74 without a MARK");
  CHECK(err("h\x05") == "t.pkl: at byte 2: memo index 5 is not set");
  CHECK(err(std::string("q\0", 2)) == "t.pkl: at byte 2: opcode 0x71 needs an item on the stack");
  CHECK(err("NNa") == "t.pkl: at byte 4: APPEND on a None, not a list");
  CHECK(err("}(Nu.") == "t.pkl: at byte 5: SETITEMS or DICT with an odd number (1) of keys and values");
  CHECK(err("\x8a\x09") == "t.pkl: at byte 2: integer of 9 bytes is too large (kiln reads up to 8)");
  CHECK(err("\x8b\xff\xff\xff\xff") == "t.pkl: at byte 2: LONG4 with a negative length -1");
  CHECK(err("Nb") == "t.pkl: at byte 3: opcode 0x62 needs an item on the stack");
  CHECK(err("]Nb") == "t.pkl: at byte 4: BUILD on a list");
  CHECK(err("cos") == "t.pkl: at byte 2: GLOBAL without a newline");
  CHECK(err(std::string("\x95\x10\0\0\0\0\0\0\0N.", 11)) == "t.pkl: at byte 2: frame of 16 bytes runs past the end");
  Pickle p6;
  p6.b = "\x80\x06N.";
  CHECK(load_error(p6) == "t.pkl: at byte 0: pickle protocol 6 is not supported (2 to 5 are)");
}

TEST_CASE("pickle: globals outside the allow-list are refused") {
  Pickle p;
  p.global("os", "system").str("rm -rf /").op(0x85).reduce().stop();
  CHECK(load_error(p) == "t.pkl: at byte 2: global 'os.system' is not allowed (kiln executes nothing from an archive)");
  Pickle s;  // STACK_GLOBAL
  s.str("builtins").str("eval").op(0x93).stop();
  CHECK(load_error(s) == "t.pkl: at byte 24: global 'builtins.eval' is not allowed (kiln executes nothing from an archive)");
  for (auto [module, name] : {std::pair{"builtins", "set"}, {"builtins", "frozenset"}, {"__builtin__", "getattr"},
                              {"torch", "load"}, {"__torch__", ""}, {"torch._utils", "_rebuild_tensor_v3"}}) {
    Pickle q;
    q.global(module, name).stop();
    CHECK(load_error(q).find("is not allowed") != std::string::npos);
  }
  Pickle q;
  q.global("torch._utils", "_rebuild_qtensor").stop();
  CHECK(load_error(q) == "t.pkl: at byte 2: global 'torch._utils._rebuild_qtensor': quantized tensors are not supported");
  Pickle qs;
  qs.global("torch", "QUInt8Storage").stop();
  CHECK(load_error(qs).ends_with("quantized tensors are not supported"));
  Pickle id;
  id.global("torch.jit._pickle", "build_tensor_from_id").stop();
  CHECK(load_error(id).find("tensor table") != std::string::npos);
  // Allowed globals are still only called the way PyTorch calls them.
  Pickle fs;
  fs.global("torch", "FloatStorage").empty_tuple().reduce().stop();
  CHECK(load_error(fs).find("storages come only from persistent ids") != std::string::npos);
  Pickle od;
  od.global("collections", "OrderedDict").empty_tuple().op(0x81).stop();
  CHECK(load_error(od).find("only classes under __torch__ make objects") != std::string::npos);
  Pickle nf;
  nf.int1(3).empty_tuple().reduce().stop();
  CHECK(load_error(nf) == "t.pkl: at byte 5: REDUCE of a int, not a global");
}

TEST_CASE("pickle: module objects, OrderedDict, devices and TorchScript's list builders") {
  Pickle p;
  p.global("__torch__.torch.nn.modules.linear", "Linear").put(0).empty_tuple().op(0x81);
  p.op('}').mark();
  p.str("training").boolean(true);
  p.str("sizes").global("torch.jit._pickle", "build_intlist").op(']').mark().int1(2).int1(3).op('e').op(0x85).reduce();
  p.str("scale").global("torch.jit._pickle", "build_doublelist").op(']').real(0.5).op('a').op(0x85).reduce();
  p.str("flags").global("torch.jit._pickle", "build_boollist").op(']').boolean(false).op('a').op(0x85).reduce();
  p.str("names").global("torch.jit._pickle", "restore_type_tag").op('}').str("k").str("v").op('s')
      .str("Dict[str, str]").op(0x86).reduce();
  p.str("meta").global("collections", "OrderedDict").empty_tuple().reduce();
  p.mark().str("version").int1(1).op('u');
  p.op('}').str("_metadata").op('}').op('s').op('b');  // BUILD on the OrderedDict
  p.str("cpu").global("torch", "device").str("cpu").op(0x85).reduce();
  p.str("gpu").global("torch", "device").str("cuda").int1(1).op(0x86).reduce();
  p.op('u').op('b').stop();
  PyRef m = load(p);
  REQUIRE(m->kind == PyKind::Object);
  CHECK(m->s == "__torch__.torch.nn.modules.linear.Linear");
  CHECK(py_kind_name(*m) == "__torch__.torch.nn.modules.linear.Linear");
  CHECK(m->attr("training")->b);
  REQUIRE(m->attr("sizes")->kind == PyKind::List);
  CHECK(m->attr("sizes")->items[1]->i == 3);
  CHECK(m->attr("scale")->items[0]->f == 0.5);
  CHECK(m->attr("flags")->items[0]->kind == PyKind::Bool);
  CHECK(m->attr("names")->attr("k")->s == "v");
  PyRef meta = m->attr("meta");
  REQUIRE(meta->kind == PyKind::Dict);
  CHECK(meta->attr("version")->i == 1);
  CHECK(meta->state->attr("_metadata")->kind == PyKind::Dict);
  CHECK(m->attr("cpu")->kind == PyKind::Device);
  CHECK(m->attr("cpu")->s == "cpu");
  CHECK(m->attr("gpu")->s == "cuda:1");
  CHECK(describe(*m->attr("gpu")) == "device 'cuda:1'");

  Pickle wrong;
  wrong.global("torch.jit._pickle", "build_intlist").op(']').real(1.5).op('a').op(0x85).reduce().stop();
  CHECK(load_error(wrong) == "t.pkl: at byte 47: 'torch.jit._pickle.build_intlist' of a list holding a float");
  Pickle args;
  args.global("__torch__", "M").int1(1).op(0x85).op(0x81).stop();
  CHECK(load_error(args).find("with 1 arguments") != std::string::npos);
}

TEST_CASE("pickle: a container that holds itself is refused") {
  Pickle self;  // l = []; l.append(l)
  self.op(']').put(0).get(0).op('a').stop();
  CHECK(load_error(self) == "t.pkl: the result holds a cycle (a list that contains itself)");
  Pickle indirect;  // d = {}; d['x'] = [d]
  indirect.op('}').put(0).str("x").op(']').get(0).op('a').op('s').op(0x85).stop();
  CHECK(load_error(indirect) == "t.pkl: the result holds a cycle (a dict that contains itself)");
  Pickle object;  // an object whose state holds the object
  object.global("__torch__", "M").empty_tuple().op(0x81).put(0).op('}').str("self").get(0).op('s').op('b').stop();
  CHECK(load_error(object) == "t.pkl: the result holds a cycle (a __torch__.M that contains itself)");
  // A cycle left behind on the stack is no part of the result (and must not leak).
  Pickle garbage;
  garbage.op(']').put(0).get(0).op('a').op('0').int1(7).stop();
  CHECK(load(garbage)->i == 7);
  // Sharing is not a cycle.
  Pickle shared;
  shared.op(']').put(0).get(0).get(0).op(0x86).op(0x85).stop();
  PyRef r = load(shared);
  CHECK(r->items[0]->items[0] == r->items[0]->items[1]);
}

TEST_CASE("pickle: nesting deeper than max_depth is refused without recursion") {
  PickleLimits limits;
  limits.max_depth = 100;
  auto nested = [](int depth) {
    Pickle p;
    p.none();
    for (int k = 0; k < depth; ++k) p.op(0x85);  // TUPLE1
    return p.stop();
  };
  CHECK(load(nested(100), nullptr, limits)->kind == PyKind::Tuple);
  CHECK(load_error(nested(101), nullptr, limits) == "t.pkl: nesting deeper than max_depth (100) containers");
  // Deep through a shared subtree reached first from shallow.
  Pickle p;
  p.op(']');
  for (int k = 0; k < 60; ++k) p.op(0x85);
  p.put(0);  // depth 61
  p.get(0);
  for (int k = 0; k < 50; ++k) p.op(0x85);  // the same subtree under 50 more
  p.op(0x86).stop();
  CHECK(load_error(p, nullptr, limits) == "t.pkl: nesting deeper than max_depth (100) containers");
  // A million levels: refused, and neither the check nor the destruction overflows the stack.
  CHECK(load_error(nested(1'000'000)) == "t.pkl: nesting deeper than max_depth (1000) containers");
  Pickle garbage = nested(1'000'000);
  garbage.b.pop_back();
  garbage.op('0').none().stop();
  CHECK(load(garbage)->kind == PyKind::None);
}

TEST_CASE("pickle: stack, memo and item limits") {
  PickleLimits limits;
  limits.max_stack = 10;
  Pickle p;
  for (int k = 0; k < 11; ++k) p.none();
  CHECK(load_error(p.stop(), nullptr, limits) == "t.pkl: at byte 12: more than max_stack (10) stack and memo entries");
  Pickle m;
  m.none();
  for (int k = 0; k < 10; ++k) m.put(static_cast<uint8_t>(k));
  CHECK(load_error(m.stop(), nullptr, limits) == "t.pkl: at byte 21: more than max_stack (10) stack and memo entries");
  Pickle marks;
  for (int k = 0; k < 11; ++k) marks.mark();
  CHECK(load_error(marks.stop(), nullptr, limits).find("max_stack") != std::string::npos);
  limits = {};
  limits.max_items = 5;
  Pickle items;
  items.op(']').mark();
  for (int k = 0; k < 6; ++k) items.none();
  CHECK(load_error(items.op('e').stop(), nullptr, limits) == "t.pkl: at byte 10: more than max_items (5) container items");
}

TEST_CASE("pickle: a contiguous tensor is a view of its storage") {
  Storages st;
  st.add("0", iota(8));
  Pickle p;
  p.tensor(float_storage("0", 8, 0), 2, {2, 3}, {3, 1}, true).stop();
  PyRef t = load(p, &st);
  REQUIRE(t->kind == PyKind::Tensor);
  CHECK(t->requires_grad);
  CHECK(t->tensor.dtype() == DType::F32);
  CHECK(t->tensor.dims() == std::vector<int64_t>{2, 3});
  CHECK(values_of(t->tensor) == std::vector<double>{2, 3, 4, 5, 6, 7});
  CHECK(describe(*t) == "Tensor f32[2,3]");
  // Size-1 dimensions may have any stride and still be contiguous.
  Pickle one;
  one.tensor(float_storage("0", 8, 0), 1, {1, 4, 1}, {99, 1, 7}).stop();
  CHECK(values_of(load(one, &st)->tensor) == std::vector<double>{1, 2, 3, 4});
}

TEST_CASE("pickle: a strided view with an offset is copied element by element") {
  Storages st;
  st.add("0", iota(24));
  // A [2, 3, 2] view at offset 1 with strides (12, 1, 4): t[i][j][k] = 1 + 12 i + j + 4 k.
  Pickle p;
  p.tensor(float_storage("0", 24, 0), 1, {2, 3, 2}, {12, 1, 4}).stop();
  PyRef t = load(p, &st);
  REQUIRE(t->tensor.dims() == std::vector<int64_t>{2, 3, 2});
  const float* v = t->tensor.data<float>();
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 2; ++k) CHECK(v[i * 6 + j * 2 + k] == static_cast<float>(1 + 12 * i + j + 4 * k));
  // A broadcast (stride 0) and a transpose.
  Pickle b;
  b.tensor(float_storage("0", 24, 0), 5, {3, 2}, {0, 1}).stop();
  CHECK(values_of(load(b, &st)->tensor) == std::vector<double>{5, 6, 5, 6, 5, 6});
  Pickle tr;
  tr.tensor(float_storage("0", 24, 0), 0, {3, 2}, {1, 3}).stop();
  CHECK(values_of(load(tr, &st)->tensor) == std::vector<double>{0, 3, 1, 4, 2, 5});
}

TEST_CASE("pickle: a storage shared by two tensors is loaded once") {
  Storages st;
  st.add("0", iota(6));
  Pickle p;
  p.mark();
  p.tensor(float_storage("0", 6, 0), 0, {6}, {1});
  p.tensor(memo_get(0), 3, {3}, {1});                   // through the memo, as TorchScript writes it
  p.tensor(float_storage("0", 6, 1), 1, {2}, {2});      // the same key again, as another pickle would
  p.tuple().stop();
  PyRef r = load(p, &st);
  CHECK(st.loads["0"] == 1);
  CHECK(values_of(r->items[0]->tensor) == std::vector<double>{0, 1, 2, 3, 4, 5});
  CHECK(values_of(r->items[1]->tensor) == std::vector<double>{3, 4, 5});
  CHECK(values_of(r->items[2]->tensor) == std::vector<double>{1, 3});
  CHECK(r->items[0]->tensor.raw() == static_cast<const uint8_t*>(r->items[1]->tensor.raw()) - 12);
  // The same key as another dtype.
  Pickle other;
  other.mark().storage("FloatStorage", "0", 6).storage("IntStorage", "0", 6).tuple().stop();
  CHECK(load_error(other, &st) == "t.pkl: at byte 102: storage '0' is 6 elements of i32 here and 6 of f32 before");
}

TEST_CASE("pickle: tensors addressing past their storage or overflowing are refused") {
  Storages st;
  st.add("0", iota(6));
  auto err = [&](int64_t offset, std::vector<int64_t> sizes, std::vector<int64_t> strides,
                 const PickleLimits& limits = {}) {
    Pickle p;
    p.tensor(float_storage("0", 6, 0), offset, sizes, strides).stop();
    return load_error(p, &st, limits);
  };
  const std::string fn = "t.pkl: at byte 88: '_rebuild_tensor_v2'";
  CHECK(err(0, {7}, {1}).ends_with("with sizes [7] strides [1] offset 0 addresses elements past its storage of 6"));
  CHECK(err(1, {2, 3}, {3, 1}).find("addresses elements past its storage of 6") != std::string::npos);
  CHECK(err(6, {1}, {1}).find("addresses elements past its storage") != std::string::npos);
  CHECK(err(0, {2, 2}, {4, 2}).find("addresses elements past its storage") != std::string::npos);
  // Sizes whose product overflows 64 bits, and strides that would wrap the address.
  CHECK(err(0, {1LL << 40, 1LL << 40}, {1, 1}).find("more than max_elements") != std::string::npos);
  CHECK(err(0, {2, 2}, {INT64_MAX, INT64_MAX}).find("addresses elements past its storage") != std::string::npos);
  CHECK(err(INT64_MAX, {2}, {INT64_MAX}).find("addresses elements past its storage") != std::string::npos);
  PickleLimits limits;
  limits.max_elements = 4;
  CHECK(err(0, {5}, {1}, limits).find("more than max_elements (4)") != std::string::npos);
  limits = {};
  limits.max_tensor_bytes = 16;
  CHECK(err(0, {5}, {1}, limits).find("storage '0' of 6 f32 elements exceeds max_tensor_bytes (16)") != std::string::npos);
  CHECK(err(0, {2}, {-1}).find("with negative strides -1") != std::string::npos);
  CHECK(err(0, {-2}, {1}).find("with negative sizes -2") != std::string::npos);
  CHECK(err(-1, {2}, {1}).find("with storage offset int -1") != std::string::npos);
  CHECK(err(0, {2}, {1, 1}).find("with 1 sizes and 2 strides") != std::string::npos);
  CHECK(err(0, std::vector<int64_t>(33, 1), std::vector<int64_t>(33, 1)).find("rank over 32") != std::string::npos);
  // The storage's bytes must be what its persistent id says.
  Pickle p;
  p.tensor(float_storage("0", 7, 0), 0, {1}, {1}).stop();
  CHECK(load_error(p, &st).ends_with("storage '0' has 24 bytes, not the 28 of 7 f32 elements"));
  Pickle missing;
  missing.tensor(float_storage("9", 1, 0), 0, {1}, {1}).stop();
  CHECK(load_error(missing, &st).ends_with("storage '9': no storage '9'"));
  st.add("b", std::vector<uint8_t>{0, 1, 2});
  Pickle bools;
  bools.tensor([](Pickle& q) { q.storage("BoolStorage", "b", 3); }, 0, {3}, {1}).stop();
  CHECK(load_error(bools, &st).ends_with("storage 'b' of bools holds byte 2 at 2"));
  Pickle no_loader;
  no_loader.tensor(float_storage("0", 6, 0), 0, {1}, {1}).stop();
  CHECK(load_error(no_loader).ends_with("storage '0' but no storage loader"));
  Pickle bad_pid;
  bad_pid.mark().str("storage").str("FloatStorage").str("0").str("cpu").int1(6).tuple().op('Q').stop();
  CHECK(load_error(bad_pid, &st).find("persistent id names storage type str 'FloatStorage'") != std::string::npos);
  Pickle neg;
  neg.global("torch._utils", "_rebuild_tensor_v2").mark();
  neg.storage("FloatStorage", "0", 6).int1(0).ints_tuple({2}).ints_tuple({1}).boolean(false);
  neg.op('}').op('}').str("neg").boolean(true).op('s').tuple().reduce().stop();
  CHECK(load_error(neg, &st).ends_with("of a tensor with the neg bit set is not supported"));
}

TEST_CASE("pickle: zero-size tensors, other dtypes and parameters") {
  Storages st;
  st.add("0", iota(4));
  st.add("l", std::vector<int64_t>{-1, 1LL << 40});
  st.add("b", std::vector<uint8_t>{1, 0, 1});
  st.add("u", std::vector<uint8_t>{1, 2, 3});
  st.add("h", std::vector<uint16_t>{0x3c00, 0xc000});  // 1.0, -2.0 in f16
  Pickle p;
  p.mark();
  p.tensor(float_storage("0", 4, 0), 0, {0, 3}, {3, 1});
  p.tensor(float_storage("0", 4, 0), 99, {2, 0}, {1, 1});  // nothing addressed: no bounds
  p.tensor([](Pickle& q) { q.storage("LongStorage", "l", 2); }, 0, {2}, {1});
  p.tensor([](Pickle& q) { q.storage("BoolStorage", "b", 3); }, 2, {}, {});
  p.tensor([](Pickle& q) { q.storage("HalfStorage", "h", 2); }, 0, {2}, {1});
  p.global("torch._utils", "_rebuild_parameter");
  p.tensor(memo_get(0), 1, {2}, {1}).boolean(true).global("collections", "OrderedDict").empty_tuple().reduce();
  p.op(0x87).reduce();
  p.tensor([](Pickle& q) { q.storage("UntypedStorage", "u", 3); }, 0, {3}, {1});
  p.tuple().stop();
  PyRef r = load(p, &st);
  REQUIRE(r->items.size() == 7);
  CHECK(r->items[0]->tensor.dims() == std::vector<int64_t>{0, 3});
  CHECK(r->items[1]->tensor.numel() == 0);
  CHECK(r->items[2]->tensor.dtype() == DType::I64);
  CHECK(r->items[2]->tensor.to_int64_vector() == std::vector<int64_t>{-1, 1LL << 40});
  CHECK(r->items[3]->tensor.dtype() == DType::Bool);
  CHECK(r->items[3]->tensor.rank() == 0);
  CHECK(r->items[3]->tensor.as_int64(0) == 1);
  CHECK(values_of(r->items[4]->tensor) == std::vector<double>{1.0, -2.0});
  CHECK(r->items[5]->requires_grad);
  CHECK(values_of(r->items[5]->tensor) == std::vector<double>{1, 2});
  CHECK(r->items[6]->tensor.dtype() == DType::U8);
}

// ---- real archives, written by tests/frontend/data/torch/make_test_archives.py (torch 1.13)

namespace {

std::string data_file(const std::string& name) { return std::string(KILN_TORCH_TEST_DATA) + "/" + name; }

struct Loaded {
  std::unique_ptr<ZipArchive> zip;
  PyRef root;
  std::map<std::string, int> loads;
};

Loaded load_archive(const std::string& file) {
  Loaded l;
  l.zip = ZipArchive::open(data_file(file));
  auto* zip = l.zip.get();
  auto* loads = &l.loads;
  l.root = unpickle(zip->read("data.pkl"), file + ":data.pkl",
                    [zip, loads](const std::string& key, DType, uint64_t) {
                      ++(*loads)[key];
                      return zip->read_buffer("data/" + key);
                    });
  return l;
}

}  // namespace

TEST_CASE("torch archive: a scripted nn.Linear(3, 2) saved by torch.jit.save") {
  Loaded l = load_archive("linear.pt");
  const ZipArchive& zip = *l.zip;
  CHECK(zip.prefix() == "linear/");
  CHECK(zip.read("version") == "3\n");
  CHECK(zip.find("code/__torch__/torch/nn/modules/linear.py")->method == 8);
  CHECK(zip.read("code/__torch__/torch/nn/modules/linear.py").find("def forward(self") != std::string::npos);
  CHECK(unpickle(zip.read("constants.pkl"), "constants.pkl", {})->kind == PyKind::Tuple);

  REQUIRE(l.root->kind == PyKind::Object);
  CHECK(l.root->s == "__torch__.torch.nn.modules.linear.Linear");
  CHECK(l.root->attr("training")->b);
  PyRef w = l.root->attr("weight"), b = l.root->attr("bias");
  REQUIRE(w);
  REQUIRE(b);
  CHECK(w->requires_grad);
  CHECK(w->tensor.dtype() == DType::F32);
  CHECK(w->tensor.dims() == std::vector<int64_t>{2, 3});
  CHECK(values_of(w->tensor) == std::vector<double>{0.5, -1.0, 2.0, 0.25, 3.0, -0.125});
  CHECK(b->tensor.dims() == std::vector<int64_t>{2});
  CHECK(values_of(b->tensor) == std::vector<double>{1.5, -2.5});
  // Stored weights are views of the mapped file, aligned by PyTorch's writer.
  CHECK(reinterpret_cast<uintptr_t>(w->tensor.raw()) % 64 == 0);
  CHECK(l.loads == std::map<std::string, int>{{"0", 1}, {"1", 1}});
}

TEST_CASE("torch archive: a dict with a strided view saved by torch.save") {
  Loaded l = load_archive("state.pt");
  CHECK(l.zip->prefix() == "state/");
  REQUIRE(l.root->kind == PyKind::Dict);
  PyRef base = l.root->attr("base");
  CHECK(base->tensor.dims() == std::vector<int64_t>{3, 4});
  CHECK(values_of(base->tensor) == std::vector<double>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  CHECK_FALSE(base->requires_grad);
  // base[1:, 1::2]: offset 5, strides (4, 2), copied.
  PyRef view = l.root->attr("view");
  CHECK(view->tensor.dims() == std::vector<int64_t>{2, 2});
  CHECK(values_of(view->tensor) == std::vector<double>{5, 7, 9, 11});
  PyRef ints = l.root->attr("ints");
  CHECK(ints->tensor.dtype() == DType::I64);
  CHECK(ints->tensor.to_int64_vector() == std::vector<int64_t>{7, -8, 9});
  PyRef flag = l.root->attr("flag");
  CHECK(flag->tensor.dtype() == DType::Bool);
  CHECK(flag->tensor.rank() == 0);
  CHECK(flag->tensor.as_int64(0) == 1);
  PyRef param = l.root->attr("param");
  CHECK(param->requires_grad);
  CHECK(param->tensor.dtype() == DType::F64);
  CHECK(values_of(param->tensor) == std::vector<double>{0.5, 1.5});
  // base and view share storage 0.
  CHECK(l.loads == std::map<std::string, int>{{"0", 1}, {"1", 1}, {"2", 1}, {"3", 1}});
}

TEST_CASE("torch archive: plain containers, a device and f16, bf16 and empty tensors saved by torch.save") {
  Loaded l = load_archive("mixed.pt");
  PyRef list = l.root->attr("list");
  REQUIRE(list->kind == PyKind::List);
  REQUIRE(list->items.size() == 6);
  CHECK(list->items[0]->i == 1);
  CHECK(list->items[1]->f == -2.5);
  CHECK(list->items[2]->s == "s");
  CHECK(list->items[3]->kind == PyKind::None);
  CHECK(list->items[4]->b);
  CHECK(list->items[5]->i == 1LL << 40);
  PyRef tuple = l.root->attr("tuple");
  REQUIRE(tuple->kind == PyKind::Tuple);
  CHECK(tuple->items[0]->tensor.dtype() == DType::F16);
  CHECK(values_of(tuple->items[0]->tensor) == std::vector<double>{0, 0});
  CHECK(tuple->items[1]->tensor.dtype() == DType::BF16);
  CHECK(values_of(tuple->items[1]->tensor) == std::vector<double>{1});
  CHECK(l.root->attr("od")->attr("x")->i == 1);
  CHECK(l.root->attr("dev")->kind == PyKind::Device);
  CHECK(l.root->attr("dev")->s == "cpu");
  PyRef empty = l.root->attr("empty");
  CHECK(empty->tensor.dtype() == DType::I32);
  CHECK(empty->tensor.dims() == std::vector<int64_t>{0, 3});
}
