"""Which pages need OCR: those without a usable text layer, found without slowing born-digital pages down.

A page's text layer is usable when it has words: at least 16 visible characters (or 4 of a wide East
Asian script, each a word). A page under that has no words and is OCR'd (unless it draws nothing at all).
A page with a few more characters (under 100: a Bates number, a fax header, a scanner's stamp) is OCR'd
when a page-size picture (90% of the page or more) lies under it: that is a scan with stray glyphs on it.
A page of 100 characters or more is never looked at again, so a born-digital page costs nothing beyond the
text it was read for.
"""

from __future__ import annotations

import unicodedata
from typing import Any

__all__ = ["MIN_TEXT_CHARS", "MIN_WIDE_CHARS", "STRAY_TEXT_CHARS", "has_words", "needs_ocr"]

MIN_TEXT_CHARS = 16
MIN_WIDE_CHARS = 4
#: Under this many visible characters over a page-size picture, the text layer is stray glyphs on a scan.
STRAY_TEXT_CHARS = 100
#: The share of the page a picture must cover to be a scan of the page (a page-size picture).
SCAN_COVER = 0.9


def visible_chars(text: str) -> int:
    return sum(map(len, text.split()))  # split() parts at str.isspace() characters, at C speed


def has_words(text: str) -> bool:
    """Whether text is more than stray glyphs: 16 visible characters, or 4 of a wide East Asian script."""
    if visible_chars(text) >= MIN_TEXT_CHARS:
        return True
    return sum(1 for char in text if unicodedata.east_asian_width(char) in "WF") >= MIN_WIDE_CHARS


def picture_cover(page: Any) -> float:
    """The share of the page the largest picture covers (call holding ``PYMUPDF_LOCK``)."""
    area = abs(page.rect)
    if not area:
        return 0.0
    import pymupdf

    from ..pdf.images import drawn_pictures, page_turn

    # The pictures' boxes are in the page's own (unturned) coordinates, in points (a /UserUnit scaled).
    own = (page.rect * page_turn(page)[1]).normalize()
    best = 0.0
    for picture in drawn_pictures(page):
        box = pymupdf.Rect(picture.bbox) & own
        if not box.is_empty:
            best = max(best, abs(box) / area)
    return best


def needs_ocr(page: Any, text: str, mode: str) -> bool:
    """Whether a PyMuPDF page whose text layer reads ``text`` is OCR'd under ``mode``."""
    if mode == "never":
        return False
    if mode == "always":
        return True
    if not has_words(text):
        return True
    return visible_chars(text) < STRAY_TEXT_CHARS and picture_cover(page) >= SCAN_COVER
