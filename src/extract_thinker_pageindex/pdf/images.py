"""Drawing PDF pages and pictures with PyMuPDF, bounded: every page image and picture decoded or drawn is
limited by pixels and by side, and encoded as PNG; a plain JPEG picture kept whole is kept as the PDF
embeds it.

Call these while holding ``PYMUPDF_LOCK``."""

from __future__ import annotations

import functools
import math
import re
import struct
import warnings
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import InvalidOptionError, PageIndexWarning
from .opening import load_pymupdf, mupdf_errors

if TYPE_CHECKING:
    import pymupdf

__all__ = [
    "DEFAULT_IMAGE_LIMITS",
    "JPEG_SCALE",
    "MAX_JPEG_DPI",
    "MAX_PICTURE_DPI",
    "MAX_PICTURE_PIXELS",
    "MAX_PICTURE_SIDE",
    "MAX_RENDER_PIXELS",
    "MAX_RENDER_SIDE",
    "DrawnPicture",
    "ImageLimits",
    "drawn_from_page",
    "drawn_pictures",
    "embedded_jpeg",
    "encode_png",
    "fit_scale",
    "fits_whole",
    "page_matrix",
    "page_turn",
    "picture_bytes",
    "picture_png",
    "picture_scale",
    "pixmap_png",
    "render_page_png",
]

#: Page images (for a vision model, or a loader's vision mode) are at most this many pixels on a side and
#: in all, whatever the dpi and the page size: a 7,200 pt page at 150 dpi would otherwise be 15,000 pixels
#: square (675 MB to draw). Image sources are scaled to the same size.
MAX_RENDER_SIDE = 2048
MAX_RENDER_PIXELS = 4_000_000
#: Pictures embedded in a PDF are extracted at their own resolution when they fit these; a larger one is
#: drawn from its place on the page, reduced to fit, which MuPDF does by decoding it subsampled.
MAX_PICTURE_SIDE = 10_000
MAX_PICTURE_PIXELS = 16_000_000
#: A picture is kept no finer than this many pixels per inch of its place on the page (print resolution):
#: finer pixels are what no reader and no model sees, and encoding them was most of the time pictures took.
MAX_PICTURE_DPI = 300
#: A plain JPEG is kept as the PDF embeds it up to this many pixels per inch of its place: nothing is
#: decoded or encoded, and its own bytes are mostly smaller than a PNG of it reduced to ``MAX_PICTURE_DPI``
#: (on the eval sets' JPEGs between 300 and 600 dpi, 1.3 MB against 3.9 MB); a finer one is reduced.
MAX_JPEG_DPI = 600
#: The least scale (see :func:`picture_scale`) at which a JPEG is kept as embedded.
JPEG_SCALE = MAX_PICTURE_DPI / MAX_JPEG_DPI


def page_turn(page: Any) -> tuple[Any, Any]:
    """``(rotation, derotation)``: PyMuPDF matrices from a page's unturned space (where its text, and so
    every box of the index, is) to the page as shown, and back — as MuPDF lays the page out, from its
    bounds (scaled by a ``/UserUnit``, cut to the MediaBox). PyMuPDF's own ``rotation_matrix`` measures
    the unscaled CropBox: on a turned page of two units a point, or one whose CropBox reaches past its
    MediaBox, it puts boxes off the page. On every other page the two are the same."""
    pymupdf = load_pymupdf()

    rotation = page.rotation % 360
    if not rotation:
        return pymupdf.Identity, pymupdf.Identity
    shown = page.rect
    width, height = (shown.height, shown.width) if rotation in (90, 270) else (shown.width, shown.height)
    turn = pymupdf.Matrix(rotation)
    turned = pymupdf.Rect(0, 0, width, height) * turn
    matrix = turn * pymupdf.Matrix(1, 0, 0, 1, -turned.x0, -turned.y0)
    return matrix, ~matrix


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
    return encode_png(page.get_pixmap(matrix=matrix, alpha=False))


