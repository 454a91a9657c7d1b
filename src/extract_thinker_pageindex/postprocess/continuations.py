"""Continuations: a table, image, paragraph or list item marked as continued shares a group id with its
predecessor on the previous page, so a table split over three pages is one group."""

from __future__ import annotations

from collections.abc import Sequence

from ..document.model import ImageNode, ListItemNode, Page, ParagraphNode, TableNode

__all__ = ["group_continuations"]

_CONTINUABLE = (TableNode, ImageNode, ParagraphNode, ListItemNode)


def group_continuations(pages: Sequence[Page]) -> int:
    """Give continued nodes and their predecessors a shared ``group_id``; returns how many were linked.

    A node with ``continuation=True`` continues the last node of the same type on the page just before
    it (the physically previous page, when it was indexed). The group id is the predecessor's, or
    ``g-<id of the first node of the chain>``, so chains of any length share one id. A continued node
    with no predecessor keeps no group. Pages are changed in place.
    """
    linked = 0
    previous: Page | None = None
    for page in pages:
        adjacent = previous is not None and previous.index == page.index - 1
        updated = []
        for node in page.nodes:
            if isinstance(node, _CONTINUABLE) and node.continuation and adjacent and previous is not None:
                candidates = [item for item in previous.nodes if type(item) is type(node)]
                if candidates:
                    before = candidates[-1]
                    group = before.group_id or f"g-{before.id}"
                    if before.group_id is None:
                        index = previous.nodes.index(before)
                        previous.nodes[index] = before.model_copy(update={"group_id": group})
                    node = node.model_copy(update={"group_id": group})
                    linked += 1
            updated.append(node)
        page.nodes = updated
        previous = page
    return linked
