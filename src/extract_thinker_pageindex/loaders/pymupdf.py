"""``DocumentLoaderPyMuPDF``: ExtractThinker's missing PyMuPDF loader, one page dict per PDF page."""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Sequence
from io import BytesIO
from typing import Any, ClassVar

from cachetools import TTLCache
from extract_thinker.document_loader.document_loader import DocumentLoader

from ..errors import InvalidOptionError
from ..inputs.pages import PageSpec
from ..ocr.settings import DEFAULT_OCR_DPI, OcrEngine, OcrMode, ocr_settings
from ..pdf.opening import PdfSource
from .file_sources import FileSources
from .pdf_pages import read_pdf_pages
from .pymupdf_config import PyMuPDFConfig, PyMuPDFConfigLike, as_pymupdf_config
from .selection import PageSelection

__all__ = ["CACHED_DOCUMENTS", "DocumentLoaderPyMuPDF"]

#: How many documents' loads a loader keeps (for ``cache_ttl`` seconds): a document loaded again soon
#: (``load_pages`` after ``load``, the extractor's second look) is not read again, and a long run over
#: many documents holds a few of them, not all (pages with images are megabytes each).
CACHED_DOCUMENTS = 4


class DocumentLoaderPyMuPDF(PageSelection, FileSources, DocumentLoader):
    """Load PDFs with PyMuPDF: one dict per page, fast enough to sit in front of retrieval.

    Each page dict has ``content`` (the page text in reading order, each table rendered as a Markdown
    table in place of its lines, unless ``tables=False``), ``markdown`` (the same text), ``tables`` (each
    table's rows as lists of cell texts, the header rows first), ``page_number`` (1-based, as in the
    PDF), ``text_source`` (``"text_layer"``, or
    ``"ocr"`` for a page read by OCR), with ``include_bbox=True`` ``regions`` (below) and, in vision
    mode, ``image`` (PNG bytes; no more than ``set_max_image_size``'s pixels on a side when that is set).

    ``regions`` lists the page's text blocks in reading order (OCR's blocks on a page read by OCR), each
    ``{"text": str, "bounding_box": {"page": int, "x0": float, "y0": float, "x1": float, "y1": float},
    "confidence": None}``: ``page`` is the 1-based page number, ``x0``..``y1`` are fractions (0 to 1) of
    the page as drawn (its ``/Rotate`` applied, as in ``image``) from the top-left corner. It is the shape
    of ExtractThinker's ``DocumentRegion``.

    ExtractThinker's own ``DocumentLoaderPyMuPDF`` (on its main branch) takes a ``PyMuPDFConfig`` as its
    first argument; so does this one, with the same meaning: ``DocumentLoaderPyMuPDF(PyMuPDFConfig(
    include_bbox=True, extract_tables=True, vision_enabled=True, dpi=150))``. Any object with the config's
    six attributes is taken (duck typing), so the framework's class works once it is released as well as
    :class:`PyMuPDFConfig` from this package. Its fields map to the keywords: ``cache_ttl`` to
    ``cache_ttl``, ``password`` to ``password``, ``extract_tables`` to ``tables``, ``include_bbox`` to
    ``include_bbox``, ``dpi`` to ``dpi``, and ``vision_enabled`` turns vision mode on. The page dicts keep
    this loader's keys, so ``tables`` is there (``[]``) without ``extract_tables``.

    Scanned pages (no usable text layer: no words, or a few stray glyphs over a page-size picture) are read
    with OCR, with no model: Tesseract by default (through tesserocr from the ``[ocr]`` extra, else the one
    inside PyMuPDF; language data from that extra or the system's ``tesseract-ocr-<lang>`` packages), in
    worker processes. Born-digital pages are never
    OCR'd under ``ocr="auto"`` and cost nothing more. See docs/ocr.md.

    Args:
        config: A ``PyMuPDFConfig`` (this package's or ExtractThinker's): options as the framework's own
            loader takes them. Leave the keywords it also sets (``password``, ``tables``,
            ``include_bbox``, ``dpi``, ``cache_ttl``) at their defaults.
        cache_ttl: Passed to ExtractThinker's ``DocumentLoader``.
        content: Passed to ExtractThinker's ``DocumentLoader`` (its first positional argument there).
        pages: Only these 1-based pages (``5``, ``(3, 7)``, ``[(1, 3), 5]`` or ``"1-3,5"``).
        password: Password of an encrypted PDF.
        tables: Find tables (ruled grids, and columns aligned by whitespace as in financial statements),
            render each as a Markdown table in ``content`` and list its rows under ``tables``. On by
            default (it costs about a millisecond or two a page); with a ``config``, its
            ``extract_tables`` decides, as in the framework (off there by default).
        include_bbox: Add ``regions`` to each page dict.
        dpi: Resolution of page images in vision mode.
        ocr: ``"auto"`` (pages without a usable text layer), ``"always"`` (every page; the text layer is
            replaced) or ``"never"``.
        ocr_engine: ``"tesseract"`` or ``"rapidocr"`` (the ``[rapidocr]`` extra).
        ocr_languages: Tesseract language codes: ``"eng"``, ``"eng+deu"`` or ``["eng", "deu"]``.
        ocr_workers: Processes that OCR pages side by side (default: the machine's cores).
        ocr_dpi: The resolution pages are drawn at for OCR.

    Raises:
        InvalidOptionError: an OCR option outside its choices; ``config`` is not a ``PyMuPDFConfig`` or
            holds a value its checks refuse; or a keyword it also sets is passed too.

    PyMuPDF is not thread-safe, so loads from several threads run one at a time.
    """

    SUPPORTED_FORMATS: ClassVar[list[str]] = ["pdf"]

    def __init__(
        self,
        config: PyMuPDFConfigLike | None = None,
        cache_ttl: int = 300,
        *,
        content: Any = None,
        pages: PageSpec | None = None,
        password: str | None = None,
        tables: bool = True,
        include_bbox: bool = False,
        dpi: int = 150,
        ocr: OcrMode = "auto",
        ocr_engine: OcrEngine = "tesseract",
        ocr_languages: str | list[str] = "eng",
        ocr_workers: int | None = None,
        ocr_dpi: int = DEFAULT_OCR_DPI,
    ) -> None:
        vision = False
        if config is not None:
            options = as_pymupdf_config(config)
            _refuse_both_ways(
                {
                    "password": (password is not None, "password", password),
                    "tables": (tables is not True, "extract_tables", tables),
                    "include_bbox": (include_bbox is not False, "include_bbox", include_bbox),
                    "dpi": (dpi != 150, "dpi", dpi),
                    "cache_ttl": (cache_ttl != 300, "cache_ttl", cache_ttl),
                }
            )
            cache_ttl, password, tables = options.cache_ttl, options.password, options.extract_tables
            include_bbox, dpi, vision = options.include_bbox, options.dpi, options.vision_enabled
        else:  # the keywords pass the config's checks too ("dpi must be a positive integer")
            PyMuPDFConfig(cache_ttl=cache_ttl, password=password, extract_tables=tables, dpi=dpi)
        super().__init__(content, cache_ttl)
        self.cache_ttl = cache_ttl
        self._loads: TTLCache[tuple[Any, ...], list[dict[str, Any]]] = TTLCache(CACHED_DOCUMENTS, cache_ttl)
        self._loads_lock = threading.Lock()
        self.pages = pages
        self.password = password
        self.tables = tables
        self.include_bbox = include_bbox
        self.dpi = dpi
        self.ocr = ocr_settings(ocr, ocr_engine, ocr_languages, ocr_workers, ocr_dpi)
        if vision:
            self.set_vision_mode(True)

    @property
    def config(self) -> PyMuPDFConfig:
        """The loader's options as a ``PyMuPDFConfig``, as the framework's loader has them: a snapshot
        (set ``tables``, ``dpi``, ... on the loader, or call ``set_vision_mode``, to change them)."""
        return PyMuPDFConfig(
            cache_ttl=self.cache_ttl,
            password=self.password,
            extract_tables=self.tables,
            include_bbox=self.include_bbox,
            vision_enabled=self.vision_mode,
            dpi=self.dpi,
        )

    def set_max_image_size(self, size: int | None) -> None:
        """Draw page images no wider or taller than ``size`` pixels (``None``: only ``dpi`` sets their
        size), as ExtractThinker's loaders do.

        Raises:
            InvalidOptionError: ``size`` is not a positive integer.
        """
        if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size <= 0):
            raise InvalidOptionError(
                f"The maximum image size must be a positive number of pixels, such as 1024; got {size!r}."
            )
        self.max_image_size = size

    def load(self, source: PdfSource) -> list[dict[str, Any]]:
        """Load a PDF's pages.

        Args:
            source: A path, bytes or BytesIO.

        Returns:
            One dict per selected page, in page order.

        Raises:
            DocumentLoadError: the file is missing, not a PDF, corrupt, or encrypted without the password.
            EmptyDocumentError: the PDF has no pages.
            PageSpecError: ``pages`` does not fit the document.
            OcrError: ``ocr="always"`` and the OCR engine or its language data is not installed.

        Warns:
            PageIndexWarning: scanned pages were met and no OCR engine is installed, or OCR failed on a page.
        """
        return self._cached(source, self.dpi if self.vision_mode else None)

    def load_text(self, source: PdfSource) -> list[dict[str, Any]]:
        """The pages as :meth:`load` gives them, without images whatever the vision mode: the first step of
        a two-step load (:class:`DocumentLoaderRAG` renders only the pages it keeps, with
        :meth:`page_images`).

        Raises:
            As :meth:`load`.
        """
        return self._cached(source, None)

    def _cached(self, source: PdfSource, image_dpi: int | None) -> list[dict[str, Any]]:
        """The pages of ``source`` (with images at ``image_dpi``, or none) from the loader's cache of recent
        loads, or read (and kept) now. The key holds the file's identity (path, size and modification
        time, or the bytes' hash) and every option that changes the pages; each call gets its own copies
        of the page dicts."""

        def read() -> list[dict[str, Any]]:
            return read_pdf_pages(
                source,
                pages=self.pages,
                password=self.password,
                tables=self.tables,
                regions=self.include_bbox,
                image_dpi=image_dpi,
                image_max_side=self.max_image_size,
                ocr=self.ocr,
            )

        identity = _source_identity(source)
        if identity is None:
            return read()
        key = (
            identity,
            image_dpi,
            self.max_image_size if image_dpi else None,
            repr(self.pages),
            self.password,
            self.tables,
            self.include_bbox,
            repr(sorted(self.ocr.key().items())),
        )
        with self._loads_lock:
            pages = self._loads.get(key)
        if pages is None:
            pages = read()
            with self._loads_lock:
                self._loads[key] = pages
        return [dict(page) for page in pages]

    def page_images(self, source: PdfSource, page_numbers: Sequence[int]) -> dict[int, bytes]:
        """The PNG images :meth:`load` attaches in vision mode, of the pages numbered ``page_numbers``
        (1-based, as in the PDF) only.

        Raises:
            DocumentLoadError: the file cannot be read (as :meth:`load`).
        """
        from ..pdf.images import render_page_png
        from ..pdf.opening import PYMUPDF_LOCK, open_pdf

        if isinstance(source, BytesIO):
            source.seek(0)
        with open_pdf(source, password=self.password) as document, PYMUPDF_LOCK:
            return {
                number: render_page_png(document[number - 1], self.dpi, self.max_image_size)
                for number in dict.fromkeys(page_numbers)
                if 1 <= number <= document.page_count
            }

    def can_handle_vision(self, source: str | BytesIO) -> bool:
        """PDFs can be rendered to page images, so vision mode works for whatever ``can_handle`` accepts."""
        return self.can_handle(source)


