"""URL slugs from titles."""

from ._version import __version__
from .slug import slugify, unique_slug

__all__ = ["__version__", "slugify", "unique_slug"]
