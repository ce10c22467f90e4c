"""Terms in documentation: menu items, key names, UI labels and product names of the held-out
manual pages (docs-test), and whether a translation writes them as the human translator did.

Probe, from the tagged copy of docs-test (docs-dev only for ``--tune``): each ``<menu>``, ``<key>``
and ``<em>`` element of the English side paired in order with the German side's element of the
same name (when both sides have as many); a menu path ("Page - Page Properties") gives one term per
item when both sides have as many items (``<em>`` too: LibreOffice's help sets some paths so).
A tab's "Register:" prefix and trailing ellipses and colons are dropped. Product names
(``PRODUCTS``) found in the English text and unchanged in the German are terms too. A term counts
only where its German form is in the human translation and its English form in the source.
Adversarial slices: terms that are common English words ("Insert", "Format", "Save As"), product
names and key names (Ctrl, Shift, Enter...).

Methods, each on each bundle: ``plain`` (the text options before product names and German key
names were defaults: ``TextOptions(product_names=False, key_names=False)``) and ``default`` (the
default text options: the product names of worker.text.products kept, key spans in German key
names, worker.text.keynames); the others are ``plain`` with a glossary per sentence
(worker.text.glossary: a term is masked like a verbatim span and its target put back): ``copy``
(product and key names, each its own target: copied through unchanged);
``copy-names`` (the same without those that are also English words: Draw, Base, Insert, Up...);
``glossary`` (the term list mined from the TRAINING UI catalogues by ``training.terms``, written to
``--glossary``), ``glossary-labels`` (its terms only where the sentence writes them as labels:
every word capitalised, not the first word), ``glossary-tagged`` (its terms only for the text of
the line's own ``<menu>``, ``<em>`` and ``<key>`` elements, as a markup-aware reader would pass
them) and ``tagged+names`` (``glossary-tagged`` and ``copy-names``, names winning). A term is
right when the human's German form is in the output (case-sensitive, as many times as the probe
holds it); key names are also counted as kept (the English form in the output). chrF and BLEU
(sacreBLEU, cased 13a) on the evaluation set (the probe's pairs and a seeded sample of docs-test,
``--pairs`` in all) tell what a method does to the rest of the sentence. A method decodes only the
sentences in which one of its terms matches; the others are the plain translation (the same
pipeline path: no term, no change); ``default`` decodes every sentence.

    nice -n 19 python bench/doc_terms.py [--bundle models/en-de --bundle DIR] [--pairs 400]
                                         [--methods plain,default] [--glossary /work/runs/doc-terms/ui-terms.tsv]
                                         [--tune] [--json OUT]
"""
from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import sys
import time
import xml.etree.ElementTree as ET
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
for entry in (REPO_ROOT, REPO_ROOT / "bench"):
    if str(entry) not in sys.path:
        sys.path.insert(0, str(entry))

from span_fidelity import cpu_model  # noqa: E402  (bench/ is on sys.path when run as a script)

from worker.text.products import PRODUCTS  # noqa: E402  (the worker's default list of product names)

DOCS = Path("/work/data/general-v2/docs")
KINDS = ("menu", "key", "em", "product")
METHODS = ("plain", "default", "copy", "copy-names", "glossary", "glossary-labels", "glossary-tagged", "tagged+names")
KEY_NAMES = ("Ctrl", "Shift", "Alt", "Enter", "Return", "Tab", "Esc", "Escape", "Del", "Delete", "Insert", "Ins",
             "Backspace", "Space", "Spacebar", "Home", "End", "Page Up", "Page Down", "PgUp", "PgDn", "Command",
             "Option", "Super", "Up", "Down", "Left", "Right", "AltGr", "Fn")
_MENU_SEPARATOR = re.compile(r"\s+(?:-|–|—|▸|>|→)\s+")
_TRAILING = re.compile(r"(?:\s*(?:\.\.\.|…|:))+$")
_TAB_PREFIX = re.compile(r"^(?:Register|Tab):\s*")  # LibreOffice's help names a dialog's tab "Register: Zahlen"
_KEY_PART = re.compile(r"[+\s]+")


@dataclass
class ProbeTerm:
    line: int  # index into the split's pairs
    kind: str
    en: str
    de: str
    slices: tuple[str, ...] = ()  # adversarial slices: common, product, key-name


def read_split(split: str, tagged: bool = False) -> tuple[list[str], list[str]]:
    infix = ".tagged" if tagged else ""
    return tuple([line.rstrip("\n") for line in gzip.open(DOCS / f"{split}{infix}.{lang}.gz", "rt", encoding="utf-8")]
                 for lang in ("en", "de"))


