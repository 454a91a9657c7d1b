"""The PDF text strategy's heading, contents-page and TOC rules, one rule at a time.

Each test writes real PDFs with PyMuPDF under ``tmp_path`` (or builds ``Line`` records for the lower-level
functions) and pairs the case a rule is about with a control that differs only in what the rule looks at,
so a passing test shows that the rule, and nothing else, makes the difference. Nothing of the project is
mocked.
"""

from __future__ import annotations

import textwrap
from dataclasses import replace
from pathlib import Path

import pymupdf
import pytest

from extract_thinker_pageindex import (
    Document,
    HeaderNode,
    HeadingNode,
    ListItemNode,
    ModelRequiredError,
    ParagraphNode,
    build_index,
)
from extract_thinker_pageindex.postprocess.toc import toc_from_sections
from extract_thinker_pageindex.strategies.pdf_contents import contents_entries, is_toc_page
from extract_thinker_pageindex.strategies.pdf_layout import (
    Line,
    PageLines,
    _join_side_by_side,
    _right_to_left,
    _split_units,
    lines_from_blocks,
    read_page_lines,
)
from extract_thinker_pageindex.strategies.pdf_structure import _column_page, body_size, detect_headings
from extract_thinker_pageindex.strategies.pdf_text import _text_flags, has_text_layer
from pdf_support import SENTENCES, prose

LEFT = 72.0
A4_WIDTH, A4_HEIGHT = 595.0, 842.0


class Sheet:
    """One new A4 page, written top to bottom the way a word processor lays text down."""

    def __init__(self, document: pymupdf.Document, *, top: float = 90.0) -> None:
        self.page = document.new_page()
        self.y = top

    def line(
        self,
        text: str,
        *,
        size: float = 10.0,
        font: str = "helv",
        x: float = LEFT,
        pitch: float | None = None,
        centred: bool = False,
    ) -> pymupdf.Rect:
        """Write one line at the current baseline; returns the box from baseline-size to baseline."""
        assert self.y < 770, "the fixture ran into the footer band; shorten its text"
        width = pymupdf.get_text_length(text, fontname=font, fontsize=size)
        if centred:
            x = (self.page.rect.width - width) / 2
        self.page.insert_text((x, self.y), text, fontsize=size, fontname=font)
        box = pymupdf.Rect(x, self.y - size, x + width, self.y)
        self.y += size * 1.3 if pitch is None else pitch
        return box

    def skip(self, points: float) -> None:
        self.y += points

    def paragraph(
        self,
        text: str,
        *,
        size: float = 10.0,
        font: str = "helv",
        width: int = 90,
        pitch: float | None = None,
        after: float = 12.0,
    ) -> None:
        for part in textwrap.wrap(text, width):
            self.line(part, size=size, font=font, pitch=pitch)
        self.y += after


def body_page(document: pymupdf.Document, start: int = 0) -> Sheet:
    """A page of ordinary 10pt body text (three paragraphs), so that the document's body size is known."""
    sheet = Sheet(document)
    for number in range(3):
        sheet.paragraph(prose(start + 3 * number, 3))
    return sheet


def save(document: pymupdf.Document, tmp_path: Path, name: str = "doc.pdf") -> Path:
    path = tmp_path / name
    document.save(path)
    return path


def build(path: Path) -> Document:
    """The document built from the text layer alone, headings from font statistics (no outline)."""
    return build_index(path, use_outline=False, strategy="text", images=False)


def headings(document: Document) -> list[tuple[int, str, str]]:
    return [
        (page.index, node.level, node.content)
        for page, node in document.iter_nodes()
        if isinstance(node, HeadingNode)
    ]


def heading_texts(document: Document) -> list[str]:
    return [text for _, _, text in headings(document)]


def texts_of(document: Document, node_type: type) -> list[str]:
    return [node.content for _, node in document.iter_nodes() if isinstance(node, node_type)]


def page_lines(path: Path, index: int = 0) -> PageLines:
    with pymupdf.open(path) as document:
        return read_page_lines(document[index], index, _text_flags())


def raw_blocks(path: Path, index: int = 0) -> int:
    """How many text blocks MuPDF itself makes of the page (before the strategy splits units)."""
    with pymupdf.open(path) as document:
        data = document[index].get_text("dict", flags=_text_flags())
    return sum(1 for block in data["blocks"] if block.get("type", 0) == 0)


def toc_rows(document: Document) -> list[tuple[str, str | None]]:
    """(title, parent entry title) of every TOC entry, in order."""
    title_of = {entry.id: entry.title for entry in document.toc}
    return [
        (entry.title, title_of.get(entry.parent_id) if entry.parent_id else None) for entry in document.toc
    ]


def record(
    text: str,
    x0: float,
    top: float,
    *,
    size: float = 10.0,
    bold: bool = False,
    block: int = 0,
    width: float | None = None,
) -> Line:
    """A ``Line`` as ``read_page_lines`` makes it (a 10pt Helvetica line is about 14pt high)."""
    right = x0 + (width if width is not None else 0.5 * size * len(text))
    chars = len(text.replace(" ", ""))
    return Line(text, (x0, top, right, top + 1.4 * size), size, bold, False, block, chars, lead=text)


# -- 1. paragraph units inside one MuPDF block ------------------------------------------------------------

OPENING = [
    "The company sells cloud software to small and medium businesses in Europe and North",
    "America and pays its suppliers within thirty days of receipt of their invoices and",
    "keeps its cash in short deposits at several banks (see the notes to the statements)",
]
FOLLOWING = [
    "Competition is increasing in every market the company serves and prices for cloud",
    "services have fallen over the year, although demand from customers stayed strong",
    "and most contracts were renewed for another year at the end of their term.",
]


def write_one_block_page(path: Path, *, last: str, title_pitch: float) -> Path:
    """Tightly set 10pt paragraphs (10.5pt pitch) with a bold 10pt title between them, ``title_pitch``
    below the paragraph's last line (less than 1.5 x the size: MuPDF keeps the page in one block)."""
    document = pymupdf.open()
    page = document.new_page()
    y = 100.0
    for text in [*OPENING[:-1], last]:
        page.insert_text((LEFT, y), text, fontsize=10, fontname="helv")
        y += 10.5
    y += title_pitch - 10.5
    page.insert_text((LEFT, y), "Risk Factors", fontsize=10, fontname="hebo")
    y += 10.5
    for text in FOLLOWING:
        page.insert_text((LEFT, y), text, fontsize=10, fontname="helv")
        y += 10.5
    document.save(path)
    return path


@pytest.mark.parametrize(
    ("last", "title_pitch", "is_heading"),
    [
        pytest.param(OPENING[-1], 14.5, True, id="paragraph-gap-before-title"),
        pytest.param(OPENING[-1], 10.5, False, id="control-no-gap-title-runs-in"),
        pytest.param(OPENING[-1] + ".", 10.5, True, id="style-change-after-a-sentence-end"),
    ],
)
def test_a_bold_title_inside_a_one_block_page_is_a_heading_when_a_unit_ends_before_it(
    tmp_path: Path, last: str, title_pitch: float, is_heading: bool
) -> None:
    path = write_one_block_page(tmp_path / "one-block.pdf", last=last, title_pitch=title_pitch)
    assert raw_blocks(path) == 1  # the premise: MuPDF gives the whole page as one block

    document = build(path)

    if is_heading:
        assert headings(document) == [(0, "h1", "Risk Factors")]
        assert any(text.startswith("Competition is increasing") for text in texts_of(document, ParagraphNode))
    else:
        assert headings(document) == []
        assert any("Risk Factors" in text for text in texts_of(document, ParagraphNode))


def test_split_units_cuts_a_block_at_a_blank_line_gap() -> None:
    # One MuPDF block: a paragraph, a blank line (12pt of white between the boxes), a bold title and the
    # next paragraph at the paragraph's own spacing (boxes overlapping by 1pt).
    def lines(title_top: float) -> list[Line]:
        result = [record(text, LEFT, 100 + 13 * n) for n, text in enumerate(OPENING)]
        result.append(record("Risk Factors", LEFT, title_top, bold=True))
        result += [record(text, LEFT, title_top + 13 * (n + 1)) for n, text in enumerate(FOLLOWING)]
        return result

    gap = _split_units(lines(title_top=100 + 13 * 3 + 13))
    tight = _split_units(lines(title_top=100 + 13 * 3))

    assert [line.block for line in gap] == [0, 0, 0, 1, 1, 1, 1]
    assert [line.block for line in tight] == [0] * 7  # control: no gap, no sentence end, one unit


# -- 2. a title right after a running header in the same block --------------------------------------------

TITLES = ["Business", "Risk Factors", "Properties", "Legal Proceedings"]


def write_header_pages(path: Path, headers: list[str]) -> Path:
    """Pages with a 9pt line at the top and a 12pt bold title 13pt below it (one MuPDF block)."""
    document = pymupdf.open()
    for number, (header, title) in enumerate(zip(headers, TITLES, strict=True)):
        sheet = Sheet(document, top=40)
        sheet.line(header, size=9, pitch=13)
        sheet.line(title, size=12, font="hebo", pitch=30)
        sheet.paragraph(prose(number, 4))
        sheet.paragraph(prose(number + 4, 3))
    document.save(path)
    return path


def test_a_title_written_into_the_running_headers_block_is_a_heading(tmp_path: Path) -> None:
    path = write_header_pages(tmp_path / "header.pdf", ["Example Corp"] * 4)
    first = page_lines(path)
    assert first.lines[0].block == first.lines[1].block  # the premise: header and title share a block

    document = build(path)

    assert heading_texts(document) == TITLES
    assert texts_of(document, HeaderNode) == ["Example Corp"] * 4


def test_a_title_under_a_line_that_does_not_repeat_is_not_a_heading(tmp_path: Path) -> None:
    # Control: the same layout, but the top line differs on every page, so it is no running header and the
    # title below it does not open its unit.
    path = write_header_pages(
        tmp_path / "no-header.pdf", ["Example Corp", "Northwind Traders", "Contoso Limited", "Fabrikam"]
    )

    document = build(path)

    assert heading_texts(document) == []
    assert texts_of(document, HeaderNode) == []


# -- 3. column-aware table-row test ------------------------------------------------------------------------

LEFT_COLUMN, RIGHT_COLUMN, COLUMN_CHARS = 50.0, 315.0, 45


def test_a_left_column_title_beside_right_column_text_is_a_heading(tmp_path: Path) -> None:
    document = pymupdf.open()
    page = document.new_page()
    right_lines = textwrap.wrap(prose(0, 6), COLUMN_CHARS)
    for number, text in enumerate(right_lines):
        page.insert_text((RIGHT_COLUMN, 100 + 13 * number), text, fontsize=10, fontname="helv")
    left_lines = textwrap.wrap(prose(3, 2), COLUMN_CHARS)
    for number, text in enumerate(left_lines):
        page.insert_text((LEFT_COLUMN, 100 + 13 * number), text, fontsize=10, fontname="helv")
    title_baseline = 100 + 13 * (len(left_lines) + 2)  # on the baseline of a right-column line
    page.insert_text((LEFT_COLUMN, title_baseline), "References", fontsize=13, fontname="hebo")
    for number, text in enumerate(textwrap.wrap(prose(5, 2), COLUMN_CHARS)):
        page.insert_text((LEFT_COLUMN, title_baseline + 26 + 13 * number), text, fontsize=10, fontname="helv")
    path = save(document, tmp_path, "columns.pdf")
    lines = page_lines(path).lines
    title = next(line for line in lines if line.text == "References")
    beside = [
        line
        for line in lines
        if line.bbox[0] >= RIGHT_COLUMN - 1
        and min(line.bbox[3], title.bbox[3]) - max(line.bbox[1], title.bbox[1])
        > 0.5 * (title.bbox[3] - title.bbox[1])
    ]
    assert beside  # the premise: right-column text stands on the title's band, as a table row's cell would

    assert heading_texts(build(path)) == ["References"]


def test_a_bold_label_with_a_figure_beside_it_in_its_column_is_not_a_heading(tmp_path: Path) -> None:
    document = pymupdf.open()
    sheet = body_page(document)
    sheet.skip(10)
    sheet.line("Total revenue", size=13, font="hebo", pitch=0)
    sheet.line("1,234", size=13, font="hebo", x=230, pitch=30)  # the same column: left half of the page
    sheet.paragraph(prose(2, 3))
    path = save(document, tmp_path, "label-row.pdf")

    assert heading_texts(build(path)) == []


