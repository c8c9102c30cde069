#!/usr/bin/env bash
# The action's install step: the prebuilt release binary for this runner,
# checksum-verified; or, when there is none (no release asset for this platform
# or version, or EA_VERSION=source), a build from the action's own source.
#
#   install.sh download   fetch + verify; sets outputs installed=true and bin=PATH,
#                         or installed=false and source-key=KEY (for the build cache)
#   install.sh build      cargo install from EA_ACTION_PATH into EA_BUILD_ROOT
#                         (kept by actions/cache under source-key); sets bin=PATH
#
# Inputs (environment): EA_VERSION (latest | 1.2.3 | v1.2.3 | source),
# EA_REPOSITORY (owner/name of the release; empty for a local `uses: ./`),
# EA_ACTION_PATH, EA_BUILD_ROOT (default ~/.cache/engine-audit-build, the path
# action.yml caches),
# EA_RELEASE_URL (default https://github.com/$EA_REPOSITORY/releases),
# EA_TARGET (default: from uname). Outputs go to $GITHUB_OUTPUT.
set -euo pipefail

mode="${1:-}"
out="${GITHUB_OUTPUT:-/dev/null}"
say() { echo "engine-audit install: $*" >&2; }

target() {
  if [ -n "${EA_TARGET:-}" ]; then echo "$EA_TARGET"; return; fi
  case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) echo x86_64-unknown-linux-gnu ;;
    Linux-aarch64 | Linux-arm64) echo aarch64-unknown-linux-gnu ;;
    *) echo "" ;;
  esac
}

# What identifies the action's source: the build is reused while it is unchanged.
source_key() {
  local src="$1"
  (cd "$src" && find Cargo.toml Cargo.lock build.rs build src fixtures/demo rules docs/codes -type f 2>/dev/null | LC_ALL=C sort | xargs sha256sum) |
    sha256sum | cut -c1-16
}

download() {
  local target version base name dir
  target="$(target)"
  version="${EA_VERSION:-latest}"
  if [ "$version" = source ]; then
    fallback
    return
  fi
  if [ -z "$target" ]; then
    say "no prebuilt binary for $(uname -s) $(uname -m): building from source"
    fallback
    return
  fi
  if [ -z "${EA_RELEASE_URL:-}" ] && [ -z "${EA_REPOSITORY:-}" ]; then
    say "the action is not used from a repository with releases (uses: ./): building from source"
    fallback
    return
  fi
  base="${EA_RELEASE_URL:-https://github.com/$EA_REPOSITORY/releases}"
  name="engine-audit-$target.tar.gz"
  case "$version" in
    latest) base="$base/latest/download" ;;
    v*) base="$base/download/$version" ;;
    *) base="$base/download/v$version" ;;
  esac
  dir="$(mktemp -d)"
  if ! curl -fsSL --retry 3 -o "$dir/$name" "$base/$name" || ! curl -fsSL --retry 3 -o "$dir/$name.sha256" "$base/$name.sha256"; then
    say "no release asset $base/$name: building from source"
    rm -rf "$dir"
    fallback
    return
  fi
  # A checksum that does not match is never worked around: corruption or tampering.
  if ! (cd "$dir" && sha256sum --check --strict --status "$name.sha256"); then
    say "checksum mismatch for $base/$name (expected $(cut -d' ' -f1 "$dir/$name.sha256"), got $(sha256sum "$dir/$name" | cut -d' ' -f1)): refusing to install it"
    exit 1
  fi
  local dest="${EA_INSTALL_DIR:-${RUNNER_TEMP:-/tmp}/engine-audit-bin}"
  mkdir -p "$dest"
  tar -xzf "$dir/$name" -C "$dir"
  install -m 755 "$dir/engine-audit-$target/engine-audit" "$dest/engine-audit"
  rm -rf "$dir"
  say "installed $("$dest/engine-audit" --version) from $base/$name"
  { echo "installed=true"; echo "bin=$dest/engine-audit"; } >> "$out"
}

fallback() {
  local src="${EA_ACTION_PATH:?EA_ACTION_PATH (the action checkout) is not set}"
  { echo "installed=false"; echo "source-key=$(source_key "$src")"; } >> "$out"
}

build() {
  local src="${EA_ACTION_PATH:?EA_ACTION_PATH (the action checkout) is not set}"
  local root="${EA_BUILD_ROOT:-$HOME/.cache/engine-audit-build}"
  if [ -x "$root/bin/engine-audit" ]; then
    say "reusing the cached build $("$root/bin/engine-audit" --version)"
  else
    command -v cargo >/dev/null 2>&1 || { say "no prebuilt binary and no cargo: add dtolnay/rust-toolchain before this action, or set version to a release"; exit 1; }
    cargo install --locked --path "$src" --root "$root"
  fi
  echo "bin=$root/bin/engine-audit" >> "$out"
}

case "$mode" in
  download) download ;;
  build) build ;;
  *) echo "usage: $0 download|build" >&2; exit 2 ;;
esac
