"""The PDF text strategy: headings, TOC, running lines, paragraphs, lists, columns, tables, images, metadata.

Every PDF here is written with PyMuPDF in a fixture (or is the bundled sample / the shared eval data), and
every document is built through the public ``build_index``; nothing of the project is mocked.
"""

from __future__ import annotations

import io
import logging
import re
import textwrap
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pymupdf
import pytest
from PIL import Image

from extract_thinker_pageindex import (
    Document,
    DocumentLoadError,
    EmptyDocumentError,
    FooterNode,
    HeaderNode,
    HeadingNode,
    ImageNode,
    ListItemNode,
    ModelRequiredError,
    PageIndexError,
    PageIndexWarning,
    PageSpecError,
    ParagraphNode,
    SectionInfo,
    SectionNode,
    TableNode,
    build_index,
    index_document,
    load_index,
)
from extract_thinker_pageindex.strategies.pdf_text import normalise_title, pdf_date
from pdf_support import CATALOG, LEFT_COLUMN, RIGHT_COLUMN, SENTENCES, prose, raw_pdf

SAMPLE_PDF = Path(__file__).resolve().parents[1] / "examples" / "data" / "service-agreement.pdf"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
LEFT = 72.0


def wrap(text: str, width: int) -> list[str]:
    return textwrap.wrap(text, width, break_on_hyphens=False)


def png(width: int, height: int, color: tuple[int, int, int]) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), color).save(buffer, "PNG")
    return buffer.getvalue()


class PageWriter:
    """Lays text down one new A4 page the way a word processor does: headings, wrapped paragraphs, lines.

    Base-14 fonts are used as they are ("helv", "hebo", "tiro", "tibo"); ``unicode=True`` writes with the
    same faces embedded, for characters outside Latin-1 (em dashes, bullets).
    """

    def __init__(self, document: pymupdf.Document, *, top: float = 100.0) -> None:
        self.page = document.new_page()
        self.y = top
        for name in ("helv", "hebo", "tiro", "tibo"):
            self.page.insert_font(fontname=f"u{name}", fontbuffer=pymupdf.Font(name).buffer)

    def line(
        self, text: str, *, x: float = LEFT, size: float = 10, font: str = "tiro", unicode: bool = False
    ) -> None:
        assert self.y < 760, "the fixture ran into the footer band; shorten its text"
        self.page.insert_text((x, self.y), text, fontsize=size, fontname=f"u{font}" if unicode else font)
        self.y += size * 1.3

    def heading(self, text: str, size: float, font: str = "hebo") -> None:
        self.y += 10
        self.line(text, size=size, font=font)
        self.y += 6

    def paragraph(self, text: str, *, font: str = "tiro", width: int = 90) -> None:
        for part in wrap(text, width):
            self.line(part, font=font)
        self.y += 10


def headings(document: Document) -> list[tuple[int, str, str]]:
    return [
        (page.index, node.level, node.content)
        for page, node in document.iter_nodes()
        if isinstance(node, HeadingNode)
    ]


def page_of(document: Document, index: int):
    return next(page for page in document.pages if page.index == index)


def contents(document: Document, node_type: type, page_index: int | None = None) -> list[str]:
    return [
        node.content
        for page, node in document.iter_nodes()
        if isinstance(node, node_type) and (page_index is None or page.index == page_index)
    ]


def section_table(document: Document) -> list[tuple[str, str | None, str | None, int, int]]:
    """(title, parent title, level, first page, last page) of every section, in order."""
    sections = document.sections()
    title_of = {section.id: section.title for section in sections}
    return [
        (
            section.title,
            title_of[section.parent_id] if section.parent_id else None,
            section.level,
            section.first_page,
            section.last_page,
        )
        for section in sections
    ]


def toc_table(document: Document) -> list[tuple[str, str, str | None, int | None]]:
    """(title, level, parent entry title, target page) of every TOC entry, in order."""
    title_of = {entry.id: entry.title for entry in document.toc}
    return [
        (
            entry.title,
            entry.level,
            title_of.get(entry.parent_id) if entry.parent_id else None,
            entry.target_page,
        )
        for entry in document.toc
    ]


def assert_toc_linked(document: Document) -> None:
    """Every TOC entry targets the section its title opens, on the page that section starts on."""
    sections: dict[str, SectionInfo] = {section.id: section for section in document.sections()}
    for entry in document.toc:
        assert entry.target_section_id in sections, entry
        section = sections[entry.target_section_id]
        assert section.title == entry.title
        assert section.first_page == entry.target_page


def without_image_data(document: Document) -> Document:
    copy = document.model_copy(deep=True)
    for _, node in copy.iter_nodes():
        if isinstance(node, (ImageNode, TableNode)):
            node.image_data = None
    return copy


def markdown_rows(table: str) -> list[list[str]]:
    """The cells of a Markdown table, without its separator row."""
    rows = []
    for line in table.strip().splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if all(re.fullmatch(r":?-{3,}:?", cell) for cell in cells):
            continue
        rows.append(cells)
    return rows


# -- fixtures: PDFs written with PyMuPDF -----------------------------------------------------------------

BOLD_PARAGRAPH = (
    "This whole paragraph is set in bold type to warn the reader that the renewal terms matter. "
    "It runs over several lines of the page and ends with a full stop like any other sentence."
)


@pytest.fixture
def report_pdf(tmp_path: Path) -> Path:
    """Three pages: a 20pt title, 15pt sections, 12pt subsections, 10pt body; sections cross pages."""
    document = pymupdf.open()
    first = PageWriter(document)
    first.heading("Annual Report of Example Corp", 20)
    first.paragraph(prose(0, 2))
    first.heading("Business Overview", 15)
    first.paragraph(prose(2, 2))
    first.heading("Products and Services", 12)
    first.paragraph(prose(4, 3))
    first.paragraph(BOLD_PARAGRAPH, font="tibo")
    first.paragraph("Revenue Recognition Policies")  # a short 10pt line standing alone: still body text
    first.paragraph(prose(1, 6))
    second = PageWriter(document)
    second.paragraph(prose(3, 2))  # still inside "Products and Services"
    second.heading("Competition", 12)
    second.paragraph(prose(5, 2))
    second.heading("Risk Factors", 15)
    second.paragraph(prose(6, 2))
    third = PageWriter(document)
    third.paragraph(prose(7, 2))  # still inside "Risk Factors"
    third.heading("Market Risks", 12)
    third.paragraph(prose(0, 2))
    path = tmp_path / "report.pdf"
    document.save(path)
    return path


