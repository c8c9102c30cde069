#!/usr/bin/env bash
# Run the cargo-fuzz targets, one at a time, on one core.
#
#   scripts/fuzz.sh [TARGET|all] [SECONDS]     (default: all, 180 s each)
#
# Seeds are copied at run time into fuzz/corpus/TARGET (git-ignored) from the
# project's fixtures and, when present, real recipes (/work/shared/recipes or
# $EA_SEED_RECIPES) and engine source ($EA_SEED_SRC, default /tmp/src). Upstream
# files are never committed. Tokens from fuzz/dicts are passed as -dict. Crashes
# land in fuzz/artifacts/TARGET. Whether a target has plateaued on our own code:
# scripts/fuzz-coverage.sh.
#
# libFuzzer needs nightly: `+nightly` is used when installed, else RUSTC_BOOTSTRAP=1.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
TARGETS=(recipe_yaml recipe_shell python_extract python_shapes versions rule cache_entry)
WANT=${1:-all}
SECS=${2:-180}
RECIPES=${EA_SEED_RECIPES:-/work/shared/recipes}
SRC=${EA_SEED_SRC:-/tmp/src}

# A parse gives up after this long (src/bounded_parse.rs): pathological inputs
# (tree-sitter's quadratic recovery) stay well under libFuzzer's -timeout even
# with one input in several files; a real hang is still found.
export ENGINE_AUDIT_PARSE_DEADLINE_MS=${ENGINE_AUDIT_PARSE_DEADLINE_MS:-500}

# cargo fuzz builds in fuzz/target, never in a shared CARGO_TARGET_DIR.
unset CARGO_TARGET_DIR
if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
  FUZZ=(cargo +nightly fuzz)
else
  export RUSTC_BOOTSTRAP=1
  FUZZ=(cargo fuzz)
fi

seed() { # seed TARGET FILES... : copy files into the corpus; a larger one (the
  # 320 KB master config) is seeded by its first 60 KiB, cut at a line end.
  local dir=$ROOT/fuzz/corpus/$1; shift
  mkdir -p "$dir"
  for f in "$@"; do
    [ -f "$f" ] || continue
    local out
    out="$dir/seed-$(sha1sum "$f" | cut -c1-16)"
    if [ "$(stat -c %s "$f")" -le 65536 ]; then
      cp "$f" "$out"
    else
      head -c 61440 "$f" | sed '$d' > "$out"
    fi
  done
}

# seed_nesting TARGET NAME COUNT UNIT REST: an input the targets expand
# (fuzz_targets/nesting.rs) into UNIT × COUNT, REST, and the closers.
seed_nesting() {
  local dir=$ROOT/fuzz/corpus/$1; mkdir -p "$dir"
  local lo=$(( $3 & 255 )) hi=$(( $3 >> 8 )) len=$(( ${#4} - 1 ))
  printf "\\xfe\\x$(printf %02x $lo)\\x$(printf %02x $hi)\\x$(printf %02x $len)%s%s" "$4" "$5" > "$dir/seed-nesting-$2"
}

seed_target() {
  case $1 in
    recipe_yaml)
      mapfile -t f < <(find fixtures "$RECIPES" -name '*.yaml' -o -name '*.yml' 2>/dev/null | grep -v fixtures/rules)
      seed recipe_yaml "${f[@]}"
      seed_nesting recipe_yaml compact 5000 '- ' 'x'
      seed_nesting recipe_yaml flow 3000 '[' '1'
      seed_nesting recipe_yaml flowmap 3000 '{a: ' '1';;
    recipe_shell)
      mapfile -t f < <(find fixtures "$RECIPES" -name '*.sh' 2>/dev/null)
      seed recipe_shell "${f[@]}"
      seed_nesting recipe_shell subst 10000 '$(' 'python3 -m sglang.launch_server --tp 2'
      seed_nesting recipe_shell arith 5000 '((' '1'
      seed_nesting recipe_shell braces 3000 '{ ' 'echo';;
    python_extract)
      # Small modules only: every input is parsed five times under ASan, and
      # 64 KB seeds ran at 6 exec/s; 8 KB keeps it in the hundreds.
      mapfile -t f < <(find fixtures -name '*.py' -size -8k; [ -d "$SRC" ] && find "$SRC" -name '*.py' -size -8k | sort | awk 'NR % 10 == 0')
      seed python_extract "${f[@]}"
      seed_nesting python_extract sum 5000 '1+' '1'
      seed_nesting python_extract parens 3000 '(' 'x'
      seed_nesting python_extract calls 2000 'f(' ''
      # The target puts one file everywhere, and the dataclass registrar style
      # spans four modules (registrar, actions, choices, record): without this
      # one-module join of that fixture the fuzzer reached 14 of dataclass.rs's
      # 917 regions. Docstrings, comments and blank lines go to fit in -max_len
      # (libFuzzer would cut the tail, the record's add_cli_args, silently).
      local d=fixtures/flags/dataclass_style/python/minisrv/srt
      local joined=$ROOT/fuzz/corpus/python_extract/seed-dataclass-one-module
      cat "$d/arg_groups/arg_utils.py" "$d/arg_groups/actions.py" "$d/choices.py" "$d/server_args.py" |
        sed -E '/^\s*""".*"""$/d; /^\s*"""/,/"""$/d' | grep -v -E '^from minisrv|^\s*$|^\s*#' > "$joined"
      if [ "$(stat -c %s "$joined")" -gt "$(max_len python_extract)" ]; then
        echo "fuzz.sh: $joined is over $(max_len python_extract) bytes; trim $d" >&2
      fi;;
    python_shapes)
      # No seeds: its inputs are choices, and the real code it builds on (a
      # registrar, action classes, env registries) is compiled in from fixtures.
      mkdir -p "$ROOT/fuzz/corpus/python_shapes";;
    versions)
      local dir=$ROOT/fuzz/corpus/versions; mkdir -p "$dir"
      local i=0
      for s in lmsysorg/sglang:v0.5.19-cu130 lmsysorg/sglang:v0.5.12.post1 \
               lmsysorg/sglang:nightly-dev-cu13-20260608-303757cc registry:5000/a/b:1.0@sha256:ab \
               1.3.0.dev20260720 ai_dynamo-1.3.0.dev20260720-py3-none-any.whl 5b4bc1dd v1.5.0 0.5.19rc1; do
        printf '%s' "$s" > "$dir/seed-$i"; i=$((i+1))
      done;;
    rule)
      mapfile -t f < <(find rules fixtures/rules -name '*.yaml' 2>/dev/null)
      seed rule "${f[@]}";;
    cache_entry)
      # Listings as a warm run stored them (the body after the header line).
      local dir=$ROOT/fuzz/corpus/cache_entry; mkdir -p "$dir"
      for f in $(grep -l '"kind":"tree-listing"' -r "${ENGINE_AUDIT_CACHE_DIR:-$HOME/.cache/engine-audit/facts}" 2>/dev/null | head -3); do
        tail -n +3 "$f" | head -c 4096 > "$dir/seed-$(basename "$f" | cut -c1-16)"
      done;;
  esac
}

