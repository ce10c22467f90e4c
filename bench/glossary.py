"""Glossaries (forced terminology): how many terms reach the translation, and what they do to BLEU.

Term set, built from the data alone and deterministically: a bilingual lexicon from the bundle's
TRAINING corpora (Dice coefficient of lowercased English and German words over sentence pairs),
then for each dev sentence up to ``--per-sentence`` terms (English word -> German word) where the
English word is a content word (>= 4 letters, not a stopword) occurring once in the source, and the
German word is the form found in that sentence's reference (so the term carries the reference's
inflection), with Dice >= ``--min-dice``; the most associated first.

Each dev set is translated once without a glossary and once with each sentence's own terms: the
sentences go through ``Translator.translate_sentences`` in groups that share one glossary (a group
never holds a sentence in which another member's term would match). Reported per set: terms,
applied (``details["glossary"]`` says applied and the target term is in the translation, as
whole words, ignoring case: a sentence-initial capital),
present without the glossary, sentences flagged ``glossary_miss``, sacreBLEU (cased, 13a) with vs
without, and chrF.

    python bench/glossary.py [--bundle models/en-de] [--data ../shared/data] [--lines 500]
                             [--per-sentence 2] [--min-dice 0.3] [--threads 1] [--json]
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from span_fidelity import cpu_model  # noqa: E402  (bench/ is on sys.path when run as a script)
from bench.test_sets import BUILT  # noqa: E402

_WORD = re.compile(r"[^\W\d_]+")
STOP_EN = frozenset("""about above after again against also among another around because been before being
below between both came come could does doing down during each even ever every from further have having here
into just like made make many more most much must near once only other over same should some such than that
their them then there these they this those through under until upon very want well were what when where which
while will with would your yours always never something someone anything nothing people thing things dont""".split())
STOP_DE = frozenset("""der die das den dem des ein eine einen einem einer eines und oder aber nicht ist sind war
waren wird werden hat haben hatte sich sie ihr ihre ihren ihrem ihm ihn ich du er es wir mit von zu zum zur auf
aus bei nach vor für über unter durch als wie auch noch nur schon sehr mehr kann können muss dass wenn sein
seine seinen seinem dieser diese dieses diesen diesem man mich mir dich dir uns euch was wer wo im in an am""".split())


def corpora_for(bundle: Path, data: Path) -> dict:
    """Training corpora (lexicon) and dev sets of a bundle: its manifest's training config names them."""
    tatoeba = BUILT / "tatoeba"
    wmt, m30k = data / "wmt-newstest-de-en", data / "multi30k"
    if "multi30k" in bundle.name:
        return {"train": [m30k / "train"], "dev": {"multi30k-val": m30k / "val"}}
    return {"train": [tatoeba / "train", wmt / "train", m30k / "train"],
            "dev": {"newstest2013": wmt / "newstest2013", "tatoeba-dev": tatoeba / "dev"}}


def read(prefix: Path, language: str, limit: int | None = None) -> list[str]:
    from worker.engine.evaluation import read_lines

    lines = read_lines(prefix.with_name(f"{prefix.name}.{language}.gz"))
    return lines[:limit] if limit else lines


def words(line: str) -> set[str]:
    return {w for w in _WORD.findall(line.lower())}


def lexicon(train: list[Path], candidates: set[str]) -> tuple[Counter, Counter, Counter]:
    """Sentence counts of each candidate English word, of each German word, and of their pairs."""
    en_count, de_count, pair_count = Counter(), Counter(), Counter()
    for prefix in train:
        for en, de in zip(read(prefix, "en"), read(prefix, "de")):
            de_words = {w for w in words(de) if len(w) >= 3 and w not in STOP_DE}
            de_count.update(de_words)
            for e in words(en) & candidates:
                en_count[e] += 1
                pair_count.update((e, g) for g in de_words)
    return en_count, de_count, pair_count


