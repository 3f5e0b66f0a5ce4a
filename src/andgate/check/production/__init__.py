"""The production phase: the scan of the lines a change adds, on inputs read before any
test runs."""
