"""Corpus reading: gzip and plain files, and errors that name the file and line."""
from __future__ import annotations

import gzip

import pytest

from training.corpus import CorpusError, filter_by_length, find_corpus_file, read_lines, read_parallel


def write(path, text: str | bytes, gz: bool = False):
    data = text.encode("utf-8") if isinstance(text, str) else text
    if gz:
        with gzip.open(path, "wb") as handle:
            handle.write(data)
    else:
        path.write_bytes(data)
    return path


@pytest.mark.parametrize("gz", [False, True])
def test_reads_plain_and_gzip_files_stripping_whitespace(tmp_path, gz):
    src = write(tmp_path / "a.en", "  Hello world. \nSecond line\n", gz)
    tgt = write(tmp_path / "a.de", "Hallo Welt.\nZweite Zeile\n", gz)
    corpus = read_parallel(src, tgt)
    assert corpus.src == ["Hello world.", "Second line"]
    assert corpus.tgt == ["Hallo Welt.", "Zweite Zeile"]


def test_gzip_detected_by_magic_bytes_without_suffix(tmp_path):
    path = write(tmp_path / "noext", "Zeile\n", gz=True)
    assert read_lines(path) == ["Zeile"]


def test_mismatched_line_counts_name_both_files_and_the_line(tmp_path):
    src = write(tmp_path / "c.en", "one\ntwo\nthree\n")
    tgt = write(tmp_path / "c.de", "eins\nzwei\n")
    with pytest.raises(CorpusError, match=r"c\.en has 3 lines, .*c\.de has 2.*ends at line 2"):
        read_parallel(src, tgt)


def test_undecodable_bytes_name_file_and_line(tmp_path):
    src = write(tmp_path / "d.en", b"fine\nalso fine\nbad \xff\xfe byte\n")
    tgt = write(tmp_path / "d.de", "gut\nauch gut\nschlecht\n")
    with pytest.raises(CorpusError, match=r"d\.en: line 3 is not valid UTF-8"):
        read_parallel(src, tgt)


@pytest.mark.parametrize("content", ["", "\n\n  \n"])
def test_empty_corpus_is_an_error(tmp_path, content):
    src = write(tmp_path / "e.en", content)
    tgt = write(tmp_path / "e.de", content)
    with pytest.raises(CorpusError, match="empty corpus"):
        read_parallel(src, tgt)


def test_blank_line_on_one_side_only_is_reported(tmp_path):
    src = write(tmp_path / "f.en", "one\n\nthree\n")
    tgt = write(tmp_path / "f.de", "eins\nzwei\ndrei\n")
    with pytest.raises(CorpusError, match=r"f\.en: line 2 is empty"):
        read_parallel(src, tgt)


def test_truncated_gzip_is_a_clear_error(tmp_path):
    good = gzip.compress(("line\n" * 1000).encode())
    path = write(tmp_path / "g.en.gz", good[: len(good) // 2])
    with pytest.raises(CorpusError, match=r"g\.en\.gz: cannot read"):
        read_lines(path)


def test_missing_file_names_the_path(tmp_path):
    with pytest.raises(CorpusError, match=r"corpus file not found: .*train\.en"):
        find_corpus_file(tmp_path, "train", "en")


def test_find_prefers_existing_plain_or_gzip(tmp_path):
    write(tmp_path / "train.en.gz", "x\n", gz=True)
    assert find_corpus_file(tmp_path, "train", "en").name == "train.en.gz"


def test_length_and_ratio_filtering_reports_counts():
    src = [[1] * 3, [1] * 1, [1] * 50, [1] * 2, [1] * 10]
    tgt = [[1] * 4, [1] * 0, [1] * 5, [1] * 9, [1] * 11]
    keep, report = filter_by_length(src, tgt, min_len=1, max_len=40, max_ratio=3.0)
    assert keep == [0, 4]
    assert (report.kept, report.too_short, report.too_long, report.bad_ratio) == (2, 1, 1, 1)
    assert "kept 2 of 5" in str(report)
