#!/usr/bin/env bash
# The key of the engine clone cache: it changes when an engine repository gets a
# new tag (or a tag moves), so a run that fetched it saves a new cache entry,
# and stays the same otherwise, so runs reuse one entry.
#
# Engine sources: EA_SGLANG / EA_VLLM / EA_DYNAMO, else the top-level `sglang:` /
# `vllm:` / `dynamo:` of EA_REPO's .engine-audit.yaml. Only URLs are cached clones; local paths have
# no cache. Outputs (to $GITHUB_OUTPUT): key (empty when no source is a URL),
# restore-prefix, path.
set -euo pipefail

out="${GITHUB_OUTPUT:-/dev/null}"
repo="${EA_REPO:-.}"
config="$repo/.engine-audit.yaml"

# A top-level scalar of the config (`sglang: https://...  # comment`), unquoted.
from_config() {
  [ -f "$config" ] || return 0
  sed -n "s/^$1:[[:space:]]*//p" "$config" | head -1 | sed 's/[[:space:]]#.*$//; s/[[:space:]]*$//; s/^["'\'']//; s/["'\'']$//'
}

sources=()
for given in "sglang=${EA_SGLANG:-}" "vllm=${EA_VLLM:-}" "dynamo=${EA_DYNAMO:-}"; do
  engine="${given%%=*}"
  spec="${given#*=}"
  [ -n "$spec" ] || spec="$(from_config "$engine")"
  case "$spec" in
    http://* | https://* | file://*) sources+=("$engine=$spec") ;;
  esac
done

prefix="engine-audit-repos-${RUNNER_OS:-$(uname -s)}-"
path="${XDG_CACHE_HOME:-$HOME/.cache}/engine-audit"
if [ "${#sources[@]}" -eq 0 ]; then
  echo "engine-audit cache: no engine source is a URL: no clone cache" >&2
  { echo "key="; echo "restore-prefix=$prefix"; echo "path=$path"; } >> "$out"
  exit 0
fi

listing=""
for source in "${sources[@]}"; do
  url="${source#*=}"
  # Tags only, sorted: the same set of tags gives the same key on any mirror.
  if tags="$(git ls-remote --tags --refs "$url" | LC_ALL=C sort)"; then
    listing+="$source"$'\n'"$tags"$'\n'
  else
    # Unreachable now: a key of its own per day, restoring the newest entry.
    echo "engine-audit cache: cannot list the tags of $url" >&2
    listing+="$source unreachable $(date -u +%F)"$'\n'
  fi
done
key="$prefix$(printf '%s' "$listing" | sha256sum | cut -c1-16)"
echo "engine-audit cache: $key" >&2
{ echo "key=$key"; echo "restore-prefix=$prefix"; echo "path=$path"; } >> "$out"