#: PNG's colour types for grey and RGB, without and with alpha, by components per pixel.
_PNG_COLOUR_TYPES = {1: 0, 2: 4, 3: 2, 4: 6}
#: Rows filtered and deflated at a time (bounds the copy an encoding makes).
_PNG_BAND_ROWS = 256


def encode_png(pixmap: Any, *, bilevel: bool = False, alpha: Any = None) -> bytes:
    """A grey or RGB pixmap (with its alpha, if any) as PNG bytes, encoded fast.

    Each row is stored as its difference from the row above (PNG's "Up" filter, for every row) and
    deflated by zlib-ng at level 2: about 3.5 times faster than MuPDF's own PNG writer on the eval sets'
    pictures, and the files a seventh smaller. The pixels are exactly the pixmap's; alpha, which MuPDF
    keeps premultiplied, is undone as PNG expects. ``bilevel``: the pixmap is a black-and-white picture
    decoded (a scan, line art); when every pixel is black or white it is stored at one bit a pixel, an
    eighth of the bytes to filter and deflate. ``alpha``: the picture's mask, a 2-D array of bytes of the
    pixmap's height and width, for a pixmap without alpha of its own (stored as PNG's alpha as it is).

    Raises:
        ValueError: the pixmap is not grey or RGB (convert it first; see :func:`pixmap_png`).
    """
    import numpy as np

    pymupdf = load_pymupdf()
    colorspace = pixmap.colorspace
    if colorspace is None or not (
        pymupdf.mupdf.fz_colorspace_is_gray(colorspace.this)
        or pymupdf.mupdf.fz_colorspace_is_rgb(colorspace.this)
    ):
        raise ValueError(f"PNG holds grey or RGB pixels, not {colorspace}")
    width, height, n = pixmap.width, pixmap.height, pixmap.n
    samples = np.frombuffer(pixmap.samples_mv, dtype=np.uint8).reshape(height, pixmap.stride)[:, : width * n]
    if alpha is not None:
        if pixmap.alpha or alpha.shape != (height, width):
            raise ValueError(
                f"a mask of {alpha.shape} for a {width} x {height} pixmap (with alpha: {pixmap.alpha})"
            )
        return _png(samples, width, height, depth=8, colour_type=_PNG_COLOUR_TYPES[n + 1], mask=alpha)
    if bilevel and n == 1 and _black_and_white(samples):
        return _png(np.packbits(samples, axis=1), width, height, depth=1, colour_type=0)
    return _png(samples, width, height, depth=8, colour_type=_PNG_COLOUR_TYPES[n], alpha=bool(pixmap.alpha))


def _black_and_white(samples: Any) -> bool:
    """Whether every grey sample is 0 or 255 (checked a band of rows at a time)."""
    for start in range(0, samples.shape[0], _PNG_BAND_ROWS):
        band = samples[start : start + _PNG_BAND_ROWS]
        if not ((band == 0) | (band == 255)).all():
            return False
    return True


