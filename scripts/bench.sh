#!/usr/bin/env bash
# The performance harness: the audit cold and warm, against the floor (git
# archive of both SGLang tags) and the naive approach (parse every .py file),
# and the whole SGLang recipe tree against the nine 8k1k recipes. RUNS rounds
# (default 5), each running every case once; medians of the wall times, ratios
# as the median of each round's pair; peak RSS from one more run of each case.
#
#     scripts/bench.sh            # builds the release binary and the parse_all example first
#     RUNS=9 scripts/bench.sh
#     ENGINE_AUDIT_IX=~/ix BENCH_ONLY=ix scripts/bench.sh   # case 9 alone
#     ENGINE_AUDIT_IX=~/ix ENGINE_AUDIT_ATOM=~/ATOM.git BENCH_ONLY=atom scripts/bench.sh   # case 10 alone
#     ENGINE_AUDIT_IX=~/ix ENGINE_AUDIT_TRTLLM=~/trtllm.git BENCH_ONLY=trtllm scripts/bench.sh   # case 11 alone
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

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores, $RUNS rounds" >&2
FLOOR=(bash -c 'git -C "$0" archive v0.5.12.post1 >/dev/null && git -C "$0" archive v0.5.19 >/dev/null' "$SG")
NAIVE=("$PARSE_ALL" parse "$SG" v0.5.12.post1 v0.5.19)
read -r -a AUDIT_NINE <<<"$(audit_cmd "$NINE")"
read -r -a AUDIT_ALL <<<"$(audit_cmd "$RECIPES")"
# Every SGLang recipe to v0.5.23: from-versions v0.5.12.post1 and v0.5.16 (the
# images), v0.5.19 read for the release history; its floor reads every tree involved.
# The SGLang srt-slurm recipes, the AMD model table and the launch-script
# fixtures (InferenceX's scripts are not in ../shared; ours take their shapes),
# and today's schema-2 tree (recipes-v2: its SGLang roles audited, the others
# read and named not audited).
V2_RECIPES="$SHARED/recipes-v2/benchmarks"
[[ -d "$V2_RECIPES" ]] || V2_RECIPES=""
read -r -a AUDIT_23 <<<"$(audit_to_cmd "$RECIPES $SHARED/recipes/benchmarks/multi_node/amd_utils/models.yaml $ROOT/fixtures/inferencex/benchmarks $V2_RECIPES" v0.5.23)"
FLOOR_23=(bash -c 'for t in v0.5.12.post1 v0.5.16 v0.5.19 v0.5.23; do git -C "$0" archive "$t" >/dev/null; done; git -C "$1" archive v1.6.1 >/dev/null' "$SG" "$CORPUS/dynamo.git")
# Every vLLM srt-slurm recipe (Dynamo's vLLM worker included) to v0.34.0; the
# images' releases that are corpus tags (v0.20.1 ... v0.27.1) are read too, and
# the floor archives every vLLM tag and Dynamo v1.6.1.
VLLM_RECIPES="$SHARED/recipes/benchmarks/multi_node/srt-slurm-recipes/vllm"
AUDIT_VLLM=("$BIN" audit "$VLLM_RECIPES" --vllm "$CORPUS/vllm.git" --dynamo "$CORPUS/dynamo.git"
    --to v0.34.0 --dynamo-to v1.6.1 --offline --format json)
FLOOR_VLLM=(bash -c 'for t in v0.20.1 v0.21.0 v0.23.0 v0.25.1 v0.27.1 v0.34.0; do git -C "$0" archive "$t" >/dev/null; done; git -C "$1" archive v1.6.1 >/dev/null' "$CORPUS/vllm.git" "$CORPUS/dynamo.git")
# The matrix (issue 44): the SGLang recipes of both trees against every release
# of the wider corpus (17 SGLang tags), cold and warm, against one cold audit of
# the same recipes to the newest release. Skipped without the wider corpus.
WIDE="${ENGINE_AUDIT_CORPUS_WIDE:-$(dirname "$CORPUS")/wide}"
MATRIX=() AUDIT_WIDE=()
if [[ -d "$WIDE/sglang.git" ]]; then
    MATRIX=("$BIN" matrix $RECIPES $V2_RECIPES --sglang "$WIDE/sglang.git" --offline --format json)
    AUDIT_WIDE=("$BIN" audit $RECIPES $V2_RECIPES --sglang "$WIDE/sglang.git" --to v0.5.23 --offline --format json --fail-on never)
