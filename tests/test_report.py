"""The HTML report (``nmt translate --report``), built from real translations with the shipped
En->De bundle and checked in a real headless Chromium (Debian's, driven by Playwright): rows,
flags, confidence, alignment on hover, filters, and that nothing from the documents can run."""
from __future__ import annotations

import copy
import json
import os
import re
import shutil
import time
from pathlib import Path

import pytest

from worker.engine.translator import Translator
from worker.local.report import relative_spans, render_report, script_json, summarize, write_report

from .conftest import REPO_ROOT, run_nmt

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
BUNDLE = REPO_ROOT / "models" / "en-de"
FRENCH = "Le chat est assis sur le tapis rouge ce matin."
HOSTILE = "Never type <script>alert(1)</script> into \"quotes\" & 'apostrophes'."
DOCUMENT = (
    "Quarterly notes.\n\n"
    "Visit https://example.com/docs for 42 more details. THE SERVER IS DOWN AGAIN TODAY.\n"
    f"{FRENCH}\n"
    f"{HOSTILE}\n"
    "Where is the train station?\n"
)
# A document name is page text too: it must not end the JSON <script> it is embedded in.
NAME = "notes </script><script>alert(2)</script>.txt"


# -- fixtures -------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def translator() -> Translator:
    return Translator(BUNDLE)


@pytest.fixture(scope="module")
def payload(translator) -> dict:
    return json.loads(json.dumps(translator.translate_document(DOCUMENT).to_json()))


@pytest.fixture(scope="module")
def browser():
    """Debian's Chromium, headless. Tests fail (never skip) where it or Playwright is missing."""
    if not Path(CHROMIUM).exists():
        pytest.fail(f"headless Chromium not found at {CHROMIUM}: the report tests need it; "
                    "install it with `apt-get install chromium chromium-driver`")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("playwright is not installed: `pip install -e '.[dev]'` (it drives the system Chromium; "
                    "no `playwright install` is needed)")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
        yield chromium
        chromium.close()


class Opened:
    """A report open in a fresh page, with everything it did recorded: dialogs (dismissed),
    console errors, page errors and every request made."""

    def __init__(self, browser, path: Path) -> None:
        self.dialogs: list[str] = []
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.page = browser.new_page(viewport={"width": 1280, "height": 800})
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.url = path.resolve().as_uri()
        self.page.goto(self.url)

    def rows(self):
        return self.page.locator(".seg")

    def visible_rows(self) -> int:
        return self.page.eval_on_selector_all(".seg", "rows => rows.filter(r => r.offsetParent !== null).length")

    def highlighted(self, row: int, side: str) -> list[int]:
        return [int(i) for i in self.rows().nth(row).locator(f".{side} > span.hl").evaluate_all(
            "spans => spans.map(s => s.dataset.i)")]


@pytest.fixture(scope="module")
def report(browser, payload, tmp_path_factory):
    path = tmp_path_factory.mktemp("report") / "report.html"
    write_report(path, [(NAME, payload)])
    opened = Opened(browser, path)
    yield opened
    opened.page.close()


def pairs_of(segment: dict) -> list[tuple[int, int]]:
    return [tuple(int(x) for x in p.split("-")) for p in segment["alignment"].split()]


def row_of(payload: dict, source: str) -> int:
    return next(i for i, s in enumerate(payload["segments"]) if s["source"] == source)


def embedded_data(page_html: str) -> dict:
    found = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', page_html, re.S)
    return json.loads(found.group(1))


# -- in the browser: a real translation ---------------------------------------------------------------

def test_every_segment_is_a_row_showing_its_source_and_translation_as_plain_text(report, payload):
    segments = payload["segments"]
    assert report.rows().count() == len(segments) >= 5
    assert report.page.locator("#count-segments b").inner_text() == str(len(segments))
    for index, segment in enumerate(segments):
        row = report.rows().nth(index)
        assert row.locator(".src").text_content() == segment["source"]
        assert row.locator(".tgt").text_content() == segment["translation"]
        assert row.locator(".src > span").count() == len(segment["source_words"])
        assert row.locator(".tgt > span").count() == len(segment["target_words"])