def _png(
    samples: Any,
    width: int,
    height: int,
    *,
    depth: int,
    colour_type: int,
    alpha: bool = False,
    mask: Any = None,
) -> bytes:
    """PNG bytes of a picture's rows (a 2-D array of bytes, each row as PNG packs it: ``depth`` bits a
    sample), each row stored by the Up filter; ``alpha``: the last sample of each pixel is a
    premultiplied alpha; ``mask``: a 2-D array of one alpha byte a pixel to put after each pixel's colour
    samples (``colour_type`` then counts it)."""
    import numpy as np
    from zlib_ng import zlib_ng

    n = {0: 1, 4: 2, 2: 3, 6: 4}[colour_type]  # samples a pixel
    deflate = zlib_ng.compressobj(2)
    parts = []
    row_bytes = samples.shape[1] if mask is None else width * n
    above = np.zeros(row_bytes, dtype=np.uint8)
    for start in range(0, height, _PNG_BAND_ROWS):
        band = samples[start : start + _PNG_BAND_ROWS]
        if alpha:
            band = _unmultiplied(band, n)
        if mask is not None:
            pixels = np.empty((band.shape[0], width, n), dtype=np.uint8)
            pixels[..., :-1] = band.reshape(band.shape[0], width, n - 1)
            pixels[..., -1] = mask[start : start + _PNG_BAND_ROWS]
            band = pixels.reshape(band.shape[0], row_bytes)
        rows = np.empty((band.shape[0], row_bytes + 1), dtype=np.uint8)
        rows[:, 0] = 2  # the Up filter
        np.subtract(band[0], above, out=rows[0, 1:])
        np.subtract(band[1:], band[:-1], out=rows[1:, 1:])
        above = band[-1]
        parts.append(deflate.compress(rows.tobytes()))
    parts.append(deflate.flush())
    header = struct.pack(">IIBBBBB", width, height, depth, colour_type, 0, 0, 0)
    return b"".join(
        (
            b"\x89PNG\r\n\x1a\n",
            _png_chunk(b"IHDR", header),
            _png_chunk(b"IDAT", b"".join(parts)),
            _png_chunk(b"IEND", b""),
        )
    )


def _unmultiplied(band: Any, n: int) -> Any:
    """Rows of premultiplied colour and alpha with the colour divided by the alpha (rounded). Only the
    pixels partly covered are divided: an opaque pixel's colour is its own, and a clear one's is 0 either
    way (soft masks are mostly opaque or clear, with a soft edge)."""
    import numpy as np

    pixels = band.reshape(band.shape[0], -1, n)
    alpha = pixels[..., -1]
    partial = (alpha != 0) & (alpha != 255)
    if not partial.any():
        return band
    pixels = pixels.copy()
    covered = pixels[partial].astype(np.uint16)
    shares = covered[:, -1:]
    pixels[partial, :-1] = np.minimum((covered[:, :-1] * 255 + shares // 2) // shares, 255)
    return pixels.reshape(band.shape)


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(data, zlib.crc32(kind)))


def pixmap_png(pixmap: Any, *, bilevel: bool = False, alpha: Any = None) -> bytes | None:
    """A decoded picture as PNG bytes, in grey or RGB (with its alpha, if any): CMYK, Lab, separation
    and DeviceN colours, which PNG cannot hold, are converted to RGB.

    ``alpha``: the picture's mask, as :func:`encode_png` takes it.

    Returns:
        None for a pixmap without colours (a stencil mask: only the page shows what it paints).
    """
    pymupdf = load_pymupdf()

    if pixmap.colorspace is None:
        return None
    fz_colorspace = pixmap.colorspace.this
    if not (
        pymupdf.mupdf.fz_colorspace_is_gray(fz_colorspace)
        or pymupdf.mupdf.fz_colorspace_is_rgb(fz_colorspace)
    ):
        pixmap = pymupdf.Pixmap(pymupdf.csRGB, pixmap)  # CMYK, Lab, a separation, DeviceN
    return encode_png(pixmap, bilevel=bilevel, alpha=alpha)


def _draw_picture(page: Any, clip: Sequence[float], width: int, height: int) -> bytes:
    """The part of the page a picture covers, drawn no finer than the picture's own resolution or
    ``MAX_PICTURE_DPI``, and within ``MAX_PICTURE_SIDE`` and ``MAX_PICTURE_PIXELS`` (MuPDF decodes a
    picture drawn smaller subsampled)."""
    pymupdf = load_pymupdf()

    # (The clip is in the page's own coordinates; the page is drawn as shown.)
    area = (pymupdf.Rect(clip) * page_turn(page)[0]) & page.rect
    if area.is_empty:
        raise ValueError("its place on the page is empty")
    own = min(max(width / area.width, height / area.height), MAX_PICTURE_DPI / 72)
    zoom = fit_scale(
        area.width,
        area.height,
        own,
        max_side=MAX_PICTURE_SIDE,
        max_pixels=MAX_PICTURE_PIXELS,
        rounding=2.0,
    )
    return encode_png(page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), clip=area, alpha=False))


