class RnnWrap(Module):
  __parameters__ = []
  __buffers__ = []
  training : bool
  _is_full_backward_hook : Optional[bool]
  rnn : __torch__.torch.nn.modules.rnn.GRU
  def forward(self: __torch__.___torch_mangle_554.RnnWrap,
    x: Tensor) -> Tensor:
    rnn = self.rnn
    return (rnn).forward(x, )
