"""The general-v2 data build on small synthetic corpora and catalogues: near-duplicate
normalisation, held-out slices carved from the shipped model's slices, .mo reading, whole-catalogue
hold-out, and no held-out pair with a near-duplicate in any training corpus."""
from __future__ import annotations

import json
import re
from pathlib import Path

import polib
import pytest

from training.build_data import OUTPUTS, REPORT, ShippedSplit, build_data
from training.corpus import CorpusError, read_parallel
from training.gettext_catalogues import (SOFTWARE_DEV, SOFTWARE_TEST, find_catalogues, placeholders, read_catalogue,
                                         split_catalogues)
from training.holdout import split_holdout, write_lines
from training.near_duplicates import SideIndex, distinct, normalise

from .conftest import run_nmt

SHIPPED = ShippedSplit(seed=7)  # the shipped sizes (1,000 dev, 2,000 test), another seed


@pytest.mark.parametrize("a, b", [
    ("Tom's  here!", "toms HERE"),
    ("„Hallo“ – sagte er…", "hallo sagte er"),
    ("Straße", "STRASSE"),  # case folding
    ("ﬁle", "file"),  # compatibility ligature (NFKC)
    ("Ｔｏｍ　ｉｓ", "tom is"),  # full-width letters and space
    ("scho\u0308n", "schön"),  # decomposed umlaut
    ("a+b=c $5", "abc5"),  # symbols go, digits stay
])
def test_normalise_folds_case_forms_punctuation_and_spaces(a, b):
    assert normalise(a) == normalise(b)


@pytest.mark.parametrize("a, b", [("Tom is here.", "Tom was here."), ("schon", "schön"), ("2 cats", "two cats")])
def test_normalise_keeps_words_letters_and_numbers_apart(a, b):
    assert normalise(a) != normalise(b)


def test_side_index_matches_either_side_but_never_on_an_empty_normalisation():
    index = SideIndex.of([("I see.", "Ich verstehe."), ("?!", "…")])
    assert index.matches("i SEE", "Aha.") and index.matches("Oh.", "ich verstehe")
    assert not index.matches("...", "!!") and not index.matches("I saw.", "Ich sah.")
    kept, dropped = distinct([("Go!", "Geh!"), ("go", "Lauf!"), ("Run!", "geh"), ("Run.", "Lauf.")], SideIndex())
    assert kept == [("Go!", "Geh!"), ("Run.", "Lauf.")] and dropped == 2


# --- gettext catalogues ----------------------------------------------------------------------


def write_mo(path: Path, entries: list[polib.POEntry]) -> Path:
    catalogue = polib.POFile()
    catalogue.metadata = {"Content-Type": "text/plain; charset=UTF-8", "Plural-Forms": "nplurals=2; plural=n != 1;"}
    for entry in entries:
        catalogue.append(entry)
    path.parent.mkdir(parents=True, exist_ok=True)
    catalogue.save_as_mofile(str(path))
    return path


def entry(msgid: str, msgstr: str, **extra) -> polib.POEntry:
    return polib.POEntry(msgid=msgid, msgstr=msgstr, **extra)


def test_mo_catalogue_gives_singular_and_plural_pairs_and_skips_what_teaches_nothing(tmp_path):
    path = write_mo(tmp_path / "tool.mo", [
        entry("cannot open %s", "%s kann nicht geöffnet werden"),
        polib.POEntry(msgid="%d file removed", msgid_plural="%d files removed",
                      msgstr_plural={0: "%d Datei entfernt", 1: "%d Dateien entfernt"}),
        entry("  -v, --verbose\n        explain what is being done\n", "  -v, --verbose\n        erklären, was geschieht\n"),
        entry("y", "j"),  # one character
        entry("untranslated message", ""),  # like msgfmt, polib leaves it out of the .mo
        entry("OK", "OK"),  # identical
        entry("could not open file", "konnte Datei %s nicht öffnen"),  # placeholder invented
        entry("%2$s of %1$s", "%1$s von %2$s"),  # reordered: the same arguments
        entry("needs review", "braucht Prüfung", flags=["fuzzy"]),  # msgfmt leaves it out of the .mo
    ])
    pairs, count = read_catalogue(path)
    assert sorted(pairs) == [
        ("%2$s of %1$s", "%1$s von %2$s"),
        ("%d file removed", "%d Datei entfernt"),
        ("%d files removed", "%d Dateien entfernt"),
        ("-v, --verbose explain what is being done", "-v, --verbose erklären, was geschieht"),
        ("cannot open %s", "%s kann nicht geöffnet werden"),
    ]
    assert (count.pairs, count.plural_pairs, count.multi_line) == (5, 2, 1)
    assert (count.too_short, count.identical, count.placeholders) == (1, 1, 1)
    assert count.messages == 7 and len(count.sha256) == 64


