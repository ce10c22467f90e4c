"""BLEU as the tools report it: sacreBLEU defaults (cased, 13a), and the published Multi30k way
(lowercased, Moses punctuation normalization and tokenization with escaping, BLEU on tokens)."""
from __future__ import annotations

import gzip
import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Sequence

import sacrebleu

from queue_config.textfiles import DocumentError, decode_text, read_file_bytes

from .bundle import MANIFEST, update_manifest


def read_lines(path: Path) -> list[str]:
    """The lines of a UTF-8 text file (plain or .gz), without line ends (LF, CRLF or CR);
    ``DocumentError`` naming the file for unreadable or non-UTF-8 ones."""
    path = Path(path)
    try:
        data = read_file_bytes(path)
        if path.suffix == ".gz":
            data = gzip.decompress(data)
        text = decode_text(data)
    except DocumentError as exc:
        raise DocumentError(f"{path}: {exc}") from None
    except (OSError, EOFError) as exc:  # a damaged .gz
        raise DocumentError(f"{path}: not a readable gzip file ({exc})") from None
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return lines[:-1] if lines[-1] == "" else lines


@lru_cache(maxsize=8)
def _moses(language: str):
    from sacremoses import MosesPunctNormalizer, MosesTokenizer

    return MosesPunctNormalizer(lang=language), MosesTokenizer(lang=language)


_ASCII_QUOTE = re.compile(r"([a-z])[’‘]([a-z])")


def multi30k_tokenize(text: str, language: str) -> str:
    """lowercase.perl, normalize-punctuation.perl -l L, tokenizer.perl -l L (escaping on).

    Two steps make sacremoses match the perl scripts the references were made with (all 8,056
    lines of ``tok/`` for test_2016_flickr and val, four languages): a curly apostrophe counts as
    one only between ASCII letters (perl's ``[a-z]``), and the normalizer sees the line's newline,
    which perl's rule moving a period before a closing quote needs at the end of a line."""
    normalizer, tokenizer = _moses(language)
    text = _ASCII_QUOTE.sub(r"\1'\2", text.lower()).replace("’", '"').replace("‘", '"')
    text = normalizer.normalize(text + "\n").rstrip("\n")
    return tokenizer.tokenize(text, escape=True, return_str=True)


def score(hypotheses: Sequence[str], references: Sequence[str], language: str) -> dict:
    """sacreBLEU BLEU and chrF (defaults), and BLEU the published Multi30k way, with signatures."""
    default = sacrebleu.BLEU()
    bleu = default.corpus_score(list(hypotheses), [list(references)])
    tok = sacrebleu.BLEU(tokenize="none", force=True)
    lc_tok = tok.corpus_score([multi30k_tokenize(h, language) for h in hypotheses],
                              [[multi30k_tokenize(r, language) for r in references]])
    chrf_metric = sacrebleu.CHRF()
    chrf = chrf_metric.corpus_score(list(hypotheses), [list(references)])
    return {"bleu": bleu.score, "signature": str(default.get_signature()),
            "chrf": chrf.score, "signature_chrf": str(chrf_metric.get_signature()),
            "bleu_lc_tok": lc_tok.score, "signature_lc_tok": "lc+moses-norm+moses-tok|" + str(tok.get_signature())}


def evaluate(translator, sources: Sequence[str], references: Sequence[str], options=None,
             text_options=None) -> tuple[dict, list[str]]:
    """What ``nmt eval`` reports for a ``worker.engine.translator.Translator``: the sources
    translated as ``nmt translate`` translates them (text handling on, the bundle's decoding
    defaults unless ``options``), scored by ``score``; and the hypotheses. The one path by which
    a bundle's test scores are measured, at export and after."""
    results = translator.translate_sentences([s.strip() for s in sources], options, text_options=text_options)
    hypotheses = [r.translation for r in results]
    return score(hypotheses, references, translator.bundle.target_language) | {"sentences": len(hypotheses)}, hypotheses


def manifest_entry(report: dict) -> dict:
    """A test set's entry in a manifest's ``scores.test``, from an ``evaluate`` report."""
    return {"bleu": report["bleu"], "chrf": report["chrf"], "sentences": report["sentences"],
            "signature": report["signature"], "scored_as": "nmt eval (text handling on, the bundle's defaults)"}


def record_test_score(bundle_dir: str | Path, name: str, report: dict) -> Path:
    """Store ``report`` (``evaluate``'s) as the bundle's score on test set ``name``."""
    manifest = json.loads((Path(bundle_dir) / MANIFEST).read_text(encoding="utf-8"))
    scores = dict(manifest.get("scores") or {})
    scores["test"] = {**(scores.get("test") or {}), name: manifest_entry(report)}
    if scores.get("test_set") in (None, name):
        scores["test_bleu"], scores["test_chrf"], scores["test_set"] = report["bleu"], report["chrf"], name
    return update_manifest(bundle_dir, scores=scores)
