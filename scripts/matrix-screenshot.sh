#!/usr/bin/env bash
# The demo's matrix as a picture (docs/matrix-demo.png), opened the way a
# reader opens it: the HTML page in headless Chromium (Debian's `chromium`).
# The page must log nothing to the console (it has no script; a console line
# means something in it went wrong) and its DOM must hold the tables.
#
#     scripts/matrix-screenshot.sh                 # builds the debug binary first
#     BIN=target/release/engine-audit scripts/matrix-screenshot.sh [OUT.png]
#
# Exits 2 (saying so) when chromium is absent.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
OUT="${1:-$ROOT/docs/matrix-demo.png}"
CHROMIUM="${CHROMIUM:-/usr/bin/chromium}"
if [[ ! -x "$CHROMIUM" ]]; then
    echo "matrix-screenshot: $CHROMIUM is absent (apt-get install chromium): no picture taken" >&2
    exit 2
fi
if [[ -z "${BIN:-}" ]]; then
    cargo build --quiet --bin engine-audit
    BIN="$ROOT/target/debug/engine-audit"
fi
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
"$BIN" demo --keep "$WORK/demo" >/dev/null 2>&1 || true
[[ -d "$WORK/demo/recipes" ]] || { echo "matrix-screenshot: the demo was not built in $WORK/demo" >&2; exit 1; }
# Both engines, and Dynamo's two releases crossed with vLLM's: the qwen-mini
# row is safe at v0.9.0 under Dynamo v0.1.0 and breaks there under v0.2.0.
(cd "$WORK/demo" && ENGINE_AUDIT_CACHE_DIR="$WORK/facts" "$BIN" matrix recipes --sglang sglang.git --vllm vllm.git \
    --dynamo dynamo.git --dynamo-from v0.1.0 --format html) >"$WORK/matrix.html"

# A fresh profile; no sandbox (containers lack user namespaces); no GPU.
FLAGS=(--headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run --user-data-dir="$WORK/profile"
    --enable-logging=stderr --v=0)
timeout 120 "$CHROMIUM" "${FLAGS[@]}" --dump-dom "file://$WORK/matrix.html" >"$WORK/dom.html" 2>"$WORK/console.log"
if grep -q ':CONSOLE' "$WORK/console.log"; then
    echo "matrix-screenshot: the page logged to the console:" >&2
    grep ':CONSOLE' "$WORK/console.log" >&2
    exit 1
fi
tables=$(grep -c '<table>' "$WORK/dom.html" || true)
if [[ "$tables" -lt 2 ]] || ! grep -q 'engine-audit matrix' "$WORK/dom.html"; then
    echo "matrix-screenshot: the rendered page lacks its tables ($tables)" >&2
    exit 1
fi
timeout 120 "$CHROMIUM" "${FLAGS[@]}" --window-size=1140,770 --screenshot="$OUT" "file://$WORK/matrix.html" \
    >/dev/null 2>"$WORK/shot.log"
[[ -s "$OUT" ]] || { echo "matrix-screenshot: no screenshot written" >&2; cat "$WORK/shot.log" >&2; exit 1; }
echo "matrix-screenshot: $OUT ($(wc -c <"$OUT") bytes); no console message, $tables tables"
