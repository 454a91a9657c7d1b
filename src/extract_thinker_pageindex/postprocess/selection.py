"""Restricting a fully built document to a page selection without leaving dangling references."""

from __future__ import annotations

from collections.abc import Sequence

from ..document.model import Page, TocEntry

__all__ = ["restrict_pages", "restrict_toc"]


def restrict_pages(pages: Sequence[Page], selected: set[int] | None) -> list[Page]:
    """Keep only the selected pages; nodes whose section was on a dropped page move to the nearest kept one.

    Builders that must parse the whole source anyway (Markdown, plain text) build every page, then call
    this, so a section opened on an unselected page does not leave its content pointing nowhere.

    Args:
        pages: Every page of the document.
        selected: 0-based indices to keep, or ``None`` for all.

    Returns:
        The kept pages, with parent ids re-pointed where needed.
    """
    if selected is None:
        return list(pages)
    parent_of = {node.id: node.parent_id for page in pages for node in page.nodes}
    kept = [page for page in pages if page.index in selected]
    kept_ids = {node.id for page in kept for node in page.nodes}
    result = []
    for page in kept:
        nodes = []
        for node in page.nodes:
            parent = node.parent_id
            while parent is not None and parent not in kept_ids:
                parent = parent_of.get(parent)
            nodes.append(node if parent == node.parent_id else node.model_copy(update={"parent_id": parent}))
        result.append(Page(index=page.index, nodes=nodes, origin=page.origin))
    return result


def restrict_toc(toc: Sequence[TocEntry], selected: set[int] | None) -> list[TocEntry]:
    """Keep the TOC entries that lead to a selected page (or to no page); an entry whose parent is left
    out moves under the nearest kept ancestor, so the tree stays whole.

    Args:
        toc: The TOC entries, parents before their children.
        selected: 0-based indices of the pages kept, or ``None`` for all.
    """
    if selected is None:
        return list(toc)
    parent_of = {entry.id: entry.parent_id for entry in toc}
    kept = [entry for entry in toc if entry.target_page is None or entry.target_page in selected]
    kept_ids = {entry.id for entry in kept}
    result = []
    for entry in kept:
        parent = entry.parent_id
        while parent is not None and parent not in kept_ids:
            parent = parent_of.get(parent)
        result.append(entry if parent == entry.parent_id else entry.model_copy(update={"parent_id": parent}))
    return result
