"""The plan phase: which commit each pytest process runs in, which files it may collect,
and this machine's units of work. git only: no test code runs here.
"""
