"""`python -m andgate` is the same as the `andgate` console script."""

from andgate.commands.cli import main

raise SystemExit(main())
