"""The structure of a PDF's text layer: running headers and footers, printed contents pages, and headings
from font statistics or from the PDF's outline. Works on the ``Line`` records of ``pdf_layout``."""

from __future__ import annotations

import itertools
import math
import re
import statistics
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from ..tables import inverse, turned_box
from .pdf_contents import first_entry_line, is_contents_line, is_toc_page, leaders_to_page
from .pdf_layout import COLUMN_MIN_WIDTH, Line, PageLines

__all__ = [
    "body_size",
    "detect_headings",
    "find_running_lines",
    "normalise_title",
    "outline_headings",
]

#: The most words a heading's line (or a numbered title hanging over two) may have.
TITLE_WORDS = 18
#: The most words a title ending in a colon may have ("Participant Identification:").
COLON_TITLE_WORDS = 6
#: The most words a title marked only by a weak cue (capitals, italics, numbering, another font) may have.
WEAK_TITLE_WORDS = 12  # (italics and another font: capitals and numbering mark long Item titles too)
#: A line this many times taller than its font size is set on end (running up or down the page).
ON_END = 2.5
#: Lines of a column's width on each side of the middle that make a page one of two columns.
COLUMN_LINES = 5
#: Columns measured against the type area are of one width: each within this share of their median.
TILE_SLACK = 0.2
HEADER_BAND = 0.09  # top and bottom share of the page where running headers and footers live

# A bullet or enumerator opening a list item: "•", "-", "1.", "(a)", "(iv)".
BULLET = re.compile(r"^(?:[•●▪■◦○‣∙·\-–—*]|\(?[0-9]{1,2}[.)]|\(?[a-z][.)]|\([ivx]{1,4}\))\s+(?=\S)")
# A title that may end in a period: numbered ("Item 4. Controls and Procedures.") or of four words at most.
_ENDS_TITLE = re.compile(
    r"^(?:(?:part|item|article|section|chapter|note)\s*[0-9ivxlc]+[a-z]?[.:\s]|\S+(?:\s+\S+){0,3}$)",
    re.IGNORECASE,
)
_SYMBOL_BULLET = re.compile(r"^[•●▪■◦○‣∙·\-–—*]\s")
_NUMBERED_PART = re.compile(r"^(part|article|chapter|book|title)\s+([0-9]+|[ivxlc]+)\b", re.IGNORECASE)
_NUMBERED_ITEM = re.compile(r"^(item|section|§)\s*[0-9]+[a-z]?\b", re.IGNORECASE)
# A numbering label that may stand apart from its title: "ITEM 1A.", "PART II", "Note 4", "3.2", "IV."
_LABEL = re.compile(
    r"^(?:(?:part|item|article|section|chapter|note|schedule|exhibit|appendix)\s*[0-9ivxlc]+[a-z]?(?:\([a-z]\))?"
    r"|[0-9]+(?:\.[0-9]+)*|[ivxlc]+|[a-z])\.?$",
    re.IGNORECASE,
)
# A section number opening a line: "I.", "IV.", "2", "3.1", "A." (small capitals' headings in papers).
_SECTION_NUMBER = re.compile(r"^([0-9]{1,2}(?:\.[0-9]{1,2})*\.?|[IVXLC]{1,5}\.|[A-Z]\.)\s+\S")
# A caption or a source line, which may stand alone in italics or capitals: "Figure 3.", "TABLE 2", "Source:".
_CAPTION = re.compile(
    r"^(?:figure|fig\.|table|chart|graph|plate|photo|example|listing|algorithm|source|sources)\s*(?:[0-9ivxlc]|:)",
    re.IGNORECASE,
)
# Code: placeholders, assignments, blocks, a statement's end before more code, calls ("WHERE <logic>",
# "x = 1;", "{", "a;b", "f()"). A semicolon before a word ("Liquidity; Capital Resources") and a lone "<" or
# ">" ("Revenue > 5%") are a title's punctuation.
_CODE = re.compile(r"<[^<>\s][^<>]*>|[{}=]|;(?!\s+\w)|\w\(\)")
# A running title followed by its page number: "Chapter 2. Roles and separation of duties 11" (two words
# or more before a number of one to three digits; a number before a title is as often a section's, and
# four digits a year's).
_PAGED_TITLE = re.compile(r"^\S+\s+\S.*\s[0-9]{1,3}$")
# A running title after its page number: "52 3.3. ÜBERLAGERUNGEN" (a book's even pages; repeated on two
# pages or more, digits ignored, where a section's own number would differ).
_PAGE_FIRST = re.compile(r"^[0-9]{1,3}\s+\S.*\S$")
_PAGE_NUMBER = re.compile(r"^\W*(?:page\s*)?#+(?:\s*(?:of|/)\s*#+)?\W*$")
_NOT_WORD = re.compile(r"[\W_]+")
FILENAME_TITLE = re.compile(
    r"\.(docx?|pdf|xlsx?|pptx?|indd|qxd)$|^microsoft (word|powerpoint)", re.IGNORECASE
)


def normalise_title(text: str) -> str:
    """Lower case, letters and digits only, single spaces: for comparing titles."""
    return " ".join(_NOT_WORD.sub(" ", text.lower()).split())


# -- running headers and footers -----------------------------------------------------------------------


def _band_key(line: Line) -> str:
    return re.sub(r"\d+", "#", " ".join(line.text.lower().split()))


def find_running_lines(pages: Sequence[PageLines]) -> dict[tuple[int, int], str]:
    """Lines that are running headers or footers: ``(page position, line position) -> "header" | "footer"``.

    A line in the top (bottom) band is a header (footer) when the same text, digits ignored, stands in
    that band on at least a quarter of the pages (and on two at least). A lone page number is a footer
    or header wherever the document has two pages or more.
    """
    if len(pages) < 2:
        return {}
    seen: dict[tuple[str, str], set[int]] = {}
    candidates: list[tuple[int, int, str, str]] = []
    for page_position, page in enumerate(pages):
        for line_position, line in enumerate(page.lines):
            band = _band(line.bbox, page.height)
            x0, y0, x1, y1 = line.bbox
            if band is None and page.turn is not None and y1 - y0 > x1 - x0:
                # A page read turned may keep the document's header and footer across the turn, in its
                # own top and bottom bands (a landscape table on a journal's portrait page): a line that
                # runs across the turn (up or down the page as read; a chart's tick label near the
                # page's edge reads along it).
                band = _band(turned_box(line.bbox, inverse(page.turn)), page.own_size[1])
            if band is None:
                continue
            key = _band_key(line)
            seen.setdefault((band, key), set()).add(page_position)
            candidates.append((page_position, line_position, band, key))
    threshold = max(2, math.ceil(len(pages) * 0.25))
    found = {}
    for page_position, line_position, band, key in candidates:
        pages_seen = len(seen[(band, key)])
        # A chapter's running title beside its page number repeats only over the chapter's pages.
        if (
            pages_seen >= threshold
            or _PAGE_NUMBER.match(key)
            or (
                pages_seen >= 2
                and (
                    _PAGED_TITLE.match(pages[page_position].lines[line_position].text)
                    or _PAGE_FIRST.match(pages[page_position].lines[line_position].text)
                )
            )
        ):
            found[(page_position, line_position)] = band
    return found


