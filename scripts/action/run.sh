#!/usr/bin/env bash
# The action's audit step: `engine-audit pr` once, giving the annotations
# (stdout), the job summary ($GITHUB_STEP_SUMMARY) and the files of EA_FORMATS
# (the SARIF for code scanning by default) from that one run. Exits with the
# audit's exit code: 0 clean, 1 findings at or above EA_FAIL_ON, 2 bad input.
#
# Inputs (environment): EA_BIN (default: engine-audit on PATH), EA_REPO (default .),
# EA_BASE, EA_HEAD (commits of the recipes repo), EA_SGLANG, EA_DYNAMO, EA_VLLM,
# EA_TO, EA_VLLM_TO, EA_DYNAMO_TO, EA_FAIL_ON, EA_FORMATS (default sarif,markdown,json),
# EA_OUTPUT_DIR (default $RUNNER_TEMP/engine-audit), EA_ARGS (more `pr` flags,
# split on blanks). Outputs (to $GITHUB_OUTPUT): exit-code, report-dir, sarif.
set -uo pipefail

out="${GITHUB_OUTPUT:-/dev/null}"
fail() {
  echo "::error title=engine-audit::$*"
  echo "engine-audit action: $*" >&2
  echo "exit-code=2" >> "$out"
  exit 2
}

bin="${EA_BIN:-engine-audit}"
command -v "$bin" >/dev/null 2>&1 || fail "no engine-audit binary ($bin): the install step did not run or failed"
[ -n "${EA_BASE:-}" ] || fail "no base commit: set the action's base input (on pull_request it defaults to the PR's base sha)"
[ -n "${EA_HEAD:-}" ] || fail "no head commit: set the action's head input (on pull_request it defaults to the PR's head sha)"
dir="${EA_OUTPUT_DIR:-${RUNNER_TEMP:-/tmp}/engine-audit}"
formats="${EA_FORMATS:-sarif,markdown,json}"

args=(pr --repo "${EA_REPO:-.}" --base "$EA_BASE" --head "$EA_HEAD" --format "$formats" --output-dir "$dir")
[ -n "${EA_SGLANG:-}" ] && args+=(--sglang "$EA_SGLANG")
[ -n "${EA_DYNAMO:-}" ] && args+=(--dynamo "$EA_DYNAMO")
[ -n "${EA_VLLM:-}" ] && args+=(--vllm "$EA_VLLM")
[ -n "${EA_TO:-}" ] && args+=(--to "$EA_TO")
[ -n "${EA_VLLM_TO:-}" ] && args+=(--vllm-to "$EA_VLLM_TO")
[ -n "${EA_DYNAMO_TO:-}" ] && args+=(--dynamo-to "$EA_DYNAMO_TO")
[ -n "${EA_FAIL_ON:-}" ] && args+=(--fail-on "$EA_FAIL_ON")
if [ -n "${EA_ARGS:-}" ]; then
  read -r -a extra <<< "$EA_ARGS"
  args+=("${extra[@]}")
fi

"$bin" "${args[@]}"
code=$?
{
  echo "exit-code=$code"
  echo "report-dir=$dir"
  if [ -f "$dir/report.sarif" ]; then echo "sarif=$dir/report.sarif"; else echo "sarif="; fi
} >> "$out"
exit "$code"
