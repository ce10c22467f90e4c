"""Office Open XML packages (ECMA-376 part 2), as presentations and workbooks are: a ZIP of parts
with their content types and relationships, read with nothing resolved or fetched and written again
with some parts replaced, every other part byte for byte; and the units of a package's paragraphs
(``package_parsed``) with their render. An encrypted package, a legacy binary file, a damaged one
and an Office file of another kind are each a ``FormatError`` that says so.
"""
from __future__ import annotations

import io
import posixpath
import re
import zipfile
from typing import Callable, Iterable, Sequence

from lxml import etree

from .inline import inline_unit
from .markup import Link, Piece, transfer
from .model import FormatError, Parsed

_RELS = "{http://schemas.openxmlformats.org/package/2006/relationships}"
_TYPES = "{http://schemas.openxmlformats.org/package/2006/content-types}"
_CFB = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # an OLE compound file: a legacy binary file, or an encrypted OOXML one
MAX_UNPACKED = 512 * 1024 * 1024  # a package that unpacks to more is refused (a ZIP bomb)
# entities are never resolved and nothing is fetched: a part's XML is data from the client
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)
_DECLARATION = re.compile(rb"<\?xml\s[^>]*\?>")
_UTF8 = re.compile(rb"""encoding\s*=\s*["']utf-?8["']""", re.I)
# what may stand between an XML declaration and the root element: whitespace, comments, processing
# instructions and a DOCTYPE, whose internal subset may hold quoted "]" and ">" and comments
_PROLOG = re.compile(rb"""(?:\s+|<!--.*?-->|<\?.*?\?>|<!DOCTYPE\s(?:"[^"]*"|'[^']*'|"""
                     rb"""\[(?:<!--.*?-->|"[^"]*"|'[^']*'|[^\]"'])*\]|[^>"'\[])*>)*""", re.S)
_OTHER_KINDS = {"wordprocessingml": "a Word document (.docx)", "ms-word": "a Word document (.docm)",
                "spreadsheetml": "an Excel workbook (.xlsx)", "ms-excel": "an Excel workbook (.xlsm)",
                "presentationml": "a PowerPoint presentation (.pptx)",
                "ms-powerpoint": "a PowerPoint presentation (.pptm)"}