def _refuse_both_ways(keywords: dict[str, tuple[bool, str, Any]]) -> None:
    """Refuse keywords passed beside a config that sets the same option: ``{keyword: (passed, the config's
    field, value)}``.

    Raises:
        InvalidOptionError: one of them was passed.
    """
    passed = [(name, field, value) for name, (given, field, value) in keywords.items() if given]
    if passed:
        shown = ", ".join(f"{name}={value!r} (the config's {field})" for name, field, value in passed)
        raise InvalidOptionError(
            f"DocumentLoaderPyMuPDF got a config and {shown}, which the config sets too; pass each option "
            "one way: in the config, or as a keyword without a config."
        )


def _source_identity(source: PdfSource) -> tuple[Any, ...] | None:
    """What names a source's content for the load cache, or ``None`` when it cannot be told (no such
    file: the read reports it)."""
    if isinstance(source, BytesIO):
        return ("bytes", hashlib.sha256(source.getbuffer()).hexdigest())
    if isinstance(source, (bytes, bytearray, memoryview)):
        return ("bytes", hashlib.sha256(source).hexdigest())
    try:
        path = os.fspath(source)
        status = os.stat(path)
    except (TypeError, ValueError, OSError):
        return None
    return ("file", os.path.realpath(path), status.st_size, status.st_mtime_ns)
