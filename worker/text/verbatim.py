"""Segments that are not prose: lists of identifiers (``arch b2sum base32 base64``), command lines
(``git log --oneline``, ``$ docker run --rm -it ubuntu``), source code and SQL, and markup
alone (``<img src="a.png"/>``, ``<br/>&nbsp;``). The model can only
damage them, so they are not decoded: each is its own translation, flagged ``not_prose``.

``not_prose`` says why a segment is not prose (``identifiers``, ``command``, ``code``,
``markup``), or None.
Every rule asks for the marks of code and the absence of English function words, so a short
phrase ("good morning", "see you") stays prose.
"""
from __future__ import annotations

import re
from typing import Sequence

from .english_words import COMMON
from .spans import Span

IDENTIFIERS, COMMAND, CODE, MARKUP = "identifiers", "command", "code", "markup"

_PROMPT = re.compile(r"^(?:\$|#|>|PS>|C:\\>)\s+")
_IDENTIFIER = re.compile(r"[a-z][a-z0-9_.+-]*")
_CODE_TOKEN = re.compile(r".*(?:\d|[_.+-]\w).*")  # b2sum, base64, x86_64, lib.so, g++
_FUNCTION_WORDS = frozenset(
    "a an the and or but of to in on at for with by from as is are was were be been it this that these those "
    "i you he she we they my your his her our their me him us them not no yes do does did have has had will "
    "would can could should must may might if then than so when where what who how why which there here "
    "please thank thanks hello hi good".split())
_IMPORT = re.compile(r"(?:import\s+[\w.]+(?:\s+as\s+\w+)?|from\s+[\w.]+\s+import\s+[\w, *]+|#include\s*[<\"].*)")
_CODE_OPENERS = re.compile(
    r"^(?:def|class|fn|func|function|var|let|const|public|private|static|return|if|for|while|elif|else)\b")
_CODE_MARKS = re.compile(r"\w\.\w+\(|[;={}]")  # a method call, a statement end, an assignment, a block
_SQL = re.compile(r"\b(?:SELECT|FROM|WHERE|INSERT|INTO|VALUES|UPDATE|SET|DELETE|JOIN|ORDER BY|GROUP BY|CREATE TABLE)\b")
# markup: a comment, a character reference, a closing or self-closing tag, a tag with attributes, or
# a bare tag of a common HTML element; ``<path>``, ``<standard input>`` are words in brackets, which
# software messages translate
_HTML_NAMES = "a|b|i|u|s|p|br|hr|div|span|td|th|tr|table|tbody|thead|li|ul|ol|dl|dt|dd|em|strong|code|pre|h[1-6]|img|sub|sup"
_ATTRIBUTE = r"\s+[\w:.-]+\s*=\s*(?:\"[^\"]*\"|'[^']*'|[^\s<>]+)"
_TAG = rf"<!--.*?-->|&#?\w+;|</[A-Za-z][\w:.-]*\s*>|<[A-Za-z][\w:.-]*(?:{_ATTRIBUTE})*\s*/>|" \
    rf"<[A-Za-z][\w:.-]*(?:{_ATTRIBUTE})+\s*>|<(?:{_HTML_NAMES})>"
_MARKUP = re.compile(rf"(?:[\s\W]*(?:{_TAG}))+[\s\W]*", re.S | re.I)
# A function's prototype, as manuals write it ("Function: void ffi_call (ffi_cif *cif, void *fn)",
# "int main(int argc, char **argv);"): a label, a type and a name, parameters of types and names
_PROTOTYPE = re.compile(r"(?:[A-Z][a-z]+(?: [A-Za-z]+)?:\s+)?(?P<head>[A-Za-z_][\w\s*&:<>]*?)\s*"
                        r"\((?P<params>[^()]*)\)\s*(?:const\s*)?;?")
_C_TYPES = frozenset("void int char short long unsigned signed float double const struct enum union size_t "
                     "ssize_t bool auto static extern inline".split())
_CODE_PUNCTUATION = re.compile(r"[(){}\[\];=<>]|->|=>|::|\+\+|&&|\|\|")
# A usage synopsis without its "Usage:" label, as catalogues hold them ("%s init[db] [-D DATADIR] [-s]
# [-o OPTIONS]"): a program (or its placeholder), at most two subcommand words, then options, option
# groups in brackets, metavariables, "...", "|"; at least two groups or options that start with "-".
_SYNOPSIS_GROUP = r"\[[^\[\]]*(?:\[[^\[\]]*\][^\[\]]*)*\](?:\.\.\.)?"
_SYNOPSIS_ITEM = re.compile(rf"{_SYNOPSIS_GROUP}|--?\w[\w-]*(?:=\S+)?|[A-Z][A-Z0-9_]+(?:\.\.\.)?|\.\.\.|\||"
                            r"[a-z][\w.+-]*(?:\[[\w-]+\])?")
