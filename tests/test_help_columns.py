"""``--help`` listings keep their option parts and settings: the option column of a listing line is
no sentence (``worker.text.layout``), and stty's single-dash settings and od's ``-t a`` are options
(``worker.text.spans``). The messages are GNU coreutils' (the English msgids of Debian's German
``coreutils.mo``, as ``msgunfmt`` prints them)."""
from __future__ import annotations

import re

import polib
import pytest

from worker.text.layout import split_document
from worker.text.spans import find_spans

from .conftest import REPO_ROOT, run_nmt
from .content_check import check_file

BUNDLE = REPO_ROOT / "models" / "en-de"
STTY_RAW = ("   raw           same as -ignbrk -brkint -ignpar -parmrk -inpck -istrip\n"
            "                 -inlcr -igncr -icrnl -ixon -ixoff -icanon -opost\n"
            "                 -isig%s min 1 time 0\n"
            "   -raw          same as cooked\n")
STTY_ICANON = "   [-]icanon     enable special characters: %s\n   [-]iexten     enable non-POSIX special characters\n"
OD = ("\n\nTraditional format specifications may be intermixed; they accumulate:\n"
      "  -a   same as -t a,  select named characters, ignoring high-order bit\n"
      "  -b   same as -t o1, select octal bytes\n"
      "  -c   same as -t c,  select printable characters or backslash escapes\n"
      "  -d   same as -t u2, select unsigned decimal 2-byte units\n")
CHCON = ("  CONTEXT            Complete security context\n"
         "  -c, --compute      compute process transition context before modifying\n"
         "  -t, --type=TYPE    type (for same role as parent)\n")
PR = ("  -s[CHAR], --separator[=CHAR]\n"
      "                    separate columns by a single character, default for CHAR\n"
      "                    -s[CHAR] turns off line truncation of all 3 column\n")


@pytest.mark.parametrize("message, sentences", [
    (STTY_RAW, ["same as -ignbrk -brkint -ignpar -parmrk -inpck -istrip",
                "-inlcr -igncr -icrnl -ixon -ixoff -icanon -opost", "-isig%s min 1 time 0", "same as cooked"]),
    (STTY_ICANON, ["enable special characters: %s", "enable non-POSIX special characters"]),
    (OD, ["Traditional format specifications may be intermixed; they accumulate:", "same as -t a,",
          "select named characters, ignoring high-order bit", "same as -t o1, select octal bytes", "same as -t c,",
          "select printable characters or backslash escapes", "same as -t u2, select unsigned decimal 2-byte units"]),
    (CHCON, ["Complete security context", "compute process transition context before modifying",
             "type (for same role as parent)"]),
    # the option part alone on its line is kept; a description line that starts with an option is prose
    (PR, ["separate columns by a single character, default for CHAR",
          "-s[CHAR] turns off line truncation of all 3 column"]),
])
def test_the_option_part_of_a_help_line_is_no_sentence(message, sentences):
    layout = split_document(message, "en")
    assert [s.text for s in layout.sentences] == sentences
    assert layout.reassemble([s.text for s in layout.sentences])[0] == message


def test_prose_columns_and_indented_prose_are_still_translated():
    text = "  Tom went home   and slept.\n   raw data is kept\nUsage:  foo   bar\n"
    assert [s.text for s in split_document(text, "en").sentences] == \
        ["Tom went home", "and slept.", "raw data is kept", "Usage:  foo", "bar"]


@pytest.mark.parametrize("sentence, options", [
    ("same as -ignbrk -brkint -ignpar -parmrk -inpck -istrip", ["-ignbrk -brkint -ignpar -parmrk -inpck -istrip"]),
    ("-inlcr -igncr -icrnl -ixon -ixoff -icanon -opost", ["-inlcr -igncr -icrnl -ixon -ixoff -icanon -opost"]),
    ("same as [-]crterase", ["[-]crterase"]),
    ("same as -t a,", ["-t a"]),
    # alone, a dash before a long word may be a dash; "-f a file": the letter is an article
    ("He left -without a word.", []),
    ("use -f a file", ["-f"]),
])
def test_stty_settings_and_od_types_are_options(sentence, options):
    assert [s.text for s in find_spans(sentence) if s.kind == "option"] == options


def test_a_catalogue_of_help_listings_keeps_options_and_column_gaps(tmp_path):
    catalogue = polib.POFile()
    catalogue.metadata = {"Content-Type": "text/plain; charset=UTF-8"}
    for k, message in enumerate((STTY_RAW, STTY_ICANON, OD, CHCON, PR)):
        flags = ["c-format"] if "%s" in message else []
        catalogue.append(polib.POEntry(msgid=message, msgstr="", flags=flags, occurrences=[("src/x.c", str(k))]))
    source = tmp_path / "coreutils.pot"
    catalogue.save(str(source))
    done = run_nmt("translate", "--bundle", str(BUNDLE), "--out", str(tmp_path / "out"), str(source))
    assert done.returncode == 0, done.stderr
    output = tmp_path / "out" / "coreutils.de.pot"
    found = [f"{f.check} at {f.where}: {f.source!r} -> {f.output!r}"
             for f in check_file("po", source.read_bytes(), output.read_bytes())]
    assert not found, "\n".join(found)
    translated = {e.msgid: e.msgstr for e in polib.pofile(str(output))}
    for message in (STTY_RAW, STTY_ICANON, OD, CHCON, PR):  # every option part byte for byte, with its gap
        for line, out in zip(message.splitlines(), translated[message].splitlines()):
            part = re.match(r"[ ]{2,3}(?! )\S.*?(?:[ ]{2,}|$)", line)
            if part:
                assert out.startswith(part.group()), (line, out)