def fits_whole(width: int, height: int) -> bool:
    """Whether a picture of ``width`` x ``height`` pixels is within ``MAX_PICTURE_SIDE`` and
    ``MAX_PICTURE_PIXELS`` (read whole; a larger one is drawn reduced from its place on the page)."""
    return max(width, height) <= MAX_PICTURE_SIDE and width * height <= MAX_PICTURE_PIXELS


def picture_scale(width: int, height: int, clip: Sequence[float]) -> float:
    """The scale a ``width`` x ``height`` picture placed in ``clip`` is kept at: 1, or less to bring it
    down to ``MAX_PICTURE_DPI`` of its place (pixels counted over the area, so a picture turned on the
    page is judged the same)."""
    area = max(clip[2] - clip[0], 0.0) * max(clip[3] - clip[1], 0.0)
    if area <= 0 or width <= 0 or height <= 0:
        return 1.0
    return min(1.0, math.sqrt(area * (MAX_PICTURE_DPI / 72) ** 2 / (width * height)))


@dataclass(frozen=True)
class DrawnPicture:
    """A picture a page draws: its box on the page (points, in the page's unturned space, as text boxes
    are), its size in pixels as declared (nothing is decoded), and its object number when it was asked
    for and found (0 otherwise: not asked, an inline picture, or not found)."""

    bbox: tuple[float, float, float, float]
    width: int
    height: int
    xref: int = 0


@functools.cache
def _picture_device_class() -> type:
    """A MuPDF device that notes where pictures are drawn and does nothing else (made once, on first use).
    It holds a reference to each picture it sees, so that no other picture can take its address while
    the pictures are told apart (see :func:`drawn_pictures`)."""
    mupdf = load_pymupdf().mupdf
    unit = mupdf.FzRect(0, 0, 1, 1)

    class PictureDevice(mupdf.FzDevice2):  # type: ignore[name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.use_virtual_fill_image()
            self.use_virtual_fill_image_mask()
            self.found: list[tuple[Any, tuple[float, float, float, float]]] = []

        def _note(self, image: Any, ctm: Any) -> None:
            box = mupdf.fz_transform_rect(unit, mupdf.FzMatrix(ctm))
            held = mupdf.FzImage(mupdf.ll_fz_keep_image(image))  # our own reference, dropped with it
            self.found.append((held, (box.x0, box.y0, box.x1, box.y1)))

        def fill_image(self, ctx: Any, image: Any, ctm: Any, alpha: Any, color_params: Any) -> None:
            self._note(image, ctm)

        def fill_image_mask(
            self, ctx: Any, image: Any, ctm: Any, colorspace: Any, color: Any, alpha: Any, color_params: Any
        ) -> None:
            self._note(image, ctm)

    return PictureDevice


