"""Help pages and Debian packages made in the tests of the documentation corpus
(tests/test_docs_corpus.py, tests/test_build_data.py): a LibreOffice XHTML page, and a real .deb
built with dpkg-deb into the package cache that ``training.docs.packages.fetch`` reads first."""
from __future__ import annotations

import subprocess
from pathlib import Path

LO_PAGE = """<!DOCTYPE html>
<html lang="{lang}"><head><title>t</title><script>var x = "not text";</script></head><body>
<header id="TopLeftHeader"><p>LibreOffice Help</p></header>
<div id="DisplayArea">
<h1 id="hd_id1">{title}</h1>
{paragraphs}
<div id="DEBUG" class="debug"><p id="par_debug">text/shared/01/x.xhp</p></div>
</div></body></html>
"""


def lo_page(path: Path, lang: str, title: str, paragraphs: dict[str, str]) -> Path:
    body = "\n".join(f'<p id="{key}" class="paragraph">{text}</p>' for key, text in paragraphs.items())
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(LO_PAGE.format(lang=lang, title=title, paragraphs=body), encoding="utf-8")
    return path


def make_deb(tmp_path: Path, name: str, files: dict[str, str]) -> Path:
    """A real .deb of ``files`` (path -> text) with a copyright file, built with dpkg-deb."""
    tree = tmp_path / "build" / name
    (tree / "DEBIAN").mkdir(parents=True)
    (tree / "DEBIAN" / "control").write_text(f"Package: {name}\nVersion: 1:7.4-1\nArchitecture: all\n"
                                             "Maintainer: Test <t@example.org>\nDescription: test\n")
    copyright = tree / "usr" / "share" / "doc" / name / "copyright"
    copyright.parent.mkdir(parents=True)
    copyright.write_text("Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n\n"
                         "Files: *\nLicense: MPL-2.0\n")
    for path, text in files.items():
        (tree / path).parent.mkdir(parents=True, exist_ok=True)
        (tree / path).write_text(text, encoding="utf-8")
    cache = tmp_path / "packages"
    cache.mkdir(exist_ok=True)
    deb = cache / f"{name}_7.4-1_all.deb"
    subprocess.run(["dpkg-deb", "--root-owner-group", "--build", str(tree), str(deb)], check=True, capture_output=True)
    return deb
