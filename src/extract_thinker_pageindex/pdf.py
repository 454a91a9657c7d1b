"""Opening and drawing PDFs with PyMuPDF: one place that translates its errors, serialises its use across
threads, and bounds every page image and picture it decodes or draws (by pixels and by side)."""

from __future__ import annotations

import gc
import math
import os
import sys
import threading
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from io import BytesIO
from types import ModuleType
from typing import TYPE_CHECKING, Any

from .errors import (
    DocumentLoadError,
    EmptyDocumentError,
    InvalidOptionError,
    PageIndexError,
    PageIndexWarning,
    UnsupportedFormatError,
)
from .files import MAX_DOCUMENT_BYTES, read_regular_file

if TYPE_CHECKING:
    import pymupdf

__all__ = [
    "MAX_PICTURE_PIXELS",
    "MAX_PICTURE_SIDE",
    "MAX_RENDER_PIXELS",
    "MAX_RENDER_SIDE",
    "PYMUPDF_LOCK",
    "PdfSource",
    "describe_source",
    "fewer_collections",
    "fit_scale",
    "load_pymupdf",
    "load_pymupdf_layout",
    "open_pdf",
    "page_matrix",
    "pdf_errors",
    "picture_png",
    "pixmap_png",
    "read_pdf_bytes",
    "render_page_png",
]

#: PyMuPDF is not thread-safe, even across separate documents; every call into it holds this lock.
PYMUPDF_LOCK = threading.RLock()

#: Page images (for a vision model, or a loader's vision mode) are at most this many pixels on a side and
#: in all, whatever the dpi and the page size: a 7,200 pt page at 150 dpi would otherwise be 15,000 pixels
#: square (675 MB to draw). Image sources are scaled to the same size.
MAX_RENDER_SIDE = 2048
MAX_RENDER_PIXELS = 4_000_000
#: Pictures embedded in a PDF are extracted at their own resolution when they fit these; a larger one is
#: drawn from its place on the page, reduced to fit, which MuPDF does by decoding it subsampled.
MAX_PICTURE_SIDE = 10_000
MAX_PICTURE_PIXELS = 16_000_000

PdfSource = str | os.PathLike[str] | bytes | BytesIO


