"""The discrimination phase: do the tests a change adds tell any fault apart?"""
