"""The PDF text strategy: a page index from a born-digital PDF's own text layer, with no model.

- Headings come from the PDF's outline when it is valid (targets in range, in order, titles found on
  their pages), otherwise from font statistics: lines larger than the body text or bold, standing alone,
  not a table row, not a sentence. Levels follow numbering ("PART", "ARTICLE", "Item", "Section") first,
  then the rank of the heading's style (size, weight, capitals, italics).
- Running headers and footers are lines in the top or bottom band that repeat (digits ignored) across
  pages; they become header/footer nodes, never headings.
- Paragraphs and list items are read block by block in reading order (two text columns left to right).
- Tables (ruled grids, and columns aligned by whitespace: :mod:`..tables`) become table nodes, their
  Markdown in ``content`` and their caption; embedded raster images, image nodes.
- Every node but a section carries a ``bbox``: for text, the union of the boxes of the lines that made it
  (their spans' boxes), rounded outward to whole points and clipped to the page.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import logging
import re
import unicodedata
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any

from ..document.boxes import outer_box, union_rect
from ..document.model import (
    MAX_TOC_DEPTH,
    FooterNode,
    HeaderNode,
    HeadingNode,
    ImageNode,
    ListItemNode,
    Node,
    Page,
    ParagraphNode,
    SectionNode,
    TableNode,
    TocEntry,
)
from ..errors import PageIndexWarning
from ..inputs.pages import PageSpec, normalize_page_spec
from ..ocr.detect import needs_ocr
from ..ocr.settings import OcrSettings
from ..postprocess.toc import letters_joined
from ..tables import find_page_tables
from ..tables.drawings import VECTOR_FLAGS, shape_paths, stroked_paths
from ..tables.ruled import may_hold_grid
from .pdf_contents import printed_toc_entries
from .pdf_layout import Line, PageLines, lines_from_blocks, read_page_lines, turned_lines
from .pdf_structure import BULLET, detect_headings, find_running_lines, normalise_title, outline_headings
from .pdf_title import pdf_title

if TYPE_CHECKING:
    from ..pdf.images import DrawnPicture

__all__ = ["PdfTextResult", "normalise_title", "parse_pdf_text", "pdf_date", "read_outline"]

log = logging.getLogger("extract_thinker_pageindex.pdf")

Progress = Callable[[int, int], None]

# A page with fewer visible characters than this has no usable text layer (a scan, a picture). Characters
# of the wide East Asian scripts (Chinese, Japanese, Korean) carry a word each: four of them are text.
MIN_TEXT_CHARS = 16
MIN_WIDE_CHARS = 4
MIN_IMAGE_SIDE = 48.0  # points: smaller pictures are icons and rules, not content
MIN_IMAGE_AREA = 0.01  # share of the page area
#: A page-size picture under text of which this share is invisible is a scan under its OCR layer.
INVISIBLE_SHARE = 0.9
CONTEXT_PAGES = 12  # unselected pages read to recognise running headers and footers in a selection


@dataclass
class PdfTextResult:
    """What the text strategy read: pages, a TOC from the outline (or ``None``), metadata, blank pages."""

    pages: list[Page]
    toc: list[TocEntry] | None
    page_count: int
    title: str | None = None
    author: str | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    pages_without_text: list[int] = field(default_factory=list)
    outline_note: str | None = None
    ocr_read: dict[int, str] = field(default_factory=dict)  # page index -> engine, for pages OCR read
    ocr_missing: list[int] = field(default_factory=list)  # pages that needed OCR it could not give
    ocr_failed: list[int] = field(default_factory=list)  # pages the engine failed on (warned about)


def has_text_layer(page: PageLines) -> bool:
    """Whether a page has a usable text layer: 16 visible characters, or 4 of a wide East Asian script."""
    if page.text_chars >= MIN_TEXT_CHARS:
        return True
    wide = sum(1 for line in page.lines for char in line.text if unicodedata.east_asian_width(char) in "WF")
    return wide >= MIN_WIDE_CHARS


def pdf_date(value: str | None) -> datetime | None:
    """A PDF date (``D:YYYYMMDDHHmmSS+HH'mm'``) as a datetime, or ``None`` when it cannot be read."""
    if not value:
        return None
    match = re.match(
        r"^(?:D:)?(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?(?:([+\-Z])(\d{2})?'?(\d{2})?'?)?",
        value.strip(),
    )
    if match is None:
        return None
    year, month, day, hour, minute, second, sign, tz_hours, tz_minutes = match.groups()
    try:
        moment = datetime(
            int(year), int(month or 1), int(day or 1), int(hour or 0), int(minute or 0), int(second or 0)
        )
    except ValueError:
        return None
    if sign in ("+", "-"):
        hours, minutes = int(tz_hours or 0), int(tz_minutes or 0)
        if hours > 23 or minutes > 59:
            return None
        offset = timedelta(hours=hours, minutes=minutes)
        return moment.replace(tzinfo=timezone(offset if sign == "+" else -offset))
    if sign == "Z":
        return moment.replace(tzinfo=timezone.utc)
    return moment


# -- assembling the nodes -----------------------------------------------------------------------------


@dataclass
class PageExtras:
    """What a page holds besides text lines: tables and images, and the lines the tables cover."""

    nodes: list[tuple[float, Node]] = field(default_factory=list)  # (top y, node without id)
    covered: set[int] = field(default_factory=set)  # line positions inside a table
    # A node placed at a line's position rather than by its top (a table on a rotated page, where the
    # page's own y is not the order it is read in): id(node) -> line position.
    at: dict[int, int] = field(default_factory=dict)


@dataclass
class Assembler:
    """Turns classified lines into nodes. The section stack lives across pages, so a section opened on
    one page holds the following pages' content until a heading of the same or a higher level."""

    sections: list[tuple[int, str]] = field(default_factory=list)
    section_at: dict[tuple[int, int], str] = field(default_factory=dict)  # heading line -> section id

    def page_nodes(
        self,
        page_position: int,
        page: PageLines,
        running: dict[tuple[int, int], str],
        headings: dict[tuple[int, int], tuple[int, str, int]],
        extras: PageExtras,
    ) -> list[Node]:
        """The nodes of one page; ``headings`` maps a heading's first line to (level, text, line count)."""
        nodes: list[Node] = []
        headers: list[Node] = []
        footers: list[Node] = []
        counter = 0
        current: dict[str, Any] | None = None  # the paragraph or list item being filled
        item_indents: list[float] = []

        def next_id() -> str:
            nonlocal counter
            counter += 1
            return f"p{page.index}-{counter}"

        def parent() -> str | None:
            return self.sections[-1][1] if self.sections else None

        def box(taken: list[Line]) -> tuple[int, int, int, int] | None:
            rect = union_rect(line.bbox for line in taken)
            return None if rect is None else page.own_box(rect)

        def flush() -> None:
            nonlocal current
            if current is not None:
                kind = current.pop("type")
                current["bbox"] = box(current.pop("lines"))
                nodes.append(ListItemNode(**current) if kind == "list_item" else ParagraphNode(**current))
                current = None

        # Each table or image goes before the first line (in reading order) that starts below its top.
        lines = page.lines
        pending = sorted(extras.nodes, key=lambda item: item[0])
        slots: dict[int, list[Node]] = {}
        for top, node in pending:
            slot = extras.at.get(id(node))
            if slot is None:
                slot = next(
                    (
                        i
                        for i, line in enumerate(lines)
                        if line.bbox[1] >= top - 1 and (page_position, i) not in running
                    ),
                    len(lines),
                )
            slots.setdefault(slot, []).append(node)

        position = 0
        while position <= len(lines):
            for node in slots.get(position, []):
                flush()
                nodes.append(node.model_copy(update={"id": next_id(), "parent_id": parent()}))
            if position == len(lines):
                break
            line = lines[position]
            kind = running.get((page_position, position))
            heading = headings.get((page_position, position))
            if position in extras.covered:
                position += 1
            elif kind is not None:
                # Headers open the page and footers close it, wherever the PDF wrote them.
                flush()
                if kind == "header":
                    headers.append(HeaderNode(id=next_id(), content=line.text, bbox=box([line])))
                else:
                    footers.append(FooterNode(id=next_id(), content=line.text, bbox=box([line])))
                position += 1
            elif heading is not None:
                flush()
                level, text, count = heading
                while self.sections and self.sections[-1][0] >= level:
                    self.sections.pop()
                section = SectionNode(id=next_id(), parent_id=parent())
                nodes.append(section)
                self.sections.append((level, section.id))
                taken = lines[position : position + count]
                # A title run into its text ("Item 3. Defaults Upon Senior Securities. None."): the rest of
                # the line opens the section's first paragraph. The line is cut where the title's
                # characters end (in proportion), at a whole point, so the two boxes meet and never overlap.
                rest = line.text[len(text) :].strip() if count == 1 and line.text.startswith(text) else ""
                rest_line = None
                if rest:
                    x0, y0, x1, y1 = line.bbox
                    cut = min(max(round(x0 + (x1 - x0) * len(text) / len(line.text)), x0 + 1), x1 - 1)
                    taken = [dataclasses.replace(line, bbox=(x0, y0, cut, y1))]
                    rest_line = dataclasses.replace(line, bbox=(cut, y0, x1, y1))
                nodes.append(
                    HeadingNode(
                        id=next_id(),
                        parent_id=section.id,
                        level=_heading_level(level),
                        # (Words spaced apart are set apart by runs of spaces: those stay as set.)
                        content=text if any(piece.spaced for piece in taken) else letters_joined(text),
                        bbox=box(taken),
                    )
                )
                self.section_at[(page_position, position)] = section.id
                position += count
                if rest_line is not None:
                    current = {
                        "type": "paragraph",
                        "id": next_id(),
                        "parent_id": parent(),
                        "content": rest,
                        "lines": [rest_line],
                    }
            else:
                bullet = BULLET.match(line.text)
                new_block = position == 0 or lines[position - 1].block != line.block
                if bullet is not None:
                    flush()
                    indent = line.bbox[0]
                    known = [value for value in item_indents if abs(value - indent) < 4]
                    if not known:
                        item_indents.append(indent)
                        item_indents.sort()
                    depth = min(item_indents.index(known[0] if known else indent) + 1, 6)
                    current = {
                        "type": "list_item",
                        "id": next_id(),
                        "parent_id": parent(),
                        "level": f"l{depth}",
                        "content": line.text[bullet.end() :],
                        "lines": [line],
                    }
                elif current is None or new_block:
                    flush()
                    current = {
                        "type": "paragraph",
                        "id": next_id(),
                        "parent_id": parent(),
                        "content": line.text,
                        "lines": [line],
                    }
                else:
                    current["lines"].append(line)
                    text = current["content"]
                    if text.endswith("-") and line.text[:1].islower():
                        current["content"] = text[:-1] + line.text  # a word hyphenated across lines
                    else:
                        current["content"] = f"{text} {line.text}"
                position += 1
        flush()
        return headers + nodes + footers


