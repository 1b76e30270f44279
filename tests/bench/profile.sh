#!/usr/bin/env bash
# --profile on a compiled executable: a Chrome trace event file (checked against the format)
# with one event per node per run, named after the model's nodes with their op types, whose
# node times add up to within 10% of each run's measured latency; and the library's switch
# (NAME_set_profiling, NAME_node_time) from C.
# ResNet-50, as in docs/guide/debugging.md, is the same check by hand on a bigger model.
source "$(dirname "$0")/lib.sh"
model="${KILN_PROFILE_MODEL:-$repo/models/cnn/model.onnx}"
"$kiln" compile "$model" -o "$work/out" --emit exe,lib,source --name net >"$work/compile.log" 2>&1 || { cat "$work/compile.log"; fail "compile"; }
"$KILN_PYTHON" - "$model" "$work/in.npy" <<'PY'
import sys, numpy as np, onnx
m = onnx.load(sys.argv[1])
inits = {i.name for i in m.graph.initializer}
x = [i for i in m.graph.input if i.name not in inits][0]
shape = [d.dim_value for d in x.type.tensor_type.shape.dim]
np.save(sys.argv[2], np.random.default_rng(0).standard_normal(shape).astype(np.float32))
PY
"$work/out/net" "$work/in.npy" --repeat 30 --profile "$work/trace.json" >"$work/run.log" 2>&1 || { cat "$work/run.log"; fail "run"; }
"$KILN_PYTHON" "$here/check_trace.py" "$work/trace.json" --runs 30 --source "$work/out/src/model.cpp" --tolerance 0.10
# Profiling off (no --profile) writes no trace and still runs.
"$work/out/net" "$work/in.npy" --repeat 3 >/dev/null 2>&1 || fail "run without --profile"
# The same switch in the library's C API.
# CC may carry flags (the sanitized build sets CC="clang -fsanitize=..."): split it into words.
read -r -a cc <<<"${CC:-cc}"
"${cc[@]}" -std=c99 -Wall -Wextra -Werror -I "$work/out" "$here/profile_library.c" "$work/out/libnet.a" \
  -lstdc++ -lm -pthread -o "$work/profile_library" || fail "profile_library.c does not build"
"$work/profile_library" || fail "the library's profiling switch"
echo "PASS"
