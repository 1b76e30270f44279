#!/usr/bin/env bash
# ThreadSanitizer check of the compiled model's threading contract: models/cnn compiled by kiln
# with -fsanitize=thread (model and runtime), two_contexts.cpp built and linked the same way.
#   threads.sh KILN WORK
set -euo pipefail
kiln=$1 work=$2
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
cxx="${CXX:-c++}"
rm -rf "$work" && mkdir -p "$work"
# Only the thread sanitizer here, whatever the surrounding build uses.
KILN_EXTRA_CXXFLAGS="-fsanitize=thread -g" KILN_CACHE_DIR="${KILN_CACHE_DIR:-$work/cache}" \
  "$kiln" compile "$repo/models/cnn/model.onnx" -o "$work/model" --emit lib --name tm --cpu generic
"$cxx" -std=c++17 -O1 -g -fsanitize=thread -pthread -I "$work/model" "$here/two_contexts.cpp" \
  "$work/model/libtm.a" -o "$work/two_contexts"
TSAN_OPTIONS="halt_on_error=1:exitcode=66" "$work/two_contexts"
