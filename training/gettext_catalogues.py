"""Software-domain parallel text from compiled gettext catalogues (``.mo``): every translated
message of a German catalogue as an (English, German) pair, and the split of a directory of
catalogues into training, dev and test by WHOLE catalogue (a program's messages share wording and
placeholders, so a message-level split would leak).

Debian installs the German catalogues of the installed programs in ``/usr/share/locale/de/LC_MESSAGES``.
Their text is read at data-build time and written only to the data directory.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

from .corpus import CorpusError

DEFAULT_CATALOGUE_DIR = Path("/usr/share/locale/de/LC_MESSAGES")

# Whole catalogues held out, chosen once for varied content (read in this order; a dev set is
# validated on its first pairs). Test: a network CLI (wget and its gnulib messages: option help,
# errors, progress), account tools (adduser), a desktop dialog (software-properties) and a
# database server's control program (pg_ctl). Dev: a text tool (sed), file search (findutils)
# and a network daemon (avahi).
SOFTWARE_TEST = ("wget", "wget-gnulib", "adduser", "software-properties", "pg_ctl-15")
SOFTWARE_DEV = ("sed", "findutils", "avahi")
# The training catalogues: those of the machine image the recipe was made on (Debian 12), named so
# that installing another package does not change the data. One that is missing is reported.
SOFTWARE_TRAIN = (
    "Linux-PAM", "PackageKit", "appstream", "apt", "at-spi2-core", "bash", "coreutils", "diffutils", "dpkg",
    "dpkg-dev", "elfutils", "gawk", "gdk-pixbuf", "gettext-runtime", "gettext-tools", "git", "glib20", "gnupg2",
    "gnutls30", "gprof", "grep", "gsettings-desktop-schemas", "gstreamer-1.0", "gtk20", "gtk20-properties",
    "initdb-15", "iso_15924", "iso_3166-1", "iso_3166-2", "iso_3166-3", "iso_4217", "iso_639-2", "iso_639-3",
    "iso_639-5", "ld", "libapt-pkg6.0", "libc", "libidn2", "libpq5-15", "make", "man-db", "man-db-gnulib", "mit-krb5",
    "net-tools", "opcodes", "pg_amcheck-15", "pg_archivecleanup-15", "pg_basebackup-15", "pg_checksums-15",
    "pg_config-15", "pg_controldata-15", "pg_dump-15", "pg_resetwal-15", "pg_rewind-15", "pg_test_fsync-15",
    "pg_test_timing-15", "pg_upgrade-15", "pg_verifybackup-15", "pg_waldump-15", "pgscripts-15", "plpgsql-15",
    "polkit-1", "popt", "postgres-15", "procps-ng", "psmisc", "psql-15", "python-apt", "shadow", "shared-mime-info",
    "systemd", "tar", "xdg-user-dirs", "xkeyboard-config", "xz",
)

# printf conversions (optionally positional, %1$s) and Python's %(name)s and {name}: a pair whose
# translation has other placeholders than its source (a translator's slip) would teach the model
# to drop or invent them.
_PLACEHOLDER = re.compile(r"%(?:\d+\$)?[-+#0']*(?:\d+|\*)?(?:\.(?:\d+|\*))?(?:hh|h|ll|l|L|q|j|z|t)?([diouxXeEfFgGcsp])"
                          r"|(%\(\w+\)[a-zA-Z]|\{\w*\})")
# Conversions a translation may change without changing the argument: %i for %d, %X for %x.
_SAME_ARGUMENT = str.maketrans("iXEFG", "dxefg")


@dataclass
class CatalogueCount:
    """What reading one catalogue kept and skipped, in (English, German) pairs (a plural entry
    gives two: singular and plural)."""

    name: str
    sha256: str = ""
    messages: int = 0  # entries other than the header
    pairs: int = 0  # kept
    plural_pairs: int = 0  # kept pairs that came from a msgid_plural
    multi_line: int = 0  # kept pairs whose source had several lines (joined with spaces)
    fuzzy: int = 0
    too_short: int = 0  # source of at most one character
    untranslated: int = 0
    identical: int = 0  # translation equals the source: nothing to learn but copying
    placeholders: int = 0  # placeholders differ between source and translation


@dataclass
class SoftwareSplit:
    """Pairs of the training, dev and test catalogues, and what each catalogue gave."""

    train: list[tuple[str, str]] = field(default_factory=list)
    dev: list[tuple[str, str]] = field(default_factory=list)
    test: list[tuple[str, str]] = field(default_factory=list)
    counts: list[CatalogueCount] = field(default_factory=list)
    roles: dict[str, str] = field(default_factory=dict)  # catalogue name -> train | dev | test
    missing: list[str] = field(default_factory=list)  # training catalogues not found
    ignored: list[str] = field(default_factory=list)  # catalogues found but not listed


def find_catalogues(directory: Path) -> dict[str, Path]:
    """``name -> path`` of the ``.mo`` files in ``directory``, sorted by name. Symbolic links to a
    catalogue already listed (Debian's ``iso_639.mo -> iso_639-2.mo``) are the same catalogue
    and are left out."""
    directory = Path(directory)
    if not directory.is_dir():
        raise CorpusError(f"catalogue directory not found: {directory}")
    found: dict[str, Path] = {}
    seen: set[Path] = set()
    paths = sorted(directory.glob("*.mo"), key=lambda p: (p.is_symlink(), p.name))  # real files claim first
    for path in paths:
        real = path.resolve()
        if real in seen or not real.is_file():
            continue
        seen.add(real)
        found[path.stem] = path
    if not found:
        raise CorpusError(f"no .mo catalogues in {directory}")
    return dict(sorted(found.items()))


def read_catalogue(path: Path, name: str = "") -> tuple[list[tuple[str, str]], CatalogueCount]:
    """The (English, German) pairs of one ``.mo`` file, in file order, and what was skipped.

    Singular and plural forms each give a pair (German has two forms: msgstr[0], msgstr[1]).
    Skipped: the header, fuzzy entries, sources of at most one character, untranslated forms,
    translations identical to their source and pairs whose placeholders differ. Placeholders are
    kept as they are; runs of whitespace (line breaks of help texts included) become one space.
    """
    import polib  # the core install (worker, client) does without it

    path = Path(path)
    count = CatalogueCount(name or path.stem, hashlib.sha256(path.read_bytes()).hexdigest())
    try:
        catalogue = polib.mofile(str(path))
    except (OSError, ValueError) as exc:
        raise CorpusError(f"{path}: not a readable .mo catalogue: {exc}") from None
    pairs: list[tuple[str, str]] = []
    for entry in catalogue:
        if not entry.msgid:  # the header (metadata), not a message
            continue
        count.messages += 1
        if "fuzzy" in entry.flags:
            count.fuzzy += 1
            continue
        if entry.msgid_plural:
            forms = [(entry.msgid, entry.msgstr_plural.get(0, ""), True), (entry.msgid_plural, entry.msgstr_plural.get(1, ""), True)]
        else:
            forms = [(entry.msgid, entry.msgstr, False)]
        for source, target, plural in forms:
            pair = _checked_pair(source, target, count)
            if pair is not None:
                pairs.append(pair)
                count.pairs += 1
                count.plural_pairs += plural
                count.multi_line += "\n" in source.strip()
    return pairs, count


def _checked_pair(source: str, target: str, count: CatalogueCount) -> tuple[str, str] | None:
    src, tgt = " ".join(source.split()), " ".join(target.split())
    if len(src) <= 1:
        count.too_short += 1
    elif not tgt:
        count.untranslated += 1
    elif src == tgt:
        count.identical += 1
    elif placeholders(src) != placeholders(tgt):
        count.placeholders += 1
    else:
        return src, tgt
    return None


def placeholders(text: str) -> list[str]:
    """The arguments a message's placeholders take, sorted: printf conversions by their type
    alone (``%2$-12s`` counts as ``%s``: translations may reorder arguments and change widths),
    named ones as written."""
    return sorted(named or "%" + conversion.translate(_SAME_ARGUMENT) for conversion, named in _PLACEHOLDER.findall(text))


def split_catalogues(directory: Path, dev: tuple[str, ...] = SOFTWARE_DEV, test: tuple[str, ...] = SOFTWARE_TEST,
                     train: tuple[str, ...] | None = SOFTWARE_TRAIN) -> SoftwareSplit:
    """Read the catalogues of ``directory``: those named in ``dev`` and ``test`` (in that order)
    are the dev and test sets, those in ``train`` (None: all others, by name) the training pairs.
    A missing dev or test catalogue is an error, a missing training one is listed in ``missing``.
    Exact duplicate pairs are kept once per part (gnulib's messages recur in many programs)."""
    found = find_catalogues(directory)
    overlap = sorted(set(dev) & set(test))
    if overlap:
        raise CorpusError(f"catalogues both in dev and test: {', '.join(overlap)}")
    missing = [name for name in (*test, *dev) if name not in found]
    if missing:
        raise CorpusError(f"held-out catalogues not in {directory}: {', '.join(m + '.mo' for m in missing)} "
                          "(the software dev/test sets would change)")
    split = SoftwareSplit()
    held = {**{name: "test" for name in test}, **{name: "dev" for name in dev}}
    training = [name for name in found if name not in held] if train is None else sorted(set(train) - set(held))
    split.missing = [name for name in training if name not in found]
    split.ignored = sorted(set(found) - set(held) - set(training))
    order = [*dev, *test, *(name for name in training if name in found)]
    seen: dict[str, set[tuple[str, str]]] = {"train": set(), "dev": set(), "test": set()}
    for name in order:
        role = held.get(name, "train")
        pairs, count = read_catalogue(found[name], name)
        split.counts.append(count)
        split.roles[name] = role
        target = getattr(split, role)
        for pair in pairs:
            if pair not in seen[role]:
                seen[role].add(pair)
                target.append(pair)
    split.counts.sort(key=lambda c: c.name)
    return split
