class TransformerEncoder(Module):
  __parameters__ = []
  __buffers__ = []
  norm : Final[NoneType] = None
  def forward(self: __torch__.torch.nn.modules.transformer.___torch_mangle_541.TransformerEncoder,
    src: Tensor,
    mask: Optional[Tensor]=None,
    src_key_padding_mask: Optional[Tensor]=None) -> Tensor:
    _0 = "AssertionError: only bool and floating types of key_padding_mask are supported"
    _1 = "{} was not TransformerEncoderLayer"
    why_not_sparsity_fast_path = "grad is enabled and at least one of query or the input/output projection weights or biases requires_grad"
    _2 = "input not batched; expected src.dim() of 3 but got {}"
    why_not_sparsity_fast_path0 = "src_mask is not supported for fastpath"
    why_not_sparsity_fast_path1 = "src_key_padding_mask is not supported with NestedTensor input for fastpath"
    why_not_sparsity_fast_path2 = "some Tensor argument is neither CUDA nor CPU"
    _3 = "input not batched; expected query.dim() of 3 but got {}"
    why_not_fast_path = "non-self attention was used (query, key, and value are not the same Tensor)"
    _4 = "dtypes of query ({}) and self.in_proj_bias ({}) don\'t match"
    _5 = "dtypes of query ({}) and self.in_proj_weight ({}) don\'t match"
    _6 = "The fast path was not hit because {}"
    _7 = "MultiheadAttention does not support NestedTensor outside of its fast path. "
    _8 = "For batched (3-D) `query`, expected `key` and `value` to be 3-D but found {}-D and {}-D tensors respectively"
    _9 = "For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D but found {}-D tensor instead"
    _10 = "For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but found {}-D tensor instead"
    _11 = "For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found {}-D and {}-D tensors respectively"
    _12 = "For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D but found {}-D tensor instead"
    _13 = "For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but found {}-D tensor instead"
    _14 = "Expected `attn_mask` shape to be {} but got {}"
    _15 = "query should be unbatched 2D or batched 3D tensor but received {}-D query tensor"
    _16 = "was expecting embedding dimension of {}, but got {}"
    _17 = "embed_dim {} not divisible by num_heads {}"
    _18 = "key shape {} does not match value shape {}"
    _19 = "Byte tensor for attn_mask in nn.MultiheadAttention is deprecated. Use bool tensor instead."
    _20 = "Only float, byte, and bool types are supported for attn_mask, not {}"
    _21 = "The shape of the 2D attn_mask is {}, but should be {}."
    _22 = "The shape of the 3D attn_mask is {}, but should be {}."
    _23 = "attn_mask\'s dimension {} is not supported"
    _24 = "expecting key_padding_mask shape of {}, but got {}"
    _25 = torch.__isnot__(src_key_padding_mask, None)
    if _25:
      src_key_padding_mask1 = unchecked_cast(Tensor, src_key_padding_mask)
      _skpm_dtype = ops.prim.dtype(src_key_padding_mask1)
      if torch.ne(_skpm_dtype, 11):
        _27 = torch.is_floating_point(src_key_padding_mask1)
        _26 = torch.__not__(_27)
      else:
        _26 = False
      if _26:
        ops.prim.RaiseException(_0)
      else:
        pass
      src_key_padding_mask0 : Optional[Tensor] = src_key_padding_mask1
    else:
      src_key_padding_mask0 = src_key_padding_mask
    why_not_sparsity_fast_path3 = torch.format(_1, "self.layers[0]")
    _28 = torch.len(why_not_sparsity_fast_path3)
    if torch.__not__(torch.gt(_28, 0)):
      if ops.prim.is_cuda(src):
        _29 = True
      else:
        _30 = str(ops.prim.device(src))
        _31 = torch.find(_30, "cpu", 0, torch.len(_30))
        _29 = torch.ne(_31, -1)
      if torch.__not__(_29):
        why_not_sparsity_fast_path4 = "src is neither CUDA nor CPU"
      else:
        if torch.is_grad_enabled():
          _33 = annotate(List[bool], [])
          _34 = torch.append(_33, ops.prim.requires_grad(src))
          _35 = torch.append(_33, False)
          _36 = torch.append(_33, False)
          _37 = torch.append(_33, False)
          _38 = torch.append(_33, False)
          _39 = torch.append(_33, False)
          _40 = torch.append(_33, False)
          _41 = torch.append(_33, False)
          _42 = torch.append(_33, False)
          _43 = torch.append(_33, False)
          _44 = torch.append(_33, False)
          _45 = torch.append(_33, False)
          _46 = torch.append(_33, False)
          _32 = torch.any(_33)
        else:
          _32 = False
        if _32:
          why_not_sparsity_fast_path5 = why_not_sparsity_fast_path
        else:
          why_not_sparsity_fast_path5 = why_not_sparsity_fast_path3
        why_not_sparsity_fast_path4 = why_not_sparsity_fast_path5
      _47 = torch.len(why_not_sparsity_fast_path4)
      if torch.__not__(torch.gt(_47, 0)):
        _49 = torch.__isnot__(src_key_padding_mask0, None)
        _48 = _49
      else:
        _48 = False
      if _48:
        src_key_padding_mask2 = unchecked_cast(Tensor, src_key_padding_mask0)
        _50 = torch.logical_not(src_key_padding_mask2)
        output1 = torch._nested_tensor_from_mask(src, _50, False)
        output0, src_key_padding_mask_for_layers0 = output1, None
      else:
        output0, src_key_padding_mask_for_layers0 = src, src_key_padding_mask0
      output, src_key_padding_mask_for_layers, convert_to_nested = output0, src_key_padding_mask_for_layers0, _48
    else:
      output, src_key_padding_mask_for_layers, convert_to_nested = src, src_key_padding_mask0, False
    _51 = uninitialized(Tensor)
    _52 = torch.__isnot__(src_key_padding_mask_for_layers, None)
    if _52:
      src_key_padding_mask4 = unchecked_cast(Tensor, src_key_padding_mask_for_layers)
      _skpm_dtype0 = ops.prim.dtype(src_key_padding_mask4)
      if torch.ne(_skpm_dtype0, 11):
        _54 = torch.is_floating_point(src_key_padding_mask4)
        _53 = torch.__not__(_54)
      else:
        _53 = False
      if _53:
        ops.prim.RaiseException(_0)
      else:
        pass
      src_key_padding_mask3 : Optional[Tensor] = src_key_padding_mask4
    else:
      src_key_padding_mask3 = src_key_padding_mask_for_layers
    _55 = torch.dim(output)
    _56 = torch.eq(_55, 3)
    _57 = torch.__not__(_56)
    if _57:
      why_not_sparsity_fast_path6, src_mask, src_key_padding_mask5 = torch.format(_2, _55), mask, src_key_padding_mask3
    else:
      if torch.__isnot__(mask, None):
        why_not_sparsity_fast_path7, src_mask0, src_key_padding_mask6 = why_not_sparsity_fast_path0, unchecked_cast(Tensor, mask), src_key_padding_mask3
      else:
        if ops.prim.is_nested(output):
          _59 = torch.__isnot__(src_key_padding_mask3, None)
          _58 = _59
        else:
          _58 = False
        if _58:
          src_key_padding_mask8 = unchecked_cast(Tensor, src_key_padding_mask3)
          why_not_sparsity_fast_path8, src_key_padding_mask7 = why_not_sparsity_fast_path1, src_key_padding_mask8
        else:
          if torch.is_autocast_enabled():
            why_not_sparsity_fast_path9 = "autocast is enabled"
          else:
            why_not_sparsity_fast_path9 = ""
          why_not_sparsity_fast_path8, src_key_padding_mask7 = why_not_sparsity_fast_path9, src_key_padding_mask3
        why_not_sparsity_fast_path7, src_mask0, src_key_padding_mask6 = why_not_sparsity_fast_path8, mask, src_key_padding_mask7
      why_not_sparsity_fast_path6, src_mask, src_key_padding_mask5 = why_not_sparsity_fast_path7, src_mask0, src_key_padding_mask6
    _60 = torch.len(why_not_sparsity_fast_path6)
    if torch.__not__(torch.gt(_60, 0)):
      _63 = annotate(List[bool], [])
      if ops.prim.is_cuda(output):
        _64 = True
      else:
        _65 = str(ops.prim.device(output))
        _66 = torch.find(_65, "cpu", 0, torch.len(_65))
        _64 = torch.ne(_66, -1)
      _67 = torch.append(_63, _64)
      _68 = torch.append(_63, True)
      _69 = torch.append(_63, True)
      _70 = torch.append(_63, True)
      _71 = torch.append(_63, True)
      _72 = torch.append(_63, True)
      _73 = torch.append(_63, True)
      _74 = torch.append(_63, True)
      _75 = torch.append(_63, True)
      _76 = torch.append(_63, True)
      _77 = torch.append(_63, True)
      _78 = torch.append(_63, True)
      _79 = torch.append(_63, True)
      if torch.__not__(torch.all(_63)):
        why_not_sparsity_fast_path10 = why_not_sparsity_fast_path2
      else:
        if torch.is_grad_enabled():
          _81 = annotate(List[bool], [])
          _82 = ops.prim.requires_grad(output)
          _83 = torch.append(_81, _82)
          _84 = torch.append(_81, False)
          _85 = torch.append(_81, False)
          _86 = torch.append(_81, False)
          _87 = torch.append(_81, False)
          _88 = torch.append(_81, False)
          _89 = torch.append(_81, False)
          _90 = torch.append(_81, False)
          _91 = torch.append(_81, False)
          _92 = torch.append(_81, False)
          _93 = torch.append(_81, False)
          _94 = torch.append(_81, False)
          _95 = torch.append(_81, False)
          _80 = torch.any(_81)
        else:
          _80 = False
        if _80:
          why_not_sparsity_fast_path11 = why_not_sparsity_fast_path
        else:
          why_not_sparsity_fast_path11 = why_not_sparsity_fast_path6
        why_not_sparsity_fast_path10 = why_not_sparsity_fast_path11
      _96 = torch.len(why_not_sparsity_fast_path10)
      _97 = torch.__not__(torch.gt(_96, 0))
      if _97:
        if torch.__isnot__(src_mask, None):
          src_mask4 = unchecked_cast(Tensor, src_mask)
          src_mask3, _99 = src_mask4, src_mask4
        else:
          src_mask3, _99 = src_mask, src_key_padding_mask5
        _100 = torch.__isnot__(src_key_padding_mask5, None)
        if _100:
          src_key_padding_mask12 = unchecked_cast(Tensor, src_key_padding_mask5)
          _101, src_mask5, src_key_padding_mask11 = 1, src_mask3, src_key_padding_mask12
        else:
          _102 = torch.__isnot__(src_mask3, None)
          if _102:
            src_mask7 = unchecked_cast(Tensor, src_mask3)
            _103, src_mask6 = 0, src_mask7
          else:
            _103, src_mask6 = None, src_mask3
          _101, src_mask5, src_key_padding_mask11 = _103, src_mask6, src_key_padding_mask5
        _104 = torch._transformer_encoder_layer_fwd(output, 32, 4, CONSTANTS.c0, CONSTANTS.c1, CONSTANTS.c2, CONSTANTS.c3, False, False, 1.0000000000000001e-05, CONSTANTS.c4, CONSTANTS.c3, CONSTANTS.c4, CONSTANTS.c3, CONSTANTS.c5, CONSTANTS.c6, CONSTANTS.c7, CONSTANTS.c8, _99, _101)
        _98, src_mask2, src_key_padding_mask10 = _104, src_mask5, src_key_padding_mask11
      else:
        _98, src_mask2, src_key_padding_mask10 = _51, src_mask, src_key_padding_mask5
      _61, _62, src_mask1, src_key_padding_mask9 = _97, _98, src_mask2, src_key_padding_mask10
    else:
      _61, _62, src_mask1, src_key_padding_mask9 = False, _51, src_mask, src_key_padding_mask5
    if _61:
      output2 = _62
    else:
      _105 = uninitialized(Tuple[Tensor, Tensor])
      _106 = torch.__isnot__(src_key_padding_mask9, None)
      if _106:
        key_padding_mask0 = unchecked_cast(Tensor, src_key_padding_mask9)
        _kpm_dtype = ops.prim.dtype(key_padding_mask0)
        if torch.ne(_kpm_dtype, 11):
          _108 = torch.is_floating_point(key_padding_mask0)
          _107 = torch.__not__(_108)
        else:
          _107 = False
        if _107:
          ops.prim.RaiseException(_0)
        else:
          pass
        key_padding_mask : Optional[Tensor] = key_padding_mask0
      else:
        key_padding_mask = src_key_padding_mask9
      if _57:
        why_not_fast_path0 = torch.format(_3, _55)
      else:
        _109 = torch.__isnot__(output, output)
        if _109:
          _110 = True
        else:
          _110 = _109
        if _110:
          why_not_fast_path1 = why_not_fast_path
        else:
          _111 = ops.prim.dtype(output)
          _112 = torch.ne(_111, 6)
          if _112:
            why_not_fast_path2 = torch.format(_4, _111, 6)
          else:
            if _112:
              why_not_fast_path3 = torch.format(_5, _111, 6)
            else:
              why_not_fast_path4 = torch.format("dropout was {}, required zero", 0.10000000000000001)
              why_not_fast_path3 = why_not_fast_path4
            why_not_fast_path2 = why_not_fast_path3
          why_not_fast_path1 = why_not_fast_path2
        why_not_fast_path0 = why_not_fast_path1
      _113 = torch.gt(torch.len(why_not_fast_path0), 0)
      if torch.__not__(_113):
        _116 = annotate(List[bool], [])
        _117 = ops.prim.is_cuda(output)
        if _117:
          _118 = True
        else:
          _119 = str(ops.prim.device(output))
          _120 = torch.find(_119, "cpu", 0, torch.len(_119))
          _118 = torch.ne(_120, -1)
        _121 = torch.append(_116, _118)
        if _117:
          _122 = True
        else:
          _123 = str(ops.prim.device(output))
          _124 = torch.find(_123, "cpu", 0, torch.len(_123))
          _122 = torch.ne(_124, -1)
        _125 = torch.append(_116, _122)
        if _117:
          _126 = True
        else:
          _127 = str(ops.prim.device(output))
          _128 = torch.find(_127, "cpu", 0, torch.len(_127))
          _126 = torch.ne(_128, -1)
        _129 = torch.append(_116, _126)
        _130 = torch.append(_116, True)
        _131 = torch.append(_116, True)
        _132 = torch.append(_116, True)
        _133 = torch.append(_116, True)
        if torch.__not__(torch.all(_116)):
          why_not_fast_path6 = why_not_sparsity_fast_path2
        else:
          if torch.is_grad_enabled():
            _135 = annotate(List[bool], [])
            _136 = ops.prim.requires_grad(output)
            _137 = torch.append(_135, _136)
            _138 = torch.append(_135, _136)
            _139 = torch.append(_135, _136)
            _140 = torch.append(_135, False)
            _141 = torch.append(_135, False)
            _142 = torch.append(_135, False)
            _143 = torch.append(_135, False)
            _134 = torch.any(_135)
          else:
            _134 = False
          if _134:
            why_not_fast_path7 = why_not_sparsity_fast_path
          else:
            why_not_fast_path7 = why_not_fast_path0
          why_not_fast_path6 = why_not_fast_path7
        _144 = torch.gt(torch.len(why_not_fast_path6), 0)
        _145 = torch.__not__(_144)
        if _145:
          _147 = torch.__isnot__(key_padding_mask, None)
          if _147:
            key_padding_mask4 = unchecked_cast(Tensor, key_padding_mask)
            key_padding_mask3, _148 = key_padding_mask4, key_padding_mask4
          else:
            key_padding_mask3, _148 = key_padding_mask, src_mask1
          _149 = torch.__isnot__(key_padding_mask3, None)
          if _149:
            key_padding_mask6 = unchecked_cast(Tensor, key_padding_mask3)
            _150, key_padding_mask5, attn_mask1 = 1, key_padding_mask6, src_mask1
          else:
            _151 = torch.__isnot__(src_mask1, None)
            if _151:
              attn_mask3 = unchecked_cast(Tensor, src_mask1)
              _152, attn_mask2 = 0, attn_mask3
            else:
              _152, attn_mask2 = None, src_mask1
            _150, key_padding_mask5, attn_mask1 = _152, key_padding_mask3, attn_mask2
          _153, _154 = torch._native_multi_head_attention(output, output, output, 32, 4, CONSTANTS.c0, CONSTANTS.c1, CONSTANTS.c2, CONSTANTS.c3, _148, False, True, _150)
          _146, key_padding_mask2, attn_mask0 = (_153, _154), key_padding_mask5, attn_mask1
        else:
          _146, key_padding_mask2, attn_mask0 = _105, key_padding_mask, src_mask1
        _114, _115, why_not_fast_path5, key_padding_mask1, attn_mask = _145, _146, why_not_fast_path6, key_padding_mask2, attn_mask0
      else:
        _114, _115, why_not_fast_path5, key_padding_mask1, attn_mask = False, _105, why_not_fast_path0, key_padding_mask, src_mask1
      if _114:
        _155 = _115
      else:
        _156 = ops.prim.is_nested(output)
        if _156:
          _157 = True
        else:
          _157 = _156
        if _157:
          any_nested = True
        else:
          any_nested = _156
        if torch.__not__(any_nested):
          pass
        else:
          _158 = torch.format(_6, why_not_fast_path5)
          _159 = torch.add("AssertionError: ", torch.add(_7, _158))
          ops.prim.RaiseException(_159)
        if _56:
          _160 = torch.__is__(output, output)
          if _160:
            if _160:
              _161 = torch.transpose(output, 1, 0)
              query1, key1, value1 = _161, _161, _161
            else:
              _162 = annotate(List[Tensor], [])
              _163 = torch.transpose(output, 1, 0)
              _164 = torch.append(_162, _163)
              _165 = torch.append(_162, _163)
              query2, key2, = _162
              query1, key1, value1 = query2, key2, key2
            query0, key0, value0 = query1, key1, value1
          else:
            _166 = annotate(List[Tensor], [])
            _167 = torch.transpose(output, 1, 0)
            _168 = torch.append(_166, _167)
            _169 = torch.append(_166, _167)
            _170 = torch.append(_166, _167)
            query3, key3, value2, = _166
            query0, key0, value0 = query3, key3, value2
          query, key, value = query0, key0, value0
        else:
          query, key, value = output, output, output
        _171 = uninitialized(bool)
        _172 = torch.dim(query)
        if torch.eq(_172, 3):
          _173 = torch.dim(key)
          if torch.eq(_173, 3):
            _175 = torch.eq(torch.dim(value), 3)
            _174 = _175
          else:
            _174 = False
          if _174:
            pass
          else:
            _176 = torch.format(_8, _173, torch.dim(value))
            _177 = torch.add("AssertionError: ", _176)
            ops.prim.RaiseException(_177)
          _178 = torch.__isnot__(key_padding_mask1, None)
          if _178:
            key_padding_mask7 = unchecked_cast(Tensor, key_padding_mask1)
            _179 = torch.dim(key_padding_mask7)
            if torch.eq(_179, 2):
              pass
            else:
              _180 = torch.add("AssertionError: ", torch.format(_9, _179))
              ops.prim.RaiseException(_180)
          else:
            pass
          _181 = torch.__isnot__(attn_mask, None)
          if _181:
            attn_mask4 = unchecked_cast(Tensor, attn_mask)
            _182 = torch.dim(attn_mask4)
            _183 = torch.__contains__([2, 3], _182)
            if _183:
              pass
            else:
              _184 = torch.add("AssertionError: ", torch.format(_10, _182))
              ops.prim.RaiseException(_184)
          else:
            pass
          is_batched = True
        else:
          if torch.eq(_172, 2):
            _185 = torch.dim(key)
            if torch.eq(_185, 2):
              _187 = torch.eq(torch.dim(value), 2)
              _186 = _187
            else:
              _186 = False
            if _186:
              pass
            else:
              _188 = torch.format(_11, _185, torch.dim(value))
              _189 = torch.add("AssertionError: ", _188)
              ops.prim.RaiseException(_189)
            _190 = torch.__isnot__(key_padding_mask1, None)
            if _190:
              key_padding_mask8 = unchecked_cast(Tensor, key_padding_mask1)
              _191 = torch.dim(key_padding_mask8)
              if torch.eq(_191, 1):
                pass
              else:
                _192 = torch.add("AssertionError: ", torch.format(_12, _191))
                ops.prim.RaiseException(_192)
            else:
              pass
            _193 = torch.__isnot__(attn_mask, None)
            if _193:
              attn_mask5 = unchecked_cast(Tensor, attn_mask)
              _194 = torch.dim(attn_mask5)
              _195 = torch.__contains__([2, 3], _194)
              if _195:
                pass
              else:
                _196 = torch.add("AssertionError: ", torch.format(_13, _194))
                ops.prim.RaiseException(_196)
              if torch.eq(_194, 3):
                _197 = (torch.size(query))[0]
                _198 = (torch.size(key))[0]
                expected_shape = (4, _197, _198)
                _199 = torch.size(attn_mask5)
                _200 = torch.eq(_199, [4, _197, _198])
                if _200:
                  pass
                else:
                  _201 = torch.format(_14, expected_shape, _199)
                  _202 = torch.add("AssertionError: ", _201)
                  ops.prim.RaiseException(_202)
              else:
                pass
            else:
              pass
            is_batched0 = False
          else:
            _203 = torch.add("AssertionError: ", torch.format(_15, _172))
            ops.prim.RaiseException(_203)
            is_batched0 = _171
          is_batched = is_batched0
        _204 = torch.__not__(is_batched)
        if _204:
          query5 = torch.unsqueeze(query, 1)
          key5 = torch.unsqueeze(key, 1)
          value4 = torch.unsqueeze(value, 1)
          _205 = torch.__isnot__(key_padding_mask1, None)
          if _205:
            key_padding_mask11 = unchecked_cast(Tensor, key_padding_mask1)
            key_padding_mask12 = torch.unsqueeze(key_padding_mask11, 0)
            key_padding_mask10 : Optional[Tensor] = key_padding_mask12
          else:
            key_padding_mask10 = key_padding_mask1
          query4, key4, key_padding_mask9, value3 = query5, key5, key_padding_mask10, value4
        else:
          query4, key4, key_padding_mask9, value3 = query, key, key_padding_mask1, value
        tgt_len, bsz, embed_dim, = torch.size(query4)
        _206 = torch.size(key4)
        src_len, _207, _208, = _206
        _209 = torch.__isnot__(key_padding_mask9, None)
        if _209:
          key_padding_mask14 = unchecked_cast(Tensor, key_padding_mask9)
          _kpm_dtype0 = ops.prim.dtype(key_padding_mask14)
          if torch.ne(_kpm_dtype0, 11):
            _211 = torch.is_floating_point(key_padding_mask14)
            _210 = torch.__not__(_211)
          else:
            _210 = False
          if _210:
            ops.prim.RaiseException(_0)
          else:
            pass
          key_padding_mask13 : Optional[Tensor] = key_padding_mask14
        else:
          key_padding_mask13 = key_padding_mask9
        if torch.eq(embed_dim, 32):
          pass
        else:
          _212 = torch.format(_16, 32, embed_dim)
          _213 = torch.add("AssertionError: ", _212)
          ops.prim.RaiseException(_213)
        head_dim = torch.floordiv(embed_dim, 4)
        _214 = torch.eq(torch.mul(head_dim, 4), embed_dim)
        if _214:
          pass
        else:
          _215 = torch.format(_17, embed_dim, 4)
          _216 = torch.add("AssertionError: ", _215)
          ops.prim.RaiseException(_216)
        _217 = torch.size(value3)
        if torch.eq(_206, _217):
          pass
        else:
          _218 = torch.add("AssertionError: ", torch.format(_18, _206, _217))
          ops.prim.RaiseException(_218)
        E = torch.size(query4, -1)
        if torch.__is__(key4, value3):
          if torch.__is__(query4, key4):
            _221 = torch.linear(query4, CONSTANTS.c0, CONSTANTS.c1)
            _220 = torch.chunk(_221, 3, -1)
          else:
            _222 = [E, torch.mul(E, 2)]
            _223 = torch.split(CONSTANTS.c0, _222)
            w_q, w_kv, = _223
            _224 = torch.split(CONSTANTS.c1, _222)
            b_q, b_kv, = _224
            _225 = torch.linear(query4, w_q, b_q)
            _226 = torch.linear(key4, w_kv, b_kv)
            _227 = torch.chunk(_226, 2, -1)
            _220 = torch.add([_225], _227)
          _219 = _220
        else:
          _228 = torch.linear(query4, CONSTANTS.c9, CONSTANTS.c3)
          _229 = torch.linear(key4, CONSTANTS.c10, CONSTANTS.c3)
          _230 = torch.linear(value3, CONSTANTS.c11, CONSTANTS.c3)
          _219 = [_228, _229, _230]
        q, k, v, = _219
        _231 = torch.__isnot__(attn_mask, None)
        if _231:
          attn_mask7 = unchecked_cast(Tensor, attn_mask)
          _232 = ops.prim.dtype(attn_mask7)
          if torch.eq(_232, 0):
            torch.warn(_19)
            attn_mask8 = torch.to(attn_mask7, 11)
          else:
            _233 = torch.is_floating_point(attn_mask7)
            if _233:
              _234 = True
            else:
              _234 = torch.eq(_232, 11)
            if _234:
              pass
            else:
              _235 = torch.add("AssertionError: ", torch.format(_20, _232))
              ops.prim.RaiseException(_235)
            attn_mask8 = attn_mask7
          _236 = torch.dim(attn_mask8)
          if torch.eq(_236, 2):
            correct_2d_size = (tgt_len, src_len)
            _237 = torch.size(attn_mask8)
            _238 = torch.ne(_237, [tgt_len, src_len])
            if _238:
              _239 = torch.format(_21, _237, correct_2d_size)
              ops.prim.RaiseException(_239, "builtins.RuntimeError")
            else:
              pass
            attn_mask10 = torch.unsqueeze(attn_mask8, 0)
            attn_mask9 = attn_mask10
          else:
            if torch.eq(_236, 3):
              _240 = torch.mul(bsz, 4)
              correct_3d_size = (_240, tgt_len, src_len)
              _241 = torch.size(attn_mask8)
              _242 = torch.ne(_241, [_240, tgt_len, src_len])
              if _242:
                _243 = torch.format(_22, _241, correct_3d_size)
                ops.prim.RaiseException(_243, "builtins.RuntimeError")
              else:
                pass
            else:
              ops.prim.RaiseException(torch.format(_23, _236), "builtins.RuntimeError")
            attn_mask9 = attn_mask8
          attn_mask6 : Optional[Tensor] = attn_mask9
        else:
          attn_mask6 = attn_mask
        _244 = torch.contiguous(q)
        _245 = torch.mul(bsz, 4)
        _246 = torch.view(_244, [tgt_len, _245, head_dim])
        q0 = torch.transpose(_246, 0, 1)
        _247 = torch.contiguous(k)
        _248 = [(torch.size(k))[0], _245, head_dim]
        k0 = torch.transpose(torch.view(_247, _248), 0, 1)
        _249 = torch.contiguous(v)
        _250 = [(torch.size(v))[0], _245, head_dim]
        v0 = torch.transpose(torch.view(_249, _250), 0, 1)
        src_len0 = torch.size(k0, 1)
        _251 = torch.__isnot__(key_padding_mask13, None)
        if _251:
          key_padding_mask15 = unchecked_cast(Tensor, key_padding_mask13)
          _252 = torch.size(key_padding_mask15)
          _253 = torch.eq(_252, [bsz, src_len0])
          if _253:
            pass
          else:
            _254 = torch.format(_24, (bsz, src_len0), _252)
            _255 = torch.add("AssertionError: ", _254)
            ops.prim.RaiseException(_255)
          _256 = torch.view(key_padding_mask15, [bsz, 1, 1, src_len0])
          _257 = torch.expand(_256, [-1, 4, -1, -1])
          key_padding_mask16 = torch.reshape(_257, [_245, 1, src_len0])
          _258 = torch.__is__(attn_mask6, None)
          if _258:
            attn_mask12 = key_padding_mask16
          else:
            attn_mask13 = unchecked_cast(Tensor, attn_mask6)
            _259 = torch.eq(ops.prim.dtype(attn_mask13), 11)
            if _259:
              attn_mask15 = torch.logical_or(attn_mask13, key_padding_mask16)
              attn_mask14 = attn_mask15
            else:
              attn_mask16 = torch.masked_fill(attn_mask13, key_padding_mask16, -inf)
              attn_mask14 = attn_mask16
            attn_mask12 = attn_mask14
          attn_mask11 : Optional[Tensor] = attn_mask12
        else:
          attn_mask11 = attn_mask6
        _260 = torch.__isnot__(attn_mask11, None)
        if _260:
          attn_mask18 = unchecked_cast(Tensor, attn_mask11)
          _262 = torch.eq(ops.prim.dtype(attn_mask18), 11)
          _261, attn_mask17 = _262, attn_mask18
        else:
          _261, attn_mask17 = False, attn_mask11
        if _261:
          attn_mask20 = unchecked_cast(Tensor, attn_mask17)
          new_attn_mask = torch.zeros_like(attn_mask20, dtype=ops.prim.dtype(q0))
          _263 = torch.masked_fill_(new_attn_mask, attn_mask20, -inf)
          attn_mask19 : Optional[Tensor] = new_attn_mask
        else:
          attn_mask19 = attn_mask17
        B, Nt, E0, = torch.size(q0)
        q_scaled = torch.div(q0, torch.sqrt(E0))
        _264 = torch.__isnot__(attn_mask19, None)
        if _264:
          attn_mask21 = unchecked_cast(Tensor, attn_mask19)
          attn_output_weights0 = torch.baddbmm(attn_mask21, q_scaled, torch.transpose(k0, -2, -1))
          attn_output_weights = attn_output_weights0
        else:
          attn_output_weights1 = torch.bmm(q_scaled, torch.transpose(k0, -2, -1))
          attn_output_weights = attn_output_weights1
        ret = torch.softmax(attn_output_weights, -1)
        attn_output = torch.bmm(ret, v0)
        _265 = torch.transpose(attn_output, 0, 1)
        _266 = torch.contiguous(_265)
        _267 = [torch.mul(tgt_len, bsz), embed_dim]
        attn_output0 = torch.view(_266, _267)
        attn_output1 = torch.linear(attn_output0, CONSTANTS.c2, CONSTANTS.c3)
        _268 = [tgt_len, bsz, torch.size(attn_output1, 1)]
        attn_output2 = torch.view(attn_output1, _268)
        if _204:
          attn_output4 = torch.squeeze(attn_output2, 1)
          attn_output3 = attn_output4
        else:
          attn_output3 = attn_output2
        if _56:
          _270 = torch.transpose(attn_output3, 1, 0)
          _269 = (_270, None)
        else:
          _269 = (attn_output3, None)
        _155 = _269
      x = (_155)[0]
      x0 = torch.layer_norm(torch.add(output, x), [32], CONSTANTS.c4, CONSTANTS.c3)
      _271 = torch.linear(x0, CONSTANTS.c5, CONSTANTS.c6)
      result = torch.relu(_271)
      x1 = torch.linear(result, CONSTANTS.c7, CONSTANTS.c8)
      x2 = torch.layer_norm(torch.add(x0, x1), [32], CONSTANTS.c4, CONSTANTS.c3)
      output2 = x2
    if _52:
      src_key_padding_mask14 = unchecked_cast(Tensor, src_key_padding_mask_for_layers)
      _skpm_dtype1 = ops.prim.dtype(src_key_padding_mask14)
      if torch.ne(_skpm_dtype1, 11):
        _273 = torch.is_floating_point(src_key_padding_mask14)
        _272 = torch.__not__(_273)
      else:
        _272 = False
      if _272:
        ops.prim.RaiseException(_0)
      else:
        pass
      src_key_padding_mask13 : Optional[Tensor] = src_key_padding_mask14
    else:
      src_key_padding_mask13 = src_key_padding_mask_for_layers
    _274 = torch.dim(output2)
    _275 = torch.eq(_274, 3)
    _276 = torch.__not__(_275)
    if _276:
      why_not_sparsity_fast_path12, src_mask8, src_key_padding_mask15 = torch.format(_2, _274), mask, src_key_padding_mask13
    else:
      if torch.__isnot__(mask, None):
        why_not_sparsity_fast_path13, src_mask9, src_key_padding_mask16 = why_not_sparsity_fast_path0, unchecked_cast(Tensor, mask), src_key_padding_mask13
      else:
        if ops.prim.is_nested(output2):
          _278 = torch.__isnot__(src_key_padding_mask13, None)
          _277 = _278
        else:
          _277 = False
        if _277:
          src_key_padding_mask18 = unchecked_cast(Tensor, src_key_padding_mask13)
          why_not_sparsity_fast_path14, src_key_padding_mask17 = why_not_sparsity_fast_path1, src_key_padding_mask18
        else:
          if torch.is_autocast_enabled():
            why_not_sparsity_fast_path15 = "autocast is enabled"
          else:
            why_not_sparsity_fast_path15 = ""
          why_not_sparsity_fast_path14, src_key_padding_mask17 = why_not_sparsity_fast_path15, src_key_padding_mask13
        why_not_sparsity_fast_path13, src_mask9, src_key_padding_mask16 = why_not_sparsity_fast_path14, mask, src_key_padding_mask17
      why_not_sparsity_fast_path12, src_mask8, src_key_padding_mask15 = why_not_sparsity_fast_path13, src_mask9, src_key_padding_mask16
    _279 = torch.len(why_not_sparsity_fast_path12)
    if torch.__not__(torch.gt(_279, 0)):
      _282 = annotate(List[bool], [])
      if ops.prim.is_cuda(output2):
        _283 = True
      else:
        _284 = str(ops.prim.device(output2))
        _285 = torch.find(_284, "cpu", 0, torch.len(_284))
        _283 = torch.ne(_285, -1)
      _286 = torch.append(_282, _283)
      _287 = torch.append(_282, True)
      _288 = torch.append(_282, True)
      _289 = torch.append(_282, True)
      _290 = torch.append(_282, True)
      _291 = torch.append(_282, True)
      _292 = torch.append(_282, True)
      _293 = torch.append(_282, True)
      _294 = torch.append(_282, True)
      _295 = torch.append(_282, True)
      _296 = torch.append(_282, True)
      _297 = torch.append(_282, True)
      _298 = torch.append(_282, True)
      if torch.__not__(torch.all(_282)):
        why_not_sparsity_fast_path16 = why_not_sparsity_fast_path2
      else:
        if torch.is_grad_enabled():
          _300 = annotate(List[bool], [])
          _301 = ops.prim.requires_grad(output2)
          _302 = torch.append(_300, _301)
          _303 = torch.append(_300, False)
          _304 = torch.append(_300, False)
          _305 = torch.append(_300, False)
          _306 = torch.append(_300, False)
          _307 = torch.append(_300, False)
          _308 = torch.append(_300, False)
          _309 = torch.append(_300, False)
          _310 = torch.append(_300, False)
          _311 = torch.append(_300, False)
          _312 = torch.append(_300, False)
          _313 = torch.append(_300, False)
          _314 = torch.append(_300, False)
          _299 = torch.any(_300)
        else:
          _299 = False
        if _299:
          why_not_sparsity_fast_path17 = why_not_sparsity_fast_path
        else:
          why_not_sparsity_fast_path17 = why_not_sparsity_fast_path12
        why_not_sparsity_fast_path16 = why_not_sparsity_fast_path17
      _315 = torch.len(why_not_sparsity_fast_path16)
      _316 = torch.__not__(torch.gt(_315, 0))
      if _316:
        _318 = torch.__isnot__(src_mask8, None)
        if _318:
          src_mask13 = unchecked_cast(Tensor, src_mask8)
          src_mask12, _319 = src_mask13, src_mask13
        else:
          src_mask12, _319 = src_mask8, src_key_padding_mask15
        _320 = torch.__isnot__(src_key_padding_mask15, None)
        if _320:
          src_key_padding_mask22 = unchecked_cast(Tensor, src_key_padding_mask15)
          _321, src_mask14, src_key_padding_mask21 = 1, src_mask12, src_key_padding_mask22
        else:
          _322 = torch.__isnot__(src_mask12, None)
          if _322:
            src_mask16 = unchecked_cast(Tensor, src_mask12)
            _323, src_mask15 = 0, src_mask16
          else:
            _323, src_mask15 = None, src_mask12
          _321, src_mask14, src_key_padding_mask21 = _323, src_mask15, src_key_padding_mask15
        _324 = torch._transformer_encoder_layer_fwd(output2, 32, 4, CONSTANTS.c0, CONSTANTS.c1, CONSTANTS.c2, CONSTANTS.c3, False, False, 1.0000000000000001e-05, CONSTANTS.c4, CONSTANTS.c3, CONSTANTS.c4, CONSTANTS.c3, CONSTANTS.c5, CONSTANTS.c6, CONSTANTS.c7, CONSTANTS.c8, _319, _321)
        _317, src_mask11, src_key_padding_mask20 = _324, src_mask14, src_key_padding_mask21
      else:
        _317, src_mask11, src_key_padding_mask20 = _51, src_mask8, src_key_padding_mask15
      _280, _281, src_mask10, src_key_padding_mask19 = _316, _317, src_mask11, src_key_padding_mask20
    else:
      _280, _281, src_mask10, src_key_padding_mask19 = False, _51, src_mask8, src_key_padding_mask15
    if _280:
      output3 = _281
    else:
      _325 = uninitialized(Tuple[Tensor, Tensor])
      _326 = torch.__isnot__(src_key_padding_mask19, None)
      if _326:
        key_padding_mask18 = unchecked_cast(Tensor, src_key_padding_mask19)
        _kpm_dtype1 = ops.prim.dtype(key_padding_mask18)
        if torch.ne(_kpm_dtype1, 11):
          _328 = torch.is_floating_point(key_padding_mask18)
          _327 = torch.__not__(_328)
        else:
          _327 = False
        if _327:
          ops.prim.RaiseException(_0)
        else:
          pass
        key_padding_mask17 : Optional[Tensor] = key_padding_mask18
      else:
        key_padding_mask17 = src_key_padding_mask19
      if _276:
        why_not_fast_path8 = torch.format(_3, _274)
      else:
        _329 = torch.__isnot__(output2, output2)
        if _329:
          _330 = True
        else:
          _330 = _329
        if _330:
          why_not_fast_path9 = why_not_fast_path
        else:
          _331 = ops.prim.dtype(output2)
          _332 = torch.ne(_331, 6)
          if _332:
            why_not_fast_path10 = torch.format(_4, _331, 6)
          else:
            if _332:
              why_not_fast_path11 = torch.format(_5, _331, 6)
            else:
              why_not_fast_path12 = torch.format("dropout was {}, required zero", 0.10000000000000001)
              why_not_fast_path11 = why_not_fast_path12
            why_not_fast_path10 = why_not_fast_path11
          why_not_fast_path9 = why_not_fast_path10
        why_not_fast_path8 = why_not_fast_path9
      _333 = torch.gt(torch.len(why_not_fast_path8), 0)
      if torch.__not__(_333):
        _336 = annotate(List[bool], [])
        _337 = ops.prim.is_cuda(output2)
        if _337:
          _338 = True
        else:
          _339 = str(ops.prim.device(output2))
          _340 = torch.find(_339, "cpu", 0, torch.len(_339))
          _338 = torch.ne(_340, -1)
        _341 = torch.append(_336, _338)
        if _337:
          _342 = True
        else:
          _343 = str(ops.prim.device(output2))
          _344 = torch.find(_343, "cpu", 0, torch.len(_343))
          _342 = torch.ne(_344, -1)
        _345 = torch.append(_336, _342)
        if _337:
          _346 = True
        else:
          _347 = str(ops.prim.device(output2))
          _348 = torch.find(_347, "cpu", 0, torch.len(_347))
          _346 = torch.ne(_348, -1)
        _349 = torch.append(_336, _346)
        _350 = torch.append(_336, True)
        _351 = torch.append(_336, True)
        _352 = torch.append(_336, True)
        _353 = torch.append(_336, True)
        if torch.__not__(torch.all(_336)):
          why_not_fast_path14 = why_not_sparsity_fast_path2
        else:
          if torch.is_grad_enabled():
            _355 = annotate(List[bool], [])
            _356 = ops.prim.requires_grad(output2)
            _357 = torch.append(_355, _356)
            _358 = torch.append(_355, _356)
            _359 = torch.append(_355, _356)
            _360 = torch.append(_355, False)
            _361 = torch.append(_355, False)
            _362 = torch.append(_355, False)
            _363 = torch.append(_355, False)
            _354 = torch.any(_355)
          else:
            _354 = False
          if _354:
            why_not_fast_path15 = why_not_sparsity_fast_path
          else:
            why_not_fast_path15 = why_not_fast_path8
          why_not_fast_path14 = why_not_fast_path15
        _364 = torch.gt(torch.len(why_not_fast_path14), 0)
        _365 = torch.__not__(_364)
        if _365:
          _367 = torch.__isnot__(key_padding_mask17, None)
          if _367:
            key_padding_mask22 = unchecked_cast(Tensor, key_padding_mask17)
            key_padding_mask21, _368 = key_padding_mask22, key_padding_mask22
          else:
            key_padding_mask21, _368 = key_padding_mask17, src_mask10
          _369 = torch.__isnot__(key_padding_mask21, None)
          if _369:
            key_padding_mask24 = unchecked_cast(Tensor, key_padding_mask21)
            _370, key_padding_mask23, attn_mask24 = 1, key_padding_mask24, src_mask10
          else:
            _371 = torch.__isnot__(src_mask10, None)
            if _371:
              attn_mask26 = unchecked_cast(Tensor, src_mask10)
              _372, attn_mask25 = 0, attn_mask26
            else:
              _372, attn_mask25 = None, src_mask10
            _370, key_padding_mask23, attn_mask24 = _372, key_padding_mask21, attn_mask25
          _373, _374 = torch._native_multi_head_attention(output2, output2, output2, 32, 4, CONSTANTS.c0, CONSTANTS.c1, CONSTANTS.c2, CONSTANTS.c3, _368, False, True, _370)
          _366, key_padding_mask20, attn_mask23 = (_373, _374), key_padding_mask23, attn_mask24
        else:
          _366, key_padding_mask20, attn_mask23 = _325, key_padding_mask17, src_mask10
        _334, _335, why_not_fast_path13, key_padding_mask19, attn_mask22 = _365, _366, why_not_fast_path14, key_padding_mask20, attn_mask23
      else:
        _334, _335, why_not_fast_path13, key_padding_mask19, attn_mask22 = False, _325, why_not_fast_path8, key_padding_mask17, src_mask10
      if _334:
        _375 = _335
      else:
        _376 = ops.prim.is_nested(output2)
        if _376:
          _377 = True
        else:
          _377 = _376
        if _377:
          any_nested0 = True
        else:
          any_nested0 = _376
        if torch.__not__(any_nested0):
          pass
        else:
          _378 = torch.format(_6, why_not_fast_path13)
          _379 = torch.add("AssertionError: ", torch.add(_7, _378))
          ops.prim.RaiseException(_379)
        if _275:
          _380 = torch.__is__(output2, output2)
          if _380:
            if _380:
              _381 = torch.transpose(output2, 1, 0)
              query8, key8, value7 = _381, _381, _381
            else:
              _382 = annotate(List[Tensor], [])
              _383 = torch.transpose(output2, 1, 0)
              _384 = torch.append(_382, _383)
              _385 = torch.append(_382, _383)
              query9, key9, = _382
              query8, key8, value7 = query9, key9, key9
            query7, key7, value6 = query8, key8, value7
          else:
            _386 = annotate(List[Tensor], [])
            _387 = torch.transpose(output2, 1, 0)
            _388 = torch.append(_386, _387)
            _389 = torch.append(_386, _387)
            _390 = torch.append(_386, _387)
            query10, key10, value8, = _386
            query7, key7, value6 = query10, key10, value8
          query6, key6, value5 = query7, key7, value6
        else:
          query6, key6, value5 = output2, output2, output2
        _391 = uninitialized(bool)
        _392 = torch.dim(query6)
        if torch.eq(_392, 3):
          _393 = torch.dim(key6)
          if torch.eq(_393, 3):
            _395 = torch.eq(torch.dim(value5), 3)
            _394 = _395
          else:
            _394 = False
          if _394:
            pass
          else:
            _396 = torch.format(_8, _393, torch.dim(value5))
            _397 = torch.add("AssertionError: ", _396)
            ops.prim.RaiseException(_397)
          _398 = torch.__isnot__(key_padding_mask19, None)
          if _398:
            key_padding_mask25 = unchecked_cast(Tensor, key_padding_mask19)
            _399 = torch.dim(key_padding_mask25)
            if torch.eq(_399, 2):
              pass
            else:
              _400 = torch.add("AssertionError: ", torch.format(_9, _399))
              ops.prim.RaiseException(_400)
          else:
            pass
          _401 = torch.__isnot__(attn_mask22, None)
          if _401:
            attn_mask27 = unchecked_cast(Tensor, attn_mask22)
            _402 = torch.dim(attn_mask27)
            _403 = torch.__contains__([2, 3], _402)
            if _403:
              pass
            else:
              _404 = torch.add("AssertionError: ", torch.format(_10, _402))
              ops.prim.RaiseException(_404)
          else:
            pass
          is_batched1 = True
        else:
          if torch.eq(_392, 2):
            _405 = torch.dim(key6)
            if torch.eq(_405, 2):
              _407 = torch.eq(torch.dim(value5), 2)
              _406 = _407
            else:
              _406 = False
            if _406:
              pass
            else:
              _408 = torch.format(_11, _405, torch.dim(value5))
              _409 = torch.add("AssertionError: ", _408)
              ops.prim.RaiseException(_409)
            _410 = torch.__isnot__(key_padding_mask19, None)
            if _410:
              key_padding_mask26 = unchecked_cast(Tensor, key_padding_mask19)
              _411 = torch.dim(key_padding_mask26)
              if torch.eq(_411, 1):
                pass
              else:
                _412 = torch.add("AssertionError: ", torch.format(_12, _411))
                ops.prim.RaiseException(_412)
            else:
              pass
            _413 = torch.__isnot__(attn_mask22, None)
            if _413:
              attn_mask28 = unchecked_cast(Tensor, attn_mask22)
              _414 = torch.dim(attn_mask28)
              _415 = torch.__contains__([2, 3], _414)
              if _415:
                pass
              else:
                _416 = torch.add("AssertionError: ", torch.format(_13, _414))
                ops.prim.RaiseException(_416)
              if torch.eq(_414, 3):
                _417 = (torch.size(query6))[0]
                _418 = (torch.size(key6))[0]
                expected_shape0 = (4, _417, _418)
                _419 = torch.size(attn_mask28)
                _420 = torch.eq(_419, [4, _417, _418])
                if _420:
                  pass
                else:
                  _421 = torch.format(_14, expected_shape0, _419)
                  _422 = torch.add("AssertionError: ", _421)
                  ops.prim.RaiseException(_422)
              else:
                pass
            else:
              pass
            is_batched2 = False
          else:
            _423 = torch.add("AssertionError: ", torch.format(_15, _392))
            ops.prim.RaiseException(_423)
            is_batched2 = _391
          is_batched1 = is_batched2
        _424 = torch.__not__(is_batched1)
        if _424:
          query12 = torch.unsqueeze(query6, 1)
          key12 = torch.unsqueeze(key6, 1)
          value10 = torch.unsqueeze(value5, 1)
          _425 = torch.__isnot__(key_padding_mask19, None)
          if _425:
            key_padding_mask29 = unchecked_cast(Tensor, key_padding_mask19)
            key_padding_mask30 = torch.unsqueeze(key_padding_mask29, 0)
            key_padding_mask28 : Optional[Tensor] = key_padding_mask30
          else:
            key_padding_mask28 = key_padding_mask19
          query11, key11, key_padding_mask27, value9 = query12, key12, key_padding_mask28, value10
        else:
          query11, key11, key_padding_mask27, value9 = query6, key6, key_padding_mask19, value5
        tgt_len0, bsz0, embed_dim0, = torch.size(query11)
        _426 = torch.size(key11)
        src_len1, _427, _428, = _426
        _429 = torch.__isnot__(key_padding_mask27, None)
        if _429:
          key_padding_mask32 = unchecked_cast(Tensor, key_padding_mask27)
          _kpm_dtype2 = ops.prim.dtype(key_padding_mask32)
          if torch.ne(_kpm_dtype2, 11):
            _431 = torch.is_floating_point(key_padding_mask32)
            _430 = torch.__not__(_431)
          else:
            _430 = False
          if _430:
            ops.prim.RaiseException(_0)
          else:
            pass
          key_padding_mask31 : Optional[Tensor] = key_padding_mask32
        else:
          key_padding_mask31 = key_padding_mask27
        if torch.eq(embed_dim0, 32):
          pass
        else:
          _432 = torch.format(_16, 32, embed_dim0)
          _433 = torch.add("AssertionError: ", _432)
          ops.prim.RaiseException(_433)
        head_dim0 = torch.floordiv(embed_dim0, 4)
        _434 = torch.eq(torch.mul(head_dim0, 4), embed_dim0)
        if _434:
          pass
        else:
          _435 = torch.format(_17, embed_dim0, 4)
          _436 = torch.add("AssertionError: ", _435)
          ops.prim.RaiseException(_436)
        _437 = torch.size(value9)
        if torch.eq(_426, _437):
          pass
        else:
          _438 = torch.add("AssertionError: ", torch.format(_18, _426, _437))
          ops.prim.RaiseException(_438)
        E1 = torch.size(query11, -1)
        if torch.__is__(key11, value9):
          if torch.__is__(query11, key11):
            _441 = torch.linear(query11, CONSTANTS.c0, CONSTANTS.c1)
            _440 = torch.chunk(_441, 3, -1)
          else:
            _442 = [E1, torch.mul(E1, 2)]
            _443 = torch.split(CONSTANTS.c0, _442)
            w_q0, w_kv0, = _443
            _444 = torch.split(CONSTANTS.c1, _442)
            b_q0, b_kv0, = _444
            _445 = torch.linear(query11, w_q0, b_q0)
            _446 = torch.linear(key11, w_kv0, b_kv0)
            _447 = torch.chunk(_446, 2, -1)
            _440 = torch.add([_445], _447)
          _439 = _440
        else:
          _448 = torch.linear(query11, CONSTANTS.c9, CONSTANTS.c3)
          _449 = torch.linear(key11, CONSTANTS.c10, CONSTANTS.c3)
          _450 = torch.linear(value9, CONSTANTS.c11, CONSTANTS.c3)
          _439 = [_448, _449, _450]
        q1, k1, v1, = _439
        _451 = torch.__isnot__(attn_mask22, None)
        if _451:
          attn_mask30 = unchecked_cast(Tensor, attn_mask22)
          _452 = ops.prim.dtype(attn_mask30)
          if torch.eq(_452, 0):
            torch.warn(_19)
            attn_mask31 = torch.to(attn_mask30, 11)
          else:
            _453 = torch.is_floating_point(attn_mask30)
            if _453:
              _454 = True
            else:
              _454 = torch.eq(_452, 11)
            if _454:
              pass
            else:
              _455 = torch.add("AssertionError: ", torch.format(_20, _452))
              ops.prim.RaiseException(_455)
            attn_mask31 = attn_mask30
          _456 = torch.dim(attn_mask31)
          if torch.eq(_456, 2):
            correct_2d_size0 = (tgt_len0, src_len1)
            _457 = torch.size(attn_mask31)
            _458 = torch.ne(_457, [tgt_len0, src_len1])
            if _458:
              _459 = torch.format(_21, _457, correct_2d_size0)
              ops.prim.RaiseException(_459, "builtins.RuntimeError")
            else:
              pass
            attn_mask33 = torch.unsqueeze(attn_mask31, 0)
            attn_mask32 = attn_mask33
          else:
            if torch.eq(_456, 3):
              _460 = torch.mul(bsz0, 4)
              correct_3d_size0 = (_460, tgt_len0, src_len1)
              _461 = torch.size(attn_mask31)
              _462 = [_460, tgt_len0, src_len1]
              if torch.ne(_461, _462):
                _463 = torch.format(_22, _461, correct_3d_size0)
                ops.prim.RaiseException(_463, "builtins.RuntimeError")
              else:
                pass
            else:
              ops.prim.RaiseException(torch.format(_23, _456), "builtins.RuntimeError")
            attn_mask32 = attn_mask31
          attn_mask29 : Optional[Tensor] = attn_mask32
        else:
          attn_mask29 = attn_mask22
        _464 = torch.contiguous(q1)
        _465 = torch.mul(bsz0, 4)
        _466 = torch.view(_464, [tgt_len0, _465, head_dim0])
        q2 = torch.transpose(_466, 0, 1)
        _467 = torch.contiguous(k1)
        _468 = [(torch.size(k1))[0], _465, head_dim0]
        k2 = torch.transpose(torch.view(_467, _468), 0, 1)
        _469 = torch.contiguous(v1)
        _470 = [(torch.size(v1))[0], _465, head_dim0]
        v2 = torch.transpose(torch.view(_469, _470), 0, 1)
        src_len2 = torch.size(k2, 1)
        _471 = torch.__isnot__(key_padding_mask31, None)
        if _471:
          key_padding_mask33 = unchecked_cast(Tensor, key_padding_mask31)
          _472 = torch.size(key_padding_mask33)
          _473 = torch.eq(_472, [bsz0, src_len2])
          if _473:
            pass
          else:
            _474 = torch.format(_24, (bsz0, src_len2), _472)
            _475 = torch.add("AssertionError: ", _474)
            ops.prim.RaiseException(_475)
          _476 = torch.view(key_padding_mask33, [bsz0, 1, 1, src_len2])
          _477 = torch.expand(_476, [-1, 4, -1, -1])
          key_padding_mask34 = torch.reshape(_477, [_465, 1, src_len2])
          _478 = torch.__is__(attn_mask29, None)
          if _478:
            attn_mask35 = key_padding_mask34
          else:
            attn_mask36 = unchecked_cast(Tensor, attn_mask29)
            _479 = torch.eq(ops.prim.dtype(attn_mask36), 11)
            if _479:
              attn_mask38 = torch.logical_or(attn_mask36, key_padding_mask34)
              attn_mask37 = attn_mask38
            else:
              attn_mask39 = torch.masked_fill(attn_mask36, key_padding_mask34, -inf)
              attn_mask37 = attn_mask39
            attn_mask35 = attn_mask37
          attn_mask34 : Optional[Tensor] = attn_mask35
        else:
          attn_mask34 = attn_mask29
        _480 = torch.__isnot__(attn_mask34, None)
        if _480:
          attn_mask41 = unchecked_cast(Tensor, attn_mask34)
          _482 = torch.eq(ops.prim.dtype(attn_mask41), 11)
          _481, attn_mask40 = _482, attn_mask41
        else:
          _481, attn_mask40 = False, attn_mask34
        if _481:
          attn_mask43 = unchecked_cast(Tensor, attn_mask40)
          new_attn_mask0 = torch.zeros_like(attn_mask43, dtype=ops.prim.dtype(q2))
          _483 = torch.masked_fill_(new_attn_mask0, attn_mask43, -inf)
          attn_mask42 : Optional[Tensor] = new_attn_mask0
        else:
          attn_mask42 = attn_mask40
        B0, Nt0, E2, = torch.size(q2)
        q_scaled0 = torch.div(q2, torch.sqrt(E2))
        _484 = torch.__isnot__(attn_mask42, None)
        if _484:
          attn_mask44 = unchecked_cast(Tensor, attn_mask42)
          attn_output_weights3 = torch.baddbmm(attn_mask44, q_scaled0, torch.transpose(k2, -2, -1))
          attn_output_weights2 = attn_output_weights3
        else:
          attn_output_weights4 = torch.bmm(q_scaled0, torch.transpose(k2, -2, -1))
          attn_output_weights2 = attn_output_weights4
        ret0 = torch.softmax(attn_output_weights2, -1)
        attn_output5 = torch.bmm(ret0, v2)
        _485 = torch.transpose(attn_output5, 0, 1)
        _486 = torch.contiguous(_485)
        _487 = [torch.mul(tgt_len0, bsz0), embed_dim0]
        attn_output6 = torch.view(_486, _487)
        attn_output7 = torch.linear(attn_output6, CONSTANTS.c2, CONSTANTS.c3)
        _488 = [tgt_len0, bsz0, torch.size(attn_output7, 1)]
        attn_output8 = torch.view(attn_output7, _488)
        if _424:
          attn_output10 = torch.squeeze(attn_output8, 1)
          attn_output9 = attn_output10
        else:
          attn_output9 = attn_output8
        if _275:
          _490 = torch.transpose(attn_output9, 1, 0)
          _489 = (_490, None)
        else:
          _489 = (attn_output9, None)
        _375 = _489
      x3 = (_375)[0]
      x4 = torch.layer_norm(torch.add(output2, x3), [32], CONSTANTS.c4, CONSTANTS.c3)
      _491 = torch.linear(x4, CONSTANTS.c5, CONSTANTS.c6)
      result0 = torch.relu(_491)
      x5 = torch.linear(result0, CONSTANTS.c7, CONSTANTS.c8)
      x6 = torch.layer_norm(torch.add(x4, x5), [32], CONSTANTS.c4, CONSTANTS.c3)
      output3 = x6
    if convert_to_nested:
      output5 = torch.to_padded_tensor(output3, 0.)
      output4 = output5
    else:
      output4 = output3
    return output4
