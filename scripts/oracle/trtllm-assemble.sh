#!/usr/bin/env bash
# Assemble a small TensorRT-LLM git repo from files downloaded one by one
# (the upstream repository is too large to clone here; see docs/trtllm.md).
#
#   scripts/oracle/trtllm-assemble.sh OUT.git DIR/<name-1> [DIR/<name-2> ...]
#
# Each DIR/<name> folder holds one version's files at their repository paths
# (tensorrt_llm/commands/serve.py, tensorrt_llm/llmapi/llm_args.py,
# tensorrt_llm/version.py, tests/unittest/api_stability/references/*.yaml, ...)
# and, optionally, a SOURCE file saying which upstream commit each file was
# read at. The folders become one commit each, in the order given, tagged by
# the folder's name (`v1.3.0rc18`, or what bounds it: `v1.3.0rc24+main.<sha>`).
# Package `__init__.py` files missing from a folder are added empty, so the
# modules resolve as in the upstream tree. Nothing here is upstream text.
set -euo pipefail

if [ "$#" -lt 2 ]; then
    echo "usage: $0 OUT.git VERSION_DIR [VERSION_DIR ...]" >&2
    exit 2
fi
out=$1
shift
if [ -e "$out" ]; then
    echo "$out exists: remove it first (the repo is rebuilt from the folders)" >&2
    exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git init -q "$work"
git -C "$work" config user.name "trtllm-assemble"
git -C "$work" config user.email "trtllm-assemble@localhost"
git -C "$work" config commit.gpgsign false

for dir in "$@"; do
    name=$(basename "$dir")
    if [ ! -d "$dir/tensorrt_llm" ]; then
        echo "$dir: no tensorrt_llm/ folder" >&2
        exit 1
    fi
    # Each commit is exactly this version's files.
    git -C "$work" rm -rq --ignore-unmatch . >/dev/null
    cp -R "$dir"/. "$work"/
    # Every folder below tensorrt_llm/ is a package upstream.
    find "$work/tensorrt_llm" -type d | while read -r pkg; do
        [ -e "$pkg/__init__.py" ] || : >"$pkg/__init__.py"
    done
    git -C "$work" add -A
    git -C "$work" -c core.hooksPath=/dev/null commit -qm "$name (assembled from files read one by one; see SOURCE)" --allow-empty
    git -C "$work" tag "$name"
done

git clone -q --bare "$work" "$out"
echo "assembled $out: $(git -C "$out" tag | tr '\n' ' ')"
