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

audit_to_cmd() { # "PATHS" TO: every recipe to TO, the current releases from the images (history read as needed)
    echo "$BIN" audit $1 --sglang "$CORPUS/sglang.git" --dynamo "$CORPUS/dynamo.git" \
        --to "$2" --dynamo-to v1.6.1 --offline --format json
}

clear_cache() { rm -rf "$ENGINE_AUDIT_CACHE_DIR"; }
no_prep() { :; }

# time_once NAME PREP CMD...: run PREP, then time one run of CMD and append the
# wall time (seconds) to WALLS_<NAME>. Bash's clock, no `date` or `time` process
# around the command: those forks cost ~2.5 ms, a sixth of a warm audit.
# Callers run the cases in rounds (one run of each case per round), so the
# machine's drift over minutes falls on every case alike.
time_once() {
    local name="$1" prep="$2"
    shift 2
    local -n walls="WALLS_$name"
    "$prep"
    local start=$EPOCHREALTIME status=0
    "$@" >/dev/null 2>"$BENCH_DIR/stderr" || status=$?
    local end=$EPOCHREALTIME
    # An audit exits 1 on findings; anything else means the case did not run
    # (a missing binary, no corpus ref) and its time would be meaningless.
    if ((status > 1)); then
        echo "bench: $name exited $status: $*" >&2
        tail -5 "$BENCH_DIR/stderr" >&2
        exit 2
    fi
    walls+=("$(echo "$end - $start" | bc -l)")
}

# median_of NAME: the median of WALLS_<NAME>, into MED_<NAME>.
median_of() {
    local -n walls="WALLS_$1"
    printf -v "MED_$1" '%s' "$(printf '%s\n' "${walls[@]}" | sort -g | awk '{a[NR]=$1} END {printf "%.3f", (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}')"
}

# paired_ratio A B: the median over rounds of A's time / B's time in the same
# round, three decimals.
paired_ratio() {
    local -n a="WALLS_$1" b="WALLS_$2"
    local i
    for ((i = 0; i < ${#a[@]}; i++)); do echo "${a[i]} / ${b[i]}" | bc -l; done |
        sort -g | awk '{r[NR]=$1} END {printf "%.3f", (NR%2 ? r[(NR+1)/2] : (r[NR/2]+r[NR/2+1])/2)}'
}

# peak_rss NAME PREP CMD...: one more run under /usr/bin/time, peak RSS (MB)
# into RSS_<NAME>.
peak_rss() {
    local name="$1" prep="$2" rss=0
    shift 2
    if [[ -x /usr/bin/time ]]; then
        "$prep"
        /usr/bin/time -f "%M" -o "$BENCH_DIR/rss" "$@" >/dev/null 2>"$BENCH_DIR/stderr" || true
        rss=$(tail -1 "$BENCH_DIR/rss")
    fi
    printf -v "RSS_$name" '%s' "$(echo "$rss" | awk '{printf "%.0f", $1/1024}')"
}

