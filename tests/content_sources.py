"""Where the files of the content sweep (``tests/content_sweep.py``) come from: Debian packages that
are not installed here (fetched with ``apt-get download``), pinned PyPI sdists (``pip download
--no-binary :all:``), and what is made from them (DOCX by LibreOffice, XLIFF by translate-toolkit,
English gettext templates from German ``.mo`` catalogues).

Nothing here is fetched or run at import time: the module only describes the sources. Every pick
is a glob inside one unpacked package or sdist; its candidates are sorted, filtered (size, a
pattern the text must match, ...) and ``n`` of them drawn with a seed made of ``SEED`` and the
pick's label, so the same sources give the same files. A file taken by an earlier pick is not
taken again (the HTML pages converted to DOCX and XLIFF are other pages than those taken as HTML).

None of these is a package of the documentation corpus the model was trained on
(training/docs/sources.py) nor one held back for outside checks (EXCLUDED below). The gettext
catalogues of grep, tar and coreutils are among the training catalogues of
training/gettext_catalogues.py (the model has seen their German), sed's is a dev catalogue and
wget's a held-out test catalogue: the sweep checks what the output keeps, not its quality.
"""
from __future__ import annotations

import fnmatch
from dataclasses import dataclass

SEED = 1129
MAX_BYTES = 40_000    # a file taken whole is smaller than this
TEXT_BYTES = 16_000   # plain text: whole paragraphs from the start up to this many bytes
MESSAGES = 150        # messages per catalogue: those with the most placeholders and options first

# Held back for outside checks, or read by the documentation corpus: never fetched here.
EXCLUDED = ("gimp-help*", "kicad-doc*", "debian-faq*", "lilypond-doc*", "linuxcnc-doc*",
            "libreoffice-help-*", "gnome-user-docs", "debian-reference-*", "developers-reference*", "maint-guide*",
            "debian-handbook", "debian-edu-doc-*")

# Debian packages (the version is whatever the archive has; the manifest records it).
DEBS = ("gettext-doc", "bash-doc", "diffutils-doc", "m4-doc", "flex-doc", "libgcrypt20-doc", "gnutls-doc",
        "python3.11-doc", "libtool-doc", "coreutils", "grep", "sed", "tar", "wget")

# PyPI sdists, pinned.
SDISTS = {"Markdown": "3.7", "pymdown-extensions": "10.12", "mkdocs": "1.6.1", "Django": "4.2.16",
          "Sphinx": "7.4.7", "webvtt-py": "0.5.1", "pysrt": "1.1.2", "srt": "3.5.3", "python-docx": "1.1.2"}

# How a picked file becomes an input of the sweep.
COPY = "copy"            # as it is
TEXT = "text"            # plain text, gunzipped, capped at TEXT_BYTES in whole paragraphs, named .txt
CATALOGUE = "catalogue"  # a .po/.pot as it is, or its first MESSAGES messages by placeholders and options
TEMPLATE = "template"    # a German .mo made into an English template (msgunfmt, msgstr emptied, c-format flags)
DOCX = "docx"            # an HTML page converted by LibreOffice (soffice --convert-to docx)
XLIFF = "xliff"          # an HTML page through translate-toolkit: html2po, then po2xliff (XLIFF 1.1)


@dataclass(frozen=True)
class Pick:
    """``n`` files (0: all) of ``origin`` ("deb:NAME" or "sdist:NAME") whose path below the unpacked
    root matches ``pattern`` (fnmatch: ``*`` crosses folders), made into ``fmt`` inputs by ``make``.

    ``first`` are taken before the seeded draw; ``need`` names a test of the file's text (see
    ``NEEDS`` in content_sweep.py); ``skip`` globs of names left out; ``as_ext`` renames the
    input's extension (a Markdown test file named .txt, a template .po)."""

    fmt: str
    origin: str
    pattern: str
    n: int = 0
    make: str = COPY
    first: tuple[str, ...] = ()
    need: str = ""
    skip: tuple[str, ...] = ()
    min_bytes: int = 200
    max_bytes: int = MAX_BYTES
    as_ext: str = ""

    @property
    def label(self) -> str:
        return f"{self.fmt}:{self.make}:{self.origin}:{self.pattern}"

    def matches(self, relative: str) -> bool:
        name = relative.rsplit("/", 1)[-1]
        return fnmatch.fnmatchcase(relative, self.pattern) and not any(fnmatch.fnmatchcase(name, s) for s in self.skip)