def test_the_french_row_carries_the_language_badge_and_the_header_counts_each_flag(report, payload):
    french = report.rows().nth(row_of(payload, FRENCH))
    assert "language" in french.locator(".flags .badge").all_inner_texts()
    for flag in {f for s in payload["segments"] for f in s["flags"]}:
        expected = sum(flag in s["flags"] for s in payload["segments"])
        badge = report.page.locator(f'#flag-counts .badge[data-flag="{flag}"] b')
        assert badge.inner_text() == str(expected)
    flagged = sum(bool(s["flags"]) for s in payload["segments"])
    assert report.page.locator("#count-flagged b").inner_text() == str(flagged)


def test_confidence_is_shown_per_row_and_as_the_mean_in_the_header(report, payload):
    confidences = [s.get("confidence") for s in payload["segments"]]
    shown = report.rows().locator(".meta .conf").all_inner_texts()
    assert shown == [f"{c:.2f}" if c is not None else "n/a" for c in confidences]
    known = [c for c in confidences if c is not None]
    mean = f"{sum(known) / len(known):.2f}" if known else "n/a"
    assert report.page.locator("#mean-confidence .conf").inner_text() == mean


def test_hovering_a_word_highlights_exactly_its_aligned_words_on_the_other_side(report, payload):
    checked = 0
    for index, segment in enumerate(payload["segments"]):
        pairs = pairs_of(segment)
        if not pairs:
            continue
        source_word = max({i for i, _ in pairs}, key=lambda i: sum(i == s for s, _ in pairs))
        report.rows().nth(index).locator(f'.src > span[data-i="{source_word}"]').hover()
        assert report.highlighted(index, "tgt") == sorted(j for i, j in pairs if i == source_word)
        target_word = pairs[-1][1]
        report.rows().nth(index).locator(f'.tgt > span[data-i="{target_word}"]').hover()
        assert report.highlighted(index, "src") == sorted(i for i, j in pairs if j == target_word)
        assert report.highlighted(index, "tgt") == []  # the earlier highlight is cleared
        checked += 1
    assert checked >= 3
    report.page.mouse.move(1, 1)
    assert report.page.locator(".hl, .hl-self").count() == 0


def test_text_from_the_documents_never_becomes_markup_or_runs(report, payload):
    hostile = report.rows().nth(row_of(payload, HOSTILE))
    assert "<script>alert(1)</script>" in hostile.locator(".src").inner_text()
    scripts = report.page.eval_on_selector_all("script", "ss => ss.map(s => s.type)")
    assert scripts == ["application/json", ""]  # the report's own two, nothing from the text
    assert report.page.locator("main script").count() == 0
    data = json.loads(report.page.locator("#report-data").text_content())
    assert data["documents"][0]["name"] == NAME and data["segments"] == len(payload["segments"])
    assert report.page.locator("h2").first.text_content().startswith(NAME)
    assert report.dialogs == []
    assert report.requests == [report.url]  # no fetches, no external resources


def test_the_filters_hide_rows_without_flags_or_without_the_chosen_flag(report, payload):
    segments = payload["segments"]
    page = report.page
    page.check("#only-flagged")
    assert report.visible_rows() == sum(bool(s["flags"]) for s in segments)
    page.select_option("#flag-filter", "language")
    assert report.visible_rows() == 1
    assert report.rows().nth(row_of(payload, FRENCH)).is_visible()
    page.uncheck("#only-flagged")
    page.select_option("#flag-filter", "")
    assert report.visible_rows() == len(segments)