def drawn_pictures(page: Any, identify: Mapping[int, tuple[int, int]] | None = None) -> list[DrawnPicture]:
    """Every picture a PyMuPDF page draws (its content, forms and annotations; inline pictures and
    stencil masks too), in drawing order (call while holding ``PYMUPDF_LOCK``).

    One pass of MuPDF's interpreter with a device that only notes pictures: no text is laid out, nothing
    is decoded and no shading is drawn. ``page.get_image_info()`` answers the same for real pictures but
    builds a text page, and draws every shading (gradients) into a picture of its own: on a page of
    gradients that was most of the time a document took; and it finds a picture's object only by
    decoding and hashing every picture of the page.

    Args:
        page: A PyMuPDF page of a PDF.
        identify: Pictures to find among those drawn: object number -> pixel size as declared. Those of
            a size some drawn picture has are looked up: MuPDF keeps each picture it has loaded in its
            store under its object, so the object loaded again is the very picture the page drew (held
            here meanwhile, so that the store keeps it): found by identity, nothing decoded. A drawn
            picture that is none of them (an inline picture, one in an annotation's appearance) keeps
            ``xref`` 0.
    """
    mupdf = load_pymupdf().mupdf
    device = _picture_device_class()()
    # MuPDF draws a turned page turned; PyMuPDF's text (and so every box of the index) is in the page's
    # unturned space.
    unturn = mupdf.FzMatrix(*page_turn(page)[1])
    try:
        mupdf.fz_run_page(page.this, device, unturn, mupdf.FzCookie())
    finally:
        mupdf.fz_close_device(device)
    objects: dict[int, int] = {}  # a picture's address -> its object number
    sizes = {(int(image.w()), int(image.h())) for image, _ in device.found}
    wanted = [xref for xref, size in (identify or {}).items() if size in sizes]
    if wanted:
        document = mupdf.pdf_document_from_fz_document(page.parent.this)
        loaded = []  # held too, so that no two of them share an address
        for xref in wanted:
            try:
                image = mupdf.pdf_load_image(document, mupdf.pdf_new_indirect(document, xref, 0))
            except mupdf.FzErrorBase:  # a broken picture object: left unfound (and unread later)
                continue
            loaded.append(image)
            objects.setdefault(image.m_internal_value(), xref)
    return [
        DrawnPicture(box, int(image.w()), int(image.h()), objects.get(image.m_internal_value(), 0))
        for image, box in device.found
    ]


def _mask_plane(image: Any, pixmap: Any, whole: Any) -> Any:
    """A picture's soft mask (``/SMask``) or stencil mask (``/Mask``) as a 2-D array of alpha bytes of the
    decoded ``pixmap``'s size, or None: no such mask, a pixmap without colours, a mask that hides nothing,
    or one that cannot be read (the picture is then kept as decoded). MuPDF decodes a picture's colours
    and its mask apart and draws the one through the other; the mask is decoded at the colours' size
    (reduced with them)."""
    import numpy as np

    mupdf = load_pymupdf().mupdf

    mask = image.mask()
    if mask.m_internal is None or pixmap.colorspace is None:
        return None
    width, height = pixmap.width, pixmap.height
    try:
        plane, _, _ = mupdf.fz_get_pixmap_mask_from_image(
            mask, whole, mupdf.FzMatrix(width, 0, 0, height, 0, 0), 1
        )
        if plane.n() != 1:
            return None
        if (plane.w(), plane.h()) != (width, height):
            plane = mupdf.fz_scale_pixmap(plane, 0, 0, width, height, whole)
        samples = mupdf.fz_pixmap_samples_memoryview(plane)
    except mupdf.FzErrorBase:
        return None
    values = np.array(samples, dtype=np.uint8).reshape(plane.h(), plane.stride())[:, :width]
    return None if values.min() == 255 else values


