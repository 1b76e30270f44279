#!/usr/bin/env bash
# The .deb on a clean Debian 12: a minimal bookworm (debootstrap --variant=minbase, nothing else
# installed) gets `apt install ./kiln_*.deb`, which must pull every dependency from Debian's
# archive; the installed kiln then compiles models/mlp and the executable it wrote must
# reproduce models/mlp/expected_0.npy. Needs root (chroot), debootstrap and the network.
#
#   sudo bash scripts/check_deb.sh [DEB]      (default: build/kiln_*_amd64.deb, from `cd build && cpack -G DEB`)
#
# The pristine system is made once into $KILN_DEB12_ROOT (default build/debian12-minbase) and
# copied for every check, so each install starts from the same clean tree.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
deb="${1:-$(ls "$repo"/build/kiln_*_amd64.deb 2>/dev/null | head -n 1)}"
[[ -f $deb ]] || { echo "check_deb: no .deb (make one: cd build && cpack -G DEB)"; exit 1; }
[[ $(id -u) == 0 ]] || { echo "check_deb: needs root, for chroot"; exit 1; }
command -v debootstrap >/dev/null || { echo "check_deb: needs debootstrap (apt install debootstrap)"; exit 1; }
pristine="${KILN_DEB12_ROOT:-$repo/build/debian12-minbase}"
if [[ ! -x $pristine/usr/bin/apt-get ]]; then
  echo "check_deb: making a minimal Debian 12 in $pristine"
  rm -rf "$pristine"
  debootstrap --variant=minbase bookworm "$pristine" http://deb.debian.org/debian >/dev/null
fi

root=$(mktemp -d /tmp/kiln-deb-check.XXXXXX)
cleanup() {
  umount "$root/proc" 2>/dev/null || true
  rm -rf "$root"
}
trap cleanup EXIT
cp -a "$pristine/." "$root/"
cp /etc/resolv.conf "$root/etc/resolv.conf"
mount -t proc proc "$root/proc"
mkdir -p "$root/check"
cp "$deb" "$root/check/"
cp "$repo/models/mlp/model.onnx" "$repo/models/mlp/input_0.npy" "$root/check/"
in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"; }

echo "check_deb: apt install ./$(basename "$deb") on a clean Debian 12"
in_root apt-get update -qq
in_root sh -c "cd /check && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ./$(basename "$deb")" >"$root/apt.log" 2>&1 ||
  { cat "$root/apt.log"; echo "FAIL: apt install"; exit 1; }
echo "check_deb: $(in_root dpkg-query -W -f='${Package} ${Version}, depends: ${Depends}' kiln)"
in_root kiln --version
in_root kiln compile /check/model.onnx -o /check/out --name mlp
in_root /check/out/mlp /check/input_0.npy -o /check/y
bash "$repo/scripts/python_env.sh" - "$root/check/y/output_0.npy" "$repo/models/mlp/expected_0.npy" <<'EOF'
import sys
import numpy as np
got, want = np.load(sys.argv[1]), np.load(sys.argv[2])
err = float(np.max(np.abs(got - want))) / max(float(np.max(np.abs(want))), 1e-30)
print(f"check_deb: the installed kiln's executable against models/mlp/expected_0.npy: {err:.1e} of the output scale")
sys.exit(0 if got.shape == want.shape and err < 1e-5 else 1)
EOF
echo "check_deb: ok"
