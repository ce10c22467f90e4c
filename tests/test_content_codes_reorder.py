"""Codes with words of the sentence between them come back in source order where the alignment can
place them so (``worker.formats.markup._points_in_order``), and a code that names the noun after it
goes with that noun wherever the model puts it.

The model never sees a code: it translates the sentence without it, and each code goes where the
alignment puts the words beside it, before the target of the next aligned word. Where the model moves
that word (a German verb to the end of its clause), the code went with it, past the codes after it.
The strings are those of the content sweep (``tests/content_sweep.py``): ``models/en-de``'s
translations of real sentences of m4's, libgcrypt's and gettext's manuals and of pymdown-extensions'
docs, with the alignment the format writers place markup by, as word indexes (source, target) of the
words split at whitespace."""
from __future__ import annotations

import html
import re

from worker.formats import parse
from worker.formats.markup import transfer
from worker.formats.model import Tag

from .conftest import REPO_ROOT, run_nmt
from .content_check import check_file

BUNDLE = REPO_ROOT / "models" / "en-de"

# m4's manual, Esyscmd.html: "the <var>shell-command</var> will be used" -> "die ... Shell verwendet werden": the
# code went before "verwendet" (the next aligned word, "used"), after the two codes that follow it in the source
ESYSCMD = ('<p>By default, the <var>shell-command</var> will be used as the argument to '
           'the\n<samp>-c</samp> option of the <code>/bin/sh</code> shell (or the version '
           'of\n<code>sh</code> specified by &lsquo;<samp>command -p getconf PATH</samp>&rsquo;, if your '
           'system\nsupports that).</p>')
ESYSCMD_MODEL = ('Die Vorgabe, die das Argument als die Option der Shell verwendet werden, die die Version '
                 'des angegebenen Versions angegeben werden, wenn Sie Ihre System unterstützen.')
ESYSCMD_PAIRS = [(0, 0), (1, 1), (2, 2), (5, 10), (6, 5), (7, 3), (8, 4), (10, 6), (11, 7), (13, 8), (14, 9),
                 (15, 12), (16, 13), (17, 14), (18, 15), (19, 16), (22, 20), (23, 21), (23, 22), (24, 23), (25, 24)]
# m4's manual, Changequote.html: "realizing <code>expand</code> uses" -> "realisiert, die ... zu verwenden"
CHANGEQUOTE = ('<p>The trick is realizing <code>expand</code> uses\n&lsquo;<samp>$1</samp>&rsquo; '
               'unquoted, to trigger its expansion using the normal quoting\ncharacters, but uses extra '
               'parentheses to group unquoted commas that\noccur in the expansion without consuming '
               'whitespace following those\ncommas.</p>')
CHANGEQUOTE_MODEL = ('Der Trick ist realisiert, die Anführungszeichen zu verwenden, um ihre '
                     'Ausführungsangaben zu normalisieren, um die normale Zeichensätze zu verwenden, aber '
                     'benutzen Sie die zusätzliche Eltern-Gruppen, um die Einführungsgruppen zu '
                     'konsummieren, die in der Ändern der weißen Leichtlinien begabt werden.')
CHANGEQUOTE_PAIRS = [(0, 0), (1, 1), (2, 2), (3, 3), (4, 7), (5, 5), (6, 8), (7, 10), (8, 9), (9, 10), (11, 14),
                     (12, 15), (13, 15), (14, 16), (15, 19), (16, 18), (16, 20), (17, 23), (18, 24), (19, 24),
                     (19, 25), (20, 23), (21, 27), (22, 27), (22, 28), (23, 30), (25, 31), (26, 32), (29, 29),
                     (30, 33), (30, 34), (30, 35), (31, 33), (33, 36), (33, 37)]
# libgcrypt's manual, EC-functions.html: "in <var>point</var> and store" -> "in den Laden laden" ("store" -> "Laden")
AFFINE = ('<p>Compute the affine coordinates from the projective coordinates in\n<var>point</var> and '
          'store them into <var>x</var> and <var>y</var>.</p>')
