#!/usr/bin/env bash
# Reproducible outputs: the same model compiled twice, into different folders, from different
# working directories and with different runtime caches (so the runtime's objects are built
# twice, from different temporary folders), gives byte-identical files: the generated
# sources, the weights, libNAME.a, libNAME.so, NAME.h, NAME.pc and the executable. Both
# compiles add -g, so that no path in the debug info goes unnoticed. NAME.h's
# KILN_MODEL_<NAME>_HASH changes when a flag changes what is generated.
#   reproducible.sh KILN MODEL WORK_DIR
set -u
kiln=$1
model=$2
work=$3
rm -rf "$work" && mkdir -p "$work/a" "$work/b/deeper" "$work/cwd"
failures=0

compile() {  # compile OUTDIR LOG [ARGS...]
  local out=$1 log=$2
  shift 2
  if ! "$kiln" compile "$model" -o "$out" --name net "$@" >"$log" 2>&1; then
    echo "FAIL kiln compile $model -o $out $*:"; cat "$log"; exit 1
  fi
}

# -O0: paths in objects do not depend on the optimization level, and the runtime, built twice
# here, compiles in a third of the time (the test took 166 s of CI time at -O3).
export KILN_EXTRA_CXXFLAGS="${KILN_EXTRA_CXXFLAGS:-} -g -O0"
first=$work/a/out
second=$work/b/deeper/other
# The first with the caller's runtime cache, the second with a cache of its own.
compile "$first" "$work/a.log" --emit exe,lib,shared,source
(cd "$work/cwd" && KILN_CACHE_DIR=$work/cache compile "$second" "$work/b.log" --emit exe,lib,shared,source)

(cd "$first" && find . -type f | LC_ALL=C sort) >"$work/first.files"
(cd "$second" && find . -type f | LC_ALL=C sort) >"$work/second.files"
if cmp -s "$work/first.files" "$work/second.files"; then
  echo "ok   the same $(wc -l <"$work/first.files") files"
else
  echo "FAIL different files:"; diff "$work/first.files" "$work/second.files"; failures=$((failures + 1))
fi
differing=0
while read -r f; do
  if [ -f "$second/$f" ] && ! cmp -s "$first/$f" "$second/$f"; then
    echo "FAIL $f differs"; differing=$((differing + 1))
  fi
done <"$work/first.files"
if [ "$differing" -eq 0 ]; then
  echo "ok   every file byte-identical (net, libnet.a, libnet.so, net.h, net.pc, src/)"
else
  failures=$((failures + 1))
fi
for f in net libnet.a libnet.so net.h src/model.cpp src/net.weights; do
  [ -s "$first/$f" ] || { echo "FAIL $f missing or empty"; failures=$((failures + 1)); }
done

# The content hash: present, and different when a flag changes the generated code.
hash_of() { sed -n 's/^#define KILN_MODEL_net_HASH "\([0-9a-f]*\)"$/\1/p' "$1"; }
compile "$work/fp16" "$work/fp16.log" --emit source --precision fp16
h32=$(hash_of "$first/net.h")
h16=$(hash_of "$work/fp16/src/net.h")
if [ ${#h32} -eq 16 ] && [ ${#h16} -eq 16 ] && [ "$h32" != "$h16" ]; then
  echo "ok   KILN_MODEL_net_HASH $h32 (fp32) != $h16 (fp16)"
else
  echo "FAIL KILN_MODEL_net_HASH: '$h32' (fp32), '$h16' (fp16)"; failures=$((failures + 1))
fi

[ "$failures" -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
