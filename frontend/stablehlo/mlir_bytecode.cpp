// MLIR bytecode (mlir/lib/Bytecode/Reader/BytecodeReader.cpp's format): the header, the
// sections, and the IR walk from builtin.module through vhlo.func_v1 bodies, into Module.
#include "frontend/stablehlo/mlir_bytecode.h"

#include <fmt/format.h>

#include <array>
#include <cstring>

#include "frontend/stablehlo/vhlo_bytecode.h"

namespace kiln::frontend::stablehlo {
namespace {

constexpr uint64_t kMaxVersion = 6;  // MLIR's bytecode version as of LLVM 19-21
constexpr int kMaxRegionDepth = 64;
constexpr uint64_t kMaxRegionValues = uint64_t{1} << 24;
enum Section : uint8_t {
  kString = 0, kDialect = 1, kAttrType = 2, kAttrTypeOffset = 3, kIR = 4, kResource = 5, kResourceOffset = 6,
  kDialectVersions = 7, kProperties = 8, kNumSections = 9,
};
enum OpMask : uint8_t {
  kHasAttrs = 1, kHasResults = 2, kHasOperands = 4, kHasSuccessors = 8, kHasInlineRegions = 16,
  kHasUseListOrders = 32, kHasProperties = 64,
};

struct OpName {
  size_t dialect = 0;
  std::string name;
  bool registered = true;
};

// Values of one isolated-from-above scope: a slot per value, reserved region by region.
struct Scope {
  std::vector<std::string> names;
  std::vector<std::optional<TensorType>> types;
  std::vector<size_t> next;  // the next slot to define, per open region
};

enum class Context { Top, Module, Body, Nested };

class Reader {
 public:
  Reader(const std::string& bytes, const std::string& file) : bytes_(bytes) {
    f_.file = &file;
    f_.bytes = &bytes;
    module_.file = file;
  }

  Module read() {
    const auto* data = reinterpret_cast<const uint8_t*>(bytes_.data());
    Cursor c(data, data + bytes_.size(), 0, f_.file);
    if (!is_mlir_bytecode(bytes_)) c.fail("not MLIR bytecode (no ML\\xEFR magic)");
    c.skip(4);
    f_.version = c.varint();
    if (f_.version < 1 || f_.version > kMaxVersion)
      c.fail(fmt::format("bytecode version {} is not supported (1 to {} are)", f_.version, kMaxVersion));
    read_cstring(c, "producer");  // "StableHLO_v1.15.0": the VHLO version, not needed to read it
    std::array<std::optional<Cursor>, kNumSections> sections;
    while (!c.empty()) {
      const size_t at = c.offset();
      uint8_t id = 0;
      Cursor s = section(c, id);
      if (id >= kNumSections) c.fail_at(at, fmt::format("unknown section id {}", id));
      if (sections[id]) c.fail_at(at, fmt::format("section {} appears twice", id));
      sections[id] = s;
    }
    for (uint8_t id : {kString, kDialect, kAttrType, kAttrTypeOffset, kIR})
      if (!sections[id]) c.fail(fmt::format("section {} is missing", id));
    read_strings(*sections[kString]);
    read_dialects(*sections[kDialect]);
    if (sections[kProperties]) read_properties(*sections[kProperties]);
    read_attr_type_offsets(*sections[kAttrTypeOffset], *sections[kAttrType]);
    read_ir(*sections[kIR]);
    return std::move(module_);
  }

 private:
  std::string read_cstring(Cursor& c, const char* what) {
    std::string s;
    for (;;) {
      if (c.empty()) c.fail(fmt::format("the {} string has no terminating NUL", what));
      const char ch = static_cast<char>(c.byte());
      if (ch == '\0') return s;
      if (s.size() >= 4096) c.fail(fmt::format("the {} string is too long", what));
      s += ch;
    }
  }

  // id byte (high bit: aligned), length, optional alignment and padding, then the data.
  Cursor section(Cursor& c, uint8_t& id) {
    const uint8_t head = c.byte();
    id = head & 0x7f;
    const uint64_t length = c.varint();
    if (head & 0x80) {
      const uint64_t align = c.varint();
      if (align == 0 || align > 4096 || (align & (align - 1)))
        c.fail(fmt::format("section alignment {} is not a power of two up to 4096", align));
      while (c.offset() % align) {
        if (c.byte() != 0xCB) c.fail("section padding that is not 0xCB");
      }
    }
    return c.take(length);
  }

