#!/usr/bin/env bash
# The wheel as a pip user gets it: build it (scripts/build-wheel.sh), install it
# into a fresh venv, and run `engine-audit demo` through the venv's entry point.
# Exits non-zero, naming what failed, when any step does. Run by .ci/run.
#
# WHEEL_PROFILE defaults to dev here: the check is about the packaging, and the
# dev build is the one `cargo test` just made (a release build takes minutes).
set -euo pipefail
cd "$(dirname "$0")/.."

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
fail() {
  echo "check-wheel: FAILED: $*" >&2
  exit 1
}

start=$(date +%s)
WHEEL_PROFILE="${WHEEL_PROFILE:-dev}" bash scripts/build-wheel.sh "$WORK/wheels"
shopt -s nullglob
wheels=("$WORK"/wheels/engine_audit-*.whl)
[ "${#wheels[@]}" -eq 1 ] || fail "expected one engine_audit wheel in $WORK/wheels, found ${#wheels[@]}"
wheel="${wheels[0]}"
case "$(basename "$wheel")" in
  engine_audit-*-py3-none-manylinux_*.whl) ;;
  *) fail "$(basename "$wheel") is not a py3-none-manylinux wheel (bindings = \"bin\" gives one wheel per platform)" ;;
esac
built=$(date +%s)

python3 -m venv "$WORK/venv"
# --no-index: the wheel alone, nothing from a registry.
"$WORK/venv/bin/pip" install --quiet --disable-pip-version-check --no-index "$wheel"
[ -x "$WORK/venv/bin/engine-audit" ] || fail "the wheel installed no engine-audit entry point in the venv's bin/"

version="$("$WORK/venv/bin/engine-audit" --version)"
cargo_version="$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)"
case "$version" in
  "engine-audit $cargo_version"*) ;;
  *) fail "the installed binary says '$version', Cargo.toml says $cargo_version" ;;
esac

# The demo from outside the source tree: the binary carries its fixtures.
out="$(cd "$WORK" && NO_COLOR=1 "$WORK/venv/bin/engine-audit" demo)" || fail "engine-audit demo exited $?"
summary="$(printf '%s\n' "$out" | grep -E '^[0-9]+ errors?, [0-9]+ warnings?, [0-9]+ info in [0-9]+ deployments? of [0-9]+ recipe files?; .*sglang v1\.0\.0 → v1\.1\.0' || true)"
[ -n "$summary" ] || fail "no demo summary line (N errors, N warnings, N info in N deployments ...; sglang v1.0.0 → v1.1.0) in:
$out"
# The first line by parameter expansion: `printf | head -1` under pipefail
# fails at random when head closes the pipe before printf has written it all.
first_line="${out%%$'\n'*}"
case "$first_line" in
  "engine-audit demo: mini SGLang"*) ;;
  *) fail "the demo's first line is not its banner: $first_line" ;;
esac
done_at=$(date +%s)
echo "check-wheel: ok: $(basename "$wheel") ($version) ran the demo: $summary"
echo "check-wheel: build $((built - start)) s, venv + install + demo $((done_at - built)) s"