def _heading_level(level: int) -> Any:
    return f"h{min(max(level, 1), 6)}"


# -- tables and images --------------------------------------------------------------------------------


# What a figure's text holds (see ``tables.rows.is_figure``): a digit, a dash, an asterisk, a currency
# sign, or "n/a" or "nm".
_MAY_BE_FIGURE = re.compile(r"[\d*$€£¥\-—–‒―]|\bn/?a\b|\bnm\b", re.IGNORECASE)


def _may_hold_table(page: PageLines, drawings: Callable[[], list[dict[str, Any]]]) -> bool:
    """Whether the page may hold a table, read from its lines (and its drawn shapes) alone. A row is the
    lines whose middles share a band, and it is side by side when it holds two pieces (lines beside each
    other, a gap wider than the text's size between two runs of a line, or a run of spaces). The table
    finder needs two such rows, and two that may hold a figure (an aligned table's body rows) or two
    shapes that may be rules down (a grid); it reads the page's words for it, so a page of running text
    or of side-by-side prose is passed over without reading them (on every page of the eval sets, no
    table is lost). A line much taller than its type (a brace or a tall glyph joined beside it) may hide
    two rows in one band: then the words are read."""
    rows = figures = pieces = 0
    figure = False
    bottom = float("-inf")
    for line in sorted(page.lines, key=lambda line: line.bbox[1] + line.bbox[3]):
        if line.bbox[3] - line.bbox[1] > 2.5 * line.size:
            return True
        count = line.pieces + (line.spaced or line.max_gap > line.size)
        if (line.bbox[1] + line.bbox[3]) / 2 <= bottom:
            pieces += count
            bottom = max(bottom, line.bbox[3])
        else:
            rows += pieces >= 2
            figures += pieces >= 2 and figure
            bottom, pieces, figure = line.bbox[3], count, False
            if rows >= 2 and figures >= 2:
                return True
        figure = figure or _MAY_BE_FIGURE.search(line.text) is not None
    rows += pieces >= 2
    figures += pieces >= 2 and figure
    return rows >= 2 and (figures >= 2 or may_hold_grid(drawings()))


