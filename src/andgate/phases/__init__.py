"""The phases of `check`: `production` (the scan, before any test runs), `planning`
(the trees and units: one `PhaseContext`, `context.py`), then the test phases in
order of trust: `oracle` (oracle class, base pin, known-bad replays: head's
production code with base's test side) -> `property` (the change's accepted property
files) -> `untrusted` (everything else, the frozen flakes, and beside them the
`discrimination` report's runs), and last `inventory` (items, authorship, freezes).
Each test phase's results are read into memory before the next, less trusted phase
starts.
"""
