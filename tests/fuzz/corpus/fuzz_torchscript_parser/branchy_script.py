class Branchy(Module):
  __parameters__ = []
  __buffers__ = []
  training : bool
  _is_full_backward_hook : Optional[bool]
  fc : __torch__.torch.nn.modules.linear.___torch_mangle_560.Linear
  def forward(self: __torch__.___torch_mangle_561.Branchy,
    x: Tensor,
    n: int=3) -> Tensor:
    if bool(torch.gt(torch.sum(x), 0)):
      fc = self.fc
      x0 = torch.relu((fc).forward(x, ))
    else:
      x0 = torch.neg(x)
    x1 = x0
    for i in range(n):
      x2 = torch.add(torch.mul(x1, 0.5), float(i))
      x1 = x2
    return x1