def _band(box: Sequence[float], height: float) -> str | None:
    """ "header" for a box in the top band of a page ``height`` points high, "footer" in the bottom one."""
    if box[3] <= height * HEADER_BAND:
        return "header"
    if box[1] >= height * (1 - HEADER_BAND):
        return "footer"
    return None


# -- headings from font statistics -------------------------------------------------------------------


def body_size(pages: Iterable[PageLines]) -> float:
    """The font size that most characters are set in."""
    weights: Counter[float] = Counter()
    for page in pages:
        for line in page.lines:
            weights[line.size] += line.chars
    return weights.most_common(1)[0][0] if weights else 10.0


def _other_column(line: Line, other: Line, page: PageLines) -> bool:
    """Whether ``other`` is running text of the other text column (so it says nothing about ``line``):
    the two lie on opposite sides of the page's middle and ``other`` is a column's width of text."""
    middle, margin = page.width / 2, page.width * 0.02
    apart = (line.bbox[2] <= middle + margin and other.bbox[0] >= middle - margin) or (
        other.bbox[2] <= middle + margin and line.bbox[0] >= middle - margin
    )
    return (
        apart
        and other.bbox[2] - other.bbox[0] >= page.width * COLUMN_MIN_WIDTH
        and other.max_gap < 2 * other.size
    )


def _column_page(page: PageLines) -> list[tuple[float, float]]:
    """The columns a page is set in, as ``(left, right)`` spans, when it has two or more; an empty list for
    a page of one column.

    A column is five lines or more of running text (a fifth of the page wide at least, half of it at
    most, no wide gaps) starting at one left edge; its span runs to their median right edge, and a left
    edge inside the span before it is an indent, not a column. A page with five such lines on each side
    of its middle has its two halves at least (a paper's two columns; an instructions book has three; a
    statement's labels and figures make no such lines). Failing those, columns measured against the type
    area instead of the paper count when they tile it (see :func:`_tiled_columns`).
    """
    middle = page.width / 2
    columns, left, right = _columns_measured(page, page.width)
    if len(columns) >= 2:
        return columns
    if left >= COLUMN_LINES and right >= COLUMN_LINES:
        return [(0.0, middle), (middle, page.width)]
    return _tiled_columns(page)


def _columns_measured(page: PageLines, measure: float) -> tuple[list[tuple[float, float]], int, int]:
    """The columns of running-text lines a fifth to a half of ``measure`` wide (see :func:`_column_page`),
    and how many such lines stand left and right of the page's middle."""
    middle, margin = page.width / 2, page.width * 0.02
    starts: list[tuple[float, list[float]]] = []  # (left edge, right edges of its lines)
    left = right = 0
    for line in sorted(page.lines, key=lambda item: item.bbox[0]):
        width = line.bbox[2] - line.bbox[0]
        if width < measure * COLUMN_MIN_WIDTH or line.max_gap >= 2 * line.size:
            continue
        if line.bbox[2] <= middle + margin:
            left += 1
        elif line.bbox[0] >= middle - margin:
            right += 1
        if width > measure / 2:
            continue  # across the page (a title, a caption over two columns): in no column
        if starts and line.bbox[0] - starts[-1][0] <= margin:
            starts[-1][1].append(line.bbox[2])
        else:
            starts.append((line.bbox[0], [line.bbox[2]]))
    columns: list[tuple[float, float]] = []
    for edge, rights in starts:
        if len(rights) >= COLUMN_LINES and not (columns and edge < columns[-1][1]):
            columns.append((edge, statistics.median(rights)))
    return columns, left, right


