#!/usr/bin/env bash
python3 -m sglang.launch_server --model-path /models/m --tp 8 --max-running=64 --enable-metric
