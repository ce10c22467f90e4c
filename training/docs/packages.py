"""The Debian packages the documentation corpus is read from: fetched at data-build time with
``apt-get download`` into a cache directory outside the work tree (never committed), unpacked
with ``dpkg-deb -x``, with the version and the license their ``.deb`` states.

Some manuals are held back for outside checks of the trained model and must never be read:
``EXCLUDED_PACKAGES`` refuses them wherever a package name enters.
"""
from __future__ import annotations

import fnmatch
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..corpus import CorpusError

# Held back for outside checks (their text must not reach training data): never fetched or read.
EXCLUDED_PACKAGES = ("gimp-help-*", "kicad-doc-*", "debian-faq*", "lilypond-doc*", "linuxcnc-doc-*")


class DocsPackageError(CorpusError):
    """A documentation package could not be fetched, unpacked or read; the message names it."""


class ExcludedPackageError(DocsPackageError):
    """A package of ``EXCLUDED_PACKAGES`` was asked for."""


@dataclass(frozen=True)
class DebPackage:
    """One fetched and unpacked package."""

    name: str
    version: str
    license: str  # the License of the copyright file's ``Files: *`` stanza (or of every stanza)
    deb: Path
    root: Path  # where it is unpacked: ``root/usr/share/...``


def refuse_excluded(name: str) -> None:
    """Raise ``ExcludedPackageError`` for a package held back for outside checks."""
    for pattern in EXCLUDED_PACKAGES:
        if fnmatch.fnmatchcase(name, pattern):
            raise ExcludedPackageError(f"{name}: excluded from the documentation corpus ({pattern} is held back for "
                                       f"outside checks; excluded: {', '.join(EXCLUDED_PACKAGES)})")


def fetch(name: str, cache: Path) -> Path:
    """The ``.deb`` of ``name`` in ``cache``, downloaded with ``apt-get download`` unless one is
    there already (its version is then whatever was fetched first: delete it to refresh)."""
    refuse_excluded(name)
    cache.mkdir(parents=True, exist_ok=True)
    found = sorted(cache.glob(f"{name}_*.deb"))
    if len(found) > 1:
        raise DocsPackageError(f"{name}: several .deb files in {cache} ({', '.join(p.name for p in found)}); keep one")
    if found:
        return found[0]
    try:
        done = subprocess.run(["apt-get", "download", name], cwd=cache, capture_output=True, text=True)
    except FileNotFoundError:
        raise DocsPackageError(f"apt-get download {name}: apt-get not found (a Debian or Ubuntu host is needed; "
                               "--no-docs builds without the documentation corpus)") from None
    found = sorted(cache.glob(f"{name}_*.deb"))
    if done.returncode != 0 or len(found) != 1:
        lines = done.stderr.splitlines()
        errors = [line for line in lines if line.startswith("E:")] or lines or ["?"]
        raise DocsPackageError(f"apt-get download {name} failed: {errors[-1].strip()} "
                               "(run apt-get update first, or --no-docs)")
    return found[0]


def unpack(deb: Path, into: Path) -> DebPackage:
    """Unpack ``deb`` under ``into/NAME_VERSION`` (once: an earlier complete unpacking is reused)."""
    name, version = _field(deb, "Package"), _field(deb, "Version")
    refuse_excluded(name)
    root = into / f"{name}_{version.replace(':', '%3a')}"
    if not root.is_dir():
        into.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=into))
        try:
            subprocess.run(["dpkg-deb", "-x", str(deb), str(scratch)], check=True, capture_output=True, text=True)
        except (subprocess.CalledProcessError, FileNotFoundError) as exc:
            shutil.rmtree(scratch, ignore_errors=True)
            raise DocsPackageError(f"{deb}: dpkg-deb -x failed: {getattr(exc, 'stderr', '') or exc}".strip()) from None
        scratch.rename(root)  # complete or absent
    copyright = root / "usr" / "share" / "doc" / name / "copyright"
    licence = license_of(copyright.read_text(encoding="utf-8", errors="replace")) if copyright.is_file() else "unknown"
    return DebPackage(name, version, licence, deb, root)


def _field(deb: Path, name: str) -> str:
    try:
        done = subprocess.run(["dpkg-deb", "-f", str(deb), name], check=True, capture_output=True, text=True)
    except (subprocess.CalledProcessError, FileNotFoundError) as exc:
        raise DocsPackageError(f"{deb}: not a readable .deb ({exc})") from None
    return done.stdout.strip()


def license_of(copyright: str) -> str:
    """The license of a Debian copyright file: in the machine-readable format, the ``License`` of
    the ``Files: *`` stanza, else the distinct licenses of all stanzas but ``debian/*``, joined
    with "; "; in free text, the first GPL/CC/MIT/BSD name it mentions, else "see copyright"."""
    stanzas = [_stanza(block) for block in copyright.split("\n\n")]
    for stanza in stanzas:
        if stanza.get("files", "").split() == ["*"] and stanza.get("license"):
            return stanza["license"]
    named = [s["license"] for s in stanzas if "files" in s and s.get("license")
             and not all(f.startswith("debian/") for f in s["files"].split())]
    if named:
        return "; ".join(dict.fromkeys(named))
    lowered = copyright.lower()
    for needle, name in (("gnu general public license", "GPL"), ("creative commons", "CC"), ("mit license", "MIT"),
                         ("bsd", "BSD")):
        if needle in lowered:
            return f"{name} (free-text copyright file)"
    return "see copyright"


def _stanza(block: str) -> dict[str, str]:
    """The first line of each field of one stanza, keys lower-cased."""
    fields: dict[str, str] = {}
    for line in block.splitlines():
        if line and not line[0].isspace() and ":" in line and not line.startswith("#"):
            key, value = line.split(":", 1)
            fields[key.strip().lower()] = " ".join(value.split())
    return fields