TEXINFO = {  # makeinfo's split manuals: navigation lines (&nbsp;), <code>, <kbd>, <samp>, <var>, <pre>
    "diffutils-doc": "usr/share/doc/diffutils/*.html",
    "m4-doc": "usr/share/doc/m4/*.html",
    "flex-doc": "usr/share/doc/flex-doc/html/*.html",
    "libgcrypt20-doc": "usr/share/doc/libgcrypt20-doc/html/*.html",
}
TEXI2HTML = "usr/share/doc/gettext/gettext_*.html"  # gettext's manual, by texi2html 1.78a
SPHINX = "usr/share/doc/python3.11/html/*.html"     # Python's documentation (Sphinx; &copy; footers, <kbd>)
SPHINX_SKIP = ("genindex*", "search.html", "py-modindex.html", "contents.html", "index.html")
NOT_FIXTURES = ("invalid*", "missing*", "empty*", "no_*", "no-captions*")  # deliberately broken test files

PICKS = (
    # 1. HTML manuals of packages not installed here.
    Pick("html", "deb:gettext-doc", TEXI2HTML, 2, min_bytes=2_000),
    Pick("html", "deb:gettext-doc", "usr/share/doc/gettext/javadoc2/*.html", 1, need="no-charset", min_bytes=2_000),
    Pick("html", "deb:gettext-doc", "usr/share/doc/gettext/csharpdoc/*.html", 1, need="no-charset",
         min_bytes=2_000),
    Pick("html", "deb:bash-doc", "usr/share/doc/bash/examples/INDEX.html", 1, need="no-charset"),
    *(Pick("html", f"deb:{package}", pattern, 2, min_bytes=2_000) for package, pattern in TEXINFO.items()),
    Pick("html", "deb:gnutls-doc", "usr/share/doc/gnutls-doc/api-reference/*.html", 1, min_bytes=2_000),
    Pick("html", "deb:python3.11-doc", SPHINX, 3, skip=SPHINX_SKIP, min_bytes=2_000),
    # 2. Markdown with admonitions and footnotes.
    Pick("markdown", "sdist:Markdown", "docs/*.md", 5, first=("docs/extensions/admonition.md",
                                                             "docs/extensions/footnotes.md"),
         need="admonition-or-footnote"),
    Pick("markdown", "sdist:Markdown", "tests/extensions/extra/footnote.txt", 1, as_ext=".md"),
    Pick("markdown", "sdist:pymdown-extensions", "docs/src/markdown/*.md", 4,
         first=("docs/src/markdown/extensions/details.md",), need="admonition-or-footnote"),
    # 3. Gettext catalogues.
    *(Pick("po", "sdist:Django", f"django/{path}/locale/en/LC_MESSAGES/{name}", 1, make=CATALOGUE, max_bytes=10**7)
      for path, name in (("conf", "django.po"), ("contrib/admin", "django.po"), ("contrib/admin", "djangojs.po"),
                         ("contrib/auth", "django.po"), ("contrib/humanize", "django.po"),
                         ("contrib/admindocs", "django.po"))),
    Pick("po", "sdist:Sphinx", "sphinx/locale/sphinx.pot", 1, make=CATALOGUE, max_bytes=10**7),
    Pick("po", "sdist:mkdocs", "mkdocs/themes/mkdocs/messages.pot", 1, make=CATALOGUE),
    *(Pick("po", f"deb:{package}", f"usr/share/locale/de/LC_MESSAGES/{package}.mo", 1, make=TEMPLATE,
           max_bytes=10**7, as_ext=".pot")
      for package in ("grep", "sed", "tar", "coreutils", "wget")),
    # 4. DOCX: LibreOffice's from manual pages, and those Word wrote that python-docx ships as test data.
    *(Pick("docx", f"deb:{package}", pattern, 2 if package == "m4-doc" else 1, make=DOCX, min_bytes=2_000)
      for package, pattern in TEXINFO.items()),
    Pick("docx", "deb:gettext-doc", TEXI2HTML, 1, make=DOCX, min_bytes=2_000),
    Pick("docx", "deb:python3.11-doc", SPHINX, 1, make=DOCX, skip=SPHINX_SKIP, min_bytes=2_000),
    Pick("docx", "sdist:python-docx", "features/steps/test_files/*.docx", 4, need="docx-words",
         first=("features/steps/test_files/par-hlink-frags.docx", "features/steps/test_files/par-hyperlinks.docx")),
    # 5. Subtitles: the test data of subtitle libraries, those that parse (not the deliberately broken).
    Pick("srt", "sdist:pysrt", "tests/static/*.srt", need="subtitles", skip=NOT_FIXTURES),
    Pick("srt", "sdist:webvtt-py", "tests/samples/*.srt", need="subtitles", skip=NOT_FIXTURES, min_bytes=20),
    Pick("srt", "sdist:srt", "srt_tools/tests/files/*.srt", need="subtitles", min_bytes=20),
    Pick("vtt", "sdist:webvtt-py", "tests/samples/*.vtt", need="subtitles", skip=NOT_FIXTURES, min_bytes=20),
    # 6. XLIFF 1.1 by translate-toolkit from manual pages.
    *(Pick("xliff", f"deb:{package}", pattern, 1, make=XLIFF, min_bytes=2_000) for package, pattern in TEXINFO.items()),
    Pick("xliff", "deb:gettext-doc", TEXI2HTML, 1, make=XLIFF, min_bytes=2_000),
    Pick("xliff", "deb:python3.11-doc", SPHINX, 1, make=XLIFF, skip=SPHINX_SKIP, min_bytes=2_000),
    # 7. Plain text: READMEs, NEWS, a FAQ, a tab-separated index, reStructuredText sources.
    Pick("txt", "deb:coreutils", "usr/share/doc/coreutils/README.gz", make=TEXT),  # the bare list of programs
    Pick("txt", "deb:coreutils", "usr/share/doc/coreutils/TODO.gz", make=TEXT),
    Pick("txt", "deb:grep", "usr/share/doc/grep/README", make=TEXT),
    Pick("txt", "deb:grep", "usr/share/doc/grep/NEWS.gz", make=TEXT),
    Pick("txt", "deb:sed", "usr/share/doc/sed/sedfaq.txt.gz", make=TEXT, max_bytes=10**6),
    Pick("txt", "deb:tar", "usr/share/doc/tar/NEWS.gz", make=TEXT),
    Pick("txt", "deb:libtool-doc", "usr/share/doc/libtool/README.gz", make=TEXT),
    Pick("txt", "deb:gettext-doc", "usr/share/doc/gettext/examples/README", make=TEXT),
    Pick("txt", "deb:bash-doc", "usr/share/doc/bash/examples/INDEX.txt", make=TEXT),
    Pick("txt", "deb:python3.11-doc", "usr/share/doc/python3.11/html/_sources/tutorial/*.rst.txt", 1, make=TEXT,
         min_bytes=2_000, max_bytes=TEXT_BYTES),
    Pick("txt", "sdist:Django", "docs/faq/*.txt", 1, make=TEXT, min_bytes=2_000, max_bytes=TEXT_BYTES),
)