def column_page(beside: Line) -> PageLines:
    """A two-column page (as ``read_page_lines`` gives it): left column text, a 13pt bold "References"
    in a block of its own, more left column text, then ``beside`` on the title's band and more right column
    text."""
    left = [record(text, LEFT_COLUMN, 100 + 13 * n, block=0, width=205) for n, text in enumerate(OPENING)]
    title = record("References", LEFT_COLUMN, 160, size=13, bold=True, block=1, width=70)
    after = [record(text, LEFT_COLUMN, 190 + 13 * n, block=2, width=205) for n, text in enumerate(FOLLOWING)]
    right = [record(text, RIGHT_COLUMN, 100 + 13 * n, block=3, width=205) for n, text in enumerate(OPENING)]
    return PageLines(0, A4_WIDTH, A4_HEIGHT, [*left, title, *after, *right, replace(beside, block=4)])


@pytest.mark.parametrize(
    ("beside", "is_heading"),
    [
        pytest.param(record(FOLLOWING[0][:45], RIGHT_COLUMN, 161, width=205), True, id="other-column-text"),
        pytest.param(record("1,234", 230, 161, size=13, bold=True, width=35), False, id="figure-same-column"),
        pytest.param(record("1,234", RIGHT_COLUMN, 161, width=25), False, id="figure-other-half-not-text"),
    ],
)
def test_table_row_test_ignores_only_running_text_of_the_other_column(beside: Line, is_heading: bool) -> None:
    page = column_page(beside)

    found = [text for _, text, _ in detect_headings([page], {}, 1).values()]

    assert found == (["References"] if is_heading else [])


# -- 4. underline cue --------------------------------------------------------------------------------------


def write_titled_page(
    path: Path,
    title: str,
    *,
    font: str = "helv",
    rule: str | None = None,
    link: bool = False,
) -> Path:
    """Body text, then ``title`` at 10pt alone in its block, then a paragraph, and a page of body text.
    ``rule``: "under" draws a rule under the title's text, "bar" a thin filled rectangle there (as word
    processors draw underlines), "page" a rule across the page at the same place (a table's border)."""
    document = pymupdf.open()
    sheet = Sheet(document)
    sheet.paragraph(prose(0, 3), after=14)
    box = sheet.line(title, font=font, pitch=26)
    if rule == "under":
        sheet.page.draw_line((box.x0, box.y1 + 2), (box.x1, box.y1 + 2), width=0.75)
    elif rule == "bar":
        sheet.page.draw_rect(
            pymupdf.Rect(box.x0, box.y1 + 1.5, box.x1, box.y1 + 2.3), color=None, fill=(0, 0, 0)
        )
    elif rule == "page":
        sheet.page.draw_line((40, box.y1 + 2), (A4_WIDTH - 40, box.y1 + 2), width=0.75)
    if link:
        sheet.page.insert_link(
            {
                "kind": pymupdf.LINK_URI,
                "from": pymupdf.Rect(box.x0, box.y0, box.x1, box.y1 + 3),
                "uri": "https://example.com/controls",
            }
        )
    sheet.paragraph(prose(3, 3))
    body_page(document, 1)
    document.save(path)
    return path


@pytest.mark.parametrize(
    ("title", "rule", "link", "is_heading"),
    [
        pytest.param("Controls and Procedures", "under", False, True, id="underlined"),
        pytest.param("Controls and Procedures", "bar", False, True, id="underlined-by-a-bar"),
        pytest.param("Controls and Procedures", None, False, False, id="control-no-rule"),
        pytest.param("Controls and Procedures", "under", True, False, id="underlined-link"),
        pytest.param("Controls and Procedures", "page", False, False, id="page-wide-rule"),
        pytest.param("Item 4. Controls and Procedures.", "under", False, True, id="underlined-numbered"),
    ],
)
def test_a_rule_under_a_lone_body_size_line_makes_it_a_heading(
    tmp_path: Path, title: str, rule: str | None, link: bool, is_heading: bool
) -> None:
    path = write_titled_page(tmp_path / "underline.pdf", title, rule=rule, link=link)
    line = next(line for line in page_lines(path).lines if line.text == title)
    assert (line.size, line.bold) == (10.0, False)

    assert line.underlined is (rule in ("under", "bar") and not link)
    assert heading_texts(build(path)) == ([title] if is_heading else [])


# -- 5. capitals cue ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("title", "is_heading"), [("SIGNATURES", True), ("Signatures", False)])
def test_a_lone_line_in_capitals_before_a_paragraph_is_a_heading(
    tmp_path: Path, title: str, is_heading: bool
) -> None:
    path = write_titled_page(tmp_path / "caps.pdf", title)

    assert heading_texts(build(path)) == ([title] if is_heading else [])


def test_names_in_capitals_of_a_signature_block_are_not_headings(tmp_path: Path) -> None:
    document = pymupdf.open()
    body_page(document)
    sheet = Sheet(document)
    sheet.line("SIGNATURES", pitch=26)
    sheet.paragraph(
        "Pursuant to the requirements of the Securities Exchange Act of 1934, the registrant has duly "
        "caused this report to be signed on its behalf by the undersigned, thereunto duly authorized.",
        after=20,
    )
    for name, role in (
        ("JANE A. DOE", "Chief Executive Officer"),
        ("JOHN B. ROE", "Chief Financial Officer"),
        ("MARY C. POE", "Principal Accounting Officer"),
    ):
        sheet.line(name, pitch=12)
        sheet.line(role, pitch=30)
    path = save(document, tmp_path, "signatures.pdf")

    document_index = build(path)

    assert heading_texts(document_index) == ["SIGNATURES"]
    assert {"JANE A. DOE Chief Executive Officer", "JOHN B. ROE Chief Financial Officer"} <= set(
        texts_of(document_index, ParagraphNode)
    )


# -- 6. numbering cue --------------------------------------------------------------------------------------

ITEM_7 = "Item 7. Management's Discussion and Analysis"


def test_a_lone_numbered_line_in_body_type_is_a_heading(tmp_path: Path) -> None:
    path = write_titled_page(tmp_path / "numbered.pdf", ITEM_7)

    assert heading_texts(build(path)) == [ITEM_7]


def test_the_same_words_opening_a_paragraph_are_not_a_heading(tmp_path: Path) -> None:
    document = pymupdf.open()
    sheet = body_page(document)
    sheet.paragraph(
        f"{ITEM_7} of Financial Condition and Results of Operations is set out in the annual report "
        "and is incorporated here by reference, together with the discussion of liquidity.",
        width=len(ITEM_7),
    )
    path = save(document, tmp_path, "numbered-paragraph.pdf")
    opening = next(line for line in page_lines(path).lines if line.text.startswith("Item 7."))
    assert opening.text == ITEM_7  # the premise: the paragraph's first line holds the title's words alone

    assert heading_texts(build(path)) == []


# -- 7. titles may end in a period -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("title", "is_heading"),
    [
        pytest.param("Item 4. Controls and Procedures.", True, id="numbered"),
        pytest.param("Salesforce, Inc.", True, id="two-words"),
        pytest.param("Report of the Auditors.", True, id="four-words"),
        pytest.param("Report of the Independent Auditors.", False, id="five-word-sentence"),
        pytest.param("The company sells its software to small businesses.", False, id="eight-word-sentence"),
        pytest.param("The company sells its software to small businesses", True, id="control-no-period"),
    ],
)
def test_a_bold_title_may_end_in_a_period_when_numbered_or_short(
    tmp_path: Path, title: str, is_heading: bool
) -> None:
    path = write_titled_page(tmp_path / "period.pdf", title, font="hebo")

    assert heading_texts(build(path)) == ([title] if is_heading else [])


# -- 8. wrapped titles join --------------------------------------------------------------------------------


def test_a_title_wrapped_over_two_lines_is_one_heading(tmp_path: Path) -> None:
    document = pymupdf.open()
    sheet = body_page(document)
    sheet.line("Implement roles and separation", size=14, font="hebo", pitch=17)
    sheet.line("of duties", size=14, font="hebo", pitch=30)
    sheet.paragraph(prose(1, 3))
    path = save(document, tmp_path, "wrapped.pdf")

    document_index = build(path)

    assert heading_texts(document_index) == ["Implement roles and separation of duties"]
    assert not any("of duties" in text for text in texts_of(document_index, ParagraphNode))


@pytest.mark.parametrize("size", [10, 14])
def test_a_bold_paragraph_of_four_full_lines_is_no_heading(tmp_path: Path, size: float) -> None:
    document = pymupdf.open()
    body_page(document)
    sheet = body_page(document, 1)
    sheet.paragraph(prose(4, 4) if size == 10 else prose(4, 3), size=size, font="hebo", width=int(900 / size))
    path = save(document, tmp_path, "bold-paragraph.pdf")
    bold = [line for line in page_lines(path, 1).lines if line.bold]
    assert len(bold) == 4  # the premise

    assert heading_texts(build(path)) == []


# -- 9. stacked centred cover lines ------------------------------------------------------------------------


def test_stacked_centred_cover_lines_are_one_heading(tmp_path: Path) -> None:
    document = pymupdf.open()
    cover = Sheet(document, top=120)
    cover.line("UNITED STATES", size=12, font="hebo", centred=True, pitch=15)
    cover.line("SECURITIES AND EXCHANGE COMMISSION", size=12, font="hebo", centred=True, pitch=16)
    cover.line("Washington, D.C. 20549", centred=True, pitch=40)
    cover.paragraph(prose(0, 3))
    body_page(document, 1)
    path = save(document, tmp_path, "cover.pdf")

    assert heading_texts(build(path)) == ["UNITED STATES SECURITIES AND EXCHANGE COMMISSION"]


STATEMENTS = [
    "CONSOLIDATED BALANCE SHEETS",
    "CONSOLIDATED STATEMENTS OF OPERATIONS",
    "CONSOLIDATED STATEMENTS OF CASH FLOWS",
    "CONSOLIDATED STATEMENTS OF EQUITY",
    "CONSOLIDATED STATEMENTS OF INCOME",
]


@pytest.mark.parametrize("pages", [1, 5])
def test_a_company_name_repeated_over_each_statement_stays_apart(tmp_path: Path, pages: int) -> None:
    document = pymupdf.open()
    for number, statement in enumerate(STATEMENTS[:pages]):
        sheet = Sheet(document, top=110)
        sheet.line("EXAMPLE CORP", size=12, font="hebo", centred=True, pitch=15)
        sheet.line(statement, size=12, font="hebo", centred=True, pitch=30)
        sheet.paragraph(prose(number, 4))
    path = save(document, tmp_path, "statements.pdf")

    found = heading_texts(build(path))

    if pages == 1:  # control: said once, the two centred lines are one title
        assert found == ["EXAMPLE CORP CONSOLIDATED BALANCE SHEETS"]
    else:  # on five pages, the name is a label of its own: each statement's title is its heading
        assert found == STATEMENTS


# -- 10. pieces of one line in reading order ---------------------------------------------------------------


def test_a_number_badge_written_after_its_title_reads_first(tmp_path: Path) -> None:
    document = pymupdf.open()
    sheet = body_page(document)
    page = sheet.page
    y = sheet.y + 10
    page.insert_text((100, y), "Overview of the Business", fontsize=14, fontname="hebo")
    page.insert_text((LEFT, y), "1", fontsize=14, fontname="hebo")  # the badge, written last, at the left
    page.insert_text((LEFT, y + 60), "Reven", fontsize=14, fontname="hebo")
    cut = LEFT + pymupdf.get_text_length("Reven", fontname="hebo", fontsize=14)
    page.insert_text((cut, y + 60), "ue Growth", fontsize=14, fontname="hebo")
    page.insert_text((LEFT, y + 90), prose(1, 1), fontsize=10, fontname="helv")
    path = save(document, tmp_path, "pieces.pdf")

    assert heading_texts(build(path)) == ["1 Overview of the Business", "Revenue Growth"]


ARABIC_RIGHT, ARABIC_LEFT = "تقرير", "سنوي"  # "report" "annual": read right to left, "تقرير سنوي"
HEBREW_RIGHT, HEBREW_LEFT = "דוח", "שנתי"


@pytest.mark.parametrize(
    ("right", "left", "expected", "lead"),
    [
        pytest.param(ARABIC_RIGHT, ARABIC_LEFT, f"{ARABIC_RIGHT} {ARABIC_LEFT}", ARABIC_RIGHT, id="arabic"),
        pytest.param(HEBREW_RIGHT, HEBREW_LEFT, f"{HEBREW_RIGHT} {HEBREW_LEFT}", HEBREW_RIGHT, id="hebrew"),
        pytest.param("Business", "Item 1.", "Item 1. Business", "Item 1.", id="latin"),
    ],
)
@pytest.mark.parametrize("written_first", ["right", "left"])
def test_side_by_side_pieces_join_in_reading_order(
    right: str, left: str, expected: str, lead: str, written_first: str
) -> None:
    left_piece = record(left, 100, 200, width=40)
    right_piece = record(right, 150, 200, width=40)
    first, second = (right_piece, left_piece) if written_first == "right" else (left_piece, right_piece)

    joined = _join_side_by_side(first, second)

    assert joined.text == expected  # left to right for Latin, right to left for Arabic and Hebrew
    assert joined.lead == lead  # the piece read first
    assert joined.pieces == 2
    assert joined.max_gap == 10
    assert joined.bbox == (100, 200, 190, 214)