def clean(text: str) -> str:
    return _TAB_PREFIX.sub("", _TRAILING.sub("", " ".join(text.split())).strip())


def elements(tagged: str, kind: str) -> list[str] | None:
    """The text of each outermost ``kind`` element of a tagged line, in order; None if it does not parse."""
    try:
        root = ET.fromstring(f"<s>{tagged}</s>")
    except ET.ParseError:
        return None
    found: list[str] = []

    def walk(node, inside: bool) -> None:
        for child in node:
            if child.tag == kind and not inside:
                found.append(" ".join("".join(child.itertext()).split()))
                walk(child, True)
            else:
                walk(child, inside)
    walk(root, False)
    return found


def tagged_pairs(en: str, de: str, kind: str) -> list[tuple[str, str]]:
    """(English, German) texts of the ``kind`` elements of a pair, paired in order; menu paths
    item by item where both sides have as many items."""
    left, right = elements(en, kind), elements(de, kind)
    if not left or left is None or right is None or len(left) != len(right):
        return []
    out = []
    for a, b in zip(left, right):
        parts_a, parts_b = _MENU_SEPARATOR.split(a), _MENU_SEPARATOR.split(b)
        if kind in ("menu", "em") and len(parts_a) == len(parts_b) > 1:
            out += zip(parts_a, parts_b)
        else:
            out.append((a, b))
    return [(clean(a), clean(b)) for a, b in out]


def slices_of(en: str, kind: str, common: frozenset[str]) -> tuple[str, ...]:
    found = []
    words = en.split()
    if kind in ("menu", "em") and words and all(w.lower().strip("'’") in common for w in words):
        found.append("common")
    if kind == "product":
        found.append("product")
    if kind == "key" and any(part in KEY_NAMES for part in _KEY_PART.split(en)):
        found.append("key-name")
    return tuple(found)


def probe(split: str) -> tuple[list[str], list[str], list[ProbeTerm]]:
    """The split's plain pairs and its probe terms."""
    from worker.text.english_words import COMMON

    sources, references = read_split(split)
    tagged_en, tagged_de = read_split(split, tagged=True)
    terms: list[ProbeTerm] = []
    for k, (src, ref, ten, tde) in enumerate(zip(sources, references, tagged_en, tagged_de)):
        for kind in ("menu", "key", "em"):
            for en, de in tagged_pairs(ten, tde, kind):
                if len(de) > 1 and re.search(r"[^\W\d_]|F\d", en) and en in src and de in ref:
                    terms.append(ProbeTerm(k, kind, en, de, slices_of(en, kind, COMMON)))
        taken = {t.en for t in terms if t.line == k}
        for name in PRODUCTS:
            pattern = rf"(?<![\w-]){re.escape(name)}(?![\w-])"
            hits = len(re.findall(pattern, src))
            if hits and name not in taken and len(re.findall(pattern, ref)) >= hits:
                terms += [ProbeTerm(k, "product", name, name, ("product",)) for _ in range(hits)]
    return sources, references, terms


def copy_terms(names_only: bool = False) -> dict[str, str]:
    """Product and key names, each its own translation; ``names_only``: leave out those that are
    also English words (Draw, Base, Insert, Up...), which a glossary would pin down as ordinary words."""
    from worker.text.english_words import COMMON

    return {name: name for name in (*PRODUCTS, *KEY_NAMES) if not (names_only and name.lower() in COMMON)}


def mined_terms(path: Path) -> dict[str, str]:
    from queue_config.glossary import read_glossary

    return dict(read_glossary(path))


def occurrences(term: str, text: str) -> int:
    return text.count(term)


def fold(term: str) -> str:
    return " ".join(term.casefold().split())  # how glossary terms match


def matched(sentence: str, terms: dict[str, str]) -> dict[str, str]:
    """The entries of ``terms`` that match in ``sentence`` (clear of its verbatim spans)."""
    from worker.text.glossary import Glossary, find_terms
    from worker.text.spans import find_spans

    glossary = terms if isinstance(terms, Glossary) else Glossary.from_pairs(terms)
    return {m.term: m.target for m in find_terms(sentence, glossary, [(sp.start, sp.end) for sp in find_spans(sentence)])}


def label_matches(sentence: str, glossary) -> dict[str, str]:
    """Matches written as labels are: every word capitalised, not the sentence's first word
    (unless the term is the whole sentence)."""
    from worker.text.glossary import find_terms
    from worker.text.spans import find_spans

    out = {}
    for m in find_terms(sentence, glossary, [(sp.start, sp.end) for sp in find_spans(sentence)]):
        text = sentence[m.start:m.end]
        whole = not sentence[:m.start].strip() and not re.search(r"\w", sentence[m.end:])
        if all(w[:1].isupper() or w[:1].isdigit() for w in text.split()) and (m.start > 0 or whole):
            out[m.term] = m.target
    return out