@pytest.mark.parametrize("source, target, same", [
    ("%s: %d items", "%d Einträge in %s", True),
    ("%02X bytes", "%02x Bytes", True),  # case of a hex conversion
    ("%(name)s left", "%(name)s ist gegangen", True),
    ("{0} of {1}", "{1} von {0}", True),
    ("100% done", "100 % fertig", True),  # not a placeholder
    ("open %s", "öffnen", False),
    ("{count} files", "{anzahl} Dateien", False),
])
def test_placeholders_compare_arguments_not_spelling(source, target, same):
    assert (placeholders(source) == placeholders(target)) == same


def test_whole_catalogues_are_held_out_and_aliases_read_once(tmp_path):
    directory = tmp_path / "LC_MESSAGES"
    shared = entry("memory exhausted", "Speicher erschöpft")
    write_mo(directory / "grep.mo", [entry("invalid pattern", "ungültiges Muster"), shared])
    write_mo(directory / "tar.mo", [entry("archive is empty", "Archiv ist leer"), shared])
    write_mo(directory / "git.mo", [entry("not a git repository", "kein Git-Repository"), shared])
    write_mo(directory / "make.mo", [entry("no targets", "keine Ziele"), shared])
    write_mo(directory / "vim.mo", [entry("recording", "Aufnahme")])
    (directory / "gnu-make.mo").symlink_to("make.mo")

    assert list(find_catalogues(directory)) == ["git", "grep", "make", "tar", "vim"]
    split = split_catalogues(directory, dev=("tar",), test=("grep",), train=("git", "make", "zsh"))
    assert split.test == [("invalid pattern", "ungültiges Muster"), ("memory exhausted", "Speicher erschöpft")]
    assert split.dev == [("archive is empty", "Archiv ist leer"), ("memory exhausted", "Speicher erschöpft")]
    # git and make, once each, and their common message once.
    assert sorted(split.train) == [("memory exhausted", "Speicher erschöpft"), ("no targets", "keine Ziele"),
                                   ("not a git repository", "kein Git-Repository")]
    assert split.roles == {"tar": "dev", "grep": "test", "git": "train", "make": "train"}
    assert split.missing == ["zsh"] and split.ignored == ["vim"]  # the recipe names its catalogues
    assert ("recording", "Aufnahme") in split_catalogues(directory, dev=("tar",), test=("grep",), train=None).train
    with pytest.raises(CorpusError, match="held-out catalogues not in .*wget.mo"):
        split_catalogues(directory, dev=("tar",), test=("wget",))


# --- the whole build -------------------------------------------------------------------------


