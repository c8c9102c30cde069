#!/usr/bin/env bash
# One launch, four paths: a flag on every path is reported once, without a
# condition; a flag on some paths only names the test it depends on.
ARGS=(--model-path /models/m --tp-size 8)
if [[ "$DP_ATTENTION" == "true" ]]; then
    ARGS+=(--enable-metrcs)
fi
case "$MODE" in
    fast) ARGS+=(--bogus-speed 2) ;;
    *) ;;
esac
python3 -m sglang.launch_server "${ARGS[@]}" --unknown-everywhere