def _tiled_columns(page: PageLines) -> list[tuple[float, float]]:
    """Columns measured against the page's type area (as far as its lines reach from left to right), kept
    when they tile it as set text does: two or more, of one width (within :data:`TILE_SLACK` of their
    median), the first starting at the type area's left edge, the last ending within a fifth of a column
    of its right edge, and gutters of half a column at most between them; and not opening each with an
    emphasised line on one band (a table's header row). A LaTeX manual's index in
    three columns on a page of wide margins has columns of a sixth of the paper, too narrow for
    :func:`_column_page`'s own measure; the columns of a table (a term and its description, a label and
    its cells) differ in width, stand far apart or leave the type area's rest to the text around them."""
    top, bottom = page.height * HEADER_BAND, page.height * (1 - HEADER_BAND)
    text = [
        line
        for line in page.lines
        if line.bbox[3] - line.bbox[1] <= ON_END * line.size
        and top < (line.bbox[1] + line.bbox[3]) / 2 < bottom
    ]
    if not text:
        return []
    # (The type area leaves out the margins' furniture: text on end, running headers and page numbers.)
    area_left = min(line.bbox[0] for line in text)
    area_right = max(line.bbox[2] for line in text)
    columns, _, _ = _columns_measured(page, area_right - area_left)
    if len(columns) < 2:
        return []
    widths = sorted(x1 - x0 for x0, x1 in columns)
    usual = widths[len(widths) // 2]
    margin = page.width * 0.02
    if (
        widths[0] < (1 - TILE_SLACK) * usual
        or widths[-1] > (1 + TILE_SLACK) * usual
        or columns[0][0] > area_left + margin
        or columns[-1][1] < area_right - 0.2 * usual
        or any(after[0] - before[1] > usual / 2 for before, after in itertools.pairwise(columns))
    ):
        return []
    # A table of text cells written column by column opens every column with its header, emphasised, on
    # one band: a row of cells, not columns of set text.
    opening = [
        min(
            (line for line in text if _column_of(line, page, columns) == span),
            key=lambda line: line.bbox[1],
            default=None,
        )
        for span in columns
    ]
    heads = [line for line in opening if line is not None]
    usual_size = statistics.median(line.size for line in text)
    if (
        len(heads) == len(columns)
        and all(line.bold or line.size > usual_size for line in heads)
        and all(
            min(line.bbox[3], heads[0].bbox[3]) - max(line.bbox[1], heads[0].bbox[1])
            > 0.5 * min(line.bbox[3] - line.bbox[1], heads[0].bbox[3] - heads[0].bbox[1])
            for line in heads
        )
    ):
        return []
    return columns


def _column_of(
    line: Line, page: PageLines, columns: Sequence[tuple[float, float]]
) -> tuple[float, float] | None:
    """The column of ``columns`` a line stands in (its left edge within the column's span), if any."""
    margin = page.width * 0.02
    return next((span for span in columns if span[0] - margin <= line.bbox[0] < span[1]), None)


def _is_table_row(line: Line, page: PageLines, columns: Sequence[tuple[float, float]] = ()) -> bool:
    """Other text beside the line on the same band: a row of a table or statement, not a heading.
    Running text of the other column of a two-column page does not count; on a page set in ``columns``
    (see :func:`_column_page`), nothing outside the line's own column does (a paragraph's last line or a
    table's row there is no cell of this line); nor does text running up or down the page."""
    height = line.bbox[3] - line.bbox[1]
    middle, margin = page.width / 2, page.width * 0.02
    own = _column_of(line, page, columns)
    for other in page.lines:
        if other is line or other.bbox[3] - other.bbox[1] > ON_END * other.size:
            continue  # (text set on end, as arXiv's stamp in the margin, stands beside every line)
        overlap = min(line.bbox[3], other.bbox[3]) - max(line.bbox[1], other.bbox[1])
        if overlap <= 0.5 * height:
            continue
        if columns and (
            (own is not None and (other.bbox[2] <= own[0] + margin or other.bbox[0] >= own[1] - margin))
            or (line.bbox[2] <= middle + margin and other.bbox[0] >= middle - margin)
            or (other.bbox[2] <= middle + margin and line.bbox[0] >= middle - margin)
        ):
            continue  # in another column of the page (its own span, or the other half of the page)
        if not _other_column(line, other, page):
            return True
    return False


# A heading's cue: set larger or bold (font cues), or, at body size, underlined, in capitals, numbered
# ("Item 4.", "PART II") or in italics; or, smaller than the body, in small capitals ("I. INTRODUCTION" in
# 8 pt capitals on a 10 pt body, its initials often at body size). Running text uses all but the font cues
# (links are underlined, names and table captions are in capitals, emphasis and notes in italics), so a
# line with only one of them must stand alone in its unit and introduce running text, and is no caption.
FONT_CUES = ("size", "bold")


def _in_capitals(text: str) -> bool:
    """Whether the text is set in capitals: four or more, and most of its letters (Latin capitals in a
    Korean or Chinese sentence, "기후변화, SARS, MERS", are no capitals line)."""
    capitals = sum(map(str.isupper, text))
    return capitals >= 4 and capitals >= 0.8 * sum(map(str.isalpha, text))


def heading_cue(line: Line, body: float) -> str | None:
    """What sets the line apart as a possible heading: "size", "bold", "underline", "caps", "numbered",
    "italic", "font" (another font than the running text's), or ``None``."""
    if line.size >= body * 1.15 or line.size >= body + 1:
        return "size"
    if line.size < body * 0.85:
        small_caps = (
            line.size >= body * 0.7
            and (line.caps or line.small_caps or line.max_size >= body * 0.95)
            and _SECTION_NUMBER.match(line.text) is not None
            and sum(map(str.isalpha, line.text)) >= 4
        )
        return "caps" if small_caps else None
    if line.bold:
        return "bold"
    if line.underlined:
        return "underline"
    if line.caps and _in_capitals(line.text):
        return "caps"
    if _NUMBERED_PART.match(line.text) or _NUMBERED_ITEM.match(line.text):
        return "numbered"
    if line.italic:
        return "italic"
    if line.small_caps:
        return "caps"
    if line.apart:
        return "font"
    return None


def _colon_title(line: Line, body: float) -> bool:
    """Whether a line ending in a colon may be a title: set larger or bold and of a few words
    ("Participant Identification:"); it must then stand alone before running text or a title."""
    return len(line.text.split()) <= COLON_TITLE_WORDS and heading_cue(line, body) in FONT_CUES


def _hangs_under(line: Line, following: Line) -> bool:
    """Whether ``following`` continues a numbered title hanging under its words ("3.3 Vorüberlegungen und
    … bei der" / "    Erstellung barrierefreier Dokumente"): indented by about the number's width, and of a
    title's length in all (a numbered question of a form, hanging the same way, runs longer)."""
    number = _SECTION_NUMBER.match(line.text)
    indent = following.bbox[0] - line.bbox[0]
    return (
        number is not None
        and 0.5 * line.size <= indent <= line.size * (0.6 * len(number[1]) + 2.5)
        and len(line.text.split()) + len(following.text.split()) <= TITLE_WORDS
    )


#: A numbered title stands at most this many of its line heights over its first subsection.
SUBSECTION_GAP = 2.5
# The number of a numbered title: "2.2", "2.2.1." (one or two digits a part).
_OUTLINE_NUMBER = re.compile(r"^([0-9]{1,2}(?:\.[0-9]{1,2})*)\.?\s+(?=\S)")


# A title's number, touching its first word or not: "4.Study Population", "4.1 Number of Cases".
_TITLE_NUMBER = re.compile(r"^([0-9]{1,2}(?:\.[0-9]{1,2})*)(?:\.\s*|\s+)(?![a-z])[^\W\d_]")


def _numbered_under(line: Line, following: Line) -> bool:
    """Whether ``following`` opens with a number under the one ``line`` opens with ("4.Study Population"
    over "4.1 Number of Cases"): two titles, one over the other, not one title wrapped or a paragraph (a
    run of footnotes or list items, "1 ..." over "2 ...", is neither)."""
    number = _TITLE_NUMBER.match(line.text)
    below = _TITLE_NUMBER.match(following.text)
    return number is not None and below is not None and below.group(1).startswith(number.group(1) + ".")


def _title_words(text: str) -> str:
    """A line's text after its section number, if it opens with one ("1.2.3.2. Funding" -> "Funding"): what
    a title's shape is judged by."""
    number = _OUTLINE_NUMBER.match(text)
    return text[number.end() :] if number else text


def _one_level_under(above: str, below: str) -> bool:
    """Whether section number ``below`` is ``above`` with one more part ("2.2" and "2.2.1")."""
    return below.startswith(above + ".") and below.count(".") == above.count(".") + 1


def _opens_subsection(line: Line, following: Line, last: Line | None = None) -> bool:
    """Whether ``following`` opens the first level under the numbered title ``line`` (whose last line is
    ``last``, when it wraps): right under it (at most :data:`SUBSECTION_GAP` times its size apart; line
    boxes set tight may overlap by half of it), set no larger, its number the title's with one more part
    ("2.2" over "2.2.1"). (A section's running header over the page's first subheading, set smaller, is no
    title.)"""
    last = line if last is None else last
    number = _OUTLINE_NUMBER.match(line.text)
    below = _OUTLINE_NUMBER.match(following.text)
    return (
        number is not None
        and below is not None
        and _one_level_under(number.group(1), below.group(1))
        and following.size <= line.size
        and -0.5 * line.size <= following.bbox[1] - last.bbox[3] <= SUBSECTION_GAP * line.size
    )


def _heads_its_unit(last: Line, following: Line, extent: tuple[float, float]) -> bool:
    """Whether a title's ``last`` line, at the head of a unit, stands apart from the ``following`` line: it
    ends short of the unit's width (a wrapped sentence fills it) and a sentence starts below it."""
    left, right = extent
    first = next((char for char in following.text if char.isalnum()), "")
    return last.bbox[2] < right - 0.15 * (right - left) and (first.isupper() or first.isdigit())


def _introduces_text(
    page: PageLines, after: int, body: float, columns: Sequence[tuple[float, float]] = ()
) -> bool:
    """Whether the unit starting at line ``after`` is running text: body type, no cue of its own, and a
    paragraph (two lines or more, or a line across much of the page, or of its column on a page set in
    ``columns``)."""
    lines = page.lines
    if after >= len(lines):
        return False
    first = lines[after]
    if heading_cue(first, body) is not None or first.max_gap > 2 * first.size:
        return False
    unit = [line for line in lines[after : after + 3] if line.block == first.block]
    own = _column_of(first, page, columns)
    width = own[1] - own[0] if own is not None else page.width
    return len(unit) >= 2 or first.bbox[2] - first.bbox[0] >= 0.4 * width


def _heading_like(line: Line, body: float, continuation: bool = False) -> bool:
    """Whether a line may be (part of) a heading; a ``continuation`` line of a wrapped title may start in
    lower case ("Implement roles and separation" / "of duties")."""
    text = line.text
    if len(text) > 150 or len(text.split()) > TITLE_WORDS:
        return False  # checked first: most lines of a page are running text
    letters = sum(map(str.isalpha, text))
    if letters < 2 and not _INDEX_LETTER.match(text):
        return False  # (a capital alone may head a group of an index: kept only in a series, see below)
    if leaders_to_page(text):
        return False  # a contents entry: dot leaders to its page number ("2.1 PRINCIPES ....... 16")
    # (Measured on the words after a section number: "1.2.3.2. Funding" is a title of one word.)
    if letters < 0.5 * len(_title_words(text).replace(" ", "")):
        return False  # mostly figures: a statement line
    if text.endswith((",", ";")):
        return False  # running text goes on
    if text.endswith(":") and not _LABEL_LINE.match(text) and not _colon_title(line, body):
        return False  # (but a label may end in a colon, "Appendix A:", and so may a short title set apart)
    if text.endswith(".") and not _LABEL.match(text) and not _ENDS_TITLE.match(text):
        return False  # a sentence; short or numbered titles may end in a period ("Item 4. Controls.")
    if _SYMBOL_BULLET.match(text):
        return False  # "• Revenue of $8.6 billion": a list item, however bold
    first_letter = next((char for char in text if char.isalpha()), "")
    if first_letter.islower() and not BULLET.match(text) and not continuation and not line.capital_opening:
        return False  # a sentence going on from the line before (unless small capitals draw it a capital)
    if text.startswith("(") and not BULLET.match(text):
        return False  # "(in millions)", "(continued)"
    if line.max_gap > 2 * line.size and not (line.pieces == 2 and _LABEL.match(line.lead)):
        return False  # cells of a table row set apart by wide gaps (but "ITEM 1.<tab>Business" is a title)
    cue = heading_cue(line, body)
    if cue is None:
        return False
    if _CODE.search(text) or (line.mono and cue != "size"):
        return False  # code, however bold or large: "CREATE PERMISSION <permission name>"
    return cue in FONT_CUES or _CAPTION.match(text) is None


def _style_key(line: Line) -> tuple[float, bool, bool, bool]:
    return (line.size, line.bold, line.caps, line.italic)


def _drop_heading_lists(
    groups: list[tuple[int, list[int]]], pages: Sequence[PageLines], running: dict[tuple[int, int], str]
) -> list[tuple[int, list[int]]]:
    """Drop runs of three or more short same-style "headings" with no text between them.

    A heading introduces content. Names in a signature block, entries of a printed contents page or a
    column of labels look like headings one by one, but they are short and follow each other with
    nothing in between. Stacked titles stay: longer ones (company / statement / note) and numbered ones
    (PART I / ITEM 1. BUSINESS / OVERVIEW).
    """
    in_heading = {(where, member) for where, members in groups for member in members}
    kept: list[tuple[int, list[int]]] = []
    run: list[tuple[int, list[int]]] = []

    def close_run() -> None:
        texts = [" ".join(pages[where].lines[member].text for member in members) for where, members in run]
        short = all(len(text.split()) <= 4 for text in texts)
        numbered = any(_NUMBERED_PART.match(text) or _NUMBERED_ITEM.match(text) for text in texts)
        # Titles each numbered one level under the one before ("3 Results" / "3.1 Overview" / "3.1.1
        # Data") are a section opening its subsections, not a list of labels.
        found = [_OUTLINE_NUMBER.match(text) for text in texts]
        numbers = [match[1] for match in found if match is not None]
        chain = len(numbers) == len(texts) and all(
            _one_level_under(above, below) for above, below in itertools.pairwise(numbers)
        )
        if len(run) < 3 or not short or numbered or chain:
            kept.extend(run)
        run.clear()

    previous_end: tuple[int, int] | None = None
    for where, members in groups:
        style = _style_key(pages[where].lines[members[0]])
        if run and previous_end is not None:
            between = _has_text_between(previous_end, (where, members[0]), pages, running, in_heading)
            same = _style_key(pages[run[-1][0]].lines[run[-1][1][0]]) == style
            if between or not same:
                close_run()
        run.append((where, members))
        previous_end = (where, members[-1])
    close_run()
    return kept


def _has_text_between(
    start: tuple[int, int],
    end: tuple[int, int],
    pages: Sequence[PageLines],
    running: dict[tuple[int, int], str],
    in_heading: set[tuple[int, int]],
) -> bool:
    """Whether body text stands between two lines (exclusive), in reading order across pages."""
    where, position = start[0], start[1] + 1
    while (where, position) < end:
        if position >= len(pages[where].lines):
            where, position = where + 1, 0
            continue
        if (where, position) not in running and (where, position) not in in_heading:
            return True
        position += 1
    return False


def _page_heading_groups(
    page_position: int,
    page: PageLines,
    running: dict[tuple[int, int], str],
    body: float,
    repeated: set[str] | frozenset[str] = frozenset(),
    page_count: int | None = None,
) -> list[list[int]]:
    """The line positions of each heading found on one page (see :func:`detect_headings`)."""
    found: list[list[int]] = []
    lines = page.lines
    # The entries of a printed contents page are not this page's headings; its title and the headings
    # above its first entry are.
    end = first_entry_line(page) if is_toc_page(page, page_count) else len(lines)
    # Below a contents page's title ("Table of Contents"), "PART I" lines group its entries.
    titled = next(
        (position for position, line in enumerate(lines[:end]) if is_contents_line(line)), len(lines)
    )
    titled = titled if end < len(lines) else len(lines)
    extent: dict[int, tuple[float, float]] = {}
    for line in lines:
        left, right = extent.get(line.block, (line.bbox[0], line.bbox[2]))
        extent[line.block] = (min(left, line.bbox[0]), max(right, line.bbox[2]))

    def wraps(line: Line, following: Line) -> bool:
        # A wrapped title fills its block and goes on at the same left edge. Centred lines stacked in one
        # unit continue one title ("UNITED STATES" / "SECURITIES AND EXCHANGE COMMISSION"), unless the
        # first repeats on other pages: a company's name over each statement's title is a label of its own.
        left, right = extent[line.block]
        fills = line.bbox[2] >= right - 0.15 * (right - left)
        if fills and abs(following.bbox[0] - line.bbox[0]) <= 2:
            return True
        if fills and _hangs_under(line, following):
            return True
        centre = (line.bbox[0] + line.bbox[2]) / 2
        following_centre = (following.bbox[0] + following.bbox[2]) / 2
        off_left = line.bbox[0] - left > 0.05 * page.width or following.bbox[0] - left > 0.05 * page.width
        return (
            off_left
            and abs(centre - following_centre) <= 0.02 * page.width
            and normalise_title(line.text) not in repeated
        )

    top, bottom = page.height * HEADER_BAND, page.height * (1 - HEADER_BAND)
    columns = _column_page(page)

    def _titles_label(label: Line, after: int) -> bool:
        # The line below a label line ("Annex B", "Appendix A:", "CHAPTER ONE:") is its title when it is
        # close below it, a heading candidate as prominent as the label (or set the same), and not a
        # numbered heading of its own ("PART I" / "Item 1. Business" are two).
        if after >= len(lines) or (page_position, after) in running:
            return False
        title = lines[after]
        return (
            0 <= title.bbox[1] - label.bbox[3] <= 2.5 * label.size
            and _LABEL_WORD.match(title.text) is None
            and _SECTION_NUMBER.match(title.text) is None
            and candidate(after)
            and (heading_cue(title, body) in FONT_CUES or _style_key(title) == _style_key(label))
        )

    def among_code(position: int) -> bool:
        # A line set as the code around it ("FOR ROWS" between "AS <correlation name>" and "WHERE <logic>")
        # is code: the nearest lines of its size and left edge, before and after, hold code characters.
        line = lines[position]

        def code(span: Iterable[Line]) -> bool:
            for other in span:
                if other.size == line.size and abs(other.bbox[0] - line.bbox[0]) <= 2:
                    return _CODE.search(other.text) is not None
            return False

        return code(reversed(lines[max(0, position - 3) : position])) and code(
            lines[position + 1 : position + 4]
        )

    def runs_on(after: int) -> bool:
        # Two more lines of the title's style below it in its unit: the unit is a paragraph set large.
        return (
            after + 1 < len(lines)
            and lines[after + 1].block == lines[after].block
            and _style_key(lines[after + 1]) == _style_key(lines[after])
        )

    def candidate(position: int, continuation: bool = False) -> bool:
        line = lines[position]
        if (page_position, position) in running or not _heading_like(line, body, continuation):
            return False
        if (line.bbox[3] <= top or line.bbox[1] >= bottom) and _PAGED_TITLE.match(line.text):
            return False  # a running title with its page number, on a page of its chapter alone
        return not among_code(position)

    position = 0
    heading_end = -1  # the line after the last heading found on this page
    while position < len(lines):
        line = lines[position]
        grouping = position > titled and _NUMBERED_PART.match(line.text)  # "PART I" grouping the entries
        if (position >= end and not is_contents_line(line)) or grouping:
            position += 1  # an entry of the contents
            continue
        # A heading opens its unit, or follows a heading or a running header written into the same block.
        starts = (
            position == 0
            or lines[position - 1].block != line.block
            or position == heading_end
            or (page_position, position - 1) in running
        )
        if not starts or not candidate(position):
            position += 1
            continue
        members = [position]
        # A bold or larger numbered title is told apart from its subsection's title set under it (a weak
        # one, in italics or capitals, stays whole: both lines are weak, neither would stand alone).
        strong = heading_cue(line, body) in FONT_CUES
        while (
            len(members) < 3
            and position + len(members) < len(lines)
            and lines[position + len(members)].block == line.block
            and _style_key(lines[position + len(members)]) == _style_key(line)
            and wraps(lines[members[-1]], lines[position + len(members)])
            and not (strong and _numbered_under(line, lines[position + len(members)]))
            and candidate(position + len(members), continuation=True)
        ):
            members.append(position + len(members))
        after = position + len(members)
        if len(members) == 1 and _LABEL_LINE.match(line.text) and _titles_label(line, after):
            members.append(after)  # "Annex B" / "Optional mixed mode": one title, wrapped as a title wraps
            while (
                len(members) < 4
                and after + 1 < len(lines)
                and lines[after + 1].block == lines[after].block
                and _style_key(lines[after + 1]) == _style_key(lines[after])
                and wraps(lines[after], lines[after + 1])
                and candidate(after + 1, continuation=True)
            ):
                after += 1
                members.append(after)
            after += 1
        follows = after < len(lines) and lines[after].block == line.block
        # The first line of a bold paragraph is no heading: the same style goes on as running text.
        # (Also when its last line runs on into the next: three lines of a paragraph are no title.)
        bold_paragraph = (
            follows
            and _style_key(lines[after]) == _style_key(line)
            # (a bold or larger title over its subsection's title)
            and not (strong and _numbered_under(lines[after - 1], lines[after]))
            # (two lines wrapped and a third of the same style: a paragraph set large, whatever its edge)
            and (
                not candidate(after)
                or wraps(lines[after - 1], lines[after])
                or (len(members) >= 2 and runs_on(after))
            )
            and not lines[after].text.startswith("(")  # "(unaudited; in millions)" is a note, not text
        )
        # Capitals, numbering or italics alone mark a heading only when it introduces running text: in a unit
        # of its own, or at the head of its unit, ending short of the unit's width with a sentence starting
        # below it ("Elastic Stop Nut" / "The elastic stop nut is...").
        # Such a title is short: a dozen words (longer lines in italics are quotations and citations).
        # A numbered title may stand right over its first subsection ("2.2 Basic coding scheme" over "2.2.1
        # Principle of the coding scheme"), which introduces the running text.
        weak = heading_cue(line, body) not in FONT_CUES and (
            (follows and not _heads_its_unit(lines[after - 1], lines[after], extent[line.block]))
            or not (
                _introduces_text(page, after, body, columns)
                or (
                    after < len(lines)
                    and _opens_subsection(line, lines[after], lines[after - 1])
                    and candidate(after)
                )
            )
            or (
                heading_cue(line, body) in ("italic", "font")
                and sum(len(lines[member].text.split()) for member in members) > WEAK_TITLE_WORDS
            )
        )
        # A title ending in a colon stands alone before running text (or a title of its own kind: "Participant
        # Identification:" / "Screening and identification:"); a label over a name or a date is no title.
        last = lines[members[-1]]
        if last.text.endswith(":") and not _LABEL_LINE.match(last.text):
            subtitle = after < len(lines) and lines[after].text.endswith(":") and candidate(after)
            weak = weak or follows or not (_introduces_text(page, after, body, columns) or subtitle)
        if (
            not bold_paragraph
            and not weak
            and not any(_is_table_row(lines[m], page, columns) for m in members)
        ):
            found.append(members)
            heading_end = after
        position = after
    return found


#: How many numbers a label must open units with ("Item 1", "Item 2", "Item 3") to make a series.
SERIES_NUMBERS = 3
# A unit opening with a numbering label: "Item 3.", "SECTION 4", "Article IV".
# (A number may touch its word, "Item1A"; a Roman numeral is a word of its own: "Parti" is no label.)
_LABEL_OPENING = r"^(item|section|article|part|chapter|note)(?:\s*([0-9]+[a-z]?)|\s+([ivxlc]+))\b"
_LABEL_WORD = re.compile(_LABEL_OPENING, re.IGNORECASE)
# A line that is a label alone, its title on the line below: "Annex B", "Appendix A:", "CHAPTER ONE:".
_LABEL_LINE = re.compile(
    r"^(?:part|item|article|section|chapter|note|schedule|exhibit|appendix|annex|attachment)"
    r"(?:\s*[0-9]+[a-z]?|\s+(?:[ivxlc]+|[a-z]|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve))"
    r"\s*[.:]?$",
    re.IGNORECASE,
)
# A capital standing alone: a group of an index ("A", "B", ...).
_INDEX_LETTER = re.compile(r"^[A-Z]$")
# A title run into its text: "Item 3. Defaults Upon Senior Securities. None." (label, title ending in a
# period, then a sentence).
_RUN_IN = re.compile(rf"({_LABEL_OPENING}\.?\s+(\S[^.]{{1,118}}?)\.)\s+[\"“(]?[A-Z]", re.IGNORECASE)
_MINOR_WORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "as",
        "at",
        "by",
        "for",
        "from",
        "in",
        "into",
        "of",
        "on",
        "or",
        "the",
        "to",
        "upon",
        "with",
    ]
)


