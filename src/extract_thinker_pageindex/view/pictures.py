"""Page pictures for the view: find the indexed source, render its pages, and place boxes on them.

Boxes are stored in the page's own coordinates (PDF points of the unrotated crop box; pixels of the original
image for image sources). The view draws them over the page as it is shown, so each box is turned with the
page's ``/Rotate`` and given as percentages of the shown page: the picture can then be drawn at any size.
"""

from __future__ import annotations

import base64
import io
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..document.model import Document
from ..errors import DocumentLoadError

__all__ = [
    "PagePicture",
    "PageSpace",
    "Pictures",
    "find_source",
    "open_pictures",
    "source_beside",
    "source_kind",
]

#: The name ending of a page index folder (``store.SUFFIX``; not imported, to keep this module light).
INDEX_SUFFIX = ".pageindex"

#: A box as the view draws it: left, top, width, height in percent of the shown page.
Percent = tuple[float, float, float, float]


def source_kind(document: Document) -> str | None:
    """The kind of the indexed source ("pdf", "image", "markdown", "text"), from its recorded extension."""
    from ..inputs.sources import EXTENSION_KINDS

    if not document.extension:
        return None
    return EXTENSION_KINDS.get("." + document.extension.lower().lstrip("."))


def source_beside(document: Document, index_root: Path) -> Path | None:
    """Where the source of an index is looked for when none is given: the file named as the index folder,
    beside it (``report.pageindex`` -> ``report.<extension>``); None if the index records no known
    extension.

    Only the extension is taken from the index, and only one of the known ones: a shared index's other
    fields (its ``name`` may be an absolute path or ``../..``) never choose the file that is drawn.
    """
    kind = source_kind(document)
    folder = Path(os.path.abspath(index_root))
    stem = folder.name[: -len(INDEX_SUFFIX)] if folder.name.endswith(INDEX_SUFFIX) else folder.name
    if kind is None or not document.extension or not stem:
        return None
    return folder.parent / f"{stem}.{document.extension.lstrip('.')}"


def find_source(document: Document, index_root: Path, source: str | os.PathLike[str] | None) -> Path:
    """The source file of an index: ``source`` when given (a relative path is looked for from the current
    directory, then beside the index folder), else :func:`source_beside`.

    Raises:
        DocumentLoadError: no such file.
    """
    base = Path(os.path.abspath(index_root)).parent
    if source is not None:
        given = Path(source)
        candidates = [given] if given.is_absolute() else [given, base / given]
        for candidate in candidates:
            if candidate.is_file():
                return candidate
        for candidate in candidates:
            if os.path.lexists(candidate):
                raise DocumentLoadError(f"The source {str(candidate)!r} is not a regular file.")
        raise DocumentLoadError(
            f"The source file {str(source)!r} does not exist (looked in {str(base)!r} too)."
        )
    beside = source_beside(document, index_root)
    if beside is None:
        raise DocumentLoadError(
            f"The page index {str(index_root)!r} does not record its source's extension; "
            "give the source file with --source (source= in Python)."
        )
    if beside.is_file():
        return beside
    what = "is not a regular file" if os.path.lexists(beside) else "is not"
    raise DocumentLoadError(
        f"The source of {str(index_root)!r}, {beside.name!r} (named as the index folder), {what} beside "
        f"the index ({str(base)!r}); give its path with --source (source= in Python) to draw the pages."
    )


@dataclass
class PageSpace:
    """How a page's own coordinates map onto the page as shown: its shown size and its rotation."""

    width: float
    height: float
    rotation_matrix: Any = None  # PyMuPDF's page.rotation_matrix; None for an upright page

    def percent(self, box: Sequence[float]) -> Percent | None:
        """A box in the page's own coordinates as percentages of the shown page (None if off the page)."""
        x0, y0, x1, y1 = (float(value) for value in box)
        if self.rotation_matrix is not None:
            import pymupdf

            rect = (pymupdf.Rect(x0, y0, x1, y1) * self.rotation_matrix).normalize()
            x0, y0, x1, y1 = rect.x0, rect.y0, rect.x1, rect.y1
        x0, x1 = max(0.0, x0), min(self.width, x1)
        y0, y1 = max(0.0, y0), min(self.height, y1)
        if x1 <= x0 or y1 <= y0:
            return None
        return (
            round(100 * x0 / self.width, 3),
            round(100 * y0 / self.height, 3),
            round(100 * (x1 - x0) / self.width, 3),
            round(100 * (y1 - y0) / self.height, 3),
        )


