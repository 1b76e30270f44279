class ReLU6(Module):
  __parameters__ = []
  __buffers__ = []
  training : bool
  _is_full_backward_hook : NoneType
  max_val : Final[float] = 6.
  min_val : Final[float] = 0.
  inplace : Final[bool] = True
  def forward(self: __torch__.torch.nn.modules.activation.___torch_mangle_337.ReLU6,
    input: Tensor) -> Tensor:
    _0 = __torch__.torch.nn.functional.hardtanh
    return _0(input, 0., 6., True, )
