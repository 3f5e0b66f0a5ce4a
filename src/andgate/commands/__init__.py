"""Every subcommand: one module per command (or group: `lock`, `freeze`, `known-bad`).

Each module declares its command's options beside its handler (`declare`), and the
command itself is a typed function taking explicit arguments and returning its exit
code (`exitcodes.Exit`, contract section 3), so tests call it directly; `cli.py` only
lists the commands and dispatches.
"""
