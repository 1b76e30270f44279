class ModuleList(Module):
  __parameters__ = []
  __buffers__ = []
  training : bool
  _is_full_backward_hook : NoneType
  __annotations__["0"] = __torch__.torch.nn.modules.transformer.___torch_mangle_538.TransformerEncoderLayer
  __annotations__["1"] = __torch__.torch.nn.modules.transformer.___torch_mangle_538.TransformerEncoderLayer
  def __len__(self: __torch__.torch.nn.modules.container.___torch_mangle_539.ModuleList) -> int:
    return 2
