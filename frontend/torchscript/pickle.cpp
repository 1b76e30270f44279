#include "frontend/torchscript/pickle.h"

#include <cstring>
#include <unordered_map>

#include "frontend/torchscript/pickle_torch.h"
#include "ir/error.h"

namespace kiln::frontend::torchscript {

namespace {

// The opcodes read (pickletools' names); protocol 0's text opcodes are not among them.
enum Op : uint8_t {
  MARK = '(', STOP = '.', POP = '0', POP_MARK = '1', DUP = '2', BINFLOAT = 'G', BININT = 'J',
  BININT1 = 'K', BININT2 = 'M', NONE = 'N', BINPERSID = 'Q', REDUCE = 'R', BINSTRING = 'T',
  SHORT_BINSTRING = 'U', BINUNICODE = 'X', APPEND = 'a', BUILD = 'b', GLOBAL = 'c', DICT = 'd',
  APPENDS = 'e', BINGET = 'h', LONG_BINGET = 'j', LIST = 'l', BINPUT = 'q', LONG_BINPUT = 'r',
  SETITEM = 's', TUPLE = 't', SETITEMS = 'u', EMPTY_DICT = '}', EMPTY_LIST = ']', EMPTY_TUPLE = ')',
  BINBYTES = 'B', SHORT_BINBYTES = 'C', PROTO = 0x80, NEWOBJ = 0x81, TUPLE1 = 0x85, TUPLE2 = 0x86,
  TUPLE3 = 0x87, NEWTRUE = 0x88, NEWFALSE = 0x89, LONG1 = 0x8a, LONG4 = 0x8b, SHORT_BINUNICODE = 0x8c,
  BINUNICODE8 = 0x8d, BINBYTES8 = 0x8e, MEMOIZE = 0x94, STACK_GLOBAL = 0x93, FRAME = 0x95,
};

bool is_container(PyKind k) {
  return k == PyKind::Tuple || k == PyKind::List || k == PyKind::Dict || k == PyKind::Object;
}

class Unpickler final : public PickleContext {
 public:
  Unpickler(std::string_view in, const std::string& where, const StorageLoader& loader, const PickleLimits& limits)
      : PickleContext(where, loader, limits), in_(in) {}
  // Containers can hold themselves through the memo, and shared_ptr would leak such cycles;
  // everything not handed out is emptied first, which also keeps a deep chain of garbage
  // from being destroyed recursively.
  ~Unpickler() override {
    for (const PyRef& o : made_)
      if (!handed_out_ || !reachable_.count(o.get())) {
        o->items.clear();
        o->dict.clear();
        o->state.reset();
      }
  }

  PyRef run() {
    for (;;) {
      op_at_ = pos_;
      uint8_t op = u8();
      if (op == STOP) {
        if (stack_.empty() || (!marks_.empty() && marks_.back() == stack_.size()))
          bad("STOP with an empty stack");
        PyRef result = stack_.back();
        check_shape(result);
        handed_out_ = true;
        return result;
      }
      step(op);
    }
  }

  PyRef make(PyKind kind) override {
    auto o = std::make_shared<PyObject>();
    o->kind = kind;
    if (is_container(kind)) made_.push_back(o);
    return o;
  }
  void count_items(uint64_t n) override {
    items_ += n;
    if (items_ > limits_.max_items) bad("more than max_items ({}) container items", limits_.max_items);
  }
  std::string at() const override { return fmt::format("{}: at byte {}", where_, op_at_); }

 private:
  template <class... Args>
  [[noreturn]] void bad(fmt::format_string<Args...> format, Args&&... args) const {
    fail("{}: {}", at(), fmt::format(format, std::forward<Args>(args)...));
  }

