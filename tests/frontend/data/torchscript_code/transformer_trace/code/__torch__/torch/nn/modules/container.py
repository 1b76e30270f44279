class ModuleList(Module):
  __parameters__ = []
  __buffers__ = []
  training : bool
  _is_full_backward_hook : Optional[bool]
  __annotations__["0"] = __torch__.torch.nn.modules.transformer.TransformerEncoderLayer
  __annotations__["1"] = __torch__.torch.nn.modules.transformer.___torch_mangle_531.TransformerEncoderLayer
