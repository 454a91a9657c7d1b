"""Page images as the model sees them: PDF pages rendered on demand, and image files decoded within bounds."""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..pdf.images import DEFAULT_IMAGE_LIMITS, MAX_RENDER_SIDE, ImageLimits

__all__ = [
    "IMAGE_FORMATS",
    "MAX_IMAGE_DIMENSION",
    "MAX_IMAGE_PIXELS",
    "MAX_IMAGE_SIDE",
    "RenderedPage",
    "decode_image",
    "image_page",
    "pdf_renderer",
]


@dataclass
class RenderedPage:
    """A page as the model sees it: PNG bytes, its pixel size, the page size in points, and how many
    degrees clockwise the image was turned (0, 90, 180 or 270) so that its text reads left to right."""

    png: bytes
    width_px: int
    height_px: int
    width_pt: float
    height_pt: float
    rotation: int = 0


def snap_to_limits(image: Any, limits: ImageLimits) -> Any:
    """A PIL image resized to the size ``limits`` sends it at (``ImageLimits.snapped``: sides a multiple of
    the model's patch grid, for models that answer pixel boxes in their own resized image); unchanged
    when it already is that size. Boxes map back through the size the model is told of, so they stay
    right."""
    size = limits.snapped(image.width, image.height)
    if size == (image.width, image.height):
        return image
    from PIL import Image

    return image.resize(size, Image.Resampling.LANCZOS)


# -- PDF pages ----------------------------------------------------------------------------------------

# A line's writing direction (PyMuPDF's "dir", rounded) -> degrees clockwise that make it read left to right.
_TURN = {(0, -1): 90, (-1, 0): 180, (0, 1): 270}


def _text_rotation(page: Any) -> int:
    """How far to turn the page image so that most of its text reads left to right (0 without text)."""
    weights: dict[int, int] = {}
    for block in page.get_text("dict", flags=0)["blocks"]:
        for line in block.get("lines", []):
            direction = (round(line["dir"][0]), round(line["dir"][1]))
            chars = sum(len(span["text"].strip()) for span in line["spans"])
            turn = _TURN.get(direction, 0)
            weights[turn] = weights.get(turn, 0) + chars
    return max(weights, key=lambda turn: weights[turn]) if weights else 0


def pdf_renderer(
    document: Any, dpi: int, limits: ImageLimits = DEFAULT_IMAGE_LIMITS
) -> Callable[[int], RenderedPage]:
    """Render pages of an open PyMuPDF document on demand (PyMuPDF is used under its lock), at ``dpi`` or
    smaller: within ``limits`` (the model's, see ``ModelClient.image_limits``), and never more than
    ``MAX_RENDER_SIDE`` pixels a side and ``MAX_RENDER_PIXELS`` in all."""
    from ..pdf.images import page_matrix
    from ..pdf.opening import PYMUPDF_LOCK, pdf_errors

    def render(index: int) -> RenderedPage:
        from PIL import Image

        with PYMUPDF_LOCK, pdf_errors(f"page {index + 1} of the PDF"):
            page = document[index]
            # get_pixmap honours the page's /Rotate; text set sideways is turned upright below. A page too
            # large for the dpi is drawn smaller: boxes map back through the image's size either way.
            pixmap = page.get_pixmap(matrix=page_matrix(page, dpi, limits), alpha=False)
            size = (pixmap.width, pixmap.height)
            mode = "L" if pixmap.n == 1 else "RGB"
            samples = bytes(pixmap.samples)
            width_pt, height_pt = float(page.rect.width), float(page.rect.height)
            # The text layer's directions are in the unrotated page; the pixmap already applies /Rotate.
            rotation = (_text_rotation(page) - page.rotation) % 360
        # PNG encoding is the slow part: done outside PyMuPDF's lock, so workers encode side by side.
        image = Image.frombytes(mode, size, samples)
        if rotation:
            image = image.rotate(-rotation, expand=True)  # PIL turns counter-clockwise
        image = snap_to_limits(image, limits)
        out = io.BytesIO()
        image.save(out, format="PNG", compress_level=1)
        return RenderedPage(out.getvalue(), image.width, image.height, width_pt, height_pt, rotation)

    return render


# -- image files --------------------------------------------------------------------------------------

MAX_IMAGE_PIXELS = 60_000_000  # larger images are refused: a decompression bomb or a scan at absurd DPI
MAX_IMAGE_DIMENSION = 20_000  # a longer side is refused: a 1 x 59,000,000 strip is no page to read
MAX_IMAGE_SIDE = MAX_RENDER_SIDE  # images go to the model at most this long a side, as PDF pages do
# The formats image sources may have (by content, whatever the name says): no other decoder is reached.
IMAGE_FORMATS = ("PNG", "JPEG", "GIF", "BMP", "WEBP", "TIFF")  # phone pictures (MPO) open as JPEG
_STRIP_PIXELS = 1_000_000  # pixels converted at a time while a large image is reduced
# EXIF orientation -> the turn that shows the photo as a viewer does.
_EXIF_TURNS = {2: "FLIP_LEFT_RIGHT", 3: "ROTATE_180", 4: "FLIP_TOP_BOTTOM", 5: "TRANSPOSE"}
_EXIF_TURNS.update({6: "ROTATE_270", 7: "TRANSVERSE", 8: "ROTATE_90"})