def _title_cased(title: str) -> bool:
    """Every word of the title but the small ones (of, and, upon...) starts with a capital."""
    words = [word for word in title.split() if word.lower() not in _MINOR_WORDS]
    return bool(words) and all(not word[0].isalpha() or word[0].isupper() for word in words)


def _run_in_headings(
    pages: Sequence[PageLines],
    running: dict[tuple[int, int], str],
    found: set[tuple[int, int]],
    page_count: int | None = None,
) -> dict[tuple[int, int], str]:
    """Titles run into the text that follows them, led by a label that continues a numbered series.

    A 10-Q's "Item 3. Defaults Upon Senior Securities. None." is one line: the label and a title in title
    case ending in a period, then a sentence (a word, not a page number). It is taken as the heading
    "Item 3. Defaults Upon Senior Securities." when it opens its unit (or follows a finished sentence),
    off a printed contents page, and the document's units open with that label and three numbers or more
    (Items 1, 1A, 2...): a series, not a reference in a sentence.

    Returns:
        ``(page position, line position) -> heading text`` (the rest of the line is the paragraph's).
    """
    openings: dict[str, set[str]] = {}
    candidates: list[tuple[int, int, str, str]] = []
    for where, page in enumerate(pages):
        lines = page.lines
        end: int | None = None  # where a printed contents page's entries start, read once a label is seen
        for position, line in enumerate(lines):
            label = _LABEL_WORD.match(line.text)
            if label is None or (where, position) in running:
                continue
            if not _starts_text(lines, position):
                continue
            if end is None:
                # The entries of a printed contents page ("Item 1. Business. 4") are not its titles.
                end = first_entry_line(page) if is_toc_page(page, page_count) else len(lines)
            if position >= end:
                break
            word, number = label.group(1).lower(), (label.group(2) or label.group(3)).lower()
            openings.setdefault(word, set()).add(number)
            match = _RUN_IN.match(line.text)
            if match is not None and (where, position) not in found and _title_cased(match.group(5)):
                candidates.append((where, position, word, match.group(1)))
    return {
        (where, position): title
        for where, position, word, title in candidates
        if len(openings.get(word, ())) >= SERIES_NUMBERS
    }