def write_numbered(path: Path, part_style: tuple[float, str], item_style: tuple[float, str]) -> Path:
    """A 10-K-like page: PART and Item headings in the given (size, font) styles, body in 10pt Times."""
    document = pymupdf.open()
    page = PageWriter(document)
    page.heading("PART I", *part_style)
    page.heading("Item 1. Business", *item_style)
    page.paragraph(prose(0, 2))
    page.heading("Item 2. Properties", *item_style)
    page.paragraph(prose(2, 2))
    page.heading("PART II", *part_style)
    page.heading("Item 5. Market for Common Equity", *item_style)
    page.paragraph(prose(4, 2))
    document.save(path)
    return path


OUTLINE = [
    [1, "Introduction", 1],
    [2, "Scope of the Work", 1],
    [3, "Definitions", 1],
    [1, "Fees and Payment", 2],
    [2, "Late Payment", 2],
    [1, "Termination", 3],
]


@pytest.fixture
def contract_pdf(tmp_path: Path):
    """Write a three-page contract with the given outline. Font statistics and the outline disagree:
    "Scope of the Work" is set like "Introduction" (the outline nests it), and "Definitions" is a
    plain 10pt line (only the outline makes it a heading)."""

    def make(outline: list[list[object]] | None, name: str = "contract.pdf") -> Path:
        document = pymupdf.open()
        first = PageWriter(document)
        first.heading("Introduction", 14)
        first.paragraph(prose(0, 2))
        first.heading("Scope of the Work", 14)
        first.paragraph(prose(2, 2))
        first.paragraph("Definitions")
        first.paragraph(prose(4, 2))
        second = PageWriter(document)
        second.paragraph(prose(5, 1))
        second.heading("Fees and Payment", 14)
        second.paragraph(prose(6, 2))
        second.heading("Late Payment", 12)
        second.paragraph(prose(0, 2))
        third = PageWriter(document)
        third.heading("Termination", 14)
        third.paragraph(prose(1, 2))
        if outline:
            document.set_toc(outline)
        path = tmp_path / name
        document.save(path)
        return path

    return make


RUNNING_HEADER = "ACME Corp \u2014 Confidential"


@pytest.fixture
def running_lines_pdf(tmp_path: Path) -> Path:
    """Five pages with a running header and a "Page N of 5" footer, written before the body (as word
    processors do), and a chapter heading on pages 1 and 3."""
    document = pymupdf.open()
    for number in range(1, 6):
        page = PageWriter(document)
        page.page.insert_text((LEFT, 40), RUNNING_HEADER, fontsize=9, fontname="uhelv")
        page.page.insert_text((270, 815), f"Page {number} of 5", fontsize=9, fontname="helv")
        if number == 1:
            page.heading("Origins of the Company", 16)
        if number == 3:
            page.heading("Years of Growth", 16)
        page.paragraph(prose(number, 5))
    path = tmp_path / "running.pdf"
    document.save(path)
    return path


@pytest.fixture
def lists_pdf(tmp_path: Path) -> Path:
    """A paragraph with a word hyphenated across lines, then a bulleted list with a nested item."""
    document = pymupdf.open()
    page = PageWriter(document)
    page.heading("Delivery Terms", 14)
    for text in (
        "The supplier shall provide all informa-",
        "tion needed to install the equipment and",
        "shall keep the customer informed of delays.",
    ):
        page.line(text)
    page.y += 10
    for indent, text in (
        (0, "\u2022 first item of the list"),
        (0, "\u2022 second item of the list"),
        (18, "\u2022 nested item below the second"),
        (0, "\u2022 third item of the list"),
    ):
        page.line(text, x=LEFT + indent, unicode=True)
    page.y += 10
    page.paragraph("A closing paragraph follows the list.")
    path = tmp_path / "lists.pdf"
    document.save(path)
    return path


COLUMN_TITLE = "Quarterly Newsletter of the Society"
STATEMENT_ROWS = [
    ("Revenue", "1,200", "1,100", "tiro"),
    ("Cost of revenue", "(400)", "(380)", "tiro"),
    ("Total operating income", "800", "720", "tibo"),
]


@pytest.fixture
def columns_pdf(tmp_path: Path) -> Path:
    """Page 1: a full-width title over two text columns whose lines are written row by row (left line 1,
    right line 1, left line 2, ...). Page 2: statement rows, a label at the left and figures at the right."""
    document = pymupdf.open()
    page = PageWriter(document)
    page.heading(COLUMN_TITLE, 18)
    left, right = wrap(LEFT_COLUMN, 38), wrap(RIGHT_COLUMN, 38)
    for row in range(max(len(left), len(right))):
        if row < len(left):
            page.page.insert_text((LEFT, page.y), left[row], fontsize=10, fontname="tiro")
        if row < len(right):
            page.page.insert_text((316, page.y), right[row], fontsize=10, fontname="tiro")
        page.y += 13
    statement = PageWriter(document)
    statement.heading("Statement of Operations", 12)
    for label, current, previous, font in STATEMENT_ROWS:
        statement.page.insert_text((LEFT, statement.y), label, fontsize=10, fontname=font)
        statement.page.insert_text((400, statement.y), current, fontsize=10, fontname=font)
        statement.page.insert_text((480, statement.y), previous, fontsize=10, fontname=font)
        statement.y += 13
    path = tmp_path / "columns.pdf"
    document.save(path)
    return path


GRID_X = [72, 222, 372, 522]
GRID_Y = [120, 145, 170, 195]
TABLE_INTRO = "The fees below apply from the first day of the agreement."
TABLE_OUTRO = "Prices exclude value added tax and are reviewed every year."
GRID_CELLS = [["Service", "Unit", "Price"], ["Hosting", "month", "100"], ["Support", "hour", "80"]]


@pytest.fixture
def table_pdf(tmp_path: Path) -> Path:
    """A ruled 3x3 grid (drawn lines) between two paragraphs."""
    document = pymupdf.open()
    page = document.new_page()
    page.insert_text((LEFT, 72), "Fee Schedule", fontsize=14, fontname="hebo")
    page.insert_text((LEFT, 100), TABLE_INTRO, fontsize=10)
    for x in GRID_X:
        page.draw_line((x, GRID_Y[0]), (x, GRID_Y[-1]), color=(0, 0, 0), width=1)
    for y in GRID_Y:
        page.draw_line((GRID_X[0], y), (GRID_X[-1], y), color=(0, 0, 0), width=1)
    for row, cells in enumerate(GRID_CELLS):
        for column, text in enumerate(cells):
            page.insert_text((GRID_X[column] + 5, GRID_Y[row] + 17), text, fontsize=10, fontname="tiro")
    page.insert_text((LEFT, 230), TABLE_OUTRO, fontsize=10, fontname="tiro")
    path = tmp_path / "table.pdf"
    document.save(path)
    return path


LOGO_RECT = (400, 20, 520, 80)  # 120 x 60 pt: big enough to keep on its own, but on every page
PHOTO_RECT = (100, 250, 400, 450)  # 300 x 200 pt