_SYNOPSIS_PROGRAM = re.compile(r"%(?:\d+\$)?s|\$\{?\w+\}?|[a-z][\w.+-]*")


def not_prose(sentence: str, spans: Sequence[Span], commands: frozenset[str]) -> str | None:
    """Why ``sentence`` is not prose, or None. ``spans``: its verbatim spans (worker.text.spans);
    ``commands``: program names (``ls``, ``git``, ``[``) that count as identifiers in a list."""
    text = sentence.strip()
    words = text.split()
    if not words:
        return None
    lowered = {w.lower().strip(".,;:!?\"'()") for w in words}
    if _MARKUP.fullmatch(text):
        return MARKUP
    if _IMPORT.fullmatch(text):
        return CODE
    if len(words) >= 2 and all(len(w) == 1 and w.isalnum() for w in words):
        return IDENTIFIERS  # a letter index (an index's "Jump to: A C F V"), a list of keys
    if _prototype(text):
        return CODE
    # "who" and "yes" are programs too: in a list of programs they are no sign of prose
    if (lowered - commands if len(words) >= 4 else lowered) & _FUNCTION_WORDS and not _SQL.search(text) \
            and not _CODE_OPENERS.match(text):
        return None
    if _synopsis(words):
        return COMMAND
    bare = _PROMPT.sub("", text)
    if any(s.kind == "command" and s.start <= len(text) - len(bare) and s.end >= len(sentence.rstrip()) for s in spans):
        return COMMAND
    if len(words) >= 2 and all(_IDENTIFIER.fullmatch(w) or w in commands for w in words) and not text.endswith("."):
        tokens = sum(bool(_CODE_TOKEN.fullmatch(w)) for w in words)
        named = [w for w in words if w in commands and not _CODE_TOKEN.fullmatch(w)]
        # A command word that is also an English word ("cat", "find", "head") marks a list only
        # beside another mark: "small cat" is prose, "cat ls grep" and "chmod chown touch" are not.
        strong = tokens + sum(w not in COMMON for w in named)
        if 2 * (tokens + len(named)) >= len(words) and (strong or len(named) == len(words)):
            return IDENTIFIERS
    if len(_SQL.findall(text)) >= 2 and text.split()[0].isupper():
        return CODE
    if _CODE_OPENERS.match(text) and _CODE_MARKS.search(text) and not lowered & {"the", "a", "an", "to"}:
        return CODE
    if len(_CODE_PUNCTUATION.findall(text)) >= 3 and re.search(r"[;{}]\s*$", text) \
            and not re.search(r"[A-Za-z]{3,} [A-Za-z]{3,}", text):
        return CODE
    return None


def _synopsis(words: Sequence[str]) -> bool:
    """Whether ``words`` are a usage synopsis with no label: a program or its placeholder, at most
    two subcommand words, and at least two options or bracketed groups that start with "-"."""
    if len(words) < 3 or not _SYNOPSIS_PROGRAM.fullmatch(words[0]):
        return False
    items = re.findall(rf"{_SYNOPSIS_GROUP}|\S+", " ".join(words[1:]))
    if not all(_SYNOPSIS_ITEM.fullmatch(item) for item in items):
        return False
    plain = [item for item in items if item[:1].islower()]
    options = [item for item in items if item.startswith(("-", "[-"))]
    return len(plain) <= 2 and len(options) >= 2 and not any(w.split("[")[0] in _FUNCTION_WORDS for w in plain)


def _prototype(text: str) -> bool:
    """Whether ``text`` is a function's prototype: a return type and a name made of identifiers
    and ``*``, whose last word is an identifier (``ffi_call``, ``getName``) or follows a C type,
    then parameters that are each a few identifiers, C types and ``*`` (or ``...``)."""
    match = _PROTOTYPE.fullmatch(text)
    if not match:
        return False
    head = match.group("head").replace("*", " * ").split()
    if len(head) < 2 or not re.fullmatch(r"[A-Za-z_]\w*", head[-1]):
        return False
    named = "_" in head[-1] or re.search(r"[a-z][A-Z]", head[-1]) or any(w in _C_TYPES for w in head[:-1])
    if not named or any(w.lower() in _FUNCTION_WORDS for w in head):
        return False
    params = [p.replace("*", " * ").replace("&", " & ").split() for p in match.group("params").split(",")]
    if match.group("params").strip() in ("", "void"):
        return True
    typed = any(w in _C_TYPES or w in ("*", "&") or "_" in w for p in params for w in p)  # not "(gear icon)"
    return typed and all(p == ["..."] or (p and len(p) <= 5 and all(re.fullmatch(r"[A-Za-z_]\w*|[*&]|\[\d*\]", w) for w in p)
                                and not any(w.lower() in _FUNCTION_WORDS for w in p))
                         for p in params)
