#!/usr/bin/env bash
# Quick regression gate for CI: the warm audit (fact cache filled) must stay at
# least 10x faster than the cold one. Medians of 3 runs. Skips (exit 0) when the
# corpus or the recipes are absent; expects the release binary to be built
# (set BENCH_BIN to use another).
source "$(dirname "$0")/bench-lib.sh"
RUNS="${RUNS:-3}"

if ! have_inputs; then
    echo "bench-quick: skipped (corpus $CORPUS or recipes $NINE missing)"
    exit 0
fi
# Always (re)build unless a binary is given: a stale binary would measure old code.
if [[ -z "${BENCH_BIN:-}" ]]; then
    (cd "$ROOT" && cargo build --release --quiet --bin engine-audit)
fi
# shellcheck disable=SC2046
measure cold "$RUNS" clear_cache $(audit_cmd "$NINE")
$(audit_cmd "$NINE") >/dev/null 2>&1 || true
# shellcheck disable=SC2046
measure warm "$RUNS" no_prep $(audit_cmd "$NINE")
echo "bench-quick: cold ${MED_cold}s, warm ${MED_warm}s ($(ratio "$MED_warm" "$MED_cold") x cold), load $(cut -d' ' -f1 /proc/loadavg)"
if [[ $(echo "$MED_warm * 10 > $MED_cold" | bc -l) == 1 ]]; then
    echo "bench-quick: FAIL: the warm audit is less than 10x faster than the cold one" >&2
    exit 1
fi
