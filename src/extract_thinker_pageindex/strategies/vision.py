"""The vision strategy: each page rendered to an image and read by a vision model into typed nodes.

Pages run in parallel (a bounded pool), are rendered only when a worker takes them (never all in memory),
and each has a time budget over its retries. Image and table regions are cropped from the page image by
the boxes the model gives, scaled from the model's coordinates (pixels, or 0-1000 for some families).
"""

from __future__ import annotations

import io
import re
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from ..errors import LLMExtractionError
from ..llm import ModelClient, image_part
from ..model import (
    AnswerImageNode,
    AnswerTableNode,
    HeadingNode,
    ImageNode,
    Node,
    Page,
    PageAnswer,
    SectionNode,
    TableNode,
    TocEntryNode,
)
from ..pdf import MAX_RENDER_PIXELS, MAX_RENDER_SIDE, fit_scale

__all__ = ["PAGE_OBJECTIVE", "PageFailure", "RenderedPage", "VisionResult", "extract_pages", "scale_bbox"]

PAGE_OBJECTIVE = """You turn one page of a document into its typed structure, for a page index that people and
programs navigate, cite and extract from. You see the page as an image of {width} x {height} pixels.

Answer with JSON {{"nodes": [...]}}: every piece of the page, in reading order (columns left to right),
each with a page-local "id" (n1, n2, ...) and "parent_id" (the id of the section it belongs to, or null).

Node types:
- "section": opens where a heading starts; "description": 2-3 sentences on what the section covers.
  Its heading is a "heading" node whose parent_id is the section; a subsection's parent_id is its section.
- "heading": "level" h1..h6 by visual rank, "content": the heading text exactly as printed.
- "paragraph": "level" paragraph | citation | code | aside | abstract | footnote; "content": the exact
  text, never a summary. "continuation": true when it continues from the previous page.
- "list_item": "level" l1..l6 by nesting, "content": the item's exact text without its bullet.
- "table": "kind" data | form | layout | other; "content": the whole table as a Markdown table, every row
  and cell; "caption", "description" (what it shows), "bbox"; "continuation" when it continues a table
  of the previous page.
- "image": "kind" photo | diagram | chart | logo | icon | illustration | screenshot | signature | map |
  other; "caption"; "description" (what it shows, for a reader who cannot see it); "bbox".
- "header" / "footer": running page headers and footers (page numbers included); "metadata": document
  numbers, dates, classification lines.
- "toc_entry": only on a printed table of contents page: "title", "printed_page" (as printed), "level"
  l1..l6 by indentation.

"bbox" is [xmin, ymin, xmax, ymax] in {scale}. Copy text exactly; do not invent content."""

_SAFE = re.compile(r"[^A-Za-z0-9._-]+")
PAD = 0.01  # share of the page added around a cropped region


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


def _unrotate(fx: float, fy: float, rotation: int) -> tuple[float, float]:
    """A point of the turned image (as fractions) back on the page as it is stored."""
    if rotation == 90:
        return fy, 1 - fx
    if rotation == 180:
        return 1 - fx, 1 - fy
    if rotation == 270:
        return 1 - fy, fx
    return fx, fy


@dataclass
class PageFailure:
    """A page the model could not read, and why."""

    index: int
    reason: str


@dataclass
class VisionResult:
    """Pages read by the model (in page order), TOC entries read from printed contents pages, failures."""

    pages: list[Page]
    toc_entries: list[tuple[int, TocEntryNode]] = field(default_factory=list)
    failures: list[PageFailure] = field(default_factory=list)


