class MaxPool2d(Module):
  __parameters__ = []
  __buffers__ = []
  training : bool
  _is_full_backward_hook : NoneType
  ceil_mode : Final[bool] = False
  dilation : Final[int] = 1
  return_indices : Final[bool] = False
  padding : Final[int] = 1
  kernel_size : Final[int] = 3
  stride : Final[int] = 2
  def forward(self: __torch__.torch.nn.modules.pooling.___torch_mangle_62.MaxPool2d,
    input: Tensor) -> Tensor:
    _0 = __torch__.torch.nn.functional._max_pool2d
    _1 = _0(input, [3, 3], [2, 2], [1, 1], [1, 1], False, False, )
    return _1
