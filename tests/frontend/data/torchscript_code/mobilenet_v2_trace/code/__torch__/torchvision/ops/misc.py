class Conv2dNormActivation(Module):
  __parameters__ = []
  __buffers__ = []
  training : bool
  _is_full_backward_hook : Optional[bool]
  __annotations__["0"] = __torch__.torch.nn.modules.conv.___torch_mangle_127.Conv2d
  __annotations__["1"] = __torch__.torch.nn.modules.batchnorm.___torch_mangle_128.BatchNorm2d
  __annotations__["2"] = __torch__.torch.nn.modules.activation.ReLU6
  def forward(self: __torch__.torchvision.ops.misc.Conv2dNormActivation,
    x: Tensor) -> Tensor:
    _2 = getattr(self, "2")
    _1 = getattr(self, "1")
    _0 = getattr(self, "0")
    _3 = (_2).forward((_1).forward((_0).forward(x, ), ), )
    return _3
