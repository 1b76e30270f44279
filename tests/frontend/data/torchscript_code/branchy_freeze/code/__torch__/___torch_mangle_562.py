class Branchy(Module):
  __parameters__ = []
  __buffers__ = []
  def forward(self: __torch__.___torch_mangle_562.Branchy,
    x: Tensor,
    n: int=3) -> Tensor:
    if bool(torch.gt(torch.sum(x), 0)):
      _0 = torch.linear(x, CONSTANTS.c0, CONSTANTS.c1)
      x0 = torch.relu(_0)
    else:
      x0 = torch.neg(x)
    x1 = x0
    for i in range(n):
      x2 = torch.add(torch.mul(x1, 0.5), float(i))
      x1 = x2
    return x1