def scale_bbox(
    bbox: Sequence[float] | None, page: RenderedPage, scale: str
) -> tuple[tuple[int, int, int, int], tuple[int, int, int, int]] | None:
    """A model's box as (points on the page, pixels on the image), padded and clamped; None when empty.

    Args:
        bbox: ``[xmin, ymin, xmax, ymax]`` as the model answered it.
        page: The rendered page the model saw.
        scale: ``"pixels"`` (of the image) or ``"normalized"`` (0-1000 of the page).
    """
    if bbox is None or len(bbox) != 4:
        return None
    x0, y0, x1, y1 = (float(value) for value in bbox)
    x0, x1 = min(x0, x1), max(x0, x1)
    y0, y1 = min(y0, y1), max(y0, y1)
    if scale == "normalized":
        fx0, fy0, fx1, fy1 = x0 / 1000, y0 / 1000, x1 / 1000, y1 / 1000
    else:
        fx0, fy0, fx1, fy1 = x0 / page.width_px, y0 / page.height_px, x1 / page.width_px, y1 / page.height_px
    fx0, fy0, fx1, fy1 = (min(1.0, max(0.0, value)) for value in (fx0, fy0, fx1, fy1))
    if fx1 <= fx0 or fy1 <= fy0:
        return None  # empty, or entirely off the page once clamped
    fx0, fy0 = max(0.0, fx0 - PAD), max(0.0, fy0 - PAD)
    fx1, fy1 = min(1.0, fx1 + PAD), min(1.0, fy1 + PAD)
    # Points are on the page as stored; pixels are on the (possibly turned) image the model saw.
    corners = [_unrotate(fx, fy, page.rotation) for fx, fy in ((fx0, fy0), (fx1, fy1))]
    px0, px1 = sorted(corner[0] for corner in corners)
    py0, py1 = sorted(corner[1] for corner in corners)
    points = (
        int(px0 * page.width_pt),
        int(py0 * page.height_pt),
        max(int(px0 * page.width_pt) + 1, round(px1 * page.width_pt)),
        max(int(py0 * page.height_pt) + 1, round(py1 * page.height_pt)),
    )
    pixels = (
        int(fx0 * page.width_px),
        int(fy0 * page.height_px),
        max(int(fx0 * page.width_px) + 1, round(fx1 * page.width_px)),
        max(int(fy0 * page.height_px) + 1, round(fy1 * page.height_px)),
    )
    return points, pixels


def _crop(png: bytes, box: tuple[int, int, int, int]) -> bytes:
    from PIL import Image

    with Image.open(io.BytesIO(png)) as image:
        out = io.BytesIO()
        image.crop(box).save(out, format="PNG")
        return out.getvalue()


def resolve_answer_ids(answer: PageAnswer, prefix: str) -> tuple[list[str], list[str | None], int]:
    """Document ids for a model's nodes, by position, and their parents resolved.

    Ids become ``<prefix>-<model id>`` (file-name safe; a repeated or colliding id gets a suffix, so every
    node keeps its own). A parent must name a section of the same answer (the first one with that id);
    self-parents and cycles are broken. Returns the ids, the parents (document ids or None) and how many
    references were dropped.
    """
    ids: list[str] = []
    used: set[str] = set()
    for number, node in enumerate(answer.nodes, start=1):
        base = _SAFE.sub("-", node.id).strip("-._")[:48] or str(number)
        candidate, suffix = f"{prefix}-{base}", 2
        while candidate in used:
            candidate, suffix = f"{prefix}-{base}-{suffix}", suffix + 1
        used.add(candidate)
        ids.append(candidate)
    first_section: dict[str, int] = {}
    for position, node in enumerate(answer.nodes):
        if isinstance(node, SectionNode):
            first_section.setdefault(node.id, position)
    parents: list[int | None] = []
    dropped = 0
    for position, node in enumerate(answer.nodes):
        target = first_section.get(node.parent_id) if node.parent_id is not None else None
        if node.parent_id is not None and (target is None or target == position):
            dropped += 1  # names no section of the page, or the node itself
            target = None
        parents.append(target)
    # A section whose chain of parents comes back to itself keeps no parent.
    for start in range(len(parents)):
        seen = {start}
        current = parents[start]
        while current is not None:
            if current in seen:
                parents[start] = None
                dropped += 1
                break
            seen.add(current)
            current = parents[current]
    return ids, [ids[target] if target is not None else None for target in parents], dropped


def answer_to_nodes(
    answer: PageAnswer, page_index: int, rendered: RenderedPage, scale: str
) -> tuple[list[Node], list[TocEntryNode], int]:
    """One page's answer as document nodes: global ids, resolved parents, scaled boxes, cropped images.

    Returns:
        The nodes, the TOC entries read on the page, and how many references had to be dropped.
    """
    ids, parents, dropped = resolve_answer_ids(answer, f"p{page_index}")
    nodes: list[Node] = []
    entries: list[TocEntryNode] = []
    for node, node_id, parent in zip(answer.nodes, ids, parents, strict=True):
        update: dict[str, Any] = {"id": node_id, "parent_id": parent}
        if isinstance(node, TocEntryNode):
            entries.append(node.model_copy(update=update))
            continue
        if hasattr(node, "group_id"):
            update["group_id"] = None  # groups are the continuation step's to assign, not the model's
        if isinstance(node, (AnswerImageNode, AnswerTableNode)):
            target = ImageNode if isinstance(node, AnswerImageNode) else TableNode
            data = node.model_dump(exclude={"bbox", "image_data", "image_path"})
            data.update(update)
            scaled = scale_bbox(node.bbox, rendered, scale)
            if scaled is not None:
                data["bbox"], pixels = scaled
                data["image_data"] = _crop(rendered.png, pixels)
            nodes.append(target(**data))
            continue
        nodes.append(node.model_copy(update=update))
    return nodes, entries, dropped


