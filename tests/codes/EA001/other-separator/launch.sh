#!/usr/bin/env bash
# The parser registers `--mem-fraction-static` only: argparse refuses the
# underscore spelling, and the rename is certain, not a guess.
python3 -m sglang.launch_server --model-path /models/m --mem_fraction_static 0.8