def term_sets(sources: list[str], references: list[str], counts, per_sentence: int, min_dice: float) -> list[list]:
    """Per dev sentence: [(English word, German form in the reference, dice)], most associated first."""
    from worker.text.spans import find_spans

    en_count, de_count, pair_count = counts
    out = []
    for source, reference in zip(sources, references):
        spans = [(s.start, s.end) for s in find_spans(source)]
        found = []
        for e in sorted(words(source)):
            if len(e) < 4 or e in STOP_EN or not en_count[e]:
                continue
            hits = [m for m in re.finditer(rf"(?<!\w){re.escape(e)}(?!\w)", source, re.IGNORECASE)]
            if len(hits) != 1 or any(a < hits[0].end() and hits[0].start() < b for a, b in spans):
                continue
            forms = {}
            for m in re.finditer(r"\w+", reference):
                if m.group().lower() not in forms:
                    forms[m.group().lower()] = m.group()
            best = max(((2 * pair_count[e, g] / (en_count[e] + de_count[g]), g) for g in forms
                        if de_count[g] and (e, g) in pair_count), default=None)
            if best and best[0] >= min_dice:
                found.append((e, forms[best[1]], round(best[0], 4)))
        found.sort(key=lambda t: (-t[2], t[0]))
        chosen, used = [], set()
        for e, g, dice in found:  # one term per German form
            if g.lower() not in used and len(chosen) < per_sentence:
                chosen.append((e, g, dice))
                used.add(g.lower())
        out.append(chosen)
    return out


def groups(sources: list[str], terms: list[list]) -> list[list[int]]:
    """Sentence indices in groups whose members can share one glossary: no term of one member
    matches in another, and no source word has two targets."""
    from worker.text.glossary import Glossary, find_terms

    out: list[tuple[list[int], dict]] = []
    for index, own in enumerate(terms):
        mine = {e: g for e, g, _ in own}
        for members, glossary in out:
            if any(glossary.get(e, g) != g for e, g in mine.items()):
                continue
            theirs = Glossary.from_pairs({e: g for e, g in glossary.items() if e not in mine})
            if find_terms(sources[index], theirs):
                continue
            if mine and any(find_terms(sources[k], Glossary.from_pairs(mine)) for k in members):
                continue
            members.append(index)
            glossary.update(mine)
            break
        else:
            out.append(([index], dict(mine)))
    return [members for members, _ in out]


def contains(translation: str, term: str) -> bool:
    """Whether the translation holds the term as whole words (a sentence-initial capital allowed)."""
    return re.search(rf"(?<!\w){re.escape(term)}(?!\w)", translation, re.IGNORECASE) is not None


