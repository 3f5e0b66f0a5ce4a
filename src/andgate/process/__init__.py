"""Running pytest: one process per trust class, the fork server, worktrees, the installed
project's redirection, and the signals that end a check.
"""
