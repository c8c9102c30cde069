#!/usr/bin/env bash
# Build the Python wheel (pyproject.toml: maturin, bindings = "bin").
#
#   scripts/build-wheel.sh [OUT_DIR] [maturin build options...]
#
# OUT_DIR defaults to target/wheels. The profile is release unless
# WHEEL_PROFILE names another (the wheel check uses dev to reuse `cargo test`'s
# build). maturin is taken from $MATURIN, else from PATH, else installed from PyPI
# into a venv kept under the cache folder, so a fresh machine needs python3 only.
set -euo pipefail
cd "$(dirname "$0")/.."

OUT="${1:-target/wheels}"
shift || true
PROFILE="${WHEEL_PROFILE:-release}"

maturin_bin() {
  if [ -n "${MATURIN:-}" ]; then
    echo "$MATURIN"
  elif command -v maturin >/dev/null 2>&1; then
    command -v maturin
  else
    local venv="${ENGINE_AUDIT_TOOLS_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/engine-audit/tools-venv}"
    if [ ! -x "$venv/bin/maturin" ]; then
      if ! command -v python3 >/dev/null 2>&1; then
        echo "build-wheel: neither maturin nor python3 is on PATH: install python3 (3.8+) or set MATURIN=/path/to/maturin" >&2
        exit 2
      fi
      echo "build-wheel: installing maturin into $venv" >&2
      python3 -m venv "$venv" >&2
      "$venv/bin/pip" install --quiet --disable-pip-version-check "maturin>=1.5,<2" >&2
    fi
    echo "$venv/bin/maturin"
  fi
}

MATURIN_BIN="$(maturin_bin)"
"$MATURIN_BIN" build --profile "$PROFILE" --out "$OUT" "$@"
