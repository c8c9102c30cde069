#!/usr/bin/env bash
# Quick regression gate for CI: the warm audit (fact cache filled) must stay at
# least 10x faster than the cold one, as the median over 3 rounds of warm / cold.
# Skips (exit 0) when the corpus or the recipes are absent; builds the release
# binary unless BENCH_BIN names one.
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
read -r -a AUDIT_NINE <<<"$(audit_cmd "$NINE")"
WALLS_cold=() WALLS_warm=()
# Cold then warm in each round: the cold run fills the cache; the warm one is
# timed on its second run (see bench.sh).
for ((round = 0; round < RUNS; round++)); do
    time_once cold clear_cache "${AUDIT_NINE[@]}"
    "${AUDIT_NINE[@]}" >/dev/null 2>&1 || true
    time_once warm no_prep "${AUDIT_NINE[@]}"
done
median_of cold
median_of warm
R_WARM=$(paired_ratio warm cold)
echo "bench-quick: cold ${MED_cold}s, warm ${MED_warm}s (${R_WARM} x cold, median of rounds), load $(cut -d' ' -f1 /proc/loadavg)"
if [[ $(echo "$R_WARM > 0.1" | bc -l) == 1 ]]; then
    echo "bench-quick: FAIL: the warm audit is less than 10x faster than the cold one" >&2
    exit 1
fi