# A bold run-in title led by a subsection number: "2.1. High-degree centrality." (its number, its words).
_NUMBERED_RUN_IN = re.compile(r"^([0-9]{1,2}(?:\.[0-9]{1,2})+)\.?\s+([A-Z0-9].{0,118}?[.:])$")
# What opens a numbered note or a numbered statement, not a title: "3.1 **Note:**", "2.1. **Definition.**".
_RUN_IN_LABEL = re.compile(
    r"^(?:note|notes|warning|caution|danger|important|tip|hint|definition|lemma|theorem|proposition|"
    r"corollary|remark|example|proof|claim|conjecture|assumption|hypothesis|exercise|problem|solution)\b",
    re.IGNORECASE,
)


def _starts_text(lines: Sequence[Line], position: int) -> bool:
    """Whether the line at ``position`` opens its unit or follows a finished sentence (where a title run
    into its text may stand)."""
    return (
        position == 0
        or lines[position - 1].block != lines[position].block
        or lines[position - 1].text.endswith((".", ":"))
    )


def _numbered_run_in(
    pages: Sequence[PageLines], running: dict[tuple[int, int], str], texts: dict[tuple[int, int], str]
) -> dict[tuple[int, int], str]:
    """Bold titles run into their text, led by a subsection number: "2.1. **High-degree centrality.** In
    this method..." (LaTeX's run-in subsections and paragraphs).

    A line opening its unit whose bold run, after the number, ends in a period or a colon and is followed
    by plain text, is the heading "2.1. High-degree centrality." when the number's parent ("2") numbers a
    heading already found or another such title, and the document has three such titles or more (a
    numbered series, not a bold term in a numbered list); a numbered note or statement ("3.1 **Note:**",
    "2.1. **Definition.**") is none.

    Returns:
        ``(page position, line position) -> heading text`` (the rest of the line is the paragraph's).
    """
    candidates: dict[tuple[int, int], tuple[str, str]] = {}
    for where, page in enumerate(pages):
        lines = page.lines
        for position, line in enumerate(lines):
            if not line.bold_lead or (where, position) in running or (where, position) in texts:
                continue
            if not _starts_text(lines, position):
                continue
            match = _NUMBERED_RUN_IN.match(line.bold_lead)
            if (
                match is not None
                and len(match.group(2).split()) <= TITLE_WORDS
                and _RUN_IN_LABEL.match(match.group(2)) is None
            ):
                candidates[(where, position)] = (match.group(1), line.bold_lead)
    numbers = {number for number, _ in candidates.values()}
    numbers.update(found[1].rstrip(".") for text in texts.values() if (found := _SECTION_NUMBER.match(text)))
    kept = {key: title for key, (number, title) in candidates.items() if number.rsplit(".", 1)[0] in numbers}
    return kept if len(kept) >= SERIES_NUMBERS else {}


