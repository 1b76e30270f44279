class ReLU6(Module):
  __parameters__ = []
  __buffers__ = []
  training : bool
  _is_full_backward_hook : Optional[bool]
  def forward(self: __torch__.torch.nn.modules.activation.___torch_mangle_131.ReLU6,
    argument_1: Tensor) -> Tensor:
    return torch.hardtanh_(argument_1, 0., 6.)
