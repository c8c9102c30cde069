#!/usr/bin/env bash
# Values from the job's environment are fine as values.
python3 -m sglang.launch_server --model-path "$MODEL" --tp-size $TP --port=${PORT:-30000}
