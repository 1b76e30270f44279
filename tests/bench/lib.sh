# Shared by the tests in this folder: sourced with $1 = the kiln binary, $2 = a work folder.
set -euo pipefail
kiln="$1"
work="$2"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
# shellcheck source=/dev/null
source "$repo/scripts/python_env.sh"
rm -rf "$work"
mkdir -p "$work"
export KILN_CACHE_DIR="${KILN_CACHE_DIR:-$work/../cache}"

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# expect_status WANT LOG COMMAND...: runs COMMAND with its output in LOG; fails unless it
# exits with WANT.
expect_status() {
  local want="$1" log="$2"
  shift 2
  local got=0
  "$@" >"$log" 2>&1 || got=$?
  if [[ $got != "$want" ]]; then
    cat "$log" >&2
    fail "expected exit status $want, got $got: $*"
  fi
}
