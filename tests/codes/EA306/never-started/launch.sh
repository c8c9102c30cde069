#!/usr/bin/env bash
# The launch is in a function nobody calls.
start_server() {
    python3 -m sglang.launch_server --model-path /models/m --tp-size 8
}
echo "not started"
