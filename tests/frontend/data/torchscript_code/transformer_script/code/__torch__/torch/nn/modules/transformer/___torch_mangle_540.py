class TransformerEncoder(Module):
  __parameters__ = []
  __buffers__ = []
  training : bool
  _is_full_backward_hook : Optional[bool]
  num_layers : int
  enable_nested_tensor : bool
  mask_check : bool
  layers : __torch__.torch.nn.modules.container.___torch_mangle_539.ModuleList
  norm : Final[NoneType] = None
  def forward(self: __torch__.torch.nn.modules.transformer.___torch_mangle_540.TransformerEncoder,
    src: Tensor,
    mask: Optional[Tensor]=None,
    src_key_padding_mask: Optional[Tensor]=None) -> Tensor:
    _0 = "AssertionError: only bool and floating types of key_padding_mask are supported"
    _1 = "{} was not TransformerEncoderLayer"
    why_not_sparsity_fast_path = "grad is enabled and at least one of query or the input/output projection weights or biases requires_grad"
    _2 = torch.__isnot__(src_key_padding_mask, None)
    if _2:
      src_key_padding_mask1 = unchecked_cast(Tensor, src_key_padding_mask)
      _skpm_dtype = ops.prim.dtype(src_key_padding_mask1)
      if torch.ne(_skpm_dtype, 11):
        _4 = torch.is_floating_point(src_key_padding_mask1)
        _3 = torch.__not__(_4)
      else:
        _3 = False
      if _3:
        ops.prim.RaiseException(_0)
      else:
        pass
      src_key_padding_mask0 : Optional[Tensor] = src_key_padding_mask1
    else:
      src_key_padding_mask0 = src_key_padding_mask
    layers = self.layers
    _00 = getattr(layers, "0")
    why_not_sparsity_fast_path0 = torch.format(_1, "self.layers[0]")
    _5 = torch.len(why_not_sparsity_fast_path0)
    if torch.__not__(torch.gt(_5, 0)):
      self_attn = _00.self_attn
      in_proj_weight = self_attn.in_proj_weight
      self_attn0 = _00.self_attn
      in_proj_bias = self_attn0.in_proj_bias
      self_attn1 = _00.self_attn
      out_proj = self_attn1.out_proj
      weight = out_proj.weight
      self_attn2 = _00.self_attn
      out_proj0 = self_attn2.out_proj
      bias = out_proj0.bias
      norm1 = _00.norm1
      weight0 = norm1.weight
      norm10 = _00.norm1
      bias0 = norm10.bias
      norm2 = _00.norm2
      weight1 = norm2.weight
      norm20 = _00.norm2
      bias1 = norm20.bias
      linear1 = _00.linear1
      weight2 = linear1.weight
      linear10 = _00.linear1
      bias2 = linear10.bias
      linear2 = _00.linear2
      weight3 = linear2.weight
      linear20 = _00.linear2
      bias3 = linear20.bias
      if ops.prim.is_cuda(src):
        _6 = True
      else:
        _7 = str(ops.prim.device(src))
        _8 = torch.find(_7, "cpu", 0, torch.len(_7))
        _6 = torch.ne(_8, -1)
      if torch.__not__(_6):
        why_not_sparsity_fast_path1 = "src is neither CUDA nor CPU"
      else:
        if torch.is_grad_enabled():
          _10 = annotate(List[bool], [])
          _11 = torch.append(_10, ops.prim.requires_grad(src))
          _12 = ops.prim.requires_grad(in_proj_weight)
          _13 = torch.append(_10, _12)
          _14 = ops.prim.requires_grad(in_proj_bias)
          _15 = torch.append(_10, _14)
          _16 = ops.prim.requires_grad(weight)
          _17 = torch.append(_10, _16)
          _18 = torch.append(_10, ops.prim.requires_grad(bias))
          _19 = ops.prim.requires_grad(weight0)
          _20 = torch.append(_10, _19)
          _21 = torch.append(_10, ops.prim.requires_grad(bias0))
          _22 = ops.prim.requires_grad(weight1)
          _23 = torch.append(_10, _22)
          _24 = torch.append(_10, ops.prim.requires_grad(bias1))
          _25 = ops.prim.requires_grad(weight2)
          _26 = torch.append(_10, _25)
          _27 = torch.append(_10, ops.prim.requires_grad(bias2))
          _28 = ops.prim.requires_grad(weight3)
          _29 = torch.append(_10, _28)
          _30 = torch.append(_10, ops.prim.requires_grad(bias3))
          _9 = torch.any(_10)
        else:
          _9 = False
        if _9:
          why_not_sparsity_fast_path2 = why_not_sparsity_fast_path
        else:
          why_not_sparsity_fast_path2 = why_not_sparsity_fast_path0
        why_not_sparsity_fast_path1 = why_not_sparsity_fast_path2
      _31 = torch.len(why_not_sparsity_fast_path1)
      if torch.__not__(torch.gt(_31, 0)):
        _33 = torch.__isnot__(src_key_padding_mask0, None)
        _32 = _33
      else:
        _32 = False
      if _32:
        src_key_padding_mask2 = unchecked_cast(Tensor, src_key_padding_mask0)
        _34 = torch.logical_not(src_key_padding_mask2)
        output1 = torch._nested_tensor_from_mask(src, _34, False)
        output0, src_key_padding_mask_for_layers0, convert_to_nested0 = output1, None, True
      else:
        output0, src_key_padding_mask_for_layers0, convert_to_nested0 = src, src_key_padding_mask0, False
      output, src_key_padding_mask_for_layers, convert_to_nested = output0, src_key_padding_mask_for_layers0, convert_to_nested0
    else:
      output, src_key_padding_mask_for_layers, convert_to_nested = src, src_key_padding_mask0, False
    layers0 = self.layers
    _01 = getattr(layers0, "0")
    _110 = getattr(layers0, "1")
    output2 = (_01).forward(output, mask, src_key_padding_mask_for_layers, )
    output3 = (_110).forward(output2, mask, src_key_padding_mask_for_layers, )
    if convert_to_nested:
      output5 = torch.to_padded_tensor(output3, 0.)
      output4 = output5
    else:
      output4 = output3
    return output4
