#!/usr/bin/env bash
# Fetches ONNX's backend test data (the conformance suite's cases) into DEST.
#
#   bash scripts/fetch_onnx_testdata.sh [DEST]      # default: <repo>/build/onnx-testdata
#
# DEST gets node/, pytorch-converted/, pytorch-operator/ and simple/, each holding case
# folders with model.onnx and test_data_set_N/{input,output}_K.pb.
#
# The data comes from the onnx wheel on PyPI, pinned to the newest release whose wheel still
# bundles it (onnx 1.23 dropped onnx/backend/test/data/node from both wheel and sdist; see
# docs/design/conformance.md). The wheel is downloaded once with pip (the venv's, else Debian's)
# into $KILN_DOWNLOAD_CACHE (default ~/.cache/kiln/downloads) and only the data is
# extracted. If PyPI cannot be reached, Debian's libonnx-testdata (onnx 1.12, older and
# smaller) is installed with apt and copied instead, and the script says so.
#
# Idempotent: DEST/VERSION names the source; a second run with the same source does nothing.
# Environment overrides: KILN_TESTDATA_ONNX_VERSION (default 1.22.0), KILN_DOWNLOAD_CACHE.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="${1:-$repo/build/onnx-testdata}"
version="${KILN_TESTDATA_ONNX_VERSION:-1.22.0}"
cache="${KILN_DOWNLOAD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kiln/downloads}"
suites=(node pytorch-converted pytorch-operator simple)
want="onnx $version wheel"

if [[ -f $dest/VERSION && $(cat "$dest/VERSION") == "$want" ]]; then
  exit 0
fi

if [[ -x $repo/.venv/bin/python ]]; then py="$repo/.venv/bin/python"; else py=/usr/bin/python3; fi

# Writes into a fresh sibling folder and renames it into place, so DEST is either
# complete or absent.
stage="$dest.partial.$$"
trap 'rm -rf "$stage"' EXIT
rm -rf "$stage"
mkdir -p "$stage" "$(dirname "$dest")"

wheel=""
mkdir -p "$cache"
wheel="$(ls "$cache"/onnx-"$version"-*.whl 2>/dev/null | head -n1 || true)"
if [[ -z $wheel ]]; then
  echo "fetch_onnx_testdata.sh: downloading the onnx $version wheel into $cache"
  if "$py" -m pip download --disable-pip-version-check --no-input --no-deps \
       --only-binary :all: -d "$cache" "onnx==$version" >"$stage/pip.log" 2>&1; then
    wheel="$(ls "$cache"/onnx-"$version"-*.whl 2>/dev/null | head -n1 || true)"
  else
    echo "fetch_onnx_testdata.sh: pip download failed:" >&2
    tail -n 5 "$stage/pip.log" >&2
  fi
fi

if [[ -n $wheel ]]; then
  "$py" - "$wheel" "$stage" "${suites[@]}" <<'EOF'
import os, sys, zipfile
wheel, out, suites = sys.argv[1], sys.argv[2], sys.argv[3:]
prefix = "onnx/backend/test/data/"
counts = dict.fromkeys(suites, 0)
with zipfile.ZipFile(wheel) as z:
    for info in z.infolist():
        if not info.filename.startswith(prefix) or info.is_dir():
            continue
        rel = info.filename[len(prefix):]
        suite = rel.split("/", 1)[0]
        if suite not in counts:
            continue
        target = os.path.join(out, rel)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with z.open(info) as src, open(target, "wb") as dst:
            dst.write(src.read())
        if rel.endswith("/model.onnx"):
            counts[suite] += 1
if counts.get("node", 0) == 0:
    sys.exit(f"fetch_onnx_testdata.sh: {wheel} holds no node test data")
print("fetch_onnx_testdata.sh: " + ", ".join(f"{s} {n}" for s, n in counts.items()) + " cases")
EOF
  rm -f "$stage/pip.log"
else
  # Fallback: Debian's package of the same data, from an older onnx.
  deb_data=/usr/share/libonnx-testdata/data
  if [[ ! -d $deb_data/node ]]; then
    sudo=()
    if [[ $(id -u) != 0 ]]; then sudo=(sudo); fi
    echo "fetch_onnx_testdata.sh: PyPI unreachable; installing Debian's libonnx-testdata instead"
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y --no-install-recommends \
      libonnx-testdata >"$stage/apt.log" 2>&1 || {
        tail -n 20 "$stage/apt.log" >&2
        echo "fetch_onnx_testdata.sh: neither PyPI nor apt could provide the test data" >&2
        exit 1
      }
    rm -f "$stage/apt.log"
  fi
  deb_version="$(dpkg-query -W -f='${Version}' libonnx-testdata)"
  echo "fetch_onnx_testdata.sh: using Debian's libonnx-testdata $deb_version (not onnx $version): fewer and older cases"
  for s in "${suites[@]}"; do
    [[ -d $deb_data/$s ]] && cp -r "$deb_data/$s" "$stage/$s"
  done
  want="debian libonnx-testdata $deb_version"
fi

echo "$want" >"$stage/VERSION"
rm -rf "$dest"
mv -T "$stage" "$dest"
trap - EXIT
echo "fetch_onnx_testdata.sh: test data in $dest ($want)"
