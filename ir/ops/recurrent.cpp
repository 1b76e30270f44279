// RNN, GRU and LSTM (opset 14/22 forms): directions, layouts, sequence lengths, initial states,
// peepholes, clip and the activation functions. The reference converts to f32 and runs the
// runtime's kernel, the one the compiled code calls.
#include "ir/ops/recurrent.h"

#include <map>

#include "ir/ops/op_helpers.h"

namespace kiln::ir {
namespace {

namespace rt = kiln::rt;

rt::RnnCell cell_of(const Node& node) {
  return node.op() == "RNN" ? rt::RnnCell::Rnn : node.op() == "GRU" ? rt::RnnCell::Gru : rt::RnnCell::Lstm;
}

// The activation names ONNX allows, and how many of activation_alpha / activation_beta each reads
// (with their defaults when the lists run out).
struct FuncSpec {
  rt::RnnActivation kind;
  bool alpha, beta;
  float default_alpha, default_beta;
};
const std::map<std::string, FuncSpec>& func_specs() {
  static const std::map<std::string, FuncSpec> specs = {
      {"relu", {rt::RnnActivation::Relu, false, false, 0.f, 0.f}},
      {"tanh", {rt::RnnActivation::Tanh, false, false, 0.f, 0.f}},
      {"sigmoid", {rt::RnnActivation::Sigmoid, false, false, 0.f, 0.f}},
      {"affine", {rt::RnnActivation::Affine, true, true, 1.f, 0.f}},
      {"leakyrelu", {rt::RnnActivation::LeakyRelu, true, false, 0.01f, 0.f}},
      {"thresholdedrelu", {rt::RnnActivation::ThresholdedRelu, true, false, 1.f, 0.f}},
      {"scaledtanh", {rt::RnnActivation::ScaledTanh, true, true, 1.f, 1.f}},
      {"hardsigmoid", {rt::RnnActivation::HardSigmoid, true, true, 0.2f, 0.5f}},
      {"elu", {rt::RnnActivation::Elu, true, false, 1.f, 0.f}},
      {"softsign", {rt::RnnActivation::Softsign, false, false, 0.f, 0.f}},
      {"softplus", {rt::RnnActivation::Softplus, false, false, 0.f, 0.f}},
  };
  return specs;
}

void set_funcs(const Node& node, rt::RnnParams& p) {
  const int n = rt::rnn_funcs(p.cell);
  std::vector<std::string> names;
  if (node.has_attr("activations")) {
    names = node.attr("activations").strings();
  } else {
    const std::vector<std::string> defaults = p.cell == rt::RnnCell::Rnn   ? std::vector<std::string>{"Tanh"}
                                              : p.cell == rt::RnnCell::Gru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                                           : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
    for (int d = 0; d < p.directions; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
  }
  // One direction's list serves both directions, as onnxruntime reads it.
  if (static_cast<int>(names.size()) == n && p.directions == 2) names.insert(names.end(), names.begin(), names.end());
  if (static_cast<int>(names.size()) != n * p.directions)
    fail("{}: {} activations given, {} needs {} per direction", node.describe(), names.size(), node.op(), n);
  const std::vector<float> alphas = node.has_attr("activation_alpha") ? node.floats("activation_alpha") : std::vector<float>{};
  const std::vector<float> betas = node.has_attr("activation_beta") ? node.floats("activation_beta") : std::vector<float>{};
  size_t ai = 0, bi = 0;
  for (size_t i = 0; i < names.size(); ++i) {
    std::string lower;
    for (char ch : names[i]) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    auto it = func_specs().find(lower);
    if (it == func_specs().end()) fail("{}: activation '{}' is not supported", node.describe(), names[i]);
    const FuncSpec& s = it->second;
    rt::RnnFunc f{s.kind, s.default_alpha, s.default_beta};
    if (s.alpha && ai < alphas.size()) f.alpha = alphas[ai++];
    if (s.beta && bi < betas.size()) f.beta = betas[bi++];
    p.funcs[i / n][i % n] = f;
  }
}

void expect_dims(const Node& node, const std::vector<int64_t>& got, const std::vector<int64_t>& want,
                 const char* what) {
  if (got != want) fail("{}: {} must be {}, got {}", node.describe(), what, dims_str(want), dims_str(got));
}

}  // namespace

rt::RnnParams rnn_params(const Node& node, const std::vector<std::vector<int64_t>>& dims) {
  rt::RnnParams p;
  p.cell = cell_of(node);
  const std::string& dir = node.s("direction");
  if (dir != "forward" && dir != "reverse" && dir != "bidirectional")
    fail("{}: direction '{}' is not forward, reverse or bidirectional", node.describe(), dir);
  p.directions = dir == "bidirectional" ? 2 : 1;
  p.reverse = dir == "reverse";
  const int64_t layout = node.i("layout");
  if (layout != 0 && layout != 1) fail("{}: layout {} is not 0 or 1", node.describe(), layout);
  p.batch_first = layout == 1;
  const std::vector<int64_t>& x = dims[kRnnX];
  if (x.size() != 3) fail("{}: X must be 3-D, got {}", node.describe(), dims_str(x));
  p.seq = p.batch_first ? x[1] : x[0];
  p.batch = p.batch_first ? x[0] : x[1];
  p.input = x[2];
  const int64_t gates = rt::rnn_gates(p.cell);
  const std::vector<int64_t>& w = dims[kRnnW];
  if (w.size() != 3 || w[0] != p.directions || w[2] != p.input || w[1] % gates != 0)
    fail("{}: W {} must be [{} directions, {} * hidden, input {}]", node.describe(), dims_str(w), p.directions,
         gates, p.input);
  p.hidden = w[1] / gates;
  if (node.has_attr("hidden_size") && node.i("hidden_size") != p.hidden)
    fail("{}: hidden_size {} does not match W {}", node.describe(), node.i("hidden_size"), dims_str(w));
  const int64_t D = p.directions, H = p.hidden, G = gates * H;
  expect_dims(node, dims[kRnnR], {D, G, H}, "R");
  auto has = [&](size_t i) { return i < dims.size() && i < node.num_inputs() && node.has_input(i); };
  if (has(kRnnB)) expect_dims(node, dims[kRnnB], {D, 2 * G}, "B");
  if (has(kRnnSeqLens)) expect_dims(node, dims[kRnnSeqLens], {p.batch}, "sequence_lens");
  const std::vector<int64_t> state = p.batch_first ? std::vector<int64_t>{p.batch, D, H} : std::vector<int64_t>{D, p.batch, H};
  if (has(kRnnH0)) expect_dims(node, dims[kRnnH0], state, "initial_h");
  if (p.cell == rt::RnnCell::Lstm) {
    if (has(kRnnC0)) expect_dims(node, dims[kRnnC0], state, "initial_c");
    if (has(kRnnP)) expect_dims(node, dims[kRnnP], {D, 3 * H}, "P");
    p.input_forget = node.i("input_forget") != 0;
  }
  if (p.cell == rt::RnnCell::Gru) p.linear_before_reset = node.i("linear_before_reset") != 0;
  if (node.has_attr("clip")) {
    p.clip = node.f("clip");
    if (!(p.clip > 0.f)) fail("{}: clip {} must be positive", node.describe(), p.clip);
  }
  set_funcs(node, p);
  return p;
}

namespace {

std::vector<std::vector<int64_t>> static_dims(const Node& node, bool& known) {
  std::vector<std::vector<int64_t>> dims;
  known = true;
  for (size_t i = 0; i < node.num_inputs(); ++i) {
    if (!node.has_input(i)) {
      dims.emplace_back();
      continue;
    }
    const Shape& s = node.input(i)->shape();
    known = known && s.is_static();
    dims.push_back(s.is_static() ? s.values() : std::vector<int64_t>{});
  }
  return dims;
}

void infer_rnn(Node& node) {
  require_float(node, kRnnX);
  for (size_t i : {kRnnW, kRnnR, kRnnB, kRnnH0, kRnnC0, kRnnP})
    if (i < node.num_inputs() && node.has_input(i)) require_same_dtype(node, kRnnX, i);
  if (node.has_input(kRnnSeqLens)) require_dtype(node, kRnnSeqLens, {DType::I32});
  const Shape& x = node.input(kRnnX)->shape();
  const Shape& w = node.input(kRnnW)->shape();
  if (x.rank() != 3 || w.rank() != 3)
    fail("{}: X {} and W {} must be 3-D", node.describe(), x.str(), w.str());
  bool known = false;
  std::vector<std::vector<int64_t>> dims = static_dims(node, known);
  if (known) rnn_params(node, dims);
  const bool batch_first = node.i("layout") == 1;
  const Dim seq = batch_first ? x[1] : x[0], batch = batch_first ? x[0] : x[1];
  const Dim dirs = w[0];
  Dim hidden = node.has_attr("hidden_size") ? Dim(node.i("hidden_size")) : Dim::unknown();
  if (w[1].is_static()) hidden = Dim(w[1].value() / kiln::rt::rnn_gates(cell_of(node)));
  const DType t = node.input(kRnnX)->dtype();
  node.output(0)->set_type(t, batch_first ? Shape(std::vector<Dim>{batch, seq, dirs, hidden})
                                          : Shape(std::vector<Dim>{seq, dirs, batch, hidden}));
  const Shape state = batch_first ? Shape(std::vector<Dim>{batch, dirs, hidden}) : Shape(std::vector<Dim>{dirs, batch, hidden});
  for (size_t i = 1; i < node.num_outputs(); ++i) node.output(i)->set_type(t, state);
}

void eval_rnn(const Node& node, std::span<const Tensor* const> in, std::vector<Tensor>& out) {
  std::vector<std::vector<int64_t>> dims;
  for (const Tensor* t : in) dims.push_back(t ? t->dims() : std::vector<int64_t>{});
  const rt::RnnParams p = rnn_params(node, dims);
  const bool lstm = p.cell == rt::RnnCell::Lstm;
  const std::vector<float> x = values_f32(in[kRnnX]), w = values_f32(in[kRnnW]), r = values_f32(in[kRnnR]),
                           b = values_f32(optional_input(in, kRnnB)), h0 = values_f32(optional_input(in, kRnnH0)),
                           c0 = lstm ? values_f32(optional_input(in, kRnnC0)) : std::vector<float>{},
                           peep = lstm ? values_f32(optional_input(in, kRnnP)) : std::vector<float>{};
  const Tensor* lens = optional_input(in, kRnnSeqLens);
  const int64_t D = p.directions, H = p.hidden;
  std::vector<float> y(static_cast<size_t>(p.seq * D * p.batch * H)), yh(static_cast<size_t>(D * p.batch * H)),
      yc(yh.size()), scratch(rt::rnn_scratch_floats(p));
  if (!rt::rnn_f32(p, x.data(), w.data(), r.data(), data_or_null(b), lens ? lens->data<int32_t>() : nullptr,
                   data_or_null(h0), data_or_null(c0), data_or_null(peep), y.data(), yh.data(), yc.data(),
                   scratch.data(), nullptr))
    fail("{}: a sequence length is outside [0, {}]", node.describe(), p.seq);
  const DType t = in[kRnnX]->dtype();
  const std::vector<int64_t> state = p.batch_first ? std::vector<int64_t>{p.batch, D, H} : std::vector<int64_t>{D, p.batch, H};
  out[0] = tensor_from_f32(
      t, p.batch_first ? std::vector<int64_t>{p.batch, p.seq, D, H} : std::vector<int64_t>{p.seq, D, p.batch, H}, y);
  if (out.size() > 1) out[1] = tensor_from_f32(t, state, yh);
  if (out.size() > 2) out[2] = tensor_from_f32(t, state, yc);
}

Cost rnn_cost(const Node& node) {
  Cost c;
  c.bytes = io_bytes(node);
  bool known = false;
  std::vector<std::vector<int64_t>> dims = static_dims(node, known);
  if (!known) return c;
  const rt::RnnParams p = rnn_params(node, dims);
  const double G = static_cast<double>(rt::rnn_gates(p.cell) * p.hidden);
  c.flops = 2.0 * p.directions * p.seq * p.batch * G * static_cast<double>(p.input + p.hidden);
  return c;
}

std::vector<AttrSpec> rnn_attrs(const std::vector<AttrSpec>& extra) {
  std::vector<AttrSpec> a = {{"activation_alpha", AttrType::Floats, std::nullopt, true},
                             {"activation_beta", AttrType::Floats, std::nullopt, true},
                             {"activations", AttrType::Strings, std::nullopt, true},
                             {"clip", AttrType::Float, std::nullopt, true},
                             {"direction", AttrType::String, Attribute(std::string("forward"))},
                             {"hidden_size", AttrType::Int, std::nullopt, true},
                             {"layout", AttrType::Int, Attribute(int64_t{0})}};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

}  // namespace

void register_recurrent_ops(Registry& r) {
  const std::vector<InputSpec> inputs = {{"X"}, {"W"}, {"R"}, {"B", true}, {"sequence_lens", true}, {"initial_h", true}};
  r.add(OpDef{
      .name = "RNN",
      .summary = "Elman recurrence H = f(X W^T + H R^T + b) over a sequence, one or both directions",
      .inputs = inputs,
      .outputs = {"Y", "Y_h"},
      .min_outputs = 1,
      .attrs = rnn_attrs({}),
      .infer = infer_rnn,
      .eval = eval_rnn,
      .cost = rnn_cost,
  });
  r.add(OpDef{
      .name = "GRU",
      .summary = "gated recurrent unit (gates z, r, h) over a sequence, one or both directions",
      .inputs = inputs,
      .outputs = {"Y", "Y_h"},
      .min_outputs = 1,
      .attrs = rnn_attrs({{"linear_before_reset", AttrType::Int, Attribute(int64_t{0})}}),
      .infer = infer_rnn,
      .eval = eval_rnn,
      .cost = rnn_cost,
  });
  std::vector<InputSpec> lstm_inputs = inputs;
  lstm_inputs.push_back({"initial_c", true});
  lstm_inputs.push_back({"P", true});
  r.add(OpDef{
      .name = "LSTM",
      .summary = "long short-term memory (gates i, o, f, c; optional peepholes) over a sequence, one or both "
                 "directions",
      .inputs = lstm_inputs,
      .outputs = {"Y", "Y_h", "Y_c"},
      .min_outputs = 1,
      .attrs = rnn_attrs({{"input_forget", AttrType::Int, Attribute(int64_t{0})}}),
      .infer = infer_rnn,
      .eval = eval_rnn,
      .cost = rnn_cost,
  });
}

}  // namespace kiln::ir
