# Shared by bench.sh and bench-quick.sh: sourced, not run.
# Times a command several times and reports the median wall time and peak RSS.

set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CORPUS="${ENGINE_AUDIT_CORPUS:-$HOME/.cache/engine-audit-corpus}"
SHARED="${ENGINE_AUDIT_SHARED:-$ROOT/../shared}"
RECIPES="${BENCH_RECIPES:-$SHARED/recipes/benchmarks/multi_node/srt-slurm-recipes/sglang}"
NINE="${BENCH_NINE:-$RECIPES/dsr1/b200-fp4/8k1k/disagg/mtp}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
BIN="${BENCH_BIN:-$CARGO_TARGET_DIR/release/engine-audit}"
PARSE_ALL="${BENCH_PARSE_ALL:-$CARGO_TARGET_DIR/release/examples/parse_all}"
BENCH_DIR="$(mktemp -d "${TMPDIR:-/tmp}/engine-audit-bench.XXXXXX")"
trap 'rm -rf "$BENCH_DIR"' EXIT
# The fact cache of the benchmark only: never the user's.
export ENGINE_AUDIT_CACHE_DIR="$BENCH_DIR/facts"

have_inputs() {
    [[ -d "$CORPUS/sglang.git" && -d "$CORPUS/dynamo.git" && -d "$NINE" ]]
}

audit_cmd() { # PATH: the audit of the bench (the nine recipes' bump)
    echo "$BIN" audit "$1" --sglang "$CORPUS/sglang.git" --dynamo "$CORPUS/dynamo.git" \
        --to v0.5.19 --dynamo-from v1.3.0.post1 --dynamo-to v1.5.0 --offline --format json
}

clear_cache() { rm -rf "$ENGINE_AUDIT_CACHE_DIR"; }
no_prep() { :; }

# measure NAME RUNS PREP CMD...: sets MED_<NAME> (seconds) and RSS_<NAME> (MB).
# Timed runs use bash's clock (no `date` or `time` process around the command:
# those forks cost ~2.5 ms, a tenth of a warm audit); peak RSS comes from one
# more run under /usr/bin/time.
measure() {
    local name="$1" runs="$2" prep="$3"
    shift 3
    local walls=() i start end
    for ((i = 0; i < runs; i++)); do
        "$prep"
        start=$EPOCHREALTIME
        "$@" >/dev/null 2>"$BENCH_DIR/stderr" || true
        end=$EPOCHREALTIME
        walls+=("$(echo "$end - $start" | bc -l)")
    done
    local rss=0
    if [[ -x /usr/bin/time ]]; then
        "$prep"
        /usr/bin/time -f "%M" -o "$BENCH_DIR/rss" "$@" >/dev/null 2>"$BENCH_DIR/stderr" || true
        rss=$(tail -1 "$BENCH_DIR/rss")
    fi
    printf -v "MED_$name" '%s' "$(printf '%s\n' "${walls[@]}" | sort -g | awk '{a[NR]=$1} END {printf "%.3f", (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}')"
    printf -v "RSS_$name" '%s' "$(echo "$rss" | awk '{printf "%.0f", $1/1024}')"
}

ratio() { echo "scale=3; $1 / $2" | bc -l | sed 's/^\./0./'; }
