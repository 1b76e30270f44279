#!/usr/bin/env bash
# Configures and builds kiln into build/ (after scripts/setup.sh). Incremental.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cmake -S "$repo" -B "$repo/build" -G Ninja -DCMAKE_BUILD_TYPE="${KILN_BUILD_TYPE:-RelWithDebInfo}" >/dev/null
cmake --build "$repo/build" -j "${KILN_JOBS:-$(nproc)}"
