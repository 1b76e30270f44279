class InvertedResidual(Module):
  __parameters__ = []
  __buffers__ = []
  training : bool
  _is_full_backward_hook : Optional[bool]
  stride : int
  use_res_connect : bool
  out_channels : int
  _is_cn : bool
  conv : __torch__.torch.nn.modules.container.___torch_mangle_343.Sequential
  def forward(self: __torch__.torchvision.models.mobilenetv2.___torch_mangle_344.InvertedResidual,
    x: Tensor) -> Tensor:
    use_res_connect = self.use_res_connect
    if use_res_connect:
      conv = self.conv
      _0 = torch.add(x, (conv).forward(x, ))
    else:
      conv0 = self.conv
      _0 = (conv0).forward(x, )
    return _0
