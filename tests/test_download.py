"""Tests for training.download: the planned layout, and fetching from a fake file:// upstream."""
from __future__ import annotations

import gzip
import os
from pathlib import Path

import pytest

from training import download as dl
from training.download import DownloadError, PlannedFile, download, plan_downloads

# The listing of /work/shared/data/multi30k (README.md aside), hard-coded so the test runs anywhere.
SHARED_LAYOUT = sorted(
    [f"{split}.{lang}.gz" for split in ("train", "val", "test_2016_flickr") for lang in ("en", "de", "fr", "cs")]
    + [f"tok/{split}.lc.norm.tok.{lang}" for split in ("val", "test_2016_flickr") for lang in ("en", "de", "fr", "cs")]
)
LINES = {"train": 3, "val": 2, "test_2016_flickr": 2}


def _text(split: str, lang: str, tokenized: bool = False, lines: int | None = None) -> str:
    n = LINES[split] if lines is None else lines
    tag = "tok" if tokenized else "raw"
    return "".join(f"{tag} {split} {lang} sentence {i}\n" for i in range(n))


def _make_upstream(root: Path, langs: tuple[str, ...] = ("en", "de")) -> str:
    """A fake multi30k/dataset tree under ``root``; returns its file:// base URL."""
    raw, tok = root / "data/task1/raw", root / "data/task1/tok"
    raw.mkdir(parents=True)
    tok.mkdir(parents=True)
    for split in LINES:
        for lang in langs:
            (raw / f"{split}.{lang}.gz").write_bytes(gzip.compress(_text(split, lang).encode()))
            (tok / f"{split}.lc.norm.tok.{lang}").write_text(_text(split, lang, tokenized=True))
    return root.as_uri() + "/"


@pytest.fixture
def upstream(tmp_path: Path) -> tuple[str, Path]:
    root = tmp_path / "upstream"
    return _make_upstream(root), root


def _listing(directory: Path) -> list[str]:
    return sorted(p.relative_to(directory).as_posix() for p in directory.rglob("*") if p.is_file())


# --- planning -------------------------------------------------------------------------------


def test_plan_matches_shared_copy_layout() -> None:
    plan = plan_downloads()
    assert sorted(e.dest.as_posix() for e in plan) == SHARED_LAYOUT
    assert all(isinstance(e, PlannedFile) for e in plan)
    with pytest.raises(AttributeError):
        plan[0].url = "x"  # type: ignore[misc]


def test_plan_urls_follow_upstream_paths() -> None:
    plan = {e.dest.as_posix(): e for e in plan_downloads(["en", "de"], base_url="https://example.org/repo")}
    assert plan["train.de.gz"].url == "https://example.org/repo/data/task1/raw/train.de.gz"
    assert plan["tok/val.lc.norm.tok.en"].url == "https://example.org/repo/data/task1/tok/val.lc.norm.tok.en"
    assert plan["tok/val.lc.norm.tok.en"].tokenized and not plan["tok/val.lc.norm.tok.en"].gzipped
    assert len(plan) == 3 * 2 + 2 * 2
    default = plan_downloads(["en"], ["val"])[0]
    assert default.url == dl.DEFAULT_BASE_URL + "data/task1/raw/val.en.gz"


def test_plan_only_tokenizes_val_and_test() -> None:
    assert all(not e.tokenized for e in plan_downloads(["en"], ["train"]))


@pytest.mark.parametrize("langs, splits", [(["en", "xx"], ["val"]), (["en"], ["test_2017_flickr"]), ([], ["val"])])
def test_plan_rejects_unknown_or_missing_names(langs: list[str], splits: list[str]) -> None:
    with pytest.raises(DownloadError):
        plan_downloads(langs, splits)


# --- fetching -------------------------------------------------------------------------------


def test_fetch_from_file_upstream_produces_layout(tmp_path: Path, upstream: tuple[str, Path]) -> None:
    base, _ = upstream
    out = tmp_path / "out"
    report = download(plan_downloads(["en", "de"], base_url=base), out)
    expected = [name for name in SHARED_LAYOUT if name.removesuffix(".gz").rsplit(".", 1)[1] in ("en", "de")]
    assert _listing(out) == expected
    assert len(report.downloaded) == len(expected) and not report.skipped
    assert gzip.decompress((out / "train.de.gz").read_bytes()).decode() == _text("train", "de")
    assert (out / "tok/val.lc.norm.tok.en").read_text() == _text("val", "en", tokenized=True)


