"""``load_pages(source, positions)``: some pages of what a loader loads, as ExtractThinker's base loader on
its main branch selects them, for every loader of this package.

The contract: ``positions`` is a list of 1-based positions in the list :meth:`load` returns; the pages come
back in the order asked for (``[3, 1]``: the third page, then the first), each a copy that keeps its own
``page_number`` or gets its position as one; ``[]`` gives ``[]`` without loading anything; a position that
is not a whole number of at least 1, or that is asked for twice, is refused before the document is
loaded; a position past the end is refused once the page count is known.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import PageSpecError

__all__ = ["PageSelection", "check_positions", "select_positions"]


def check_positions(positions: object) -> list[int]:
    """The positions as a list, checked for everything that can be checked without the document.

    Raises:
        PageSpecError: ``positions`` is not a list of whole numbers of at least 1, or repeats one.
    """
    if isinstance(positions, (str, bytes)) or not isinstance(positions, Sequence):
        raise PageSpecError(
            f"positions must be a list of 1-based page positions such as [3, 1]; got {positions!r}."
        )
    for position in positions:
        if isinstance(position, bool) or not isinstance(position, int) or position < 1:
            raise PageSpecError(
                f"Each page position must be a positive integer (1 is the first page); got {position!r} "
                f"in {list(positions)!r}."
            )
    seen: set[int] = set()
    for position in positions:
        if position in seen:
            raise PageSpecError(
                f"Page position {position} is asked for twice in {list(positions)!r}; ask for each page once."
            )
        seen.add(position)
    return list(positions)


def select_positions(
    pages: Sequence[dict[str, Any]], positions: Sequence[int], *, counted: str = "the document"
) -> list[dict[str, Any]]:
    """Copies of the pages at ``positions`` (checked by :func:`check_positions`), in that order; each keeps
    its ``page_number``, or gets its position as one.

    Raises:
        PageSpecError: a position is past the last page (the message says "contains N pages", as the
            framework's does).
    """
    beyond = [position for position in positions if position > len(pages)]
    if beyond:
        raise PageSpecError(
            f"Page position {beyond[0]} is out of range: {counted} contains {len(pages)} pages "
            f"(positions 1 to {len(pages)})."
        )
    selected = []
    for position in positions:
        page = dict(pages[position - 1])
        page.setdefault("page_number", position)
        selected.append(page)
    return selected


class PageSelection:
    """Adds :meth:`load_pages` to a loader with a ``load`` method."""

    #: What the positions count, for the out-of-range message.
    _positions_count = "the document"

    def load_pages(self, source: Any, positions: Sequence[int]) -> list[dict[str, Any]]:
        """Some of the pages :meth:`load` gives, in the order asked for.

        Args:
            source: What :meth:`load` takes.
            positions: 1-based positions in the pages :meth:`load` returns: ``[3, 1]`` gives the third
                page, then the first.

        Returns:
            Copies of those pages, each with its ``page_number`` (its own, or its position).

        Raises:
            PageSpecError: a position is not a positive integer, is repeated (both checked before
                anything is loaded) or is past the last page. ``PageSpecError`` is a ``ValueError``.
            Whatever :meth:`load` raises.
        """
        wanted = check_positions(positions)
        if not wanted:
            return []
        loaded = self.load(source)  # type: ignore[attr-defined]  # the loader's own
        return select_positions(loaded, wanted, counted=self._positions_count)