#: While pages are read, the cycle collector looks at young objects after this many new containers
#: (Python's default is 700).
READING_GC_THRESHOLD = 50_000


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Collect cycles less often while pages are read. A page's text comes as thousands of dicts, lists
    and tuples that reference counting frees, but each allocation counts towards the cycle collector,
    whose runs then walk every object still alive (the lines of all pages read so far): about 6% of the
    text strategy's time. The threshold of the youngest generation is raised meanwhile and set back after,
    unless collection is off or something else changed it in between."""
    old = gc.get_threshold()
    if not gc.isenabled() or old[0] == 0 or old[0] >= READING_GC_THRESHOLD:
        yield
        return
    gc.set_threshold(READING_GC_THRESHOLD, *old[1:])
    try:
        yield
    finally:
        if gc.get_threshold()[0] == READING_GC_THRESHOLD:
            gc.set_threshold(*old)


# -- importing PyMuPDF ------------------------------------------------------------------------------------

#: What PyMuPDF 2.0's ``__init__`` imports by itself whenever they are installed (and pymupdf 2.0 depends
#: on both): its layout model, ``pymupdf.layout`` (onnxruntime, and the ONNX model loaded and activated on
#: import), and pymupdf4llm (which imports the layout model too). They are most of what ``import pymupdf``
#: costs: 1.6 s of CPU against 0.35 s without them (benchmarks/import_time.py). Only layout analysis uses
#: them; reading a PDF's text layer does not.
_PYMUPDF_ADD_ONS = ("pymupdf.layout", "pymupdf4llm")
_PYMUPDF_IMPORT_LOCK = threading.Lock()


def load_pymupdf() -> ModuleType:
    """PyMuPDF, imported (if this is the process's first import of it) without its layout model and
    pymupdf4llm; use this instead of ``import pymupdf``.

    PyMuPDF 2.0 imports both inside ``try: ... except ImportError`` and offers no switch to skip them (no
    environment variable; PyMuPDF 2.1 imports them lazily itself). So for that one import statement their
    ``sys.modules`` entries are ``None``, the import system's documented way to make an import raise
    ``ModuleNotFoundError``: PyMuPDF takes its own path for "not installed", as PyMuPDF 1.x without
    pymupdf-layout does. The entries are removed right after, so a later ``import pymupdf.layout`` or
    ``import pymupdf4llm`` loads them as usual (see :func:`load_pymupdf_layout`), and a process that
    imported PyMuPDF before this package keeps what it loaded. One thing stays off where this package
    imported PyMuPDF first: PyMuPDF 2.0's ``Document.to_markdown`` shortcut reports pymupdf4llm missing
    (call ``pymupdf4llm.to_markdown(document)`` instead).
    """
    if "pymupdf" not in sys.modules:
        with _PYMUPDF_IMPORT_LOCK:
            if "pymupdf" not in sys.modules:
                blocked = [name for name in _PYMUPDF_ADD_ONS if name not in sys.modules]
                for name in blocked:
                    sys.modules[name] = None  # type: ignore[assignment]
                try:
                    import pymupdf
                finally:
                    for name in blocked:
                        if name in sys.modules and sys.modules[name] is None:
                            del sys.modules[name]
    import pymupdf

    return pymupdf


def load_pymupdf_layout() -> ModuleType:
    """PyMuPDF's layout model, imported and active: what ``Page.get_layout`` (and PyMuPDF's own table
    finder's ``use_layout``) need (about a second, and onnxruntime, the first time in a process).

    Raises:
        UnsupportedFormatError: the installed PyMuPDF has no layout model (PyMuPDF 1.x without
            pymupdf-layout).
    """
    load_pymupdf()
    try:
        import pymupdf.layout
    except ImportError as exc:
        raise UnsupportedFormatError(
            "PyMuPDF's layout analysis needs PyMuPDF 2 (or pymupdf-layout with PyMuPDF 1.x); "
            "install it with pip install 'pymupdf>=2'."
        ) from exc
    # Importing activates it; again in case pymupdf4llm.use_layout(False) switched it off since.
    pymupdf.layout.activate()
    return pymupdf.layout


def describe_source(source: PdfSource) -> str:
    """How messages name a PDF source: its quoted path, or "The PDF stream"."""
    if isinstance(source, (str, os.PathLike)):
        return repr(str(source))
    return "The PDF stream"


@contextmanager
def pdf_errors(name: str) -> Iterator[None]:
    """Translate PyMuPDF's errors inside the block into ``DocumentLoadError`` naming the document."""
    pymupdf = load_pymupdf()

    try:
        yield
    except PageIndexError:
        raise
    except (pymupdf.mupdf.FzErrorBase, pymupdf.FileDataError, RuntimeError, IndexError, ValueError) as exc:
        raise DocumentLoadError(f"{name} is not a readable PDF: {exc}.") from exc


def _mupdf_errors() -> tuple[type[Exception], ...]:
    """What PyMuPDF raises for data it cannot handle (MuPDF's own errors are not RuntimeErrors)."""
    pymupdf = load_pymupdf()

    return (pymupdf.mupdf.FzErrorBase, RuntimeError, ValueError)


def read_pdf_bytes(source: PdfSource, name: str) -> bytes:
    """A PDF source's bytes, read through the guarded reader (regular files only, size-limited).

    Raises:
        DocumentLoadError: the source cannot be read; ``EmptyDocumentError`` when it is 0 bytes.
    """
    if isinstance(source, (str, os.PathLike)):
        data = read_regular_file(source, limit=MAX_DOCUMENT_BYTES, error=DocumentLoadError)
    elif isinstance(source, BytesIO):
        data = source.getvalue()
    elif isinstance(source, (bytes, bytearray)):
        data = bytes(source)
    else:
        raise DocumentLoadError(f"Cannot read a PDF from a {type(source).__name__}.")
    if not data:
        raise EmptyDocumentError(f"{name} is empty (0 bytes).")
    return data


@contextmanager
def open_pdf(
    source: PdfSource, *, password: str | None = None, name: str | None = None
) -> Iterator[pymupdf.Document]:
    """Open a PDF from a path, bytes or BytesIO, authenticated.

    The lock is held while opening and closing only: callers hold ``PYMUPDF_LOCK`` around every use of
    the document (several threads may render its pages in turn). Errors raised while the caller reads
    pages are the caller's to translate (see :func:`pdf_errors`).
    ``name`` is how messages call the document (by default its quoted path, or "The PDF stream").

    Raises:
        DocumentLoadError: missing file, not a PDF, corrupt, or encrypted without the right password.
        EmptyDocumentError: 0 bytes, or no pages.

    Warns:
        PageIndexWarning: the file was damaged and MuPDF repaired it (some text may be missing).
    """
    pymupdf = load_pymupdf()

    name = name or describe_source(source)
    data = read_pdf_bytes(source, name)
    with PYMUPDF_LOCK:
        with pdf_errors(name):
            document = pymupdf.open(stream=data, filetype="pdf")
        try:
            with pdf_errors(name):
                # MuPDF opens many formats whatever filetype says; only a PDF is a PDF here.
                if not document.is_pdf:
                    kind = (document.metadata or {}).get("format") or "another format"
                    raise DocumentLoadError(f"{name} is not a PDF (it reads as {kind}).")
                if document.needs_pass:
                    if password is None:
                        raise DocumentLoadError(
                            f"{name} is encrypted; pass its password (password= in Python, --password on "
                            "the command line) to open it."
                        )
                    if not document.authenticate(password):
                        raise DocumentLoadError(f"The password for {name} is wrong.")
                if document.page_count == 0:
                    raise EmptyDocumentError(f"{name} has no pages.")
                if document.is_repaired:
                    warnings.warn(
                        f"{name} is damaged; MuPDF repaired it, and some pages may have lost text.",
                        PageIndexWarning,
                        stacklevel=3,
                    )
        except BaseException:
            document.close()
            raise
    try:
        yield document
    finally:
        with PYMUPDF_LOCK:
            document.close()


# -- bounded drawing --------------------------------------------------------------------------------------


def fit_scale(
    width: float, height: float, scale: float, *, max_side: int, max_pixels: int, rounding: float = 0.0
) -> float:
    """The largest scale, at most ``scale``, at which a ``width`` x ``height`` area fits both limits.

    Args:
        width: The area's width (points of a page, or pixels of an image).
        height: The area's height, in the same unit.
        scale: The scale asked for (``dpi / 72`` for a page, 1 for an image at its own size).
        max_side: The most pixels either side may have once scaled.
        max_pixels: The most pixels the scaled area may have in all.
        rounding: How many pixels a side may gain when the scaled size is rounded to whole pixels (MuPDF
            rounds a drawn area outwards: 1 for a page, 2 for a clip that need not start on a pixel).

    Returns:
        The scale; smaller than ``scale`` only when needed to fit.
    """
    width, height = max(width, 1e-6), max(height, 1e-6)
    by_side = (max_side - rounding) / max(width, height)
    # (width * s + rounding) * (height * s + rounding) <= max_pixels, solved for s.
    a, b, c = width * height, rounding * (width + height), rounding * rounding - max_pixels
    by_pixels = (-b + math.sqrt(b * b - 4 * a * c)) / (2 * a)
    return max(0.0, min(scale, by_side, by_pixels))


@dataclass(frozen=True)
class ImageLimits:
    """The largest page image worth sending to a model: what it will see, after its provider's own
    downscaling. Never more than ``MAX_RENDER_SIDE`` and ``MAX_RENDER_PIXELS``.

    Attributes:
        max_side: The most pixels the longer side may have.
        max_pixels: The most pixels in all.
        max_short_side: The most pixels the shorter side may have (OpenAI scales the shorter side of a
            high-detail image to 768), or ``None``.
        multiple_of: Each side of the image is made a multiple of this many pixels (within the limits), or
            ``None``. Qwen2.5-VL's processor resizes every image to sides that are multiples of 28 and
            answers boxes in pixels of the resized image: an image already of such a size is not resized,
            so its boxes are in pixels of the image sent.
    """

    max_side: int = MAX_RENDER_SIDE
    max_pixels: int = MAX_RENDER_PIXELS
    max_short_side: int | None = None
    multiple_of: int | None = None

    def __post_init__(self) -> None:
        values = (self.max_side, self.max_pixels, self.max_short_side or 1, self.multiple_of or 1)
        if any(isinstance(value, bool) or not isinstance(value, int) or value < 1 for value in values):
            raise InvalidOptionError(f"image limits must be whole numbers of pixels, at least 1; got {self}.")

    def scale(self, width: float, height: float, scale: float, rounding: float = 0.0) -> float:
        """The largest scale, at most ``scale``, at which ``width`` x ``height`` fits these limits."""
        fitted = fit_scale(
            width,
            height,
            scale,
            max_side=min(self.max_side, MAX_RENDER_SIDE),
            max_pixels=min(self.max_pixels, MAX_RENDER_PIXELS),
            rounding=rounding,
        )
        if self.max_short_side is not None:
            fitted = min(fitted, max(0.0, self.max_short_side - rounding) / max(min(width, height), 1e-6))
        return fitted

    def snapped(self, width: int, height: int) -> tuple[int, int]:
        """The size an image of ``width`` x ``height`` pixels is sent at: itself, or with ``multiple_of``
        each side rounded to the nearest multiple (at least one), and, when that is over ``max_pixels`` or
        ``max_side``, both sides scaled down alike and rounded down instead: the resize Qwen2.5-VL's
        processor makes (``smart_resize``), so an image of this size is left as it is."""
        step = self.multiple_of
        if step is None:
            return width, height
        snapped_width = max(step, round(width / step) * step)
        snapped_height = max(step, round(height / step) * step)
        longest = min(self.max_side, MAX_RENDER_SIDE)
        if snapped_width * snapped_height > self.max_pixels or max(snapped_width, snapped_height) > longest:
            shrink = max(math.sqrt(width * height / self.max_pixels), max(width, height) / longest)
            snapped_width = max(step, math.floor(width / shrink / step) * step)
            snapped_height = max(step, math.floor(height / shrink / step) * step)
        return snapped_width, snapped_height


DEFAULT_IMAGE_LIMITS = ImageLimits()


def page_matrix(page: Any, dpi: int, limits: ImageLimits = DEFAULT_IMAGE_LIMITS) -> pymupdf.Matrix:
    """The matrix that draws a page at ``dpi``, or smaller when that is needed to keep the image within
    ``limits`` (by default ``MAX_RENDER_SIDE`` and ``MAX_RENDER_PIXELS``: the model's own limits are
    narrower).

    Boxes a model gives on the image map back through the image's size, so a reduced page keeps them right.
    """
    pymupdf = load_pymupdf()

    rect = page.rect
    zoom = limits.scale(rect.width, rect.height, dpi / 72, rounding=1.0)
    return pymupdf.Matrix(zoom, zoom)


def render_page_png(page: Any, dpi: int, max_side: int | None = None) -> bytes:
    """The page as PNG bytes at ``dpi``, reduced to fit ``MAX_RENDER_SIDE`` and ``MAX_RENDER_PIXELS``, and
    to ``max_side`` pixels on its longer side when that is given (ExtractThinker's ``set_max_image_size``):
    drawn at the smaller scale, not drawn large and shrunk (call while holding ``PYMUPDF_LOCK``)."""
    matrix = page_matrix(page, dpi)
    if max_side is not None:
        pymupdf = load_pymupdf()

        # MuPDF rounds the drawn size to whole pixels with a little tolerance, so the longer side comes
        # out at exactly ``max_side``.
        zoom = min(matrix.a, max_side / max(page.rect.width, page.rect.height, 1e-6))
        matrix = pymupdf.Matrix(zoom, zoom)
    pixmap = page.get_pixmap(matrix=matrix, alpha=False)
    return bytes(pixmap.tobytes("png"))


def pixmap_png(pixmap: Any) -> bytes | None:
    """A decoded picture as PNG bytes, in grey or RGB (with its alpha, if any): CMYK, Lab, separation
    and DeviceN colours, which PNG cannot hold, are converted to RGB.

    Returns:
        None for a pixmap without colours (a stencil mask: only the page shows what it paints).
    """
    pymupdf = load_pymupdf()

    if pixmap.colorspace is None:
        return None
    if pixmap.colorspace.n in (1, 3):
        try:
            return bytes(pixmap.tobytes("png"))
        except (pymupdf.mupdf.FzErrorArgument, ValueError):
            pass  # one or three components that are not grey or RGB: a separation, Lab
    return bytes(pymupdf.Pixmap(pymupdf.csRGB, pixmap).tobytes("png"))


def _draw_picture(page: Any, clip: Sequence[float], width: int, height: int) -> bytes:
    """The part of the page a picture covers, drawn no finer than the picture's own resolution and within
    ``MAX_PICTURE_SIDE`` and ``MAX_PICTURE_PIXELS`` (MuPDF decodes a picture drawn smaller subsampled)."""
    pymupdf = load_pymupdf()

    area = pymupdf.Rect(clip) & page.rect
    if area.is_empty:
        raise ValueError("its place on the page is empty")
    own = max(width / area.width, height / area.height)
    zoom = fit_scale(
        area.width,
        area.height,
        own,
        max_side=MAX_PICTURE_SIDE,
        max_pixels=MAX_PICTURE_PIXELS,
        rounding=2.0,
    )
    pixmap = page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), clip=area, alpha=False)
    return bytes(pixmap.tobytes("png"))


