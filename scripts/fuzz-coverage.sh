#!/usr/bin/env bash
# How much of OUR code (src/) a fuzz corpus covers, and when it got there:
# the corpus entries are bucketed by age (file mtime), and the coverage of
# everything older than each cutoff is printed. A plateau shows as cutoffs that
# add no regions of src/ while the fuzzer's own counters (which also count
# libyaml, regex and tree-sitter internals) still creep up.
#
#   scripts/fuzz-coverage.sh TARGET 'CUTOFF' ['CUTOFF' ...]     (date(1) syntax)
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
prev=""
i=0
for cut in "$@"; do
  i=$((i + 1))
  d=$W/b$i
  mkdir -p "$d"
  touch -d "$cut" "$W/cut$i"
  # Hard links (same file system): no copy of a corpus of 100k entries. A file
  # the running fuzzer deletes meanwhile is skipped.
  if [ -z "$prev" ]; then
    find "$C" -type f ! -newer "$W/cut$i" -print0 2>/dev/null | xargs -0 -r ln -t "$d" 2>/dev/null || true
  else
    find "$C" -type f -newer "$prev" ! -newer "$W/cut$i" -print0 2>/dev/null | xargs -0 -r ln -t "$d" 2>/dev/null || true
  fi
  n=$(find "$d" -type f | wc -l)
  LLVM_PROFILE_FILE="$W/b$i-%p.profraw" "$BIN" -runs=0 -timeout=60 -rss_limit_mb=4096 "$d" >"$W/b$i.log" 2>&1 ||
    echo "fuzz-coverage: bucket $i exited $? (see the input named in $W/b$i.log)" >&2
  "$TOOLS/llvm-profdata" merge -sparse "$W"/b*-*.profraw -o "$W/upto$i.profdata"
  "$TOOLS/llvm-cov" report "$BIN" -instr-profile="$W/upto$i.profdata" "$ROOT/src" 2>/dev/null |
    awk -v cut="$cut" -v n="$n" '$1 == "TOTAL" { printf "up to %s (+%d entries): src/ regions %d, missed %d; lines %d, missed %d\n", cut, n, $2, $3, $8, $9 }'
  if [ -n "${EA_COV_FILES:-}" ]; then
    "$TOOLS/llvm-cov" report "$BIN" -instr-profile="$W/upto$i.profdata" "$ROOT/src" 2>/dev/null |
      awk 'NF > 9 && $1 != "TOTAL" && $3 < $2 { printf "    %-34s regions %5d missed %5d\n", $1, $2, $3 }'
  fi
  rm -rf "$d"
  prev=$W/cut$i
done
