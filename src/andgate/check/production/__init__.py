"""The production phase: the scan of the lines a change adds, before any test runs."""