@pytest.fixture
def images_pdf(tmp_path: Path) -> Path:
    """Six pages with the same logo on each; page 2 also has a 300x200 pt photo and a 10x10 pt icon."""
    document = pymupdf.open()
    logo, photo, icon = png(240, 120, (200, 0, 0)), png(300, 200, (0, 120, 200)), png(10, 10, (0, 0, 0))
    for number in range(1, 7):
        page = document.new_page()
        page.insert_image(pymupdf.Rect(*LOGO_RECT), stream=logo)
        page.insert_text(
            (LEFT, 200), f"Section {number} of the report describes the operations of the year.", fontsize=10
        )
        if number == 2:
            page.insert_image(pymupdf.Rect(*PHOTO_RECT), stream=photo)
            page.insert_image(pymupdf.Rect(450, 500, 460, 510), stream=icon)
            page.insert_text((LEFT, 480), "Figure 1 shows the new plant in the northern region.", fontsize=10)
    path = tmp_path / "images.pdf"
    document.save(path)
    return path


@pytest.fixture
def scan_mix_pdf(tmp_path: Path) -> Path:
    """Three pages; the second holds only a picture (a scan), no text layer."""
    document = pymupdf.open()
    for number in range(1, 4):
        page = document.new_page()
        if number == 2:
            page.insert_image(pymupdf.Rect(72, 72, 472, 572), stream=png(400, 500, (90, 90, 90)))
        else:
            page.insert_text((LEFT, 100), prose(number, 1), fontsize=10, fontname="tiro")
    path = tmp_path / "scan-mix.pdf"
    document.save(path)
    return path


@pytest.fixture
def chapters_pdf(tmp_path: Path) -> Path:
    """Five pages; a chapter opens on page 1 and another on page 2 that goes on over page 3."""
    document = pymupdf.open()
    for number in range(1, 6):
        page = PageWriter(document)
        if number == 1:
            page.heading("First Chapter", 16)
        if number == 2:
            page.heading("Second Chapter", 16)
        page.paragraph(prose(number, 4))
    path = tmp_path / "chapters.pdf"
    document.save(path)
    return path


# -- 1. headings from font statistics --------------------------------------------------------------------


def test_headings_from_font_statistics_nest_and_span_pages(report_pdf: Path) -> None:
    document = build_index(report_pdf, use_outline=False)

    assert headings(document) == [
        (0, "h1", "Annual Report of Example Corp"),
        (0, "h2", "Business Overview"),
        (0, "h3", "Products and Services"),
        (1, "h3", "Competition"),
        (1, "h2", "Risk Factors"),
        (2, "h3", "Market Risks"),
    ]
    # Each heading follows the section it titles; sections nest by level and run on across pages.
    for page in document.pages:
        for position, node in enumerate(page.nodes):
            if isinstance(node, HeadingNode):
                assert isinstance(page.nodes[position - 1], SectionNode)
                assert node.parent_id == page.nodes[position - 1].id
    assert section_table(document) == [
        ("Annual Report of Example Corp", None, "h1", 0, 2),
        ("Business Overview", "Annual Report of Example Corp", "h2", 0, 1),
        ("Products and Services", "Business Overview", "h3", 0, 1),
        ("Competition", "Business Overview", "h3", 1, 1),
        ("Risk Factors", "Annual Report of Example Corp", "h2", 1, 2),
        ("Market Risks", "Risk Factors", "h3", 2, 2),
    ]
    by_title = {section.title: section.id for section in document.sections()}
    # The first paragraph of page 2 still belongs to the subsection opened on page 1.
    assert page_of(document, 1).nodes[0].type == "paragraph"
    assert page_of(document, 1).nodes[0].parent_id == by_title["Products and Services"]
    assert page_of(document, 2).nodes[0].parent_id == by_title["Risk Factors"]

    # The TOC is generated from the headings: a tree, linked to the sections and their pages.
    assert toc_table(document) == [
        ("Annual Report of Example Corp", "l1", None, 0),
        ("Business Overview", "l2", "Annual Report of Example Corp", 0),
        ("Products and Services", "l3", "Business Overview", 0),
        ("Competition", "l3", "Business Overview", 1),
        ("Risk Factors", "l2", "Annual Report of Example Corp", 1),
        ("Market Risks", "l3", "Risk Factors", 2),
    ]
    assert_toc_linked(document)


def test_body_text_and_bold_paragraphs_are_not_headings(report_pdf: Path) -> None:
    document = build_index(report_pdf, use_outline=False)

    paragraphs = contents(document, ParagraphNode)
    assert BOLD_PARAGRAPH in paragraphs
    assert "Revenue Recognition Policies" in paragraphs
    heading_texts = {text for _, _, text in headings(document)}
    assert not any(sentence in text for text in heading_texts for sentence in SENTENCES)
    assert not heading_texts & {BOLD_PARAGRAPH, "Revenue Recognition Policies"}
    assert not any(text.startswith("This whole paragraph") for text in heading_texts)
    # Nothing from the body is lost: every 10pt sentence sits in a paragraph.
    assert all(any(sentence in text for text in paragraphs) for sentence in SENTENCES)


# -- 2. numbering decides PART / Item levels -------------------------------------------------------------


@pytest.mark.parametrize(
    ("part_style", "item_style"),
    [
        pytest.param((10, "tibo"), (10, "tibo"), id="all-in-bold-body-size"),
        pytest.param((10, "tibo"), (13, "hebo"), id="items-larger-than-parts"),
    ],
)
def test_part_and_item_numbering_sets_levels_whatever_the_style(
    tmp_path: Path, part_style: tuple[float, str], item_style: tuple[float, str]
) -> None:
    document = build_index(write_numbered(tmp_path / "10k.pdf", part_style, item_style), use_outline=False)

    assert headings(document) == [
        (0, "h1", "PART I"),
        (0, "h2", "Item 1. Business"),
        (0, "h2", "Item 2. Properties"),
        (0, "h1", "PART II"),
        (0, "h2", "Item 5. Market for Common Equity"),
    ]
    assert [(title, parent) for title, parent, *_ in section_table(document)] == [
        ("PART I", None),
        ("Item 1. Business", "PART I"),
        ("Item 2. Properties", "PART I"),
        ("PART II", None),
        ("Item 5. Market for Common Equity", "PART II"),
    ]


