class MobileNetV2(Module):
  __parameters__ = []
  __buffers__ = []
  training : bool
  _is_full_backward_hook : Optional[bool]
  last_channel : int
  features : __torch__.torch.nn.modules.container.___torch_mangle_420.Sequential
  classifier : __torch__.torch.nn.modules.container.___torch_mangle_423.Sequential
  def forward(self: __torch__.torchvision.models.mobilenetv2.___torch_mangle_424.MobileNetV2,
    x: Tensor) -> Tensor:
    return (self)._forward_impl(x, )
  def _forward_impl(self: __torch__.torchvision.models.mobilenetv2.___torch_mangle_424.MobileNetV2,
    x: Tensor) -> Tensor:
    _0 = __torch__.torch.nn.functional.adaptive_avg_pool2d
    features = self.features
    x0 = (features).forward(x, )
    x1 = _0(x0, [1, 1], )
    x2 = torch.flatten(x1, 1)
    classifier = self.classifier
    return (classifier).forward(x2, )