fi
# The whole real InferenceX tree (issue 42): `audit .` at the root of a git
# checkout of it (ENGINE_AUDIT_IX; skipped without: it is not in ../shared),
# every engine and launch script, against the floor of `git archive` of its
# three target trees. ATOM and TensorRT-LLM deployments are acknowledged.
IX="${ENGINE_AUDIT_IX:-}"
AUDIT_IX=() FLOOR_IX=()
if [[ -n "$IX" && -d "$IX/benchmarks" ]]; then
    AUDIT_IX=(bash -c 'cd "$0" && exec "$@"' "$IX" "$BIN" audit . --sglang "$CORPUS/sglang.git" --vllm "$CORPUS/vllm.git"
        --dynamo "$CORPUS/dynamo.git" --to v0.5.23 --vllm-to v0.34.0 --dynamo-to v1.6.1 --offline --format json
        --fail-on never --allow-unaudited atom --allow-unaudited trtllm)
    FLOOR_IX=(bash -c 'git -C "$0" archive v0.5.23 >/dev/null && git -C "$1" archive v0.34.0 >/dev/null && git -C "$2" archive v1.6.1 >/dev/null'
        "$CORPUS/sglang.git" "$CORPUS/vllm.git" "$CORPUS/dynamo.git")
fi
# cold_warm_round NAME AUDIT FLOOR: one round of a case: AUDIT (an array's
# name) timed cold, its floor, then AUDIT warm (as NAME_warm, on its second run).
cold_warm_round() {
    local -n case_cmd="$2" case_floor="$3"
    time_once "$1" clear_cache "${case_cmd[@]}"
    time_once "floor_$1" no_prep "${case_floor[@]}"
    "${case_cmd[@]}" >/dev/null 2>&1 || true
    time_once "$1_warm" no_prep "${case_cmd[@]}"
}
WALLS_ix=() WALLS_ix_warm=() WALLS_floor_ix=()
ix_round() { cold_warm_round ix AUDIT_IX FLOOR_IX; }
ix_table() {
    for name in ix ix_warm floor_ix; do median_of "$name"; done
    local cold warm
    cold=$(paired_ratio ix floor_ix)
    warm=$(paired_ratio ix_warm floor_ix)
    cat <<TABLE
| case | median s | ratio |
|---|---|---|
| 9. the whole InferenceX tree (\`audit .\`, every engine and script), cold | $MED_ix | $cold × 9f (target ≤ 2: $(verdict "$cold" 2)) |
| 9w. same, warm | $MED_ix_warm | $warm × 9f (target ≤ 0.5: $(verdict "$warm" 0.5)) |
| 9f. floor: git archive of SGLang v0.5.23, vLLM v0.34.0, Dynamo v1.6.1 | $MED_floor_ix | 1 |
TABLE
}
# The ATOM part of that tree (issue 46): every single-node ATOM script, the
# AMD chain's ATOM server script (its env file sourced) and model table, with
# ATOM's source (ENGINE_AUDIT_ATOM, a clone of ROCm/ATOM; skipped without) at
# one target ref (BENCH_ATOM_REF), against the floor of `git archive` of it.
# engine_part_case NAME SOURCE REF FILE...: the audit of FILE... (paths in
# the tree) with one engine's SOURCE (`--NAME`) at REF (`--NAME-to`), as
# AUDIT_<NAME>, and its floor, `git archive` of that ref, as FLOOR_<NAME>.
engine_part_case() {
    local name=$1 src=$2 ref=$3
    shift 3
    local -n audit="AUDIT_${name^^}" floor="FLOOR_${name^^}"
    audit=(bash -c 'cd "$0" && exec "$@"' "$IX" "$BIN" audit "$@" "--$name" "$src" "--$name-to" "$ref"
        --offline --format json --fail-on never)
    floor=(git -C "$src" archive "$ref")
}
ATOM_SRC="${ENGINE_AUDIT_ATOM:-}"
ATOM_REF="${BENCH_ATOM_REF:-087b82d9c1f630e79149ba37e6213257ec9a76f8}"
AUDIT_ATOM=() FLOOR_ATOM=()
if ((${#AUDIT_IX[@]})) && [[ -n "$ATOM_SRC" ]]; then
    mapfile -t ATOM_FILES < <(cd "$IX" && grep -rl "atom.entrypoints" benchmarks/single_node | sort)
    ATOM_FILES+=(benchmarks/multi_node/amd_utils/server_atom.sh benchmarks/multi_node/amd_utils/models_atom.yaml)
    engine_part_case atom "$ATOM_SRC" "$ATOM_REF" "${ATOM_FILES[@]}"
fi
WALLS_atom=() WALLS_atom_warm=() WALLS_floor_atom=()
atom_round() { cold_warm_round atom AUDIT_ATOM FLOOR_ATOM; }
# engine_part_table NAME N LABEL FLOOR_LABEL: the table of a case that
# audits one engine's part of the tree against `git archive` of its target.
engine_part_table() {
    local name=$1 n=$2 label=$3 floor_label=$4
    for m in "$name" "${name}_warm" "floor_$name"; do median_of "$m"; done
    local cold warm med="MED_$name" med_warm="MED_${name}_warm" med_floor="MED_floor_$name"
    cold=$(paired_ratio "$name" "floor_$name")
    warm=$(paired_ratio "${name}_warm" "$name")
    cat <<TABLE
| case | median s | ratio |
|---|---|---|
| $n. $label, cold | ${!med} | $cold × ${n}f (target ≤ 1.5: $(verdict "$cold" 1.5)) |
| ${n}w. same, warm | ${!med_warm} | $warm × cold (target ≤ 0.05: $(verdict "$warm" 0.05)) |
| ${n}f. $floor_label | ${!med_floor} | 1 |
TABLE
}
atom_table() {
    engine_part_table atom 10 "the ATOM part of the InferenceX tree (${#ATOM_FILES[@]} files) at ATOM ${ATOM_REF:0:9}" \
        "floor: git archive of that ATOM tree"
}
# The TensorRT-LLM part of that tree (issue 45): every `trtllm-serve` script
# (the LlmArgs YAML it writes read with it) and every srt-slurm TRT-LLM recipe,
# with TensorRT-LLM's source (ENGINE_AUDIT_TRTLLM, the repository assembled as
# docs/trtllm.md says; skipped without) at one target tag (BENCH_TRTLLM_REF),
# against the floor of `git archive` of it.
TRTLLM_SRC="${ENGINE_AUDIT_TRTLLM:-}"
TRTLLM_REF="${BENCH_TRTLLM_REF:-v1.3.0rc3}"
AUDIT_TRTLLM=() FLOOR_TRTLLM=()
if ((${#AUDIT_IX[@]})) && [[ -n "$TRTLLM_SRC" ]]; then
    mapfile -t TRTLLM_FILES < <(cd "$IX" && { grep -rl "trtllm-serve" benchmarks/single_node; find benchmarks/multi_node -path "*trtllm*" -name "*.yaml"; } | sort)
    engine_part_case trtllm "$TRTLLM_SRC" "$TRTLLM_REF" "${TRTLLM_FILES[@]}"
fi
WALLS_trtllm=() WALLS_trtllm_warm=() WALLS_floor_trtllm=()
trtllm_round() { cold_warm_round trtllm AUDIT_TRTLLM FLOOR_TRTLLM; }
trtllm_table() {
    engine_part_table trtllm 11 "the TensorRT-LLM part of the InferenceX tree (${#TRTLLM_FILES[@]} files) at ${TRTLLM_REF}" \
        "floor: git archive of that TensorRT-LLM tree"
}
verdict() { if [[ $(echo "$1 <= $2" | bc -l) == 1 ]]; then echo "met"; else echo "MISSED"; fi; }
# only_case NAME AUDIT NEEDS: BENCH_ONLY=NAME runs that case alone (its
# rounds, then its table), or says what it needs when AUDIT is empty.
only_case() {
    local -n case_cmd="$2"
    [[ "${BENCH_ONLY:-}" == "$1" ]] || return 0
    if ((${#case_cmd[@]} == 0)); then
        echo "bench: BENCH_ONLY=$1 needs $3" >&2
        exit 2
    fi
    for ((round = 0; round < RUNS; round++)); do "$1_round"; done
    "$1_table"
    exit 0
}
only_case atom AUDIT_ATOM "ENGINE_AUDIT_IX and ENGINE_AUDIT_ATOM (a clone of ROCm/ATOM)"
only_case trtllm AUDIT_TRTLLM "ENGINE_AUDIT_IX and ENGINE_AUDIT_TRTLLM (docs/trtllm.md: the assembled repository)"
if [[ "${BENCH_ONLY:-}" == ix ]]; then
    if ((${#AUDIT_IX[@]} == 0)); then
        echo "bench: BENCH_ONLY=ix needs ENGINE_AUDIT_IX (a git checkout of the InferenceX tree)" >&2
        exit 2
    fi
    for ((round = 0; round < RUNS; round++)); do ix_round; done
    ix_table
    exit 0
fi
WALLS_matrix=() WALLS_matrix_warm=() WALLS_audit_wide=()
WALLS_cold=() WALLS_warm=() WALLS_floor=() WALLS_parse_all=() WALLS_scale=() WALLS_scale_warm=() WALLS_to23=() WALLS_to23_warm=() WALLS_floor23=()
WALLS_vllm=() WALLS_vllm_warm=() WALLS_floor_vllm=()
# One timed run of every case per round. A cold run fills the cache its warm
# case reads; a warm run straight after the run that filled the cache measured
# up to half again slower here (that run's writes and freed memory still being
# handled), so each warm case is timed on its second run, as a later audit
# would see it.
for ((round = 0; round < RUNS; round++)); do
    time_once cold clear_cache "${AUDIT_NINE[@]}"
    time_once floor no_prep "${FLOOR[@]}"
    "${AUDIT_NINE[@]}" >/dev/null 2>&1 || true
    time_once warm no_prep "${AUDIT_NINE[@]}"
    time_once scale clear_cache "${AUDIT_ALL[@]}"
    time_once parse_all no_prep "${NAIVE[@]}"
    "${AUDIT_ALL[@]}" >/dev/null 2>&1 || true
    time_once scale_warm no_prep "${AUDIT_ALL[@]}"
    time_once to23 clear_cache "${AUDIT_23[@]}"
    time_once floor23 no_prep "${FLOOR_23[@]}"
    "${AUDIT_23[@]}" >/dev/null 2>&1 || true
    time_once to23_warm no_prep "${AUDIT_23[@]}"
    time_once vllm clear_cache "${AUDIT_VLLM[@]}"
    time_once floor_vllm no_prep "${FLOOR_VLLM[@]}"
    "${AUDIT_VLLM[@]}" >/dev/null 2>&1 || true
    time_once vllm_warm no_prep "${AUDIT_VLLM[@]}"
    if ((${#AUDIT_IX[@]})); then ix_round; fi
    if ((${#AUDIT_ATOM[@]})); then atom_round; fi
    if ((${#AUDIT_TRTLLM[@]})); then trtllm_round; fi
    if ((${#MATRIX[@]})); then
        time_once audit_wide clear_cache "${AUDIT_WIDE[@]}"
        time_once matrix clear_cache "${MATRIX[@]}"
        "${MATRIX[@]}" >/dev/null 2>&1 || true
        time_once matrix_warm no_prep "${MATRIX[@]}"
    fi
done
if ((${#MATRIX[@]})); then
    for name in matrix matrix_warm audit_wide; do median_of "$name"; done
fi
for name in cold warm floor parse_all scale scale_warm to23 to23_warm floor23 vllm vllm_warm floor_vllm; do median_of "$name"; done
peak_rss cold clear_cache "${AUDIT_NINE[@]}"
peak_rss warm no_prep "${AUDIT_NINE[@]}"
peak_rss floor no_prep "${FLOOR[@]}"
peak_rss parse_all no_prep "${NAIVE[@]}"
peak_rss scale clear_cache "${AUDIT_ALL[@]}"
peak_rss scale_warm no_prep "${AUDIT_ALL[@]}"
peak_rss to23 clear_cache "${AUDIT_23[@]}"
peak_rss to23_warm no_prep "${AUDIT_23[@]}"
peak_rss vllm clear_cache "${AUDIT_VLLM[@]}"
echo "load after:  $(cut -d' ' -f1-3 /proc/loadavg)" >&2

# Ratios are medians of the same round's pair, not ratios of medians.
R_COLD=$(paired_ratio cold floor)
R_WARM=$(paired_ratio warm cold)
R_SCALE=$(paired_ratio scale cold)
cat <<TABLE

| case | median s | peak RSS MB | ratio |
|---|---|---|---|
| 1. audit, nine 8k1k recipes, cold cache | $MED_cold | $RSS_cold | $R_COLD × floor (target ≤ 1.0: $(verdict "$R_COLD" 1.0)) |
| 2. same, warm cache | $MED_warm | $RSS_warm | $R_WARM × cold (target ≤ 0.05: $(verdict "$R_WARM" 0.05)) |
| 3. floor: git archive of both SGLang tags | $MED_floor | $RSS_floor | 1 |
| 4. naive: tree-sitter parse of every .py of both tags | $MED_parse_all | $RSS_parse_all | $(paired_ratio parse_all cold) × cold |
| 5. audit, every SGLang recipe, cold | $MED_scale | $RSS_scale | $R_SCALE × case 1 (target ≤ 1.3: $(verdict "$R_SCALE" 1.3)) |
| 5w. same, warm | $MED_scale_warm | $RSS_scale_warm | $(paired_ratio scale_warm warm) × case 2 |
| 6. every SGLang recipe, the AMD table and the script fixtures to v0.5.23 (history), cold | $MED_to23 | $RSS_to23 | $(paired_ratio to23 floor23) × its floor (target ≤ 1.5: $(verdict "$(paired_ratio to23 floor23)" 1.5)) |
| 6w. same, warm | $MED_to23_warm | $RSS_to23_warm | target ≤ 0.100 s: $(verdict "$MED_to23_warm" 0.100) |
| 6f. floor: git archive of the four SGLang tags and Dynamo v1.6.1 | $MED_floor23 | | 1 |
| 7. every vLLM srt-slurm recipe (198) to v0.34.0 with Dynamo v1.6.1, cold | $MED_vllm | $RSS_vllm | $(paired_ratio vllm floor_vllm) × its floor (target ≤ 1.5: $(verdict "$(paired_ratio vllm floor_vllm)" 1.5)) |
| 7w. same, warm | $MED_vllm_warm | | $(paired_ratio vllm_warm vllm) × cold |
| 7f. floor: git archive of six vLLM tags and Dynamo v1.6.1 | $MED_floor_vllm | | 1 |

peak RSS cold: $RSS_cold MB (target ≤ 300: $(verdict "$RSS_cold" 300))
TABLE
if ((${#MATRIX[@]})); then
    R_MATRIX=$(paired_ratio matrix audit_wide)
    R_MATRIX_WARM=$(paired_ratio matrix_warm audit_wide)
    cat <<TABLE
| case | median s | ratio |
|---|---|---|
| 8. matrix: the SGLang recipes of both trees × 17 wide-corpus releases, cold | $MED_matrix | $R_MATRIX × 8a (target ≤ 5: $(verdict "$R_MATRIX" 5)) |
| 8w. same, warm | $MED_matrix_warm | $R_MATRIX_WARM × 8a (target ≤ 1: $(verdict "$R_MATRIX_WARM" 1)) |
| 8a. one audit of the same recipes to v0.5.23, cold | $MED_audit_wide | 1 |
TABLE
fi
if ((${#AUDIT_IX[@]})); then ix_table; fi
if ((${#AUDIT_ATOM[@]})); then atom_table; fi
if ((${#AUDIT_TRTLLM[@]})); then trtllm_table; fi
