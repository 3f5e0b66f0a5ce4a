"""Lowercase, ASCII, words joined by a separator."""

import re
import unicodedata

NOT_WORD = re.compile(r"[^a-z0-9]+")


def slugify(title, separator="-", max_length=None):
    text = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode("ascii")
    slug = NOT_WORD.sub(separator, text.lower()).strip(separator)
    if max_length is not None and len(slug) > max_length:
        slug = slug[:max_length].rstrip(separator)
    return slug


def unique_slug(title, taken):
    base = slugify(title)
    slug, n = base, 1
    while slug in taken:
        n += 1
        slug = f"{base}-{n}"
    return slug
