"""What the gate trusts, read from the base commit: configuration, manifest, freeze file,
pytest's configuration, what each path is, who wrote a change, locks, approvals, disputes.
"""