def test_right_to_left_is_told_by_most_letters() -> None:
    assert _right_to_left(f"{ARABIC_RIGHT} 2023")
    assert _right_to_left(HEBREW_LEFT)
    assert not _right_to_left("Item 1. Business")
    assert not _right_to_left("2023")


@pytest.mark.parametrize(("gap", "expected"), [(0.0, "Revenue"), (0.5, "Revenue"), (3.0, "Reven ue")])
def test_touching_pieces_join_without_a_space(gap: float, expected: str) -> None:
    first = record("Reven", 100, 200, width=30)
    second = record("ue", 130 + gap, 200, width=12)

    assert _join_side_by_side(second, first).text == expected


# -- 11. CJK -----------------------------------------------------------------------------------------------


def write_short_pages(path: Path, texts: list[tuple[str, str]]) -> Path:
    """A page of body text, then one page per (text, font)."""
    document = pymupdf.open()
    body_page(document)
    for text, font in texts:
        page = document.new_page()
        page.insert_text((LEFT, 100), text, fontsize=10, fontname=font)
    document.save(path)
    return path


@pytest.mark.parametrize(
    ("text", "font", "has_text"),
    [
        pytest.param("会社概要", "japan", True, id="four-cjk"),
        pytest.param("目次", "japan", False, id="two-cjk"),
        pytest.param("Notes", "helv", False, id="five-latin"),
        pytest.param("ab", "helv", False, id="two-latin"),
    ],
)
def test_a_few_cjk_characters_are_a_text_layer(tmp_path: Path, text: str, font: str, has_text: bool) -> None:
    path = write_short_pages(tmp_path / "short.pdf", [(text, font)])
    page = page_lines(path, 1)
    assert page.lines[0].text == text

    assert has_text_layer(page) is has_text


def test_auto_strategy_needs_no_model_for_a_page_of_four_cjk_characters(tmp_path: Path) -> None:
    path = write_short_pages(tmp_path / "cjk.pdf", [("会社概要", "japan")])

    document = build_index(path, strategy="auto", images=False)

    assert [page.index for page in document.pages] == [0, 1]
    assert "会社概要" in [*texts_of(document, ParagraphNode), *heading_texts(document)]


def test_auto_strategy_asks_for_a_model_for_a_page_of_two_latin_characters(tmp_path: Path) -> None:
    path = write_short_pages(tmp_path / "latin.pdf", [("ab", "helv")])

    with pytest.raises(ModelRequiredError):
        build_index(path, strategy="auto", images=False, ocr="never")


def test_a_larger_cjk_title_is_a_heading(tmp_path: Path) -> None:
    document = pymupdf.open()
    sheet = body_page(document)
    sheet.page.insert_text((LEFT, sheet.y + 10), "会社概要", fontsize=18, fontname="japan")
    sheet.y += 40
    sheet.paragraph(prose(2, 3))
    path = save(document, tmp_path, "cjk-title.pdf")

    assert heading_texts(build(path)) == ["会社概要"]


# -- 12. strict contents pages -----------------------------------------------------------------------------


def write_list_page(
    path: Path,
    rows: list[tuple[str, str]],
    *,
    title: str | None = "Table of Contents",
    leaders: bool = True,
    column: bool = False,
) -> Path:
    """A page of "title ..... trailing" rows (or the trailing text as a separate column at the right margin,
    written after all the titles), under an optional bold title."""
    document = pymupdf.open()
    page = document.new_page()
    if title is not None:
        page.insert_text((LEFT, 80), title, fontsize=14, fontname="hebo")
    for number, (text, trailing) in enumerate(rows):
        y = 120 + 20 * number
        if column:
            page.insert_text((LEFT, y), text, fontsize=11, fontname="helv")
        else:
            filler = " " + "." * (70 - len(text) - len(trailing)) + " " if leaders else "   "
            page.insert_text((LEFT, y), f"{text}{filler}{trailing}", fontsize=11, fontname="helv")
    if column:
        for number, (_, trailing) in enumerate(rows):
            width = pymupdf.get_text_length(trailing, fontname="helv", fontsize=11)
            page.insert_text(
                (A4_WIDTH - LEFT - width, 120 + 20 * number), trailing, fontsize=11, fontname="helv"
            )
    document.save(path)
    return path


CONTENTS = [
    ("Business", "3"),
    ("Risk Factors", "9"),
    ("Properties", "15"),
    ("Legal Proceedings", "16"),
    ("Management's Discussion and Analysis", "21"),
    ("Financial Statements", "30"),
]


def test_a_page_of_leader_entries_with_increasing_numbers_is_a_contents_page(tmp_path: Path) -> None:
    page = page_lines(write_list_page(tmp_path / "toc.pdf", CONTENTS))

    assert is_toc_page(page, 40)
    assert [(entry.title, entry.page) for entry in contents_entries(page)] == CONTENTS


def test_page_numbers_in_a_column_of_their_own_are_paired_with_their_titles(tmp_path: Path) -> None:
    path = write_list_page(tmp_path / "toc-column.pdf", CONTENTS, column=True)
    page = page_lines(path)
    assert {"3", "9", "30"} <= {line.text for line in page.lines}  # the premise: the numbers stand apart

    assert is_toc_page(page, 40)
    assert [(entry.title, entry.page) for entry in contents_entries(page)] == CONTENTS


NOT_CONTENTS = {
    "dates": (
        "Shareholder Calendar",
        [
            ("Fiscal year ends", "January 31, 2023"),
            ("Annual report published", "March 14, 2023"),
            ("Record date", "May 22, 2023"),
            ("Annual meeting", "July 20, 2023"),
            ("Dividend paid", "August 15"),
            ("Interim results", "September 2"),
        ],
    ),
    "amounts": (
        "Selected Financial Data",
        [
            ("Subscription revenue", "$ 25"),
            ("Services revenue", "$ 31"),
            ("Gross profit", "$ 40"),
            ("Operating income", "$ 52"),
            ("Net income", "$ 60"),
            ("Total revenue", "$ 125"),
        ],
    ),
    "note references": (
        "Critical Accounting Estimates",
        [
            ("Revenue recognition, see", "Note 2"),
            ("Business combinations, see", "Note 4"),
            ("Goodwill, see", "Note 7"),
            ("Income taxes, see", "Note 9"),
            ("Leases, see", "Note 11"),
            ("Legal contingencies, see", "Note 12"),
        ],
    ),
    "table rows": (
        "Store Count",
        [
            ("Stores in Europe", "8 10 12"),
            ("Stores in North America", "11 13 14"),
            ("Stores in Asia", "12 15 16"),
            ("Stores in South America", "14 16 19"),
            ("Stores in Africa", "16 18 21"),
            ("Total stores", "20 22 25"),
        ],
    ),
    "decreasing numbers": (
        "Table of Contents",
        [
            ("Business", "30"),
            ("Risk Factors", "21"),
            ("Properties", "16"),
            ("Legal Proceedings", "15"),
            ("Management's Discussion and Analysis", "9"),
            ("Financial Statements", "3"),
        ],
    ),
}


@pytest.mark.parametrize("kind", list(NOT_CONTENTS))
def test_lists_ending_in_numbers_that_are_not_page_numbers_are_not_contents(
    tmp_path: Path, kind: str
) -> None:
    title, rows = NOT_CONTENTS[kind]
    page = page_lines(write_list_page(tmp_path / "list.pdf", rows, title=title))

    assert not is_toc_page(page, 40)


@pytest.mark.parametrize("kind", [kind for kind in NOT_CONTENTS if kind != "decreasing numbers"])
def test_the_same_lists_with_page_numbers_are_contents(tmp_path: Path, kind: str) -> None:
    # Control for the test above: the same labels under the same title, ending in page numbers.
    title, rows = NOT_CONTENTS[kind]
    numbered = [(label.removesuffix(", see"), str(3 + 4 * n)) for n, (label, _) in enumerate(rows)]
    page = page_lines(write_list_page(tmp_path / "list.pdf", numbered, title=title))

    assert is_toc_page(page, 40)


def test_page_numbers_beyond_the_document_are_no_contents(tmp_path: Path) -> None:
    rows = [(title, str(100 + 15 * number)) for number, (title, _) in enumerate(CONTENTS)]
    page = page_lines(write_list_page(tmp_path / "toc-far.pdf", rows))

    assert not is_toc_page(page, 12)
    assert is_toc_page(page, 200)  # control: in a document that long, they are page numbers
    assert is_toc_page(page, None)


def write_report_with_contents(path: Path) -> Path:
    """A cover, a contents page with a title above "Table of Contents", and one page per section."""
    document = pymupdf.open()
    cover = Sheet(document, top=150)
    cover.line("Northwind Traders", size=24, font="hebo", pitch=40)
    cover.paragraph(prose(0, 2))
    contents = Sheet(document, top=80)
    contents.line("Annual Report 2023", size=18, font="hebo", pitch=30)
    contents.line("Table of Contents", size=14, font="hebo", pitch=30)
    sections = ["Letter to Shareholders", "Business Review", "Risk Factors", "Financial Statements"]
    for number, title in enumerate(sections, start=1):
        contents.line(f"{title} {'.' * (70 - len(title))} {number}", size=11, pitch=20)
    for number, title in enumerate(sections):
        sheet = Sheet(document)
        sheet.line(title, size=16, font="hebo", pitch=30)
        sheet.paragraph(prose(number, 4))
        sheet.paragraph(prose(number + 4, 4))
    document.save(path)
    return path


def test_a_contents_page_gives_the_toc_and_keeps_the_headings_above_its_entries(tmp_path: Path) -> None:
    path = write_report_with_contents(tmp_path / "report.pdf")

    document = build(path)

    on_contents = [text for index, _, text in headings(document) if index == 1]
    assert on_contents == ["Annual Report 2023", "Table of Contents"]
    sections = {section.title: section for section in document.sections()}
    assert [entry.title for entry in document.toc] == [
        "Letter to Shareholders",
        "Business Review",
        "Risk Factors",
        "Financial Statements",
    ]
    for entry in document.toc:
        assert entry.target_section_id == sections[entry.title].id
        assert entry.target_page == sections[entry.title].first_page
    assert [entry.printed_page for entry in document.toc] == ["1", "2", "3", "4"]


# -- 13. the TOC tree --------------------------------------------------------------------------------------

TEN_K_ITEMS = {
    "PART I": ["Item 1. Business", "Item 1A. Risk Factors"],
    "PART II": ["Item 7. Management's Discussion and Analysis", "Item 8. Financial Statements"],
}
STATEMENT_PAGES = ["Consolidated Balance Sheets", "Consolidated Statements of Operations"]


def write_ten_k(path: Path) -> Path:
    """A 10-K: cover, a contents page (PART lines with a "Page" column header), one page per Item, and an
    "Index to Financial Statements" contents page before the statements."""
    document = pymupdf.open()
    cover = Sheet(document, top=150)
    cover.line("Example Corp", size=24, font="hebo", pitch=40)
    cover.paragraph(prose(0, 2))
    contents = Sheet(document, top=80)
    contents.line("Table of Contents", size=14, font="hebo", pitch=30)
    printed = 3
    for part, items in TEN_K_ITEMS.items():
        contents.page.insert_text((A4_WIDTH - LEFT - 25, contents.y), "Page", fontsize=11, fontname="helv")
        contents.line(part, size=11, font="hebo", pitch=20)
        for item in items:
            contents.line(f"{item} {'.' * (70 - len(item))} {printed}", size=11, x=LEFT + 12, pitch=20)
            printed += 1
    for part, items in TEN_K_ITEMS.items():
        for number, item in enumerate(items):
            sheet = Sheet(document)
            if number == 0:
                sheet.line(part, size=14, font="hebo", pitch=24)
            sheet.line(item, size=12, font="hebo", pitch=24)
            sheet.paragraph(prose(number, 4))
    index = Sheet(document, top=80)
    index.line("Index to Financial Statements", size=14, font="hebo", pitch=30)
    index_rows = [*STATEMENT_PAGES, "Notes to Consolidated Financial Statements"]
    for number, title in enumerate(index_rows, start=printed + 1):
        index.line(f"{title} {'.' * (70 - len(title))} {number}", size=11, pitch=20)
    for number, title in enumerate(index_rows):
        sheet = Sheet(document)
        sheet.line(title, size=12, font="hebo", pitch=24)
        sheet.paragraph(prose(number, 4))
    document.save(path)
    return path


