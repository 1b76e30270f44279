class NonDynamicallyQuantizableLinear(Module):
  __parameters__ = ["weight", "bias", ]
  __buffers__ = []
  weight : Tensor
  bias : Tensor
  training : bool
  _is_full_backward_hook : NoneType
  in_features : Final[int] = 32
  out_features : Final[int] = 32
  def forward(self: __torch__.torch.nn.modules.linear.___torch_mangle_532.NonDynamicallyQuantizableLinear,
    input: Tensor) -> Tensor:
    weight = self.weight
    bias = self.bias
    return torch.linear(input, weight, bias)
