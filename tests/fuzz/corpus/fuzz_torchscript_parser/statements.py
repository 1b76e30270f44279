import torch
from typing import (List, Tuple as T)
class Sequential(Module):
  __parameters__ = []
  __buffers__ = ["running_mean", ]
  __annotations__ = []
  __annotations__["0"] = __torch__.torch.nn.modules.conv.___torch_mangle_0.Conv2d
  training : bool
  eps : Final[float] = 1.0000000000000001e-05
  def forward(self: __torch__.Sequential,
    x: Tensor,
    hx: Optional[Tuple[Tensor, Tensor]]=None) -> Tuple[Tensor, Tensor]:
    _0 = getattr(self, "0")
    a, b, = (x, x)
    c = d = torch.add(a, b, alpha=2)
    e : Optional[Tensor] = uninitialized(Optional[Tensor])
    x += 1
    if torch.__is__(hx, None):
      pass
    elif not a:
      raise
    else:
      hx0 = unchecked_cast(Tuple[Tensor, Tensor], hx)
    _1 = True
    while _1:
      _1 = False
      continue
    for i in range(3):
      break
    with _0 as f:
      assert a > b, "msg"
    def __forked_function():
      return (x, )
    return (_0).forward(x, )