def test_the_first_run_of_contents_pages_gives_a_toc_of_parts_and_items(tmp_path: Path) -> None:
    path = write_ten_k(tmp_path / "10k.pdf")
    with pymupdf.open(path) as pdf:
        count = pdf.page_count
    assert is_toc_page(page_lines(path, 6), count)  # the premise: the later index is a contents page too
    assert "PART I Page" in [line.text for line in page_lines(path, 1).lines]  # a group line, "Page" header

    document = build(path)

    assert toc_rows(document) == [
        ("PART I", None),
        ("Item 1. Business", "PART I"),
        ("Item 1A. Risk Factors", "PART I"),
        ("PART II", None),
        ("Item 7. Management's Discussion and Analysis", "PART II"),
        ("Item 8. Financial Statements", "PART II"),
    ]
    sections = {section.title: section for section in document.sections()}
    for entry in document.toc:
        assert entry.target_section_id == sections[entry.title].id


def write_ten_k_without_contents(path: Path) -> Path:
    """A 10-K without contents pages: a cover (title, form name, address), PART/Item pages, then the notes,
    whose NOTE headings are set larger than the "Notes to ..." heading."""
    document = pymupdf.open()
    cover = Sheet(document, top=150)
    cover.line("Example Corp", size=24, font="hebo", pitch=40)
    cover.line("FORM 10-K", size=18, font="hebo", pitch=34)
    cover.line("One Market Street, San Francisco, California", size=14, pitch=40)
    cover.paragraph(prose(0, 2))
    for part, items in TEN_K_ITEMS.items():
        for number, item in enumerate(items):
            sheet = Sheet(document)
            if number == 0:
                sheet.line(part, size=12, font="hebo", pitch=24)
            sheet.line(item, size=11, font="hebo", pitch=24)
            sheet.paragraph(prose(number, 4))
    notes = Sheet(document)
    notes.line("Notes to Consolidated Financial Statements", size=11, font="hebo", pitch=24)
    notes.line("NOTE 1. SUMMARY OF SIGNIFICANT ACCOUNTING POLICIES", size=12, font="hebo", pitch=24)
    notes.paragraph(prose(2, 4))
    notes.line("NOTE 2. REVENUE", size=12, font="hebo", pitch=24)
    notes.paragraph(prose(3, 4))
    last = Sheet(document)
    last.line("NOTE 3. LEASES", size=12, font="hebo", pitch=24)
    last.paragraph(prose(5, 4))
    document.save(path)
    return path


def test_notes_nest_under_the_notes_heading_and_cover_lines_under_the_title(tmp_path: Path) -> None:
    document = build(write_ten_k_without_contents(tmp_path / "10k-plain.pdf"))

    rows = dict(toc_rows(document))
    assert (
        rows["NOTE 1. SUMMARY OF SIGNIFICANT ACCOUNTING POLICIES"]
        == "Notes to Consolidated Financial Statements"
    )
    assert rows["NOTE 2. REVENUE"] == "Notes to Consolidated Financial Statements"
    assert rows["NOTE 3. LEASES"] == "Notes to Consolidated Financial Statements"
    top_level = [title for title, parent in toc_rows(document) if parent is None]
    assert "FORM 10-K" not in top_level
    assert "One Market Street, San Francisco, California" not in top_level
    assert top_level[0] == "Example Corp"
    parents = {entry.id: entry.parent_id for entry in document.toc}
    title_entry = document.toc[0].id
    for entry in document.toc:
        if entry.target_page == 0 and entry.id != title_entry:
            ancestor = entry.parent_id
            while ancestor is not None and ancestor != title_entry:
                ancestor = parents[ancestor]
            assert ancestor == title_entry, entry.title
    # Control: without the cover rule, the form's name and the address would stand at the top level.
    plain = {entry.title: entry.parent_id for entry in toc_from_sections(document.pages, cover=False)}
    assert plain["FORM 10-K"] is None
    assert plain["One Market Street, San Francisco, California"] is None


def test_headings_after_the_notes_leave_the_notes_series(tmp_path: Path) -> None:
    document = pymupdf.open()
    for part, items in TEN_K_ITEMS.items():
        for number, item in enumerate(items):
            sheet = Sheet(document)
            if number == 0:
                sheet.line(part, size=12, font="hebo", pitch=24)
            sheet.line(item, size=11, font="hebo", pitch=24)
            sheet.paragraph(prose(number, 4))
    notes = Sheet(document)
    notes.line("Notes to Consolidated Financial Statements", size=11, font="hebo", pitch=24)
    notes.line("NOTE 1. SUMMARY OF SIGNIFICANT ACCOUNTING POLICIES", size=11.5, font="hebo", pitch=24)
    notes.paragraph(prose(2, 4))
    notes.line("NOTE 2. REVENUE", size=11.5, font="hebo", pitch=24)
    notes.paragraph(prose(3, 4))
    after = Sheet(document)
    after.line("Item 9. Changes in and Disagreements with Accountants", size=11, font="hebo", pitch=24)
    after.paragraph(prose(4, 4))
    last = Sheet(document)
    last.line("PART III", size=12, font="hebo", pitch=24)
    last.line("Item 10. Directors and Executive Officers", size=11, font="hebo", pitch=24)
    last.paragraph(prose(5, 4))

    rows = dict(toc_rows(build(save(document, tmp_path, "10k-notes.pdf"))))

    assert (
        rows["NOTE 1. SUMMARY OF SIGNIFICANT ACCOUNTING POLICIES"]
        == "Notes to Consolidated Financial Statements"
    )
    assert rows["NOTE 2. REVENUE"] == "Notes to Consolidated Financial Statements"
    assert rows["Item 9. Changes in and Disagreements with Accountants"] == "PART II"
    assert rows["PART III"] is None
    assert rows["Item 10. Directors and Executive Officers"] == "PART III"


# -- 14. numbered levels need a series ---------------------------------------------------------------------


def write_numbered(path: Path, lines: list[tuple[str, float]]) -> Path:
    """One page per (bold title, size), each followed by body text."""
    document = pymupdf.open()
    for number, (title, size) in enumerate(lines):
        sheet = Sheet(document)
        sheet.line(title, size=size, font="hebo", pitch=24)
        sheet.paragraph(prose(number, 4))
    document.save(path)
    return path


def test_three_numbered_headings_rank_part_above_item_whatever_their_styles(tmp_path: Path) -> None:
    # The PART lines are set smaller than the Items; numbering still ranks them first.
    path = write_numbered(
        tmp_path / "series.pdf",
        [
            ("PART I", 11),
            ("Item 1. Business", 14),
            ("Item 2. Properties", 14),
            ("PART II", 11),
            ("Item 5. Market", 14),
        ],
    )

    assert [(level, text) for _, level, text in headings(build(path))] == [
        ("h1", "PART I"),
        ("h2", "Item 1. Business"),
        ("h2", "Item 2. Properties"),
        ("h1", "PART II"),
        ("h2", "Item 5. Market"),
    ]


def test_two_numbered_headings_rank_by_style(tmp_path: Path) -> None:
    # Control: with only two numbered headings there is no series; the larger Item ranks first.
    path = write_numbered(tmp_path / "pair.pdf", [("PART I", 11), ("Item 1. Business", 14)])

    assert [(level, text) for _, level, text in headings(build(path))] == [
        ("h2", "PART I"),
        ("h1", "Item 1. Business"),
    ]


@pytest.mark.parametrize("sections", [2, 3])
def test_section_headings_rank_by_numbering_only_as_a_series(tmp_path: Path, sections: int) -> None:
    titles = [("General Terms", 16.0), ("Background", 12.0)]
    titles += [
        (f"Section {number} {name}", 12.0)
        for number, name in zip((3, 4, 5), ("Definitions", "Payment", "Term"), strict=True)
    ][:sections]
    path = write_numbered(tmp_path / "sections.pdf", titles)

    levels = {text: level for _, level, text in headings(build(path))}

    assert levels["General Terms"] == "h1"  # the larger chapter title stays above the sections
    assert all(levels[title] == "h2" for title, _ in titles[2:])
    # "Background" is set like the sections: one rank with them by style, below them in a numbered series.
    assert levels["Background"] == ("h2" if sections == 2 else "h3")


# -- 15. bullets are never headings ------------------------------------------------------------------------


@pytest.mark.parametrize(("prefix", "is_heading"), [("\u2022 ", False), ("", True)])
def test_a_bold_bulleted_line_is_a_list_item_not_a_heading(
    tmp_path: Path, prefix: str, is_heading: bool
) -> None:
    document = pymupdf.open()
    sheet = body_page(document)
    sheet.page.insert_font(fontname="uhebo", fontbuffer=pymupdf.Font("hebo").buffer)
    sheet.page.insert_text(
        (LEFT, sheet.y + 10), f"{prefix}Revenue of $8.6 billion, up 11%", fontsize=10, fontname="uhebo"
    )
    sheet.y += 36
    sheet.paragraph(prose(2, 3))
    path = save(document, tmp_path, "bullet.pdf")

    document_index = build(path)

    title = "Revenue of $8.6 billion, up 11%"
    assert heading_texts(document_index) == ([title] if is_heading else [])
    assert (title in texts_of(document_index, ListItemNode)) is not is_heading


# -- 16. a bold title over "(unaudited; in millions)" ------------------------------------------------------


@pytest.mark.parametrize(
    ("note", "is_heading"),
    [
        pytest.param("(unaudited; in millions)", True, id="note-in-parentheses"),
        pytest.param("(in millions, except per share data)", True, id="other-note-in-parentheses"),
        pytest.param("Amounts in millions, except per share data.", False, id="control-a-sentence"),
    ],
)
def test_a_bold_title_followed_by_a_parenthesised_note_in_its_style_is_a_heading(
    tmp_path: Path, note: str, is_heading: bool
) -> None:
    document = pymupdf.open()
    sheet = body_page(document)
    sheet.line("Condensed Consolidated Statements of Operations", font="hebo", pitch=12)
    sheet.line(note, font="hebo", pitch=30)
    sheet.paragraph(prose(3, 3))
    path = save(document, tmp_path, "unaudited.pdf")
    lines = page_lines(path).lines
    title = next(position for position, line in enumerate(lines) if line.text.startswith("Condensed"))
    assert lines[title].block == lines[title + 1].block  # the premise: one unit

    found = heading_texts(build(path))

    assert found == (["Condensed Consolidated Statements of Operations"] if is_heading else [])


# -- 17. widely spaced paragraphs --------------------------------------------------------------------------


def spaced_paragraph(sheet: Sheet, text: str, *, justify: bool) -> None:
    """10.5pt lines at an 18pt pitch (MuPDF makes a block of each), justified to a 420pt measure or ragged
    right, as a word processor sets them."""
    parts = textwrap.wrap(text, 85)
    for number, part in enumerate(parts):
        words = part.split()
        if not justify or number == len(parts) - 1:
            sheet.line(part, size=10.5, pitch=18)
            continue
        widths = [pymupdf.get_text_length(word, fontname="helv", fontsize=10.5) for word in words]
        space = (420 - sum(widths)) / (len(words) - 1)
        x = LEFT
        for word, width in zip(words, widths, strict=True):
            sheet.page.insert_text((x, sheet.y), word, fontsize=10.5, fontname="helv")
            x += width + space
        sheet.y += 18
    sheet.y += 12


def write_spaced_report(path: Path, *, justify: bool) -> Path:
    """Three statement pages in 8pt (the document's body size), then a page with a 10.5pt title and two
    widely spaced 10.5pt paragraphs."""
    document = pymupdf.open()
    for table in range(3):
        sheet = Sheet(document, top=80)
        for row in range(45):
            sheet.line(SENTENCES[(row + table) % len(SENTENCES)][:34], size=8, pitch=0)
            sheet.line(f"{1000 + 37 * row:,}", size=8, x=400, pitch=0)
            sheet.line(f"{900 + 29 * row:,}", size=8, x=470, pitch=14)
    sheet = Sheet(document, top=90)
    sheet.line("Liquidity and Capital Resources", size=10.5, pitch=30)  # control: a real 10.5pt title
    spaced_paragraph(sheet, prose(0, 5), justify=justify)
    spaced_paragraph(sheet, prose(5, 5), justify=justify)
    document.save(path)
    return path