def _through_mask(pixmap: Any, mask: Any) -> tuple[Any, Any]:
    """A decoded picture with an alpha of its own (a JPEG 2000's, or the opaque one MuPDF gives a soft mask
    with ``/Matte``) and a mask: its colours without that alpha, undone from them, and the two alphas in
    one (the page draws the picture through both)."""
    import numpy as np

    pymupdf = load_pymupdf()
    width, height, n = pixmap.width, pixmap.height, pixmap.n
    samples = np.frombuffer(pixmap.samples_mv, dtype=np.uint8).reshape(height, pixmap.stride)[:, : width * n]
    straight = _unmultiplied(samples, n).reshape(height, width, n)
    own = straight[..., -1].astype(np.uint16)
    alpha = ((own * mask + 127) // 255).astype(np.uint8)
    colours = np.ascontiguousarray(straight[..., :-1])
    return pymupdf.Pixmap(pixmap.colorspace, width, height, colours.tobytes(), 0), alpha


def drawn_from_page(document: Any, xref: int, *, width: int, height: int) -> bool:
    """Whether :func:`picture_bytes` draws a picture from its place on the page rather than decoding it:
    a picture beyond ``MAX_PICTURE_SIDE`` or ``MAX_PICTURE_PIXELS``, or a stencil mask (``/ImageMask``,
    which holds no colours: the page paints it). What it gives then is that page's, not the picture's."""
    return not fits_whole(width, height) or document.xref_get_key(xref, "ImageMask")[1] == "true"


def _bilevel(document: Any, xref: int) -> bool:
    """Whether a picture object holds one bit per pixel (a black-and-white scan or line art)."""
    kind, value = document.xref_get_key(xref, "BitsPerComponent")
    return (kind == "int" and value == "1") or document.xref_get_key(xref, "ImageMask")[1] == "true"


def picture_bytes(
    document: Any, xref: int, *, width: int, height: int, page: Any, clip: Sequence[float], name: str
) -> bytes | None:
    """A picture embedded in a PDF as the bytes an index keeps (call while holding ``PYMUPDF_LOCK``): a
    plain JPEG within the limits and no finer than ``MAX_JPEG_DPI`` of its place as the PDF embeds it
    (:func:`embedded_jpeg`), anything else as :func:`picture_png` makes it. The arguments and the
    warnings are :func:`picture_png`'s."""
    if fits_whole(width, height) and picture_scale(width, height, clip) >= JPEG_SCALE:
        jpeg = embedded_jpeg(document, xref, width=width, height=height)
        if jpeg is not None:
            return jpeg
    return picture_png(document, xref, width=width, height=height, page=page, clip=clip, name=name)


def picture_png(
    document: Any, xref: int, *, width: int, height: int, page: Any, clip: Sequence[float], name: str
) -> bytes | None:
    """A picture embedded in a PDF as PNG bytes, bounded (call while holding ``PYMUPDF_LOCK``).

    A picture within ``MAX_PICTURE_SIDE`` and ``MAX_PICTURE_PIXELS`` (its size is read from the PDF, not
    decoded) is extracted, reduced to ``MAX_PICTURE_DPI`` of its place on the page when it is finer, its
    colours made grey or RGB by :func:`pixmap_png`. A larger one, or a stencil mask, is drawn from its
    place on the page instead (see ``_draw_picture``).

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
    fits = fits_whole(width, height)
    try:
        png = None
        if fits:
            # Black-and-white pictures stay whole: reduced, their edges turn grey, which costs more to
            # encode than the pixels saved (they compress tenfold as they are).
            bilevel = _bilevel(document, xref)
            pixmap, alpha = _decoded(document, xref, 1.0 if bilevel else picture_scale(width, height, clip))
            png = pixmap_png(pixmap, bilevel=bilevel and alpha is None, alpha=alpha)
        return png if png is not None else _draw_picture(page, clip, width, height)
    except mupdf_errors() as exc:
        warnings.warn(
            f"{name}: the picture on page {page.number + 1} ({width} x {height} pixels, object {xref}) "
            f"cannot be read ({exc}); it is left out of the index, and the page's text is kept.",
            PageIndexWarning,
            stacklevel=4,  # past picture_bytes, to the strategy
        )
        return None


def _decoded(document: Any, xref: int, scale: float) -> tuple[Any, Any]:
    """A picture object decoded as a PyMuPDF pixmap, reduced to ``scale`` of its size when that is less
    than 1, with its mask as alpha bytes of the pixmap's size (or None: see :func:`_mask_plane`). MuPDF is
    asked for the reduced size while it decodes: it reduces by the largest power of two that keeps the
    picture at least that size (up to 64 times) — a JPEG comes out of libjpeg so reduced
    without being decoded whole (four to five times faster on the eval sets' reduced JPEGs), other
    pictures are subsampled right after decoding —, and what is left of the reduction is a scaling of
    the smaller pixmap (not done for a pixmap without colours, which is drawn from the page instead)."""
    pymupdf = load_pymupdf()
    mupdf = pymupdf.mupdf

    pdf = mupdf.pdf_document_from_fz_document(document.this)
    image = mupdf.pdf_load_image(pdf, mupdf.pdf_new_indirect(pdf, xref, 0))
    width, height = int(image.w()), int(image.h())
    if scale < 1:
        width, height = max(1, round(width * scale)), max(1, round(height * scale))
    whole = mupdf.FzIrect(
        pymupdf.FZ_MIN_INF_RECT, pymupdf.FZ_MIN_INF_RECT, pymupdf.FZ_MAX_INF_RECT, pymupdf.FZ_MAX_INF_RECT
    )
    decoded, _, _ = mupdf.fz_get_pixmap_from_image(image, whole, mupdf.FzMatrix(width, 0, 0, height, 0, 0))
    pixmap = pymupdf.Pixmap("raw", decoded)  # PyMuPDF's own way to take MuPDF's pixmap as it is
    if scale < 1 and pixmap.colorspace is not None and (pixmap.width, pixmap.height) != (width, height):
        pixmap = pymupdf.Pixmap(pixmap, width, height, None)
    alpha = _mask_plane(image, pixmap, whole)
    if alpha is not None and pixmap.alpha:
        return _through_mask(pixmap, alpha)
    return pixmap, alpha


# -- JPEG pictures kept as they are -----------------------------------------------------------------------

_COLOR_TRANSFORM = re.compile(r"/ColorTransform\s+(\d+)")
_REFERENCE = re.compile(r"\b\d+\s+\d+\s+R\b")
_ICC_STREAM = re.compile(r"^\[\s*/ICCBased\s+([0-9]+)\s+0\s+R\s*\]$")
#: JPEG frames a browser and a model provider decode: baseline, extended and progressive Huffman coding
#: (arithmetic coding, lossless and hierarchical JPEG are not).
_PLAIN_FRAMES = frozenset({0xC0, 0xC1, 0xC2})


def embedded_jpeg(document: Any, xref: int, *, width: int, height: int) -> bytes | None:
    """The bytes of a JPEG picture as the PDF embeds them, when they show exactly what the page shows
    (call while holding ``PYMUPDF_LOCK``): nothing is decoded, and the file is the photo's own size.

    Kept only when the picture is one ``/DCTDecode`` stream of 8-bit grey or RGB (device or ICC based) with
    no mask or soft mask, no decode array but the identity, no colour transform but the default (the
    other parameters a PDF writer may leave, ``/QFactor``, ``/HSamples``..., are its encoder's and change
    nothing), and the JPEG itself is a plain frame (baseline, extended or progressive) of ``width`` x
    ``height`` with one or three components and no EXIF turn (a browser would turn it; a PDF does not),
    ending with its end-of-image marker (a cut JPEG is decoded instead).
    Anything else (CMYK, masks, an inverted decode...) is for :func:`picture_png`.

    Returns:
        The JPEG bytes, or None.
    """
    pymupdf = load_pymupdf()

    def key(name: str) -> tuple[str, str]:
        return tuple(document.xref_get_key(xref, name))

    if key("Filter") not in (("name", "/DCTDecode"), ("array", "[/DCTDecode]")):
        return None
    if key("BitsPerComponent") != ("int", "8") or key("ImageMask")[1] == "true":
        return None
    if key("SMask")[0] != "null" or key("Mask")[0] != "null":
        return None
    components = _colour_components(document, key("ColorSpace"))
    if components is None:
        return None
    decode = key("Decode")
    if decode[0] != "null" and decode[1].strip("[] ").split() != ["0", "1"] * components:
        return None  # a decode array that changes the colours (an inverted one)
    kind, parameters = key("DecodeParms")
    if kind == "xref":
        parameters = document.xref_object(int(parameters.split()[0]), compressed=True)
    if kind != "null" and _REFERENCE.search(parameters):
        return None  # parameters held in another object (an array's element): not read, not assumed
    transform = _COLOR_TRANSFORM.search(parameters) if kind != "null" else None
    if components == 3 and transform is not None and transform.group(1) != "1":
        return None  # RGB stored as it is, where a JPEG reader assumes YCbCr
    try:
        data = document.xref_stream_raw(xref)
    except (RuntimeError, ValueError, pymupdf.mupdf.FzErrorBase):
        return None
    frame = _jpeg_frame(data)
    if frame != (width, height, components):
        return None
    if not bytes(data[-4096:]).rstrip(b"\r\n\t\x00 \xff").endswith(b"\xff\xd9"):
        # No end-of-image marker: a cut file, which MuPDF decodes as far as it goes but many readers
        # refuse (Pillow: "image file is truncated"). Decoded, it is kept as a PNG of what the page shows.
        return None
    return bytes(data)


def _colour_components(document: Any, space: tuple[str, str]) -> int | None:
    """1 or 3 for a grey or RGB colour space (device, or ICC based with that many components), else None."""
    kind, value = space
    if kind == "xref":  # an indirect colour space: read its object
        kind, value = "array", " ".join(document.xref_object(int(value.split()[0]), compressed=True).split())
    if kind == "name":
        return {"/DeviceGray": 1, "/DeviceRGB": 3}.get(value)
    match = _ICC_STREAM.match(value) if kind == "array" else None
    if match is None:
        return None
    kind, count = document.xref_get_key(int(match.group(1)), "N")
    return int(count) if kind == "int" and count in ("1", "3") else None


def _jpeg_frame(data: bytes) -> tuple[int, int, int] | None:
    """``(width, height, components)`` of a plain 8-bit JPEG frame, read up to its scan, or None for
    anything else (another frame type or precision, an EXIF orientation that turns the picture, wherever
    it stands before the scan, a broken stream)."""
    if data[:2] != b"\xff\xd8":
        return None
    frame: tuple[int, int, int] | None = None
    position = 2
    while position + 4 <= len(data):
        if data[position] != 0xFF:
            return None
        marker = data[position + 1]
        if marker == 0xFF:  # fill byte
            position += 1
            continue
        if marker == 0xDA:  # the scan: every marker a decoder reads has been seen
            return frame
        if marker == 0xD9:
            return None
        length = int.from_bytes(data[position + 2 : position + 4], "big")
        segment = data[position + 4 : position + 2 + length]
        if (
            marker == 0xE1
            and segment[:6] == b"Exif\x00\x00"
            and _exif_orientation(segment[6:]) not in (None, 1)
        ):
            return None  # turned by its EXIF orientation, which browsers follow and PDF viewers do not
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            if frame is not None or marker not in _PLAIN_FRAMES or len(segment) < 6 or segment[0] != 8:
                return None  # a second frame, or arithmetic, lossless, 12-bit... JPEG
            frame = (int.from_bytes(segment[3:5], "big"), int.from_bytes(segment[1:3], "big"), segment[5])
        position += 2 + length
    return None


def _exif_orientation(tiff: bytes) -> int | None:
    """The Orientation tag (0x0112) of an EXIF block's first directory, or None when there is none."""
    order = {b"II": "little", b"MM": "big"}.get(tiff[:2])
    if order is None or len(tiff) < 8:
        return None

    def number(at: int, size: int) -> int:
        return int.from_bytes(tiff[at : at + size], order)  # type: ignore[arg-type]

    directory = number(4, 4)
    if directory + 2 > len(tiff):
        return None
    for entry in range(number(directory, 2)):
        at = directory + 2 + 12 * entry
        if at + 12 > len(tiff):
            return None
        if number(at, 2) == 0x0112:
            return number(at + 8, 2)
    return None