def test_the_page_logs_no_errors_and_a_screenshot_shows_it(report, payload, tmp_path):
    index = next(i for i, s in enumerate(payload["segments"]) if len(pairs_of(s)) >= 3)
    source_word = pairs_of(payload["segments"][index])[-1][0]
    report.rows().nth(index).locator(f'.src > span[data-i="{source_word}"]').hover()
    shot = tmp_path / "report.png"
    report.page.screenshot(path=str(shot), full_page=True)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000
    if os.environ.get("NMT_REPORT_SCREENSHOT"):  # for a person to look at
        shutil.copyfile(shot, "/tmp/report-screenshot.png")
    assert report.errors == []


# -- in the browser: hostile payloads and scale ----------------------------------------------------------

def test_hostile_values_in_every_field_stay_text(browser, payload, tmp_path):
    evil = '"><img src=x onerror=alert(3)><script>alert(4)</script>&amp;'
    segment = copy.deepcopy(payload["segments"][0]) | {
        "source": evil, "translation": evil, "alignment": evil, "source_words": [[0, 2]], "target_words": "x",
        "flags": [evil, "language"], "warnings": [evil], "details": {"x": evil}, "confidence": None,
    }
    document = {"segments": [segment], "provenance": {"bundle": evil, "signature": evil}, "warnings": [evil, evil + "!"]}
    path = tmp_path / "evil.html"
    write_report(path, [(evil, document)])
    opened = Opened(browser, path)
    opened.rows().first.locator(".src > span").first.hover()
    assert opened.page.locator("img").count() == 0
    assert opened.page.eval_on_selector_all("script", "ss => ss.length") == 2
    assert opened.rows().first.locator(".src").text_content() == evil
    assert opened.rows().first.locator(".conf").inner_text() == "n/a"
    assert opened.page.locator(".doc .warnings li").all_inner_texts() == [evil + "!"]  # the other is the row's
    assert opened.dialogs == [] and opened.errors == [] and opened.requests == [opened.url]


@pytest.mark.slow
def test_ten_thousand_segments_load_and_hover_without_quadratic_work(browser, payload, tmp_path):
    segments = [copy.deepcopy(payload["segments"][i % len(payload["segments"])]) for i in range(10_000)]
    started = time.perf_counter()
    write_report(tmp_path / "big.html", [("big.txt", payload | {"segments": segments})])
    assert time.perf_counter() - started < 20
    started = time.perf_counter()
    opened = Opened(browser, tmp_path / "big.html")
    assert opened.rows().count() == 10_000
    assert time.perf_counter() - started < 60
    # 300 hovers spread over the page, the last row included: each costs its own segment only.
    elapsed = opened.page.evaluate("""() => {
        const words = document.querySelectorAll('.src > span[data-i="0"]');
        const t0 = performance.now();
        for (let k = 0; k < 300; k++) {
            const w = words[Math.floor(k * (words.length - 1) / 299)];
            w.dispatchEvent(new MouseEvent('mouseover', {bubbles: true}));
        }
        return performance.now() - t0;
    }""")
    assert elapsed < 3000, f"300 hovers took {elapsed:.0f} ms"
    last = segments[-1]
    expected = sorted(j for i, j in pairs_of(last) if i == 0)
    assert opened.highlighted(9_999, "tgt") == expected
    opened.page.check("#only-flagged")
    assert opened.visible_rows() == sum(bool(s["flags"]) for s in segments)
    assert opened.errors == []


# -- the command line --------------------------------------------------------------------------------------

