// TensorLists, TF2's TensorArrays: Keras's RNN layers unstack their input into one, read an
// element per step of a While, and write each step's output into another. A list of n
// elements of one shape is the tensor [n, element...] stacking them, so reading an element is
// a Gather, writing one a ScatterND, and stacking the list the tensor itself. Lists that grow
// (TensorListPushBack) or hold elements of different shapes have no such tensor and are refused.
#include <fmt/format.h>

#include "frontend/tensorflow/tf_graph_builder.h"
#include "ir/error.h"

namespace kiln::frontend::tensorflow {

namespace {

// The element shape a TensorList op states ([-1] or -1: unknown), checked against `dims`.
void check_element_shape(TfLowering& L, const std::vector<int64_t>& stated, const std::vector<ir::Dim>& dims) {
  if (stated.size() == 1 && stated[0] == -1 && dims.size() != 1) return;  // -1 alone: any rank
  bool ok = stated.size() == dims.size();
  for (size_t k = 0; ok && k < stated.size(); ++k) ok = stated[k] < 0 || !dims[k].is_static() || dims[k].value() == stated[k];
  if (!ok) L.fail_node(fmt::format("the element shape {} does not match the list's elements, {}", ir::dims_str(stated), ir::Shape(dims).str()));
}

std::vector<ir::Dim> element_dims(const ir::Value* list) {
  const auto& d = list->shape().dims();
  return {d.begin() + 1, d.end()};
}

// A scalar index (int32 or int64) as the [1, 1] int64 indices ScatterND takes, or as a scalar.
ir::Value* index_of(TfLowering& L, ir::Value* index) {
  if (index->shape().rank() != 0) L.fail_node(fmt::format("the index '{}' is not a scalar", index->name()));
  return L.cast(index, ir::DType::I64);
}

}  // namespace

ir::Value* GraphBuilder::zeros(ir::DType dtype, const std::vector<ir::Dim>& dims) {
  TfLowering& L = lowering_;
  std::vector<ir::Value*> parts;
  std::vector<int64_t> run;  // static dims not yet in parts
  bool all_static = true;
  for (const ir::Dim& d : dims) {
    if (d.is_static()) {
      run.push_back(d.value());
      continue;
    }
    all_static = false;
    if (!run.empty()) parts.push_back(L.i64s(run));
    run.clear();
    ir::Value* from = nullptr;
    int64_t axis = 0;
    for (ir::Value* in : graph_.inputs()) {
      if (!in->has_type()) continue;
      const auto& s = in->shape().dims();
      for (size_t k = 0; k < s.size() && !from; ++k)
        if (s[k] == d) from = in, axis = static_cast<int64_t>(k);
      if (from) break;
    }
    if (!from) L.fail_node(fmt::format("a TensorList element has the dim {}, which no input of the graph has", ir::Shape({d}).str()));
    parts.push_back(L.node("Gather", {L.node("Shape", {from}), L.i64s({axis})}, {{"axis", int64_t{0}}}));
  }
  if (!run.empty()) parts.push_back(L.i64s(run));
  ir::Value* shape = all_static ? parts.empty() ? L.i64s({}) : parts[0]
                                : L.node("Concat", parts, {{"axis", int64_t{0}}});
  return L.node("Expand", {L.scalar(0, dtype), shape});
}

std::vector<TfValue> GraphBuilder::lower_list(const kiln::tf::NodeDef& node, const std::string& where, const std::string& base,
                                              const std::vector<TfValue>& in) {
  TfLowering& L = lowering_;
  L.begin(node, where, base);
  const std::string& op = node.op();
  const auto tensor_in = [&](size_t k, const char* what) -> ir::Value* {
    if (k >= in.size() || !in[k].tensor || in[k].is_list() || in[k].is_resource())
      L.fail_node(fmt::format("expects {} as input {}", what, k));
    if (!in[k].tensor->has_type()) L.fail_node(fmt::format("input {} has no known type", k));
    return in[k].tensor;
  };
  const auto list_in = [&]() -> const TfValue& {
    if (in.empty() || !in[0].is_list()) L.fail_node("expects a TensorList as input 0");
    return in[0];
  };
  // The stacked tensor of a list whose elements' shape is known.
  const auto stacked = [&]() -> ir::Value* {
    const TfValue& l = list_in();
    if (!l.tensor || !l.tensor->has_type())
      L.fail_node("reads a TensorList before anything is written to it, and its element shape is not known");
    return l.tensor;
  };
  const auto make_list = [](ir::Value* v) {
    TfValue t{v};
    t.list = true;
    return t;
  };
  const auto stated_shape = [&](size_t k) { return L.const_ints(tensor_in(k, "an element shape"), "the element shape"); };

  if (op == "TensorListFromTensor") {  // (tensor, element_shape)
    ir::Value* t = tensor_in(0, "a tensor");
    if (t->shape().rank() == 0) L.fail_node("cannot unstack a scalar");
    check_element_shape(L, stated_shape(1), element_dims(t));
    return {make_list(t)};
  }
  if (op == "TensorListReserve") {  // (element_shape, num_elements)
    const ir::DType dtype = L.attr_dtype("element_dtype");
    const std::vector<int64_t> count = L.const_ints(tensor_in(1, "the number of elements"), "the number of elements");
    if (count.size() != 1 || count[0] < 0 || static_cast<uint64_t>(count[0]) > L.limits().max_elements)
      L.fail_node(fmt::format("the number of elements must be one number in 0..{}", L.limits().max_elements));
    auto reserved = std::make_shared<TfReservedList>();
    reserved->dtype = dtype;
    reserved->size = count[0];
    // A scalar -1 leaves the rank unknown; -1 in a 1-D shape, that dim.
    if (tensor_in(0, "an element shape")->shape().rank() != 0) reserved->element_shape = stated_shape(0);
    bool known = reserved->element_shape.has_value();
    if (known)
      for (int64_t d : *reserved->element_shape) known = known && d >= 0;
    if (known) {
      std::vector<ir::Dim> dims = {ir::Dim(count[0])};
      for (int64_t d : *reserved->element_shape) dims.emplace_back(d);
      return {make_list(zeros(dtype, dims))};
    }
    TfValue v;
    v.list = true;
    v.reserved = std::move(reserved);
    return {v};
  }
  if (op == "TensorListLength") {
    const TfValue& l = list_in();
    const int64_t n = l.tensor && l.tensor->has_type() && l.tensor->shape()[0].is_static() ? l.tensor->shape()[0].value()
                      : l.reserved                                                         ? l.reserved->size
                                                                                           : -1;
    if (n < 0) L.fail_node("the list's length is not known");
    return {TfValue{L.scalar(static_cast<double>(n), ir::DType::I32)}};
  }
  if (op == "TensorListElementShape") {
    ir::Value* list = stacked();
    ir::Value* shape = L.node("Slice", {L.node("Shape", {list}), L.i64s({1}), L.i64s({static_cast<int64_t>(list->shape().rank())})});
    const ir::DType dt = L.attr_dtype("shape_type");
    return {TfValue{L.cast(shape, dt)}};
  }
  if (op == "TensorListGetItem") {  // (list, index, element_shape)
    ir::Value* list = stacked();
    check_element_shape(L, stated_shape(2), element_dims(list));
    return {TfValue{L.node("Gather", {list, index_of(L, tensor_in(1, "an index"))}, {{"axis", int64_t{0}}})}};
  }
  if (op == "TensorListGather") {  // (list, indices, element_shape)
    ir::Value* list = stacked();
    check_element_shape(L, stated_shape(2), element_dims(list));
    return {TfValue{L.node("Gather", {list, L.cast(tensor_in(1, "indices"), ir::DType::I64)}, {{"axis", int64_t{0}}})}};
  }
  if (op == "TensorListStack") {  // (list, element_shape), num_elements
    ir::Value* list = stacked();
    check_element_shape(L, stated_shape(1), element_dims(list));
    const int64_t n = L.attr_int("num_elements", -1);
    if (n >= 0 && list->shape()[0].is_static() && list->shape()[0].value() != n)
      L.fail_node(fmt::format("stacks {} elements of a list of {}", n, list->shape()[0].value()));
    return {TfValue{list}};
  }
  if (op == "TensorListSetItem") {  // (list, index, item)
    if (L.attr_bool("resize_if_index_out_of_bounds", false)) L.fail_node("a list that grows is not supported");
    const TfValue& l = list_in();
    ir::Value* item = tensor_in(2, "an item");
    ir::Value* list = l.tensor;
    if (!list || !list->has_type()) {  // a reserved list: the item gives its element shape
      const TfReservedList& r = *l.reserved;
      std::vector<ir::Dim> dims = item->shape().dims();
      if (r.element_shape) check_element_shape(L, *r.element_shape, dims);
      if (item->dtype() != r.dtype)
        L.fail_node(fmt::format("writes a {} item to a list of {}", ir::dtype_name(item->dtype()), ir::dtype_name(r.dtype)));
      l.reserved->resolved = dims;
      dims.insert(dims.begin(), ir::Dim(r.size));
      if (list) {
        list->set_type(r.dtype, ir::Shape(dims));  // the While body's input for it
      } else {
        list = zeros(r.dtype, dims);
      }
    } else if (item->shape().dims() != element_dims(list) || item->dtype() != list->dtype()) {
      L.fail_node(fmt::format("writes a {} {} item to a list of {} elements", ir::dtype_name(item->dtype()), item->shape().str(),
                              ir::Shape(element_dims(list)).str()));
    }
    ir::Value* index = L.node("Reshape", {index_of(L, tensor_in(1, "an index")), L.i64s({1, 1})});
    ir::Value* update = L.node("Unsqueeze", {item, L.i64s({0})});
    return {make_list(L.node("ScatterND", {list, index, update}))};
  }
  L.fail_node("this TensorList op is not supported (lists that grow or hold elements of different shapes have no tensor form)");
}

}  // namespace kiln::frontend::tensorflow