def run_set(translator, name: str, sources: list[str], references: list[str], terms: list[list]) -> dict:
    import sacrebleu

    from worker.text.glossary import Glossary
    from worker.text.pipeline import TextOptions
    from worker.text.segment import GLOSSARY_MISS

    started = time.perf_counter()
    plain = translator.translate_sentences(sources)
    plain_seconds = time.perf_counter() - started
    started = time.perf_counter()
    forced = [None] * len(sources)
    parts = groups(sources, terms)
    for members in parts:
        glossary = Glossary.from_pairs({e: g for k in members for e, g, _ in terms[k]})
        results = translator.translate_sentences([sources[k] for k in members],
                                                 text_options=TextOptions(glossary=glossary))
        for k, result in zip(members, results):
            forced[k] = result
    forced_seconds = time.perf_counter() - started
    total = applied = present_without = reported = flagged = 0
    by_method: Counter = Counter()
    for own, base, result in zip(terms, plain, forced):
        entries = {e["term"].lower(): e for e in result.details.get("glossary", ())}
        reported += len(entries)
        flagged += GLOSSARY_MISS in result.flags
        for e, g, _ in own:
            total += 1
            entry = entries.get(e)
            ok = entry is not None and entry["applied"] and contains(result.translation, g)
            applied += bool(ok)
            by_method[entry["method"] if entry else "unmatched"] += 1
            present_without += contains(base.translation, g)
    bleu, chrf = sacrebleu.BLEU(), sacrebleu.CHRF()
    hyp_plain, hyp_forced = [r.translation for r in plain], [r.translation for r in forced]
    return {
        "set": name, "sentences": len(sources), "sentences_with_terms": sum(bool(t) for t in terms),
        "terms": total, "reported": reported, "applied": applied, "applied_pct": 100 * applied / max(1, total),
        "present_without_pct": 100 * present_without / max(1, total), "methods": dict(by_method),
        "flagged_glossary_miss": flagged, "groups": len(parts),
        "bleu_without": bleu.corpus_score(hyp_plain, [references]).score,
        "bleu_with": bleu.corpus_score(hyp_forced, [references]).score,
        "chrf_without": chrf.corpus_score(hyp_plain, [references]).score,
        "chrf_with": chrf.corpus_score(hyp_forced, [references]).score,
        "signature": str(bleu.get_signature()),
        "seconds_without": round(plain_seconds, 1), "seconds_with": round(forced_seconds, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bundle", default=str(REPO_ROOT / "models" / "en-de"))
    parser.add_argument("--data", default=str(REPO_ROOT.parent / "shared" / "data"), help="the shared data directory")
    parser.add_argument("--lines", type=int, default=500, help="first N lines of each dev set")
    parser.add_argument("--per-sentence", type=int, default=2, help="at most N terms per sentence")
    parser.add_argument("--min-dice", type=float, default=0.3)
    parser.add_argument("--threads", type=int, default=1, help="ONNX Runtime intra-op threads")
    parser.add_argument("--terms-out", help="write the term sets (JSON lines) here")
    parser.add_argument("--json", action="store_true", help="print a JSON object as the last line")
    args = parser.parse_args(argv)

    from worker.engine.settings import EngineSettings
    from worker.engine.translator import Translator

    bundle = Path(args.bundle)
    sets = corpora_for(bundle, Path(args.data))
    dev = {name: ([s.strip() for s in read(prefix, "en", args.lines)], read(prefix, "de", args.lines))
           for name, prefix in sets["dev"].items()}
    started = time.perf_counter()
    candidates = {w for sources, _ in dev.values() for s in sources for w in words(s) if len(w) >= 4} - STOP_EN
    counts = lexicon(sets["train"], candidates)
    lexicon_seconds = time.perf_counter() - started
    translator = Translator(bundle, EngineSettings(provider="cpu", intra_op_threads=args.threads))
    report = {"command": " ".join(["python", "bench/glossary.py", *sys.argv[1:]]) if argv is None else argv,
              "bundle": translator.bundle.signature, "cpu": cpu_model(), "lines": args.lines,
              "per_sentence": args.per_sentence, "min_dice": args.min_dice, "beam": translator.default_options.beam,
              "lexicon_seconds": round(lexicon_seconds, 1), "sets": []}
    written = []
    for name, (sources, references) in dev.items():
        terms = term_sets(sources, references, counts, args.per_sentence, args.min_dice)
        written += [json.dumps({"set": name, "line": k + 1, "terms": own}, ensure_ascii=False) for k, own in enumerate(terms)]
        report["sets"].append(run_set(translator, name, sources, references, terms))
    if args.terms_out:
        Path(args.terms_out).write_text("\n".join(written) + "\n", encoding="utf-8")
    print(f"bundle {translator.bundle.manifest.get('name')}, beam {report['beam']}, CPU {report['cpu']}, "
          f"first {args.lines} lines, <= {args.per_sentence} terms a sentence, Dice >= {args.min_dice}")
    print(f"  {'set':14} {'terms':>6} {'applied':>8} {'w/o gl.':>8} {'BLEU w/o':>9} {'BLEU with':>10} "
          f"{'chrF w/o':>9} {'chrF with':>10} {'miss':>5}")
    for s in report["sets"]:
        print(f"  {s['set']:14} {s['terms']:6d} {s['applied_pct']:7.1f}% {s['present_without_pct']:7.1f}% "
              f"{s['bleu_without']:9.2f} {s['bleu_with']:10.2f} {s['chrf_without']:9.2f} {s['chrf_with']:10.2f} "
              f"{s['flagged_glossary_miss']:5d}   methods {s['methods']}")
    if args.json:
        print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