def check_spaced_report(path: Path) -> None:
    assert raw_blocks(path, 3) >= 8  # the premises: MuPDF cuts the paragraphs into a block per line,
    assert body_size([page_lines(path, index) for index in range(4)]) == 8  # and the body is 8pt

    document = build(path)

    assert headings(document) == [(3, "h1", "Liquidity and Capital Resources")]
    paragraphs = texts_of(document, ParagraphNode)
    assert prose(0, 5) in paragraphs
    assert prose(5, 5) in paragraphs


def test_widely_spaced_justified_paragraph_lines_are_not_headings(tmp_path: Path) -> None:
    check_spaced_report(write_spaced_report(tmp_path / "spaced.pdf", justify=True))


def test_widely_spaced_ragged_right_paragraph_lines_are_not_headings(tmp_path: Path) -> None:
    check_spaced_report(write_spaced_report(tmp_path / "spaced-ragged.pdf", justify=False))


# -- 18. a distinct line standing alone: italics, another font, small capitals ------------------------------

TITLE = "Critical Accounting Estimates"


@pytest.mark.parametrize(
    ("title", "font", "is_heading"),
    [
        pytest.param(TITLE, "heit", True, id="italic"),
        pytest.param(TITLE, "tiro", True, id="another-font"),
        pytest.param(TITLE, "helv", False, id="control-body-font"),
        pytest.param(f"Figure 3 {TITLE}", "heit", False, id="italic-caption"),
        pytest.param(
            f"{TITLE} of the Group and of Each of Its Operating Segments Here", "heit", False, id="long"
        ),
        pytest.param(TITLE, "cour", False, id="code-font"),
    ],
)
def test_a_lone_line_set_apart_from_the_body_before_a_paragraph_is_a_heading(
    tmp_path: Path, title: str, font: str, is_heading: bool
) -> None:
    path = write_titled_page(tmp_path / "apart.pdf", title, font=font)
    line = next(line for line in page_lines(path).lines if line.text == title)
    assert (line.size, line.bold, line.italic) == (10.0, False, font == "heit")  # the premise: body size

    assert heading_texts(build(path)) == ([title] if is_heading else [])


@pytest.mark.parametrize(
    ("title", "is_heading"),
    [
        pytest.param("Elastic Stop Nut", True, id="short-then-a-sentence"),
        # A paragraph opening in italics fills the line, and its sentence goes on below.
        pytest.param("The elastic stop nut is a standard nut with the height increased", False, id="fills"),
    ],
)
def test_an_italic_title_heading_its_paragraphs_block_is_a_heading(
    tmp_path: Path, title: str, is_heading: bool
) -> None:
    document = pymupdf.open()
    body_page(document)
    sheet = Sheet(document)
    sheet.paragraph(prose(10, 2) + ".", after=0)
    sheet.line(title, font="heit")  # at the paragraph's own pitch: MuPDF keeps one block
    following = (
        "The nut is made of one piece of metal and holds tight under vibration."
        if is_heading
        else ("to accommodate a fibre locking collar that is not threaded and grips the bolt.")
    )
    sheet.paragraph(following + " " + prose(20, 2), after=0)
    path = save(document, tmp_path, "run-on.pdf")
    lines = page_lines(path, 1).lines
    opening = next(position for position, line in enumerate(lines) if line.text == title)
    assert lines[opening].block == lines[opening + 1].block  # the premise: one unit with its paragraph

    assert heading_texts(build(path)) == ([title] if is_heading else [])


@pytest.mark.parametrize(
    ("title", "is_heading"),
    [("II. RELATED WORK", True), ("RELATED WORK", False), ("II. Related work", False)],
)
def test_a_numbered_title_in_small_capitals_below_body_size_is_a_heading(
    tmp_path: Path, title: str, is_heading: bool
) -> None:
    document = pymupdf.open()
    body_page(document)
    sheet = Sheet(document)
    sheet.paragraph(prose(10, 3), after=14)
    sheet.line(title, size=8, pitch=20)  # 8 pt capitals on a 10 pt body, as IEEE papers set them
    sheet.paragraph(prose(14, 3))
    path = save(document, tmp_path, "small-caps.pdf")

    assert heading_texts(build(path)) == ([title] if is_heading else [])


@pytest.mark.parametrize(
    ("title", "is_heading"),
    [
        ("CREATE PERMISSION <permission name>", False),
        ("SET x = 1;", False),
        ("Create Permission Statements", True),
        # A title's own semicolon and a lone comparison sign are punctuation, not code.
        ("Liquidity; Capital Resources", True),
        ("Loans > 90 Days Past Due", True),
    ],
)
def test_a_bold_line_of_code_is_not_a_heading(tmp_path: Path, title: str, is_heading: bool) -> None:
    path = write_titled_page(tmp_path / "code.pdf", title, font="hebo")

    assert heading_texts(build(path)) == ([title] if is_heading else [])


@pytest.mark.parametrize(
    ("running", "is_heading"),
    [
        ("Chapter 2. Roles and separation of duties {page}", False),
        ("Chapter 2. Roles and separation of duties", True),
    ],
)
def test_a_chapters_running_title_with_its_page_number_is_no_heading(
    tmp_path: Path, running: str, is_heading: bool
) -> None:
    # Two pages of a chapter in a long book: too few to repeat on a quarter of the pages.
    document = pymupdf.open()
    for number in range(12):
        sheet = Sheet(document, top=40)
        if number in (2, 3):
            sheet.line(running.format(page=number + 11), font="hebo", pitch=50)
        else:
            sheet.skip(50)
        for paragraph in range(3):
            sheet.paragraph(prose(3 * number + paragraph, 3))
    path = save(document, tmp_path, "chapter.pdf")

    texts = heading_texts(build(path))
    assert (texts == [running, running]) is is_heading
    if not is_heading:
        assert texts == []
        assert texts_of(build(path), HeaderNode) == [running.format(page=13), running.format(page=14)]


# -- 19. titles run into their text ---------------------------------------------------------------------


def write_part_two(path: Path, *, labels: tuple[str, ...]) -> Path:
    """A 10-Q's Part II: two Items as bold titles over paragraphs, then three run into one line each."""
    document = pymupdf.open()
    body_page(document)
    sheet = Sheet(document)
    sheet.line("PART II. OTHER INFORMATION", font="hebo", pitch=24)
    for label, title in zip(labels[:2], ("Legal Proceedings", "Risk Factors"), strict=True):
        sheet.line(f"{label} {title}", font="hebo", pitch=18)
        sheet.paragraph(prose(labels.index(label), 2))
    for label, title, text in zip(
        labels[2:],
        ("Defaults Upon Senior Securities.", "Mine Safety Disclosures.", "Other Information."),
        ("None.", "Not applicable.", "None."),
        strict=True,
    ):
        sheet.line(f"{label} {title} {text}", pitch=22)
    return save(document, path.parent, path.name)


def test_a_title_run_into_its_text_is_a_heading_when_its_label_continues_a_series(tmp_path: Path) -> None:
    path = write_part_two(
        tmp_path / "10q.pdf", labels=("Item 1.", "Item 1A.", "Item 3.", "Item 4.", "Item 5.")
    )

    document = build(path)

    assert heading_texts(document)[-3:] == [
        "Item 3. Defaults Upon Senior Securities.",
        "Item 4. Mine Safety Disclosures.",
        "Item 5. Other Information.",
    ]
    paragraphs = texts_of(document, ParagraphNode)
    assert paragraphs[-3:] == ["None.", "Not applicable.", "None."]  # the rest of each line, kept
    run_in = next(
        node
        for _, node in document.iter_nodes()
        if isinstance(node, HeadingNode) and node.content == "Item 4. Mine Safety Disclosures."
    )
    with pymupdf.open(path) as source:
        line_width = max(b[2] for b in source[1].get_text("words") if b[4] == "applicable.")
    assert run_in.bbox is not None and run_in.bbox[2] < line_width  # its box ends before the line's end
    # The rest of the line, the section's first paragraph, has the rest of the box: they meet, not overlap.
    rest = next(
        node
        for _, node in document.iter_nodes()
        if isinstance(node, ParagraphNode) and node.content == "Not applicable."
    )
    assert rest.bbox is not None
    assert rest.bbox[0] == run_in.bbox[2] and rest.bbox[2] >= line_width - 1
    assert (rest.bbox[1], rest.bbox[3]) == (run_in.bbox[1], run_in.bbox[3])


def test_the_same_lines_without_a_series_or_in_sentence_case_stay_paragraphs(tmp_path: Path) -> None:
    # Labels that open no series (each once) are references, not a document's numbered parts.
    path = write_part_two(
        tmp_path / "mixed.pdf", labels=("Item 1.", "Note 2.", "Section 3.", "Article 4.", "Part 5.")
    )
    assert not any(
        text.endswith(("Securities.", "Disclosures.", "Information.")) for text in heading_texts(build(path))
    )

    document = pymupdf.open()
    sheet = body_page(document)
    for number in (1, 2, 3):
        sheet.line(f"Item {number}. Title {number}", font="hebo", pitch=18)
        sheet.paragraph(prose(number, 1))
    sheet.line("Item 7. Management's discussion of results. It is incorporated by reference.", pitch=22)
    path = save(document, tmp_path, "sentence.pdf")
    assert "Item 7. Management's discussion of results." not in heading_texts(build(path))


def run_in_line(sheet: Sheet, label: str, title: str, text: str) -> None:
    """One line: ``label`` in the body's font, ``title`` in bold, then ``text`` in the body's font again (a
    LaTeX run-in subsection: "2.1. **High-degree centrality.** In this method...")."""
    x = LEFT
    for piece, font in ((f"{label} ", "helv"), (f"{title} ", "hebo"), (text, "helv")):
        sheet.page.insert_text((x, sheet.y), piece, fontsize=10, fontname=font)
        x += pymupdf.get_text_length(piece, fontname=font, fontsize=10)
    sheet.y += 13


def write_run_in_subsections(
    path: Path,
    *,
    labels: tuple[str, ...],
    parent: str | None,
    titles: tuple[str, ...] = ("High-degree centrality.", "Closeness centrality.", "Betweenness centrality."),
) -> Path:
    """A body page, then a section heading ``parent`` (none when None) over three paragraphs, each opened by
    a bold title run into its text and led by one of ``labels``."""
    document = pymupdf.open()
    body_page(document)
    sheet = Sheet(document)
    if parent is not None:
        sheet.line(parent, size=14, font="hebo", pitch=22)
    for number, (label, title) in enumerate(zip(labels, titles, strict=True)):
        run_in_line(sheet, label, title, "In this method the nodes with the highest degree are")
        sheet.paragraph(prose(number, 2))
    return save(document, path.parent, path.name)


def test_a_bold_title_run_into_its_text_after_a_subsection_number_is_a_heading(tmp_path: Path) -> None:
    path = write_run_in_subsections(
        tmp_path / "paper.pdf", labels=("2.1.", "2.2.", "2.3."), parent="2 Measures"
    )

    document = build(path)

    assert heading_texts(document) == [
        "2 Measures",
        "2.1. High-degree centrality.",
        "2.2. Closeness centrality.",
        "2.3. Betweenness centrality.",
    ]
    paragraphs = texts_of(document, ParagraphNode)
    assert sum(text.startswith("In this method the nodes") for text in paragraphs) == 3  # the rest, kept


@pytest.mark.parametrize(
    ("labels", "parent"),
    [
        (("2.1.", "2.2.", "2.3."), None),  # no section "2" above them: bold terms of numbered paragraphs
        (("5.1.", "5.2.", "5.3."), "2 Measures"),  # their parent is no heading of the document
        (("1.", "2.", "3."), "2 Measures"),  # a numbered list whose items open with a bold term
        (("2.1.", "7.3.", "9.4."), "2 Measures"),  # one has its parent: a series of one is none
    ],
)
def test_bold_run_in_titles_without_a_numbered_parent_stay_paragraphs(
    tmp_path: Path, labels: tuple[str, ...], parent: str | None
) -> None:
    path = write_run_in_subsections(tmp_path / "paper.pdf", labels=labels, parent=parent)

    assert not any("centrality" in text for text in heading_texts(build(path)))


@pytest.mark.parametrize(
    "titles",
    [("Note:", "Warning:", "Caution:"), ("Definition.", "Lemma.", "Theorem.")],
)
def test_numbered_notes_and_statements_in_bold_are_not_titles(
    tmp_path: Path, titles: tuple[str, ...]
) -> None:
    path = write_run_in_subsections(
        tmp_path / "manual.pdf", labels=("2.1.", "2.2.", "2.3."), parent="2 Measures", titles=titles
    )

    assert heading_texts(build(path)) == ["2 Measures"]


