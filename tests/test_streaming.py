"""Big plain-text files: translated in slices and written as they go (``.jsonl``), the same text as
translating them whole, and an interrupted run resumes where it stopped."""
from __future__ import annotations

import json

from .conftest import make_toy_pairs, run_nmt


def test_a_big_file_is_streamed_and_an_interrupted_run_resumes(tiny_bundle, tmp_path):
    lines = [" ".join(s for s, _ in make_toy_pairs(3, seed=n)) for n in range(40)]
    text = "\n".join(lines[:20]) + "\n\n  " + "\n".join(lines[20:]) + "\n"
    (tmp_path / "big.txt").write_text(text, encoding="utf-8")
    common = ("translate", "--bundle", str(tiny_bundle), "--device", "cpu", str(tmp_path / "big.txt"))
    whole = run_nmt(*common, "--out", str(tmp_path / "whole"))
    assert whole.returncode == 0, whole.stderr
    streamed = run_nmt(*common, "--out", str(tmp_path / "streamed"), "--stream-above", "25")
    assert streamed.returncode == 0 and "streamed to" in streamed.stderr, streamed.stderr
    out = (tmp_path / "streamed" / "big.de.txt").read_text(encoding="utf-8")
    assert out == (tmp_path / "whole" / "big.de.txt").read_text(encoding="utf-8")
    assert not (tmp_path / "streamed" / "big.de.json").exists()
    records = [json.loads(line) for line in (tmp_path / "streamed" / "big.de.jsonl").read_text(encoding="utf-8").splitlines()]
    segments = [r for r in records if r["kind"] == "segment"]
    assert records[0]["kind"] == "header" and records[-1]["kind"] == "end" and len(segments) == records[0]["sentences"] > 100
    assert [s["index"] for s in segments] == list(range(len(segments)))
    for segment in segments:  # offsets are those of the whole source and translated files
        assert [text[a:b] for a, b in segment["source_words"]] == segment["source"].split()
        assert [out[a:b] for a, b in segment["target_words"]] == segment["translation"].split()

    # Interrupted after 60 segments, in the middle of a line: the run goes on from segment 60.
    jsonl = tmp_path / "streamed" / "big.de.jsonl"
    kept = jsonl.read_text(encoding="utf-8").splitlines()[:61]
    jsonl.write_text("\n".join(kept) + "\n" + kept[-1][:40], encoding="utf-8")
    (tmp_path / "streamed" / "big.de.txt").rename(tmp_path / "streamed" / "big.de.txt.partial")
    again = run_nmt(*common, "--out", str(tmp_path / "streamed"), "--stream-above", "25")
    assert again.returncode == 0 and "(resumed after 60)" in again.stderr, again.stderr
    assert (tmp_path / "streamed" / "big.de.txt").read_text(encoding="utf-8") == out
    assert [json.loads(line)["index"] for line in jsonl.read_text(encoding="utf-8").splitlines()[1:-1]] == \
        list(range(len(segments)))