AFFINE_MODEL = 'Die Kündlerin von der Projekte aus dem Projekt, in denen sie und in den Laden laden.'
AFFINE_PAIRS = [(0, 1), (1, 0), (2, 1), (3, 1), (4, 2), (4, 5), (5, 3), (5, 6), (6, 4), (6, 7), (7, 4), (10, 14),
                (11, 10), (12, 12), (13, 11)]


def _words(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in re.finditer(r"\S+", text)]


def _render(fmt: str, document: str, translation: str, pairs: list[tuple[int, int]]) -> tuple[str, list[str]]:
    parsed = parse(fmt, document)
    s, t = _words(parsed.units[0].text), _words(translation)
    out = parsed.render([translation], [[(s[a], t[b]) for a, b in pairs]])
    return out, parsed.notes.get(0, [])


def _codes(page: str) -> list[str]:
    found = re.findall(r"<(?:code|var|samp)>(.*?)</(?:code|var|samp)>", page)
    return [html.unescape(re.sub(r"<[^>]*>", "", code)) for code in found]


def _text(page: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]*>", "", page)).split())


def test_a_code_the_model_s_verb_carried_off_goes_after_the_word_before_it():
    out, notes = _render("html", ESYSCMD, ESYSCMD_MODEL, ESYSCMD_PAIRS)
    assert _codes(out) == ["shell-command", "-c", "/bin/sh", "sh", "command -p getconf PATH"]
    assert _text(out).startswith("Die Vorgabe, die shell-command das Argument als die -c Option der /bin/sh Shell "
                                 "verwendet werden,")
    assert any('"shell-command"' in note and "source's order" in note for note in notes)


def test_a_subject_code_goes_after_the_word_before_it_where_its_verb_moved_past_the_next_code():
    out, notes = _render("html", CHANGEQUOTE, CHANGEQUOTE_MODEL, CHANGEQUOTE_PAIRS)
    assert _codes(out) == ["expand", "$1"]
    assert _text(out).startswith("Der Trick ist realisiert, expand die ‘$1’ Anführungszeichen zu verwenden,")
    assert any('"expand"' in note for note in notes)


def test_codes_of_a_sentence_the_model_garbled_still_come_in_source_order():
    out, _ = _render("html", AFFINE, AFFINE_MODEL, AFFINE_PAIRS)
    assert _codes(out) == ["point", "x", "y"]


def test_codes_in_order_and_codes_at_the_edges_are_left_where_they_are_and_noted_nowhere():
    # the model moves "kopiert" before "nach", the code after "to" goes before the target of "by": the codes
    # still follow one another as in the source, so nothing moves and nothing is noted
    out, notes = _render("html", "<p><code>a</code> is copied to <code>b</code> by <code>cp</code></p>",
                         "wird kopiert nach durch", [(0, 0), (1, 1), (2, 2), (3, 3)])
    assert out == "<p><code>a</code> wird kopiert nach <code>b</code> durch <code>cp</code></p>" and not notes


def test_quoted_codes_with_a_conjunction_between_them_keep_their_order():
    # "the default quotes (` and ') are used" -> "werden die Standardzeichen und verwendet": "'" went before
    # "werden", the target of "are"; it may go after "und", the target of "and" before it
    out, notes = _render("html", "<p>If both are missing, the default quotes (<code>`</code> and <code>'</code>) "
                                 "are used.</p>",
                         "Wenn beide fehlen, werden die Standardzeichen und verwendet.",
                         [(0, 0), (1, 1), (2, 2), (3, 2), (4, 4), (5, 5), (6, 5), (8, 6), (10, 3), (11, 7)])
    assert out == "<p>Wenn beide fehlen, werden die Standardzeichen <code>`</code> und <code>'</code> verwendet.</p>"
    assert notes


