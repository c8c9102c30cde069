#!/usr/bin/env bash
# Announced as deprecated at v0.8.0, gone at v0.9.0.
vllm serve /models/m -tp 2 --calculate-kv-scales --max_num_seqs 64
