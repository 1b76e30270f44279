class GRU(Module):
  __parameters__ = ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0", ]
  __buffers__ = []
  weight_ih_l0 : Tensor
  weight_hh_l0 : Tensor
  bias_ih_l0 : Tensor
  bias_hh_l0 : Tensor
  training : bool
  _is_full_backward_hook : NoneType
  _flat_weights_names : List[str]
  _all_weights : List[List[str]]
  _flat_weights : List[Tensor]
  batch_first : Final[bool] = True
  num_layers : Final[int] = 1
  bias : Final[bool] = True
  dropout : Final[float] = 0.
  bidirectional : Final[bool] = False
  hidden_size : Final[int] = 32
  mode : Final[str] = "GRU"
  proj_size : Final[int] = 0
  input_size : Final[int] = 16
  def forward__0(self: __torch__.torch.nn.modules.rnn.___torch_mangle_555.GRU,
    input: Tensor,
    hx: Optional[Tensor]=None) -> Tuple[Tensor, Tensor]:
    _0 = "For unbatched 2-D input, hx should also be 2-D but got {}-D tensor"
    _1 = "For batched 3-D input, hx should also be 3-D but got {}-D tensor"
    _2 = uninitialized(Optional[Tensor])
    is_batched = torch.eq(torch.dim(input), 3)
    if torch.__not__(is_batched):
      input1 = torch.unsqueeze(input, 0)
      if torch.__isnot__(hx, None):
        hx2 = unchecked_cast(Tensor, hx)
        if torch.ne(torch.dim(hx2), 2):
          _3 = torch.format(_0, torch.dim(hx2))
          ops.prim.RaiseException(_3, "builtins.RuntimeError")
        else:
          pass
        hx1 : Optional[Tensor] = torch.unsqueeze(hx2, 1)
      else:
        hx1 = hx
      input0, hx0 = input1, hx1
    else:
      if torch.__isnot__(hx, None):
        hx4 = unchecked_cast(Tensor, hx)
        _4, hx3 = torch.ne(torch.dim(hx4), 3), hx4
      else:
        _4, hx3 = False, hx
      if _4:
        hx6 = unchecked_cast(Tensor, hx3)
        _5 = torch.format(_1, torch.dim(hx6))
        ops.prim.RaiseException(_5, "builtins.RuntimeError")
        hx5 : Optional[Tensor] = _2
      else:
        hx5 = hx3
      input0, hx0 = input, hx5
    max_batch_size = torch.size(input0, 0)
    if torch.__is__(hx0, None):
      _6 = ops.prim.dtype(input0)
      _7 = ops.prim.device(input0)
      hx8 = torch.zeros([1, max_batch_size, 32], dtype=_6, layout=None, device=_7)
      hx7 = hx8
    else:
      hx9 = unchecked_cast(Tensor, hx0)
      hx10 = (self).permute_hidden(hx9, None, )
      hx7 = hx10
    _8 = (self).check_forward_args(input0, hx7, None, )
    _flat_weights = self._flat_weights
    training = self.training
    _9, _10 = torch.gru(input0, hx7, _flat_weights, True, 1, 0., training, False, True)
    if torch.__not__(is_batched):
      output0 = torch.squeeze(_9, 0)
      hidden, output = torch.squeeze(_10, 1), output0
    else:
      hidden, output = _10, _9
    _11 = (self).permute_hidden(hidden, None, )
    return (output, _11)
  def forward__1(self: __torch__.torch.nn.modules.rnn.___torch_mangle_555.GRU,
    input: __torch__.torch.nn.utils.rnn.PackedSequence,
    hx: Optional[Tensor]=None) -> Tuple[__torch__.torch.nn.utils.rnn.PackedSequence, Tensor]:
    input2, batch_sizes, sorted_indices, unsorted_indices, = input
    max_batch_size = torch.select(batch_sizes, 0, 0)
    max_batch_size0 = int(max_batch_size)
    if torch.__is__(hx, None):
      _12 = ops.prim.dtype(input2)
      _13 = ops.prim.device(input2)
      hx12 = torch.zeros([1, max_batch_size0, 32], dtype=_12, layout=None, device=_13)
      hx11 = hx12
    else:
      hx13 = unchecked_cast(Tensor, hx)
      hx14 = (self).permute_hidden(hx13, sorted_indices, )
      hx11 = hx14
    _14 = (self).check_forward_args(input2, hx11, batch_sizes, )
    _flat_weights = self._flat_weights
    training = self.training
    _15, _16 = torch.gru(input2, batch_sizes, hx11, _flat_weights, True, 1, 0., training, False)
    output_packed = __torch__.torch.nn.utils.rnn.PackedSequence(_15, batch_sizes, sorted_indices, unsorted_indices)
    _17 = (self).permute_hidden(_16, unsorted_indices, )
    return (output_packed, _17)
  def permute_hidden(self: __torch__.torch.nn.modules.rnn.___torch_mangle_555.GRU,
    hx: Tensor,
    permutation: Optional[Tensor]) -> Tensor:
    _18 = __torch__.torch.nn.modules.rnn._apply_permutation
    if torch.__is__(permutation, None):
      _19 = hx
    else:
      permutation0 = unchecked_cast(Tensor, permutation)
      _19 = _18(hx, permutation0, 1, )
    return _19
  def check_forward_args(self: __torch__.torch.nn.modules.rnn.___torch_mangle_555.GRU,
    input: Tensor,
    hidden: Tensor,
    batch_sizes: Optional[Tensor]) -> NoneType:
    _20 = (self).check_input(input, batch_sizes, )
    expected_hidden_size = (self).get_expected_hidden_size(input, batch_sizes, )
    _21 = (self).check_hidden_size(hidden, expected_hidden_size, "Expected hidden size {}, got {}", )
    return None
  def check_input(self: __torch__.torch.nn.modules.rnn.___torch_mangle_555.GRU,
    input: Tensor,
    batch_sizes: Optional[Tensor]) -> NoneType:
    _22 = "input must have {} dimensions, got {}"
    _23 = "input.size(-1) must be equal to input_size. Expected {}, got {}"
    if torch.__isnot__(batch_sizes, None):
      expected_input_dim = 2
    else:
      expected_input_dim = 3
    _24 = torch.ne(torch.dim(input), expected_input_dim)
    if _24:
      _25 = torch.format(_22, expected_input_dim, torch.dim(input))
      ops.prim.RaiseException(_25, "builtins.RuntimeError")
    else:
      pass
    if torch.ne(16, torch.size(input, -1)):
      _26 = torch.format(_23, 16, torch.size(input, -1))
      ops.prim.RaiseException(_26, "builtins.RuntimeError")
    else:
      pass
    return None
  def get_expected_hidden_size(self: __torch__.torch.nn.modules.rnn.___torch_mangle_555.GRU,
    input: Tensor,
    batch_sizes: Optional[Tensor]) -> Tuple[int, int, int]:
    if torch.__isnot__(batch_sizes, None):
      batch_sizes0 = unchecked_cast(Tensor, batch_sizes)
      mini_batch0 = int(torch.select(batch_sizes0, 0, 0))
      mini_batch = mini_batch0
    else:
      mini_batch = torch.size(input, 0)
    return (1, mini_batch, 32)
  def check_hidden_size(self: __torch__.torch.nn.modules.rnn.___torch_mangle_555.GRU,
    hx: Tensor,
    expected_hidden_size: Tuple[int, int, int],
    msg: str="Expected hidden size {}, got {}") -> NoneType:
    _27 = torch.size(hx)
    _28, _29, _30, = expected_hidden_size
    if torch.ne(_27, [_28, _29, _30]):
      _31 = torch.format(msg, expected_hidden_size, torch.list(torch.size(hx)))
      ops.prim.RaiseException(_31, "builtins.RuntimeError")
    else:
      pass
    return None
