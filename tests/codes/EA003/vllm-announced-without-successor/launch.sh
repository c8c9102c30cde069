#!/usr/bin/env bash
# v0.8.0 announces that --calculate-kv-scales goes, naming nothing to use
# instead: still an option, nothing to rename to.
vllm serve /models/m -tp 2 --calculate-kv-scales