@dataclass
class PagePicture:
    """A rendered page: image bytes, their format and pixel size, the page's space and its words."""

    data: bytes
    suffix: str  # "jpg" or "png"
    width_px: int
    height_px: int
    space: PageSpace
    words: list[tuple[float, float, float, float, str]] = field(default_factory=list)

    def data_uri(self) -> str:
        """The image as a ``data:`` URI."""
        mime = "image/jpeg" if self.suffix == "jpg" else "image/png"
        return f"data:{mime};base64,{base64.b64encode(self.data).decode('ascii')}"


@dataclass
class Pictures:
    """An open source: how many pages it has, and ``render(page_index, words)`` for each page (with its
    words' positions when ``words`` is true: image sources have none)."""

    page_count: int
    render: Callable[[int, bool], PagePicture]
    #: The words of a page's text layer with their boxes, ``(x0, y0, x1, y1, word)`` (PDF only).
    text_words: Callable[[int], list[tuple[float, float, float, float, str]]] | None = None


@contextmanager
def open_pictures(path: Path, kind: str, *, dpi: int, password: str | None = None) -> Iterator[Pictures]:
    """Open a PDF or image source to render its pages on demand.

    Args:
        path: The source file.
        kind: "pdf" or "image".
        dpi: Resolution of PDF pages (reduced for very large pages, as the vision strategy does).
        password: Password of an encrypted PDF.

    Raises:
        DocumentLoadError: the file cannot be read as a PDF or an image.
    """
    if kind == "image":
        from ..inputs.files import MAX_DOCUMENT_BYTES, read_regular_file
        from ..strategies.page_images import image_page

        data = read_regular_file(path, limit=MAX_DOCUMENT_BYTES, error=DocumentLoadError)
        rendered = image_page(data, repr(str(path)))

        def image(index: int, words: bool = False) -> PagePicture:
            space = PageSpace(rendered.width_pt, rendered.height_pt)
            return PagePicture(rendered.png, "png", rendered.width_px, rendered.height_px, space)

        yield Pictures(1, image)
        return

    from ..pdf.images import page_matrix
    from ..pdf.opening import PYMUPDF_LOCK, open_pdf, pdf_errors

    with open_pdf(path, password=password) as pdf:

        def render(index: int, words: bool = False) -> PagePicture:
            from PIL import Image

            with PYMUPDF_LOCK, pdf_errors(f"page {index + 1} of {str(path)!r}"):
                page = pdf[index]
                pixmap = page.get_pixmap(matrix=page_matrix(page, dpi), alpha=False)
                size, mode, samples = (
                    (pixmap.width, pixmap.height),
                    "L" if pixmap.n == 1 else "RGB",
                    pixmap.samples,
                )
                upright = page.rotation % 360 == 0
                space = PageSpace(
                    float(page.rect.width),
                    float(page.rect.height),
                    None if upright else page.rotation_matrix,
                )
                found = [(w[0], w[1], w[2], w[3], w[4]) for w in page.get_text("words")] if words else []
            # Pillow encodes JPEG about five times faster than MuPDF, and outside PyMuPDF's lock.
            out = io.BytesIO()
            Image.frombytes(mode, size, bytes(samples)).save(out, format="JPEG", quality=75)
            return PagePicture(out.getvalue(), "jpg", size[0], size[1], space, found)

        def text_words(index: int) -> list[tuple[float, float, float, float, str]]:
            with PYMUPDF_LOCK, pdf_errors(f"page {index + 1} of {str(path)!r}"):
                return [(w[0], w[1], w[2], w[3], str(w[4])) for w in pdf[index].get_text("words")]

        yield Pictures(int(pdf.page_count), render, text_words)