def span_line(*pieces: tuple[str, str]) -> dict[str, object]:
    """A text block of one line as PyMuPDF's ``dict`` gives it: a span per ``(text, font)``, flags 4 (the
    fonts' own flags say nothing of weight, as TeX's Type 1 fonts do not)."""
    spans, x = [], 72.0
    for text, font in pieces:
        width = 5.0 * len(text)
        spans.append(
            {"text": text, "font": font, "size": 10.0, "flags": 4, "bbox": (x, 100.0, x + width, 110.0)}
        )
        x += width
    return {
        "type": 0,
        "bbox": (72.0, 100.0, x, 110.0),
        "lines": [{"spans": spans, "bbox": (72.0, 100.0, x, 110.0)}],
    }


@pytest.mark.parametrize(
    ("font", "bold"),
    [("ABCDEF+CMBX10", True), ("CMB10", True), ("SFBX1000", True), ("CMR10", False), ("CMCSC10", False)],
)
def test_tex_bold_fonts_are_bold_by_their_names(font: str, bold: bool) -> None:
    (line,) = lines_from_blocks([span_line(("Measures of centrality", font))], 0, 612, 792).lines
    assert line.bold is bold


def test_a_lines_bold_opening_is_its_bold_lead() -> None:
    pieces = (
        ("2.1.", "CMR10"),
        (" ", "CMBX10"),
        ("High-degree centrality.", "CMBX10"),
        (" In this", "CMR10"),
    )
    (line,) = lines_from_blocks([span_line(*pieces)], 0, 612, 792).lines
    assert line.bold_lead == "2.1. High-degree centrality."
    (plain,) = lines_from_blocks(
        [span_line(("In this", "CMR10"), (" bold", "CMBX10"), (" text", "CMR10"))], 0, 612, 792
    ).lines
    assert plain.bold_lead == ""  # a bold word inside a sentence opens nothing
    (spaced,) = lines_from_blocks([span_line((" ", "CMR10"), *pieces)], 0, 612, 792).lines
    assert spaced.bold_lead == "2.1. High-degree centrality."  # a space set before the number changes nothing


# -- 20. two-column pages ----------------------------------------------------------------------------------


def column_text(
    page: pymupdf.Page, x: float, y: float, text: str, lines: int, chars: int = COLUMN_CHARS
) -> float:
    """At most ``lines`` lines of ``text`` wrapped to ``chars`` characters at ``x`` from baseline ``y``,
    10 pt every 13 pt; returns the baseline after them."""
    for part in textwrap.wrap(text, chars)[:lines]:
        page.insert_text((x, y), part, fontsize=10, fontname="helv")
        y += 13
    return y


def write_paper_page(path: Path, *, beside: str, stamp: bool = False, right_lines: int = 12) -> Path:
    """A two-column paper's page: running text in both columns, a bold "3.2 Dataset Construction" in the
    left column, and ``beside`` on its band in the right column ("short": a paragraph's last line;
    "table": a table row of figures). ``stamp``: arXiv's identifier set on end in the left margin."""
    document = pymupdf.open()
    page = document.new_page()
    y = column_text(page, LEFT_COLUMN, 80.0, prose(0, 4), 8)
    title_y = y + 14
    page.insert_text((LEFT_COLUMN, title_y), "3.2 Dataset Construction", fontsize=11, fontname="hebo")
    y = title_y + 16
    for text in textwrap.wrap(prose(4, 3), COLUMN_CHARS)[:6]:
        page.insert_text((LEFT_COLUMN, y), text, fontsize=10, fontname="helv")
        y += 13
    right = [text for text in textwrap.wrap(prose(8, 8), COLUMN_CHARS)][:right_lines]
    y = 80.0
    for text in right:
        page.insert_text((RIGHT_COLUMN, y), text, fontsize=10, fontname="helv")
        y += 13
    if beside == "short":
        page.insert_text((RIGHT_COLUMN, title_y), "as the figure shows.", fontsize=10, fontname="helv")
    elif beside == "table":
        for x, cell in (
            (RIGHT_COLUMN, "# of items"),
            (RIGHT_COLUMN + 110, "85"),
            (RIGHT_COLUMN + 170, "8,895"),
        ):
            page.insert_text((x, title_y), cell, fontsize=8, fontname="helv")
    if stamp:
        page.insert_text(
            (30, 450), "arXiv:2303.05039v2 [cs.IR] 9 Mar 2023", fontsize=20, fontname="tiro", rotate=90
        )
    return save(document, path.parent, path.name)


@pytest.mark.parametrize(
    ("beside", "stamp", "right_lines", "is_heading"),
    [
        pytest.param("short", False, 12, True, id="last-line-of-a-paragraph-in-the-other-column"),
        pytest.param("table", False, 12, True, id="table-row-in-the-other-column"),
        pytest.param("none", True, 0, True, id="arxiv-stamp-on-end-in-the-margin"),
        pytest.param("table", False, 2, False, id="control-figures-beside-without-two-columns-of-text"),
    ],
)
def test_a_title_beside_the_other_columns_text_of_a_two_column_page_is_a_heading(
    tmp_path: Path, beside: str, stamp: bool, right_lines: int, is_heading: bool
) -> None:
    path = write_paper_page(tmp_path / "paper.pdf", beside=beside, stamp=stamp, right_lines=right_lines)
    lines = page_lines(path).lines
    title = next(line for line in lines if line.text == "3.2 Dataset Construction")
    shares_band = [
        line
        for line in lines
        if line is not title and min(line.bbox[3], title.bbox[3]) - max(line.bbox[1], title.bbox[1]) > 5
    ]
    assert shares_band  # the premise: something stands on the title's band
    if stamp:
        assert [line.bbox[3] - line.bbox[1] > 100 for line in shares_band] == [True]  # the stamp alone

    assert ("3.2 Dataset Construction" in heading_texts(build(path))) is is_heading


def write_paper_references(path: Path, *, title_font: str) -> Path:
    """A two-column paper's last page: running text in both columns, then in the left column a title in
    ``title_font`` alone over a reference list set smaller, one entry a line, each its own unit (as wide as
    the column, not as much of the page)."""
    document = pymupdf.open()
    page = document.new_page()
    y = column_text(page, LEFT_COLUMN, 80.0, prose(0, 4), 8) + 14
    page.insert_text((LEFT_COLUMN, y), "References", fontsize=10, fontname=title_font)
    y += 22
    for number in range(4):
        entry = f"[{number + 1}] A. Author, B. Writer, A study of things, J. Res. {number + 3} (2019) 1-9."
        page.insert_text((LEFT_COLUMN, y), entry, fontsize=8, fontname="helv")
        y += 20
    column_text(page, RIGHT_COLUMN, 80.0, prose(8, 8), 12)
    return save(document, path.parent, path.name)


def test_a_weak_title_over_a_list_as_wide_as_its_column_heads_it(tmp_path: Path) -> None:
    # An italic "References" over one-line entries: each entry is running text as wide as its column,
    # which on a two-column page is under half of the page.
    path = write_paper_references(tmp_path / "paper.pdf", title_font="heit")

    assert heading_texts(build(path)) == ["References"]


# -- 21. titles over several lines -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("indent", "is_joined"),
    [(22.0, True), (0.0, True), (90.0, False)],
)
def test_a_numbered_title_hanging_under_its_words_is_one_heading(
    tmp_path: Path, indent: float, is_joined: bool
) -> None:
    document = pymupdf.open()
    body_page(document)
    sheet = Sheet(document)
    sheet.paragraph(prose(10, 2), after=14)
    first = "3.3 Preliminary Considerations and Important Criteria for the Production of"
    sheet.line(first, size=14, font="hebo", pitch=17)
    sheet.line("Accessible Documents", size=14, font="hebo", x=LEFT + indent, pitch=26)
    sheet.paragraph(prose(12, 3))
    path = save(document, tmp_path, "hanging.pdf")

    joined = f"{first} Accessible Documents"
    assert (joined in heading_texts(build(path))) is is_joined


@pytest.mark.parametrize(
    ("label", "below", "expected"),
    [
        pytest.param("Annex B", "Optional Mixed Mode", ["Annex B Optional Mixed Mode"], id="annex"),
        pytest.param(
            "Appendix A:", "Data Collection Forms", ["Appendix A: Data Collection Forms"], id="colon"
        ),
        pytest.param(
            "PART II",
            "Item 5. Market for Common Equity",
            ["PART II", "Item 5. Market for Common Equity"],
            id="control-numbered-title-below",
        ),
    ],
)
def test_a_label_line_and_the_title_below_it_are_one_heading(
    tmp_path: Path, label: str, below: str, expected: list[str]
) -> None:
    document = pymupdf.open()
    body_page(document)
    sheet = Sheet(document)
    sheet.paragraph(prose(10, 2), after=20)
    sheet.line(label, size=14, font="hebo", pitch=20)
    sheet.line(below, size=14, font="hebo", pitch=26)
    sheet.paragraph(prose(12, 3))
    path = save(document, tmp_path, "label.pdf")

    assert heading_texts(build(path)) == expected


@pytest.mark.parametrize(("around", "is_heading"), [("code", False), ("prose", True)])
def test_a_bold_keyword_among_lines_of_code_is_not_a_heading(
    tmp_path: Path, around: str, is_heading: bool
) -> None:
    document = pymupdf.open()
    body_page(document)
    sheet = Sheet(document)
    sheet.paragraph(prose(10, 2), after=20)
    before, after = (
        ("AS <correlation name>", "WHERE <logic to test>")
        if around == "code"
        else ("The clause that follows names the rows.", "It is read for every row of the table.")
    )
    sheet.line(before, size=11.5, pitch=24)
    sheet.line("FOR ROWS", size=11.5, font="hebo", pitch=24)
    sheet.line(after, size=11.5, pitch=24)
    sheet.paragraph(prose(12, 3))
    path = save(document, tmp_path, "sql.pdf")

    assert ("FOR ROWS" in heading_texts(build(path))) is is_heading


@pytest.mark.parametrize(("letters", "expected"), [("ABC", ["A", "B", "C"]), ("AXB", []), ("AB", [])])
def test_capitals_heading_an_index_in_alphabetical_order_are_headings(
    tmp_path: Path, letters: str, expected: list[str]
) -> None:
    document = pymupdf.open()
    body_page(document)
    sheet = Sheet(document)
    for letter in letters:
        sheet.line(letter, size=14, font="hebo", pitch=20)
        for word in ("abstract, 12", "annotation, 40", "appendix, 77"):
            sheet.line(f"{letter}{word}", pitch=14)
        sheet.skip(10)
    path = save(document, tmp_path, "index.pdf")

    assert [text for text in heading_texts(build(path)) if len(text) == 1] == expected


@pytest.mark.parametrize(
    ("title", "below", "is_heading"),
    [
        pytest.param("Participant Identification:", "paragraph", True, id="before-running-text"),
        pytest.param("Principal Investigator:", "Dr Jane Roe", False, id="label-over-a-name"),
        pytest.param(
            "The following table sets out the terms of each agreement:", "paragraph", False, id="long"
        ),
    ],
)
def test_a_short_bold_title_ending_in_a_colon_before_running_text_is_a_heading(
    tmp_path: Path, title: str, below: str, is_heading: bool
) -> None:
    document = pymupdf.open()
    body_page(document)
    sheet = Sheet(document)
    sheet.paragraph(prose(10, 2), after=20)
    sheet.line(title, size=12, font="hebo", pitch=20)
    if below == "paragraph":
        sheet.paragraph(prose(12, 3))
    else:
        sheet.line(below, pitch=30)
        sheet.paragraph(prose(12, 3))
    path = save(document, tmp_path, "colon.pdf")

    assert (title in heading_texts(build(path))) is is_heading


def test_latin_capitals_inside_a_korean_sentence_are_no_capitals_cue(tmp_path: Path) -> None:
    document = pymupdf.open()
    sheet = Sheet(document)  # one font throughout, as a Korean report sets its text
    for number in range(3):
        sheet.paragraph(prose(3 * number, 3), font="korea")
    line = "기후변화, SARS, MERS, 코로나-19 등 예상하지"
    sheet.line(line, font="korea", pitch=26)
    sheet.paragraph(prose(12, 3), font="korea")
    path = save(document, tmp_path, "korean.pdf")
    assert any(found.text == line for found in page_lines(path).lines)  # the premise: one line as written

    assert line not in heading_texts(build(path))


