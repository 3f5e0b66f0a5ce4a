import subprocess
import sys


def test_prints_seconds():
    done = subprocess.run(
        [sys.executable, "-m", "durfmt", "1h30m", "45s"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.split() == ["5400", "45"]