# libFuzzer takes one -dict: the target's own tokens (fuzz/dicts/TARGET.dict),
# plus the YAML syntax for the targets that read YAML.
dict_for() {
  local out=$ROOT/fuzz/artifacts/$1/dict
  case $1 in recipe_yaml|rule) cat "$ROOT/fuzz/dicts/yaml.dict" > "$out";; *) : > "$out";; esac
  if [ -f "$ROOT/fuzz/dicts/$1.dict" ]; then cat "$ROOT/fuzz/dicts/$1.dict" >> "$out"; fi
  [ -s "$out" ] && echo "-dict=$out"
}

max_len() {
  case $1 in python_extract|cache_entry) echo 8192;; python_shapes) echo 2048;; recipe_yaml|recipe_shell|rule) echo 65536;; *) echo 256;; esac
}

# python_shapes reads its bytes as choices, not text: a short input is a short
# module, so the length limit is not ramped up (the budget of 60 statements
# bounds the module; 2 KB of choices is enough for it).
len_control() {
  case $1 in python_shapes) echo "-len_control=0";; esac
}

# Build every target once (release + debug assertions), then run the binaries
# directly so a run never waits on a rebuild. The address sanitizer is on by
# default (tree-sitter and libyaml are C); the long plateau runs used
# EA_FUZZ_SANITIZER=none, faster, where a Rust panic is what we look for.
if [ -z "${EA_FUZZ_NO_BUILD:-}" ]; then "${FUZZ[@]}" build -O -s "${EA_FUZZ_SANITIZER:-address}"; fi
BIN=$ROOT/fuzz/target/$(rustc -vV | sed -n 's/^host: //p')/release

for t in "${TARGETS[@]}"; do
  [ "$WANT" = all ] || [ "$WANT" = "$t" ] || continue
  seed_target "$t"
  mkdir -p "fuzz/artifacts/$t"
  echo "== $t: ${SECS}s"
  # -rss_limit_mb: a blow-up (alias bombs, runaway folding) is a finding, not a hang.
  mapfile -t dict < <(dict_for "$t" || true)
  mapfile -t len < <(len_control "$t")
  "$BIN/$t" "fuzz/corpus/$t" "${dict[@]}" "${len[@]}" \
    -max_total_time="$SECS" -max_len="$(max_len "$t")" -timeout=20 -rss_limit_mb=2048 \
    -artifact_prefix="fuzz/artifacts/$t/" -print_final_stats=1 2>&1 | tee "fuzz/artifacts/$t/last-run.log" | grep -E '^#[0-9]+ +(INITED|DONE|pulse)|^stat::|SUMMARY|ERROR|panicked|deadly' || true
done