@pytest.mark.slow
def test_nmt_translate_files_with_report_writes_a_report_of_every_file(browser, tmp_path):
    source, out = tmp_path / "notes.txt", tmp_path / "out"
    source.write_text(DOCUMENT, encoding="utf-8")
    (tmp_path / "tea.txt").write_text("I like tea.\n", encoding="utf-8")
    result = run_nmt("translate", str(source), str(tmp_path / "tea.txt"), "--bundle", str(BUNDLE),
                     "--out", str(out), "--report", str(out / "report.html"))
    assert result.returncode == 0, result.stderr
    payloads = [json.loads((out / name).read_text(encoding="utf-8")) for name in ("notes.de.json", "tea.de.json")]
    opened = Opened(browser, out / "report.html")
    assert opened.page.locator("section.doc h2").all_text_contents()[0].startswith(str(source))
    assert opened.rows().count() == sum(len(p["segments"]) for p in payloads)
    assert opened.page.locator("section.doc").first.locator(".seg").nth(row_of(payloads[0], FRENCH)) \
        .locator('.badge[data-flag="language"]').count() == 1
    assert opened.dialogs == [] and opened.errors == []


@pytest.mark.slow
def test_nmt_translate_stdin_with_report_names_each_line(tmp_path):
    report = tmp_path / "sub" / "stdin.html"
    result = run_nmt("translate", "--bundle", str(BUNDLE), "--report", str(report), stdin=f"I like tea.\n{FRENCH}\n")
    assert result.returncode == 0, result.stderr
    assert len(result.stdout.splitlines()) == 2
    data = embedded_data(report.read_text(encoding="utf-8"))
    assert [d["name"] for d in data["documents"]] == ["stdin:1", "stdin:2"]
    assert data["flags"].get("language") == 1


# -- without a browser ----------------------------------------------------------------------------------

@pytest.mark.parametrize("text, spans, expected", [
    ("Hello big world.", [[100, 105], [106, 109], [110, 116]], [(0, 5), (6, 9), (10, 16)]),  # document offsets
    ("  Hi there", [[40, 42], [43, 48]], [(2, 4), (5, 10)]),  # a segment text with leading space
    ("Hi there", [[0, 2], [3, 8]], [(0, 2), (3, 8)]),  # already relative
    ("Hi there", [[0, 5], [3, 8]], [(0, 2), (3, 8)]),  # overlapping: fall back to whitespace words
    ("Hi there", [[0, 2], [3, 30]], [(0, 2), (3, 8)]),  # past the end: the same
    ("Hi there", [], [(0, 2), (3, 8)]),
    ("", [[3, 4]], []),
    ("Hi there", "xy", [(0, 2), (3, 8)]),  # not spans at all
])
def test_word_spans_are_made_relative_to_the_segment_text(text, spans, expected):
    assert relative_spans(text, spans) == expected


def test_embedded_json_cannot_close_its_script_element_and_still_parses():
    value = {"name": "</script><!-- <script>alert(1)</script>", "n": 1}
    text = script_json(value)
    assert "</" not in text and "<!--" not in text and "<" not in text
    assert json.loads(text) == value


def test_a_segment_without_confidence_is_grey_na_and_confidence_colours_run_red_to_green():
    base = {"translation": "b", "score": 0.0, "alignment": "0-0", "source_words": [[0, 1]], "target_words": [[0, 1]],
            "flags": [], "details": {}}
    segments = [base | {"source": "a"}, base | {"source": "a", "confidence": None},
                base | {"source": "a", "confidence": 0.0}, base | {"source": "a", "confidence": 1.0}]
    page = render_report([("d", {"segments": segments, "provenance": {}, "warnings": []})])
    confs = re.findall(r'<span class="conf[^"]*"[^>]*>[^<]*</span>', page.split("<main>")[1])
    assert len(confs) == 4
    assert 'class="conf na">n/a' in confs[0] and 'class="conf na">n/a' in confs[1]
    assert "hsl(0," in confs[2] and ">0.00<" in confs[2] and "hsl(120," in confs[3] and ">1.00<" in confs[3]
    assert summarize([("d", {"segments": segments})])["mean_confidence"] == 0.5


def test_the_page_is_self_contained():
    page = render_report([("d", {"segments": [], "provenance": {}, "warnings": []})])
    assert not re.search(r"""(src|href)\s*=|https?://|@import|url\(""", page, re.I)
    assert "default-src 'none'" in page
