"""Language codes as the APIs spell them and as the fleet does: DeepL's upper-case codes with
regional target variants (``EN-GB``, ``PT-BR``), LibreTranslate's and the workers' ``en``, ``de``."""
from __future__ import annotations

from .errors import ApiError

NAMES = {"ar": "Arabic", "bg": "Bulgarian", "cs": "Czech", "da": "Danish", "de": "German", "el": "Greek",
         "en": "English", "es": "Spanish", "et": "Estonian", "fi": "Finnish", "fr": "French", "hu": "Hungarian",
         "id": "Indonesian", "it": "Italian", "ja": "Japanese", "ko": "Korean", "lt": "Lithuanian", "lv": "Latvian",
         "nb": "Norwegian (Bokmål)", "nl": "Dutch", "pl": "Polish", "pt": "Portuguese", "ro": "Romanian",
         "ru": "Russian", "sk": "Slovak", "sl": "Slovenian", "sv": "Swedish", "tr": "Turkish", "uk": "Ukrainian",
         "zh": "Chinese"}
# DeepL's target codes for languages it names by region; the fleet translates into the language.
VARIANTS = {"en": {"EN-GB": "English (British)", "EN-US": "English (American)"},
            "pt": {"PT-BR": "Portuguese (Brazilian)", "PT-PT": "Portuguese (European)"},
            "zh": {"ZH-HANS": "Chinese (simplified)", "ZH-HANT": "Chinese (traditional)"}}


def name_of(code: str) -> str:
    return NAMES.get(code, code)


def fleet_code(code: str) -> str:
    """``EN-GB`` -> ``en``, ``DE`` -> ``de``: the language the workers are asked for."""
    return code.split("-", 1)[0].lower()


def deepl_sources(pairs: list[tuple[str, str]]) -> list[dict]:
    return [{"language": src.upper(), "name": name_of(src)} for src in sorted({src for src, _ in pairs})]


def deepl_targets(pairs: list[tuple[str, str]]) -> list[dict]:
    """Every target, under each of its regional codes; no formality is offered (the models have none)."""
    out = []
    for tgt in sorted({tgt for _, tgt in pairs}):
        for code, name in (VARIANTS.get(tgt) or {tgt.upper(): name_of(tgt)}).items():
            out.append({"language": code, "name": name, "supports_formality": False})
    return out


def resolve_pair(source: str | None, target: str, pairs: list[tuple[str, str]], field: str = "source_lang") -> tuple[str, str]:
    """The fleet's (source, target) for a request; without a source, the one language the fleet
    translates into ``target`` from (``ApiError`` 400 when there is none or several)."""
    tgt = fleet_code(target)
    if source:
        src = fleet_code(source)
    else:
        sources = sorted({s for s, t in pairs if t == tgt})
        if len(sources) != 1:
            raise ApiError(400, f"Parameter '{field}' not specified: the source language cannot be told for "
                                f"target {target!r} (served sources: {', '.join(sources) or 'none'})")
        src = sources[0]
    if pairs and (src, tgt) not in pairs:
        served = ", ".join(f"{s}-{t}" for s, t in sorted(pairs))
        raise ApiError(400, f"Value for the language pair {src}-{tgt} not supported (served: {served})")
    return src, tgt