@pytest.mark.parametrize(("third", "is_heading"), [("same-style", False), ("body", True)])
def test_two_large_lines_going_on_in_their_style_are_a_paragraph_not_a_title(
    tmp_path: Path, third: str, is_heading: bool
) -> None:
    document = pymupdf.open()
    body_page(document)
    sheet = Sheet(document)
    sheet.paragraph(prose(10, 2), after=20)
    # Ragged right at 11 pt: the lines do not fill the measure, so no line "wraps" by the edge test.
    for text in ("IBM Redbooks are developed", "by the IBM International"):
        sheet.line(text, size=11, pitch=13)
    if third == "same-style":
        for text in ("Technical Support", "Organization. Experts from", "IBM, customers and partners."):
            sheet.line(text, size=11, pitch=13)
    sheet.skip(10)
    sheet.paragraph(prose(12, 3))
    path = save(document, tmp_path, "sidebar.pdf")

    texts = heading_texts(build(path))
    assert ("IBM Redbooks are developed by the IBM International" in texts) is is_heading
    assert "Technical Support" not in texts


@pytest.mark.parametrize(("columns", "is_heading"), [(3, True), (1, False)])
def test_a_title_beside_the_next_columns_text_on_a_three_column_page_is_a_heading(
    tmp_path: Path, columns: int, is_heading: bool
) -> None:
    # An instructions book's page: three columns of 9 pt text; the title in the first column shares its band
    # with the second column's text, which crosses the page's middle. The control has the title's column
    # alone (no columns of text beside it): then the text beside it is a cell of its row.
    document = pymupdf.open()
    page = document.new_page()
    for row, text in enumerate(textwrap.wrap(prose(0, 4), 34)[:14]):
        page.insert_text((40, 80 + 12 * row), text, fontsize=9, fontname="helv")
    # The next columns' paragraphs run on past the title's band (the control: one line beside it).
    for number, left in enumerate((222.0, 404.0) if columns == 3 else (222.0,)):
        rows = (
            textwrap.wrap(prose(3 + 3 * number, 8), 34)[:24] if columns == 3 else ["Additional information"]
        )
        for row, text in enumerate(rows):
            y = 80 + 12 * row if columns == 3 else 80 + 12 * 15 + 1
            page.insert_text((left, y), text, fontsize=9, fontname="helv")
    page.insert_text((40, 80 + 12 * 15 + 4), "General Instructions", fontsize=13, fontname="hebo")
    for row, text in enumerate(textwrap.wrap(prose(20, 3), 34)[:8]):
        page.insert_text((40, 80 + 12 * 17 + 12 * row), text, fontsize=9, fontname="helv")
    path = save(document, tmp_path, "three.pdf")

    assert ("General Instructions" in heading_texts(build(path))) is is_heading


def test_columns_narrower_than_a_fifth_of_the_paper_are_columns_of_a_narrow_type_area(tmp_path: Path) -> None:
    # A LaTeX manual's index: three columns of 8 pt text, 95 pt wide, on a letter page whose text spans
    # 310 pt (wide margins). Each column is a sixth of the paper but a third of the type area: the title in
    # the first column, beside the other columns' lines, is a heading, not a cell of a row.
    document = pymupdf.open()
    page = document.new_page()
    lefts = (150.0, 258.0, 366.0)
    for number, left in enumerate(lefts):
        rows = textwrap.wrap(prose(3 * number, 6), 22)[: 26 if number else 14]
        for row, text in enumerate(rows):
            page.insert_text((left, 80 + 11 * row), text, fontsize=8, fontname="helv")
    page.insert_text((150, 80 + 11 * 15 + 4), "General Notes", fontsize=12, fontname="hebo")
    for row, text in enumerate(textwrap.wrap(prose(20, 3), 22)[:9]):
        page.insert_text((150, 80 + 11 * 17 + 11 * row), text, fontsize=8, fontname="helv")
    path = save(document, tmp_path, "narrow.pdf")
    assert max(line.bbox[2] - line.bbox[0] for line in page_lines(path).lines) < 0.2 * 612  # the premise

    assert "General Notes" in heading_texts(build(path))


def three_column_page(tmp_path: Path, case: str) -> Path:
    """A LaTeX manual's index page: three columns of 8 pt lines, 76 pt wide, on a type area of wide margins
    (each column a sixth of the paper), changed as ``case`` says."""
    document = pymupdf.open()
    page = document.new_page()
    lefts, wraps = (150.0, 258.0, 366.0), (22, 22, 22)
    if case == "uneven widths":
        wraps = (22, 22, 32)  # the third column half as wide again
    if case == "wide gutters":
        lefts = (150.0, 276.0, 402.0)  # 50 pt between columns of 76
    for number, (left, wrap) in enumerate(zip(lefts, wraps, strict=True)):
        for row, text in enumerate(textwrap.wrap(prose(3 * number, 6), wrap)[:26]):
            page.insert_text((left, 80 + 11 * row), text, fontsize=8, fontname="helv")
    if case == "text right of the columns":
        page.insert_text((470, 300), "Note 12", fontsize=8, fontname="helv")
    if case == "text left of the columns":
        page.insert_text((100, 300), "Note 12", fontsize=8, fontname="helv")
    if case == "margin furniture":  # a page number in the header band, a stamp on end in the margin
        page.insert_text((560, 40), "412", fontsize=8, fontname="helv")
        page.insert_text((30, 600), "arXiv:2401.00001v1 [cs.CL] 1 Jan 2024", fontsize=10, rotate=90)
    return save(document, tmp_path, "index.pdf")


@pytest.mark.parametrize(
    ("case", "tiled"),
    [
        ("as set", True),
        ("margin furniture", True),
        ("uneven widths", False),
        ("wide gutters", False),
        ("text right of the columns", False),
        ("text left of the columns", False),
    ],
)
def test_narrow_columns_count_only_when_they_tile_the_type_area(
    tmp_path: Path, case: str, tiled: bool
) -> None:
    # Columns too narrow for a fifth of the paper: of one width, from the type area's left edge to its
    # right, gutters of half a column at most. The margins' furniture is no part of the type area.
    columns = _column_page(page_lines(three_column_page(tmp_path, case)))

    assert (len(columns) == 3) is tiled and (columns == []) is not tiled


def test_a_table_of_text_cells_with_a_header_row_is_no_page_of_columns(tmp_path: Path) -> None:
    # A page holding only a table of four text columns of one width, written column by column: its columns
    # tile the type area, but each opens with a bold header on one band, a row of cells: its header cells
    # are no headings.
    document = pymupdf.open()
    page = document.new_page()
    heads = ["Requirement", "Description", "Owner", "Status"]
    for number, (left, head) in enumerate(zip((60.0, 181.0, 302.0, 423.0), heads, strict=True)):
        page.insert_text((left, 80), head, fontsize=10, fontname="hebo")
        for row, text in enumerate(textwrap.wrap(prose(3 * number, 6), 24)[:20]):
            page.insert_text((left, 96 + 12 * row), text, fontsize=9, fontname="helv")
    path = save(document, tmp_path, "cells.pdf")

    assert _column_page(page_lines(path)) == []
    assert not set(heads) & set(heading_texts(build(path)))


def test_a_terms_table_on_a_page_of_running_text_is_no_page_of_columns(tmp_path: Path) -> None:
    # A glossary table on a page of full-width paragraphs, written column by column: terms at the left,
    # each beside its description. Its two columns are a fifth to a half of the type area wide, but
    # differ in width and leave the type area's right part empty: they do not tile it, so the page is not
    # set in columns and a term beside its description is a cell of a row, not a heading.
    document = pymupdf.open()
    page = document.new_page()
    y = 72.0
    for text in textwrap.wrap(prose(0, 4), 95):
        page.insert_text((72, y), text, fontsize=10, fontname="helv")
        y += 13
    terms = ["Accrual basis terms", "Amortization terms", "Capital lease terms", "Depreciation terms"]
    terms += ["Fair value terms used", "Goodwill terms used"]
    meanings = ["Revenue recorded when earned", "Spreading a cost over time", "A lease kept as an asset"]
    meanings += ["Wear of fixed assets by year", "The price in an orderly sale", "Paid above the net assets"]
    top = y + 10
    for column, texts, font in ((72.0, terms, "hebo"), (230.0, meanings, "helv")):
        for row, text in enumerate(texts):
            page.insert_text((column, top + 14 * row), text, fontsize=10, fontname=font)
    y = top + 14 * len(terms) + 10
    for text in textwrap.wrap(prose(7, 4), 95):
        page.insert_text((72, y), text, fontsize=10, fontname="helv")
        y += 13
    path = save(document, tmp_path, "glossary.pdf")
    lines = page_lines(path)
    assert [line.text for line in lines.lines if line.text in terms] == terms  # the premise: lines apart

    assert _column_page(lines) == []
    assert not set(terms) & set(heading_texts(build(path)))


def test_a_long_numbered_item_title_in_body_type_is_still_a_heading(tmp_path: Path) -> None:
    # The twelve-word limit is for titles in italics or another font; Items run to fourteen words and more.
    title = "Item 7. Management's Discussion and Analysis of Financial Condition and Results of Operations"
    assert len(title.split()) > 12
    path = write_titled_page(tmp_path / "item7.pdf", title)

    assert heading_texts(build(path)) == [title]


def test_a_title_set_large_over_three_lines_is_one_heading_not_a_paragraph(tmp_path: Path) -> None:
    document = pymupdf.open()
    body_page(document)
    sheet = Sheet(document)
    sheet.paragraph(prose(10, 2), after=20)
    lines = (
        "ITEM 12. SECURITY OWNERSHIP OF CERTAIN",
        "BENEFICIAL OWNERS AND MANAGEMENT",
        "AND RELATED STOCKHOLDER MATTERS",
    )
    for text in lines:
        sheet.line(text, size=14, font="hebo", pitch=17)
    sheet.skip(10)
    sheet.paragraph(prose(12, 3))
    path = save(document, tmp_path, "item12.pdf")

    texts = heading_texts(build(path))
    assert any(text.startswith(lines[0]) and lines[1] in text for text in texts), texts


def test_a_running_title_after_its_page_number_on_two_pages_is_a_header(tmp_path: Path) -> None:
    document = pymupdf.open()
    for number in range(12):
        sheet = Sheet(document, top=40)
        if number in (4, 6):
            sheet.line(f"{50 + number} 3.3. UBERLAGERUNGEN", size=8, pitch=50)
        else:
            sheet.skip(50)
        for paragraph in range(3):
            sheet.paragraph(prose(number + paragraph, 3))
    path = save(document, tmp_path, "book.pdf")

    document_index = build(path)
    assert not any("UBERLAGERUNGEN" in text for text in heading_texts(document_index))
    assert texts_of(document_index, HeaderNode) == ["54 3.3. UBERLAGERUNGEN", "56 3.3. UBERLAGERUNGEN"]


# -- 21. small capitals ------------------------------------------------------------------------------------


def _renamed_fonts(document: pymupdf.Document, names: dict[str, str]) -> pymupdf.Document:
    """The document saved with each font whose name holds a key of ``names`` renamed to its value (what a
    publisher's fonts are called: the shapes stay PyMuPDF's own)."""
    for xref in range(1, document.xref_length()):
        kind = document.xref_get_key(xref, "Type")[1]
        key = "BaseFont" if kind == "/Font" else "FontName" if kind == "/FontDescriptor" else None
        if key is None:
            continue
        current = document.xref_get_key(xref, key)[1]
        for old, new in names.items():
            if old in current:
                document.xref_set_key(xref, key, f"/{new}")
    return pymupdf.open("pdf", document.tobytes())


@pytest.mark.parametrize(("font", "heading"), [("Caecilia-HeavySC", True), ("Caecilia-Heavy", False)])
def test_a_title_opening_with_a_small_capital_is_a_heading(tmp_path: Path, font: str, heading: bool) -> None:
    # "l-asparaginase applications": the "l" is set in the small-capitals cut of the title's bold font
    # (named for it, "…HeavySC"), so it is drawn a capital; in a plain cut it is a sentence going on.
    document = pymupdf.open()
    page = document.new_page()
    y = 80.0
    y = column_text(page, 72, y, prose(0, 4), 6, 90)
    page.insert_font(fontname="Fsc", fontbuffer=pymupdf.Font("hebo").buffer)
    page.insert_text((72, y + 14), "l", fontsize=11, fontname="Fsc")
    after = 72 + pymupdf.get_text_length("l", fontname="hebo", fontsize=11)
    page.insert_text((after, y + 14), "-asparaginase applications", fontsize=11, fontname="hebo")
    y += 32
    y = column_text(page, 72, y, prose(4, 4), 6, 90)
    renamed = _renamed_fonts(document, {"Nimbus": font})
    spans = [
        span
        for block in renamed[0].get_text("dict")["blocks"]
        for line in block["lines"]
        for span in line["spans"]
        if span["text"] == "l"
    ]
    assert [span["font"] for span in spans] == [font]  # the premise: the opening's font is so named
    renamed.save(tmp_path / "review.pdf")

    built = build_index(tmp_path / "review.pdf", strategy="text")
    assert ("l-asparaginase applications" in heading_texts(built)) is heading


