#!/usr/bin/env bash
# kiln's libraries in other people's builds: libNAME.so has a SONAME and exports the C API
# only; NAME.h compiles as C++ with -fno-exceptions (the wrapper left out) and without the
# wrapper under KILN_NO_CPP_WRAPPER; NAME.pc gives the flags that link the static and the
# shared library; the default --emit writes the weights once.
#   library.sh KILN WORK_DIR
set -u
kiln=$1
work=$2
here=$(cd "$(dirname "$0")" && pwd)
data=$here/data
rm -rf "$work" && mkdir -p "$work"
failures=0
# CC and CXX may carry flags (the sanitized build's): split them into words.
read -r -a cc <<<"${CC:-cc}"
read -r -a cxx <<<"${CXX:-c++}"
# The code kiln compiled carries KILN_EXTRA_CXXFLAGS (the sanitized build's): a C++ program
# linking its library needs the same runtimes.
read -r -a cxx_extra <<<"${KILN_EXTRA_CXXFLAGS:-}"

check() {  # check WHAT COMMAND...: the command must succeed
  local what=$1
  shift
  if "$@" >"$work/check.log" 2>&1; then
    echo "ok   $what"
  else
    echo "FAIL $what:"; sed 's/^/    /' "$work/check.log"; failures=$((failures + 1))
  fi
}

out=$work/out
if ! "$kiln" compile "$data/relu.onnx" -o "$out" --name relu --emit lib,shared >"$work/compile.log" 2>&1; then
  echo "FAIL compiling relu.onnx:"; cat "$work/compile.log"; exit 1
fi

# SONAME and exports.
check "libNAME.so has the SONAME libNAME.so" sh -c "readelf -d '$out/librelu.so' | grep -q 'SONAME.*\[librelu.so\]'"
nm -D --defined-only "$out/librelu.so" | awk '{print $3}' | sort -u >"$work/exported"
grep -o '\brelu_[a-z_]*(' "$out/relu.h" | tr -d '(' | sort -u >"$work/declared"
if [ "$(wc -l <"$work/declared")" -eq 26 ] && cmp -s "$work/exported" "$work/declared"; then
  echo "ok   libNAME.so exports the 26 functions of NAME.h and nothing else"
else
  echo "FAIL libNAME.so exports other than NAME.h's functions:"; diff "$work/declared" "$work/exported" | head -20
  failures=$((failures + 1))
fi

# The header from C++: with -fno-exceptions (no wrapper), with the wrapper, without it on request.
cat >"$work/no_exceptions.cpp" <<'CPP'
#include "relu.h"
int main() {
  relu_context* ctx = relu_create(nullptr);
  const bool ok = ctx && !relu_error(ctx);
  relu_destroy(ctx);
  return ok ? 0 : 1;
}
CPP
check "NAME.h compiles and links as C++ with -fno-exceptions" \
  "${cxx[@]}" "${cxx_extra[@]}" -std=c++17 -fno-exceptions -Wall -Werror -I "$out" "$work/no_exceptions.cpp" "$out/librelu.a" -pthread -o "$work/no_exceptions"
check "the -fno-exceptions program runs" "$work/no_exceptions"
cat >"$work/wrapper.cpp" <<'CPP'
#include "relu.h"
int main() { kiln_models::relu model(1); return model.context() ? 0 : 1; }
CPP
check "the C++ wrapper is there with exceptions" \
  "${cxx[@]}" -std=c++17 -Wall -Werror -I "$out" -c "$work/wrapper.cpp" -o "$work/wrapper.o"
cat >"$work/own_class.cpp" <<'CPP'
#define KILN_NO_CPP_WRAPPER
#include "relu.h"
namespace kiln_models { class relu {}; }  // would clash with the wrapper
int main() { kiln_models::relu r; (void)r; return 0; }
CPP
check "KILN_NO_CPP_WRAPPER leaves the wrapper out" \
  "${cxx[@]}" -std=c++17 -Wall -Werror -I "$out" -c "$work/own_class.cpp" -o "$work/own_class.o"

# pkg-config's flags link a C program to the static library alone and to the shared one.
if command -v pkg-config >/dev/null; then
  static=$work/static
  "$kiln" compile "$data/relu.onnx" -o "$static" --name relu --emit lib >"$work/compile.log" 2>&1
  c_flags=(-std=c99 -Wall -Wextra -Werror -DKILN_MODEL=relu '-DKILN_MODEL_HEADER="relu.h"' "$here/run_library.c")
  # shellcheck disable=SC2046  # pkg-config's output is words
  check "pkg-config links the static library (no .so beside it)" \
    "${cc[@]}" "${c_flags[@]}" $(PKG_CONFIG_PATH=$static pkg-config --cflags --libs relu) -o "$work/run_static"
  mkdir -p "$work/static_out" "$work/shared_out"
  check "the program linked with libNAME.a runs" "$work/run_static" "$work/static_out" "$data/relu_input.npy"
  # shellcheck disable=SC2046
  check "pkg-config --static links with both libraries beside it" \
    "${cc[@]}" "${c_flags[@]}" $(PKG_CONFIG_PATH=$out pkg-config --static --cflags --libs relu) -Wl,-rpath,"$out" \
    -o "$work/run_shared"
  check "the program linked with libNAME.so runs" "$work/run_shared" "$work/shared_out" "$data/relu_input.npy"
  check "both give the same output" cmp "$work/static_out/output_0.npy" "$work/shared_out/output_0.npy"
else
  echo "skip pkg-config is not installed"
fi

# The default --emit writes the executable only: the weights once.
"$kiln" compile "$data/relu.onnx" -o "$work/default" >"$work/stdout" 2>"$work/stderr"
if [ "$(ls -A "$work/default")" = "relu" ] && grep -q "^kiln: wrote .*default in .* s: relu" "$work/stderr"; then
  echo "ok   the default --emit writes the executable alone: $(cat "$work/stderr")"
else
  echo "FAIL default --emit: $(ls -A "$work/default" | tr '\n' ' '); stderr:"; sed 's/^/    /' "$work/stderr"
  failures=$((failures + 1))
fi
# --emit exe,source with external weights: the weights beside the executable and in src/,
# which builds on its own.
check "--emit exe,source --weights external" \
  "$kiln" compile "$data/relu.onnx" -o "$work/ext" --emit exe,source --weights external
check "external weights beside the executable and in src/" test -f "$work/ext/relu.weights" -a -f "$work/ext/src/relu.weights"
check "the executable reads them" "$work/ext/relu" "$data/relu_input.npy"

echo "library: $failures failure(s)"
[ "$failures" -eq 0 ] && rm -rf "$work"
[ "$failures" -eq 0 ]