def test_stacked_part_item_and_subheading_in_one_style_are_all_headings(tmp_path: Path) -> None:
    # The usual 10-K opening: PART, ITEM and a first subheading stacked, all bold capitals at body size.
    document = pymupdf.open()
    page = PageWriter(document)
    page.heading("PART I", 10, "tibo")
    page.heading("ITEM 1. BUSINESS", 10, "tibo")
    page.heading("OVERVIEW", 10, "tibo")
    page.paragraph(prose(0, 3))
    page.heading("ITEM 2. PROPERTIES", 10, "tibo")
    page.paragraph(prose(3, 3))
    path = tmp_path / "stacked.pdf"
    document.save(path)

    built = build_index(path, use_outline=False)

    assert headings(built) == [
        (0, "h1", "PART I"),
        (0, "h2", "ITEM 1. BUSINESS"),
        (0, "h3", "OVERVIEW"),
        (0, "h2", "ITEM 2. PROPERTIES"),
    ]


def test_item_label_set_apart_from_its_title_is_one_heading(tmp_path: Path) -> None:
    document = pymupdf.open()
    page = PageWriter(document)
    page.heading("PART I", 10, "tibo")
    page.heading("Item 1. Business", 10, "tibo")
    page.paragraph(prose(0, 2))
    page.y += 10
    page.page.insert_text((LEFT, page.y), "Item 1A.", fontsize=10, fontname="tibo")
    page.page.insert_text((LEFT + 72, page.y), "Risk Factors", fontsize=10, fontname="tibo")
    page.y += 20
    page.paragraph(prose(2, 2))
    path = tmp_path / "label.pdf"
    document.save(path)

    assert headings(build_index(path, use_outline=False)) == [
        (0, "h1", "PART I"),
        (0, "h2", "Item 1. Business"),
        (0, "h2", "Item 1A. Risk Factors"),
    ]


# -- 3. the outline --------------------------------------------------------------------------------------

FONT_STATISTICS_HEADINGS = [
    (0, "h1", "Introduction"),
    (0, "h1", "Scope of the Work"),
    (1, "h1", "Fees and Payment"),
    (1, "h2", "Late Payment"),
    (2, "h1", "Termination"),
]


def test_a_valid_outline_gives_headings_and_the_toc(contract_pdf) -> None:
    document = build_index(contract_pdf(OUTLINE))

    assert headings(document) == [
        (0, "h1", "Introduction"),
        (0, "h2", "Scope of the Work"),
        (0, "h3", "Definitions"),
        (1, "h1", "Fees and Payment"),
        (1, "h2", "Late Payment"),
        (2, "h1", "Termination"),
    ]
    assert toc_table(document) == [
        ("Introduction", "l1", None, 0),
        ("Scope of the Work", "l2", "Introduction", 0),
        ("Definitions", "l3", "Scope of the Work", 0),
        ("Fees and Payment", "l1", None, 1),
        ("Late Payment", "l2", "Fees and Payment", 1),
        ("Termination", "l1", None, 2),
    ]
    assert_toc_linked(document)
    assert section_table(document)[:3] == [
        ("Introduction", None, "h1", 0, 1),
        ("Scope of the Work", "Introduction", "h2", 0, 1),
        ("Definitions", "Scope of the Work", "h3", 0, 1),
    ]
    assert "Definitions" not in contents(document, ParagraphNode)


def test_use_outline_false_ignores_the_outline(contract_pdf) -> None:
    document = build_index(contract_pdf(OUTLINE), use_outline=False)

    assert headings(document) == FONT_STATISTICS_HEADINGS
    assert "Definitions" in contents(document, ParagraphNode)
    assert [title for title, *_ in toc_table(document)] == [text for _, _, text in FONT_STATISTICS_HEADINGS]
    assert_toc_linked(document)


@pytest.mark.parametrize(
    ("outline", "reason"),
    [
        pytest.param(
            [[1, "Chapter One", 1], [1, "Chapter Two", 2], [1, "Chapter Three", 3]],
            "appear on their pages",
            id="titles-not-on-their-pages",
        ),
        pytest.param(
            [
                [1, "Termination", 3],
                [1, "Introduction", 1],
                [1, "Fees and Payment", 2],
                [1, "Late Payment", 1],
            ],
            "out of order",
            id="targets-out-of-order",
        ),
    ],
)
def test_a_junk_outline_is_ignored_with_a_warning(
    contract_pdf, caplog: pytest.LogCaptureFixture, outline: list[list[object]], reason: str
) -> None:
    with caplog.at_level(logging.WARNING, logger="extract_thinker_pageindex.pdf"):
        document = build_index(contract_pdf(outline))

    assert headings(document) == FONT_STATISTICS_HEADINGS
    assert [title for title, *_ in toc_table(document)] == [text for _, _, text in FONT_STATISTICS_HEADINGS]
    assert_toc_linked(document)
    warned = [
        record
        for record in caplog.records
        if record.name == "extract_thinker_pageindex.pdf" and record.levelno == logging.WARNING
    ]
    assert len(warned) == 1
    assert "outline" in warned[0].getMessage()
    assert reason in warned[0].getMessage()


# -- 4. running headers and footers ----------------------------------------------------------------------


def test_running_headers_and_footers_on_every_page(running_lines_pdf: Path) -> None:
    document = build_index(running_lines_pdf)

    assert [page.index for page in document.pages] == [0, 1, 2, 3, 4]
    for page in document.pages:
        assert [node.content for node in page.nodes if isinstance(node, HeaderNode)] == [RUNNING_HEADER]
        assert [node.content for node in page.nodes if isinstance(node, FooterNode)] == [
            f"Page {page.index + 1} of 5"
        ]
    assert headings(document) == [(0, "h1", "Origins of the Company"), (2, "h1", "Years of Growth")]
    for text in contents(document, ParagraphNode):
        assert "ACME" not in text
        assert "of 5" not in text
    # Reading order: the header opens the page and the footer closes it, wherever the PDF wrote them.
    for page in document.pages:
        assert isinstance(page.nodes[0], HeaderNode)
        assert isinstance(page.nodes[-1], FooterNode)


# -- 5. paragraphs and lists -----------------------------------------------------------------------------


def test_paragraph_lines_join_and_bullets_become_list_items(lists_pdf: Path) -> None:
    document = build_index(lists_pdf)

    (page,) = document.pages
    section = page.nodes[0]
    assert isinstance(section, SectionNode)
    assert [
        (node.type, getattr(node, "level", None), getattr(node, "content", None)) for node in page.nodes
    ] == [
        ("section", None, None),
        ("heading", "h1", "Delivery Terms"),
        (
            "paragraph",
            "paragraph",
            "The supplier shall provide all information needed to install the equipment and "
            "shall keep the customer informed of delays.",
        ),
        ("list_item", "l1", "first item of the list"),
        ("list_item", "l1", "second item of the list"),
        ("list_item", "l2", "nested item below the second"),
        ("list_item", "l1", "third item of the list"),
        ("paragraph", "paragraph", "A closing paragraph follows the list."),
    ]
    assert all(node.parent_id == section.id for node in page.nodes[1:])
    assert all(isinstance(node, ListItemNode) for node in page.nodes[3:7])


