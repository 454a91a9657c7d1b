"""References: every parent, target section and TOC parent resolves, or is dropped with a warning."""

from __future__ import annotations

import warnings
from collections.abc import Sequence

from ..document.model import Page, SectionNode, TocEntry
from ..errors import PageIndexWarning

__all__ = ["drop_dangling_references"]


def _break_cycles(pages: Sequence[Page]) -> int:
    """Give no parent to a section whose chain of parents comes back to itself."""
    parent_of = {node.id: node.parent_id for page in pages for node in page.nodes}
    cut: set[str] = set()
    for start in parent_of:
        seen = {start}
        current = parent_of[start]
        while current is not None:
            if current in seen:
                cut.add(start)
                parent_of[start] = None
                break
            seen.add(current)
            current = parent_of.get(current)
    for page in pages:
        page.nodes = [
            node.model_copy(update={"parent_id": None}) if node.id in cut else node for node in page.nodes
        ]
    return len(cut)


def drop_dangling_references(pages: Sequence[Page], toc: list[TocEntry]) -> int:
    """Clear references that resolve to nothing (or to a node that is no section), and break cycles of
    parents, in place.

    A node's ``parent_id`` must name a section of the document, a TOC entry's ``target_section_id`` a
    section, and its ``parent_id`` another entry. Builders keep them consistent; this is the net under
    steps that replace pages (refinement) or take ids from a model. One ``PageIndexWarning`` counts what
    was dropped; a document is never left with a dangling reference.

    Returns:
        How many references were dropped.
    """
    sections = {node.id for page in pages for node in page.nodes if isinstance(node, SectionNode)}
    dropped = 0
    for page in pages:
        updated = []
        for node in page.nodes:
            if node.parent_id is not None and (node.parent_id not in sections or node.parent_id == node.id):
                node = node.model_copy(update={"parent_id": None})
                dropped += 1
            updated.append(node)
        page.nodes = updated
    dropped += _break_cycles(pages)
    entries = {entry.id for entry in toc}
    for position, entry in enumerate(toc):
        update: dict[str, None] = {}
        if entry.target_section_id is not None and entry.target_section_id not in sections:
            update["target_section_id"] = None
        if entry.parent_id is not None and entry.parent_id not in entries:
            update["parent_id"] = None
        if update:
            toc[position] = entry.model_copy(update=update)
            dropped += len(update)
    if dropped:
        warnings.warn(
            f"{dropped} reference(s) named no section or TOC entry of the document and were dropped.",
            PageIndexWarning,
            stacklevel=3,
        )
    return dropped
