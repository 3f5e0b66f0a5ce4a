"""The inventory phase, once every run is in: each item with its class and outcome, the
changed files sorted by who may change them, and the freezes' facts.
"""
