#!/usr/bin/env bash
# The HTML report opened in headless Chromium: the rendered DOM holds the three charts with
# one mark per measurement. A copy of the page without its charts must fail the same check.
# Skipped (77) where Chromium is not installed (scripts/setup.sh installs it).
source "$(dirname "$0")/lib.sh"
chromium="$(command -v chromium || command -v chromium-browser || true)"
if [[ -z $chromium ]]; then
  echo "SKIP: no chromium on PATH (apt-get install chromium; scripts/setup.sh does)"
  exit 77
fi
expect_status 0 "$work/bench.log" "$kiln" bench "$repo/models/cnn/model.onnx" --against onnxruntime \
  --python "$KILN_PYTHON" --rounds 4 --runs 5 --warmup 1 --html "$work/r.html" --json "$work/r.json"

render() {  # render PAGE DOM
  timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$work/profile" \
    --dump-dom "file://$1" >"$2" 2>"$work/chromium.log" || { cat "$work/chromium.log" >&2; fail "chromium failed"; }
}
render "$work/r.html" "$work/r.dom.html"
"$KILN_PYTHON" "$here/check_html_dom.py" "$work/r.dom.html" "$work/r.json"

# Negative control: the page with its <svg> elements removed.
"$KILN_PYTHON" - "$work/r.html" "$work/nocharts.html" <<'PY'
import re, sys
page = open(sys.argv[1], encoding="utf-8").read()
open(sys.argv[2], "w", encoding="utf-8").write(re.sub(r"<svg.*?</svg>", "", page, flags=re.S))
PY
render "$work/nocharts.html" "$work/nocharts.dom.html"
if "$KILN_PYTHON" "$here/check_html_dom.py" "$work/nocharts.dom.html" "$work/r.json" 2>/dev/null; then
  fail "the check passed a page without charts"
fi
echo "PASS"
