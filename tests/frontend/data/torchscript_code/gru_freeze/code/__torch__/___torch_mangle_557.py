class RnnWrap(Module):
  __parameters__ = []
  __buffers__ = []
  def forward(self: __torch__.___torch_mangle_557.RnnWrap,
    x: Tensor) -> Tensor:
    _0 = "input must have {} dimensions, got {}"
    _1 = "input.size(-1) must be equal to input_size. Expected {}, got {}"
    self_rnn__flat_weights = [CONSTANTS.c0, CONSTANTS.c1, CONSTANTS.c2, CONSTANTS.c3]
    is_batched = torch.eq(torch.dim(x), 3)
    _2 = torch.__not__(is_batched)
    if _2:
      input = torch.unsqueeze(x, 0)
    else:
      input = x
    max_batch_size = torch.size(input, 0)
    _3 = ops.prim.dtype(input)
    _4 = ops.prim.device(input)
    hx = torch.zeros([1, max_batch_size, 32], dtype=_3, layout=None, device=_4)
    _5 = torch.dim(input)
    if torch.ne(_5, 3):
      ops.prim.RaiseException(torch.format(_0, 3, _5), "builtins.RuntimeError")
    else:
      pass
    _6 = torch.size(input, -1)
    if torch.ne(16, _6):
      ops.prim.RaiseException(torch.format(_1, 16, _6), "builtins.RuntimeError")
    else:
      pass
    expected_hidden_size = (1, max_batch_size, 32)
    _7 = torch.size(hx)
    _8 = torch.ne(_7, [1, max_batch_size, 32])
    if _8:
      _9 = torch.format("Expected hidden size {}, got {}", expected_hidden_size, torch.list(_7))
      ops.prim.RaiseException(_9, "builtins.RuntimeError")
    else:
      pass
    _10, _11 = torch.gru(input, hx, self_rnn__flat_weights, True, 1, 0., False, False, True)
    if _2:
      output = torch.squeeze(_10, 0)
    else:
      output = _10
    return output
