"""Language check: is a segment, or a document, in the language the model translates from?

Identification is py3langid (a fork of langid.py, Lui & Baldwin 2012: naive Bayes over byte
n-grams, 140 languages); its model ships inside the wheel and loads once per process, on first use.
The choice and its figures are in bench/language_check.py.
"""
from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

UNDETERMINED = "und"

# Tokens that say nothing about the language: links, addresses, handles, paths, code, numbers.
_NOT_PROSE = re.compile(
    r"""^(?:[a-z][a-z0-9+.-]*://\S*|www\.\S+|\S+@\S+\.\S+|[@#]\w\S*|[~.]?/\S*|\S*\\\S*
        |\S*[_=<>{}\[\]|`$^]\S*|\S*\w\(\S*)$""",
    re.IGNORECASE | re.VERBOSE,
)
_LETTER = re.compile(r"[^\W\d_]")
# Scripts written without spaces between words (Han, kana, Thai, Lao, Myanmar, Khmer).
_UNSPACED = re.compile(
    "[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]"
)
_CHARS_PER_UNSPACED_WORD = 2  # a Chinese or Japanese word is about two characters


@dataclass(frozen=True)
class LanguageVerdict:
    """One text's language. ``language`` is the detector's best guess (ISO 639-1 where there is
    one, else 639-3; ``und`` when not judged); ``confidence`` its probability; ``expected_confidence``
    the probability of the expected language. ``mismatch`` is only ever true for a judged text."""

    language: str
    confidence: float
    expected_confidence: float
    judged: bool
    mismatch: bool


NOT_JUDGED = LanguageVerdict(UNDETERMINED, 0.0, 0.0, judged=False, mismatch=False)


@dataclass(frozen=True)
class LanguageCheck:
    """Judges texts against one expected source language.

    A text is judged when it has at least ``min_words`` words and words are at least half of its
    tokens (so lists of numbers, links and code are not). It is a mismatch when the detector's best
    guess is another language *and* gives the expected one less than ``max_expected_confidence``:
    English full of German names comes out as ``de`` 0.35 / ``en`` 0.02-0.2, and a German sentence
    rarely gives ``en`` more than 0.003, so the second condition removes most false alarms at
    almost no cost in recall.
    """

    expected: str = "en"
    min_words: int = 5
    max_expected_confidence: float = 0.05
    max_document_chars: int = 20_000  # a document is judged on evenly spaced samples of this much

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[a-z]{2,3}", self.expected):
            raise ValueError(f"expected must be an ISO 639 code such as 'en', got {self.expected!r}")
        if self.min_words < 1:
            raise ValueError(f"min_words must be >= 1, got {self.min_words}")
        if not 0.0 < self.max_expected_confidence <= 1.0:
            raise ValueError(f"max_expected_confidence must be in (0, 1], got {self.max_expected_confidence}")
        if self.max_document_chars < 1000:
            raise ValueError(f"max_document_chars must be >= 1000, got {self.max_document_chars}")

    def check_segment(self, text: str) -> LanguageVerdict:
        """The language of one segment; not judged when too short or mostly not prose."""
        prose = prose_of(text, self.min_words)
        if prose is None:
            return NOT_JUDGED
        return self._verdict(prose)

    def check_document(self, text: str) -> LanguageVerdict:
        """The language of a whole document judged as one text (sampled past ``max_document_chars``)."""
        return self.check_segment(_sample(text, self.max_document_chars))

    def _verdict(self, prose: str) -> LanguageVerdict:
        if self.expected not in _labels():
            raise ValueError(f"the language detector does not know {self.expected!r}")
        verdict = self._detect(prose)
        if verdict.mismatch:
            # Names carry their own language ("Jürgen Müller ... in Zürich"): ask again without
            # capitalised words after the first, and let the words around the names decide.
            plain = _without_names(prose)
            if plain is not None:
                second = self._detect(plain)
                if not second.mismatch:
                    return second
        return verdict

    def _detect(self, prose: str) -> LanguageVerdict:
        language, confidence = _identifier().classify(prose)
        # The full ranking costs as much as the detection again: only needed off the common path.
        expected_confidence = confidence if language == self.expected else dict(
            _identifier().rank(prose))[self.expected]
        mismatch = language != self.expected and expected_confidence < self.max_expected_confidence
        return LanguageVerdict(language, confidence, expected_confidence, True, mismatch)


@dataclass(frozen=True)
class DocumentLanguage:
    """How much of a document is in another language: ``mismatched`` of ``judged`` segments,
    ``others`` the other languages found, most frequent first, as (code, segments)."""

    expected: str
    judged: int
    mismatched: int
    others: tuple[tuple[str, int], ...]

    @property
    def share(self) -> float:
        return self.mismatched / self.judged if self.judged else 0.0

    @property
    def main_other(self) -> str:
        return self.others[0][0] if self.others else UNDETERMINED


