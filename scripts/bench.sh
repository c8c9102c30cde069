#!/usr/bin/env bash
# The performance harness: the audit cold and warm, against the floor (git
# archive of both SGLang tags) and the naive approach (parse every .py file),
# and the whole SGLang recipe tree against the nine 8k1k recipes. Medians over
# RUNS runs (default 5); peak RSS is the maximum over the runs.
#
#     scripts/bench.sh            # builds the release binary and the parse_all example first
#     RUNS=9 scripts/bench.sh
#
# Inputs: the corpus (ENGINE_AUDIT_CORPUS, default ~/.cache/engine-audit-corpus)
# and the recipes (BENCH_RECIPES: the srt-slurm-recipes/sglang folder).
source "$(dirname "$0")/bench-lib.sh"
RUNS="${RUNS:-5}"

if ! have_inputs; then
    echo "bench: corpus ($CORPUS) or recipes ($NINE) missing" >&2
    exit 2
fi
if [[ -z "${BENCH_BIN:-}" ]]; then
    (cd "$ROOT" && cargo build --release --quiet --bin engine-audit --example parse_all)
fi
SG="$CORPUS/sglang.git"

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores, $RUNS runs each" >&2
# shellcheck disable=SC2046
measure cold "$RUNS" clear_cache $(audit_cmd "$NINE")
$(audit_cmd "$NINE") >/dev/null 2>&1 || true # fill the cache
# shellcheck disable=SC2046
measure warm "$RUNS" no_prep $(audit_cmd "$NINE")
measure floor "$RUNS" no_prep bash -c 'git -C "$0" archive v0.5.12.post1 >/dev/null && git -C "$0" archive v0.5.19 >/dev/null' "$SG"
measure parse_all "$RUNS" no_prep "$PARSE_ALL" parse "$SG" v0.5.12.post1 v0.5.19
# shellcheck disable=SC2046
measure scale "$RUNS" clear_cache $(audit_cmd "$RECIPES")
# shellcheck disable=SC2046
measure scale_warm "$RUNS" no_prep $(audit_cmd "$RECIPES")
echo "load after:  $(cut -d' ' -f1-3 /proc/loadavg)" >&2

verdict() { if [[ $(echo "$1 <= $2" | bc -l) == 1 ]]; then echo "met"; else echo "MISSED"; fi; }
R_COLD=$(ratio "$MED_cold" "$MED_floor")
R_WARM=$(ratio "$MED_warm" "$MED_cold")
R_SCALE=$(ratio "$MED_scale" "$MED_cold")
cat <<TABLE

| case | median s | peak RSS MB | ratio |
|---|---|---|---|
| 1. audit, nine 8k1k recipes, cold cache | $MED_cold | $RSS_cold | $R_COLD × floor (target ≤ 1.0: $(verdict "$R_COLD" 1.0)) |
| 2. same, warm cache | $MED_warm | $RSS_warm | $R_WARM × cold (target ≤ 0.05: $(verdict "$R_WARM" 0.05)) |
| 3. floor: git archive of both SGLang tags | $MED_floor | $RSS_floor | 1 |
| 4. naive: tree-sitter parse of every .py of both tags | $MED_parse_all | $RSS_parse_all | $(ratio "$MED_parse_all" "$MED_cold") × cold |
| 5. audit, every SGLang recipe, cold | $MED_scale | $RSS_scale | $R_SCALE × case 1 (target ≤ 1.3: $(verdict "$R_SCALE" 1.3)) |
| 5w. same, warm | $MED_scale_warm | $RSS_scale_warm | $(ratio "$MED_scale_warm" "$MED_warm") × case 2 |

peak RSS cold: $RSS_cold MB (target ≤ 300: $(verdict "$RSS_cold" 300))
TABLE