# -- 6. columns and statement rows -----------------------------------------------------------------------


def test_two_columns_written_row_by_row_read_left_column_first(columns_pdf: Path) -> None:
    document = build_index(columns_pdf)

    first = page_of(document, 0)
    assert [(node.type, getattr(node, "content", None)) for node in first.nodes] == [
        ("section", None),
        ("heading", COLUMN_TITLE),
        ("paragraph", LEFT_COLUMN),
        ("paragraph", RIGHT_COLUMN),
    ]


def test_two_columns_written_column_by_column_read_left_column_first(tmp_path: Path) -> None:
    # The control for the test above: the same page, with each column written in one go.
    document = pymupdf.open()
    page = PageWriter(document)
    page.heading(COLUMN_TITLE, 18)
    for x, text in ((LEFT, LEFT_COLUMN), (316, RIGHT_COLUMN)):
        for row, line in enumerate(wrap(text, 38)):
            page.page.insert_text((x, page.y + 13 * row), line, fontsize=10, fontname="tiro")
    path = tmp_path / "columns-in-order.pdf"
    document.save(path)

    (built,) = build_index(path).pages
    assert [(node.type, getattr(node, "content", None)) for node in built.nodes] == [
        ("section", None),
        ("heading", COLUMN_TITLE),
        ("paragraph", LEFT_COLUMN),
        ("paragraph", RIGHT_COLUMN),
    ]


def test_statement_rows_stay_rows_and_are_not_headings(columns_pdf: Path) -> None:
    document = build_index(columns_pdf)

    assert [text for index, _, text in headings(document) if index == 1] == ["Statement of Operations"]
    # The rows are a table aligned by whitespace, each label with its figures.
    (table,) = [node for node in page_of(document, 1).nodes if isinstance(node, TableNode)]
    assert markdown_rows(table.content)[-3:] == [
        ["Revenue", "1,200", "1,100"],
        ["Cost of revenue", "(400)", "(380)"],
        ["Total operating income", "800", "720"],
    ]
    assert table.caption == "Statement of Operations"
    # Without tables the rows stay paragraphs, one a row.
    rows = " ".join(contents(build_index(columns_pdf, tables=False), ParagraphNode, page_index=1))
    assert rows == "Revenue 1,200 1,100 Cost of revenue (400) (380) Total operating income 800 720"


# -- 7. tables -------------------------------------------------------------------------------------------


def test_ruled_grid_becomes_a_table_node(table_pdf: Path) -> None:
    document = build_index(table_pdf, tables=True)

    (page,) = document.pages
    assert [node.type for node in page.nodes] == ["section", "heading", "paragraph", "table", "paragraph"]
    (table,) = [node for node in page.nodes if isinstance(node, TableNode)]
    assert markdown_rows(table.content) == GRID_CELLS
    assert table.bbox is not None
    expected = (GRID_X[0], GRID_Y[0], GRID_X[-1], GRID_Y[-1])
    assert all(abs(got - want) <= 2 for got, want in zip(table.bbox, expected, strict=True)), table.bbox
    # The cells are in the table, not repeated as paragraphs.
    assert contents(document, ParagraphNode) == [TABLE_INTRO, TABLE_OUTRO]


def test_columns_aligned_with_space_characters_still_make_a_table(tmp_path: Path) -> None:
    """A statement whose columns are set with runs of spaces in one text run (no gap between runs for the
    layout to see) is still looked at for a table, and read as one."""
    document = pymupdf.open()
    page = document.new_page(width=612, height=792)
    page.insert_text((72, 80), "Results of operations", fontname="helv", fontsize=11)
    rows = [
        ("Net revenue", "1,200", "1,100"),
        ("Cost of sales", "(400)", "(380)"),
        ("Gross profit", "800", "720"),
    ]
    for number, (label, first, second) in enumerate(rows):
        line = f"{label:<24}{first:>12}{second:>12}"
        page.insert_text((72, 110 + 14 * number), line, fontname="cour", fontsize=9)
    path = tmp_path / "spaced.pdf"
    document.save(path)

    built = build_index(path)
    (table,) = [node for node in built.pages[0].nodes if isinstance(node, TableNode)]
    assert markdown_rows(table.content)[-3:] == [list(row) for row in rows]


def test_tables_off_makes_no_table_node(table_pdf: Path) -> None:
    document = build_index(table_pdf, tables=False)

    assert not [node for _, node in document.iter_nodes() if isinstance(node, TableNode)]
    assert contents(document, ParagraphNode) == [
        TABLE_INTRO,
        "Service Unit Price",
        "Hosting month 100",
        "Support hour 80",
        TABLE_OUTRO,
    ]


# -- 8. images -------------------------------------------------------------------------------------------


def test_pictures_become_image_nodes_icons_and_repeated_logos_do_not(
    images_pdf: Path, tmp_path: Path
) -> None:
    document, output = index_document(images_pdf, output=tmp_path / "images.pageindex")

    images = [(page.index, node) for page, node in document.iter_nodes() if isinstance(node, ImageNode)]
    assert [(index, node.bbox) for index, node in images] == [(1, PHOTO_RECT)]
    (_, photo), page = images[0], page_of(document, 1)
    assert all(isinstance(value, int) for value in photo.bbox)
    assert photo.image_data is not None and photo.image_data.startswith(PNG_SIGNATURE)
    assert Image.open(io.BytesIO(photo.image_data)).size == (300, 200)
    assert [node.type for node in page.nodes] == ["paragraph", "image", "paragraph"]

    saved = output / "images" / f"{photo.id}.png"
    assert saved.read_bytes() == photo.image_data
    loaded = load_index(output)
    (reloaded,) = [node for _, node in loaded.iter_nodes() if isinstance(node, ImageNode)]
    assert reloaded.id == photo.id
    assert reloaded.image_path == f"images/{photo.id}.png"
    assert reloaded.image_data == photo.image_data


def test_a_logo_on_one_page_only_is_kept(tmp_path: Path) -> None:
    # The control for the test above: the logo is dropped for being on every page, not for its size.
    document = pymupdf.open()
    page = document.new_page()
    page.insert_image(pymupdf.Rect(*LOGO_RECT), stream=png(240, 120, (200, 0, 0)))
    page.insert_text((LEFT, 200), prose(0, 1), fontsize=10)
    path = tmp_path / "one-logo.pdf"
    document.save(path)

    images = [node for _, node in build_index(path).iter_nodes() if isinstance(node, ImageNode)]
    assert [node.bbox for node in images] == [LOGO_RECT]


def test_images_false_makes_no_image_node(images_pdf: Path) -> None:
    document = build_index(images_pdf, images=False)

    assert not [node for _, node in document.iter_nodes() if isinstance(node, ImageNode)]


