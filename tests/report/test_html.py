"""report.html: the page's content and escaping, and how a real browser shows it.

The browser tests run Debian's headless `chromium` (`.ci/run` installs it) and skip,
saying why, when it is not there. Set ANDGATE_SCREENSHOTS=DIR to keep the PNGs
(docs/report.png is the blocked one).
"""

from __future__ import annotations

import datetime as dt
import html.parser
import os
import shutil
import struct
import subprocess
import tempfile
import zlib
from pathlib import Path

import pytest

from andgate.records import (
    ChangeFacts,
    ClassFacts,
    Facts,
    FreezeFacts,
    ItemResult,
    KnownBadFacts,
    LockFacts,
    OracleFacts,
    Outcome,
    PropertyFacts,
    ReplayFacts,
)
from andgate.report.context import ReportContext
from andgate.report.html import (
    CSP,
    FreezeRow,
    HtmlReport,
    KnownBadRow,
    ReasonRow,
    SeedRow,
    build_report,
    render,
)
from andgate.trust.freeze import Freeze
from andgate.trust.github import Approval
from andgate.verdict import decide

BASE = "3f1c2a9b7d4e5f60718293a4b5c6d7e8f9012345"
HEAD = "6dcb09b5b57875f334f61aebed695e2e4193db5e"
BITS = (
    "authorship_ok",
    "locks_ok",
    "oracle_ok",
    "known_bad_ok",
    "property_ok",
    "freeze_ok",
    "untrusted_ok",
)
PATCH = """\
--- a/tinystats/core.py
+++ b/tinystats/core.py
@@ -12,3 +12,3 @@ def median(xs):
     if n % 2 == 0:
-        return (xs[mid - 1] + xs[mid]) / 2
+        return xs[mid]
"""
HOSTILE = "<script>alert(1)</script>"
QUOTES = '" onmouseover="alert(2)" x=\'y\''


def verdict(decision: str, failed_bits: set[str], reasons: list[ReasonRow]) -> dict:
    return {
        "schema": "andgate.verdict/1",
        "verdict": decision,
        "reasons": [{"code": r.code, "detail": r.detail} for r in reasons],
        "bits": {bit: bit not in failed_bits for bit in BITS},
        "warnings": [],
        "counts": {"oracle": 12, "property": 6, "frozen_flake": 1, "untrusted": 41},
        "base": BASE,
        "head": HEAD,
        "today": "2026-11-20",
    }


def blocked_report() -> HtmlReport:
    reasons = [
        ReasonRow(
            "ORACLE_FAILED",
            "tests/oracles/test_median.py::test_even_count failed: assert 3 == 2.5",
            "tests/oracles/test_median.py::test_even_count",
            "oracle_ok",
        ),
        ReasonRow(
            "ORACLE_AUTHORSHIP",
            "tests/oracles/fixtures/medians.json changed without owner approval "
            "(mixed change: production code and trust-root files together)",
            "tests/oracles/fixtures/medians.json",
            "authorship_ok",
        ),
        ReasonRow(
            "ORACLE_NEUTRALIZED",
            "kb_mean_off_by_one.patch left every oracle item passing",
            "kb_mean_off_by_one.patch",
            "known_bad_ok",
        ),
        ReasonRow(
            "UNTRUSTED_FAILED",
            "tests/test_agent_median.py::test_new_case failed: ZeroDivisionError",
            "tests/test_agent_median.py::test_new_case",
            "untrusted_ok",
        ),
    ]
    return HtmlReport(
        verdict=verdict(
            "block", {"oracle_ok", "authorship_ok", "known_bad_ok", "untrusted_ok"}, reasons
        ),
        reasons=tuple(reasons),
        warnings=(ReasonRow("FREEZE_INEFFECTIVE", "freeze 'test_gone' matches no collected test"),),
        known_bad=(
            KnownBadRow(
                "kb_median_even_count.patch",
                True,
                "tests/oracles/test_median.py::test_even_count",
                PATCH,
            ),
            KnownBadRow("kb_mean_off_by_one.patch", True, None, PATCH),
            KnownBadRow("kb_old.patch", False, None, PATCH, "patch does not apply at line 12"),
        ),
        seeds=(
            SeedRow("tests/properties/test_median_property.py::test_between[11]", (11,)),
            SeedRow(
                "tests/properties/test_sorted.py::test_idempotent",
                (3735928559,),
                "--hypothesis-seed=3735928559",
            ),
        ),
        freezes=(
            FreezeRow(
                "tests/test_timing.py::test_mean_is_fast",
                "platform-tests",
                "2026-12-10",
                20,
                "timing depends on shared runner load",
            ),
            FreezeRow("test_retry_backoff", "infra", "2026-11-22", 2, "shared runner load"),
        ),
        case="mixed change: production code and trust-root files together",
    )