def _index_letters_in_series(
    groups: list[tuple[int, list[int]]], pages: Sequence[PageLines], body: float
) -> list[tuple[int, list[int]]]:
    """Keep a capital standing alone as a heading ("A", "B"... over an index's groups) only when it is set
    larger or bold and such capitals follow each other in alphabetical order, three or more: elsewhere a
    lone capital is a drop cap, a figure's panel or a grade."""
    letters = [
        (where, members)
        for where, members in groups
        if len(members) == 1 and _INDEX_LETTER.match(pages[where].lines[members[0]].text)
    ]
    kept: set[tuple[int, int]] = set()
    run: list[tuple[int, list[int]]] = []
    for where, members in [*letters, (-1, [-1])]:
        text = pages[where].lines[members[0]].text if where >= 0 else ""
        if run and text and text > pages[run[-1][0]].lines[run[-1][1][0]].text:
            run.append((where, members))
            continue
        if len(run) >= SERIES_NUMBERS and all(
            heading_cue(pages[w].lines[m[0]], body) in FONT_CUES for w, m in run
        ):
            kept.update((w, m[0]) for w, m in run)
        run = [(where, members)] if text else []
    return [
        (where, members)
        for where, members in groups
        if not (len(members) == 1 and _INDEX_LETTER.match(pages[where].lines[members[0]].text))
        or (where, members[0]) in kept
    ]


