"""XLIFF 2.0 outputs against the core rules of the specification (OASIS XLIFF Version 2.0,
4.3 and 4.7) that a test can state. No 2.0 schema is on the machine (only the 1.2 one, which
test_formats_xliff_schema.py uses), so the rules are checked in Python:

- the root is ``<xliff version="2.x">`` in the 2.0 namespace with ``srcLang``, and ``trgLang`` once
  a target exists; a target's ``xml:lang``, if any, is ``trgLang``; no 1.2 inline elements;
- file and unit ids are unique (files in the document, units in their file), and inline ids are
  unique within a unit's source content and within its target content;
- every ``<target>`` holds the same inline codes as its ``<source>`` (element, id or startRef and
  every attribute, and the parent code each one sits in);
- each ``<ec startRef>`` follows its ``<sc>`` in the same unit's content, every ``<sc>`` not
  isolated is ended, an isolated ``<sc>``/``<ec>`` has an id and no startRef;
- ``dataRef``, ``dataRefStart`` and ``dataRefEnd`` name a ``<data>`` of the unit's ``<originalData>``;
- ``state`` is one of initial, translated, reviewed, final, and ``subState`` comes with it;
- under ``xml:space="preserve"`` a target keeps the whitespace its source has at its edges,
  outside every inline element (a translation's own edge whitespace may come with it: a unit kept
  in its source language when the model gave no words moves whitespace from inside its last code
  to after it).
``<pc>`` cannot cross anything in well-formed XML; expat parsing the output checks that.
"""
from __future__ import annotations

import random
import re
import xml.etree.ElementTree as ET
from collections import Counter

import pytest

from worker.formats import parse

from .test_format_properties import XLIFF2, codes2, translate, xliff2_document

NS = "urn:oasis:names:tc:xliff:document:2.0"
Q = "{" + NS + "}"
XML_NS = "{http://www.w3.org/XML/1998/namespace}"
INLINE = {"ph", "pc", "sc", "ec", "mrk", "sm", "em", "cp"}
XLIFF12_INLINE = {"g", "x", "bx", "ex", "bpt", "ept", "it"}
STATES = {"initial", "translated", "reviewed", "final"}


def _local(tag: str) -> str:
    return tag.split("}", 1)[-1]


def _space(element, parents) -> str:
    while element is not None:
        value = element.get(f"{XML_NS}space")
        if value:
            return value
        element = parents.get(element)
    return "default"


def _edges(content) -> tuple[str, str]:
    """The whitespace at the start and end of a source or target, outside every inline element."""
    first = content.text or ""
    last = (content[-1].tail or "") if len(content) else first
    return first[:len(first) - len(first.lstrip())], last[len(last.rstrip()):]


def _content_problems(where: str, contents: list, data: set[str]) -> list[str]:
    """Rules on one unit's source (or target) contents, its segments in order."""
    problems, ids, open_sc = [], Counter(), {}
    for content in contents:
        for element in content.iter():
            if element is content:
                continue
            name = _local(element.tag)
            if not element.tag.startswith(Q) or name in XLIFF12_INLINE or name not in INLINE:
                problems.append(f"{where}: {element.tag} is not a 2.0 inline element")
                continue
            if element.get("id") is not None:
                ids[element.get("id")] += 1
            for attribute in ("dataRef", "dataRefStart", "dataRefEnd"):
                if element.get(attribute) is not None and element.get(attribute) not in data:
                    problems.append(f"{where}: {name} {attribute}={element.get(attribute)!r} names no <data>")
            isolated = element.get("isolated") == "yes"
            if name == "sc" and not isolated:
                open_sc[element.get("id")] = True
            elif name == "ec" and not isolated:
                ref = element.get("startRef")
                if ref not in open_sc:
                    problems.append(f"{where}: <ec startRef={ref!r}> before (or without) its <sc>")
                open_sc.pop(ref, None)
            elif name == "ec" and (element.get("startRef") is not None or element.get("id") is None):
                problems.append(f"{where}: an isolated <ec> needs an id and no startRef")
    problems += [f"{where}: <sc id={ref!r}> is never ended" for ref in open_sc]
    problems += [f"{where}: inline id {i!r} used {n} times" for i, n in ids.items() if n > 1]
    return problems


