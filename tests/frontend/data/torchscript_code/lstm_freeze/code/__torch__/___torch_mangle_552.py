class RnnWrap(Module):
  __parameters__ = []
  __buffers__ = []
  def forward(self: __torch__.___torch_mangle_552.RnnWrap,
    x: Tensor) -> Tensor:
    _0 = "input must have {} dimensions, got {}"
    _1 = "input.size(-1) must be equal to input_size. Expected {}, got {}"
    _2 = "Expected hidden[0] size {}, got {}"
    _3 = "Expected hidden[1] size {}, got {}"
    self_rnn__flat_weights = [CONSTANTS.c0, CONSTANTS.c1, CONSTANTS.c2, CONSTANTS.c3]
    is_batched = torch.eq(torch.dim(x), 3)
    _4 = torch.__not__(is_batched)
    if _4:
      input = torch.unsqueeze(x, 0)
    else:
      input = x
    max_batch_size = torch.size(input, 0)
    _5 = ops.prim.dtype(input)
    _6 = ops.prim.device(input)
    _7 = [1, max_batch_size, 32]
    h_zeros = torch.zeros(_7, dtype=_5, layout=None, device=_6)
    c_zeros = torch.zeros(_7, dtype=_5, layout=None, device=_6)
    _8 = torch.dim(input)
    if torch.ne(_8, 3):
      ops.prim.RaiseException(torch.format(_0, 3, _8), "builtins.RuntimeError")
    else:
      pass
    _9 = torch.size(input, -1)
    if torch.ne(16, _9):
      ops.prim.RaiseException(torch.format(_1, 16, _9), "builtins.RuntimeError")
    else:
      pass
    expected_hidden_size = (1, max_batch_size, 32)
    _10 = torch.size(h_zeros)
    _11 = [1, max_batch_size, 32]
    if torch.ne(_10, _11):
      _12 = torch.format(_2, expected_hidden_size, torch.list(_10))
      ops.prim.RaiseException(_12, "builtins.RuntimeError")
    else:
      pass
    _13 = torch.size(c_zeros)
    if torch.ne(_13, _11):
      _14 = torch.format(_3, expected_hidden_size, torch.list(_13))
      ops.prim.RaiseException(_14, "builtins.RuntimeError")
    else:
      pass
    _15, _16, _17 = torch.lstm(input, [h_zeros, c_zeros], self_rnn__flat_weights, True, 1, 0., False, False, True)
    if _4:
      output = torch.squeeze(_15, 0)
    else:
      output = _15
    return output
