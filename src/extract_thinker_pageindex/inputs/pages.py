"""Page selectors: parse the 1-based selections users write into 0-based page indices.

Accepted forms, all 1-based and inclusive:

- ``5``: one page;
- ``(3, 7)``: a range;
- ``[(1, 3), 5, (7, 10)]``: a mix of both;
- ``"1-3,5,7-10"``: the command-line string form of the same.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TypeVar

from ..errors import PageSpecError

__all__ = ["PageSpec", "filter_pages", "normalize_page_spec"]

T = TypeVar("T")

PageSpec = int | tuple[int, int] | Sequence[int | tuple[int, int]] | str

# ASCII digits only, and few enough that int() never refuses them (Python caps int parsing at 4300 digits).
_STRING_ITEM = re.compile(r"^\s*([0-9]{1,12})\s*(?:-\s*([0-9]{1,12})\s*)?$")


def _as_page_number(value: object, spec: object) -> int:
    # bool is an int subclass, but True is no page number.
    if isinstance(value, bool) or not isinstance(value, int):
        raise PageSpecError(f"Page numbers must be whole numbers; got {value!r} in {spec!r}.")
    if value < 1:
        raise PageSpecError(f"Page numbers start at 1; got {value} in {spec!r}.")
    return value


def _parse_string(spec: str) -> list[tuple[int, int]]:
    if not spec.strip():
        raise PageSpecError("The page selection is empty; write pages like '1-3,5,7-10'.")
    ranges = []
    for part in spec.split(","):
        match = _STRING_ITEM.match(part)
        if match is None:
            raise PageSpecError(
                f"Cannot read {part.strip()!r} in page selection {spec!r}; write pages like '1-3,5,7-10'."
            )
        start = int(match.group(1))
        end = int(match.group(2)) if match.group(2) is not None else start
        ranges.append((_as_page_number(start, spec), _as_page_number(end, spec)))
    return ranges


def _parse_item(item: object, spec: object) -> tuple[int, int]:
    if isinstance(item, tuple):
        if len(item) != 2:
            raise PageSpecError(f"A page range is a pair (from, to); got {item!r} in {spec!r}.")
        return _as_page_number(item[0], spec), _as_page_number(item[1], spec)
    number = _as_page_number(item, spec)
    return number, number


def normalize_page_spec(spec: PageSpec | None, total_pages: int) -> set[int] | None:
    """Turn a 1-based page selection into the set of 0-based page indices it selects.

    Args:
        spec: ``None`` (every page), an int, a ``(from, to)`` pair, a list mixing both, or a string such
            as ``"1-3,5,7-10"``. Numbers are 1-based and ranges inclusive.
        total_pages: How many pages the document has.

    Returns:
        The selected 0-based indices, or ``None`` when ``spec`` is ``None``.

    Raises:
        PageSpecError: for a non-integer, zero or negative page, a reversed range, an empty selection, or a
            page beyond ``total_pages``.
    """
    if spec is None:
        return None
    if isinstance(spec, (bytes, bytearray)):
        raise PageSpecError(f"A page selection is a number, a range, a list or a string; got {spec!r}.")
    if isinstance(spec, str):
        ranges = _parse_string(spec)
    elif isinstance(spec, tuple):
        ranges = [_parse_item(spec, spec)]
    elif isinstance(spec, Sequence):
        if len(spec) == 0:
            raise PageSpecError("The page selection is empty; give at least one page.")
        ranges = [_parse_item(item, spec) for item in spec]
    else:
        ranges = [_parse_item(spec, spec)]

    selected: set[int] = set()
    for start, end in ranges:
        if start > end:
            raise PageSpecError(f"Page range {start}-{end} is reversed; write it as {end}-{start}.")
        if end > total_pages:
            raise PageSpecError(
                f"Page {end} is out of range: the document has {total_pages} page"
                f"{'' if total_pages == 1 else 's'}."
            )
        selected.update(range(start - 1, end))
    return selected


def filter_pages(items: Sequence[T], spec: PageSpec | None) -> list[tuple[int, T]]:
    """Select items of a page sequence by a 1-based page selection, keeping their 0-based indices.

    Args:
        items: One item per page, in page order.
        spec: A page selection as :func:`normalize_page_spec` reads it; ``None`` keeps every page.

    Returns:
        ``(page_index, item)`` pairs in page order.

    Raises:
        PageSpecError: as :func:`normalize_page_spec`.
    """
    selected = normalize_page_spec(spec, len(items))
    return [(index, item) for index, item in enumerate(items) if selected is None or index in selected]
