class TransformerEncoder(Module):
  __parameters__ = []
  __buffers__ = []
  training : bool
  _is_full_backward_hook : Optional[bool]
  layers : __torch__.torch.nn.modules.container.ModuleList
  def forward(self: __torch__.torch.nn.modules.transformer.TransformerEncoder,
    src: Tensor) -> Tensor:
    layers = self.layers
    _1 = getattr(layers, "1")
    layers0 = self.layers
    _0 = getattr(layers0, "0")
    return (_1).forward((_0).forward(src, ), )
class TransformerEncoderLayer(Module):
  __parameters__ = []
  __buffers__ = []
  training : bool
  _is_full_backward_hook : Optional[bool]
  self_attn : __torch__.torch.nn.modules.activation.MultiheadAttention
  linear1 : __torch__.torch.nn.modules.linear.___torch_mangle_516.Linear
  dropout : __torch__.torch.nn.modules.dropout.___torch_mangle_517.Dropout
  linear2 : __torch__.torch.nn.modules.linear.___torch_mangle_518.Linear
  norm1 : __torch__.torch.nn.modules.normalization.LayerNorm
  norm2 : __torch__.torch.nn.modules.normalization.___torch_mangle_519.LayerNorm
  dropout1 : __torch__.torch.nn.modules.dropout.___torch_mangle_520.Dropout
  dropout2 : __torch__.torch.nn.modules.dropout.___torch_mangle_521.Dropout
  def forward(self: __torch__.torch.nn.modules.transformer.TransformerEncoderLayer,
    src: Tensor) -> Tensor:
    norm2 = self.norm2
    dropout2 = self.dropout2
    linear2 = self.linear2
    dropout = self.dropout
    linear1 = self.linear1
    norm1 = self.norm1
    dropout1 = self.dropout1
    self_attn = self.self_attn
    _0 = (dropout1).forward((self_attn).forward(src, ), )
    input = torch.add(src, _0)
    _1 = (norm1).forward(input, )
    input0 = torch.relu((linear1).forward(_1, ))
    _2 = (linear2).forward((dropout).forward(input0, ), )
    input1 = torch.add(_1, (dropout2).forward(_2, ))
    return (norm2).forward(input1, )
