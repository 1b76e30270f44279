# Helpers of the packaging tests (sourced).

failures=0

# check WHAT COMMAND...: the command must succeed; its output is shown when it does not.
check() {
  local what=$1
  shift
  if "$@" >"$work/check.log" 2>&1; then
    echo "ok   $what"
  else
    echo "FAIL $what:"; sed 's/^/    /' "$work/check.log" | tail -40; failures=$((failures + 1))
  fi
}

# install_kiln BUILD_DIR PREFIX: `cmake --install` of the build tree, stripped (a stripped
# binary names no source or build path even in debug info).
install_kiln() {
  if ! cmake --install "$1" --prefix "$2" --strip >"$work/install.log" 2>&1; then
    echo "FAIL cmake --install $1 --prefix $2:"; cat "$work/install.log"; exit 1
  fi
}

# The sanitized build (scripts/test_sanitized.sh) compiles models with KILN_EXTRA_CXXFLAGS: the
# programs that link them need the same flags. Its kiln also carries source paths (UBSan's
# check sites).
read -r -a cxx_extra <<<"${KILN_EXTRA_CXXFLAGS:-}"
sanitized() { grep -q '^KILN_SANITIZE:STRING=.' "$1/CMakeCache.txt" 2>/dev/null; }

finish() {
  [ "$failures" -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
  echo "all passed"
}
