"""The audit of the documentation dev/test references (``training/docs/held_out_mismatch.tsv``):
the committed list is well formed and holds hashes only; a listed pair leaves its set (and its tagged
copy) while the training corpora stay byte for byte what they are without the list; a list that
names a pair no set has fails the build with the file and the hash."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from training.build_data import OUTPUTS, REPORT, build_data
from training.docs.collect import (CARD_JSON, CARD_MD, DOCS_HELD_OUT, HELD_OUT_MISMATCH, MISMATCH_REASONS, DocsOptions,
                                   MismatchListError, drop_mismatches, read_mismatches, side_sha1)

from .docs_fixtures import lo_page, make_deb
from .test_build_data import DOCS_PAGES, SHIPPED, inputs, read_output_at  # noqa: F401 (inputs: a fixture)

HEADER = "set\ten_sha1\tde_sha1\treason\n"
DRAW_P2 = DOCS_PAGES["text/sdraw/01/line.html"][2]["p2"]  # a Draw pair with a near-duplicate on a shared page
CHART_P1 = DOCS_PAGES["text/schart/01/insert.html"][2]["p1"]


def write_list(path: Path, rows: list[tuple[str, str, str, str]]) -> Path:
    path.write_text("# an audit list\n" + HEADER + "".join("\t".join(row) + "\n" for row in rows), encoding="utf-8")
    return path


def row(split: str, pair: tuple[str, str], reason: str = "rewritten") -> tuple[str, str, str, str]:
    return split, side_sha1(pair[0]), side_sha1(pair[1]), reason


def test_the_committed_list_is_well_formed_and_holds_no_source_text():
    entries = read_mismatches(HELD_OUT_MISMATCH)
    assert {e.split for e in entries} == set(DOCS_HELD_OUT)
    counts = {split: sum(e.split == split for e in entries) for split in DOCS_HELD_OUT}
    assert counts == {"docs-test": 38, "docs-dev": 9}
    assert {e.reason for e in entries} <= set(MISMATCH_REASONS)
    data = [line for line in HELD_OUT_MISMATCH.read_text(encoding="utf-8").splitlines()
            if line and not line.startswith("#") and line + "\n" != HEADER]
    assert len(data) == len(entries)
    assert all(re.fullmatch(r"docs-(test|dev)\t[0-9a-f]{16}\t[0-9a-f]{16}\t[a-z-]+", line) for line in data)


def test_a_side_is_keyed_by_the_sha1_of_its_utf8_text():
    assert side_sha1("abc") == "a9993e364706816a"  # SHA-1 of "abc", first 16 hex digits
    assert side_sha1("Größe") != side_sha1("Grosse") and len(side_sha1("")) == 16


@pytest.mark.parametrize("line, message", [
    ("docs-test\t0123456789abcdef\t0123456789abcdef", "expected 4 tab-separated fields"),
    ("docs-test\t0123456789ABCDEF\t0123456789abcdef\trewritten", "en_sha1 '0123456789ABCDEF' is not 16 lower-case hex"),
    ("docs-test\t0123456789abcdef\t0123456789abcde\trewritten", "de_sha1 '0123456789abcde' is not 16 lower-case hex"),
    ("docs-test\t0123456789abcdef\t0123456789abcdef\twrong", "reason 'wrong' is none of rewritten, extra"),
])
def test_a_malformed_line_is_refused_with_its_file_and_line(tmp_path, line, message):
    path = tmp_path / "list.tsv"
    path.write_text(f"# comment\n{HEADER}\n{line}\n", encoding="utf-8")
    with pytest.raises(MismatchListError, match=re.escape(f"{path}:4: {message}")):
        read_mismatches(path)


def test_a_repeated_line_and_a_missing_file_are_refused(tmp_path):
    path = write_list(tmp_path / "list.tsv", [row("docs-test", ("A.", "B.")), row("docs-test", ("A.", "B."), "extra")])
    with pytest.raises(MismatchListError, match=re.escape(f"{path}:4: docs-test") + ".* listed already on line 3"):
        read_mismatches(path)
    with pytest.raises(MismatchListError, match=re.escape(f"{tmp_path / 'none.tsv'}: held-out audit list not found")):
        read_mismatches(tmp_path / "none.tsv")


def test_only_the_listed_pair_of_its_own_set_is_dropped_and_a_stale_line_fails(tmp_path):
    held = {"docs-test": [("A.", "B."), ("A.", "C."), ("D.", "B.")], "docs-dev": [("A.", "B."), ("E.", "F.")]}
    path = write_list(tmp_path / "list.tsv", [row("docs-dev", ("A.", "B."), "extra"), row("docs-dev", ("E.", "F."))])
    kept, dropped = drop_mismatches(held, read_mismatches(path), path)
    assert kept == {"docs-test": held["docs-test"], "docs-dev": []}  # both sides must match, in the listed set
    assert dropped == {"docs-test": {}, "docs-dev": {"rewritten": 1, "extra": 1}}  # in MISMATCH_REASONS order

    stale = write_list(tmp_path / "stale.tsv",
                       [row("docs-dev", ("E.", "F.")), row("docs-test", ("E.", "F."), "missing")])
    with pytest.raises(MismatchListError) as error:
        drop_mismatches(held, read_mismatches(stale), stale)
    assert str(error.value).startswith(
        f"{stale}: 1 listed pair(s) match no pair of their held-out set (docs-test, docs-dev)")
    assert f"line 4: docs-test {side_sha1('E.')} {side_sha1('F.')} (missing)" in str(error.value)
    assert "the list is stale" in str(error.value)


# --- the whole build, on LibreOffice help packages made here -----------------------------------


@pytest.fixture(scope="module")
def packages(tmp_path_factory) -> Path:
    """The help pages of tests/test_build_data.py as real .deb files: Draw's (docs-test), Chart's
    (docs-dev) and a shared page with a variant of a Draw paragraph."""
    if shutil.which("dpkg-deb") is None:
        pytest.skip("needs dpkg-deb (Debian)")
    root = tmp_path_factory.mktemp("docs-packages")
    for package, language in (("libreoffice-help-en-us", "en-US"), ("libreoffice-help-de", "de")):
        files = {}
        for page, (title_en, title_de, paragraphs) in DOCS_PAGES.items():
            side = 0 if language == "en-US" else 1
            path = lo_page(root / "pages" / language / page, language, (title_en, title_de)[side],
                           {key: pair[side] for key, pair in paragraphs.items()})
            files[f"usr/share/libreoffice/help/{language}/{page}"] = path.read_text(encoding="utf-8")
        make_deb(root, package, files)
    return root / "packages"


def build(inputs, packages: Path, out: Path, mismatches: Path | None) -> dict:
    shared, catalogues = inputs
    return build_data(shared, catalogues, out, SHIPPED,
                      DocsOptions(packages, ("libreoffice-help",), mismatches=mismatches))


def test_a_listed_pair_leaves_its_set_and_the_training_corpora_stay_the_same(inputs, packages, tmp_path):
    plain = build(inputs, packages, tmp_path / "plain", None)
    listed = write_list(tmp_path / "list.tsv", [row("docs-test", DRAW_P2), row("docs-dev", CHART_P1, "extra")])
    report = build(inputs, packages, tmp_path / "audited", listed)
    before, after = tmp_path / "plain", tmp_path / "audited"

    test, dev = read_output_at(after / "docs", "test"), read_output_at(after / "docs", "dev")
    assert test == [pair for pair in read_output_at(before / "docs", "test") if pair != DRAW_P2] and len(test) == 2
    assert dev == [("Insert Chart", "Diagramm einfügen")]
    for name, pairs in (("test", test), ("dev", dev)):  # the tagged copy follows, line for line
        tagged = read_output_at(after / "docs", f"{name}.tagged")
        assert len(tagged) == len(pairs) and all(DRAW_P2[0] not in en and CHART_P1[0] not in en for en, _ in tagged)

    # Still held out: never trained on, and the shared page's variant of the Draw pair still left training.
    train = read_output_at(after / "docs", "train")
    assert DRAW_P2 not in train and CHART_P1 not in train and not any("Delete" in en for en, _ in train)
    for name in [n for n in OUTPUTS if n not in ("docs-test", "docs-dev")] + ["docs/train", "docs/train.tagged"]:
        directory, prefix = OUTPUTS.get(name) or name.split("/")
        for language in ("en", "de"):
            file = f"{directory}/{prefix}.{language}.gz"
            assert (after / file).read_bytes() == (before / file).read_bytes(), file
    assert report["training"] == plain["training"]
    assert report["held_out_near_training"] == plain["held_out_near_training"]

    assert report["held_out"]["docs-test"] == {**plain["held_out"]["docs-test"], "pairs": 2, "audit_mismatch": 1,
                                               "audit_reasons": {"rewritten": 1}}
    assert report["held_out"]["docs-dev"]["audit_reasons"] == {"extra": 1}
    assert report["held_out"]["docs-dev"]["pairs"] == 1
    assert "audit_mismatch" not in plain["held_out"]["docs-test"]
    card = json.loads((after / "docs" / CARD_JSON).read_text(encoding="utf-8"))
    assert card["held_out"] == {
        "docs-test": {"sections": list(DOCS_HELD_OUT["docs-test"]), "pairs": 2, "audit_dropped": {"rewritten": 1}},
        "docs-dev": {"sections": list(DOCS_HELD_OUT["docs-dev"]), "pairs": 1, "audit_dropped": {"extra": 1}}}
    assert card["audit_list"] == str(listed.resolve())  # outside the work tree: named in full
    markdown = (after / "docs" / CARD_MD).read_text(encoding="utf-8")
    test_sections = "`libreoffice-help:text/sdraw`, `gnome-user-docs:system-admin-guide`"
    assert f"| docs-test | {test_sections} | 2 | 1 (1 rewritten) |" in markdown
    assert "| docs-dev | `libreoffice-help:text/schart` | 1 | 1 (1 extra) |" in markdown
    unaudited = (before / "docs" / CARD_MD).read_text(encoding="utf-8")
    assert f"| docs-test | {test_sections} | 3 | not audited |" in unaudited
    assert "no audit list was applied" in unaudited


def test_a_listed_pair_that_matches_nothing_fails_the_build_naming_the_file_and_the_hash(inputs, packages, tmp_path):
    gone = ("Draws a curved line.", "Zeichnet eine Kurve.")  # on no page
    stale = write_list(tmp_path / "stale.tsv", [row("docs-test", DRAW_P2), row("docs-test", gone),
                                                row("docs-test", CHART_P1)])  # Chart's pair is docs-dev's
    with pytest.raises(MismatchListError) as error:
        build(inputs, packages, tmp_path / "out", stale)
    message = str(error.value)
    assert message.startswith(f"{stale}: 2 listed pair(s) match no pair of their held-out set")
    assert f"line 4: docs-test {side_sha1(gone[0])} {side_sha1(gone[1])} (rewritten)" in message
    assert f"line 5: docs-test {side_sha1(CHART_P1[0])} {side_sha1(CHART_P1[1])}" in message
    assert not (tmp_path / "out" / REPORT).exists()  # nothing written: a stale list never passes silently


def test_the_committed_list_fails_a_build_without_the_audited_manuals(inputs, packages, tmp_path):
    """The default list names GNOME's and the real LibreOffice pages: against other packages it is stale."""
    with pytest.raises(MismatchListError, match=re.escape(str(HELD_OUT_MISMATCH)) + ": 47 listed pair"):
        build(inputs, packages, tmp_path / "out", HELD_OUT_MISMATCH)
    assert DocsOptions().mismatches == HELD_OUT_MISMATCH  # what nmt build-data applies


def test_the_command_line_takes_the_committed_audit_another_list_or_none(tmp_path):
    import argparse

    from training.build_data import add_arguments, docs_options

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    assert docs_options(parser.parse_args([])).mismatches == HELD_OUT_MISMATCH
    assert docs_options(parser.parse_args(["--docs-audit", "none"])).mismatches is None
    own = tmp_path / "own.tsv"
    assert docs_options(parser.parse_args(["--docs-audit", str(own)])).mismatches == own
    assert docs_options(parser.parse_args(["--no-docs", "--docs-audit", "none"])) is None