# -- 9. metadata -----------------------------------------------------------------------------------------


def test_metadata_title_author_and_dates(tmp_path: Path) -> None:
    document = pymupdf.open()
    page = PageWriter(document)
    page.heading("Heading Text Here", 16)
    page.paragraph(prose(0, 2))
    document.set_metadata(
        {
            "title": "Annual Report 2023",
            "author": "Jane Doe",
            "creationDate": "D:20240131120000+01'00'",
            "modDate": "D:20240201080000Z",
        }
    )
    path = tmp_path / "meta.pdf"
    document.save(path)

    built = build_index(path)

    assert (built.title, built.author) == ("Annual Report 2023", "Jane Doe")
    assert built.created_at == datetime(2024, 1, 31, 12, 0, tzinfo=timezone(timedelta(hours=1)))
    assert built.created_at.utcoffset() == timedelta(hours=1)
    assert built.updated_at == datetime(2024, 2, 1, 8, 0, tzinfo=timezone.utc)
    # Keywords win over the file's metadata.
    assert build_index(path, title="Given Title").title == "Given Title"


def test_title_falls_back_to_the_first_top_level_heading(tmp_path: Path) -> None:
    document = pymupdf.open()
    page = PageWriter(document)
    page.paragraph(prose(0, 1))
    page.heading("Heading Text Here", 16)
    page.paragraph(prose(1, 2))
    page.heading("A Smaller Heading", 12)
    page.paragraph(prose(3, 2))
    page.heading("Another Top Heading", 16)
    page.paragraph(prose(5, 2))
    path = tmp_path / "untitled.pdf"
    document.save(path)

    built = build_index(path)

    assert built.title == "Heading Text Here"
    assert (built.author, built.created_at, built.updated_at) == (None, None, None)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("D:20240131120000+01'00'", datetime(2024, 1, 31, 12, 0, tzinfo=timezone(timedelta(hours=1)))),
        ("D:20240131120000-08'00'", datetime(2024, 1, 31, 12, 0, tzinfo=timezone(timedelta(hours=-8)))),
        ("D:20240201080000Z", datetime(2024, 2, 1, 8, 0, tzinfo=timezone.utc)),
        ("D:20240131", datetime(2024, 1, 31)),
    ],
)
def test_pdf_date_reads_pdf_dates(value: str, expected: datetime) -> None:
    assert pdf_date(value) == expected


@pytest.mark.parametrize(
    "value",
    [
        None,
        "",
        "   ",
        "garbage",
        "D:abcd",
        "D:0000",
        "D:20241301",  # month 13
        "D:20240230",  # 30 February
        "D:2024013125",  # hour 25
        "D:20240131126100",  # minute 61
        "D:20240131120000+25'00'",  # a 25-hour offset
        "D:20240131120000+01'99'",  # 99 minutes of offset
    ],
)
def test_pdf_date_returns_none_for_malformed_dates(value: str | None) -> None:
    assert pdf_date(value) is None


def test_a_malformed_creation_date_does_not_fail_the_build(tmp_path: Path) -> None:
    document = pymupdf.open()
    PageWriter(document).paragraph(prose(0, 2))
    document.set_metadata({"creationDate": "D:20240131120000+25'00'"})
    path = tmp_path / "bad-date.pdf"
    document.save(path)

    assert build_index(path).created_at is None


# -- 10. auto strategy: pages without a text layer -------------------------------------------------------

TEXT_NODE_TYPES = ("heading", "paragraph", "list_item", "header", "footer", "table")


def test_auto_strategy_without_a_model_names_the_page_without_text(scan_mix_pdf: Path) -> None:
    with pytest.raises(ModelRequiredError) as caught:
        build_index(scan_mix_pdf, ocr="never")

    message = str(caught.value)
    assert re.search(r"\bpages?(\(s\))? 2\b", message, re.IGNORECASE), message
    assert "model=" in message


def test_auto_strategy_skip_keeps_the_page_empty_with_a_warning(scan_mix_pdf: Path) -> None:
    with pytest.warns(PageIndexWarning, match=r"2"):
        document = build_index(scan_mix_pdf, on_page_error="skip", ocr="never")

    assert [page.index for page in document.pages] == [0, 1, 2]
    assert not [node for node in page_of(document, 1).nodes if node.type in TEXT_NODE_TYPES]
    assert contents(document, ParagraphNode, page_index=0) == [prose(1, 1)]
    assert contents(document, ParagraphNode, page_index=2) == [prose(3, 1)]


def test_text_strategy_keeps_the_page_empty_silently(scan_mix_pdf: Path) -> None:
    document = build_index(scan_mix_pdf, strategy="text")  # PageIndexWarning is an error under pytest

    assert [page.index for page in document.pages] == [0, 1, 2]
    assert not [node for node in page_of(document, 1).nodes if node.type in TEXT_NODE_TYPES]


def test_vision_strategy_needs_a_model(scan_mix_pdf: Path) -> None:
    with pytest.raises(ModelRequiredError, match="vision model; pass model="):
        build_index(scan_mix_pdf, strategy="vision")


# -- 11. page selection and progress ---------------------------------------------------------------------


def test_page_selection_keeps_source_indices_and_reports_progress(chapters_pdf: Path) -> None:
    calls: list[tuple[int, int]] = []

    document = build_index(
        chapters_pdf, pages=[2, 3], progress=lambda done, total: calls.append((done, total))
    )

    assert [page.index for page in document.pages] == [1, 2]
    assert document.source_page_count == 5
    assert calls == [(1, 2), (2, 2)]
    assert headings(document) == [(1, "h1", "Second Chapter")]
    ids = {node.id for _, node in document.iter_nodes()}
    assert all(node.parent_id is None or node.parent_id in ids for _, node in document.iter_nodes())
    (section,) = [node for _, node in document.iter_nodes() if isinstance(node, SectionNode)]
    assert all(node.parent_id == section.id for node in page_of(document, 2).nodes)
    assert_toc_linked(document)


def test_progress_counts_every_page(chapters_pdf: Path) -> None:
    calls: list[tuple[int, int]] = []

    build_index(chapters_pdf, progress=lambda done, total: calls.append((done, total)))

    assert calls == [(1, 5), (2, 5), (3, 5), (4, 5), (5, 5)]


def test_page_selection_outside_the_document_is_an_error(chapters_pdf: Path) -> None:
    with pytest.raises(PageSpecError):
        build_index(chapters_pdf, pages=[6])


