"""``PyMuPDFConfig``: the options object of ExtractThinker's own ``DocumentLoaderPyMuPDF`` (its main branch,
unreleased in 0.1.14), which this package's ``DocumentLoaderPyMuPDF`` takes as its first argument too.

This module imports nothing heavy (no PyMuPDF, no ExtractThinker), so a config can be built anywhere.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

from ..errors import InvalidOptionError

__all__ = ["CONFIG_FIELDS", "PyMuPDFConfig", "PyMuPDFConfigLike", "as_pymupdf_config"]

#: The fields of ExtractThinker's ``PyMuPDFConfig``, in its order: what an object needs to be taken for one.
CONFIG_FIELDS = ("cache_ttl", "password", "extract_tables", "include_bbox", "vision_enabled", "dpi")


class PyMuPDFConfigLike(Protocol):
    """Anything with the six fields of ``PyMuPDFConfig`` (read-only attributes are enough): this package's
    class, or ExtractThinker's own."""

    @property
    def cache_ttl(self) -> int: ...
    @property
    def password(self) -> str | None: ...
    @property
    def extract_tables(self) -> bool: ...
    @property
    def include_bbox(self) -> bool: ...
    @property
    def vision_enabled(self) -> bool: ...
    @property
    def dpi(self) -> int: ...


@dataclass
class PyMuPDFConfig:
    """The options of ExtractThinker's ``DocumentLoaderPyMuPDF``, with the same fields, defaults and checks.

    ``DocumentLoaderPyMuPDF(PyMuPDFConfig(include_bbox=True, extract_tables=True, vision_enabled=True,
    dpi=150))`` then works with this package's loader as with the framework's. The loader also accepts the
    framework's own ``PyMuPDFConfig`` (or any object with these six attributes).

    Attributes:
        cache_ttl: Seconds a loaded document stays in ExtractThinker's loader cache; positive.
        password: Password of an encrypted PDF (the loader's ``password=``).
        extract_tables: Find tables and render them as Markdown in ``content`` (the loader's ``tables=``;
            off here by default, as in the framework's config, while the loader's keyword is on).
        include_bbox: Add ``regions`` to each page dict: its text blocks with their boxes as fractions of
            the drawn page (the loader's ``include_bbox=``).
        vision_enabled: Start in vision mode: each page dict gets ``image``, the page as PNG.
        dpi: Resolution of page images in vision mode; a positive integer (the loader's ``dpi=``).

    Raises:
        InvalidOptionError: ``cache_ttl`` is not a positive number, or ``dpi`` is not a positive integer
            (``0``, ``-1``, ``True`` and ``1.5`` are refused). ``InvalidOptionError`` is a ``ValueError``,
            as the framework's checks raise.
    """

    cache_ttl: int = 300
    password: str | None = None
    extract_tables: bool = False
    include_bbox: bool = False
    vision_enabled: bool = False
    dpi: int = 150

    def __post_init__(self) -> None:
        ttl = self.cache_ttl
        if isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or not ttl > 0 or math.isinf(ttl):
            raise InvalidOptionError(
                f"cache_ttl must be positive: the seconds a loaded document stays cached; got {ttl!r}."
            )
        dpi = self.dpi
        if isinstance(dpi, bool) or not isinstance(dpi, int) or dpi <= 0:
            raise InvalidOptionError(
                f"dpi must be a positive integer: the dots per inch page images are drawn at, such as "
                f"150; got {dpi!r}."
            )


def as_pymupdf_config(config: object) -> PyMuPDFConfig:
    """``config``'s six fields as a checked ``PyMuPDFConfig`` (a copy, even of one: the dataclass is not
    frozen, so its values are checked again as they are now).

    Raises:
        InvalidOptionError: ``config`` lacks one of the six fields (it is not a ``PyMuPDFConfig`` of this
            package or of ExtractThinker), is a class rather than an instance of one, or one of its values
            fails ``PyMuPDFConfig``'s checks.
    """
    if isinstance(config, type):
        raise InvalidOptionError(
            f"The first argument of DocumentLoaderPyMuPDF must be a PyMuPDFConfig instance; got the class "
            f"{config.__name__} itself: pass {config.__name__}(...)."
        )
    missing = [name for name in CONFIG_FIELDS if not hasattr(config, name)]
    if missing:
        shown = repr(config)
        if len(shown) > 80:
            shown = shown[:77] + "..."
        raise InvalidOptionError(
            f"The first argument of DocumentLoaderPyMuPDF must be a PyMuPDFConfig (this package's or "
            f"ExtractThinker's: an object with {', '.join(CONFIG_FIELDS)}); got {type(config).__name__} "
            f"{shown}, which has no {', '.join(missing)}. ExtractThinker's base-loader argument `content` "
            "is the keyword content=."
        )
    return PyMuPDFConfig(**{name: getattr(config, name) for name in CONFIG_FIELDS})
