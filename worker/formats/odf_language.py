"""The language an OpenDocument file says its text is in, set to the translation's target language,
so that spell checking and hyphenation in LibreOffice work on the output (ODF 1.3 part 3, 20.224
``fo:language`` and 20.209 ``fo:country`` of text properties; 4.3.2.8 ``dc:language`` of the meta).

Where a style's text properties (styles.xml, and the automatic styles of content.xml) say the source
language, ``fo:language`` becomes the target's and ``fo:country`` the target's region: the one the
target code names (``de-AT``), else its main one (``DE`` for ``de``), else ``none``. Asian and
complex-script languages (``style:language-asian``, ``style:language-complex``) and text marked as
a third language stay as they are. The meta's ``dc:language`` (``en-US``) becomes ``de-DE``.
"""
from __future__ import annotations

FO = "urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0"
STYLE = "urn:oasis:names:tc:opendocument:xmlns:style:1.0"
DC = "http://purl.org/dc/elements/1.1/"
# a language's main region, where LibreOffice lists one (its default locale for the language)
MAIN_REGION = {"de": "DE", "en": "US", "fr": "FR", "es": "ES", "it": "IT", "nl": "NL", "pt": "PT", "pl": "PL",
               "sv": "SE", "da": "DK", "fi": "FI", "nb": "NO", "nn": "NO", "cs": "CZ", "sk": "SK", "hu": "HU",
               "ro": "RO", "ru": "RU", "uk": "UA", "tr": "TR", "el": "GR", "ja": "JP", "zh": "CN", "ko": "KR",
               "et": "EE", "lv": "LV", "lt": "LT", "sl": "SI", "hr": "HR", "bg": "BG", "ca": "ES", "is": "IS"}


def language_and_region(code: str) -> tuple[str, str]:
    """``de-AT`` -> (``de``, ``AT``); ``de`` -> (``de``, ``DE``); a language without a known main
    region -> (language, ``none``)."""
    language, _, region = code.replace("_", "-").partition("-")
    language = language.lower()
    return language, region.upper() if region else MAIN_REGION.get(language, "none")


def retarget_languages(roots: dict[str, object], source: str, target: str) -> set[str]:
    """Set the language attributes of the parts in ``roots`` (part name -> root element, or None)
    that say ``source`` to ``target``; the names of the parts changed."""
    source_language = language_and_region(source)[0]
    language, region = language_and_region(target)
    if source_language == language:
        return set()
    changed = set()
    for part, root in roots.items():
        if root is None:
            continue
        for element in root.iter(f"{{{STYLE}}}text-properties", f"{{{DC}}}language"):
            if element.tag == f"{{{DC}}}language":
                if (element.text or "").strip().lower().partition("-")[0] == source_language:
                    element.text = f"{language}-{region}" if region != "none" else language
                    changed.add(part)
            elif (element.get(f"{{{FO}}}language") or "").lower() == source_language:
                element.set(f"{{{FO}}}language", language)
                if element.get(f"{{{FO}}}country") is not None or region != "none":
                    element.set(f"{{{FO}}}country", region)
                changed.add(part)
    return changed


__all__ = ["MAIN_REGION", "language_and_region", "retarget_languages"]
