"""The maintainer's commands: one module per subcommand.

Each command is a typed function taking explicit arguments and returning its
exit code (contract section 3), so tests call it directly and `cli.py` stays
declarations and dispatch only.
"""
