"""`python -m durfmt 1h30m 45s` prints each duration in seconds."""

import sys

from .duration import parse_duration


def main(argv=None):
    for text in sys.argv[1:] if argv is None else argv:
        print(parse_duration(text))
    return 0


if __name__ == "__main__":
    sys.exit(main())
