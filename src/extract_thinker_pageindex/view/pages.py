"""What the view shows of each page: its nodes as drawn (:class:`ViewNode`) and the page itself
(:class:`PageView`), built by ``build`` and written by ``html``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .pictures import PageSpace

__all__ = ["PageView", "ViewNode"]


@dataclass
class ViewNode:
    """A node as the view shows it: type, label (level or kind), text, box and the query's words in it."""

    id: str
    type: str
    label: str
    text: str
    box: tuple[float, float, float, float] | None = None
    marks: list[tuple[int, int]] = field(default_factory=list)
    #: The picture the index saved for an image or table node (its URL), shown on a page shown as text.
    picture: str | None = None

    def data(self) -> dict[str, Any]:
        """The node as the page's script reads it (short keys: a 300-page filing has tens of thousands)."""
        item: dict[str, Any] = {"id": self.id, "t": self.type, "l": self.label, "x": self.text}
        if self.box is not None:
            item["b"] = list(self.box)
        if self.marks:
            item["m"] = [list(mark) for mark in self.marks]
        return item


@dataclass
class PageView:
    """A page of the view: its index, its picture (a path relative to the HTML, a data URI, or None for a
    page shown as text), the picture's size, its nodes, the boxes of the query's words, and its match."""

    index: int
    src: str | None
    width_px: int
    height_px: int
    nodes: list[ViewNode]
    space: PageSpace | None = None
    hits: list[tuple[float, float, float, float]] = field(default_factory=list)
    match_rank: int | None = None
    match_score: float | None = None
