#!/usr/bin/env bash
# Pack one release binary as the release workflow uploads it and the action's
# install.sh expects it:
#
#   scripts/release/package.sh TARGET BINARY OUT_DIR
#
# writes OUT_DIR/engine-audit-TARGET.tar.gz (engine-audit-TARGET/engine-audit,
# README.md, CHANGELOG.md) and OUT_DIR/engine-audit-TARGET.tar.gz.sha256
# (`sha256sum` format). Asset names carry no version, so
# releases/latest/download/<name> always names the newest.
set -euo pipefail

if [ "$#" -ne 3 ]; then
  echo "usage: $0 TARGET BINARY OUT_DIR (e.g. x86_64-unknown-linux-gnu target/release/engine-audit dist)" >&2
  exit 2
fi
target="$1"
binary="$2"
out="$3"
root="$(cd "$(dirname "$0")/../.." && pwd)"
[ -x "$binary" ] || { echo "package: $binary is not an executable file: build it first (cargo build --release)" >&2; exit 2; }

name="engine-audit-$target"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/$name" "$out"
cp "$binary" "$stage/$name/engine-audit"
cp "$root/README.md" "$root/CHANGELOG.md" "$stage/$name/"
# Sorted names, fixed owner and mtime: the same binary packs to the same bytes.
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime='@0' -C "$stage" -cf - "$name" | gzip -n > "$out/$name.tar.gz"
(cd "$out" && sha256sum "$name.tar.gz" > "$name.tar.gz.sha256")
echo "$out/$name.tar.gz"
