// The lowering of a TorchScript program into the IR: an evaluator of the serialized code
// that runs everything it can at compile time (Python values, shapes, module attributes,
// control flow on known values, loops with known trip counts) and emits IR nodes for tensor
// work through the aten table. An `if` on a tensor value runs both branches and selects
// their results with Where (both branches are pure in the code TorchScript prints for
// inference); a loop whose trip count depends on tensor data is refused.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "frontend/torchscript/aten_ops.h"
#include "frontend/torchscript/pickle.h"
#include "frontend/torchscript/torch_value.h"
#include "frontend/torchscript/ts_program.h"

namespace kiln::frontend::torchscript {

// A module or class instance: its pickled state, converted attribute by attribute on use.
struct ObjectInstance {
  std::string class_name;  // "__torch__.torchvision.models.resnet.ResNet"
  const ClassDef* cls = nullptr;
  std::string path;        // "layer1.0.conv1": how it was first reached from the root module
  PyRef state;             // the pickled attributes (a Dict), may be null
  std::map<std::string, TValue> attrs;  // converted or assigned attributes
};

struct FunctionRef {
  enum class Kind { Method, Function, Builtin, Class };
  Kind kind = Kind::Builtin;
  const FunctionDef* def = nullptr;          // Method, Function
  std::shared_ptr<ObjectInstance> self;      // Method
  std::string name;                          // Builtin: "torch.add", "ops.prim.dtype", "range"; Class: qualified name
  std::optional<TValue> bound_self;          // Builtin called as a method: x.view(...)
};

struct InputSpec {
  std::string name;                 // forward's parameter name, or "" for the position
  std::vector<int64_t> dims;
  ir::DType dtype = ir::DType::F32;
  // Axes given as MIN..MAX (kiln compile's bounded dims; dims holds MAX there).
  std::map<size_t, std::pair<int64_t, int64_t>> ranges;
  // Their steps where given (MIN..MAX:STEP), else 1.
  std::map<size_t, int64_t> steps;
};

class Lowering final : public AtenBuilder {
 public:
  Lowering(const Program& program, ir::Graph& graph, const ProgramLimits& limits, const PickleLimits& pickle_limits,
           std::string archive);
  // The root module's `forward` over graph inputs made from `inputs` (by name, else in order).
  void lower_forward(const PyRef& root, const PyRef& constants, const std::vector<InputSpec>& inputs);
  std::string where() const override;

 private:
  enum class Flow { Normal, Return, Break, Continue };
  struct Frame {
    std::map<std::string, TValue> locals;
    std::string file;
  };

  // values from the pickles
  TValue from_py(const PyRef& o, const std::string& path);
  TValue get_attr(const std::shared_ptr<ObjectInstance>& obj, const std::string& name);
  std::shared_ptr<ObjectInstance> instance_of(const PyRef& o, const std::string& path);

  // evaluation
  TValue eval(const Expr& e);
  TValue eval_name(const Expr& e);
  TValue eval_attribute(const Expr& e);
  TValue eval_call(const Expr& e);
  TValue eval_subscript(const Expr& e);
  TValue eval_binary(Op op, const TValue& l, const TValue& r, const Expr& at);
  TValue eval_compare(const Expr& e);
  TValue call(const TValue& fn, std::vector<TValue> args, std::vector<std::pair<std::string, TValue>> kwargs);
  TValue call_function(const FunctionDef& def, const std::shared_ptr<ObjectInstance>& self, std::vector<TValue> args,
                       std::vector<std::pair<std::string, TValue>> kwargs, const std::string& file);
  TValue call_builtin(const FunctionRef& f, std::vector<TValue> args, std::vector<std::pair<std::string, TValue>> kwargs);
  TValue call_aten(const std::string& name, std::vector<TValue> args, std::vector<std::pair<std::string, TValue>> kwargs);
  TValue call_prim(const std::string& name, std::vector<TValue>& args);
  TValue call_python_builtin(const std::string& name, std::vector<TValue>& args,
                             std::vector<std::pair<std::string, TValue>>& kwargs, bool& handled);
  bool isinstance(const TValue& v, const Expr& type);
  // compile-time truth, or nullopt when it depends on tensor data
  std::optional<bool> truth(const TValue& v);

  // statements
  Flow exec(const Block& block);
  Flow exec_stmt(const Stmt& s);
  void assign(const Expr& target, const TValue& v);
  Flow exec_if(const Stmt& s);
  Flow exec_for(const Stmt& s);
  Flow exec_while(const Stmt& s);
  TValue merge(ir::Value* cond, const TValue& a, const TValue& b, const std::string& name);
  void rebind_tensor(ir::Value* from, ir::Value* to);
  void step();

  const Program& program_;
  ProgramLimits limits_;
  PickleLimits pickle_limits_;
  std::string archive_;
  std::vector<Frame> frames_;
  TValue constants_;
  std::map<const PyObject*, TValue> converted_;  // tensors and objects, converted once
  const SourceLoc* loc_ = nullptr;               // the construct being evaluated
  uint64_t steps_ = 0;
  uint64_t iterations_ = 0;
  Frame* frame() { return &frames_.back(); }
  friend class LocGuard;
};

// Keeps the evaluator's location on the construct being evaluated and restores it after.
class LocGuard {
 public:
  LocGuard(Lowering& l, const SourceLoc& loc) : l_(l), saved_(l.loc_) { l.loc_ = &loc; }
  ~LocGuard() { l_.loc_ = saved_; }
  LocGuard(const LocGuard&) = delete;
  LocGuard& operator=(const LocGuard&) = delete;

 private:
  Lowering& l_;
  const SourceLoc* saved_;
};

}  // namespace kiln::frontend::torchscript