def allowed_report() -> HtmlReport:
    return HtmlReport(
        verdict=verdict("allow", set(), []),
        approvals=(
            Approval(
                "alice",
                "github-reviews",
                80,
                HEAD,
                "2026-11-20T17:31:04Z",
                "https://github.com/octo-org/tinystats/pull/12#pullrequestreview-80",
            ),
        ),
        known_bad=(
            KnownBadRow(
                "kb_median_even_count.patch",
                True,
                "tests/oracles/test_median.py::test_even_count",
                PATCH,
            ),
        ),
        seeds=(SeedRow("tests/properties/test_median_property.py::test_between[11]", (11,)),),
        case="trust-root-only change",
    )


def hostile_report() -> HtmlReport:
    """A change whose test ids, messages, fixture names and patches hold markup."""
    nodeid = f"tests/test_x.py::test_a[{HOSTILE}{QUOTES}]"
    reasons = (
        ReasonRow("ORACLE_FAILED", f"{nodeid} failed: {HOSTILE} {QUOTES}", nodeid, "oracle_ok"),
        ReasonRow("GATE_ERROR", f"</code></li></ul>{HOSTILE}<img src=x onerror=alert(3)>"),
    )
    return HtmlReport(
        verdict=verdict("block", {"oracle_ok"}, list(reasons)) | {"head": QUOTES},
        reasons=reasons,
        warnings=(ReasonRow("APPROVAL_IGNORED", f"approval by {HOSTILE} ignored"),),
        approvals=(Approval(f"{HOSTILE}", "cli", url=f"javascript:{QUOTES}"),),
        known_bad=(KnownBadRow(f"{HOSTILE}.patch", True, nodeid, f"+{HOSTILE}\n</pre>{QUOTES}"),),
        seeds=(SeedRow(nodeid, (HOSTILE,), f"--hypothesis-seed={QUOTES}"),),
        freezes=(FreezeRow(HOSTILE, QUOTES, "2026-12-01", 5, HOSTILE),),
        case=HOSTILE,
    )