def nest_across_pages(pages: list[Page]) -> None:
    """Attach each page's top-level content to the section still open from earlier pages.

    A section continues over page breaks until a heading of the same or a higher level: top-level
    sections of a page nest under open deeper-levelled ones, and content before a page's first heading
    belongs to the innermost open section.
    """
    stack: list[tuple[int, str]] = []  # (heading level, section id)
    for page in pages:
        levels = {
            node.parent_id: int(node.level[1:])
            for node in page.nodes
            if isinstance(node, HeadingNode) and node.parent_id is not None
        }
        updated: list[Node] = []
        for node in page.nodes:
            if isinstance(node, SectionNode):
                level = levels.get(node.id, 6)
                if node.parent_id is None:
                    while stack and stack[-1][0] >= level:
                        stack.pop()
                    if stack:
                        node = node.model_copy(update={"parent_id": stack[-1][1]})
                else:
                    while stack and stack[-1][1] != node.parent_id:
                        stack.pop()
                stack.append((level, node.id))
            elif node.parent_id is None and node.type not in ("header", "footer", "metadata") and stack:
                node = node.model_copy(update={"parent_id": stack[-1][1]})
            updated.append(node)
        page.nodes = updated


def _messages(rendered: RenderedPage, scale: str, objective: str) -> list[dict[str, Any]]:
    unit = (
        f"pixels of the {rendered.width_px} x {rendered.height_px} image"
        if scale == "pixels"
        else "thousandths of the page's width and height (0-1000)"
    )
    return [
        {
            "role": "system",
            "content": objective.format(width=rendered.width_px, height=rendered.height_px, scale=unit),
        },
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Extract the nodes of this page."},
                image_part(rendered.png),
            ],
        },
    ]


def extract_pages(
    indices: Sequence[int],
    render: Callable[[int], RenderedPage],
    client: ModelClient,
    *,
    parallel: int = 3,
    page_timeout: float = 600.0,
    on_page_error: str = "raise",
    objective: str = PAGE_OBJECTIVE,
    progress: Callable[[int, int], None] | None = None,
) -> VisionResult:
    """Read pages with a vision model, ``parallel`` at a time, each within ``page_timeout`` seconds.

    Args:
        indices: 0-based page indices to read (only these are rendered and sent).
        render: Renders one page; called by the worker that reads it, so pages are not held in memory.
        client: The model client (retries, timeouts, usage).
        on_page_error: ``"raise"``: fail the document naming every failed page and why;
            ``"skip"``: leave failed pages out and record them in the result.

    Raises:
        LLMExtractionError: with ``on_page_error="raise"``, when any page failed.
    """
    done_lock = threading.Lock()
    done = 0
    dropped = 0
    workers = max(1, min(parallel, len(indices) or 1))
    # Rendering runs ahead of the model calls, one page per worker at most, so a worker rarely waits for
    # its page image while no more than 2 x workers page images are ever held in memory.
    # Two render threads: PyMuPDF draws under its lock, but the PNG encoding of one page can overlap the
    # drawing of the next.
    renderer = ThreadPoolExecutor(max_workers=min(2, workers))
    rendered_pages: dict[int, Future[RenderedPage]] = {}
    taken: set[int] = set()  # positions whose image a worker already took: never rendered again
    render_lock = threading.Lock()

    def render_at(position: int) -> None:
        with render_lock:
            if position < len(indices) and position not in rendered_pages and position not in taken:
                rendered_pages[position] = renderer.submit(render, indices[position])

    def work(position: int) -> tuple[list[Node], list[TocEntryNode]] | PageFailure:
        nonlocal done, dropped
        index = indices[position]
        deadline = time.monotonic() + page_timeout
        try:
            render_at(position)
            with render_lock:
                future = rendered_pages[position]
            rendered = future.result()
            with render_lock:
                del rendered_pages[position]
                taken.add(position)
            render_at(position + workers)
            answer = client.ask(
                _messages(rendered, client.bbox_scale, objective),
                PageAnswer,
                what=f"page {index + 1}",
                deadline=deadline,
            )
            nodes, entries, lost = answer_to_nodes(answer, index, rendered, client.bbox_scale)
            result: tuple[list[Node], list[TocEntryNode]] | PageFailure = (nodes, entries)
        except LLMExtractionError as exc:
            result, lost = PageFailure(index, str(exc)), 0
        with done_lock:
            done += 1
            dropped += lost
            if progress is not None:
                progress(done, len(indices))
        return result

    for position in range(workers):
        render_at(position)
    try:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            outcomes = list(pool.map(work, range(len(indices))))
    finally:
        renderer.shutdown(wait=True, cancel_futures=True)

    failures = [outcome for outcome in outcomes if isinstance(outcome, PageFailure)]
    if failures and on_page_error == "raise":
        listed = "; ".join(f"page {failure.index + 1}: {failure.reason}" for failure in failures)
        raise LLMExtractionError(f"{len(failures)} page(s) could not be read by the model. {listed}")
    pages: list[Page] = []
    entries: list[tuple[int, TocEntryNode]] = []
    for index, outcome in zip(indices, outcomes, strict=True):
        if isinstance(outcome, PageFailure):
            continue
        nodes, page_entries = outcome
        pages.append(Page(index=index, nodes=nodes))
        entries.extend((index, entry) for entry in page_entries)
    nest_across_pages(pages)
    if dropped:
        import warnings

        from ..errors import PageIndexWarning

        warnings.warn(
            f"The model gave {dropped} parent reference(s) that name no section of their page; "
            "they were dropped.",
            PageIndexWarning,
            stacklevel=3,
        )
    if failures and not pages:
        # Skipping failed pages keeps the others; with none left there is nothing worth saving, and an
        # empty index must not replace a good one.
        listed = "; ".join(f"page {failure.index + 1}: {failure.reason}" for failure in failures)
        raise LLMExtractionError(f"Every page failed, so nothing was indexed. {listed}")
    return VisionResult(pages=pages, toc_entries=entries, failures=failures)


