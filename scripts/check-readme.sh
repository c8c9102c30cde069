#!/usr/bin/env bash
# The README's install lines as a newcomer runs them, on a clean clone of HEAD.
#
# Each shell block of README.md after a `<!-- readme-check: run -->` marker is
# run as written, in README order, from the clone's root (the checkout itself
# when it is clean, else a clone of HEAD in a temp folder); a YAML block after
# `<!-- readme-check: file NAME -->` is written as NAME and used as that file
# (the local pre-commit config: run by pre-commit over the demo's recipes).
# Blocks marked `network (...)` (release downloads, the published wheel, remote
# engine URLs) and `skip (...)` are listed, not run. Run by .ci/run after the
# release build of the speed gate, which the installs reuse.
#
# Nothing is installed outside a temp folder: HOME, the cargo install root and
# the venv are in it; CARGO_HOME, RUSTUP_HOME and the cargo target folder are
# the caller's (registry cache and builds reused, nothing installed there), and
# a checkout the blocks ran in must hold no new file afterwards.
# CHECK_README_TARGET_DIR names the target folder (default ./target).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
fail() {
  echo "check-readme: FAILED: $*" >&2
  exit 1
}
start=$(date +%s)

# What a newcomer gets: the committed tree. A checkout with no change and no
# untracked file is that already (CI's fresh clone is): the blocks run in it,
# and the release build .ci/run just made there is reused. Otherwise (or with
# CHECK_README_CLONE=1) they run in a clone of HEAD in the temp folder, which
# compiles the release build again (build.rs embeds absolute paths).
if [ -z "$(git status --porcelain)" ] && [ -z "${CHECK_README_CLONE:-}" ]; then
  CLONE="$ROOT"
  echo "check-readme: the checkout is a clean clone of $(git rev-parse --short HEAD): the blocks run in it"
else
  git clone --quiet --no-hardlinks -c core.hooksPath=/dev/null "$ROOT" "$WORK/clone"
  git -C "$WORK/clone" -c advice.detachedHead=false checkout --quiet --detach "$(git rev-parse HEAD)"
  CLONE="$WORK/clone"
  echo "check-readme: the checkout has changes: the blocks run in a clone of HEAD ($(git rev-parse --short HEAD)) in $CLONE"
fi

# Split the README into numbered blocks: <n>.kind (run|file|network|skip),
# <n>.arg (the file name or the reason) and <n>.body (the block's text,
# indented blocks unindented, fences dropped).
mkdir -p "$WORK/blocks"
awk -v dir="$WORK/blocks" '
  BEGIN { n = 0 }
  function finish() { if (state != "") { close(body); n++ } state = "" }
  /^<!-- readme-check: [a-z]+( .*)? -->$/ {
    finish()
    line = $0; sub(/^<!-- readme-check: /, "", line); sub(/ -->$/, "", line)
    kind = line; sub(/ .*/, "", kind)
    arg = ""; if (index(line, " ")) { arg = substr(line, index(line, " ") + 1) }
    if (kind !~ /^(run|file|network|skip)$/) { print "README.md:" NR ": unknown readme-check kind " kind > "/dev/stderr"; bad = 1 }
    printf "%s", kind > (dir "/" n ".kind"); close(dir "/" n ".kind")
    printf "%s", arg > (dir "/" n ".arg"); close(dir "/" n ".arg")
    printf "%d", NR > (dir "/" n ".line"); close(dir "/" n ".line")
    body = dir "/" n ".body"; printf "" > body
    state = "before"; next
  }
  state == "before" && /^$/ { next }
  state == "before" && /^```/ { state = "fence"; next }
  state == "before" && /^    / { state = "indent" }
  state == "before" { print "README.md:" NR ": a readme-check marker is not followed by a code block" > "/dev/stderr"; bad = 1; state = ""; next }
  state == "fence" && /^```/ { finish(); next }
  state == "fence" { print > body; next }
  state == "indent" && (/^    / || /^$/) { l = $0; sub(/^    /, "", l); print l > body; next }
  state == "indent" { finish() }
  END { finish(); exit bad }
' "$CLONE/README.md" || fail "README.md's readme-check markers (above)"
blocks=$(find "$WORK/blocks" -name '*.kind' | wc -l)
[ "$blocks" -gt 0 ] || fail "no readme-check markers in README.md"

# The environment a newcomer's shell has, with every install target in $WORK.
export CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}" RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}"
export CARGO_TARGET_DIR="${CHECK_README_TARGET_DIR:-$ROOT/target}"
export CARGO_INSTALL_ROOT="$WORK/cargo-root"
export HOME="$WORK/home" XDG_CACHE_HOME="$WORK/home/.cache" PIP_DISABLE_PIP_VERSION_CHECK=1 NO_COLOR=1
mkdir -p "$HOME"
python3 -m venv "$WORK/venv"
export VIRTUAL_ENV="$WORK/venv"
export PATH="$CARGO_INSTALL_ROOT/bin:$VIRTUAL_ENV/bin:$PATH"
cargo_version="$(sed -n 's/^version = "\(.*\)"$/\1/p' "$CLONE/Cargo.toml" | head -1)"

