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

import re
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


# Sphinx's entry head on Python's getpass page (python3.11-doc, library/getpass.html): the signature,
# its parts in spans, and the headerlink's pilcrow; and Python-Markdown 3.7's docs/extensions/admonition.md,
# whose "rST-style" names reStructuredText
GETPASS_HEAD = ('<dl class="py function">\n<dt class="sig sig-object py" id="getpass.getpass">\n'
                '<span class="sig-prename descclassname"><span class="pre">getpass.</span></span><span class="sig-name '
                'descname"><span class="pre">getpass</span></span><span class="sig-paren">(</span><em class="sig-param">'
                '<span class="n"><span class="pre">prompt</span></span><span class="o"><span class="pre">=</span></span>'
                '<span class="default_value"><span class="pre">\'Password:</span> <span class="pre">\'</span></span></em>'
                ', <em class="sig-param"><span class="n"><span class="pre">stream</span></span><span class="o"><span '
                'class="pre">=</span></span><span class="default_value"><span class="pre">None</span></span></em><span '
                'class="sig-paren">)</span><a class="headerlink" href="#getpass.getpass" title="Permalink to this '
                'definition">\u00b6</a></dt>\n<dd><p>Prompt the user for a password without echoing.</p></dd></dl>\n')
ADMONITION = ("The Admonition extension adds [rST-style][rST] admonitions to Markdown documents.\n\n"
              "[rST]: http://docutils.sourceforge.net/docs/ref/rst/directives.html#specific-admonitions\n")


@pytest.mark.parametrize("sentence, span", [
    ("getpass.getpass(prompt='Password: ', stream=None)\u00b6", "getpass.getpass(prompt='Password: ', stream=None)"),
    ("The Admonition extension adds rST-style admonitions to Markdown documents.", "rST"),
])
def test_a_python_signature_and_a_name_before_a_compound_are_spans(sentence, span):
    from worker.text.spans import find_spans

    assert span in [s.text for s in find_spans(sentence)]


def test_a_sphinx_signature_beside_its_pilcrow_and_rst_in_markdown_come_back_unchanged(tmp_path):
    page, markdown = tmp_path / "getpass.html", tmp_path / "admonition.md"
    page.write_text(f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>getpass</title></head><body>\n'
                    f"{GETPASS_HEAD}</body></html>\n", encoding="utf-8")
    markdown.write_text(ADMONITION, encoding="utf-8")
    outputs = _translated(tmp_path, [page, markdown])
    found = _findings("html", {page: outputs[tmp_path / "in" / page.name]}) + \
        _findings("markdown", {markdown: outputs[tmp_path / "in" / markdown.name]})
    assert not found, "\n".join(found)
    assert "getpass.getpass(prompt='Password: ', stream=None)" in \
        re.sub(r"<[^>]*>", "", outputs[tmp_path / "in" / page.name].read_text(encoding="utf-8"))