class Elements(html.parser.HTMLParser):
    """Every start tag and its attributes, as a browser's parser would see them."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parse(page: str) -> Elements:
    parser = Elements()
    parser.feed(page)
    parser.close()
    return parser


def assert_inert(page: str) -> Elements:
    """No script, no event handler, nothing loaded or linked outside the page."""
    elements = parse(page)
    tags = [tag for tag, _ in elements.tags]
    assert "script" not in tags
    assert not {"img", "iframe", "object", "embed", "link", "form", "base"} & set(tags)
    for tag, attrs in elements.tags:
        assert not [a for a in attrs if a.startswith("on")], (tag, attrs)
        assert "src" not in attrs
        if "href" in attrs:
            assert (attrs["href"] or "").startswith("#"), attrs
    return elements


# -- the page, without a browser --------------------------------------------------------------


def test_the_page_is_self_contained_with_a_csp():
    page = render(blocked_report()).decode("utf-8")
    assert page.startswith("<!DOCTYPE html>")
    elements = assert_inert(page)
    metas = [a for tag, a in elements.tags if tag == "meta" and "http-equiv" in a]
    assert metas == [{"http-equiv": "Content-Security-Policy", "content": CSP}]
    assert CSP == "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
    assert "http://" not in page and "https://" not in page
    assert page.index("Content-Security-Policy") < page.index("<style>")


def test_the_verdict_and_why_come_first():
    page = render(blocked_report()).decode("utf-8")
    banner = page.index("andgate: BLOCK</h1>")
    assert banner < page.index("<main>")
    assert "ORACLE_FAILED: tests/oracles/test_median.py::test_even_count failed" in page[banner:]
    assert page.index("ORACLE_FAILED") < page.index("<h2>Checks</h2>")


def test_the_page_shows_every_part_a_reviewer_needs():
    text = "".join(parse(render(blocked_report()).decode("utf-8")).text)
    for expected in (
        "base 3f1c2a9b7d4e → head 6dcb09b5b578",
        "mixed change: production code and trust-root files together",
        "no owner approval",
        "oracle class passes",
        "Tests per class",
        "41",
        "ORACLE_AUTHORSHIP",
        "tests/oracles/fixtures/medians.json changed without owner approval",
        "kb_median_even_count.patch",
        "no oracle item failed",
        "does not apply",
        "patch does not apply at line 12",
        "+        return xs[mid]",
        "--hypothesis-seed=3735928559",
        "platform-tests",
        "2026-12-10",
        "FREEZE_INEFFECTIVE",
    ):
        assert expected in text, expected


def test_each_failed_check_links_to_its_reasons():
    page = render(blocked_report()).decode("utf-8")
    elements = parse(page)
    links = {attrs["href"] for tag, attrs in elements.tags if tag == "a"}
    ids = {attrs.get("id") for _, attrs in elements.tags}
    assert links == {"#oracle_ok", "#authorship_ok", "#known_bad_ok", "#untrusted_ok"}
    assert {link[1:] for link in links} <= ids


def test_patches_are_behind_details():
    page = render(blocked_report()).decode("utf-8")
    assert page.count("<details><summary>patch</summary><pre>") == 3


def test_an_allowed_report_shows_the_approval_used():
    page = render(allowed_report()).decode("utf-8")
    text = "".join(parse(page).text)
    assert "andgate: ALLOW" in text
    assert "approved by alice" in text
    assert "pullrequestreview-80" in text  # shown as text, never as a link
    assert 'href="https' not in page
    assert "Every trust class holds" in text


def test_everything_from_the_repository_is_escaped():
    page = render(hostile_report()).decode("utf-8")
    elements = assert_inert(page)
    assert "<script>" not in page
    assert 'onmouseover="alert' not in page
    text = "".join(elements.text)
    assert HOSTILE in text
    assert QUOTES in text
    title_attrs = [attrs.get("title") for _, attrs in elements.tags if "title" in attrs]
    assert QUOTES in title_attrs  # the head, in a title attribute, still one attribute


def test_build_report_from_a_check():
    changes = ChangeFacts(
        oracle_paths=("tests/oracles/fixtures/a.json",), production_paths=("p.py",)
    )
    facts = Facts(
        changes=changes,
        lock=LockFacts(),
        oracle=OracleFacts(
            results=(ItemResult("tests/oracles/test_a.py::test_b", Outcome.FAILED, "E  boom"),)
        ),
        known_bad=KnownBadFacts(
            replays=(ReplayFacts("kb.patch", True, ("tests/oracles/test_a.py::test_b",)),)
        ),
        property=PropertyFacts(
            results=(ItemResult("tests/properties/test_p.py::test_q[1]", Outcome.PASSED),),
            files={"tests/properties/test_p.py": ("tests/properties/test_p.py::test_q[1]",)},
            seeds={"tests/properties/test_p.py::test_q[1]": (1,)},
        ),
        freezes=FreezeFacts(),
        untrusted=ClassFacts(),
        counts={"oracle": 1, "property": 1, "frozen_flake": 0, "untrusted": 0},
    )
    today = dt.date(2026, 11, 20)
    ctx = ReportContext(
        verdict=decide(facts),
        base=BASE,
        head=HEAD,
        today=today,
        replays=facts.known_bad.replays,
        property=facts.property,
        property_seed=7,
        changes=changes,
    )
    freeze = Freeze("test_slow", "runner load", dt.date(2026, 11, 10), dt.date(2026, 11, 30), "ops")
    report = build_report(
        ctx,
        approvals=(Approval("alice", "cli"),),
        patches={"kb.patch": PATCH},
        freezes=[freeze],
    )
    assert report.decision == "block"
    assert [(r.code, r.bit) for r in report.reasons] == [
        ("ORACLE_AUTHORSHIP", "authorship_ok"),
        ("ORACLE_FAILED", "oracle_ok"),
    ]
    assert report.reasons[1].subject == "tests/oracles/test_a.py::test_b"
    assert report.known_bad == (
        KnownBadRow("kb.patch", True, "tests/oracles/test_a.py::test_b", PATCH),
    )
    assert report.seeds == (
        SeedRow("tests/properties/test_p.py::test_q[1]", (1,), "--hypothesis-seed=7"),
    )
    assert report.freezes == (FreezeRow("test_slow", "ops", "2026-11-30", 10, "runner load"),)
    assert report.case.startswith("mixed change")
    assert_inert(render(report).decode("utf-8"))


# -- in a real browser --------------------------------------------------------------------------

WIDTH, HEIGHT = 1200, 1600


@pytest.fixture(scope="module")
def chromium() -> str:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    pytest.skip("no chromium binary on PATH (apt-get install chromium; .ci/run installs it)")


def browser(chromium: str, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    profile = tmp_path / f"profile-{len(list(tmp_path.iterdir()))}"
    argv = [
        chromium,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--user-data-dir={profile}",
        *args,
    ]
    # Chromium puts its singleton socket under TMPDIR, and a socket path longer than
    # 107 bytes is refused (the suite's TMPDIR is each test's own, deep, folder): a
    # short folder of this test's own, removed afterwards.
    with tempfile.TemporaryDirectory(dir="/tmp", prefix="ag-") as short:
        env = {**os.environ, "TMPDIR": short}
        return subprocess.run(argv, capture_output=True, timeout=60, check=False, env=env)


def screenshot(chromium: str, tmp_path: Path, report: HtmlReport, name: str) -> bytes:
    page = tmp_path / f"{name}.html"
    page.write_bytes(render(report))
    png = tmp_path / f"{name}.png"
    done = browser(
        chromium, tmp_path, f"--window-size={WIDTH},{HEIGHT}", f"--screenshot={png}", page.as_uri()
    )
    assert png.exists(), done.stderr.decode(errors="replace")[-2000:]
    keep = os.environ.get("ANDGATE_SCREENSHOTS")
    if keep:
        shutil.copyfile(png, Path(keep) / f"{name}.png")
    return png.read_bytes()


def png_rows(data: bytes, max_rows: int) -> tuple[int, int, list[bytes], list[bytes]]:
    """(width, height, every filtered row, the first max_rows rows unfiltered)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour = struct.unpack(">IIBB", header[:10])
    assert depth == 8 and colour in (2, 6), (depth, colour)
    bpp = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp + 1
    filtered = [raw[i * stride : (i + 1) * stride] for i in range(height)]
    return width, height, filtered, _unfilter(filtered[:max_rows], bpp)


