#!/usr/bin/env bash
# How much of OUR code (src/) a fuzz corpus covers, and when it got there:
# the corpus entries are bucketed by age (file mtime), and the coverage of
# everything older than each cutoff is printed. A plateau shows as cutoffs that
# add no regions of src/ while the fuzzer's own counters (which also count
# libyaml, regex and tree-sitter internals) still creep up.
#
#   scripts/fuzz-coverage.sh TARGET 'CUTOFF' ['CUTOFF' ...]     (date(1) syntax)
#
# EA_COV_FILES=1 adds a per-file table; EA_COV_KEEP=FILE keeps the last cutoff's
# profile, for `llvm-cov show BIN -instr-profile=FILE src/...` (what is unreached).
#
# Needs nightly with llvm-tools (`rustup component add llvm-tools --toolchain nightly`).
# Inputs the fuzzer replaced were deleted, so a late bucket may hold a smaller
# copy of an early finding: growth is over-, never under-stated.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
T=${1:?target}; shift
HOST=$(rustc -vV | sed -n 's/^host: //p')
TOOLS=$(rustc +nightly --print sysroot)/lib/rustlib/$HOST/bin
[ -x "$TOOLS/llvm-cov" ] || { echo "fuzz-coverage: needs llvm-tools for nightly (rustup component add llvm-tools --toolchain nightly)" >&2; exit 2; }
unset CARGO_TARGET_DIR
EMPTY=$(mktemp -d)  # a one-input corpus for the build
W=$(mktemp -d)
trap 'rm -rf "$EMPTY" "$W"' EXIT
# Builds the coverage-instrumented binary (and runs it on one byte: cargo fuzz
# refuses an empty corpus).
printf x >"$EMPTY/x"
cargo +nightly fuzz coverage "$T" "$EMPTY" >"$W/build.log" 2>&1 || { cat "$W/build.log" >&2; exit 2; }
BIN=$ROOT/target/$HOST/coverage/$HOST/release/$T
C=$ROOT/fuzz/corpus/$T
# Snapshot every bucket first (hard links, same file system: no copy of a
# corpus of 100k entries; a file the running fuzzer deletes meanwhile is
# skipped), so all buckets see one consistent corpus.
N=$#
prev=""
i=0
for cut in "$@"; do
  i=$((i + 1))
  mkdir -p "$W/b$i"
  touch -d "$cut" "$W/cut$i"
  if [ -z "$prev" ]; then
    find "$C" -type f ! -newer "$W/cut$i" -print0 2>/dev/null | xargs -0 -r ln -t "$W/b$i" 2>/dev/null || true
  else
    find "$C" -type f -newer "$prev" ! -newer "$W/cut$i" -print0 2>/dev/null | xargs -0 -r ln -t "$W/b$i" 2>/dev/null || true
  fi
  prev=$W/cut$i
done
# The buckets are independent runs (the report merges them cumulatively), so
# they run side by side: the instrumented binary does a few inputs a second, and
# one bucket at a time left all but one core idle.
run_bucket() {
  LLVM_PROFILE_FILE="$W/b$1-%p.profraw" "$BIN" -runs=0 -timeout=60 -rss_limit_mb=4096 "$W/b$1" >"$W/b$1.log" 2>&1 ||
    echo "fuzz-coverage: bucket $1 exited $? (see the input named in $W/b$1.log)" >&2
}
export -f run_bucket
export BIN W
seq 1 "$N" | xargs -P "${EA_COV_JOBS:-$(nproc)}" -I{} bash -c 'run_bucket {}'
shopt -s nullglob
i=0
for cut in "$@"; do
  i=$((i + 1))
  n=$(find "$W/b$i" -type f | wc -l)
  # Cumulative: the previous cutoff's profile plus this bucket's runs.
  files=("$W"/b"$i"-*.profraw)
  [ "$i" -gt 1 ] && files+=("$W/upto$((i - 1)).profdata")
  "$TOOLS/llvm-profdata" merge -sparse "${files[@]}" -o "$W/upto$i.profdata"
  "$TOOLS/llvm-cov" report "$BIN" -instr-profile="$W/upto$i.profdata" "$ROOT/src" 2>/dev/null >"$W/report$i"
  awk -v cut="$cut" -v n="$n" '$1 == "TOTAL" { printf "up to %s (+%d entries): src/ regions %d, missed %d; lines %d, missed %d\n", cut, n, $2, $3, $8, $9 }' "$W/report$i"
  if [ -n "${EA_COV_FILES:-}" ]; then
    awk 'NF > 9 && $1 != "TOTAL" && $3 < $2 { printf "    %-34s regions %5d missed %5d\n", $1, $2, $3 }' "$W/report$i"
  fi
done
if [ -n "${EA_COV_KEEP:-}" ]; then
  cp "$W/upto$N.profdata" "$EA_COV_KEEP"
  echo "profile: $EA_COV_KEEP (binary: $BIN)"
fi
