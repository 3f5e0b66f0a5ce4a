"""Small encoders."""

DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"


def rle_encode(text):
    """Run-length encoding as (character, count) pairs."""
    out = []
    for ch in text:
        if out and out[-1][0] == ch:
            out[-1] = (ch, out[-1][1] + 1)
        else:
            out.append((ch, 1))
    return out


def rle_decode(pairs):
    """Inverse of rle_encode."""
    return "".join(ch * count for ch, count in pairs)


def checksum(data):
    """Adler-32 style checksum, computed in pure Python."""
    a, b = 1, 0
    for byte in data:
        a = (a + byte) % 65521
        b = (b + a) % 65521
    return (b << 16) | a


def to_base(n, base):
    """Non-negative n written in base 2..36."""
    if n == 0:
        return "0"
    digits = []
    while n:
        n, r = divmod(n, base)
        digits.append(DIGITS[r])
    return "".join(reversed(digits))


def from_base(text, base):
    """Inverse of to_base."""
    value = 0
    for ch in text:
        value = value * base + DIGITS.index(ch)
    return value
