class TransformerEncoderLayer(Module):
  __parameters__ = []
  __buffers__ = []
  training : bool
  _is_full_backward_hook : Optional[bool]
  self_attn : __torch__.torch.nn.modules.activation.___torch_mangle_523.MultiheadAttention
  linear1 : __torch__.torch.nn.modules.linear.___torch_mangle_524.Linear
  dropout : __torch__.torch.nn.modules.dropout.___torch_mangle_525.Dropout
  linear2 : __torch__.torch.nn.modules.linear.___torch_mangle_526.Linear
  norm1 : __torch__.torch.nn.modules.normalization.___torch_mangle_527.LayerNorm
  norm2 : __torch__.torch.nn.modules.normalization.___torch_mangle_528.LayerNorm
  dropout1 : __torch__.torch.nn.modules.dropout.___torch_mangle_529.Dropout
  dropout2 : __torch__.torch.nn.modules.dropout.___torch_mangle_530.Dropout
  def forward(self: __torch__.torch.nn.modules.transformer.___torch_mangle_531.TransformerEncoderLayer,
    argument_1: Tensor) -> Tensor:
    norm2 = self.norm2
    dropout2 = self.dropout2
    linear2 = self.linear2
    dropout = self.dropout
    linear1 = self.linear1
    norm1 = self.norm1
    dropout1 = self.dropout1
    self_attn = self.self_attn
    _0 = (dropout1).forward((self_attn).forward(argument_1, ), )
    input = torch.add(argument_1, _0)
    _1 = (norm1).forward(input, )
    input0 = torch.relu((linear1).forward(_1, ))
    _2 = (linear2).forward((dropout).forward(input0, ), )
    input1 = torch.add(_1, (dropout2).forward(_2, ))
    return (norm2).forward(input1, )