def _page_tables(
    pdf_page: Any, page: PageLines, extras: PageExtras, textpage: Any, drawings: Callable[[], Any]
) -> None:
    found = find_page_tables(pdf_page, textpage=textpage, drawings=drawings)
    # On a rotated page not read turned, the page's own y is not the order it is read in: a table takes
    # the place of its first line in reading order.
    in_place = bool(pdf_page.rotation) and page.turn is None
    for table in found:
        _add_table(page, extras, table.bbox, table.markdown(), caption=table.caption, in_place=in_place)


def _add_table(
    page: PageLines,
    extras: PageExtras,
    bbox: Sequence[float],
    content: str,
    *,
    caption: str | None = None,
    in_place: bool = False,
) -> None:
    """A table node at ``bbox`` (in the page's own coordinates); the page's lines inside it are its cells,
    not paragraphs. ``in_place``: the table stands where its first line stood in reading order (else
    before the first line below its top)."""
    box = outer_box(bbox, *page.own_size)
    if box is None:
        return
    node = TableNode(id="t", kind="data", bbox=box, caption=caption, content=content)
    x0, y0, x1, y1 = page.reading_box(box)
    extras.nodes.append((y0, node))
    inside = []
    for position, line in enumerate(page.lines):
        x = (line.bbox[0] + line.bbox[2]) / 2
        y = (line.bbox[1] + line.bbox[3]) / 2
        if x0 <= x <= x1 and y0 <= y <= y1:
            extras.covered.add(position)
            inside.append(position)
    if in_place and inside:
        extras.at[id(node)] = inside[0]


