class MultiheadAttention(Module):
  __parameters__ = ["in_proj_weight", "in_proj_bias", ]
  __buffers__ = []
  in_proj_weight : Tensor
  in_proj_bias : Tensor
  training : bool
  _is_full_backward_hook : Optional[bool]
  out_proj : __torch__.torch.nn.modules.linear.NonDynamicallyQuantizableLinear
  def forward(self: __torch__.torch.nn.modules.activation.MultiheadAttention,
    src: Tensor) -> Tensor:
    out_proj = self.out_proj
    bias = out_proj.bias
    out_proj0 = self.out_proj
    weight = out_proj0.weight
    in_proj_bias = self.in_proj_bias
    in_proj_weight = self.in_proj_weight
    query = torch.transpose(src, 1, 0)
    tgt_len = ops.prim.NumToTensor(torch.size(query, 0))
    _0 = int(tgt_len)
    _1 = int(tgt_len)
    bsz = ops.prim.NumToTensor(torch.size(query, 1))
    _2 = int(bsz)
    embed_dim = ops.prim.NumToTensor(torch.size(query, 2))
    _3 = int(embed_dim)
    head_dim = torch.div(embed_dim, CONSTANTS.c0, rounding_mode="trunc")
    _4 = int(head_dim)
    _5 = int(head_dim)
    _6 = int(head_dim)
    _7 = torch.linear(query, in_proj_weight, in_proj_bias)
    q, k, v, = torch.chunk(_7, 3, -1)
    _8 = torch.contiguous(q)
    _9 = [_1, int(torch.mul(bsz, CONSTANTS.c0)), _6]
    q0 = torch.transpose(torch.view(_8, _9), 0, 1)
    _10 = torch.contiguous(k)
    _11 = ops.prim.NumToTensor(torch.size(k, 0))
    _12 = [int(_11), int(torch.mul(bsz, CONSTANTS.c0)), _5]
    k0 = torch.transpose(torch.view(_10, _12), 0, 1)
    _13 = torch.contiguous(v)
    _14 = ops.prim.NumToTensor(torch.size(v, 0))
    _15 = [int(_14), int(torch.mul(bsz, CONSTANTS.c0)), _4]
    v0 = torch.transpose(torch.view(_13, _15), 0, 1)
    q_scaled = torch.div(q0, CONSTANTS.c1)
    input = torch.bmm(q_scaled, torch.transpose(k0, -2, -1))
    attn_output_weights = torch.softmax(input, -1)
    attn_output = torch.bmm(attn_output_weights, v0)
    _16 = torch.contiguous(torch.transpose(attn_output, 0, 1))
    attn_output0 = torch.view(_16, [int(torch.mul(tgt_len, bsz)), _3])
    attn_output1 = torch.linear(attn_output0, weight, bias)
    _17 = ops.prim.NumToTensor(torch.size(attn_output1, 1))
    attn_output2 = torch.view(attn_output1, [_0, _2, int(_17)])
    return torch.transpose(attn_output2, 1, 0)
