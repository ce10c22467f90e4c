"""XLIFF 1.2 outputs validate against the OASIS strict schema with xmllint (Debian libxml2-utils),
the W3C xml.xsd it imports given as a local copy of its four attributes (no network)."""
from __future__ import annotations

import random
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from .test_format_properties import translate, xliff_document
from .test_xliff_format import XLIFF12

SCHEMA = Path(__file__).resolve().parents[2] / "shared" / "schemas" / "xliff-core-1.2-strict.xsd"
XML_XSD = """<?xml version="1.0"?>
<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" targetNamespace="http://www.w3.org/XML/1998/namespace"
           xml:lang="en">
  <xs:attribute name="lang" type="xs:language"/>
  <xs:attribute name="space"><xs:simpleType><xs:restriction base="xs:NCName">
    <xs:enumeration value="default"/><xs:enumeration value="preserve"/></xs:restriction></xs:simpleType></xs:attribute>
  <xs:attribute name="base" type="xs:anyURI"/>
  <xs:attribute name="id" type="xs:ID"/>
</xs:schema>
"""


@pytest.fixture(scope="module")
def schema(tmp_path_factory) -> Path:
    if shutil.which("xmllint") is None:
        pytest.fail("xmllint is not installed: apt-get install libxml2-utils")
    if not SCHEMA.exists():
        pytest.skip(f"no schema at {SCHEMA}")
    folder = tmp_path_factory.mktemp("schema")
    (folder / "xml.xsd").write_text(XML_XSD, encoding="utf-8")
    text = re.sub(r'schemaLocation="[^"]*xml\.xsd"', 'schemaLocation="xml.xsd"', SCHEMA.read_text(encoding="utf-8"))
    (folder / SCHEMA.name).write_text(text, encoding="utf-8")
    return folder / SCHEMA.name


def test_translated_xliff12_files_validate_against_the_strict_schema(schema, tmp_path):
    from worker.formats import parse

    rng = random.Random(5)
    documents = [XLIFF12.replace('<x id="2"/>', '<x id="2"/><ph id="9">&lt;b&gt;</ph>')] + \
        [xliff_document(rng) for _ in range(60)]
    paths = []
    for number, document in enumerate(documents):
        paths.append(tmp_path / f"in{number}.xlf")
        paths[-1].write_text(document, encoding="utf-8")
        out = tmp_path / f"out{number}.xlf"
        out.write_text(translate(parse("xliff", document), rng), encoding="utf-8")
        paths.append(out)
    done = subprocess.run(["xmllint", "--noout", "--nonet", "--schema", str(schema), *map(str, paths)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stderr.count("validates") == len(paths)