def _unfilter(rows: list[bytes], bpp: int) -> list[bytes]:
    out: list[bytes] = []
    prev = bytearray(len(rows[0]) - 1)
    for row in rows:
        kind, line = row[0], bytearray(row[1:])
        for i in range(len(line)):
            left = line[i - bpp] if i >= bpp else 0
            up = prev[i]
            corner = prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                pred = left if pa <= pb and pa <= pc else up if pb <= pc else corner
                line[i] = (line[i] + pred) & 0xFF
        out.append(bytes(line))
        prev = line
    return out


def banner_colour(chromium: str, tmp_path: Path, report: HtmlReport, name: str) -> tuple[int, ...]:
    data = screenshot(chromium, tmp_path, report, name)
    width, height, filtered, top = png_rows(data, 12)
    assert (width, height) == (WIDTH, HEIGHT)
    assert len(set(filtered)) > 50, "the screenshot is (nearly) one colour"
    bpp = len(top[0]) // width
    x = 1100 * bpp  # right of the banner's text, row 10: the banner's background
    return tuple(top[10][x : x + 3])


def test_a_blocked_report_renders_red_in_chromium(chromium, tmp_path):
    r, g, b = banner_colour(chromium, tmp_path, blocked_report(), "report-blocked")
    assert r > 150 and g < 80 and b < 80, (r, g, b)


def test_an_allowed_report_renders_green_in_chromium(chromium, tmp_path):
    r, g, b = banner_colour(chromium, tmp_path, allowed_report(), "report-allowed")
    assert g > 90 and r < 60, (r, g, b)


def test_hostile_text_stays_text_in_chromium(chromium, tmp_path):
    page = tmp_path / "hostile.html"
    page.write_bytes(render(hostile_report()))
    done = browser(chromium, tmp_path, "--dump-dom", page.as_uri())
    dom = done.stdout.decode("utf-8")
    assert "andgate: BLOCK" in dom, done.stderr.decode(errors="replace")[-2000:]
    elements = assert_inert(dom)
    text = "".join(elements.text)
    assert HOSTILE in text
    assert QUOTES in text
    assert "<script>" not in dom
