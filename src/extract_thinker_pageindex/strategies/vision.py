"""The vision strategy: each page rendered to an image and read by a vision model into typed nodes.

Pages run in parallel (a bounded pool), are rendered only when a worker takes them (never all in memory),
and each has a time budget over its retries. Image and table regions are cropped from the page image by
the boxes the model gives, scaled from the model's coordinates (pixels, or 0-1000 for some families).
The page images themselves are made in :mod:`.page_images`.
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

from ..document.model import (
    AnswerImageNode,
    AnswerTableNode,
    HeadingNode,
    ImageNode,
    Node,
    Page,
    PageAnswer,
    PageOrigin,
    SectionNode,
    TableNode,
    TocEntryNode,
    document_node,
)
from ..errors import LLMExtractionError
from ..llm.client import ModelClient, image_part
from .page_images import MAX_IMAGE_DIMENSION, MAX_IMAGE_SIDE, RenderedPage, image_page, pdf_renderer

# The page images (RenderedPage, pdf_renderer, image_page and the image bounds) are made in
# :mod:`.page_images` and re-exported here, where callers of the vision strategy have always found them.
__all__ = [
    "MAX_IMAGE_DIMENSION",
    "MAX_IMAGE_SIDE",
    "PAGE_OBJECTIVE",
    "PageFailure",
    "RenderedPage",
    "VisionResult",
    "extract_pages",
    "image_page",
    "pdf_renderer",
    "scale_bbox",
]

PAGE_OBJECTIVE = """You turn one page of a document into its typed structure, for a page index that people and
programs navigate, cite and extract from. You see the page as an image; the request gives its size.

Answer with JSON {"nodes": [...]}: every piece of the page, in reading order (columns left to right),
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

"bbox" is [xmin, ymin, xmax, ymax] in the coordinates the request gives. Copy text exactly; do not invent
content."""

_SAFE = re.compile(r"[^A-Za-z0-9._-]+")
PAD = 0.01  # share of the page added around a cropped region


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
        nodes.append(document_node(node, **update))
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


def _messages(rendered: RenderedPage, scale: str, objective: str, notes: str | None) -> list[dict[str, Any]]:
    """A page request: the objective (the same for every page: the cacheable prefix), then this page's facts
    (its pixel size, the coordinates asked for, any reviewer's findings) and its image."""
    unit = (
        f"pixels of this {rendered.width_px} x {rendered.height_px} image"
        if scale == "pixels"
        else "thousandths of the page's width and height (0-1000)"
    )
    text = (
        f"This page image is {rendered.width_px} x {rendered.height_px} pixels; give every bbox in {unit}. "
        "Extract the nodes of this page."
    )
    if notes:
        text = f"{text}\n\n{notes}"
    return [
        {"role": "system", "content": objective},
        {"role": "user", "content": [{"type": "text", "text": text}, image_part(rendered.png)]},
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
    notes: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> VisionResult:
    """Read pages with a vision model, ``parallel`` at a time, each within ``page_timeout`` seconds.

    Args:
        indices: 0-based page indices to read (only these are rendered and sent).
        render: Renders one page; called by the worker that reads it, so pages are not held in memory.
        client: The model client (retries, timeouts, usage).
        objective: The instructions: the system message, the same for every page (the cacheable prefix).
        notes: Added to each page's own request after the prefix (a reviewer's findings on a re-read).
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
                _messages(rendered, client.bbox_scale, objective, notes),
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
        pages.append(Page(index=index, nodes=nodes, origin=PageOrigin(source="vision", engine=client.model)))
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