class DocumentLanguageError(ValueError):
    """A document refused because too much of it is not in the expected source language."""

    def __init__(self, summary: DocumentLanguage, max_share: float):
        self.summary = summary
        self.max_share = max_share
        super().__init__(
            f"document is mostly not in {summary.expected!r}: {summary.mismatched} of {summary.judged} "
            f"judged segments ({summary.share:.0%}) are in another language, mostly "
            f"{summary.main_other!r} (refused above {max_share:.0%})"
        )

    def __reduce__(self):  # rebuilt from its numbers, not its message, when pickled
        return type(self), (self.summary, self.max_share)


def summarize(verdicts: Sequence[LanguageVerdict], expected: str,
              document: LanguageVerdict | None = None) -> DocumentLanguage:
    """Count a document's segment verdicts. When no segment could be judged (all short), the
    document judged as one text (``document``) stands for it as a single segment."""
    judged = [v for v in verdicts if v.judged]
    if not judged and document is not None and document.judged:
        judged = [document]
    others = Counter(v.language for v in judged if v.mismatch)
    return DocumentLanguage(expected, len(judged), sum(others.values()), tuple(others.most_common()))


def refuse_foreign_document(verdicts: Sequence[LanguageVerdict], expected: str, max_share: float,
                            document: LanguageVerdict | None = None) -> DocumentLanguage:
    """Raise DocumentLanguageError when more than ``max_share`` of the judged segments are in
    another language; otherwise return the counts (for logging)."""
    if not 0.0 <= max_share < 1.0:
        raise ValueError(f"max_share must be in [0, 1), got {max_share}")
    summary = summarize(verdicts, expected, document)
    if summary.share > max_share:
        raise DocumentLanguageError(summary, max_share)
    return summary


def prose_of(text: str, min_words: int) -> str | None:
    """The words of ``text`` the detector should see, or None when it is not worth judging:
    fewer than ``min_words`` words, or words under half of the tokens. Mostly upper-case text is
    lower-cased (the model learnt from mixed case; 'IN COLORADO, NO PLAYBOOK' reads as pidgin)."""
    words: list[str] = []
    count = other = 0
    for token in unicodedata.normalize("NFC", text).split():
        if _NOT_PROSE.match(token) or not _LETTER.search(token):
            other += 1
            continue
        words.append(token)
        unspaced = len(_UNSPACED.findall(token))
        count += max(1, unspaced // _CHARS_PER_UNSPACED_WORD) if unspaced else 1
    if count < min_words or count < other:
        return None
    prose = " ".join(words)
    if sum(map(str.isupper, prose)) > sum(map(str.islower, prose)):
        prose = prose.lower()
    return prose


def _without_names(prose: str, min_words: int = 3) -> str | None:
    """``prose`` without its capitalised words (the first word excepted), or None when none was
    dropped (text without letter case, lower-cased shouting) or fewer than ``min_words`` are left."""
    first, *rest = prose.split()
    kept = [first] + [word for word in rest if not word[:1].isupper()]
    return " ".join(kept) if len(kept) >= min_words and len(kept) < len(rest) + 1 else None


def _sample(text: str, max_chars: int, pieces: int = 8) -> str:
    """Up to ``max_chars`` of ``text`` in evenly spaced pieces, so that a long document's language
    is not decided by its first pages alone (a word cut at a piece's edge is noise enough to ignore)."""
    if len(text) <= max_chars:
        return text
    size, step = max_chars // pieces, len(text) // pieces
    return "\n".join(text[i * step:i * step + size] for i in range(pieces))


@lru_cache(maxsize=1)
def _identifier():
    """The detector, loaded once per process on first use (after a worker's fork, not at import).
    It is shared, so it is never restricted with ``set_languages``."""
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


@lru_cache(maxsize=1)
def _labels() -> frozenset[str]:
    return frozenset(_identifier().labels)


def load_detector() -> None:
    """Load the detector now (a worker may call this at start-up to time it apart from work)."""
    _identifier()


def refuse_foreign_text(text: str, sentences: Sequence[str], expected: str, max_share: float) -> DocumentLanguage:
    """``refuse_foreign_document`` for a document's text and its sentences: each sentence judged
    on its own, and the whole text where no sentence is long enough to judge."""
    check = LanguageCheck(expected=expected)
    return refuse_foreign_document([check.check_segment(s) for s in sentences], expected, max_share,
                                   check.check_document(text))