_CONTINUED = re.compile(r"\(?\bcontinued\b\)?\s*$", re.IGNORECASE)
# The content a continued table must follow and lead with; headings (a repeated title) may stand between.
_CONTENT = (ParagraphNode, ListItemNode, TableNode, ImageNode)


def _mark_table_continuations(pages: list[Page]) -> None:
    """A table that runs on from the page before is marked ``continuation`` (then grouped with it): the
    first content of its page (headings aside) is a table, the last content of the page before is one
    too, and either its caption says "continued" or it has as many columns."""

    def columns(node: TableNode) -> int:
        return node.content.splitlines()[0].count("|") - 1 if node.content else 0

    for before, page in itertools.pairwise(pages):
        if page.index != before.index + 1:
            continue
        first = next((node for node in page.nodes if isinstance(node, _CONTENT)), None)
        last = next((node for node in reversed(before.nodes) if isinstance(node, _CONTENT)), None)
        if not isinstance(first, TableNode) or not isinstance(last, TableNode):
            continue
        said = first.caption is not None and _CONTINUED.search(first.caption) is not None
        if said or columns(first) == columns(last):
            position = page.nodes.index(first)
            page.nodes[position] = first.model_copy(update={"continuation": True})


@dataclass
class Placement:
    """Where a page shows an embedded picture: its object, its box, and its size in pixels (as declared)."""

    xref: int
    box: tuple[int, int, int, int]
    width: int
    height: int