def tagged_matches(tagged: str, mined: dict[str, str]) -> dict[str, str]:
    """Mined terms for the text of the line's ``<menu>``, ``<em>`` and ``<key>`` elements (menu
    paths item by item): what a document's markup says is a label."""
    by_fold = {fold(k): (k, v) for k, v in mined.items()}
    out = {}
    for kind in ("menu", "key", "em"):
        for text in elements(tagged, kind) or ():
            for item in _MENU_SEPARATOR.split(text):
                hit = by_fold.get(fold(clean(item)))
                if hit:
                    out[hit[0]] = hit[1]
    return out


def method_terms(sources: list[str], tagged: list[str], mined: dict[str, str],
                 wanted: tuple[str, ...] = METHODS) -> dict[str, list[dict] | None]:
    """Per method of ``wanted`` (in METHODS' order), the glossary each sentence is translated with
    (empty: the plain translation); None for ``default``, which decodes every sentence with the
    default text options."""
    from worker.text.glossary import Glossary

    everything, names = Glossary.from_pairs(mined), copy_terms(names_only=True)
    full = {name: terms for name, terms in (("copy", copy_terms()), ("copy-names", names), ("glossary", mined))}
    out: dict[str, list[dict] | None] = {"plain": [{} for _ in sources], "default": None}
    out |= {name: [matched(s, Glossary.from_pairs(terms)) for s in sources] for name, terms in full.items()
            if name in wanted or (name == "copy-names" and "tagged+names" in wanted)}
    if "glossary-labels" in wanted:
        out["glossary-labels"] = [label_matches(s, everything) for s in sources]
    if "glossary-tagged" in wanted or "tagged+names" in wanted:
        out["glossary-tagged"] = [tagged_matches(t, mined) for t in tagged]
    if "tagged+names" in wanted:
        # names win over mined terms (the catalogues translate "Draw" as "Anzeigen")
        out["tagged+names"] = [{k: v for k, v in own.items() if fold(k) not in {fold(n) for n in kept}} | kept
                               for own, kept in zip(out["glossary-tagged"], out["copy-names"])]
    return {name: out[name] for name in METHODS if name in wanted}


def score_terms(terms: list[ProbeTerm], translations: list[str], form: str = "de") -> dict:
    """Per kind and slice: (right, total); a term holding k times in one pair needs k in the output."""
    seen: Counter = Counter()
    table: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for t in terms:
        wanted = t.de if form == "de" else t.en
        seen[t.line, wanted] += 1
        ok = occurrences(wanted, translations[t.line]) >= seen[t.line, wanted]
        for key in (t.kind, "all", *(f"slice:{s}" for s in t.slices)):
            table[key][0] += ok
            table[key][1] += 1
    return {key: {"right": r, "total": n, "pct": round(100 * r / n, 1)} for key, (r, n) in sorted(table.items())}


def evaluation_set(n_lines: int, terms: list[ProbeTerm], pairs: int, seed: int = 20261129) -> tuple[list[int], list[int]]:
    """The probe's lines and a seeded sample of the others, ``pairs`` in all (the sample part returned too)."""
    probe_lines = sorted({t.line for t in terms})
    rest = [k for k in range(n_lines) if k not in set(probe_lines)]
    sample = sorted(random.Random(seed).sample(rest, max(0, min(len(rest), pairs - len(probe_lines)))))
    return sorted(probe_lines + sample), sample


PLAIN_OPTIONS = {"product_names": False, "key_names": False}  # the text options before these defaults


def translate(translator, sentences: list[str], per_sentence: list[dict] | None,
              plain: list | None) -> tuple[list, int]:
    """Results for ``sentences``, each with its own glossary; sentences whose glossary is empty
    keep ``plain``'s result. Sentences with the same glossary are translated together. Without
    ``plain``, every sentence with the plain text options; ``per_sentence`` None: every sentence
    with the default ones."""
    from worker.text.glossary import Glossary
    from worker.text.pipeline import TextOptions

    if per_sentence is None:
        return translator.translate_sentences(sentences, text_options=TextOptions()), len(sentences)
    if plain is None:
        return translator.translate_sentences(sentences, text_options=TextOptions(**PLAIN_OPTIONS)), len(sentences)
    results = list(plain)
    groups: dict[tuple, list[int]] = defaultdict(list)
    for k, terms in enumerate(per_sentence):
        if terms:
            groups[tuple(sorted(terms.items()))].append(k)
    for terms, members in groups.items():
        options = TextOptions(glossary=Glossary.from_pairs(list(terms)), **PLAIN_OPTIONS)
        for k, result in zip(members, translator.translate_sentences([sentences[k] for k in members],
                                                                     text_options=options)):
            results[k] = result
    return results, sum(len(m) for m in groups.values())