def detect_headings(
    pages: Sequence[PageLines], running: dict[tuple[int, int], str], page_count: int | None = None
) -> dict[tuple[int, int], tuple[int, str, int]]:
    """Headings by font statistics: ``(page position, first line position) -> (level, text, line count)``.

    A heading starts a block (or follows another heading in it: stacked title lines) and may wrap over up
    to three lines of the same style; wrapped lines, which reach across the block, are merged.
    """
    body = body_size(pages)
    # A line set in another font than the running text's stands apart (a weak cue, like italics).
    fonts: Counter[str] = Counter()
    for page in pages:
        for line in page.lines:
            fonts[line.font] += line.chars
    body_font = fonts.most_common(1)[0][0] if fonts else ""
    for page in pages:
        for line in page.lines:
            line.apart = line.font != body_font
    # Lines that repeat on many pages (a company's name over each statement) are labels of their own.
    seen = Counter(
        normalise_title(line.text)
        for page in pages
        for line in page.lines
        if len(line.text) <= 150 and heading_cue(line, body) is not None
    )
    limit = max(4, len(pages) * 0.1)
    repeated = {text for text, count in seen.items() if count >= limit}
    groups = [
        (page_position, members)
        for page_position, page in enumerate(pages)
        for members in _page_heading_groups(page_position, page, running, body, repeated, page_count)
    ]
    groups = _drop_heading_lists(groups, pages, running)
    groups = _index_letters_in_series(groups, pages, body)
    texts = {
        (where, members[0]): " ".join(pages[where].lines[m].text for m in members)
        for where, members in groups
    }
    run_in = _run_in_headings(pages, running, set(texts), page_count)
    run_in.update(_numbered_run_in(pages, running, texts))
    groups = sorted(
        [*groups, *((where, [position]) for where, position in run_in)], key=lambda g: (g[0], g[1])
    )
    texts.update(run_in)
    # A "heading" repeated on many pages is page furniture ("Table of Contents" links, "(in millions)").
    repeats = Counter(normalise_title(text) for text in texts.values())
    groups = [
        (where, members)
        for where, members in groups
        if repeats[normalise_title(texts[(where, members[0])])] < limit
    ]

    def numbered(text: str) -> int:
        return 1 if _NUMBERED_PART.match(text) else 2 if _NUMBERED_ITEM.match(text) else 0

    def prominence(style: tuple[float, bool, bool, bool]) -> tuple[float, bool, bool, bool]:
        return (-style[0], not style[1], not style[2], not style[3])  # larger, bold, capitals, italics first

    kinds = {(where, members[0]): numbered(texts[(where, members[0])]) for where, members in groups}
    if sum(1 for kind in kinds.values() if kind) < 3:
        # One or two "Section 3 ..." lines do not make a numbered hierarchy: every heading ranks by style.
        kinds = dict.fromkeys(kinds, 0)
    style_of = {(where, members[0]): _style_key(pages[where].lines[members[0]]) for where, members in groups}
    # Unnumbered headings set larger than the numbered ones (a cover's title) rank with the parts; the
    # others rank below the numbered levels, by style.
    numbered_sizes = Counter(style_of[key][0] for key, kind in kinds.items() if kind)
    reference = numbered_sizes.most_common(1)[0][0] if numbered_sizes else None
    below = {
        style_of[key]
        for key, kind in kinds.items()
        if not kind and (reference is None or style_of[key][0] <= reference)
    }
    rank = {style: number for number, style in enumerate(sorted(below, key=prominence))}
    raw: dict[tuple[int, int], float] = {}
    for key in kinds:
        if kinds[key]:
            raw[key] = kinds[key]  # PART-like 1, ITEM-like 2
        elif style_of[key] in rank:
            raw[key] = 3 + rank[style_of[key]]
        else:
            raw[key] = 1
    _nest_numbered_members(groups, texts, raw, {key for key, kind in kinds.items() if kind})
    # Levels are made dense (1, 2, 3...) in the same order, so no level is skipped.
    dense = {level: number for number, level in enumerate(sorted(set(raw.values())), start=1)}
    return {
        (where, members[0]): (
            min(dense[raw[(where, members[0])]], 6),
            texts[(where, members[0])],
            len(members),
        )
        for where, members in groups
    }


