"""``nmt download-data``: fetch Multi30k task 1 from github.com/multi30k/dataset into a local directory
laid out like the shared copy (``{split}.{lang}.gz`` raw text, ``tok/{split}.lc.norm.tok.{lang}``).
"""
from __future__ import annotations

import argparse
import gzip
import logging
import os
import sys
import tempfile
import urllib.error
import urllib.request
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Iterable, Sequence

DEFAULT_BASE_URL = "https://raw.githubusercontent.com/multi30k/dataset/master/"
DEFAULT_OUT = "data/multi30k"
LANGUAGES = ("en", "de", "fr", "cs")
SPLITS = ("train", "val", "test_2016_flickr")
TOKENIZED_SPLITS = ("val", "test_2016_flickr")  # the shared copy has no tokenized train files
RAW_REMOTE = "data/task1/raw/{split}.{lang}.gz"
TOK_REMOTE = "data/task1/tok/{split}.lc.norm.tok.{lang}"
RAW_LOCAL = "{split}.{lang}.gz"
TOK_LOCAL = "tok/{split}.lc.norm.tok.{lang}"
TIMEOUT_S = 60.0
CHUNK = 1 << 16

log = logging.getLogger(__name__)


class DownloadError(ValueError):
    """A file could not be fetched, is corrupt or empty, or the corpus is misaligned; the message says which."""


@dataclass(frozen=True)
class PlannedFile:
    """One file to fetch: its URL and its path relative to the output directory."""

    url: str
    dest: Path
    split: str
    lang: str
    tokenized: bool = False

    @property
    def gzipped(self) -> bool:
        return self.dest.suffix == ".gz"


@dataclass(frozen=True)
class DownloadReport:
    downloaded: list[Path] = field(default_factory=list)
    skipped: list[Path] = field(default_factory=list)

    def __str__(self) -> str:
        return f"{len(self.downloaded)} files downloaded, {len(self.skipped)} already present"


# --- planning -------------------------------------------------------------------------------


def plan_downloads(
    langs: Sequence[str] = LANGUAGES,
    splits: Sequence[str] = SPLITS,
    base_url: str = DEFAULT_BASE_URL,
) -> list[PlannedFile]:
    """The files to fetch: raw text for every split and language, tokenized references for val/test."""
    langs, splits = _checked("language", langs, LANGUAGES), _checked("split", splits, SPLITS)
    base = base_url.rstrip("/") + "/"
    plan = [_entry(base, RAW_REMOTE, RAW_LOCAL, split, lang, False) for split in splits for lang in langs]
    plan += [
        _entry(base, TOK_REMOTE, TOK_LOCAL, split, lang, True)
        for split in splits
        if split in TOKENIZED_SPLITS
        for lang in langs
    ]
    return plan


def _entry(base: str, remote: str, local: str, split: str, lang: str, tokenized: bool) -> PlannedFile:
    return PlannedFile(
        url=base + remote.format(split=split, lang=lang),
        dest=Path(local.format(split=split, lang=lang)),
        split=split,
        lang=lang,
        tokenized=tokenized,
    )


def _checked(kind: str, values: Sequence[str], known: Sequence[str]) -> list[str]:
    unique = list(dict.fromkeys(values))
    if not unique:
        raise DownloadError(f"no {kind}s given (choose from {', '.join(known)})")
    unknown = [v for v in unique if v not in known]
    if unknown:
        raise DownloadError(f"unknown {kind} {', '.join(map(repr, unknown))} (choose from {', '.join(known)})")
    return unique


# --- fetching -------------------------------------------------------------------------------


def download(
    plan: Iterable[PlannedFile],
    out_dir: Path,
    force: bool = False,
    timeout: float = TIMEOUT_S,
) -> DownloadReport:
    """Fetch every planned file into ``out_dir`` (existing files are kept unless ``force``), then check
    that each split's files have equal line counts."""
    plan, out_dir = list(plan), Path(out_dir)
    report = DownloadReport()
    for entry in plan:
        dest = out_dir / entry.dest
        if dest.exists() and not force:
            log.info("%s: already present, skipped", dest)
            report.skipped.append(dest)
            continue
        log.info("%s <- %s", dest, entry.url)
        fetch_file(entry, dest, timeout)
        report.downloaded.append(dest)
    check_line_counts(plan, out_dir)
    return report