def lower_case_hits(sentences: list[str], per_sentence: list[dict] | None) -> int:
    """Terms applied to words written in lower case in the source: an ordinary word, not a label."""
    from worker.text.glossary import Glossary, find_terms

    if per_sentence is None:
        return 0
    return sum(1 for s, terms in zip(sentences, per_sentence) if terms
               for m in find_terms(s, Glossary.from_pairs(terms)) if s[m.start:m.end][:1].islower())


def run_bundle(bundle: Path, sources, references, terms, lines, sample, methods, threads: int) -> dict:
    import sacrebleu

    from worker.engine.settings import EngineSettings
    from worker.engine.translator import Translator

    translator = Translator(bundle, EngineSettings(provider="cpu", intra_op_threads=threads))
    src = [sources[k] for k in lines]
    refs = [references[k] for k in lines]
    position = {k: i for i, k in enumerate(lines)}
    local_terms = [ProbeTerm(position[t.line], t.kind, t.en, t.de, t.slices) for t in terms]
    sample_index = [position[k] for k in sample]
    out = {"bundle": str(bundle), "signature": translator.bundle.signature, "methods": {}}
    plain = None
    for name, per_line in methods.items():
        per_sentence = None if per_line is None else [per_line[k] for k in lines]
        started = time.perf_counter()
        results, decoded = translate(translator, src, per_sentence, plain)
        seconds = time.perf_counter() - started
        if plain is None:
            plain = results
        hyps = [r.translation for r in results]
        base = [r.translation for r in plain]
        changed = [i for i in range(len(hyps)) if hyps[i] != base[i]]
        chrf, bleu = sacrebleu.CHRF(), sacrebleu.BLEU()

        def on(indices: list[int], texts: list[str]) -> float | None:
            return round(chrf.corpus_score([texts[i] for i in indices], [[refs[i] for i in indices]]).score, 2) \
                if indices else None
        out["methods"][name] = {
            "terms": score_terms(local_terms, hyps), "keys_kept": score_terms(
                [t for t in local_terms if t.kind == "key"], hyps, form="en").get("all"),
            "chrf": round(chrf.corpus_score(hyps, [refs]).score, 2),
            "bleu": round(bleu.corpus_score(hyps, [refs]).score, 2),
            "chrf_sample": on(sample_index, hyps), "bleu_sample": round(bleu.corpus_score(
                [hyps[i] for i in sample_index], [[refs[i] for i in sample_index]]).score, 2),
            "changed": len(changed), "chrf_changed_plain": on(changed, base), "chrf_changed": on(changed, hyps),
            "lower_case_matches": lower_case_hits(src, per_sentence),
            "glossary_entries_used": sum(len(t) for t in per_sentence or ()),
            "decoded": decoded, "seconds": round(seconds, 1),
            "examples": examples(local_terms, src, refs, hyps),
        }
        out["bleu_signature"] = str(bleu.get_signature())
    return out


def examples(terms: list[ProbeTerm], src, refs, hyps, limit: int = 12) -> list[dict]:
    """Missed terms, a few per kind, for the write-up."""
    out, per_kind = [], Counter()
    seen: Counter = Counter()
    for t in terms:
        seen[t.line, t.de] += 1
        if occurrences(t.de, hyps[t.line]) >= seen[t.line, t.de] or per_kind[t.kind] >= limit // len(KINDS):
            continue
        per_kind[t.kind] += 1
        out.append({"kind": t.kind, "en": t.en, "de": t.de, "source": src[t.line], "reference": refs[t.line],
                    "output": hyps[t.line]})
    return out


def tune(glossary_path: Path) -> dict:
    """Decode-free check of the mined list on docs-dev: the share of probe terms the list covers
    with the human's German form, covers with another form, or does not hold."""
    from training.terms import MiningOptions, mine_catalogues

    _, _, terms = probe("dev")
    terms = [t for t in terms if t.kind != "product"]
    report = {}
    for options in (MiningOptions(), MiningOptions(min_share=0.6), MiningOptions(min_share=0.9),
                    MiningOptions(capitalised=True), MiningOptions(max_words=2), MiningOptions(key_labels=False),
                    MiningOptions(min_count=2)):
        mined = {" ".join(t.source.casefold().split()): t.target for t in mine_catalogues(options=options)}
        outcome = Counter()
        for t in terms:
            target = mined.get(" ".join(t.en.casefold().split()))
            outcome["same" if target == t.de else "other" if target else "absent"] += 1
        report[str(options)] = {"entries": len(mined), **{k: outcome[k] for k in ("same", "other", "absent")}}
    return report


