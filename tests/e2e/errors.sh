#!/usr/bin/env bash
# The command line's behaviour on bad input: one clear message naming the file (and the
# nodes, where there are some), a non-zero exit, and no output directory left behind; for
# kiln itself, exit status 1 and the prefix "kiln: error:", command-line mistakes included.
# Also: an interrupted compile or bench leaves no temporary folder behind.
#   errors.sh KILN WORK_DIR
set -u
kiln=$1
work=$2
data=$(cd "$(dirname "$0")/data" && pwd)
rm -rf "$work" && mkdir -p "$work"
failures=0

# expect_failure NAME PATTERN COMMAND...: the command must fail, print PATTERN on stderr in
# one line, and leave $work/out absent.
expect_failure() {
  local name=$1 pattern=$2
  shift 2
  "$@" >"$work/stdout" 2>"$work/stderr"
  local rc=$?
  local lines
  lines=$(wc -l <"$work/stderr")
  if [ "$rc" -eq 0 ]; then
    echo "FAIL $name: exit code 0"; failures=$((failures + 1))
  elif ! grep -q -- "$pattern" "$work/stderr"; then
    echo "FAIL $name: stderr lacks '$pattern':"; sed 's/^/    /' "$work/stderr"; failures=$((failures + 1))
  elif [ "$lines" -ne 1 ]; then
    echo "FAIL $name: expected one line of error, got $lines:"; sed 's/^/    /' "$work/stderr"; failures=$((failures + 1))
  elif [ -e "$work/out" ] || ls -a "$work" | grep -q kiln-tmp; then
    echo "FAIL $name: left output behind:"; ls -a "$work"; failures=$((failures + 1))
  else
    echo "ok   $name (exit $rc): $(cat "$work/stderr")"
  fi
  rm -rf "$work/out"
}

# expect_kiln_error NAME PATTERN KILN-ARGS...: as expect_failure, and kiln must exit with 1
# and print "kiln: error: ..." (no compiler output, no raw file-system error).
expect_kiln_error() {
  local name=$1 pattern=$2
  shift 2
  "$kiln" "$@" >"$work/stdout" 2>"$work/stderr"
  local rc=$?
  if [ "$rc" -ne 1 ] || ! head -1 "$work/stderr" | grep -q "^kiln: error: "; then
    echo "FAIL $name: expected exit 1 and 'kiln: error:', got exit $rc:"; sed 's/^/    /' "$work/stderr"
    failures=$((failures + 1))
    rm -rf "$work/out"
    return
  fi
  if grep -q "kiln-tmp\|filesystem error" "$work/stderr"; then
    echo "FAIL $name: the message names a temporary folder or is a raw file-system error:"; sed 's/^/    /' "$work/stderr"
    failures=$((failures + 1))
    rm -rf "$work/out"
    return
  fi
  expect_failure "$name" "$pattern" "$kiln" "$@"
}

expect_kiln_error "missing file" "nowhere.onnx: no such file" \
  compile "$work/nowhere.onnx" -o "$work/out"
expect_kiln_error "not a model" "not_a_model.onnx: not an ONNX model" \
  compile "$data/not_a_model.onnx" -o "$work/out"
expect_kiln_error "unsupported ops listed once" \
  "unsupported_op.onnx: 3 unsupported nodes: Swizzle in domain com.example (swizzle_1, swizzle_2), Frobnicate in domain com.example (frob_1)" \
  compile "$data/unsupported_op.onnx" -o "$work/out"
expect_kiln_error "a directory is not a model" "is a directory" \
  compile "$data" -o "$work/out"
expect_failure "a broken compiler leaves nothing behind" "cannot run the C++ compiler" \
  env CXX=/nonexistent/c++ "$kiln" compile "$data/relu.onnx" -o "$work/out"
expect_kiln_error "unknown --emit kind" "unknown kind 'dll'" \
  compile "$data/relu.onnx" -o "$work/out" --emit exe,dll
expect_kiln_error "interpreter: wrong input shape" "input 'x': shape \[2,3\] does not match the model's \[1,4\]" \
  run "$data/relu.onnx" -i "x=$data/wrong_shape.npy"
expect_kiln_error "interpreter: unknown input name" "unknown input 'nope'" \
  run "$data/relu.onnx" -i "nope=$data/relu_input.npy"

