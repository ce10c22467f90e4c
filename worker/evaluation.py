"""BLEU as the tools report it: sacreBLEU defaults (cased, 13a), and the published Multi30k way
(lowercased, Moses punctuation normalization and tokenization with escaping, BLEU on tokens)."""
from __future__ import annotations

import gzip
from functools import lru_cache
from pathlib import Path
from typing import Sequence

import sacrebleu


def read_lines(path: Path) -> list[str]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return [line.rstrip("\n") for line in handle]


@lru_cache(maxsize=8)
def _moses(language: str):
    from sacremoses import MosesPunctNormalizer, MosesTokenizer

    return MosesPunctNormalizer(lang=language), MosesTokenizer(lang=language)


def multi30k_tokenize(text: str, language: str) -> str:
    """lowercase.perl, normalize-punctuation.perl -l L, tokenizer.perl -l L (escaping on)."""
    normalizer, tokenizer = _moses(language)
    return tokenizer.tokenize(normalizer.normalize(text.lower()), escape=True, return_str=True)


def score(hypotheses: Sequence[str], references: Sequence[str], language: str) -> dict:
    default = sacrebleu.BLEU()
    bleu = default.corpus_score(list(hypotheses), [list(references)])
    tok = sacrebleu.BLEU(tokenize="none", force=True)
    lc_tok = tok.corpus_score([multi30k_tokenize(h, language) for h in hypotheses],
                              [[multi30k_tokenize(r, language) for r in references]])
    return {"bleu": bleu.score, "signature": str(default.get_signature()),
            "bleu_lc_tok": lc_tok.score, "signature_lc_tok": "lc+moses-norm+moses-tok|" + str(tok.get_signature())}
