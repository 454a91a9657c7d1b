"""The plain-text builder without a model: form feeds split pages, blank lines split paragraphs."""

from __future__ import annotations

import re

from ..document.model import ListItemNode, Node, Page, PageOrigin, ParagraphNode

__all__ = ["parse_text"]

_BLANK_LINES = re.compile(r"\n[ \t]*\n")
_BULLET = re.compile(r"^(?P<indent>[ \t]*)(?:[-*•]|\d{1,3}[.)])[ \t]+(?P<text>\S.*)$")


def _block_nodes(block: str, page_index: int, counter: list[int]) -> list[Node]:
    lines = block.split("\n")
    matches = [_BULLET.match(line) for line in lines]
    if all(matches):
        nodes: list[Node] = []
        for match in matches:
            assert match is not None
            depth = min(len(match.group("indent").expandtabs(4)) // 2 + 1, 6)
            counter[0] += 1
            nodes.append(
                ListItemNode(id=f"p{page_index}-{counter[0]}", level=f"l{depth}", content=match.group("text"))
            )
        return nodes
    counter[0] += 1
    return [ParagraphNode(id=f"p{page_index}-{counter[0]}", content=block)]


def parse_text(text: str) -> list[Page]:
    """Split plain text into pages (at form feeds) of paragraph and list-item nodes.

    Args:
        text: The text, newlines already normalised to ``\\n``.

    Returns:
        One page per form-feed-separated part (a text without form feeds is one page), empty parts kept as
        empty pages so page numbers stay those of the source.
    """
    pages = []
    for page_index, part in enumerate(text.split("\f")):
        counter = [0]
        nodes: list[Node] = []
        for block in _BLANK_LINES.split(part):
            block = block.strip("\n").rstrip()
            if block.strip():
                nodes.extend(_block_nodes(block, page_index, counter))
        pages.append(Page(index=page_index, nodes=nodes, origin=PageOrigin(source="parsed")))
    return pages