def test_docx_code_runs_keep_their_order():
    # gettext's manual (gettext_3.html through LibreOffice), a paragraph's first sentence: code runs (character
    # style SourceText, Example) are point tags; "of the H from the word 'Here' over the f from the word 'for'"
    # -> "des Wortes aus dem Wort »« des Wortes aus dem Wort zu werfen": the runs came back as H f Here for
    source = ("In this example, the empty string is used on the first line, to allow better alignment of the from the "
              "word \u2018\u2019 over the from the word \u2018\u2019.")
    tags = [Tag("\ue010p0\ue011", "", 94, 94, (True, True)), Tag("\ue010p1\ue011", "", 109, 109),
            Tag("\ue010p2\ue011", "", 120, 120, (True, True)), Tag("\ue010p3\ue011", "", 135, 135)]
    assert [source[t.start - 4:t.start] for t in tags] == ["the ", "rd \u2018", "the ", "rd \u2018"]
    translation = ("In diesem Beispiel verwendet die leere Zeichenkette auf der ersten Zeile, um eine bessere "
                   "Ausrichtung des Wortes aus dem Wort \u00bb\u00ab des Wortes aus dem Wort zu werfen.")
    pairs = [(0, 0), (1, 1), (2, 2), (3, 4), (4, 5), (5, 6), (7, 3), (8, 7), (9, 8), (10, 9), (11, 10), (12, 11),
             (14, 13), (15, 12), (15, 14), (20, 16), (23, 18), (24, 17), (25, 18), (26, 19), (26, 21), (26, 22),
             (27, 20)]
    s, t = _words(source), _words(translation)
    pieces, notes = transfer(source, tags, translation, [(s[a], t[b]) for a, b in pairs])
    order = [int(m) for m in re.findall("\ue010p(\\d)\ue011", "".join(p.text for p in pieces if p.markup))]
    assert order == [0, 1, 2, 3], order
    written = "".join(p.text for p in pieces)
    assert " ".join(re.sub("\ue010p\\d\ue011", " ", written).split()) == translation  # its words as they were
    assert "Ausrichtung des \ue010p0\ue011 Wortes" in written


PYMDOWN = ('And below is the JavaScript that will detect browsers that do not support `#!html '
           '<details><summary>` tags and apply\na `no-details` class to all details in those browsers. It '
           'will also attach a click event that will toggle the open\nstate. The CSS above will target the '
           '`no-details` class and the `open` attribute to hide/show the content of your\n`#!html '
           '<details>` tag. Just run the code after the HTML content is loaded.\n')
PYMDOWN_MODEL = ('Und unter unten ist die JavaScript, dass die Browsen nicht anträumt, und keine '
                 'Unterstützung für alle Details, die alle in den Blügern betreiben werden. Es wird auch '
                 'ein Klick an einer Klick-Klicke, die den Staat umschalten werden. Die CSS über die '
                 'Zielklasse wird das Ziel und dem Inhalt des Inhalts/höhnlich verstecken, um den Inhalt '
                 'des Tags zu verbergen. Nur die Code nach dem HTML-Bildschirm geladen ist.')
PYMDOWN_PAIRS = [(0, 0), (1, 2), (2, 3), (3, 4), (4, 5), (5, 6), (8, 8), (11, 9), (11, 12), (12, 13), (13, 10),
                 (14, 11), (16, 12), (17, 13), (18, 14), (19, 15), (20, 16), (21, 19), (22, 20), (23, 21), (23, 22),
                 (24, 24), (25, 25), (26, 26), (27, 29), (28, 27), (28, 30), (29, 28), (29, 31), (30, 29), (31, 32),
                 (33, 35), (34, 33), (35, 35), (36, 34), (37, 37), (38, 38), (39, 39), (40, 42), (41, 41), (42, 40),
                 (43, 41), (44, 45), (45, 43), (45, 46), (46, 44), (47, 45), (48, 49), (50, 53), (51, 54), (52, 54),
                 (53, 55), (54, 58), (56, 59), (57, 60), (58, 61), (59, 62), (60, 63), (61, 64), (63, 64)]