class OfficePackage:
    """An OOXML package (a ZIP of parts) as read from ``data``: its parts' content types and
    relationships, their XML, and the package written again with some parts replaced, every other
    part as it was. ``kind`` names the format in messages ("PPTX"); ``main_types``: the content
    types its main part may have."""

    def __init__(self, data: bytes, kind: str, main_types: Iterable[str]) -> None:
        self.kind = kind
        self.invalid = f"not a valid {kind} file"
        if not isinstance(data, (bytes, bytearray)):
            raise FormatError(f"a {kind} file is binary: give its bytes")
        data = bytes(data)
        if data.startswith(_CFB):
            if "EncryptedPackage".encode("utf-16-le") in data:
                raise FormatError(f"the {kind} file is encrypted (password-protected): save it without a password "
                                  "to translate it")
            raise FormatError(f"{self.invalid}: it is a legacy binary Office file (97-2003 format), not an Office "
                              f"Open XML package: save it as .{kind.lower()}")
        try:
            self.archive = zipfile.ZipFile(io.BytesIO(data))
            self.infos = self.archive.infolist()
        except (zipfile.BadZipFile, ValueError, EOFError):
            raise FormatError(f"{self.invalid}: it is not a ZIP package (a {kind} file is one): damaged, cut short, "
                              "or another kind of file") from None
        if sum(info.file_size for info in self.infos) > MAX_UNPACKED:
            raise FormatError(f"{self.invalid}: it unpacks to more than {MAX_UNPACKED // 2**20} MB")
        self.names = {info.filename for info in self.infos}
        if "[Content_Types].xml" not in self.names and "mimetype" in self.names:
            kind_of = self.read("mimetype").decode("ascii", "replace").strip()[:80]
            raise FormatError(f"{self.invalid}: it is an OpenDocument or EPUB file ({kind_of}), not an Office Open "
                              "XML package")
        if "[Content_Types].xml" not in self.names:
            raise FormatError(f"{self.invalid}: the package has no [Content_Types].xml")
        self.types = self._content_types()
        wanted = set(main_types)
        if not any(kind in wanted for kind in self.types.values()):
            other = next((what for key, what in _OTHER_KINDS.items() for found in self.types.values()
                          if key in found and found.endswith("main+xml")), None)
            raise FormatError(f"{self.invalid}: " + (f"it is {other}, not a {kind} file" if other else
                                                     f"the package has no main part of a {kind} file"))

    def read(self, name: str) -> bytes:
        try:
            return self.archive.read(name)
        except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, ValueError) as exc:
            raise FormatError(f"{self.invalid}: its part {name} cannot be unpacked ({exc})") from None
        except KeyError:
            raise FormatError(f"{self.invalid}: the package has no part {name}") from None

    def xml(self, name: str):
        """The root element of part ``name``."""
        try:
            return etree.fromstring(self.read(name), _PARSER)
        except etree.XMLSyntaxError as exc:
            raise FormatError(f"{self.invalid}: its part {name} is not well-formed XML ({exc.msg})") from None

    def _content_types(self) -> dict[str, str]:
        """Part name -> content type, for every part of the package."""
        root = self.xml("[Content_Types].xml")
        defaults = {d.get("Extension", "").lower(): d.get("ContentType", "") for d in root.iter(f"{_TYPES}Default")}
        overrides = {o.get("PartName", "").lstrip("/").lower(): o.get("ContentType", "")
                     for o in root.iter(f"{_TYPES}Override")}
        types = {}
        for name in self.names:
            if name.endswith("/"):
                continue
            types[name] = overrides.get(name.lower()) or defaults.get(name.rsplit(".", 1)[-1].lower(), "")
        return types

    def parts(self, *suffixes: str) -> list[str]:
        """The parts whose content type ends with one of ``suffixes`` (``slide+xml``), in package order."""
        return [info.filename for info in self.infos
                if any(self.types.get(info.filename, "").endswith(s) for s in suffixes)]

    def relationships(self, name: str) -> dict[str, tuple[str, str]]:
        """Relationship id -> (type's last word, target part name) of part ``name``'s internal
        relationships ("" for the package's own)."""
        folder, base = posixpath.split(name)
        rels = posixpath.join(folder, "_rels", f"{base}.rels")
        if rels not in self.names:
            return {}
        found = {}
        for rel in self.xml(rels).iter(f"{_RELS}Relationship"):
            if rel.get("TargetMode") == "External":
                continue
            target = rel.get("Target", "")
            if target.startswith("/"):
                target = target.lstrip("/")
            else:
                target = posixpath.normpath(posixpath.join(folder, target))
            found[rel.get("Id", "")] = (rel.get("Type", "").rsplit("/", 1)[-1], target)
        return found

    def related(self, name: str, kind: str) -> list[str]:
        """The parts ``name`` relates to by relationships of type ``kind`` (``notesSlide``), by id."""
        rels = self.relationships(name)
        return [target for _, (rel_type, target) in sorted(rels.items()) if rel_type == kind and target in self.names]

    def write(self, replaced: dict[str, bytes]) -> bytes:
        """The package with the parts in ``replaced`` given new bytes, all else as it was (order, names,
        compression, timestamps)."""
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w", allowZip64=True) as archive:
            for info in self.infos:
                fresh = zipfile.ZipInfo(info.filename, info.date_time)
                fresh.compress_type, fresh.external_attr = info.compress_type, info.external_attr
                fresh.comment, fresh.create_system = info.comment, info.create_system
                body = replaced[info.filename] if info.filename in replaced else self.read(info.filename)
                archive.writestr(fresh, body)
        return out.getvalue()


