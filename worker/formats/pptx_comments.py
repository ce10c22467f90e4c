"""Comments on PowerPoint slides: where their text is in the two kinds of comment part a slide relates to.

Legacy comments (``ppt/comments/commentN.xml``, ECMA-376 part 1, 19.4: ``p:cmLst/p:cm``) hold their
text as one ``p:text``, a unit without markup; modern comments (``ppt/comments/modernComment_*.xml``,
[MS-PPTX] 2.3.15: ``p188:cm`` and its replies) hold DrawingML paragraphs (``a:p``), each a unit with
its runs. Only the text is written: the author (``authorId``, and the author parts themselves), the
date, the position on the slide (``p:pos``, ``p188:pos``) and the anchor stay as they were.
"""
from __future__ import annotations

from typing import Iterator

A = "http://schemas.openxmlformats.org/drawingml/2006/main"
P = "http://schemas.openxmlformats.org/presentationml/2006/main"
LEGACY_TYPE = "application/vnd.openxmlformats-officedocument.presentationml.comments+xml"
MODERN_TYPE = "application/vnd.ms-powerpoint.comments+xml"
RELATIONSHIP = "comments"  # the last word of both kinds' relationship types (2006 and 2018/10)


def comment_parts(package, slide: str) -> list[str]:
    """The comment parts (of either kind) slide part ``slide`` of ``package`` (an ``OfficePackage``) relates to."""
    return [part for part in package.related(slide, RELATIONSHIP)
            if package.types.get(part) in (LEGACY_TYPE, MODERN_TYPE)]


def comment_texts(root) -> Iterator[tuple[bool, object]]:
    """(plain, element) for each text of a comment part's root: ``p:text`` of a legacy comment
    (plain: one unit without markup), else each ``a:p`` of a modern comment and its replies."""
    if root.tag == f"{{{P}}}cmLst":
        for text in root.iter(f"{{{P}}}text"):
            yield True, text
    else:
        for paragraph in root.iter(f"{{{A}}}p"):
            yield False, paragraph


__all__ = ["LEGACY_TYPE", "MODERN_TYPE", "comment_parts", "comment_texts"]