def core_problems(document: str) -> list[str]:
    """What breaks the core rules above in an XLIFF 2.0 document (none: it keeps them)."""
    root = ET.fromstring(document.encode("utf-8"))
    problems = []
    if root.tag != f"{Q}xliff" or not re.fullmatch(r"2\.\d+", root.get("version", "")):
        problems.append(f"root {root.tag} version {root.get('version')!r} is not XLIFF 2")
    if not root.get("srcLang"):
        problems.append("no srcLang")
    parents = {child: parent for parent in root.iter() for child in parent}
    if root.find(f".//{Q}target") is not None and not root.get("trgLang"):
        problems.append("targets and no trgLang")
    file_ids = Counter(f.get("id") for f in root.iter(f"{Q}file"))
    problems += [f"file id {i!r} used {n} times" for i, n in file_ids.items() if n > 1 or i is None]
    for file in root.iter(f"{Q}file"):
        unit_ids = Counter(u.get("id") for u in file.iter(f"{Q}unit"))
        problems += [f"unit id {i!r} used {n} times" for i, n in unit_ids.items() if n > 1 or i is None]
    for unit in root.iter(f"{Q}unit"):
        where = f"unit {unit.get('id')}"
        data = {d.get("id") for d in unit.iter(f"{Q}data")}
        segments = [s for s in unit if _local(s.tag) in ("segment", "ignorable")]
        sources = [s.find(f"{Q}source") for s in segments]
        targets = [s.find(f"{Q}target") for s in segments if s.find(f"{Q}target") is not None]
        problems += _content_problems(f"{where} source", sources, data)
        problems += _content_problems(f"{where} target", targets, data)
        for segment in segments:
            source, target = segment.find(f"{Q}source"), segment.find(f"{Q}target")
            state = segment.get("state")
            if state is not None and state not in STATES:
                problems.append(f"{where}: state {state!r}")
            if segment.get("subState") is not None and state is None:
                problems.append(f"{where}: subState without state")
            if target is None:
                continue
            if target.get(f"{XML_NS}lang") not in (None, root.get("trgLang")):
                problems.append(f"{where}: target xml:lang {target.get(f'{XML_NS}lang')!r} is not trgLang")
            if codes2(target) != codes2(source):
                problems.append(f"{where}: target codes {sorted(codes2(target))} "
                                f"!= source codes {sorted(codes2(source))}")
            lead, trail = _edges(source)
            if _space(target, parents) == "preserve" and "".join(target.itertext()).strip() and not (
                    _edges(target)[0].startswith(lead) and _edges(target)[1].endswith(trail)):
                problems.append(f"{where}: xml:space=preserve and the target's edge whitespace {_edges(target)} "
                                f"is not the source's {_edges(source)}")
    return problems


def _generated(seed: int) -> tuple[str, str]:
    rng = random.Random(seed)
    document = xliff2_document(rng)
    return document, translate(parse("xliff", document), rng)


@pytest.mark.parametrize("bad, problem", [
    (XLIFF2.format('<sc id="1"/>a<ec startRef="1"/>').replace(
        "</source>", '</source>\n        <target><ec startRef="1"/>b<sc id="1"/></target>'),
     "before (or without) its <sc>"),
    (XLIFF2.format('<ph id="1"/>a').replace("</source>", '</source>\n        <target><ph id="2"/>b</target>'),
     "target codes"),
    (XLIFF2.format('<ph id="1"/>a<ph id="1"/>'), "used 2 times"),
    (XLIFF2.format("a").replace("<segment>", '<segment state="done">'), "state 'done'"),
    (XLIFF2.format("a").replace(' trgLang="de"', "").replace("</source>", "</source><target>b</target>"), "no trgLang"),
    (XLIFF2.format('<ph id="1" dataRef="d9"/>a'), "names no <data>"),
    (XLIFF2.format('<sc id="1"/>a'), "never ended"),
])
def test_the_rules_catch_what_breaks_them(bad, problem):
    assert any(problem in p for p in core_problems(bad)), core_problems(bad)


@pytest.mark.parametrize("seed", range(8))
def test_generated_xliff2_outputs_keep_the_core_rules(seed):
    document, out = _generated(seed)
    assert core_problems(document) == []
    assert core_problems(out) == [], out


@pytest.mark.slow
def test_a_thousand_generated_xliff2_outputs_keep_the_core_rules():
    broken = [(seed, problems[:2]) for seed in range(1000)
              for problems in [core_problems(_generated(seed)[1])] if problems]
    assert not broken, f"{len(broken)} of 1000 broke the rules; first: {broken[:3]}"