  void read_strings(Cursor c) {
    const uint64_t n = c.count("string");
    std::vector<uint64_t> sizes(n);
    for (uint64_t k = 0; k < n; ++k) sizes[n - 1 - k] = c.varint();  // stored last to first
    uint64_t total = 0;
    for (uint64_t s : sizes) {
      if (s == 0 || s > c.remaining() || total > c.remaining() - s) c.fail("string sizes exceed the string section");
      total += s;
    }
    if (total != c.remaining()) c.fail("string sizes do not match the string data");
    f_.strings.reserve(n);
    for (uint64_t s : sizes) {
      std::string str = c.bytes(s);
      if (str.back() != '\0') c.fail("a string without its NUL");
      str.pop_back();
      f_.strings.push_back(std::move(str));
    }
  }

  void read_dialects(Cursor c) {
    const uint64_t n = c.count("dialect");
    for (uint64_t k = 0; k < n; ++k) {
      bool versioned = false;
      const uint64_t name = c.varint_flag(versioned);
      f_.dialects.push_back(f_.string_at(c, name));
      if (versioned) {
        uint8_t id = 0;
        section(c, id);  // the dialect's version: not needed to read VHLO
      }
    }
    if (f_.version >= 4) c.varint();  // the number of op names (a size hint)
    while (!c.empty()) {
      const uint64_t dialect = c.varint();
      if (dialect >= f_.dialects.size()) c.fail(fmt::format("dialect index {} is out of range", dialect));
      const uint64_t count = c.count("op name");
      for (uint64_t k = 0; k < count; ++k) {
        OpName op;
        op.dialect = dialect;
        const uint64_t s = f_.version >= 5 ? c.varint_flag(op.registered) : c.varint();
        op.name = f_.string_at(c, s);
        op_names_.push_back(std::move(op));
      }
    }
  }

  void read_properties(Cursor c) {
    const uint64_t n = c.count("properties");
    for (uint64_t k = 0; k < n; ++k) {
      const uint64_t size = c.varint();
      properties_.push_back(c.take(size));
    }
  }

  void read_attr_type_offsets(Cursor c, const Cursor& data) {
    f_.attr_type_base = data.offset();
    const size_t limit = data.remaining() + 1;
    const uint64_t n_attrs = c.varint(), n_types = c.varint();
    if (n_attrs > limit || n_types > limit || n_attrs + n_types > limit)
      c.fail(fmt::format("{} attributes and {} types in an attribute section of {} bytes", n_attrs, n_types, limit - 1));
    size_t offset = 0;
    auto entries = [&](std::vector<BytecodeEntry>& out, uint64_t n) {
      while (out.size() < n) {
        const uint64_t dialect = c.varint();
        if (dialect >= f_.dialects.size()) c.fail(fmt::format("dialect index {} is out of range", dialect));
        const uint64_t count = c.varint();
        if (count > n - out.size()) c.fail("more attribute or type entries than declared");
        for (uint64_t k = 0; k < count; ++k) {
          BytecodeEntry e;
          e.dialect = dialect;
          e.size = c.varint_flag(e.custom);
          if (e.size > data.remaining() - offset) c.fail("an attribute or type entry past its section's end");
          e.offset = offset;
          offset += e.size;
          out.push_back(e);
        }
      }
    };
    entries(f_.attrs, n_attrs);
    entries(f_.types, n_types);
  }

  // ---- the IR ------------------------------------------------------------------------------

  void read_ir(Cursor c) {
    scopes_.emplace_back();
    scopes_.back().next.push_back(0);
    bool has_args = false;
    const uint64_t n = c.varint_flag(has_args);
    if (has_args) c.fail("the top-level block has arguments");
    for (uint64_t k = 0; k < n; ++k) read_op(c, Context::Top, 0);
    if (module_.funcs.empty()) c.fail("the module has no functions");
  }

  std::string define(Cursor& c, const std::string& name, std::optional<TensorType> type) {
    Scope& s = scopes_.back();
    if (s.next.empty() || s.next.back() >= s.names.size())
      c.fail("more values defined than the region declares");
    const size_t slot = s.next.back()++;
    s.names[slot] = name;
    s.types[slot] = std::move(type);
    return name;
  }