def write_pairs(directory: Path, prefix: str, pairs: list[tuple[str, str]]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    write_lines(directory / f"{prefix}.en.gz", [s for s, _ in pairs])
    write_lines(directory / f"{prefix}.de.gz", [t for _, t in pairs])


def tatoeba_pairs() -> list[tuple[str, str]]:
    """3,100 sentences; every third has a variant differing only in case and punctuation (a
    near-duplicate an exact split keeps on both sides), every fifth a second translation."""
    pairs = []
    for i in range(3100):
        pairs.append((f"Sentence {i} stands here.", f"Satz {i} steht hier."))
        if i % 3 == 0:
            pairs.append((f"sentence {i} stands HERE!", f"Satz {i} steht hier!"))
        if i % 5 == 0:
            pairs.append((f"Sentence {i} stands here.", f"Der Satz {i} ist hier."))
    return pairs


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("inputs")
    shared, catalogues = root / "shared", root / "LC_MESSAGES"
    write_pairs(shared / "tatoeba-deu-eng", "train", tatoeba_pairs())
    news = [(f"The minister said {i} things on Monday.", f"Der Minister sagte am Montag {i} Dinge.") for i in range(40)]
    write_pairs(shared / "wmt-newstest-de-en", "newstest2013", news[:10])
    write_pairs(shared / "wmt-newstest-de-en", "newstest2014", news[10:20])
    # news[12] again with other punctuation: a near-duplicate of a newstest2014 pair in training.
    write_pairs(shared / "wmt-newstest-de-en", "train", news[20:] + [("the minister said 12 things on monday", "Anders.")])
    captions = [(f"A dog runs past {i} trees.", f"Ein Hund läuft an {i} Bäumen vorbei.") for i in range(40)]
    write_pairs(shared / "multi30k", "val", captions[:5])
    write_pairs(shared / "multi30k", "test_2016_flickr", captions[5:10])
    write_pairs(shared / "multi30k", "train", captions[10:] + [("Something else.", "Ein Hund läuft an 2 Bäumen vorbei!")])

    for index, name in enumerate((*SOFTWARE_DEV, *SOFTWARE_TEST)):
        write_mo(catalogues / f"{name}.mo", [entry(f"{name} failed with code {index}", f"{name} schlug mit Code {index} fehl"),
                                              entry("Memory exhausted", "Speicher erschöpft")])
    write_mo(catalogues / "coreutils.mo", [
        entry("memory exhausted.", "Der Speicher ist erschöpft."),  # near a held-out catalogue's message
        entry("The minister said 3 things on Monday", "Etwas."),  # near a newstest2013 sentence
        entry("cannot remove %s", "%s kann nicht entfernt werden"),
        polib.POEntry(msgid="%d byte", msgid_plural="%d bytes", msgstr_plural={0: "%d Byte", 1: "%d Bytes"}),
    ])
    write_mo(catalogues / "git.mo", [entry("cannot remove %s", "%s kann nicht entfernt werden"),
                                     entry("not a git repository", "kein Git-Repository")])
    write_mo(catalogues / "vim.mo", [entry("recording", "Aufnahme")])  # not in the recipe's list
    return shared, catalogues


@pytest.fixture(scope="module")
def built(inputs, tmp_path_factory) -> tuple[Path, dict]:
    shared, catalogues = inputs
    out = tmp_path_factory.mktemp("built") / "general-v2"
    return out, build_data(shared, catalogues, out, SHIPPED)


def read_output(out: Path, name: str) -> list[tuple[str, str]]:
    directory, prefix = OUTPUTS[name]
    corpus = read_parallel(out / directory / f"{prefix}.en.gz", out / directory / f"{prefix}.de.gz")
    return list(zip(corpus.src, corpus.tgt))


def test_tatoeba_slices_are_the_shipped_slices_less_near_duplicates_of_its_training(built):
    out, report = built
    tatoeba = tatoeba_pairs()
    train, dev, test = split_holdout([s for s, _ in tatoeba], [t for _, t in tatoeba], SHIPPED.dev, SHIPPED.test, SHIPPED.seed)
    shipped_training = SideIndex.of(tatoeba[i] for i in train)
    for name, shipped in (("tatoeba-dev", dev), ("tatoeba-test", test)):
        pairs = read_output(out, name)
        assert set(pairs) <= {tatoeba[i] for i in shipped}
        assert not any(shipped_training.matches(*pair) for pair in pairs)
        counts = report["held_out"][name]
        assert counts["pairs"] == len(pairs) == counts["candidates"] - counts["near_shipped_tatoeba_train"] \
            - counts["near_shipped_news_or_captions"] - counts["near_other_held_out"]
    # Variants of every third sentence: the exact split left some in its training part beside
    # their held-out twin, and held out both of some others.
    test = report["held_out"]["tatoeba-test"]
    assert test["near_shipped_tatoeba_train"] > 0 and test["near_other_held_out"] > 0
    assert report["inputs"]["shipped_slices"] == {"train": len(train), "dev": SHIPPED.dev, "test": SHIPPED.test}


def test_no_training_pair_is_near_a_held_out_pair_and_held_out_pairs_are_distinct(built):
    out, report = built
    held = ["newstest2013", "newstest2014", "tatoeba-dev", "tatoeba-test", "software-dev", "software-test"]
    taken = SideIndex()
    for name in held:
        pairs = read_output(out, name)
        _, dropped = distinct(pairs, taken)
        assert dropped == 0, f"{name} has a pair near an earlier held-out pair"
    for name in ("tatoeba", "wmt-news", "multi30k", "software"):
        pairs = read_output(out, name)
        assert not [pair for pair in pairs if taken.matches(*pair)], name
        assert report["training"][name]["kept"] == len(pairs)
    # The planted near-duplicates went: news[12] variant, the caption, the catalogue messages.
    assert report["training"]["wmt-news"]["dropped_matching"]["newstest2014"] == 1
    assert report["training"]["multi30k"]["dropped_matching"]["multi30k-val"] == 1
    assert ("memory exhausted.", "Der Speicher ist erschöpft.") not in read_output(out, "software")
    assert report["held_out_near_training"]["newstest2013"]["software"] == 1


def test_software_sets_are_whole_catalogues(built):
    out, report = built
    test = read_output(out, "software-test")
    assert {s.split()[0] for s, _ in test if "failed" in s} == set(SOFTWARE_TEST)
    # "Memory exhausted" is in every held-out catalogue: the test set has it, dev loses it.
    assert ("Memory exhausted", "Speicher erschöpft") in test
    assert ("Memory exhausted", "Speicher erschöpft") not in read_output(out, "software-dev")
    assert sorted(read_output(out, "software")) == [("%d byte", "%d Byte"), ("%d bytes", "%d Bytes"),
                                                    ("cannot remove %s", "%s kann nicht entfernt werden"),
                                                    ("not a git repository", "kein Git-Repository")]
    roles = {c["name"]: c["role"] for c in report["software_catalogues"]}
    assert roles["coreutils"] == roles["git"] == "train" and roles["wget"] == "test" and roles["sed"] == "dev"
    assert report["software_catalogues_ignored"] == ["vim"] and "postgres-15" in report["software_catalogues_missing"]


def test_build_is_deterministic_and_its_report_is_written_last(built, inputs, tmp_path):
    out, report = built
    again = tmp_path / "again"
    build_data(*inputs, again, SHIPPED)
    files = sorted(p.relative_to(out) for p in out.rglob("*.gz"))
    assert len(files) == 2 * len(OUTPUTS)
    assert all((out / f).read_bytes() == (again / f).read_bytes() for f in files)
    assert json.loads((again / REPORT).read_text()) | {"inputs": None} == report | {"inputs": None}


def test_nmt_build_data_prints_the_counts_and_refuses_a_missing_catalogue_dir(built, inputs, tmp_path):
    shared, catalogues = inputs
    done = run_nmt("build-data", "--shared", str(shared), "--catalogues", str(catalogues), "--out", str(tmp_path / "o"),
                   "--seed", "7")
    assert done.returncode == 0, done.stderr
    kept = built[1]["held_out"]["tatoeba-test"]["pairs"]
    assert re.search(rf"^  tatoeba-test +{kept} of 2000 ", done.stdout, re.MULTILINE), done.stdout
    missing = run_nmt("build-data", "--shared", str(shared), "--catalogues", str(tmp_path / "none"), "--out", str(tmp_path / "o"))
    assert missing.returncode == 2
    assert missing.stderr.strip().splitlines() == [f"nmt build-data: error: catalogue directory not found: {tmp_path / 'none'}"]
