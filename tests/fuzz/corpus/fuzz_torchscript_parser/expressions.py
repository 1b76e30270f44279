def f(x: List[int], s: str="a\'b\"c\\\n\t\001\x41\u00e9", r: str=r"\d") -> Dict[str, Tensor]:
  y = x[:, 1:2, ::-1, 0]
  z = -a ** -b * c // d % e @ f + g - h << i >> j & k ^ l | m
  w = (a if b is not None else c) or not d and e not in f
  v = {"k": [1, 0x1F, 0., .5, 1e-05, -inf, nan], "t": (), "u": (1,)}
  q = """tri
ple""" 'adj'
  return annotate(Dict[str, Tensor], {})
