"""The test-running phases of `check`, in order of trust.

`oracle` (oracle class, base pin, known-bad replays: head's production code with
base's test side) -> `property` (the change's accepted property files) ->
`untrusted` (everything else, and the frozen flakes). Each phase's results are
read into memory before the next, less trusted phase starts. They share one
`PhaseContext` (`context.py`).
"""