# A heading that names a numbered series ("Notes to Consolidated Financial Statements", "Exhibits") and the
# members of the series that follow it ("NOTE 4. LEASES", "Exhibit 21").
_SERIES = re.compile(
    r"^(notes|exhibits|schedules|appendices|appendixes|annexes|attachments)\b", re.IGNORECASE
)
_MEMBER = re.compile(r"^(note|exhibit|schedule|appendix|annex|attachment)\s*[0-9a-z]{1,3}\b", re.IGNORECASE)


def _nest_numbered_members(
    groups: list[tuple[int, list[int]]],
    texts: dict[tuple[int, int], str],
    raw: dict[tuple[int, int], float],
    numbered: set[tuple[int, int]],
) -> None:
    """Put the members of a numbered series under the heading that names the series, whatever their styles:
    NOTE n under "Notes to ... Financial Statements", Exhibit n under "Exhibits".

    The series heading is raised just above its members when its style ranks it below them, but never to
    or above the PART or ITEM it stands in; members that rank that high are put just under it. The series
    ends at the next heading that ranks with or above the series heading and is no member.
    """
    keys = [(where, members[0]) for where, members in groups]
    for number, key in enumerate(keys):
        series = _SERIES.match(texts[key])
        if series is None:
            continue
        label = series.group(1).lower()
        floor = next((raw[other] for other in reversed(keys[:number]) if other in numbered), 0.0)
        members: list[tuple[int, int]] = []
        level = raw[key]  # where the series heading will rank
        for other in keys[number + 1 :]:
            member = _MEMBER.match(texts[other])
            if member is not None and label.startswith(member.group(1).lower()[:4]):
                members.append(other)
                level = max(min(level, raw[other] - 0.5), floor + 0.25)
            elif raw[other] <= level:
                break
        if len(members) >= 2:
            raw[key] = level
            for member_key in members:
                if raw[member_key] <= level:
                    raw[member_key] = level + 0.125


# -- headings from the outline ------------------------------------------------------------------------


def _find_title(
    title: str, page: PageLines, running: dict[tuple[int, int], str], page_position: int
) -> tuple[int, int] | None:
    """Where ``title`` stands on the page: ``(first line position, line count)``, up to three lines."""
    from rapidfuzz import fuzz

    wanted = normalise_title(title)
    if not wanted:
        return None
    lines = page.lines
    best, best_score = None, 0.0
    for position in range(len(lines)):
        if (page_position, position) in running:
            continue
        text = ""
        for extra in range(3):
            if position + extra >= len(lines):
                break
            text = f"{text} {normalise_title(lines[position + extra].text)}".strip()
            score = fuzz.ratio(wanted, text)
            if score > best_score:
                best, best_score = (position, extra + 1), score
            if len(text) > len(wanted) + 10:
                break
    return best if best_score >= 85 else None


def outline_headings(
    outline: list[list[Any]],
    pages: Sequence[PageLines],
    positions: dict[int, int],
    page_count: int,
    running: dict[tuple[int, int], str],
) -> tuple[list[tuple[int, str, int, tuple[int, int] | None]], str | None]:
    """Validate the outline and locate its titles: ``([(level, title, page_index, (line, count))], reason)``.

    Returns an empty list and the reason when the outline is unusable (targets out of range, out of
    order, or titles mostly not on their pages).
    """
    if not outline:
        return [], "the PDF has no outline"
    entries = [(int(item[0]), str(item[1]).strip(), int(item[2]) - 1) for item in outline if len(item) >= 3]
    # Bookmarks named after files ("Ex 31.1 Q4 2022.pdf") are left by PDF assembly tools, not headings.
    entries = [entry for entry in entries if not FILENAME_TITLE.search(entry[1])]
    if not entries:
        return [], "the outline names only files, not headings"
    in_range = [entry for entry in entries if 0 <= entry[2] < page_count]
    if len(in_range) < 0.9 * len(entries):
        return (
            [],
            f"{len(entries) - len(in_range)} of {len(entries)} outline entries point outside the document",
        )
    ordered = sum(1 for a, b in itertools.pairwise(in_range) if b[2] >= a[2])
    if len(in_range) > 1 and ordered < 0.9 * (len(in_range) - 1):
        return [], "the outline's page targets are out of order"
    located: list[tuple[int, str, int, tuple[int, int] | None]] = []
    checked = found = 0
    for level, title, page_index in in_range:
        where = None
        if page_index in positions:
            checked += 1
            page_position = positions[page_index]
            where = _find_title(title, pages[page_position], running, page_position)
            found += where is not None
        located.append((level, title, page_index, where))
    if checked and found < 0.5 * checked:
        return [], f"only {found} of {checked} outline titles appear on their pages"
    return located, None