def _has_alpha(image: Any) -> bool:
    return image.mode in ("RGBA", "LA", "PA", "RGBa", "La") or "transparency" in image.info


def _reduce(image: Any, size: tuple[int, int]) -> Any:
    """``image`` reduced to ``size`` in RGB, transparency laid on white, with no second full-size copy.

    The decoded image is first shrunk by a whole factor (box averages), a strip at a time, each strip
    converted to RGB(A) on its own; the small result is then resampled to ``size``. Converting or resizing
    the whole image at once would hold it twice (a 1 x 59,000,000 strip took 3 GB that way).
    """
    from PIL import Image

    mode = "RGBA" if _has_alpha(image) else "RGB"
    width, height = image.size
    factor = max(1, min(width // size[0], height // size[1]))
    rows = factor * max(1, _STRIP_PIXELS // (width * factor))
    reduced = Image.new(mode, (-(-width // factor), -(-height // factor)))
    for top in range(0, height, rows):
        strip = image.crop((0, top, width, min(height, top + rows))).convert(mode)
        reduced.paste(strip.reduce(factor) if factor > 1 else strip, (0, top // factor))
        del strip
    if reduced.size != size:
        reduced = reduced.resize(size)
    if mode == "RGBA":
        reduced = Image.alpha_composite(Image.new("RGBA", size, "white"), reduced)
    return reduced.convert("RGB")


def decode_image(
    data: bytes, name: str, limits: ImageLimits = DEFAULT_IMAGE_LIMITS
) -> tuple[Any, tuple[int, int]]:
    """An image file decoded within bounds, for the model: RGB, turned by its EXIF orientation, and no
    larger than ``limits`` (the model's; never more than ``MAX_IMAGE_SIDE`` pixels a side and
    ``MAX_RENDER_PIXELS`` in all).

    The header is checked before anything is decoded. A JPEG is decoded at 1/2, 1/4 or 1/8 of its size
    when that still covers the result; other images are decoded whole (at most ``MAX_IMAGE_PIXELS``) and
    reduced a strip at a time.

    Args:
        data: The file's bytes.
        name: How messages name the image.
        limits: The largest image worth sending to the model.

    Returns:
        The image, and the original's size (width, height) as it is viewed, in pixels.

    Raises:
        DocumentLoadError: not an image of a supported format, unreadable, over ``MAX_IMAGE_PIXELS``,
            with a side over ``MAX_IMAGE_DIMENSION``, or a decompression bomb.
    """
    import warnings

    from PIL import Image, UnidentifiedImageError

    from ..errors import DocumentLoadError

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data), formats=IMAGE_FORMATS) as opened:
                width, height = opened.size  # from the header: nothing is decoded yet
                if width * height > MAX_IMAGE_PIXELS:
                    raise DocumentLoadError(
                        f"{name} is {width} x {height} pixels, over the limit of {MAX_IMAGE_PIXELS:,}; "
                        "scale it down first."
                    )
                if max(width, height) > MAX_IMAGE_DIMENSION:
                    raise DocumentLoadError(
                        f"{name} is {width} x {height} pixels, a side over the limit of "
                        f"{MAX_IMAGE_DIMENSION:,}; crop it into pages or scale it down first."
                    )
                opened.seek(0)
                scale = limits.scale(width, height, 1.0)
                size = (max(1, int(width * scale)), max(1, int(height * scale)))
                opened.draft("RGB", size)  # JPEG only: decode reduced, never below size
                # Phone photos store their orientation in EXIF: turn them as a viewer would.
                turn = _EXIF_TURNS.get(opened.getexif().get(0x0112, 1))
                image = _reduce(opened, size)
    except DocumentLoadError:
        raise
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise DocumentLoadError(f"{name} is refused as a decompression bomb: {exc}") from exc
    except (UnidentifiedImageError, OSError, ValueError, EOFError) as exc:
        raise DocumentLoadError(f"{name} is not a readable image: {exc}") from exc
    if turn is not None:
        image = image.transpose(getattr(Image.Transpose, turn))
        if turn in ("TRANSPOSE", "ROTATE_270", "TRANSVERSE", "ROTATE_90"):
            width, height = height, width
    return image, (width, height)


def image_page(data: bytes, name: str, limits: ImageLimits = DEFAULT_IMAGE_LIMITS) -> RenderedPage:
    """An image source as one page: decoded safely (:func:`decode_image`), first frame, RGB PNG.

    Raises:
        DocumentLoadError: not an image, unreadable, or over the limits.
    """
    image, (width, height) = decode_image(data, name, limits)
    image = snap_to_limits(image, limits)
    out = io.BytesIO()
    image.save(out, format="PNG")
    # For an image, one point is one pixel of the original.
    return RenderedPage(out.getvalue(), image.width, image.height, float(width), float(height))