def serialized(root, original: bytes) -> bytes:
    """``root`` as the bytes of its part ``original`` (of an OOXML, OpenDocument or EPUB package),
    in UTF-8 after the prolog the part had, byte for byte: its XML declaration (one saying UTF-8,
    as those parts are), and the comments, processing instructions and DOCTYPE before the root
    element, with the entities the DOCTYPE declares, which the part's text may use (odfpy's
    ``nasty.odt``). lxml writes a DOCTYPE only where it names the root's local name: never
    before ``office:document-content``."""
    declared = _DECLARATION.match(original)
    start = declared.end() if declared is not None else 0
    head = b"" if declared is None else declared.group(0) if _UTF8.search(declared.group(0)) else \
        b'<?xml version="1.0" encoding="UTF-8"?>'  # not the encoding it is written in: declared again
    end = _PROLOG.match(original, start).end()
    if original[end:end + 1] != b"<" or original[end + 1:end + 2] in (b"!", b"?"):  # a prolog not known here
        return head + etree.tostring(root.getroottree(), encoding="UTF-8", xml_declaration=False)
    after = b"".join(etree.tostring(sibling, encoding="UTF-8") for sibling in root.itersiblings())
    return head + original[start:end] + etree.tostring(root, encoding="UTF-8", with_tail=False) + after


# -- units of a package, and their render --------------------------------------------------------------
Walk = Callable[[OfficePackage], tuple[dict[str, object], list[tuple[str, str, object]]]]
Serialize = Callable[[OfficePackage, str, object, list], bytes]
Companions = Callable[[OfficePackage, dict, set], dict]


def whole_part(package: OfficePackage, part: str, root, _written: list) -> bytes:
    """A part written again whole from its XML tree."""
    return serialized(root, package.read(part))


def package_parsed(data: bytes, open_package: Callable[[bytes], OfficePackage], walk: Walk,
                   serialize: Serialize = whole_part, companions: Companions | None = None) -> Parsed:
    """The units of a package's paragraphs and their render. ``walk(package)``: the roots of the parts
    it reads ({part name: root element}) and (part name, where, paragraph) for each paragraph, in a
    fixed order (the same for the same bytes: a render walks the package again).
    ``serialize(package, part, root, elements)``: the bytes of a part whose paragraph ``elements``
    were written into. ``companions(package, roots, parts)``: other parts to write again so that they
    agree with the written ``parts`` (a chart's embedded workbook, ``formats.xlsx``), {name: bytes}."""
    package = open_package(data)
    _roots, found = walk(package)
    units, chosen, around = [], [], []
    for index, (_part, where, paragraph) in enumerate(found):
        items = paragraph.items()
        unit, lead, trail = inline_unit(items, where) if items else (None, "", "")
        if unit is None:
            continue
        units.append(unit)
        chosen.append(index)
        around.append((lead, trail))
    if not units:
        raise FormatError(f"the {package.kind} file has no text to translate")

    def render(translations: Sequence[str], links: Sequence[Sequence[Link]], notes: dict[int, list[str]]) -> bytes:
        package = open_package(data)
        roots, found = walk(package)
        changed: dict[str, list] = {}
        for number, (index, unit, translation) in enumerate(zip(chosen, units, translations)):
            part, _where, paragraph = found[index]
            paragraph.items()  # numbers the format stretches as the parse did
            if unit.tags:
                pieces, unit_notes = transfer(unit.text, unit.tags, translation, links[number], keep_link_text=True)
            else:  # most cells and many paragraphs: nothing to place
                pieces, unit_notes = [Piece(translation, False)], []
            paragraph.render(pieces, *around[number])
            if unit_notes:
                notes[number] = unit_notes
            changed.setdefault(part, []).append(paragraph.element)
        written = {part: serialize(package, part, roots[part], elements) for part, elements in changed.items()}
        if companions is not None:
            written.update({name: body for name, body in companions(package, roots, set(changed)).items()
                            if name not in written})
        return package.write(written)

    return Parsed(units, render, marked=True)
