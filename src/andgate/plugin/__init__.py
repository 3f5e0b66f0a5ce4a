"""andgate's pytest plugin and what it needs (`hooks` is the plugin pytest loads):
everything here runs inside the user's pytest process, so it imports only pytest
and the standard library.
"""
