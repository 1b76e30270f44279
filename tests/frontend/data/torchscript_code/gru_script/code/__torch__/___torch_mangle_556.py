class RnnWrap(Module):
  __parameters__ = []
  __buffers__ = []
  training : bool
  _is_full_backward_hook : Optional[bool]
  rnn : __torch__.torch.nn.modules.rnn.___torch_mangle_555.GRU
  def forward(self: __torch__.___torch_mangle_556.RnnWrap,
    x: Tensor) -> Tensor:
    rnn = self.rnn
    return ((rnn).forward__0(x, None, ))[0]