# -- rendering ------------------------------------------------------------------------------------------


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


def pdf_renderer(document: Any, dpi: int) -> Callable[[int], RenderedPage]:
    """Render pages of an open PyMuPDF document on demand (PyMuPDF is used under its lock), at ``dpi`` or
    smaller: within ``MAX_RENDER_SIDE`` pixels a side and ``MAX_RENDER_PIXELS`` in all."""
    from ..pdf import PYMUPDF_LOCK, page_matrix, pdf_errors

    def render(index: int) -> RenderedPage:
        from PIL import Image

        with PYMUPDF_LOCK, pdf_errors(f"page {index + 1} of the PDF"):
            page = document[index]
            # get_pixmap honours the page's /Rotate; text set sideways is turned upright below. A page too
            # large for the dpi is drawn smaller: boxes map back through the image's size either way.
            pixmap = page.get_pixmap(matrix=page_matrix(page, dpi), alpha=False)
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
        out = io.BytesIO()
        image.save(out, format="PNG", compress_level=1)
        return RenderedPage(out.getvalue(), image.width, image.height, width_pt, height_pt, rotation)

    return render


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


def decode_image(data: bytes, name: str) -> tuple[Any, tuple[int, int]]:
    """An image file decoded within bounds, for the model: RGB, turned by its EXIF orientation, and no
    larger than ``MAX_IMAGE_SIDE`` pixels a side and ``MAX_RENDER_PIXELS`` in all.

    The header is checked before anything is decoded. A JPEG is decoded at 1/2, 1/4 or 1/8 of its size
    when that still covers the result; other images are decoded whole (at most ``MAX_IMAGE_PIXELS``) and
    reduced a strip at a time.

    Args:
        data: The file's bytes.
        name: How messages name the image.

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
                scale = fit_scale(width, height, 1.0, max_side=MAX_IMAGE_SIDE, max_pixels=MAX_RENDER_PIXELS)
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


def image_page(data: bytes, name: str) -> RenderedPage:
    """An image source as one page: decoded safely (:func:`decode_image`), first frame, RGB PNG.

    Raises:
        DocumentLoadError: not an image, unreadable, or over the limits.
    """
    image, (width, height) = decode_image(data, name)
    out = io.BytesIO()
    image.save(out, format="PNG")
    # For an image, one point is one pixel of the original.
    return RenderedPage(out.getvalue(), image.width, image.height, float(width), float(height))


# -- plain text with a model ----------------------------------------------------------------------------

TEXT_OBJECTIVE = """You turn a passage of a plain-text document into its typed structure, for a page index.
Answer with JSON {"nodes": [...]}: every piece of the passage in order, each with a passage-local "id"
(n1, n2, ...) and "parent_id" (the id of the section it belongs to, or null). Types: "section" (with a
2-3 sentence "description"), "heading" ("level" h1..h6, exact "content", parent_id its section),
"paragraph" ("level" paragraph | citation | code | aside | abstract | footnote, exact "content"),
"list_item" ("level" l1..l6, exact "content" without the bullet), "table" (the whole table as Markdown in
"content"), "metadata". Copy the text exactly; never summarise it."""

MAX_CHUNK_CHARS = 12_000  # about 3,000 tokens: a passage and its answer fit any current model


def text_chunks(text: str, limit: int = MAX_CHUNK_CHARS) -> list[str]:
    """Split text at paragraph boundaries into chunks of at most ``limit`` characters (a longer
    paragraph is cut at line, then word, boundaries)."""
    chunks: list[str] = []
    current = ""
    for paragraph in re.split(r"\n\s*\n", text):
        pieces = [paragraph]
        if len(paragraph) > limit:
            pieces, piece = [], ""
            # A "word" longer than the limit (a run without spaces) is cut into slices of the limit.
            parts = re.split(r"(\s+)", paragraph)
            words = [
                part[start : start + limit] for part in parts for start in range(0, max(len(part), 1), limit)
            ]
            for word in words:
                if len(piece) + len(word) > limit and piece:
                    pieces.append(piece)
                    piece = ""
                piece += word
            pieces.append(piece)
        for piece in pieces:
            if current and len(current) + len(piece) + 2 > limit:
                chunks.append(current)
                current = ""
            current = f"{current}\n\n{piece}" if current else piece
    if current.strip():
        chunks.append(current)
    return [chunk for chunk in chunks if chunk.strip()]


def extract_text_pages(
    pages_text: dict[int, str], client: ModelClient, *, parallel: int = 3, on_page_error: str = "raise"
) -> VisionResult:
    """Read plain-text pages (``{page index: text}``) with a model, chunk by chunk (never one unbounded
    call), the nodes of each page's chunks merged in order."""
    jobs = [
        (index, number, chunk)
        for index, text in pages_text.items()
        for number, chunk in enumerate(text_chunks(text))
    ]

    def work(job: tuple[int, int, str]) -> tuple[list[Node], int] | PageFailure:
        index, number, chunk = job
        messages = [{"role": "system", "content": TEXT_OBJECTIVE}, {"role": "user", "content": chunk}]
        try:
            answer = client.ask(messages, PageAnswer, what=f"page {index + 1}, passage {number + 1}")
        except LLMExtractionError as exc:
            return PageFailure(index, str(exc))
        ids, parents, lost = resolve_answer_ids(answer, f"p{index}-c{number}")
        nodes: list[Node] = []
        for node, node_id, parent in zip(answer.nodes, ids, parents, strict=True):
            if isinstance(node, (TocEntryNode, AnswerImageNode)):
                continue  # plain text has neither printed contents pages nor pictures
            update: dict[str, Any] = {"id": node_id, "parent_id": parent}
            if hasattr(node, "group_id"):
                update["group_id"] = None
            if isinstance(node, AnswerTableNode):
                fields = {**node.model_dump(exclude={"bbox", "image_data", "image_path"}), **update}
                nodes.append(TableNode(**fields))
            else:
                nodes.append(node.model_copy(update=update))
        return nodes, lost

    with ThreadPoolExecutor(max_workers=max(1, parallel)) as pool:
        outcomes = list(pool.map(work, jobs))
    failures = [outcome for outcome in outcomes if isinstance(outcome, PageFailure)]
    if failures and on_page_error == "raise":
        listed = "; ".join(failure.reason for failure in failures)
        raise LLMExtractionError(f"{len(failures)} passage(s) could not be read by the model. {listed}")
    failed_pages = {failure.index for failure in failures}
    if failures and failed_pages >= set(pages_text):
        listed = "; ".join(failure.reason for failure in failures)
        raise LLMExtractionError(f"Every page failed, so nothing was indexed. {listed}")
    merged: dict[int, list[Node]] = {index: [] for index in pages_text if index not in failed_pages}
    for (index, _, _), outcome in zip(jobs, outcomes, strict=True):
        if index in merged and not isinstance(outcome, PageFailure):
            merged[index].extend(outcome[0])
    pages = [Page(index=index, nodes=nodes) for index, nodes in merged.items()]
    nest_across_pages(pages)
    unique = {failure.index: failure for failure in failures}
    return VisionResult(pages=pages, failures=list(unique.values()))