  std::optional<TensorType> maybe_tensor(uint64_t type_index, size_t at) {
    if (f_.type(type_index).kind != VhloType::Kind::Tensor) return std::nullopt;
    return f_.tensor_type(type_index, at);
  }

  // One region into `out` (a region of one block; an empty region stays empty).
  void read_region(Cursor& c, Block& out, Context ctx, int depth, std::vector<std::string>* arg_locs) {
    const uint64_t blocks = c.varint();
    if (blocks == 0) return;
    if (blocks > 1) c.fail(fmt::format("a region of {} blocks (branches) is not supported", blocks));
    const uint64_t values = c.count("region value");
    if (values > kMaxRegionValues) c.fail(fmt::format("a region of {} values (at most {} are read)", values, kMaxRegionValues));
    Scope& s = scopes_.back();
    s.next.push_back(s.names.size());
    s.names.resize(s.names.size() + values);
    s.types.resize(s.names.size());
    bool has_args = false;
    const uint64_t n_ops = c.varint_flag(has_args);
    if (has_args) {
      const uint64_t n = c.count("block argument");
      for (uint64_t k = 0; k < n; ++k) {
        bool has_loc = true;
        const size_t at = c.offset();
        const uint64_t t = f_.version >= 4 ? c.varint_flag(has_loc) : c.varint();
        if (t >= f_.types.size()) c.fail_at(at, fmt::format("type index {} is out of range", t));
        const uint64_t loc = has_loc ? f_.attr_index(c) : 0;
        TensorType tt = f_.tensor_type(t, at);
        const std::string name = ctx == Context::Body ? fmt::format("%arg{}", k) : fmt::format("%{}", next_value_++);
        out.args.emplace_back(define(c, name, tt), tt);
        // loc("params['w']") names the argument for --params and the graph's inputs.
        if (arg_locs) arg_locs->push_back(has_loc ? f_.location_name(loc) : "");
      }
      if (f_.version >= 3 && c.byte()) use_list_orders(c, n);
    }
    for (uint64_t k = 0; k < n_ops; ++k) {
      std::optional<Op> op = read_op(c, ctx, depth);
      if (op) out.ops.push_back(std::move(*op));
    }
    scopes_.back().names.resize(scopes_.back().names.size() - values);
    scopes_.back().types.resize(scopes_.back().names.size());
    scopes_.back().next.pop_back();
  }

  void use_list_orders(Cursor& c, uint64_t n_values) {
    const uint64_t n = n_values > 1 ? c.count("use-list order") : 1;
    for (uint64_t k = 0; k < n; ++k) {
      if (n_values > 1) c.varint();
      bool pairs = false;
      const uint64_t uses = c.varint_flag(pairs);
      if (uses > c.remaining()) c.fail("use-list order longer than the data");
      for (uint64_t u = 0; u < uses; ++u) {
        c.varint();
        if (pairs) c.varint();
      }
    }
  }

