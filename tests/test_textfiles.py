"""Reading users' documents and writing results: encodings, unreadable files, output names, permissions."""
from __future__ import annotations

import codecs
import os
import stat

import pytest

from queue_config.messages import JobRequest, MessageError
from queue_config.outputs import output_stem, write_atomically
from queue_config.textfiles import DocumentError, decode_text, output_collisions, read_text_file
from worker.engine.evaluation import read_lines


def test_utf8_is_decoded_and_a_leading_byte_order_mark_dropped():
    assert decode_text("Café\r\nok\n".encode()) == "Café\r\nok\n"
    assert decode_text(codecs.BOM_UTF8 + "Café".encode()) == "Café"
    assert decode_text(b"") == ""


@pytest.mark.parametrize("data, message", [
    ("Hello\nwörld".encode("utf-16"), "is UTF-16 text (byte-order mark)"),
    ("Hello".encode("utf-32"), "is UTF-32 text (byte-order mark)"),
    ("Hi\nthere".encode("utf-16-le"), "contains NUL bytes (line 1, byte offset 1)"),
    (b"A dog.\nruns\x00\x01\x02", "contains NUL bytes (line 2, byte offset 11)"),
    ("A dog.\nCafé".encode("latin-1"), "not valid UTF-8 (line 2, byte offset 10)"),
    (codecs.BOM_UTF8 + b"ab\n\xff", "not valid UTF-8 (line 2, byte offset 6)"),
])
def test_text_that_is_not_utf8_is_refused_saying_what_and_where(data, message):
    with pytest.raises(DocumentError) as error:
        decode_text(data)
    assert message in str(error.value)


def test_unreadable_files_give_the_reason(tmp_path):
    (tmp_path / "loop1").symlink_to(tmp_path / "loop2")
    (tmp_path / "loop2").symlink_to(tmp_path / "loop1")
    cases = {tmp_path / "loop1": "cannot read: Too many levels of symbolic links",
             tmp_path: "is a directory", tmp_path / "missing.txt": "file not found"}
    for path, message in cases.items():
        with pytest.raises(DocumentError, match=message):
            read_text_file(path)


def test_reference_lines_name_the_file_on_bad_encoding(tmp_path):
    good = tmp_path / "ok.de"
    good.write_bytes(b"eins\r\nzwei\rdrei\n")
    assert read_lines(good) == ["eins", "zwei", "drei"]
    bad = tmp_path / "src.en"
    bad.write_bytes("one\ncaf\xe9\n".encode("latin-1"))
    with pytest.raises(DocumentError, match=r"src.en: not valid UTF-8 \(line 2"):
        read_lines(bad)
    broken = tmp_path / "x.gz"
    broken.write_bytes(b"not gzip")
    with pytest.raises(DocumentError, match="x.gz: not a readable gzip file"):
        read_lines(broken)


def test_inputs_that_would_share_an_output_name_are_found(tmp_path):
    paths = [tmp_path / "a" / "doc.txt", tmp_path / "b" / "doc.txt", tmp_path / "doc.en.txt", tmp_path / "other.txt"]
    collisions = output_collisions(paths, lambda p: output_stem(p, "en"))
    assert list(collisions) == ["doc"] and len(collisions["doc"]) == 3


def test_results_get_the_permissions_of_a_plain_open(tmp_path):
    old = os.umask(0o027)
    try:
        write_atomically(tmp_path / "r.txt", "x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "r.txt").stat().st_mode) == 0o640
    write_atomically(tmp_path / "s.txt", "y")
    assert stat.S_IMODE((tmp_path / "s.txt").stat().st_mode) == 0o666 & ~old


def test_job_text_with_nul_characters_is_refused():
    raw = {"job_id": "j1", "src": "en", "tgt": "de", "text": "A dog.\x00\x01"}
    with pytest.raises(MessageError, match="'text' contains NUL characters"):
        JobRequest.from_json(raw)
    assert JobRequest.from_json(raw | {"text": "A dog."}).text == "A dog."
