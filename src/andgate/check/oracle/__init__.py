"""The oracle phase: the oracle class, its base pin, and the known-bad replays that prove
it bites.
"""