def test_existing_files_are_skipped_and_force_redownloads(tmp_path: Path, upstream: tuple[str, Path]) -> None:
    base, _ = upstream
    out = tmp_path / "out"
    plan = plan_downloads(["en", "de"], ["val"], base)
    download(plan, out)
    marker = out / "tok/val.lc.norm.tok.de"
    marker.write_text(_text("val", "de", tokenized=True).upper())  # same line count, different content

    again = download(plan, out)
    assert not again.downloaded and len(again.skipped) == len(plan)
    assert marker.read_text().startswith("TOK")

    forced = download(plan, out, force=True)
    assert len(forced.downloaded) == len(plan) and not forced.skipped
    assert marker.read_text() == _text("val", "de", tokenized=True)


def test_missing_upstream_file_names_the_url(tmp_path: Path, upstream: tuple[str, Path]) -> None:
    base, root = upstream
    (root / "data/task1/raw/val.de.gz").unlink()
    out = tmp_path / "out"
    with pytest.raises(DownloadError, match=r"cannot download .*data/task1/raw/val\.de\.gz") as info:
        download(plan_downloads(["en", "de"], ["val"], base), out)
    assert info.value.__suppress_context__  # raised "from None": no chained traceback
    assert not (out / "val.de.gz").exists()


def test_corrupt_gzip_raises_and_leaves_no_partial_file(tmp_path: Path, upstream: tuple[str, Path]) -> None:
    base, root = upstream
    good = (root / "data/task1/raw/val.en.gz").read_bytes()
    (root / "data/task1/raw/val.en.gz").write_bytes(good[: len(good) // 2])  # truncated
    out = tmp_path / "out"
    with pytest.raises(DownloadError, match=r"val\.en\.gz: not a valid gzip file"):
        download(plan_downloads(["en", "de"], ["val"], base), out)
    assert os.listdir(out) == []  # neither val.en.gz nor a leftover temp file


def test_not_gzip_at_all_is_rejected(tmp_path: Path, upstream: tuple[str, Path]) -> None:
    base, root = upstream
    (root / "data/task1/raw/val.en.gz").write_text("<html>404: Not Found</html>\n")
    out = tmp_path / "out"
    with pytest.raises(DownloadError, match="not a valid gzip file"):
        download(plan_downloads(["en"], ["val"], base), out)
    assert os.listdir(out) == []


def test_empty_download_is_rejected(tmp_path: Path, upstream: tuple[str, Path]) -> None:
    base, root = upstream
    (root / "data/task1/raw/val.en.gz").write_bytes(gzip.compress(b""))
    out = tmp_path / "out"
    with pytest.raises(DownloadError, match=r"val\.en\.gz: downloaded file is empty"):
        download(plan_downloads(["en"], ["val"], base), out)
    assert os.listdir(out) == []


def test_mismatched_line_counts_name_both_files(tmp_path: Path, upstream: tuple[str, Path]) -> None:
    base, root = upstream
    (root / "data/task1/raw/train.de.gz").write_bytes(gzip.compress(_text("train", "de", lines=5).encode()))
    out = tmp_path / "out"
    with pytest.raises(DownloadError, match="line counts differ") as info:
        download(plan_downloads(["en", "de"], ["train"], base), out)
    message = str(info.value)
    assert str(out / "train.en.gz") in message and str(out / "train.de.gz") in message
    assert "3 lines" in message and "has 5" in message


# --- command line ---------------------------------------------------------------------------


def test_module_main_downloads(tmp_path: Path, upstream: tuple[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    base, _ = upstream
    out = tmp_path / "out"
    assert dl.main(["--out", str(out), "--langs", "en,de", "--base-url", base]) == 0
    assert (out / "test_2016_flickr.en.gz").is_file() and (out / "tok/test_2016_flickr.lc.norm.tok.de").is_file()


def test_module_main_reports_errors_without_traceback(
    tmp_path: Path, upstream: tuple[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    base, _ = upstream
    code = dl.main(["--out", str(tmp_path / "out"), "--langs", "en,fr", "--base-url", base])  # no fr upstream
    err = capsys.readouterr().err
    assert code == 2
    assert "error: cannot download" in err and "data/task1/raw/train.fr.gz" in err
    assert "Traceback" not in err


def test_subcommand_parses_and_runs(tmp_path: Path, upstream: tuple[str, Path]) -> None:
    import argparse

    parser = argparse.ArgumentParser(prog="nmt")
    dl.add_parser(parser.add_subparsers(dest="command", required=True))
    base, _ = upstream
    args = parser.parse_args(["download-data", "--out", str(tmp_path / "o"), "--langs", "de,en", "--base-url", base])
    assert args.langs == ["de", "en"] and args.force is False
    assert args.handler(args) == 0
    defaults = parser.parse_args(["download-data"])
    assert defaults.out == "data/multi30k" and defaults.langs == ["en", "de", "fr", "cs"]
    assert defaults.base_url == "https://raw.githubusercontent.com/multi30k/dataset/master/"
    with pytest.raises(SystemExit):
        parser.parse_args(["download-data", "--langs", "en,xx"])
