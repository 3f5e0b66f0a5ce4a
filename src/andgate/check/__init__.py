"""`andgate check`, stage by stage: options, state, and every phase with the logic it decides by.

The pipeline (`pipeline.py`) runs: production scan, plan, oracle (with the known-bad
replays), property, untrusted, frozen_flake, discrimination, inventory, verdict.
"""
