#!/usr/bin/env bash
python3 -m sglang.launch_server \
  --model-path /models/m \
  --cuda-graph-max-bs 128