def test_a_word_spelled_alike_is_no_twin_where_the_model_links_it_to_another_form_of_the_word():
    # pymdown-extensions' details.md: "tags" (after the first code) and "Tags" (the model's translation of the
    # later "your ... tag.") are spelled alike, once each: taken for twins, the first code went to "Tags",
    # past the three codes after it
    out, _ = _render("markdown", PYMDOWN, PYMDOWN_MODEL, PYMDOWN_PAIRS)
    assert re.findall(r"`([^`]+)`", out) == ["#!html <details><summary>", "no-details", "no-details", "open",
                                            "#!html <details>"]
    assert "des\n`#!html <details>` Tags zu verbergen." in out or "des `#!html <details>` Tags" in " ".join(out.split())


FENCED = ('Note that the language name has been prefixed with `language-` and it has been assigned to the '
          '`class` attribute on\nthe `<code>` tag, which is the format suggested by the [HTML 5 '
          'Specification][html5] (see the second "example" in the\nSpecification). While `language` is the '
          'default prefix, the prefix may be overridden using the\n[`lang_prefix`](#lang_prefix) '
          'configuration option.\n\n[html5]: https://example.org/html5\n')
FENCED_MODEL = ('Es ist nicht, dass die Sprachename als Präfix verwendet wurde und es wurde auf dem Tag '
                'auf das Attribute aufgegeben, die das Format des HTML-Stifikators 5 Spec (Sechüttele) '
                '"Selegramm" in der "Seclein"). Während die Standard-Präfix ist, kann die Präfixe über die '
                'Konfigurationsoptionen überschreiben.')
FENCED_PAIRS = [(0, 0), (1, 3), (2, 4), (3, 5), (7, 7), (9, 10), (10, 11), (12, 12), (17, 13), (17, 16), (18, 14),
                (18, 17), (19, 15), (19, 18), (20, 20), (22, 21), (23, 22), (25, 23), (26, 23), (27, 24), (28, 25),
                (29, 26), (29, 27), (30, 27), (34, 29), (35, 30), (36, 31), (37, 32), (39, 33), (40, 34), (41, 34),
                (42, 37), (43, 38), (44, 36), (46, 42), (48, 40), (49, 41), (50, 41)]


def test_codes_that_name_the_noun_after_them_go_with_it_where_the_model_swaps_the_nouns():
    # Python-Markdown's fenced_code_blocks.md: "the `class` attribute on the `<code>` tag" -> "auf dem Tag auf
    # das Attribute": each code stays with its noun, though the two come back in the other order (the content
    # check counts this one; putting them in source order would give "das `class` `<code>` Attribute")
    out, notes = _render("markdown", FENCED, FENCED_MODEL, FENCED_PAIRS)
    assert "auf dem `<code>` Tag auf das `class` Attribute" in " ".join(out.split())
    assert not any("source's order" in note for note in notes)


def test_the_sweep_s_sentences_come_back_with_their_codes_in_order_through_the_shipped_model(tmp_path):
    source = tmp_path / "m4.html"
    source.write_text("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>m4</title></head><body>\n"
                      f"{ESYSCMD}\n{CHANGEQUOTE}\n{AFFINE}\n</body></html>\n", encoding="utf-8")
    done = run_nmt("translate", "--bundle", str(BUNDLE), "--out", str(tmp_path / "out"), str(source))
    assert done.returncode == 0, done.stderr
    output = (tmp_path / "out" / "m4.de.html").read_text(encoding="utf-8")
    assert _codes(output) == ["shell-command", "-c", "/bin/sh", "sh", "command -p getconf PATH", "expand", "$1",
                              "point", "x", "y"]
    found = [f for f in check_file("html", source.read_bytes(), output.encode()) if f.check == "code"]
    assert not found, found