def test_page_selection_does_not_change_what_a_page_holds(running_lines_pdf: Path) -> None:
    # A page's running header is a header whether or not its neighbours were selected.
    whole = build_index(running_lines_pdf)
    alone = build_index(running_lines_pdf, pages=[2])

    def shape(document: Document) -> list[tuple[str, str | None]]:
        return [(node.type, getattr(node, "content", None)) for node in page_of(document, 1).nodes]

    assert [page.index for page in alone.pages] == [1]
    assert shape(alone) == shape(whole)


# -- 12. bad input ---------------------------------------------------------------------------------------


def test_encrypted_pdf_needs_its_password(make_pdf) -> None:
    path = make_pdf(
        [prose(0, 2)],
        name="locked-report.pdf",
        encryption=pymupdf.PDF_ENCRYPT_AES_256,
        user_pw="user-secret",
        owner_pw="owner-secret",
    )

    with pytest.raises(DocumentLoadError, match="password"):
        build_index(path)
    with pytest.raises(DocumentLoadError, match="password"):
        build_index(path, password="not-it")
    document = build_index(path, password="user-secret")
    assert contents(document, ParagraphNode) == [prose(0, 2)]


def write_bad(tmp_path: Path, kind: str) -> Path:
    good = pymupdf.open()
    good.new_page().insert_text((LEFT, 100), prose(0, 1), fontsize=10)
    data = {
        "corrupt": b"%PDF-1.7\n" + b"\x00garbage" * 100,
        "empty": b"",
        "png": png(50, 50, (1, 2, 3)),
        "text": b"hello, this is not a PDF at all\n",
        "truncated": good.tobytes()[:200],
    }[kind]
    path = tmp_path / f"broken-{kind}.pdf"
    path.write_bytes(data)
    return path


@pytest.mark.parametrize(
    ("kind", "error"),
    [
        ("corrupt", DocumentLoadError),
        ("empty", EmptyDocumentError),
        ("png", DocumentLoadError),
        ("text", DocumentLoadError),
        ("truncated", DocumentLoadError),
    ],
)
def test_unreadable_pdfs_raise_document_load_errors(tmp_path: Path, kind: str, error: type) -> None:
    with pytest.raises(error) as caught:
        build_index(write_bad(tmp_path, kind))

    assert isinstance(caught.value, PageIndexError)
    assert not isinstance(caught.value, pymupdf.FileDataError)
    assert type(caught.value).__module__ == "extract_thinker_pageindex.errors"


def test_load_errors_name_the_file(tmp_path: Path, make_pdf) -> None:
    locked = make_pdf(
        [prose(0, 1)],
        name="locked-report.pdf",
        encryption=pymupdf.PDF_ENCRYPT_AES_256,
        user_pw="user-secret",
        owner_pw="owner-secret",
    )
    paths = [locked] + [write_bad(tmp_path, kind) for kind in ("corrupt", "empty", "png")]
    for path in paths:
        with pytest.raises(DocumentLoadError) as caught:
            build_index(path)
        assert path.stem in str(caught.value), str(caught.value)


# -- 13. every built document validates and round-trips --------------------------------------------------

ROUND_TRIPS = [
    ("report_pdf", {"use_outline": False}),
    ("contract_pdf", {}),
    ("running_lines_pdf", {}),
    ("lists_pdf", {}),
    ("columns_pdf", {}),
    ("table_pdf", {"tables": True}),
    ("images_pdf", {}),
    ("scan_mix_pdf", {"strategy": "text"}),
    ("chapters_pdf", {"pages": [2, 3]}),
]


@pytest.mark.parametrize(("fixture", "options"), ROUND_TRIPS, ids=[name for name, _ in ROUND_TRIPS])
def test_built_documents_validate_and_round_trip(
    request: pytest.FixtureRequest, fixture: str, options: dict[str, object]
) -> None:
    source = request.getfixturevalue(fixture)
    path = source(OUTLINE) if fixture == "contract_pdf" else source

    document = build_index(path, **options)

    assert Document.model_validate(document.model_dump()) == without_image_data(document)
    assert Document.model_validate_json(document.model_dump_json()) == without_image_data(document)
    ids = [node.id for _, node in document.iter_nodes()]
    assert len(ids) == len(set(ids))
    assert all(node.parent_id is None or node.parent_id in set(ids) for _, node in document.iter_nodes())


# -- 14. the bundled sample ------------------------------------------------------------------------------


def sample_outline() -> list[list[object]]:
    with pymupdf.open(SAMPLE_PDF) as document:
        return document.get_toc(simple=True)


def test_sample_toc_comes_from_its_outline() -> None:
    outline = sample_outline()
    assert len(outline) == 15

    document = build_index(SAMPLE_PDF)

    assert document.title == "Master Services Agreement"
    assert document.author == "Northwind Legal"
    assert [(entry.title, entry.level, entry.target_page) for entry in document.toc] == [
        (title, f"l{level}", page - 1) for level, title, page in outline
    ]
    assert all(entry.target_section_id is not None for entry in document.toc)
    assert_toc_linked(document)


def test_sample_headings_from_font_statistics_match_its_outline() -> None:
    outline = sample_outline()

    document = build_index(SAMPLE_PDF, use_outline=False)

    assert [text for _, _, text in headings(document)] == [title for _, title, _ in outline]
    assert headings(document) == [(page - 1, f"h{level}", title) for level, title, page in outline]
    # Part -> numbered section -> subsection, as the outline nests them.
    expected_parents: list[str | None] = []
    stack: list[tuple[int, str]] = []
    for level, title, _ in outline:
        while stack and stack[-1][0] >= level:
            stack.pop()
        expected_parents.append(stack[-1][1] if stack else None)
        stack.append((level, title))
    assert [parent for _, parent, *_ in section_table(document)] == expected_parents
    assert_toc_linked(document)


# -- 15. the shared eval data ----------------------------------------------------------------------------


@pytest.mark.eval
def test_font_statistics_recover_most_of_a_10k_outline(eval_dir: Path) -> None:
    from rapidfuzz import fuzz

    path = eval_dir / "pdfs" / "ADOBE_2015_10K.pdf"
    if not path.is_file():
        pytest.skip(f"{path} is not in the eval data")
    with pymupdf.open(path) as source:
        outline = source.get_toc(simple=True)
    assert outline

    document = build_index(path, use_outline=False)

    found = headings(document)
    recovered = [
        title
        for _, title, page in outline
        if any(
            index == page - 1 and fuzz.ratio(normalise_title(title), normalise_title(text)) >= 85
            for index, _, text in found
        )
    ]
    assert len(recovered) >= 0.8 * len(outline), f"{len(recovered)} of {len(outline)} outline entries found"
    # Below the outline's three levels the filing sets its subheadings in italics alone in their units
    # (the accounting policies, each product): headings, though no outline entry names them. Paragraphs are
    # not: the count stays near three per outline entry.
    assert {(63, "Revenue Recognition"), (7, "Photoshop")} <= {(index, text) for index, _, text in found}
    assert len(found) <= 3.5 * len(outline)