def fetch_file(entry: PlannedFile, dest: Path, timeout: float = TIMEOUT_S) -> None:
    """Download ``entry.url`` to ``dest`` atomically: a temp file beside it, verified, then renamed."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".part", dir=dest.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            _copy_url(entry.url, out, timeout)
        _verify(tmp, entry)
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)


def _copy_url(url: str, out: BinaryIO, timeout: float) -> None:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            while chunk := response.read(CHUNK):
                out.write(chunk)
    except urllib.error.HTTPError as exc:
        raise DownloadError(f"cannot download {url}: HTTP {exc.code} {exc.reason}") from None
    except urllib.error.URLError as exc:
        raise DownloadError(f"cannot download {url}: {exc.reason}") from None
    except (OSError, ValueError) as exc:  # timeouts, dropped connections, malformed URLs
        raise DownloadError(f"cannot download {url}: {exc}") from None


def _verify(path: Path, entry: PlannedFile) -> None:
    """The downloaded file decompresses (if gzip) and has at least one byte of text."""
    try:
        size = _text_size(path, entry.gzipped)
    except (OSError, EOFError, zlib.error) as exc:
        what = "not a valid gzip file" if entry.gzipped else "cannot read the download"
        raise DownloadError(f"{entry.url}: {what} ({exc}); {entry.dest} not written") from None
    if size == 0:
        raise DownloadError(f"{entry.url}: downloaded file is empty; {entry.dest} not written")


def _text_size(path: Path, gzipped: bool) -> int:
    opener = gzip.open if gzipped else open
    size = 0
    with opener(path, "rb") as handle:
        while chunk := handle.read(CHUNK):
            size += len(chunk)
    return size


# --- alignment ------------------------------------------------------------------------------


def check_line_counts(plan: Iterable[PlannedFile], out_dir: Path) -> dict[str, int]:
    """Every split's files (all languages, raw and tokenized) have the same number of lines.

    Returns the line count of each split; raises ``DownloadError`` naming two files that differ.
    """
    groups: dict[str, list[Path]] = {}
    for entry in plan:
        groups.setdefault(entry.split, []).append(Path(out_dir) / entry.dest)
    counts: dict[str, int] = {}
    for split, paths in groups.items():
        first, expected = paths[0], count_lines(paths[0])
        for path in paths[1:]:
            found = count_lines(path)
            if found != expected:
                raise DownloadError(
                    f"line counts differ in split {split!r}: {first} has {expected} lines, {path} has {found} "
                    f"(re-download with --force)"
                )
        counts[split] = expected
    return counts


def count_lines(path: Path) -> int:
    """Lines in a plain or gzip text file, counting a last line without a newline."""
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rb") as handle:
            return sum(1 for _ in handle)
    except FileNotFoundError:
        raise DownloadError(f"file not found: {path}") from None
    except (OSError, EOFError, zlib.error) as exc:
        raise DownloadError(f"{path}: cannot read ({exc}); re-download with --force") from None


# --- command line ---------------------------------------------------------------------------


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("download-data", help="download Multi30k task 1 from GitHub", description=__doc__)
    add_arguments(p)
    p.set_defaults(handler=run)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", default=DEFAULT_OUT, help="output directory (default: %(default)s)")
    parser.add_argument(
        "--langs",
        type=_parse_langs,
        default=list(LANGUAGES),
        help=f"comma-separated languages (default: {','.join(LANGUAGES)})",
    )
    parser.add_argument("--base-url", default=DEFAULT_BASE_URL, help="repository root URL (default: %(default)s)")
    parser.add_argument("--force", action="store_true", help="download again even if files exist")


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    plan = plan_downloads(args.langs, SPLITS, args.base_url)
    report = download(plan, Path(args.out), force=args.force)
    print(f"{args.out}: {report}; line counts agree for {', '.join(args.langs)}")
    return 0


def _parse_langs(text: str) -> list[str]:
    langs = [lang.strip() for lang in text.split(",") if lang.strip()]
    try:
        return _checked("language", langs, LANGUAGES)
    except DownloadError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.download", description=__doc__)
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return run(args)
    except DownloadError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