def _page_images(pdf_page: Any, page: PageLines, name: str) -> list[Placement]:
    """Placements of a page's embedded pictures that are big enough to be content.
    (Pictures repeated over many pages are dropped later, once every page has been seen.)

    Nothing is decoded: each placement is told which picture object it shows by identity
    (``drawn_pictures``), never by its size alone, so an inline picture or one in an annotation's
    appearance never takes the bytes of an object of its size.

    Warns:
        PageIndexWarning: pictures of a size two objects share that could not be told apart (left out).
    """
    from ..pdf.images import drawn_pictures

    found: list[Placement] = []
    page_area = page.width * page.height

    def big_enough(picture: DrawnPicture) -> bool:
        x0, y0, x1, y1 = picture.bbox
        width, height = x1 - x0, y1 - y0
        return min(width, height) >= MIN_IMAGE_SIDE and width * height >= MIN_IMAGE_AREA * page_area

    listed = pdf_page.get_images(full=True)  # the cheap look at the page's image objects first
    if not listed:
        return found
    sizes = {item[0]: (item[2], item[3]) for item in listed if item[0] > 0}
    shared = Counter(sizes.values())
    # Placements come from one pass over the page that notes pictures only (sizes and places: nothing is
    # decoded, no text laid out), each matched to the picture object it shows by identity.
    placed = drawn_pictures(pdf_page, identify=sizes)
    pictures = [picture for picture in placed if big_enough(picture)]
    if not pictures:
        return found
    untold = 0
    for picture in pictures:
        xref = picture.xref
        if xref <= 0:
            # No object of the page's: an inline picture or one in an annotation's appearance (no object
            # to extract), or one of a size two objects share that the store could not give back.
            untold += shared[(picture.width, picture.height)] > 1
            continue
        box = outer_box(picture.bbox, *page.own_size)
        if box is not None:
            found.append(Placement(xref, box, picture.width, picture.height))
    if untold:
        warnings.warn(
            f"{name}: {untold} picture(s) on page {page.index + 1} could not be told from other pictures of "
            "the same size (an inline picture, or one the PDF reader could not give back); they are left out "
            "of the index.",
            PageIndexWarning,
            stacklevel=3,
        )
    return found


# -- the strategy ---------------------------------------------------------------------------------------


def _shown_paths(shapes: Callable[[], tuple[list[Any], list[Any]]]) -> list[dict[str, Any]]:
    """The paths of a page's shapes' boxes, without reading its drawings (what underlines need)."""
    return shapes()[0]


def _table_paths(pdf_page: Any, shapes: Callable[[], tuple[list[Any], list[Any]]]) -> list[dict[str, Any]]:
    """What the table finder reads of a page's drawings: the paths of its shapes' boxes, with the drawn
    stroked paths that meet a thick stroked rectangle (``tables.drawings.page_paths``)."""
    paths, boxes = shapes()
    return paths + stroked_paths(pdf_page, boxes) if boxes else paths


def _text_flags() -> int:
    import pymupdf

    # The drawn shapes' boxes come with the text (see ``page_paths``): rules and underlines without a
    # second pass over the page.
    dropped = pymupdf.TEXT_PRESERVE_LIGATURES | pymupdf.TEXT_PRESERVE_IMAGES
    return int((pymupdf.TEXTFLAGS_DICT | VECTOR_FLAGS) & ~dropped)


def parse_pdf_text(
    data: bytes,
    *,
    name: str,
    pages: PageSpec | None = None,
    use_outline: bool = True,
    tables: bool = True,
    images: bool = True,
    password: str | None = None,
    progress: Progress | None = None,
    ocr: OcrSettings | None = None,
) -> PdfTextResult:
    """Read a PDF's text layer into pages of nodes, OCR'ing the pages that have no usable one.

    Args:
        data: The PDF bytes.
        name: How messages name the document (its quoted file name).
        pages: A 1-based page selection, or ``None`` for all pages.
        use_outline: Take headings and the TOC from a valid outline.
        tables: Find tables (ruled grids and whitespace-aligned columns, :mod:`..tables`) and make table
            nodes of them; their lines are not paragraphs.
        images: Make image nodes (with PNG bytes) for embedded pictures that are not tiny or decorative.
        password: For encrypted PDFs.
        progress: Called as ``progress(done, total)`` after each page is read.
        ocr: How pages without a usable text layer are read (``None``: not at all).

    Raises:
        DocumentLoadError, EmptyDocumentError: from opening the PDF.
        PageSpecError: ``pages`` does not fit the document.
        OcrError: the OCR workers cannot start.

    Warns:
        PageIndexWarning: OCR failed on a page (it keeps its text layer).
    """
    from ..pdf.opening import fewer_collections

    with fewer_collections():
        return _parse_pdf_text(
            data,
            name=name,
            pages=pages,
            images=images,
            tables=tables,
            use_outline=use_outline,
            password=password,
            progress=progress,
            ocr=ocr,
        )