def test_a_pdf_without_pages_is_an_empty_document_error(tmp_path: Path) -> None:
    # PyMuPDF refuses to write a PDF with no page, so this one is written by hand.
    out = raw_pdf([CATALOG, "<< /Type /Pages /Kids [] /Count 0 >>"])
    path = tmp_path / "no-pages.pdf"
    path.write_bytes(out)
    with pytest.raises(EmptyDocumentError, match="no pages"):
        build_index(path)


def test_a_printed_contents_page_gives_the_toc_when_there_is_no_outline(tmp_path: Path) -> None:
    document = pymupdf.open()
    cover = document.new_page()
    cover.insert_text((72, 100), "Annual Report of Northwind", fontsize=24, fontname="hebo")
    contents = document.new_page()
    contents.insert_text((72, 72), "Contents", fontsize=16, fontname="hebo")
    rows = [("1. Overview", 1), ("2. Results", 2), ("2.1 Revenue", 2), ("3. Outlook", 3), ("4. Risks", 4)]
    for number, (title, printed) in enumerate(rows):
        x = 90 if title.startswith("2.1") else 72
        contents.insert_text(
            (x, 110 + 20 * number), f"{title} {'.' * 40} {printed}", fontsize=11, fontname="helv"
        )
    for title in ("1. Overview", "2. Results", "3. Outlook", "4. Risks"):
        page = document.new_page()
        page.insert_text((72, 72), title, fontsize=16, fontname="hebo")
        if title == "2. Results":
            page.insert_text((72, 120), "2.1 Revenue", fontsize=13, fontname="hebo")
            page.insert_text(
                (72, 150), "Revenue grew in every region this year.", fontsize=10, fontname="helv"
            )
        page.insert_text(
            (72, 100), f"Body text about {title[3:].lower()} for the year.", fontsize=10, fontname="helv"
        )
    path = tmp_path / "printed-toc.pdf"
    document.save(path)

    built = build_index(path, images=False)
    by_title = {entry.title: entry for entry in built.toc}
    sections = {section.title: section.id for section in built.sections()}
    assert list(by_title) == ["1. Overview", "2. Results", "2.1 Revenue", "3. Outlook", "4. Risks"]
    # Printed page 1 is the third physical page (index 2): the offset the linked entries agree on.
    assert [by_title[title].target_page for title in by_title] == [2, 3, 3, 4, 5]
    assert [by_title[title].printed_page for title in by_title] == ["1", "2", "2", "3", "4"]
    assert by_title["2.1 Revenue"].parent_id == by_title["2. Results"].id
    assert by_title["3. Outlook"].target_section_id == sections["3. Outlook"]


def test_a_wrapped_contents_entry_and_a_heading_named_twice_are_read_as_printed(tmp_path: Path) -> None:
    # A filing's contents: Item 5's title wraps (its page number is on its second line), and "Other
    # Information" is a heading of Item 1 as well as Item 9B's title, pages later.
    document = pymupdf.open()
    document.new_page().insert_text((72, 100), "Annual Report of Northwind", fontsize=24, fontname="hebo")
    contents = document.new_page()
    contents.insert_text((72, 72), "Contents", fontsize=16, fontname="hebo")
    rows = [
        (72, "Item 1. Business", 1),
        (72, "Item 2. Properties", 2),
        (72, "Item 5. Market for Registrant's Common Equity, Related Stockholder", None),
        (100, "Matters and Issuer Purchases of Equity Securities", 3),
        (72, "Item 9B. Other Information", 4),
    ]
    for number, (x, title, printed) in enumerate(rows):
        text = title if printed is None else f"{title} {'.' * 30} {printed}"
        contents.insert_text((x, 110 + 12 * number), text, fontsize=10, fontname="helv")
    headings = [
        ("Item 1. Business", "Other Information"),
        ("Item 2. Properties", None),
        (
            "Item 5. Market for Registrant's Common Equity, Related Stockholder Matters and Issuer Purchases",
            None,
        ),
        ("Item 9B. Other Information", None),
    ]
    for title, sub in headings:
        page = document.new_page()
        page.insert_text((72, 72), title, fontsize=14, fontname="hebo")
        page.insert_text(
            (72, 100), "Body text of the item, as filed for the year.", fontsize=10, fontname="helv"
        )
        if sub:
            page.insert_text((72, 140), sub, fontsize=14, fontname="hebo")
            page.insert_text(
                (72, 165), "Further body text of the business item.", fontsize=10, fontname="helv"
            )
    path = tmp_path / "filing.pdf"
    document.save(path)

    built = build_index(path, images=False)
    by_title = {entry.title: entry for entry in built.toc}
    wrapped = (
        "Item 5. Market for Registrant's Common Equity, Related Stockholder Matters and Issuer Purchases of "
        "Equity Securities"
    )
    assert list(by_title) == ["Item 1. Business", "Item 2. Properties", wrapped, "Item 9B. Other Information"]
    assert [entry.target_page for entry in built.toc] == [2, 3, 4, 5]
    # Linked to the heading on the page its printed number maps to, not to Item 1's "Other Information".
    sections = {section.title: section for section in built.sections()}
    assert (
        by_title["Item 9B. Other Information"].target_section_id == sections["Item 9B. Other Information"].id
    )


def test_a_group_title_above_its_entries_is_not_read_as_a_wrapped_title(tmp_path: Path) -> None:
    # A user guide's contents: "Essentials" has no page number and its entries sit under it at the
    # indent every entry starts at; they are entries of their own, not the end of "Essentials ...".
    document = pymupdf.open()
    contents = document.new_page()
    contents.insert_text((72, 72), "Contents", fontsize=16, fontname="hebo")
    rows = [
        (72, "Essentials", None),
        (90, "Basic Gestures", 1),
        (90, "Quick Switches", 2),
        (72, "Smart Features", None),
        (90, "Voice Control", 3),
        (90, "Smart Scanning", 4),
    ]
    for number, (x, title, printed) in enumerate(rows):
        text = title if printed is None else f"{title} {'.' * 30} {printed}"
        contents.insert_text((x, 110 + 12 * number), text, fontsize=10, fontname="helv")
    for title in ("Basic Gestures", "Quick Switches", "Voice Control", "Smart Scanning"):
        page = document.new_page()
        page.insert_text((72, 72), title, fontsize=14, fontname="hebo")
        page.insert_text((72, 100), "How to use this feature of the phone.", fontsize=10, fontname="helv")
    path = tmp_path / "guide.pdf"
    document.save(path)

    titles = [entry.title for entry in build_index(path, images=False).toc]
    assert titles == ["Basic Gestures", "Quick Switches", "Voice Control", "Smart Scanning"]
