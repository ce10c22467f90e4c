"""A document's own word on its encoding, made to say UTF-8: files are read in the encoding they
declare (``queue_config.textfiles.decode_document``) and always written as UTF-8, so the XML
declaration, an HTML page's ``<meta>`` charset and a PO header's ``charset`` are changed to match."""
from __future__ import annotations

import re

_XML_DECLARATION = re.compile(r"""^(\s*<\?xml\s[^>]*?\bencoding\s*=\s*["'])([A-Za-z][A-Za-z0-9._-]*)(["'])""")
_META = re.compile(r"<meta\b[^>]*>", re.I)
_META_CHARSET = re.compile(r"""(\bcharset\s*=\s*["']?\s*)([A-Za-z0-9._:-]+)""", re.I)
_PO_CHARSET = re.compile(r"(charset=)([A-Za-z0-9._:-]+)")


def utf8_xml(text: str) -> str:
    """``text`` with its XML declaration's encoding (if it names one) made UTF-8."""
    return _XML_DECLARATION.sub(lambda m: m.group(1) + "UTF-8" + m.group(3), text, count=1)


def utf8_html(text: str) -> str:
    """``text`` with each ``<meta charset>`` and ``http-equiv`` Content-Type charset, and an XHTML
    page's XML declaration, made UTF-8 (``<meta name=... content="...charset=...">`` is left alone)."""
    def meta(match: re.Match) -> str:
        tag = match.group()
        lowered = tag.lower()
        if "http-equiv" in lowered and "content-type" not in lowered:
            return tag
        if "http-equiv" not in lowered and re.search(r"\bcontent\s*=", lowered):
            return tag
        return _META_CHARSET.sub(lambda m: m.group(1) + "utf-8", tag, count=1)

    return _META.sub(meta, utf8_xml(text))


_HEAD = re.compile(r"<head\b[^>]*>", re.I)
_CHARSET_META = re.compile(r"<meta\b[^>]*\bcharset\s*=", re.I)


def declared_utf8_html(text: str) -> str:
    """``utf8_html(text)``, and a page that declares no charset at all (no ``<meta charset>``, no
    Content-Type ``http-equiv``, no XML declaration) gets ``<meta charset="utf-8">`` right after its
    ``<head>`` tag: written as UTF-8 and undeclared, a browser would read it in its locale's legacy
    encoding (``kÃ¶nnen``). A page without a ``<head>`` tag is left as it is (an element added
    before its body would change its tree): its output is written in ASCII (``ascii_html``)."""
    text = utf8_html(text)
    if _CHARSET_META.search(text) or _XML_DECLARATION.match(text):
        return text
    head = _HEAD.search(text)
    return text if head is None else text[:head.end()] + '<meta charset="utf-8">' + text[head.end():]


def undeclared_without_head(text: str) -> bool:
    """Whether a page declares no charset and has no ``<head>`` to declare one in: written as
    UTF-8, a browser would misread it, so its non-ASCII characters are written as references."""
    return not (_CHARSET_META.search(text) or _XML_DECLARATION.match(text) or _HEAD.search(text)
                or text.startswith("\ufeff"))


_RAW_TEXT = re.compile(r"<(script|style)\b.*?</\1\s*>", re.I | re.S)


def ascii_html(page: str) -> str:
    """``page`` with each non-ASCII character outside ``<script>`` and ``<style>`` written as a
    numeric character reference (``&#196;``): it reads the same in any encoding a browser guesses."""
    out, at = [], 0
    for match in _RAW_TEXT.finditer(page):
        out += [page[at:match.start()].encode("ascii", "xmlcharrefreplace").decode("ascii"), match.group()]
        at = match.end()
    out.append(page[at:].encode("ascii", "xmlcharrefreplace").decode("ascii"))
    return "".join(out)


def utf8_po_header(header: str) -> str:
    """A PO header entry's lines with the Content-Type charset made UTF-8 (a template's ``CHARSET``
    placeholder stays)."""
    return _PO_CHARSET.sub(lambda m: m.group(0) if m.group(2) == "CHARSET" else m.group(1) + "UTF-8", header, count=1)
