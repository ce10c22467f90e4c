"""Real files come back with their content intact: ``tests/content_check.py`` finds nothing in

- pages of a texinfo manual (libffi's, made by makeinfo and installed by Debian: navigation lines
  with ``&nbsp;``, ``<code>``, ``<var>``, ``<pre>``, index links),
- GNU grep's catalogue (an English template of the German ``grep.mo`` installed here: options,
  column layout, printf directives),
- Django's English source catalogues (``conf/locale/en``, the admin's ``django.po`` and
  ``djangojs.po`` with plural forms and ``%(name)s`` placeholders, from the installed Django),

each translated by ``nmt translate`` with the shipped model; for the catalogues that includes
``msgfmt -c --check-format --use-fuzzy``. Where a file is not on the machine the test says so and
skips."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from .conftest import REPO_ROOT, run_nmt
from .content_check import check_file

BUNDLE = REPO_ROOT / "models" / "en-de"
TEXINFO = Path("/usr/share/doc/libffi8/html")
PAGES = ("The-Basics.html", "Simple-Example.html", "Structures.html", "Index.html")
GREP_MO = Path("/usr/share/locale/de/LC_MESSAGES/grep.mo")


def _translated(tmp_path: Path, sources: list[Path]) -> dict[Path, Path]:
    inputs = tmp_path / "in"
    inputs.mkdir(exist_ok=True)
    copies = []
    for source in sources:
        copies.append(inputs / source.name)
        shutil.copyfile(source, copies[-1])
    done = run_nmt("translate", "--bundle", str(BUNDLE), "--out", str(tmp_path / "out"), *map(str, copies))
    assert done.returncode == 0, done.stderr
    return {copy: tmp_path / "out" / f"{copy.stem}.de{copy.suffix}" for copy in copies}


def _findings(fmt: str, outputs: dict[Path, Path]) -> list[str]:
    return [f"{source.name}: {f.check} at {f.where}: {f.source!r} -> {f.output!r}"
            for source, output in outputs.items()
            for f in check_file(fmt, source.read_bytes(), output.read_bytes())]


@pytest.mark.skipif(not all((TEXINFO / page).exists() for page in PAGES), reason="libffi's manual is not installed")
def test_pages_of_a_texinfo_manual_keep_every_code_link_and_span(tmp_path):
    found = _findings("html", _translated(tmp_path, [TEXINFO / page for page in PAGES]))
    assert not found, "\n".join(found)


@pytest.mark.skipif(not GREP_MO.exists() or not shutil.which("msgunfmt"), reason="grep's German catalogue is not installed")
def test_grep_catalogue_keeps_every_option_and_directive(tmp_path):
    from .content_sweep import template_input

    template = tmp_path / "grep.pot"
    template_input(GREP_MO, template, tmp_path / "scratch")
    found = _findings("po", _translated(tmp_path, [template]))
    assert not found, "\n".join(found)


def test_django_catalogues_keep_every_placeholder_and_pass_msgfmt(tmp_path):
    django = pytest.importorskip("django")
    root = Path(django.__file__).parent
    catalogues = [root / "conf/locale/en/LC_MESSAGES/django.po",
                  root / "contrib/admin/locale/en/LC_MESSAGES/django.po",
                  root / "contrib/admin/locale/en/LC_MESSAGES/djangojs.po"]
    sources = []
    for k, catalogue in enumerate(catalogues):  # three files of one name: one folder each
        (tmp_path / f"c{k}").mkdir()
        sources.append(tmp_path / f"c{k}" / f"{catalogue.parent.parent.parent.parent.name}-{catalogue.name}")
        shutil.copyfile(catalogue, sources[-1])
    found = _findings("po", _translated(tmp_path, sources))
    assert not found, "\n".join(found)
