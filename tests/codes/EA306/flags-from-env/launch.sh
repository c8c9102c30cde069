#!/usr/bin/env bash
# Flags handed in by the job: nobody can audit them.
EXTRA=""
if [[ "$DP_ATTENTION" == "true" ]]; then
    EXTRA="$DP_FLAGS"
fi
python3 -m sglang.launch_server --model-path /models/m $EXTRA_ARGS --tp-size 8 $EXTRA
