#!/usr/bin/env bash
# kiln_add_model() re-runs kiln only when its inputs change: examples/cpp_classifier (against
# an installed kiln) built, rebuilt with no change, with the model touched, with kiln itself
# changed, with a flag changed and configured again with the same flags; the flags with
# Makefiles too (which, unlike Ninja, do not notice a changed command by themselves).
#   rebuild.sh BUILD_DIR SOURCE_DIR WORK_DIR
set -u
build=$1
src=$2
work=$3
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work"
# shellcheck source=common.sh
source "$here/common.sh"

install_kiln "$build" "$work/prefix"
cp "$src/models/cnn/model.onnx" "$work/model.onnx"  # a copy to touch

# expect GENERATOR_DIR WHAT ran|not: builds, then checks whether kiln ran (its COMMENT line).
expect() {
  local dir=$1 what=$2 want=$3
  if ! cmake --build "$dir" >"$work/build.log" 2>&1; then
    echo "FAIL $what: the build failed:"; sed 's/^/    /' "$work/build.log" | tail -30; failures=$((failures + 1))
    return
  fi
  local got=not
  grep -q 'kiln: compiling' "$work/build.log" && got=ran
  if [ "$got" = "$want" ]; then
    echo "ok   $what: kiln $( [ "$want" = ran ] && echo ran || echo 'did not run')"
  else
    echo "FAIL $what: kiln $( [ "$got" = ran ] && echo ran || echo 'did not run'):"; sed 's/^/    /' "$work/build.log" | tail -20
    failures=$((failures + 1))
  fi
}

generators=(Ninja)
command -v make >/dev/null && generators+=("Unix Makefiles")
for generator in "${generators[@]}"; do
  echo "-- $generator"
  dir=$work/build-${generator// /-}
  configure() {
    cmake -S "$src/examples/cpp_classifier" -B "$dir" -G "$generator" -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_PREFIX_PATH="$work/prefix" -DCLASSIFIER_MODEL="$work/model.onnx" -DCMAKE_CXX_FLAGS="${cxx_extra[*]}" "$@" \
      >"$work/configure.log" 2>&1 ||
      { echo "FAIL configuring:"; cat "$work/configure.log"; exit 1; }
  }
  configure -DCLASSIFIER_PRECISION=fp32
  expect "$dir" "first build" ran
  expect "$dir" "no change" not
  if [ "$generator" = Ninja ]; then  # file dependencies: the same with both generators
    touch "$work/model.onnx"
    expect "$dir" "model touched" ran
    expect "$dir" "no change" not
    touch "$work/prefix/bin/kiln"
    expect "$dir" "kiln changed" ran
  fi
  configure -DCLASSIFIER_PRECISION=fp16
  expect "$dir" "PRECISION changed to fp16" ran
  configure -DCLASSIFIER_PRECISION=fp16
  expect "$dir" "configured again with the same flags" not
  check "the rebuilt classifier runs" "$dir/classify"
done
finish