ran=0
declare -A files=()
for ((i = 0; i < blocks; i++)); do
  kind=$(cat "$WORK/blocks/$i.kind")
  arg=$(cat "$WORK/blocks/$i.arg")
  at="README.md:$(cat "$WORK/blocks/$i.line")"
  first=$(grep -m1 -v '^\s*\(#.*\)\?$' "$WORK/blocks/$i.body" || true)
  case "$kind" in
    network | skip)
      echo "check-readme: $at: not run ($kind${arg:+: $arg}): $first"
      continue
      ;;
    file)
      [ -n "$arg" ] || fail "$at: a file block names no file"
      files[$arg]="$WORK/blocks/$i.body"
      echo "check-readme: $at: kept as $arg"
      continue
      ;;
  esac
  t0=$(date +%s)
  log="$WORK/blocks/$i.log"
  (cd "$CLONE" && bash -euo pipefail "$WORK/blocks/$i.body") >"$log" 2>&1 || {
    tail -n 30 "$log" >&2
    fail "$at: exited $?: $first"
  }
  echo "check-readme: $at: ok in $(($(date +%s) - t0)) s: $first"
  ran=$((ran + 1))
  # What each install line promises, checked where it put it.
  case "$first" in
    "cargo install"*)
      "$CARGO_INSTALL_ROOT/bin/engine-audit" --version | grep -q "^engine-audit $cargo_version" ||
        fail "$at: $CARGO_INSTALL_ROOT/bin/engine-audit is not engine-audit $cargo_version"
      ;;
    "pip install"*)
      "$VIRTUAL_ENV/bin/engine-audit" --version | grep -q "^engine-audit $cargo_version" ||
        fail "$at: the venv's engine-audit is not engine-audit $cargo_version"
      ;;
    *" demo"*)
      grep -Eq '^[0-9]+ errors?, [0-9]+ warnings?, [0-9]+ info in [0-9]+ deployments? ' "$log" ||
        fail "$at: no demo summary line in its output"
      ;;
  esac
done
for needed in "cargo install" "pip install ." "demo"; do
  grep -l -F -- "$needed" $(grep -l '^run$' "$WORK"/blocks/*.kind | sed 's/\.kind$/.body/') >/dev/null ||
    fail "no runnable README block runs \`$needed\`"
done

# The local pre-commit config, run by pre-commit itself (from PyPI, into the
# throwaway venv) over the demo's recipes, with the demo's mini engines.
config="${files[.pre-commit-config.yaml]:-}"
[ -n "$config" ] || fail "no README block is kept as .pre-commit-config.yaml"
grep -q 'repo: local' "$config" || fail "the README's runnable pre-commit config has no \`repo: local\`"
t0=$(date +%s)
pip install --quiet pre-commit >"$WORK/pre-commit-install.log" 2>&1 || {
  cat "$WORK/pre-commit-install.log" >&2
  fail "pip install pre-commit (into $VIRTUAL_ENV)"
}
engine-audit demo --keep "$WORK/demo" >/dev/null
recipes="$WORK/demo/recipes"
printf 'sglang: %s\nvllm: %s\ndynamo: %s\n' "$WORK/demo/sglang.git" "$WORK/demo/vllm.git" "$WORK/demo/dynamo.git" >"$recipes/.engine-audit.yaml"
cp "$config" "$recipes/.pre-commit-config.yaml"
git -C "$recipes" init --quiet
git -C "$recipes" -c core.hooksPath=/dev/null add -A
set +e
(cd "$recipes" && PRE_COMMIT_HOME="$WORK/pre-commit-home" pre-commit run --all-files) >"$WORK/pre-commit.log" 2>&1
status=$?
set -e
# The demo's recipes hold findings against their own images' releases: the
# hook must have run over them and failed the commit (exit 1), not errored.
grep -q '^engine-audit\.*Failed$' "$WORK/pre-commit.log" && grep -q -- '- exit code: 1$' "$WORK/pre-commit.log" && [ "$status" -eq 1 ] || {
  cat "$WORK/pre-commit.log" >&2
  fail "pre-commit with the README's local hook over the demo recipes: exit $status, expected the hook to fail the commit with engine-audit's exit 1"
}
echo "check-readme: the README's .pre-commit-config.yaml: pre-commit ran engine-audit over the demo recipes, which failed the commit (exit 1) in $(($(date +%s) - t0)) s"

# What the blocks leave in the checkout: build output only (ignored files).
left="$(git -C "$CLONE" status --porcelain)"
[ -z "$left" ] || fail "the README blocks left files in the checkout:
$left"

echo "check-readme: ok: $ran README blocks run, 1 pre-commit config used, in $(($(date +%s) - start)) s"
