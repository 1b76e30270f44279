#!/usr/bin/env bash
# kiln installed and used from other builds: `cmake --install` of this build tree into a
# prefix that is then moved (the install is relocatable); examples/cpp_classifier built with
# find_package(kiln) + kiln_add_model() and examples/c_pkgconfig with the net.pc of a model
# compiled by the installed kiln; both run and print the classes ONNX Runtime gives.
#   install.sh BUILD_DIR SOURCE_DIR WORK_DIR
set -u
build=$1
src=$2
work=$3
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work"
# shellcheck source=common.sh
source "$here/common.sh"

install_kiln "$build" "$work/staged"
mv "$work/staged" "$work/prefix"
prefix=$work/prefix
config=$prefix/lib/cmake/kiln
check "installed: bin/kiln, lib/cmake/kiln/{kilnConfig,kilnConfigVersion,kilnTargets,KilnAddModel}.cmake" \
  test -x "$prefix/bin/kiln" -a -f "$config/kilnConfig.cmake" -a -f "$config/kilnConfigVersion.cmake" \
  -a -f "$config/kilnTargets.cmake" -a -f "$config/KilnAddModel.cmake"
if sanitized "$build"; then
  check "the installed CMake files name no source or build folder" \
    sh -c "! grep -rlF -e '$src' -e '$build' '$prefix/lib'"
else
  check "the installed files name no source or build folder" \
    sh -c "! grep -rlF -e '$src' -e '$build' '$prefix'"
fi
check "the moved install runs: kiln --version" "$prefix/bin/kiln" --version

# C++: find_package(kiln) + kiln_add_model().
check "examples/cpp_classifier configures against the prefix" \
  cmake -S "$src/examples/cpp_classifier" -B "$work/cpp" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_CXX_FLAGS="${cxx_extra[*]}"
check "examples/cpp_classifier builds (kiln_add_model compiles the model)" cmake --build "$work/cpp"
check "examples/cpp_classifier runs" sh -c "'$work/cpp/classify' >'$work/cpp.out'"

# C: the net.pc of a model compiled by the installed kiln.
check "examples/c_pkgconfig builds with net.pc" \
  make -f "$src/examples/c_pkgconfig/Makefile" KILN="$prefix/bin/kiln" OUT="$work/c"
check "examples/c_pkgconfig runs" sh -c "'$work/c/classify' >'$work/c.out'"

cat "$work/cpp.out"
check "C and C++ print the same" cmp "$work/cpp.out" "$work/c.out"
if bash "$src/scripts/python_env.sh" "$here/expected_classes.py" "$src/models/cnn/model.onnx" >"$work/expected" 2>"$work/python.log"; then
  sed 's/ (score.*//' "$work/cpp.out" >"$work/classes"
  check "the classes are ONNX Runtime's" diff "$work/expected" "$work/classes"
else
  echo "FAIL ONNX Runtime's classes:"; cat "$work/python.log"; failures=$((failures + 1))
fi
finish