def picture_png(
    document: Any, xref: int, *, width: int, height: int, page: Any, clip: Sequence[float], name: str
) -> bytes | None:
    """A picture embedded in a PDF as PNG bytes, bounded (call while holding ``PYMUPDF_LOCK``).

    A picture within ``MAX_PICTURE_SIDE`` and ``MAX_PICTURE_PIXELS`` (its size is read from the PDF, not
    decoded) is extracted at its own resolution, its colours made grey or RGB by :func:`pixmap_png`. A
    larger one, or a stencil mask, is drawn from its place on the page instead (see ``_draw_picture``).

    Args:
        document: The open PyMuPDF document.
        xref: The picture's object number.
        width: The picture's width in pixels, as the PDF declares it.
        height: Its height in pixels.
        page: A PyMuPDF page that shows the picture.
        clip: Where the picture is on that page, ``(x0, y0, x1, y1)`` in points.
        name: How messages name the document.

    Returns:
        The PNG bytes, or None when the picture cannot be read.

    Warns:
        PageIndexWarning: the picture cannot be read (its data are broken or of a kind MuPDF does not
            decode); it is left out and the page is kept.
    """
    pymupdf = load_pymupdf()

    fits = max(width, height) <= MAX_PICTURE_SIDE and width * height <= MAX_PICTURE_PIXELS
    try:
        png = pixmap_png(pymupdf.Pixmap(document, xref)) if fits else None
        return png if png is not None else _draw_picture(page, clip, width, height)
    except _mupdf_errors() as exc:
        warnings.warn(
            f"{name}: the picture on page {page.number + 1} ({width} x {height} pixels, object {xref}) "
            f"cannot be read ({exc}); it is left out of the index, and the page's text is kept.",
            PageIndexWarning,
            stacklevel=3,
        )
        return None
