"""The integrity rules of a page index document: ids that are unique and safe as file names, references
that resolve (node parents are sections, TOC entries point at entries, sections and pages that exist), and
parent chains without cycles. ``Document`` runs them whenever it is validated."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .model import Document, TocEntry

__all__ = ["validate_structure"]

# Node ids become file names (images/<id>.png), so a document only admits ids that are safe there.
_SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def validate_structure(document: Document) -> None:
    """Check ids are unique and safe, every reference resolves, and parent chains have no cycle."""
    page_indices = [page.index for page in document.pages]
    if len(set(page_indices)) != len(page_indices):
        raise ValueError("page indices must be unique")
    if page_indices != sorted(page_indices):
        raise ValueError("pages must be in source order (ascending index)")

    nodes: dict[str, Any] = {}
    for _, node in document.iter_nodes():
        if not _SAFE_ID.match(node.id):
            raise ValueError(f"node id {node.id!r} must be letters, digits, '.', '_' or '-' (at most 128)")
        if node.id in nodes:
            raise ValueError(f"node id {node.id!r} is used more than once")
        nodes[node.id] = node
    for node in nodes.values():
        if node.parent_id is not None:
            parent = nodes.get(node.parent_id)
            if parent is None:
                raise ValueError(f"node {node.id!r} has parent_id {node.parent_id!r}, which is not a node")
            if parent.type != "section":
                raise ValueError(f"node {node.id!r} has parent {node.parent_id!r}, which is not a section")
    _check_acyclic({node_id: node.parent_id for node_id, node in nodes.items()}, "node")

    entries: dict[str, TocEntry] = {}
    for entry in document.toc:
        if entry.id in entries:
            raise ValueError(f"TOC entry id {entry.id!r} is used more than once")
        entries[entry.id] = entry
    valid_pages = set(page_indices)
    for entry in entries.values():
        if entry.parent_id is not None and entry.parent_id not in entries:
            raise ValueError(
                f"TOC entry {entry.id!r} has parent_id {entry.parent_id!r}, which is not an entry"
            )
        if entry.bbox is not None and entry.target_page is None:
            raise ValueError(f"TOC entry {entry.id!r} has a bbox but no target_page to place it on")
        target = nodes.get(entry.target_section_id) if entry.target_section_id is not None else None
        if entry.target_section_id is not None and getattr(target, "type", None) != "section":
            raise ValueError(
                f"TOC entry {entry.id!r} targets section {entry.target_section_id!r}, which is not a section"
            )
        page = entry.target_page
        # A target may be an unselected page of the source, but never beyond the source.
        if (
            page is not None
            and valid_pages
            and page not in valid_pages
            and (document.source_page_count is None or page >= document.source_page_count)
        ):
            raise ValueError(f"TOC entry {entry.id!r} targets page {page}, outside the document")
    _check_acyclic({entry_id: entry.parent_id for entry_id, entry in entries.items()}, "TOC entry")


def _check_acyclic(parents: dict[str, str | None], what: str) -> None:
    state: dict[str, int] = {}  # 1 = on the current path, 2 = known to reach a root
    for start in parents:
        path = []
        current: str | None = start
        while current is not None and state.get(current) != 2:
            if state.get(current) == 1:
                raise ValueError(f"{what} {current!r} is its own ancestor (a parent_id cycle)")
            state[current] = 1
            path.append(current)
            current = parents.get(current)
        for item in path:
            state[item] = 2