  // One op (and its regions). Returns the op for function bodies and nested regions.
  std::optional<Op> read_op(Cursor& c, Context ctx, int depth) {
    if (depth > kMaxRegionDepth) c.fail("regions nested too deeply");
    const size_t at = c.offset();
    const uint64_t name_index = c.varint();
    if (name_index >= op_names_.size()) c.fail_at(at, fmt::format("op name index {} is out of range", name_index));
    const OpName& name = op_names_[name_index];
    const std::string dialect = f_.dialects[name.dialect];
    const std::string full = dialect + "." + name.name;
    const uint8_t mask = c.byte();
    f_.attr_index(c);                       // the location
    if (mask & kHasAttrs) f_.attr_index(c);  // discardable attributes: not needed
    std::optional<Cursor> props;
    if (mask & kHasProperties) {
      if (name.registered) {
        const uint64_t p = c.varint();
        if (p >= properties_.size()) c.fail(fmt::format("properties index {} is out of range", p));
        props = properties_[p];
      } else {
        f_.attr_index(c);
      }
    }
    std::vector<uint64_t> result_types;
    if (mask & kHasResults) {
      const uint64_t n = c.count("result");
      for (uint64_t k = 0; k < n; ++k) result_types.push_back(f_.type_index(c));
    }
    Op op;
    op.loc = Loc{0, static_cast<int>(std::min<size_t>(at, INT32_MAX))};
    if (mask & kHasOperands) {
      const uint64_t n = c.count("operand");
      Scope& s = scopes_.back();
      for (uint64_t k = 0; k < n; ++k) {
        const size_t vat = c.offset();
        const uint64_t v = c.varint();
        if (v >= s.names.size() || s.names[v].empty())
          c.fail_at(vat, fmt::format("{}: operand {} names value {}, which is not defined before it", full, k, v));
        op.operands.push_back(s.names[v]);
        if (s.types[v]) op.operand_types.push_back(*s.types[v]);
      }
    }
    if (mask & kHasSuccessors) c.fail(fmt::format("{}: branches (successors) are not supported", full));
    if (mask & kHasUseListOrders) use_list_orders(c, result_types.size());
    uint64_t n_regions = 0;
    bool isolated = false;
    if (mask & kHasInlineRegions) n_regions = c.varint_flag(isolated);
    if (n_regions > c.remaining()) c.fail(fmt::format("{}: {} regions", full, n_regions));

    // What the op is.
    const bool is_module = full == "builtin.module";
    const bool is_func = full == "vhlo.func_v1";
    if (ctx == Context::Top && !is_module) c.fail_at(at, fmt::format("expected builtin.module at the top, found {}", full));
    if (ctx == Context::Module && !is_func)
      c.fail_at(at, fmt::format("expected functions (vhlo.func_v1) in the module, found {}", full));
    if ((ctx == Context::Body || ctx == Context::Nested) && (is_module || is_func))
      c.fail_at(at, fmt::format("{} inside a function is not supported", full));
    if (dialect != "vhlo" && !is_module) c.fail_at(at, fmt::format("unsupported op '{}' (only VHLO is read)", full));

    std::vector<uint64_t> attrs;
    if (props && !is_module)
      while (!props->empty()) attrs.push_back(f_.attr_index(*props));

    for (size_t k = 0; k < result_types.size(); ++k) {
      const std::string r = result_types.size() == 1 ? fmt::format("%{}", next_value_) : fmt::format("%{}#{}", next_value_, k);
      std::optional<TensorType> t = maybe_tensor(result_types[k], at);
      if (!t) c.fail_at(at, fmt::format("{}: result {} is {}, not a ranked tensor", full, k, f_.type(result_types[k]).name));
      op.results.push_back(define(c, r, t));
      op.result_types.push_back(*t);
    }
    if (!result_types.empty()) ++next_value_;

    if (is_func) {
      read_func(c, at, attrs, n_regions, isolated, depth);
      return std::nullopt;
    }
    const std::string base = name.name;
    if (!is_module) {
      if (base == "return_v1") {
        op.name = ctx == Context::Body ? "func.return" : "stablehlo.return";
      } else if (base == "call_v1") {
        op.name = "func.call";
        if (attrs.size() != 1) c.fail_at(at, "vhlo.call_v1: expected one property, the callee");
        Attr callee = f_.attr(attrs[0]);
        if (callee.kind != Attr::Kind::String) c.fail_at(at, "vhlo.call_v1: the callee is not a name");
        op.callee = callee.s;
      } else {
        const VhloOpInfo* info = vhlo_op(base);
        if (!info) c.fail_at(at, fmt::format("unsupported op '{}'", full));
        if (attrs.size() != info->attrs.size())
          c.fail_at(at, fmt::format("{}: {} properties, expected {}", full, attrs.size(), info->attrs.size()));
        op.name = info->stablehlo;
        translate_attrs(f_, base, *info, attrs, at, op);
      }
    }
    read_regions(c, n_regions, isolated, is_module ? Context::Module : Context::Nested, depth, op.regions);
    if (is_module) return std::nullopt;
    return op;
  }

  void read_regions(Cursor& c, uint64_t n, bool isolated, Context ctx, int depth, std::vector<Block>& out,
                    std::vector<std::string>* arg_locs = nullptr) {
    if (n == 0) return;
    Cursor nested;
    Cursor* rc = &c;
    if (isolated && f_.version >= 2) {
      uint8_t id = 0;
      nested = section(c, id);
      if (id != kIR) c.fail(fmt::format("expected an IR section for an isolated region, found section {}", id));
      rc = &nested;
    }
    if (isolated) {
      scopes_.emplace_back();
    }
    for (uint64_t k = 0; k < n; ++k) {
      out.emplace_back();
      read_region(*rc, out.back(), ctx, depth + 1, arg_locs);
    }
    if (isolated) scopes_.pop_back();
  }

