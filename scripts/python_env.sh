#!/usr/bin/env bash
# The project's Python (the venv made by scripts/setup.sh).
#
#   source scripts/python_env.sh           # sets KILN_VENV and KILN_PYTHON
#   scripts/python_env.sh SCRIPT.py ARGS   # runs SCRIPT.py with the venv's python
#
# Never use the first python3 on PATH: it may lack Debian's torch and numpy.
_kiln_repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export KILN_VENV="${KILN_VENV:-$_kiln_repo/.venv}"
export KILN_PYTHON="$KILN_VENV/bin/python"
unset _kiln_repo

if [[ ! -x $KILN_PYTHON ]]; then
  echo "python_env.sh: no venv at $KILN_VENV; run: bash scripts/setup.sh" >&2
  # shellcheck disable=SC2317  # return when sourced, exit when run
  return 1 2>/dev/null || exit 1
fi

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  exec "$KILN_PYTHON" "$@"
fi