def _parse_pdf_text(
    data: bytes,
    *,
    name: str,
    pages: PageSpec | None,
    images: bool,
    tables: bool,
    use_outline: bool,
    password: str | None,
    progress: Progress | None,
    ocr: OcrSettings | None,
) -> PdfTextResult:
    from ..pdf.images import JPEG_SCALE, drawn_from_page, picture_bytes, picture_scale
    from ..pdf.opening import PYMUPDF_LOCK, open_pdf, pdf_errors

    with open_pdf(data, password=password, name=name) as document, PYMUPDF_LOCK, pdf_errors(name):
        page_count = document.page_count
        selected = normalize_page_spec(pages, page_count)
        indices = [index for index in range(page_count) if selected is None or index in selected]
        flags = _text_flags()
        read: list[PageLines] = []
        extras: list[PageExtras] = []
        image_places: list[list[Placement]] = []
        want_ocr: list[int] = []  # positions in ``read``
        done = 0
        for index in indices:
            pdf_page = document[index]
            # The text and the drawings are read once, for the lines, the underlines and the tables.
            textpage = pdf_page.get_textpage(flags=flags)
            text = pdf_page.get_text("dict", flags=flags, textpage=textpage)
            # Underlines are looked for among the shapes the text page shows; tables read the drawings
            # where a shape hides its lines (see ``page_paths``).
            shapes = functools.cache(functools.partial(shape_paths, text["blocks"]))
            drawings = functools.cache(functools.partial(_table_paths, pdf_page, shapes))
            underlines = functools.partial(_shown_paths, shapes)
            page = read_page_lines(pdf_page, index, flags, textpage=textpage, data=text, drawings=underlines)
            read.append(page)
            scanned = ocr is not None and needs_ocr(
                pdf_page, "\n".join(line.text for line in page.lines), ocr.mode
            )
            if scanned:
                want_ocr.append(len(read) - 1)
            page_extras = PageExtras()
            if tables and page.text_chars and not scanned and _may_hold_table(page, drawings):
                _page_tables(pdf_page, page, page_extras, textpage, drawings)
            extras.append(page_extras)
            places = _page_images(pdf_page, page, name) if images else []
            if any(_covers_page(place, page) for place in places) and _invisible_text(text["blocks"]):
                # A scan under its own OCR'd text (set invisible): the text is its reading, and the scan is
                # the page itself, not a picture on it (as after our own OCR, below).
                places = [place for place in places if not _covers_page(place, page)]
            image_places.append(places)
            if progress is not None and not scanned:
                done += 1
                progress(done, len(indices))
        ocr_read: dict[int, str] = {}
        ocr_missing: list[int] = []
        ocr_failed: list[int] = []
        if want_ocr and ocr is not None:

            def tick() -> None:  # one more page read, by OCR
                nonlocal done
                done += 1
                if progress is not None:
                    progress(done, len(indices))

            run = _OcrRun(document, data, password, ocr, name)
            ocr_missing = _ocr_positions(run, read, want_ocr, extras, ocr_read, tick, ocr_failed)
            for position in want_ocr:
                if read[position].index in ocr_read and read[position].lines:
                    # The scan itself is the page: only pictures smaller than the page stay image nodes.
                    image_places[position] = [
                        place for place in image_places[position] if not _covers_page(place, read[position])
                    ]

        # The same picture on many pages is a logo or a rule: leave it out.
        usage = Counter(xref for places in image_places for xref in {place.xref for place in places})
        decorative = {xref for xref, count in usage.items() if count >= max(3, 0.25 * len(read))}
        # Each picture is decoded once for each size it is kept at (300 dpi of its place: a thumbnail and
        # the same picture shown large elsewhere are two sizes). One drawn from its place on the page (a
        # stencil mask, painted in the page's colour; an oversized picture) is that page's drawing.
        cache: dict[tuple[int, int, int, bool, int, tuple[int, ...]], bytes | None] = {}
        for page, places, page_extras in zip(read, image_places, extras, strict=True):
            for place in places:
                if place.xref in decorative:
                    continue
                scale = picture_scale(place.width, place.height, place.box)
                # (A JPEG may be kept as embedded only at JPEG_SCALE or more.)
                drawn = drawn_from_page(document, place.xref, width=place.width, height=place.height)
                size = (
                    place.xref,
                    round(place.width * scale),
                    round(place.height * scale),
                    scale >= JPEG_SCALE,
                    page.index if drawn else -1,
                    place.box if drawn else (),
                )
                if size not in cache:
                    # A plain JPEG kept whole is the PDF's own bytes; anything else a bounded PNG (an
                    # oversized picture drawn reduced; one that cannot be read left out with a warning, the
                    # page keeping its text).
                    cache[size] = picture_bytes(
                        document,
                        place.xref,
                        width=place.width,
                        height=place.height,
                        page=document[page.index],
                        clip=place.box,
                        name=name,
                    )
                picture = cache[size]
                if picture is not None:
                    node = ImageNode(id="i", kind="other", bbox=place.box, image_data=picture)
                    page_extras.nodes.append((page.reading_box(place.box)[1], node))
        outline = read_outline(document) if use_outline else []
        metadata = dict(document.metadata or {})
        # Running headers and footers are told by repetition across the document, so a selection of a
        # few pages is judged next to a sample of the others: selecting a page never changes its nodes.
        unread = [index for index in range(page_count) if selected is not None and index not in selected]
        step = max(1, len(unread) // CONTEXT_PAGES)
        context = [read_page_lines(document[index], index, flags) for index in unread[::step][:CONTEXT_PAGES]]

    running = {key: kind for key, kind in find_running_lines([*read, *context]).items() if key[0] < len(read)}
    positions = {page.index: position for position, page in enumerate(read)}
    located: list[tuple[int, str, int, tuple[int, int] | None]] = []
    note = None
    if use_outline:
        located, note = outline_headings(outline, read, positions, page_count, running)
        if note is not None and outline:
            log.warning("%s: outline ignored: %s; headings come from font statistics.", name, note)

    headings: dict[tuple[int, int], tuple[int, str, int]] = {}
    if located:
        top = min(level for level, *_ in located)
        for level, _title, page_index, where in located:
            if where is not None and page_index in positions:
                key = (positions[page_index], where[0])
                if key not in headings:
                    lines = read[key[0]].lines[where[0] : where[0] + where[1]]
                    headings[key] = (level - top + 1, " ".join(line.text for line in lines), where[1])
    else:
        headings = detect_headings(read, running, page_count)

    assembler = Assembler()
    result_pages = []
    for position, (page, page_extras) in enumerate(zip(read, extras, strict=True)):
        result_pages.append(
            Page(index=page.index, nodes=assembler.page_nodes(position, page, running, headings, page_extras))
        )

    _mark_table_continuations(result_pages)
    toc = _outline_toc(located, positions, assembler) if located else None
    if toc is None:
        # No usable outline: a printed contents page, when there is one, gives the TOC, provided most of
        # its entries find their section.
        from ..postprocess.toc import toc_from_entries

        printed = printed_toc_entries(read, page_count)
        if printed:
            candidate = toc_from_entries(printed, result_pages)
            linked = sum(1 for entry in candidate if entry.target_section_id is not None)
            if linked >= max(3, 0.5 * len(candidate)):
                toc = candidate
    title = pdf_title(metadata.get("title"), read)
    return PdfTextResult(
        pages=result_pages,
        toc=toc,
        page_count=page_count,
        title=title,
        author=(metadata.get("author") or "").strip() or None,
        created_at=pdf_date(metadata.get("creationDate")),
        updated_at=pdf_date(metadata.get("modDate")),
        pages_without_text=[page.index for page in read if not has_text_layer(page)],
        outline_note=note,
        ocr_read=ocr_read,
        ocr_missing=ocr_missing,
        ocr_failed=ocr_failed,
    )


def _invisible_text(blocks: list[dict[str, Any]]) -> bool:
    """Whether nearly all of a page's text is set invisible (an OCR layer over a scan: PDF text render
    mode 3, which MuPDF reports with ``alpha`` 0)."""
    hidden = shown = 0
    for block in blocks:
        for line in block.get("lines", ()):
            for span in line["spans"]:
                if span.get("alpha", 255) == 0:
                    hidden += len(span["text"])
                else:
                    shown += len(span["text"])
    return hidden >= INVISIBLE_SHARE * (hidden + shown) and hidden > 0


def _covers_page(place: Placement, page: PageLines) -> bool:
    from ..ocr.detect import SCAN_COVER

    x0, y0, x1, y1 = place.box
    return (x1 - x0) * (y1 - y0) >= SCAN_COVER * page.width * page.height


@dataclass
class _OcrRun:
    """What OCR of one PDF needs: the open document (pages read in this process), its bytes (opened by
    worker processes) and password, the settings, and its name for messages."""

    document: Any
    data: bytes
    password: str | None
    settings: OcrSettings
    name: str


def _ocr_positions(
    run: _OcrRun,
    read: list[PageLines],
    positions: list[int],
    extras: list[PageExtras],
    ocr_read: dict[int, str],
    tick: Callable[[], None],
    ocr_failed: list[int],
) -> list[int]:
    """OCR the pages at ``positions`` of ``read`` and put their lines and ruled tables in place (the
    engine finds those in the page image at no cost worth a switch, so ``tables`` does not gate them);
    fills ``ocr_read``, and ``ocr_failed`` with the pages the engine failed on (one warning lists them),
    and returns the page indices OCR could not read because no engine is installed (then nothing runs)."""
    from ..ocr.pool import OcrOutcome, ocr_pages, warn_failures
    from ..ocr.settings import engine_problem
    from ..tables.grid import markdown_table

    if engine_problem(run.settings) is not None:
        for _ in positions:
            tick()
        return [read[position].index for position in positions]
    at = {read[position].index: position for position in positions}
    failed: list[OcrOutcome] = []

    def done(outcome: OcrOutcome) -> None:
        tick()
        position = at[outcome.index]
        if outcome.blocks is None:
            failed.append(outcome)
            return
        page = read[position]
        # The engine read the page as shown, upright: a turned page is read turned.
        shown = run.document[page.index]
        if shown.rotation:
            from ..pdf.images import page_turn

            turn = tuple(page_turn(shown)[0])
            read[position] = turned_lines(outcome.blocks, page.index, turn, *page.own_size)
        else:
            read[position] = lines_from_blocks(outcome.blocks, page.index, page.width, page.height)
        ocr_read[outcome.index] = run.settings.label()
        for table in outcome.tables:
            _add_table(read[position], extras[position], table["bbox"], markdown_table(table["rows"]))

    ocr_pages(run.document, run.data, sorted(at), run.settings, done, password=run.password)
    warn_failures(failed, run.name, stacklevel=5)
    ocr_failed.extend(outcome.index for outcome in failed)
    return []


def read_outline(document: Any) -> list[list[Any]]:
    """A PDF's outline as PyMuPDF's ``get_toc(simple=True)`` gives it, ``[level, title, page number]`` in
    reading order (page -1 when an entry has no page in the document), with levels capped.

    PyMuPDF's ``get_toc`` follows the outline tree by recursion, so an outline nested deeper than
    Python's recursion limit (1,200 levels) failed the whole PDF; it is walked here with a stack. An
    entry nested deeper than ``MAX_TOC_DEPTH`` is kept at that level, after the entries before it: the
    deepest entries become siblings under the last entry at the level above.
    """
    first = document.outline
    # PyMuPDF wraps "no outline" as an outline item holding a null pointer; get_toc tests it the same way.
    if first is None or not first.this.m_internal:
        return []
    entries: list[list[Any]] = []
    stack: list[tuple[Any, int]] = [(first, 1)]
    while stack:
        item, level = stack.pop()
        if item is None:
            continue
        entries.append([min(level, MAX_TOC_DEPTH), item.title or " ", _outline_page(document, item)])
        stack.append((item.next, level))  # after the children below, which are taken first
        stack.append((item.down, level + 1))
    return entries


def _outline_page(document: Any, item: Any) -> int:
    """The 1-based page an outline item points at, as ``get_toc`` resolves it; -1 for none."""
    if item.is_external or not item.uri:
        return -1
    if item.page == -1:
        return int(document.resolve_link(item.uri)[0]) + 1
    return int(item.page) + 1


def _outline_toc(
    located: list[tuple[int, str, int, tuple[int, int] | None]],
    positions: dict[int, int],
    assembler: Assembler,
) -> list[TocEntry]:
    """The outline as a TOC tree, each entry linked to the section its title opened (when found)."""
    entries: list[TocEntry] = []
    stack: list[tuple[int, str]] = []  # (outline level, entry id)
    for level, title, page_index, where in located:
        while stack and stack[-1][0] >= level:
            stack.pop()
        section = None
        if where is not None and page_index in positions:
            section = assembler.section_at.get((positions[page_index], where[0]))
        entry = TocEntry(
            id=f"toc-{len(entries) + 1}",
            parent_id=stack[-1][1] if stack else None,
            title=title,
            target_page=page_index,
            target_section_id=section,
            level=f"l{min(len(stack) + 1, 6)}",
        )
        entries.append(entry)
        stack.append((level, entry.id))
    return entries