  // ---- reading the input
  const uint8_t* take(uint64_t n) {
    if (n > in_.size() - pos_)
      bad("opcode 0x{:02x} needs {} more bytes, the pickle has {}", static_cast<uint8_t>(in_[op_at_]), n,
          in_.size() - pos_);
    const auto* p = reinterpret_cast<const uint8_t*>(in_.data()) + pos_;
    pos_ += n;
    return p;
  }
  uint8_t u8() {
    if (pos_ >= in_.size()) fail("{}: ends at byte {} without STOP", where_, pos_);
    return static_cast<uint8_t>(in_[pos_++]);
  }
  uint64_t le(int n) {
    const uint8_t* p = take(n);
    uint64_t v = 0;
    for (int k = n - 1; k >= 0; --k) v = v << 8 | p[k];
    return v;
  }
  std::string bytes(uint64_t n) {
    const uint8_t* p = take(n);
    return std::string(reinterpret_cast<const char*>(p), n);
  }
  std::string line() {
    size_t end = in_.find('\n', pos_);
    if (end == std::string_view::npos) bad("GLOBAL without a newline");
    std::string s(in_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return s;
  }
  // LONG1 / LONG4: little-endian two's complement of n bytes.
  int64_t long_n(uint64_t n) {
    if (n > 8) bad("integer of {} bytes is too large (kiln reads up to 8)", n);
    if (n == 0) return 0;
    uint64_t v = le(static_cast<int>(n));
    if (n < 8 && (v >> (8 * n - 1)) & 1) v |= ~uint64_t{0} << (8 * n);
    return static_cast<int64_t>(v);
  }

  // ---- the stack: items above the last MARK are all an opcode may see
  size_t floor() const { return marks_.empty() ? 0 : marks_.back(); }
  void push(PyRef o) {
    if (stack_.size() + memo_.size() + marks_.size() >= limits_.max_stack)
      bad("more than max_stack ({}) stack and memo entries", limits_.max_stack);
    stack_.push_back(std::move(o));
  }
  PyRef pop() {
    if (stack_.size() <= floor()) bad("opcode 0x{:02x} pops an empty stack", static_cast<uint8_t>(in_[op_at_]));
    PyRef o = std::move(stack_.back());
    stack_.pop_back();
    return o;
  }
  const PyRef& top() {
    if (stack_.size() <= floor()) bad("opcode 0x{:02x} needs an item on the stack", static_cast<uint8_t>(in_[op_at_]));
    return stack_.back();
  }
  std::vector<PyRef> pop_mark() {
    if (marks_.empty()) bad("opcode 0x{:02x} without a MARK", static_cast<uint8_t>(in_[op_at_]));
    std::vector<PyRef> items(std::make_move_iterator(stack_.begin() + static_cast<ptrdiff_t>(marks_.back())),
                             std::make_move_iterator(stack_.end()));
    stack_.resize(marks_.back());
    marks_.pop_back();
    return items;
  }
  PyRef sequence(PyKind kind, std::vector<PyRef> items) {
    count_items(items.size());
    PyRef o = make(kind);
    o->items = std::move(items);
    return o;
  }
  PyRef& target(PyKind kind, const char* opcode) {
    if (stack_.size() <= floor()) bad("{} without a target", opcode);
    if (stack_.back()->kind != kind)
      bad("{} on a {}, not a {}", opcode, py_kind_name(*stack_.back()), kind == PyKind::List ? "list" : "dict");
    return stack_.back();
  }
  void set_items(PyObject& dict, std::vector<PyRef>& kv) {
    if (kv.size() % 2) bad("SETITEMS or DICT with an odd number ({}) of keys and values", kv.size());
    count_items(kv.size() / 2);
    for (size_t k = 0; k < kv.size(); k += 2) dict.dict.emplace_back(std::move(kv[k]), std::move(kv[k + 1]));
  }

  // ---- memo
  void memo_put(uint64_t index) {
    const PyRef& v = top();
    auto [it, fresh] = memo_.try_emplace(index, v);
    if (!fresh) it->second = v;
    else if (stack_.size() + memo_.size() + marks_.size() > limits_.max_stack)
      bad("more than max_stack ({}) stack and memo entries", limits_.max_stack);
  }
  void memo_get(uint64_t index) {
    auto it = memo_.find(index);
    if (it == memo_.end()) bad("memo index {} is not set", index);
    push(it->second);
  }

  void step(uint8_t op);
  void check_shape(const PyRef& root);

  std::string_view in_;
  size_t pos_ = 0;
  std::vector<PyRef> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint64_t, PyRef> memo_;
  std::vector<PyRef> made_;  // every container, to empty what is not handed out
  std::unordered_map<const PyObject*, uint32_t> reachable_;  // from the result: the nesting below
  uint64_t items_ = 0;
  bool handed_out_ = false;  // the result passed check_shape: what it reaches is kept
};

void Unpickler::step(uint8_t op) {
  auto make_int = [&](int64_t v) { PyRef o = make(PyKind::Int); o->i = v; push(std::move(o)); };
  auto make_str = [&](PyKind kind, std::string s) { PyRef o = make(kind); o->s = std::move(s); push(std::move(o)); };
  switch (op) {
    case PROTO: {
      uint8_t proto = u8();
      if (proto > 5) bad("pickle protocol {} is not supported (2 to 5 are)", proto);
      return;
    }
    case FRAME: {
      uint64_t n = le(8);
      if (n > in_.size() - pos_) bad("frame of {} bytes runs past the end", n);
      return;
    }
    case MARK:
      if (stack_.size() + memo_.size() + marks_.size() >= limits_.max_stack)
        bad("more than max_stack ({}) stack and memo entries", limits_.max_stack);
      marks_.push_back(stack_.size());
      return;
    case POP: pop(); return;
    case POP_MARK: pop_mark(); return;
    case DUP: push(top()); return;
    case BINPUT: memo_put(le(1)); return;
    case LONG_BINPUT: memo_put(le(4)); return;
    case MEMOIZE: memo_put(memo_.size()); return;
    case BINGET: memo_get(le(1)); return;
    case LONG_BINGET: memo_get(le(4)); return;
    case NONE: push(make(PyKind::None)); return;
    case NEWTRUE:
    case NEWFALSE: {
      PyRef o = make(PyKind::Bool);
      o->b = op == NEWTRUE;
      push(std::move(o));
      return;
    }
    case BININT: make_int(static_cast<int32_t>(le(4))); return;
    case BININT1: make_int(static_cast<int64_t>(le(1))); return;
    case BININT2: make_int(static_cast<int64_t>(le(2))); return;
    case LONG1: make_int(long_n(le(1))); return;
    case LONG4: {
      auto n = static_cast<int32_t>(le(4));
      if (n < 0) bad("LONG4 with a negative length {}", n);
      make_int(long_n(static_cast<uint64_t>(n)));
      return;
    }
    case BINFLOAT: {
      const uint8_t* p = take(8);
      uint64_t bits = 0;
      for (int k = 0; k < 8; ++k) bits = bits << 8 | p[k];
      PyRef o = make(PyKind::Float);
      std::memcpy(&o->f, &bits, 8);
      push(std::move(o));
      return;
    }
    case SHORT_BINUNICODE: make_str(PyKind::String, bytes(le(1))); return;
    case BINUNICODE: make_str(PyKind::String, bytes(le(4))); return;
    case BINUNICODE8: make_str(PyKind::String, bytes(le(8))); return;
    case SHORT_BINSTRING: make_str(PyKind::String, bytes(le(1))); return;
    case BINSTRING: {
      auto n = static_cast<int32_t>(le(4));
      if (n < 0) bad("BINSTRING with a negative length {}", n);
      make_str(PyKind::String, bytes(static_cast<uint64_t>(n)));
      return;
    }
    case SHORT_BINBYTES: make_str(PyKind::Bytes, bytes(le(1))); return;
    case BINBYTES: make_str(PyKind::Bytes, bytes(le(4))); return;
    case BINBYTES8: make_str(PyKind::Bytes, bytes(le(8))); return;
    case EMPTY_TUPLE: push(sequence(PyKind::Tuple, {})); return;
    case TUPLE: push(sequence(PyKind::Tuple, pop_mark())); return;
    case TUPLE1:
    case TUPLE2:
    case TUPLE3: {
      std::vector<PyRef> items(op - TUPLE1 + 1);
      for (size_t k = items.size(); k-- > 0;) items[k] = pop();
      push(sequence(PyKind::Tuple, std::move(items)));
      return;
    }
    case EMPTY_LIST: push(sequence(PyKind::List, {})); return;
    case LIST: push(sequence(PyKind::List, pop_mark())); return;
    case APPEND: {
      PyRef v = pop();
      count_items(1);
      target(PyKind::List, "APPEND")->items.push_back(std::move(v));
      return;
    }
    case APPENDS: {
      std::vector<PyRef> vs = pop_mark();
      count_items(vs.size());
      auto& items = target(PyKind::List, "APPENDS")->items;
      items.insert(items.end(), std::make_move_iterator(vs.begin()), std::make_move_iterator(vs.end()));
      return;
    }
    case EMPTY_DICT: push(make(PyKind::Dict)); return;
    case DICT: {
      std::vector<PyRef> kv = pop_mark();
      PyRef d = make(PyKind::Dict);
      set_items(*d, kv);
      push(std::move(d));
      return;
    }
    case SETITEM: {
      std::vector<PyRef> kv(2);
      kv[1] = pop();
      kv[0] = pop();
      set_items(*target(PyKind::Dict, "SETITEM"), kv);
      return;
    }
    case SETITEMS: {
      std::vector<PyRef> kv = pop_mark();
      set_items(*target(PyKind::Dict, "SETITEMS"), kv);
      return;
    }
    case GLOBAL: {
      std::string module = line();
      std::string name = line();
      push(make_global(module, name));
      return;
    }
    case STACK_GLOBAL: {
      PyRef name = pop(), module = pop();
      if (module->kind != PyKind::String || name->kind != PyKind::String)
        bad("STACK_GLOBAL on a {} and a {}, not two strings", py_kind_name(*module), py_kind_name(*name));
      push(make_global(module->s, name->s));
      return;
    }
    case REDUCE: {
      PyRef args = pop(), fn = pop();
      push(call(fn, args, "REDUCE"));
      return;
    }
    case NEWOBJ: {
      PyRef args = pop(), cls = pop();
      push(call(cls, args, "NEWOBJ"));
      return;
    }
    case BUILD: {
      PyRef state = pop();
      const PyRef& o = top();
      // OrderedDict keeps its attributes (a state_dict's _metadata) in state as well.
      if (o->kind != PyKind::Object && o->kind != PyKind::Dict) bad("BUILD on a {}", py_kind_name(*o));
      o->state = std::move(state);
      return;
    }
    case BINPERSID: push(persistent_load(pop())); return;
    default: break;
  }
  bad("opcode 0x{:02x}{} is not supported", op,
      op >= 0x20 && op < 0x7f ? fmt::format(" ('{}')", static_cast<char>(op)) : std::string());
}

// Refuses cycles and nesting deeper than max_depth with an explicit stack, so that neither
// this walk nor the destruction of the result can recurse without bound.
void Unpickler::check_shape(const PyRef& root) {
  constexpr uint32_t kOpen = ~uint32_t{0};
  struct Frame {
    const PyObject* o;
    size_t next = 0;
    uint32_t below = 0;  // the deepest nesting under o seen so far
  };
  auto child = [](const PyObject* o, size_t k) -> const PyObject* {
    if (k < o->items.size()) return o->items[k].get();
    k -= o->items.size();
    if (k < 2 * o->dict.size()) return (k % 2 ? o->dict[k / 2].second : o->dict[k / 2].first).get();
    return o->state.get();
  };
  auto children = [](const PyObject* o) { return o->items.size() + 2 * o->dict.size() + (o->state ? 1 : 0); };
  auto limit = static_cast<uint32_t>(std::max(limits_.max_depth, 1));
  std::vector<Frame> path;
  auto enter = [&](const PyObject* o) {
    if (path.size() + 1 > limit)
      fail("{}: nesting deeper than max_depth ({}) containers", where_, limits_.max_depth);
    reachable_[o] = kOpen;
    path.push_back({o});
  };
  if (!is_container(root->kind)) return;
  enter(root.get());
  while (!path.empty()) {
    Frame& f = path.back();
    if (f.next == children(f.o)) {
      uint32_t height = f.below + 1;
      reachable_[f.o] = height;
      path.pop_back();
      if (!path.empty()) path.back().below = std::max(path.back().below, height);
      continue;
    }
    const PyObject* c = child(f.o, f.next++);
    if (!c || !is_container(c->kind)) continue;
    auto it = reachable_.find(c);
    if (it == reachable_.end()) {
      enter(c);
    } else if (it->second == kOpen) {
      fail("{}: the result holds a cycle (a {} that contains itself)", where_, py_kind_name(*c));
    } else {
      if (path.size() + it->second > limit)
        fail("{}: nesting deeper than max_depth ({}) containers", where_, limits_.max_depth);
      f.below = std::max(f.below, it->second);
    }
  }
}

}  // namespace

PyRef unpickle(std::string_view bytes, const std::string& where, const StorageLoader& storages,
               const PickleLimits& limits) {
  Unpickler u(bytes, where, storages, limits);
  return u.run();
}

PyRef PyObject::attr(std::string_view key) const {
  const PyObject* d = this;
  if (kind == PyKind::Object) d = state.get();
  if (!d || d->kind != PyKind::Dict) return nullptr;
  // Python keeps the last value set for a key.
  for (auto it = d->dict.rbegin(); it != d->dict.rend(); ++it)
    if (it->first && it->first->kind == PyKind::String && it->first->s == key) return it->second;
  return nullptr;
}

std::string py_kind_name(const PyObject& o) {
  switch (o.kind) {
    case PyKind::None: return "None";
    case PyKind::Bool: return "bool";
    case PyKind::Int: return "int";
    case PyKind::Float: return "float";
    case PyKind::String: return "str";
    case PyKind::Bytes: return "bytes";
    case PyKind::Tuple: return "tuple";
    case PyKind::List: return "list";
    case PyKind::Dict: return "dict";
    case PyKind::Object: return o.s;
    case PyKind::Tensor: return "Tensor";
    case PyKind::Global: return "global " + o.s;
    case PyKind::Device: return "device";
  }
  return "unknown";
}

std::string describe(const PyObject& o) {
  switch (o.kind) {
    case PyKind::Bool: return o.b ? "True" : "False";
    case PyKind::Int: return fmt::format("int {}", o.i);
    case PyKind::Float: return fmt::format("float {}", o.f);
    case PyKind::String:
      return o.s.size() <= 40 ? fmt::format("str '{}'", o.s) : fmt::format("str '{}...'", o.s.substr(0, 40));
    case PyKind::Bytes: return fmt::format("bytes of length {}", o.s.size());
    case PyKind::Tuple:
    case PyKind::List: return fmt::format("{} of {} items", py_kind_name(o), o.items.size());
    case PyKind::Dict: return fmt::format("dict of {} items", o.dict.size());
    case PyKind::Tensor:
      return o.tensor.defined() ? fmt::format("Tensor {}{}", ir::dtype_name(o.tensor.dtype()),
                                              ir::dims_str(o.tensor.dims()))
                                : "Tensor";
    case PyKind::Device: return fmt::format("device '{}'", o.s);
    case PyKind::None:
    case PyKind::Object:
    case PyKind::Global: break;
  }
  return py_kind_name(o);
}

}  // namespace kiln::frontend::torchscript
