"""The table of contents generated from the heading structure, as a tree linked to sections."""

from __future__ import annotations

from collections.abc import Sequence

from ..model import HeadingNode, Page, SectionNode, TocEntry

__all__ = ["toc_from_sections"]


def toc_from_sections(pages: Sequence[Page]) -> list[TocEntry]:
    """One TOC entry per titled section, nested as the sections nest.

    Each entry targets its section and the page the section opens on; its level is its depth in the tree
    (``l1`` for top-level entries, capped at ``l6``), whatever heading levels the document uses.

    Args:
        pages: Pages whose section and heading nodes already carry document-unique ids.

    Returns:
        The entries in document order, with ``parent_id`` pointing at the enclosing section's entry.
    """
    titles: dict[str, str] = {}
    for page in pages:
        for node in page.nodes:
            if isinstance(node, HeadingNode) and node.parent_id is not None:
                titles.setdefault(node.parent_id, node.content)

    entries: list[TocEntry] = []
    entry_of_section: dict[str, TocEntry] = {}
    section_parent: dict[str, str | None] = {}
    for page in pages:
        for node in page.nodes:
            if not isinstance(node, SectionNode):
                continue
            section_parent[node.id] = node.parent_id
            title = titles.get(node.id)
            if not title:
                continue
            # The nearest enclosing section that has an entry (untitled sections are skipped over).
            ancestor = node.parent_id
            while ancestor is not None and ancestor not in entry_of_section:
                ancestor = section_parent.get(ancestor)
            parent = entry_of_section.get(ancestor) if ancestor is not None else None
            depth = 1 if parent is None else min(int(parent.level[1:]) + 1, 6)
            entry = TocEntry(
                id=f"toc-{len(entries) + 1}",
                parent_id=parent.id if parent is not None else None,
                title=title,
                description=node.description,
                target_page=page.index,
                target_section_id=node.id,
                level=f"l{depth}",
            )
            entries.append(entry)
            entry_of_section[node.id] = entry
    return entries
