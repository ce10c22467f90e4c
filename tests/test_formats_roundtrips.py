"""Round trips through translate-toolkit's converters and gettext's checker on real files of this
machine's Debian packages (a German catalogue made into PO with msgunfmt, libffi's HTML manual):
po2xliff -> nmt translate -> xliff2po -> msgfmt -c, and html2po -> nmt translate -> po2html
keeping every tag. Also XLIFF's xml:space="preserve", which po2xliff sets on every unit: line
breaks and the whitespace at a text's edges stay."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import polib
import pytest

from worker.formats import parse

from .conftest import run_nmt

CATALOGUE = Path("/usr/share/locale/de/LC_MESSAGES/gettext-runtime.mo")
MANUAL = Path("/usr/share/doc/libffi8/html/The-Basics.html")

PRESERVED = '''<?xml version="1.0" encoding="UTF-8"?>
<xliff xmlns="urn:oasis:names:tc:xliff:document:1.1" version="1.1">
  <file original="app.po" source-language="en-US" datatype="plaintext">
    <body>
      <trans-unit xml:space="preserve" id="1">
        <source>Usage: %s [OPTION] [[TEXTDOMAIN] MSGID]
Display native language translation of a textual message.

  -h, --help     display this help and exit
</source>
        <target></target>
      </trans-unit>
      <trans-unit id="2">
        <source>  A dog
   runs home.  </source>
      </trans-unit>
    </body>
  </file>
</xliff>
'''
PRESERVED_2 = '''<?xml version="1.0" encoding="UTF-8"?>
<xliff xmlns="urn:oasis:names:tc:xliff:document:2.0" version="2.0" srcLang="en" trgLang="de">
  <file id="f1">
    <unit id="u1" xml:space="preserve">
      <segment><source>
  The first line, <pc id="1">in bold</pc>.
  The second line.
</source></segment>
    </unit>
  </file>
</xliff>
'''


def words(text: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]


def shouted(parsed) -> str:
    return parsed.render([u.text.upper() for u in parsed.units],
                         [list(zip(words(u.text), words(u.text))) for u in parsed.units])


def targets(xliff: str) -> list[str]:
    return re.findall(r"<target[^>]*>(.*?)</target>", xliff, re.S)


def test_preserved_units_keep_line_breaks_and_edge_whitespace_and_default_units_collapse():
    parsed = parse("xliff", PRESERVED)
    help_text, plain = parsed.units
    assert help_text.text.count("\n") == 3 and help_text.text.startswith("Usage:") and help_text.text.endswith("exit")
    assert plain.text == "A dog runs home."
    first, second = targets(shouted(parsed))
    source = re.search(r"<source>(.*?)</source>", PRESERVED, re.S).group(1)
    assert first == source.upper()  # every line break and leading space where it was, the final newline too
    assert second == "A DOG RUNS HOME."
    out = targets(shouted(parse("xliff", PRESERVED_2)))
    assert out == ['\n  THE FIRST LINE, <pc id="1">IN BOLD</pc>.\n  THE SECOND LINE.\n']


def _tool(name: str) -> str:
    """A converter of translate-toolkit (installed beside this Python) or a system tool."""
    path = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed (translate-toolkit from PyPI, gettext from Debian)")
    return path


def _run(*args: str) -> None:
    done = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]


@pytest.mark.slow
def test_po2xliff_nmt_xliff2po_passes_msgfmt_check_on_a_real_catalogue(tmp_path):
    if not CATALOGUE.exists():
        pytest.skip(f"no {CATALOGUE}")
    _run(_tool("msgunfmt"), str(CATALOGUE), "-o", str(tmp_path / "full.po"))
    catalogue = polib.pofile(str(tmp_path / "full.po"))
    for entry in catalogue:  # a template: every message to translate
        entry.msgstr, entry.msgstr_plural = "", {k: "" for k in entry.msgstr_plural}
    catalogue.save(str(tmp_path / "app.po"))
    _run(_tool("po2xliff"), str(tmp_path / "app.po"), str(tmp_path / "app.xlf"))
    done = run_nmt("translate", "--device", "cpu", str(tmp_path / "app.xlf"), "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr[-2000:]
    _run(_tool("xliff2po"), str(tmp_path / "out" / "app.de.xlf"), str(tmp_path / "app.de.po"))
    _run(_tool("msgfmt"), "-c", "--use-fuzzy", "-o", str(tmp_path / "app.de.mo"), str(tmp_path / "app.de.po"))
    translated = [e for e in polib.pofile(str(tmp_path / "app.de.po")) if e.msgstr]
    multiline = [e for e in translated if e.msgid.count("\n") > 1]
    assert len(translated) == len([e for e in catalogue if not e.msgid_plural]) and len(multiline) >= 5
    for entry in multiline:  # the --help texts stay multi-line, line for line
        assert entry.msgstr.count("\n") == entry.msgid.count("\n"), entry.msgid


@pytest.mark.slow
def test_html2po_nmt_po2html_keeps_every_tag_of_a_real_manual_page(tmp_path):
    if not MANUAL.exists():
        pytest.skip(f"no {MANUAL}")
    _run(_tool("html2po"), str(MANUAL), str(tmp_path / "page.po"))
    done = run_nmt("translate", "--device", "cpu", str(tmp_path / "page.po"), "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr[-2000:]
    _run(_tool("po2html"), "--fuzzy", "-t", str(MANUAL), str(tmp_path / "out" / "page.de.po"),
         str(tmp_path / "page.de.html"))
    source, out = MANUAL.read_text(encoding="utf-8"), (tmp_path / "page.de.html").read_text(encoding="utf-8")

    def tags(text: str) -> Counter:
        return Counter(m.group(1).lower() for m in re.finditer(r"<(/?[A-Za-z][\w-]*)", text))

    assert tags(out) == tags(source) and tags(source)["a"] >= 10 and tags(source)["code"] >= 10
    assert out != source