# Command-line mistakes: the same prefix and exit status as every other error, and the
# nearest command or option for a typo.
# StableHLO text (the JAX frontend): the op and its line:column; --params checked.
printf 'module {\n  func.func public @main(%%arg0: tensor<2xf32>) -> tensor<2xf32> {\n    %%0 = stablehlo.while(%%arg0) : tensor<2xf32>\n    return %%0 : tensor<2xf32>\n  }\n}\n' >"$work/loop.mlir"
expect_kiln_error "stablehlo: unsupported op" "loop.mlir:3:10: unsupported op 'stablehlo.while'" \
  compile "$work/loop.mlir" -o "$work/out"
expect_kiln_error "stablehlo: --params on an ONNX model" "relu.onnx: --params applies to StableHLO (.mlir) models only" \
  compile "$data/relu.onnx" --params "$work/nowhere.npz" -o "$work/out"
printf 'module {\n  func.func public @main(%%arg0: tensor<2xf32>) -> tensor<2xf32> {\n    return %%arg0 : tensor<2xf32>\n  }\n}\n' >"$work/id.mlir"
expect_kiln_error "stablehlo: --params not a zip" "not_a_model.onnx" \
  run "$work/id.mlir" --params "$data/not_a_model.onnx"

expect_kiln_error "misspelt command" "unknown command 'comple' (did you mean 'compile'?)" \
  comple "$data/relu.onnx" -o "$work/out"
expect_kiln_error "no command" "a command is required: compile, run, inspect, bench"
expect_kiln_error "misspelt option" "compile: unknown option '--emti' (did you mean '--emit'?)" \
  compile "$data/relu.onnx" -o "$work/out" --emti exe
expect_kiln_error "misspelt option with =" "run: unknown option '--inptu' (did you mean '--input'?)" \
  run "$data/relu.onnx" --inptu=x=y.npy
expect_kiln_error "unexpected argument" "compile: unexpected argument 'extra.onnx'" \
  compile "$data/relu.onnx" extra.onnx -o "$work/out"
expect_kiln_error "missing -o" "compile: --output is required" compile "$data/relu.onnx"
expect_kiln_error "bad --cpu value" "--cpu i386: not a CPU of x86_64-linux-gnu" compile "$data/relu.onnx" -o "$work/out" --cpu i386
expect_kiln_error "malformed -j" "compile: .*--jobs" compile "$data/relu.onnx" -o "$work/out" -j many
# A name that would break the header's C++ wrapper fails at once, before any compiling.
expect_kiln_error "--name keyword" "--name int: 'int' is a C/C++ keyword" \
  compile "$data/relu.onnx" -o "$work/out" --name int
cp "$data/relu.onnx" "$work/class.onnx"
expect_kiln_error "keyword from the file name" "class.onnx: the model's name 'class' (from the file name) is a C/C++ keyword.*--name" \
  compile "$work/class.onnx" -o "$work/out"
# An output that cannot be written: a clean message naming OUTDIR, not the temporary folder.
touch "$work/a_file"
expect_kiln_error "-o under a file" "a_file/out: cannot create the output directory" \
  compile "$data/relu.onnx" -o "$work/a_file/out"
if [ "$(id -u)" -ne 0 ]; then  # root writes anywhere
  mkdir -p "$work/read_only" && chmod 555 "$work/read_only"
  expect_kiln_error "-o in a read-only folder" "read_only/out: cannot write the output directory: Permission denied" \
    compile "$data/relu.onnx" -o "$work/read_only/out"
  chmod 755 "$work/read_only"
fi
expect_kiln_error "-o in /proc" "/proc/kiln-out: cannot write the output directory" \
  compile "$data/relu.onnx" -o /proc/kiln-out
if "$kiln" --version | grep -q "^kiln [0-9.]* (commit [0-9a-z-]*)"; then
  echo "ok   kiln --version names the commit: $("$kiln" --version)"
else
  echo "FAIL kiln --version: $("$kiln" --version)"; failures=$((failures + 1))
fi
if "$kiln" --help >/dev/null 2>&1 && "$kiln" compile --help | grep -q -- "--emit"; then
  echo "ok   --help exits 0"
else
  echo "FAIL --help"; failures=$((failures + 1))
fi

# The compiled executable checks its inputs the same way.
if "$kiln" compile "$data/relu.onnx" -o "$work/relu" --emit exe >"$work/log" 2>&1; then
  expect_failure "exe: wrong input shape" "input 'x': shape \[2,3\] does not match the model's \[1,4\]" \
    "$work/relu/relu" "$data/wrong_shape.npy"
  expect_failure "exe: missing input file" "missing.npy" "$work/relu/relu" "$work/missing.npy"
  expect_failure "exe: too many inputs" "input" "$work/relu/relu" "$data/relu_input.npy" "$data/relu_input.npy"
  # A failed compile keeps the previous output directory intact.
  before=$(ls "$work/relu")
  env CXX=/nonexistent/c++ "$kiln" compile "$data/relu.onnx" -o "$work/relu" >/dev/null 2>&1
  if [ "$(ls "$work/relu")" = "$before" ] && [ -x "$work/relu/relu" ]; then
    echo "ok   a failed compile leaves the previous output untouched"
  else
    echo "FAIL a failed compile changed the previous output"; failures=$((failures + 1))
  fi
