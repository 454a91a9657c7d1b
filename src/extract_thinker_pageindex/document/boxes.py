"""Positions on a page: the ``bbox`` type of the document model, the boxes models answer, and the one
rounding of measured rectangles into stored boxes.

A stored ``bbox`` is ``[xmin, ymin, xmax, ymax]`` in whole PDF points (1/72 inch) from the top-left corner
of the page's own coordinates: its crop box, before any ``/Rotate`` is applied (what PyMuPDF's text and image
extraction report); for image sources one point is one pixel.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Annotated, Any

from pydantic import BeforeValidator
from pydantic.json_schema import SkipJsonSchema

__all__ = ["BBox", "LooseBBox", "NoBox", "outer_box", "union_rect"]


def _coerce_bbox(value: Any) -> Any:
    """Round numeric coordinates to whole points and check the box is non-empty and ordered."""
    if value is None:
        return None
    if not isinstance(value, (list, tuple)) or len(value) != 4:
        raise ValueError("bbox must be four numbers [xmin, ymin, xmax, ymax]")
    coords = []
    for item in value:
        if isinstance(item, bool) or not isinstance(item, (int, float)):
            raise ValueError(f"bbox coordinates must be numbers, got {item!r}")
        if isinstance(item, float) and not math.isfinite(item):
            # JSON's 1e999, Infinity and NaN read as floats that no whole point can stand for (round()
            # would raise OverflowError, which validation does not turn into a validation error).
            raise ValueError(f"bbox coordinates must be finite numbers, got {item!r}")
        coords.append(round(item))
    xmin, ymin, xmax, ymax = coords
    if xmin < 0 or ymin < 0:
        raise ValueError(f"bbox {coords} has a negative coordinate")
    if not (xmin < xmax and ymin < ymax):
        raise ValueError(f"bbox {coords} is empty or inverted: need xmin < xmax and ymin < ymax")
    return tuple(coords)


#: A stored box: four whole points, ordered and non-empty (numbers with decimals are rounded).
BBox = Annotated[tuple[int, int, int, int], BeforeValidator(_coerce_bbox)]


def _loose_bbox(value: Any) -> Any:
    """A model's box as four numbers in its own scale; anything else is no box (checked and scaled later)."""
    numbers = isinstance(value, (list, tuple)) and len(value) == 4
    if numbers and all(isinstance(item, (int, float)) and not isinstance(item, bool) for item in value):
        try:
            box = [float(item) for item in value]
        except OverflowError:  # an integer too large for a float is no coordinate
            return None
        return box if all(math.isfinite(item) for item in box) else None
    return None


#: A box as a vision model answers it for a picture or a table, in the model's own scale.
LooseBBox = Annotated[list[float] | None, BeforeValidator(_loose_bbox)]


def _no_box(value: Any) -> None:
    # Text positions come from a PDF's text layer only: a box a model writes for text (in its own scale,
    # perhaps 0-1) is dropped rather than checked, so it can never fail an answer.
    return None


#: The ``bbox`` of a text node in a model's answer: left out of the answer schema and ignored when given.
NoBox = Annotated[SkipJsonSchema[None], BeforeValidator(_no_box)]


def union_rect(rects: Iterable[Sequence[float]]) -> tuple[float, float, float, float] | None:
    """The smallest rectangle holding every one of ``rects`` (``None`` for none)."""
    x0 = y0 = math.inf
    x1 = y1 = -math.inf
    for rect in rects:
        x0, y0 = min(x0, rect[0]), min(y0, rect[1])
        x1, y1 = max(x1, rect[2]), max(y1, rect[3])
    return None if x0 == math.inf else (x0, y0, x1, y1)


def outer_box(rect: Sequence[float], width: float, height: float) -> tuple[int, int, int, int] | None:
    """A measured rectangle as a stored box that contains it: the minimums floored, the maximums ceiled,
    clipped to the page (``0`` to its size rounded up). ``None`` when nothing of it is on the page."""
    x0 = max(0, math.floor(rect[0]))
    y0 = max(0, math.floor(rect[1]))
    x1 = min(math.ceil(width), math.ceil(rect[2]))
    y1 = min(math.ceil(height), math.ceil(rect[3]))
    return (x0, y0, x1, y1) if x1 > x0 and y1 > y0 else None
