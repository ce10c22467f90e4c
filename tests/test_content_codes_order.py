"""A list of codes comes back in source order (``worker.formats.markup._in_list_order``).

Python's getpass page (Debian's python3.11-doc, ``library/getpass.html``) says "This function checks
the environment variables LOGNAME, USER, LNAME and USERNAME, in order", each name a ``<code>`` after
an index target. ``models/en-de`` drops one comma and aligns the comma after USERNAME to the comma
after USER; each code follows the word it is aligned to, and the list came back as
``LOGNAME USER USERNAME, LNAME und``."""
from __future__ import annotations

import html
import re
from pathlib import Path

from worker.formats import parse

from .conftest import REPO_ROOT, run_nmt
from .content_check import check_file

BUNDLE = REPO_ROOT / "models" / "en-de"


def _code(name: str) -> str:
    return f'<code class="xref std std-envvar docutils literal notranslate"><span class="pre">{name}</span></code>'


def _target(number: int) -> str:
    return f'<span class="target" id="index-{number}"></span>'


GETPASS = (f"<p>This function checks the environment variables {_target(0)}{_code('LOGNAME')},\n"
           f"{_target(1)}{_code('USER')}, {_target(2)}{_code('LNAME')} and {_target(3)}{_code('USERNAME')}, "
           "in order, and\nreturns the value of the first one which is set to a non-empty string.</p>")
# what models/en-de makes of the paragraph's text (its codes taken out), and its alignment, as word
# indexes (source, target) of the words split at whitespace: "variables , , and , in" -> "Variablen, , und befehl,"
MODEL = "Diese Funktion überprüft die Umgebung Variablen, , und befehl, um den Wert der ersten Rückgabe der erste, " \
    "die zu einer nicht leeren Zeichenkette verwendet werden."
MODEL_PAIRS = [(0, 0), (1, 1), (2, 2), (3, 3), (4, 4), (5, 5), (7, 6), (8, 7), (9, 6), (11, 8), (13, 11), (14, 12),
               (15, 11), (16, 12), (17, 15), (18, 13), (18, 16), (20, 17), (23, 18), (24, 19), (25, 21), (26, 22)]


def _words(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in re.finditer(r"\S+", text)]


def _codes(page: str) -> list[str]:
    return re.findall(r'<span class="pre">([^<]*)</span>', page)


def _render(paragraph: str, translation: str, pairs: list[tuple[int, int]]) -> tuple[str, list[str]]:
    parsed = parse("html", paragraph)
    s, t = _words(parsed.units[0].text), _words(translation)
    out = parsed.render([translation], [[(s[a], t[b]) for a, b in pairs]])
    return out, parsed.notes.get(0, [])


def test_a_list_of_codes_keeps_its_order_where_the_model_moves_its_commas():
    out, notes = _render(GETPASS, MODEL, MODEL_PAIRS)
    assert _codes(out) == ["LOGNAME", "USER", "LNAME", "USERNAME"]
    # the items the translation gives one gap are parted by the source's commas; no space before a comma
    assert html.unescape(re.sub(r"<[^>]*>", "", out)).startswith(
        "Diese Funktion überprüft die Umgebung Variablen, LOGNAME, USER, LNAME, USERNAME und befehl,")
    assert any("codes placed in source order" in note and '"LNAME"' in note for note in notes)


def test_a_list_in_order_is_left_as_it_is_and_noted_nowhere():
    # "variables , , and , in" -> "Variablen , , und , in": each separator aligned to its own twin
    translation = "Die Variablen , , und , in dieser Reihenfolge."
    out, notes = _render("<p>The variables <code>A</code>, <code>B</code>, <code>C</code> and <code>D</code>, "
                         "in this order.</p>", translation, [(0, 0), (1, 1), (2, 2), (3, 3), (4, 4), (5, 5), (6, 6),
                                                              (7, 8), (8, 7)])
    assert re.sub(r"</?code>", "", out) == "<p>Die Variablen A, B, C und D, in dieser Reihenfolge.</p>"
    assert not notes


def test_codes_spread_over_the_sentence_come_back_in_the_source_order():
    # "(` and ') are used" placed by alignment as "' werden die Standardzeichen ` und": the codes out of
    # the source's order are moved beside the words they stood by, in order, with a note
    out, notes = _render("<p>If both are missing, the default quotes (<code>`</code> and <code>'</code>) are used.</p>",
                         "Wenn beide fehlen, werden die Standardzeichen und verwendet.",
                         [(0, 0), (1, 1), (2, 2), (3, 2), (4, 4), (5, 5), (6, 5), (8, 6), (10, 3), (11, 7)])
    assert re.findall(r"<code>(.)</code>", out) == ["`", "'"] and notes


def test_getpass_page_comes_back_with_its_list_of_variables_in_order(tmp_path):
    source = tmp_path / "getpass.html"
    source.write_text(f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>getpass</title></head>"
                      f"<body>\n{GETPASS}\n</body></html>\n", encoding="utf-8")
    done = run_nmt("translate", "--bundle", str(BUNDLE), "--out", str(tmp_path / "out"), str(source))
    assert done.returncode == 0, done.stderr
    output = tmp_path / "out" / "getpass.de.html"
    assert _codes(output.read_text(encoding="utf-8")) == ["LOGNAME", "USER", "LNAME", "USERNAME"]
    found = [f for f in check_file("html", source.read_bytes(), output.read_bytes()) if f.check == "code"]
    assert not found, found