else
  echo "FAIL compiling relu.onnx:"; cat "$work/log"; failures=$((failures + 1))
fi

# Leftovers of a killed compile (a dead PID's temporary tree, a previous output set aside
# mid-publish) are cleaned by the next compile to the same OUTDIR.
dead_pid=999999999
mkdir -p "$work/killed/.out.kiln-tmp-$dead_pid/src"
"$kiln" compile "$data/relu.onnx" -o "$work/killed/out" --emit exe >/dev/null 2>&1
if [ -x "$work/killed/out/relu" ] && ! ls -a "$work/killed" | grep -q kiln-tmp; then
  echo "ok   a killed compile's temporary tree is removed by the next compile"
else
  echo "FAIL stale temporary tree not cleaned:"; ls -a "$work/killed"; failures=$((failures + 1))
fi
mv "$work/killed/out" "$work/killed/.out.kiln-old-$dead_pid"
mkdir -p "$work/killed/elsewhere"
"$kiln" compile "$data/relu.onnx" -o "$work/killed/elsewhere/out" --emit exe >/dev/null 2>&1
"$kiln" compile "$work/missing.onnx" -o "$work/killed/out" >/dev/null 2>&1
if [ -x "$work/killed/out/relu" ] && ! ls -a "$work/killed" | grep -q kiln-old; then
  echo "ok   a previous output set aside by a killed compile is put back"
else
  echo "FAIL set-aside output not restored:"; ls -a "$work/killed"; failures=$((failures + 1))
fi

# Interrupted: SIGINT or SIGTERM while the C++ compiler runs (a wrapper that waits first)
# removes the temporary output and stops the compiler. Job control on, so that a background
# job gets SIGINT (without it bash makes background jobs ignore SIGINT).
cat >"$work/slow-c++" <<SH
#!/bin/sh
[ "\$1" = --version ] && exec ${CXX:-c++} --version
touch "$work/compiler-started"
sleep 60
exec ${CXX:-c++} "\$@"
SH
chmod +x "$work/slow-c++"
# interrupt NAME SIGNAL TEMP_GLOB COMMAND...: starts COMMAND, waits until the compiler runs,
# sends SIGNAL and checks that the command died of it and left nothing matching TEMP_GLOB.
interrupt() {
  local name=$1 sig=$2 glob=$3
  shift 3
  rm -f "$work/compiler-started"
  set -m
  CXX="$work/slow-c++" "$@" >"$work/interrupted.log" 2>&1 &
  local pid=$!
  set +m
  for _ in $(seq 600); do [ -e "$work/compiler-started" ] && break; sleep 0.1; done
  kill -"$sig" "$pid"
  wait "$pid"
  local rc=$?
  local left
  left=$(compgen -G "$glob")
  if [ ! -e "$work/compiler-started" ]; then
    echo "FAIL $name: the compiler never started:"; sed 's/^/    /' "$work/interrupted.log"; failures=$((failures + 1))
  elif [ -n "$left" ]; then
    echo "FAIL $name: left behind: $left"; failures=$((failures + 1))
  elif [ "$rc" -ne $((128 + $(kill -l "$sig"))) ]; then
    echo "FAIL $name: exit status $rc, expected death by SIG$sig"; failures=$((failures + 1))
  else
    echo "ok   $name: exit $rc, nothing left"
  fi
}
mkdir -p "$work/sig"
interrupt "SIGINT during a compile" INT "$work/sig/.out.kiln-tmp-*" \
  "$kiln" compile "$data/relu.onnx" -o "$work/sig/out"
interrupt "SIGTERM during a compile" TERM "$work/sig/.out.kiln-tmp-*" \
  "$kiln" compile "$data/relu.onnx" -o "$work/sig/out"
mkdir -p "$work/sig/tmp"
interrupt "SIGINT during kiln bench" INT "$work/sig/tmp/*" \
  env TMPDIR="$work/sig/tmp" "$kiln" bench "$data/relu.onnx" --against none
[ -e "$work/sig/out" ] && { echo "FAIL an interrupted compile wrote its output"; failures=$((failures + 1)); }

echo "errors: $failures failure(s)"
[ "$failures" -eq 0 ] && rm -rf "$work"
[ "$failures" -eq 0 ]