  void read_func(Cursor& c, size_t at, const std::vector<uint64_t>& attrs, uint64_t n_regions, bool isolated,
                 int depth) {
    // arg_attrs, function_type, res_attrs, sym_name, sym_visibility
    if (attrs.size() != 5) c.fail_at(at, fmt::format("vhlo.func_v1: {} properties, expected 5", attrs.size()));
    Func fn;
    fn.loc = Loc{0, static_cast<int>(std::min<size_t>(at, INT32_MAX))};
    Attr sym = f_.attr(attrs[3]);
    if (sym.kind != Attr::Kind::String) c.fail_at(at, "vhlo.func_v1: sym_name is not a string");
    fn.name = sym.s;
    Attr type = f_.attr(attrs[1]);
    if (type.kind != Attr::Kind::Type || f_.type(static_cast<uint64_t>(type.i)).kind != VhloType::Kind::Function)
      c.fail_at(at, "vhlo.func_v1: function_type is not a function type");
    const VhloType ft = f_.type(static_cast<uint64_t>(type.i));
    for (uint64_t r : ft.outputs) fn.results.push_back(f_.tensor_type(r, at));
    if (n_regions != 1) c.fail_at(at, fmt::format("vhlo.func_v1 @{}: {} regions, expected 1", fn.name, n_regions));
    std::vector<Block> body;
    read_regions(c, 1, isolated, Context::Body, depth, body, &fn.arg_locs);
    fn.body = std::move(body[0]);
    fn.args = fn.body.args;
    if (fn.args.size() != ft.inputs.size())
      c.fail_at(at, fmt::format("@{}: {} arguments, its type has {}", fn.name, fn.args.size(), ft.inputs.size()));
    fn.arg_locs.resize(fn.args.size());
    if (module_.funcs.count(fn.name)) c.fail_at(at, fmt::format("@{} is defined twice", fn.name));
    module_.funcs[fn.name] = std::move(fn);
  }

  const std::string& bytes_;
  BytecodeFile f_;
  Module module_;
  std::vector<OpName> op_names_;
  std::vector<Cursor> properties_;
  std::vector<Scope> scopes_;
  uint64_t next_value_ = 0;
};

uint32_t u32(const std::string& b, size_t at) {
  uint32_t v;
  std::memcpy(&v, b.data() + at, 4);
  return v;
}
uint16_t u16(const std::string& b, size_t at) {
  uint16_t v;
  std::memcpy(&v, b.data() + at, 2);
  return v;
}

}  // namespace

bool is_mlir_bytecode(const std::string& bytes) { return bytes.size() >= 4 && bytes.compare(0, 4, "ML\xEFR") == 0; }

Module parse_bytecode(const std::string& bytes, const std::string& file) { return Reader(bytes, file).read(); }

std::optional<std::string> jax_exported_bytecode(const std::string& b) {
  // A flatbuffer: the root table's offset, the table's offset back to its vtable, and in the
  // vtable the offset of field 13 (mlir_module_serialized), a vector of bytes.
  constexpr size_t kField = 13;
  const size_t n = b.size();
  if (n < 8) return std::nullopt;
  const size_t table = u32(b, 0);
  if (table > n - 4 || table % 4) return std::nullopt;
  const int64_t vtable = static_cast<int64_t>(table) - static_cast<int32_t>(u32(b, table));
  if (vtable < 0 || static_cast<size_t>(vtable) > n - 4 || vtable % 2) return std::nullopt;
  const size_t vt = static_cast<size_t>(vtable);
  const size_t vt_size = u16(b, vt);
  const size_t entry = 4 + 2 * kField;
  if (vt_size < entry + 2 || vt_size > n - vt) return std::nullopt;
  const size_t field = u16(b, vt + entry);
  if (field == 0 || field > n - table || n - table - field < 4) return std::nullopt;
  const size_t ref = table + field;
  const size_t vec = ref + u32(b, ref);
  if (vec < ref || vec > n - 4) return std::nullopt;
  const size_t len = u32(b, vec);
  if (len > n - vec - 4) return std::nullopt;
  std::string out = b.substr(vec + 4, len);
  if (!is_mlir_bytecode(out)) return std::nullopt;
  return out;
}

}  // namespace kiln::frontend::stablehlo
