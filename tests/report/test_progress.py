"""Progress lines, with a fake clock and a fake stream."""

from __future__ import annotations

import io
import threading

import pytest

from andgate.report.progress import CLEAR_TO_END, Progress


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def clock() -> Clock:
    return Clock()


def test_plain_lines_when_not_a_terminal(clock):
    out = io.StringIO()
    progress = Progress(out, clock=clock, interval=5.0)
    progress.start("oracle", total=64_000)
    for _ in range(64):
        clock.now += 0.5
        progress.advance(1000)
    progress.finish()
    lines = out.getvalue().splitlines()
    assert lines[0] == "andgate: oracle: 0 of 64,000 (0%), 0s"
    assert lines[1] == "andgate: oracle: 10,000 of 64,000 (16%), 5s"
    assert lines[-1] == "andgate: oracle: 64,000 of 64,000 (100%), 32s (done)"
    # 32 s of work: a line at least every 5 s, and not one per item
    assert 7 <= len(lines) <= 9
    assert "\r" not in out.getvalue()


def test_one_rewritten_line_per_phase_on_a_terminal(clock):
    out = Terminal()
    progress = Progress(out, clock=clock)
    assert progress._tty
    with progress.phase("untrusted", total=3):
        for _ in range(3):
            clock.now += 1
            progress.advance()
    with progress.phase("known-bad replay", total=2):
        clock.now += 75
        progress.advance(2)
    text = out.getvalue()
    lines = text.split("\n")
    assert len(lines) == 3 and lines[-1] == ""  # one line per phase
    assert lines[0].split("\r")[1:] == [
        f"andgate: untrusted: 0 of 3 (0%), 0s{CLEAR_TO_END}",
        f"andgate: untrusted: 1 of 3 (33%), 1s{CLEAR_TO_END}",
        f"andgate: untrusted: 2 of 3 (67%), 2s{CLEAR_TO_END}",
        f"andgate: untrusted: 3 of 3 (100%), 3s{CLEAR_TO_END}",
        f"andgate: untrusted: 3 of 3 (100%), 3s{CLEAR_TO_END}",
    ]
    assert lines[1].endswith(f"\randgate: known-bad replay: 2 of 2 (100%), 1m15s{CLEAR_TO_END}")


def test_a_terminal_is_not_flooded(clock):
    out = Terminal()
    progress = Progress(out, clock=clock, tty_interval=0.1)
    progress.start("oracle", total=64_000)
    for _ in range(64_000):
        clock.now += 0.001  # 64 s in all
        progress.advance()
    progress.finish()
    updates = out.getvalue().count("\r")
    assert 500 <= updates <= 700


def test_quiet_writes_nothing(clock):
    out = Terminal()
    progress = Progress(out, clock=clock, quiet=True)
    with progress.phase("oracle", total=10):
        clock.now += 100
        progress.advance(10)
    assert out.getvalue() == ""


def test_unknown_totals_and_absolute_counts(clock):
    out = io.StringIO()
    progress = Progress(out, clock=clock, interval=0)
    progress.start("collect")
    progress.set(12)
    progress.set(40, total=80)
    progress.finish()
    progress.finish()  # a second finish is harmless
    assert out.getvalue().splitlines() == [
        "andgate: collect: 0 done, 0s",
        "andgate: collect: 12 done, 0s",
        "andgate: collect: 40 of 80 (50%), 0s",
        "andgate: collect: 40 of 80 (50%), 0s (done)",
    ]


def test_starting_a_phase_ends_the_previous_one(clock):
    out = io.StringIO()
    progress = Progress(out, clock=clock)
    progress.start("oracle", 1)
    progress.start("property", 1)
    assert out.getvalue().splitlines()[1] == "andgate: oracle: 0 of 1 (0%), 0s (done)"


def test_advancing_before_any_phase_is_silent(clock):
    out = io.StringIO()
    Progress(out, clock=clock, interval=0).advance()
    assert out.getvalue() == ""


def test_threads_can_advance_together(clock):
    out = io.StringIO()
    progress = Progress(out, clock=clock)
    progress.start("oracle", total=8000)
    workers = [
        threading.Thread(target=lambda: [progress.advance() for _ in range(1000)]) for _ in range(8)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    progress.finish()
    assert out.getvalue().splitlines()[-1] == "andgate: oracle: 8,000 of 8,000 (100%), 0s (done)"


def test_a_closed_or_plain_stream_is_not_a_terminal():
    class NoTty:
        def write(self, text: str) -> int:
            return len(text)

        def flush(self) -> None:
            pass

    assert not Progress(NoTty())._tty  # type: ignore[arg-type]
    closed = io.StringIO()
    closed.close()
    assert not Progress(closed)._tty