# -- 22. pages read turned ---------------------------------------------------------------------------------


def write_turned_page(path: Path) -> Path:
    """A landscape page stored portrait (600 x 800, ``/Rotate 90``) whose text reads upright as shown: a
    numbered title, a paragraph of six lines, a second title and a paragraph, set with shown coordinates."""
    document = pymupdf.open()
    page = document.new_page(width=600, height=800)
    page.set_rotation(90)

    def write(x: float, y: float, text: str, size: float, font: str) -> None:
        page.insert_text(
            pymupdf.Point(x, y) * page.derotation_matrix, text, fontsize=size, fontname=font, rotate=90
        )

    write(72, 80, "2 Context of the project", 14, "hebo")
    y = 110.0
    for text in textwrap.wrap(prose(0, 5), 110)[:6]:
        write(72, y, text, 10, "helv")
        y += 13
    write(72, y + 20, "3 State of the art", 14, "hebo")
    y += 50
    for text in textwrap.wrap(prose(5, 5), 110)[:5]:
        write(72, y, text, 10, "helv")
        y += 13
    document.save(path)
    return path


def test_a_page_turned_to_be_read_is_read_as_shown_and_boxed_as_stored(tmp_path: Path) -> None:
    path = write_turned_page(tmp_path / "landscape.pdf")
    with pymupdf.open(path) as saved:  # the premise: the text runs up the page as stored
        assert {line["dir"] for block in saved[0].get_text("dict")["blocks"] for line in block["lines"]} == {
            (0.0, -1.0)
        }
        rotation = saved[0].rotation_matrix

    built = build_index(path, strategy="text")

    nodes = [node for node in built.pages[0].nodes if node.type in ("heading", "paragraph")]
    assert [node.type for node in nodes] == ["heading", "paragraph", "heading", "paragraph"]
    assert [node.content for node in nodes if node.type == "heading"] == [
        "2 Context of the project",
        "3 State of the art",
    ]
    assert nodes[1].content == " ".join(textwrap.wrap(prose(0, 5), 110)[:6])  # its six lines, in order
    # Boxes are kept in the page's own (stored) coordinates: shown, the first title is where it was set.
    assert nodes[0].bbox is not None
    x0, y0, x1, y1 = nodes[0].bbox
    assert 0 <= x0 < x1 <= 600 and 0 <= y0 < y1 <= 800
    shown = pymupdf.Rect(nodes[0].bbox) * rotation
    assert abs(shown.x0 - 72) <= 2 and abs(shown.y1 - 84) <= 4


def spaced_titles_pdf(tmp_path: Path, titles: list[str]) -> Path:
    """A page of running text with ``titles`` set in 12 pt bold between its paragraphs, 34 pt apart."""
    document = pymupdf.open()
    page = document.new_page()
    y = column_text(page, 72, 80.0, prose(0, 4), 6, 90)
    for number, title in enumerate(titles):
        page.insert_text((72, y + 16 + 34 * number), title, fontsize=12, fontname="hebo")
    column_text(page, 72, y + 6 + 34 * len(titles), prose(4, 4), 6, 90)
    return save(document, tmp_path, "spaced.pdf")


def test_a_letter_spaced_title_is_kept_as_its_word(tmp_path: Path) -> None:
    # Titles set in spaced capitals often carry a space after every letter in the text layer.
    # ("N O T E  2": not letters alone, kept as set.)
    path = spaced_titles_pdf(tmp_path, ["R E F E R E N C E S", "N O T E  2"])

    titles = heading_texts(build_index(path, strategy="text"))
    assert "REFERENCES" in titles and "R E F E R E N C E S" not in titles
    assert "N O T E 2" in titles


def test_a_turned_page_keeps_the_documents_running_header_set_across_the_turn(tmp_path: Path) -> None:
    # A journal's landscape table page: the table's text reads upright as shown, the journal's header
    # stays where every page has it, along the top of the page as stored.
    turned = pymupdf.open(write_turned_page(tmp_path / "landscape.pdf"))
    document = pymupdf.open()
    for number in range(3):
        if number == 1:
            document.insert_pdf(turned)
            page = document[1]
        else:
            page = document.new_page(width=600, height=800)
            column_text(page, 72, 100.0, prose(number, 5), 8, 100)
        page.insert_text((72, 30), "Journal of Generated Documents 2026", fontsize=8, fontname="helv")
    document.save(tmp_path / "journal.pdf")

    built = build_index(tmp_path / "journal.pdf", strategy="text")
    for page in built.pages:
        (header,) = [node for node in page.nodes if node.type == "header"]
        assert header.content == "Journal of Generated Documents 2026"
    assert "2 Context of the project" in heading_texts(built)


@pytest.mark.parametrize(
    ("font", "small_caps"),
    [
        ("Caecilia-RomanSC", True),
        ("MinionPro-SemiboldSC", True),
        ("NotoSansSC", False),
        ("PingFangSC", False),
    ],
)
def test_small_capitals_fonts_by_their_names(font: str, small_caps: bool) -> None:
    # A weight run into "SC" names a small-capitals cut; a family run into it is Simplified Chinese.
    (line,) = lines_from_blocks([span_line(("Measures of centrality", font))], 0, 612, 792).lines
    assert line.small_caps is small_caps


def test_letter_spaced_words_stay_as_set_and_match_their_contents_entry(tmp_path: Path) -> None:
    from extract_thinker_pageindex.postprocess.toc import comparable_title

    # Words spaced apart by runs of spaces are left as set (joined, they would run together).
    path = spaced_titles_pdf(tmp_path, ["A N N U A L   R E P O R T"])
    assert "A N N U A L R E P O R T" in heading_texts(build_index(path, strategy="text"))
    # A contents entry set spaced matches the heading kept as its word.
    assert comparable_title("r e f e r e n c e s") == comparable_title("references") == "references"


def test_a_chart_label_near_a_turned_pages_edge_is_no_running_line(tmp_path: Path) -> None:
    # Across the turn, only a line running up or down the page as read may be the document's header.
    path = write_turned_page(tmp_path / "landscape.pdf")
    document = pymupdf.open(path)
    page = document[0]
    for number, year in enumerate(("2018", "2019", "2020", "2021")):
        shown = pymupdf.Point(30, 300 + 20 * number) * page.derotation_matrix
        page.insert_text(shown, year, fontsize=8, fontname="helv", rotate=90)
    document.insert_pdf(pymupdf.open(path))
    for number, year in enumerate(("2018", "2019", "2020", "2021")):
        shown = pymupdf.Point(30, 300 + 20 * number) * document[1].derotation_matrix
        document[1].insert_text(shown, year, fontsize=8, fontname="helv", rotate=90)
    document.save(tmp_path / "chart.pdf")

    built = build_index(tmp_path / "chart.pdf", strategy="text")
    for built_page in built.pages:
        assert [node.content for node in built_page.nodes if node.type in ("header", "footer")] == []
        assert {"2018", "2019", "2020", "2021"} <= {
            node.content for node in built_page.nodes if node.type == "paragraph"
        }


# -- a numbered title right over its first subsection ------------------------------------------------------


@pytest.mark.parametrize(
    ("subsection", "size", "gap", "is_heading"),
    [
        pytest.param("2.2.1 Principle of the coding scheme", 10.0, 0.0, True, id="first-subsection"),
        pytest.param("2.3 Optional coding schemes", 10.0, 0.0, False, id="a-sibling-not-a-subsection"),
        pytest.param("2.2.1 Principle of the coding scheme", 12.0, 0.0, False, id="subsection-set-larger"),
        pytest.param("2.2.1 Principle of the coding scheme", 10.0, 40.0, False, id="far-below"),
        pytest.param("2.2.1 Principle of the coding scheme", 10.0, -13.0, True, id="set-tight"),
        pytest.param("2.2.1.1 Principle of the coding scheme", 10.0, 0.0, False, id="two-levels-under"),
    ],
)
def test_an_italic_numbered_title_over_its_first_subsection_is_a_heading(
    tmp_path: Path, subsection: str, size: float, gap: float, is_heading: bool
) -> None:
    """An italic numbered title stands right over its first subsection (a standard's "2.2 Basic coding
    scheme" over "2.2.1 Principle of the coding scheme"), which introduces the running text: the title is
    a heading though no running text follows it. Over a sibling ("2.3"), over a subsection set larger (a
    section's running header over the page's first subheading) or far above one, it stays weak."""
    document = pymupdf.open()
    body_page(document)
    sheet = body_page(document, 9)
    sheet.skip(10)
    sheet.line("2.2 Basic facsimile coding scheme", font="heit")
    sheet.skip(10 + gap)  # a unit of its own, as a standard sets it
    sheet.line(subsection, font="heit", size=size)
    sheet.paragraph(prose(20, 3))
    titles = heading_texts(build(save(document, tmp_path)))
    assert subsection in titles  # the premise: the line over the running text is a heading
    assert ("2.2 Basic facsimile coding scheme" in titles) == is_heading


@pytest.mark.parametrize(
    ("section", "subsection"),
    [
        pytest.param("4.Study Population", "4.1 Number of Cases", id="number-touching"),
        pytest.param("4 Überblick der Methoden", "4.1 Ärztliche Versorgung", id="accented-capitals"),
    ],
)
def test_a_numbered_title_over_its_subsections_title_is_two_headings(
    tmp_path: Path, section: str, subsection: str
) -> None:
    """A bold numbered title set right over its first subsection's title, one block ("4.Study
    Population" over "4.1 Number of Cases"; titles opening with an accented capital too): two titles, the
    section's and its first subsection's, not one title wrapped (nor the first line of a bold
    paragraph)."""
    document = pymupdf.open()
    body_page(document)
    sheet = body_page(document, 9)
    sheet.skip(10)
    sheet.line(section, font="hebo", size=12)
    sheet.line(subsection, font="hebo", size=12)
    sheet.paragraph(prose(20, 3))
    titles = heading_texts(build(save(document, tmp_path)))
    assert section in titles and subsection in titles


def test_a_section_opening_its_subsections_is_no_list_of_labels(tmp_path: Path) -> None:
    """Short bold titles stacked with nothing between them, each numbered one level under the one before
    ("3 Results" / "3.1 Overview" / "3.1.1 Data"): a section opening its subsections, kept, where three
    short labels stacked alike (a signature block) are dropped."""
    document = pymupdf.open()
    body_page(document)
    sheet = body_page(document, 9)
    sheet.skip(10)
    for title in ("3 Results", "3.1 Overview", "3.1.1 Data"):
        sheet.line(title, font="hebo", size=12)
        sheet.skip(6)
    sheet.paragraph(prose(20, 3))
    titles = heading_texts(build(save(document, tmp_path)))
    assert {"3 Results", "3.1 Overview", "3.1.1 Data"} <= set(titles)


@pytest.mark.parametrize("title", ["1.2.3.2. Funding", "4.2.4 ZEVs", "2.1 GO"])
def test_a_short_title_under_a_long_number_is_a_heading(tmp_path: Path, title: str) -> None:
    """A title of one short word under a number of several parts ("1.2.3.2. Funding"): its letters are
    fewer than its number's characters, but the shape tests read the words after the number — a title,
    not a line of figures."""
    assert title in bold_line_headings(tmp_path, title)


@pytest.mark.parametrize(
    "entry",
    [
        "2.1 PRINCIPES GENERAUX DE FONCTIONNEMENT ............................... 16",
        "Preface and acknowledgements ..... vii",
        "3 Results of the field survey ···· 7",
        "2 Annex to the regulation ..... A-1",
    ],
)
def test_a_contents_entry_with_leaders_to_its_page_is_no_heading(tmp_path: Path, entry: str) -> None:
    """A line with dot leaders running to a page number ("2.1 PRINCIPES GENERAUX ....... 16", a roman or an
    "A-1" page), set bold on a page not read as a contents page: a contents entry, not a title."""
    word = entry.split()[1]
    assert not any(word in title for title in bold_line_headings(tmp_path, entry))


def bold_line_headings(tmp_path: Path, text: str) -> list[str]:
    """The headings of a document whose second page of body text holds ``text`` as a line of its own, bold
    and 12 pt, over a paragraph."""
    document = pymupdf.open()
    body_page(document)
    sheet = body_page(document, 9)
    sheet.skip(10)
    sheet.line(text, font="hebo", size=12)
    sheet.skip(4)
    sheet.paragraph(prose(20, 3))
    return heading_texts(build(save(document, tmp_path)))