def print_report(report: dict) -> None:
    print(f"CPU {report['cpu']}; evaluation set {report['pairs']} docs-test pairs ({report['sample']} sampled), "
          f"probe {report['probe']['terms']} terms")
    print("  probe terms per kind:", report["probe"]["per_kind"], " slices:", report["probe"]["per_slice"])
    cols = ["menu", "key", "em", "product", "slice:common", "slice:product", "slice:key-name", "all"]
    for bundle in report["bundles"]:
        print(f"\n  {bundle['bundle']} ({bundle['signature']})")
        print("  " + f"{'method':16}" + "".join(f"{c.replace('slice:', '~'):>11}" for c in cols)
              + f"{'keys kept':>10}{'chrF':>7}{'BLEU':>7}{'chrF smp':>9}{'changed':>8}{'chrF ch. plain->':>18}{'lc hits':>8}")
        for name, m in bundle["methods"].items():
            cells = "".join(f"{m['terms'][c]['pct']:10.1f}%" if c in m["terms"] else f"{'-':>11}" for c in cols)
            kept = m["keys_kept"]["pct"] if m["keys_kept"] else float("nan")
            change = f"{m['chrf_changed_plain']}->{m['chrf_changed']}" if m["changed"] else "-"
            print(f"  {name:16}{cells}{kept:9.1f}%{m['chrf']:7.2f}{m['bleu']:7.2f}{m['chrf_sample']:9.2f}"
                  f"{m['changed']:8d}{change:>18}{m['lower_case_matches']:8d}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bundle", action="append", help="bundle directories (default: models/en-de)")
    parser.add_argument("--glossary", default="/work/runs/doc-terms/ui-terms.tsv",
                        help="the mined term list: written here when missing (outside the work tree)")
    parser.add_argument("--pairs", type=int, default=400, help="evaluation set: probe pairs plus a sample, this many in all")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--methods", default=",".join(METHODS),
                        help=f"comma-separated, from {', '.join(METHODS)} (plain is always run first)")
    parser.add_argument("--tune", action="store_true", help="only the decode-free check of mining options on docs-dev")
    parser.add_argument("--json", help="write the report here")
    args = parser.parse_args(argv)

    glossary_path = Path(args.glossary)
    if args.tune:
        print(json.dumps(tune(glossary_path), indent=1))
        return 0
    wanted = tuple(dict.fromkeys(["plain"] + [m.strip() for m in args.methods.split(",") if m.strip()]))
    if unknown := [m for m in wanted if m not in METHODS]:
        parser.error(f"unknown method(s) {', '.join(unknown)}; choose from {', '.join(METHODS)}")
    needs_list = any(m.startswith("glossary") or m == "tagged+names" for m in wanted)
    if needs_list and not glossary_path.exists():
        from training.terms import mine_catalogues, write_glossary

        write_glossary(mine_catalogues(), glossary_path, "UI terms mined by training.terms (bench/doc_terms.py)")
    sources, references, terms = probe("test")
    lines, sample = evaluation_set(len(sources), terms, args.pairs)
    terms = [t for t in terms if t.line in set(lines)]
    mined = mined_terms(glossary_path) if needs_list else {}
    tagged_en, _ = read_split("test", tagged=True)
    methods = method_terms(sources, tagged_en, mined, wanted)
    report = {"command": "python bench/doc_terms.py " + " ".join(argv if argv is not None else sys.argv[1:]),
              "cpu": cpu_model(), "pairs": len(lines), "sample": len(sample), "glossary": str(glossary_path),
              "glossary_terms": len(mined),
              "probe": {"terms": len(terms), "pairs": len({t.line for t in terms}),
                        "per_kind": dict(Counter(t.kind for t in terms)),
                        "per_slice": dict(Counter(s for t in terms for s in t.slices))},
              "bundles": []}
    for bundle in args.bundle or [str(REPO_ROOT / "models" / "en-de")]:
        report["bundles"].append(run_bundle(Path(bundle), sources, references, terms, lines, sample, methods,
                                            args.threads))
    print_report(report)
    if args.json:
        Path(args.json).write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
