"""Positions of the text nodes the PDF text strategy makes (format 1.1): every heading, paragraph, list item,
header and footer has a ``bbox`` that holds its words where PyMuPDF finds them, distinct blocks do not
overlap, columns are told apart, TOC entries carry their heading's box; the boxes survive a save, indexes of
format 1.0 still load, and sources without positions (Markdown, plain text, a model's answer) get none.

Every PDF is written with PyMuPDF in a fixture (or is a filing of the shared eval data) and indexed through
the public ``build_index``; the words a node must cover come from PyMuPDF's own ``get_text("words")``.
"""

from __future__ import annotations

import json
import math
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pymupdf
import pytest
from pydantic import ValidationError

from extract_thinker_pageindex import (
    FORMAT_VERSION,
    Document,
    FooterNode,
    HeaderNode,
    HeadingNode,
    IndexFormatError,
    ListItemNode,
    ParagraphNode,
    SectionNode,
    build_index,
    index_document,
    load_index,
)
from extract_thinker_pageindex.document.model import AnswerParagraphNode, PageAnswer, document_node
from pdf_support import LEFT_COLUMN, RIGHT_COLUMN, prose, shift_page

TEXT_NODES = (HeadingNode, ParagraphNode, ListItemNode, HeaderNode, FooterNode)
LEFT = 72.0
HEADER = "Northwind Trading Annual Report"
# Each paragraph's own words, so that a word on the page can only belong to one node.
OWN_WORDS = ["zephyr", "quokka", "marmalade", "lighthouse", "tangerine", "walrus"]


def _line(page: pymupdf.Page, y: float, text: str, *, x: float = LEFT, size: float = 10, font: str = "tiro"):
    page.insert_text((x, y), text, fontsize=size, fontname=font)
    return y + size * 1.3


def _paragraph(page: pymupdf.Page, y: float, text: str, *, x: float = LEFT, width: int = 90) -> float:
    for part in textwrap.wrap(text, width, break_on_hyphens=False):
        y = _line(page, y, part, x=x)
    return y + 10


@pytest.fixture
def report_pdf(tmp_path: Path) -> Path:
    """Three pages, each with a running header and a "Page N of 3" footer, a bold heading (on page 2 over
    two lines), two paragraphs, a bulleted list with a nested item and, on page 1, a word hyphenated at a
    line end; an outline points at the headings."""
    document = pymupdf.open()
    outline = []
    for number in range(3):
        page = document.new_page()
        _line(page, 40, HEADER, size=9, font="helv")
        _line(page, 815, f"Page {number + 1} of 3", x=270, size=9, font="helv")
        title = f"Chapter {number + 1} Results of the Year"
        y = _line(page, 100, title, size=16, font="hebo")
        if number == 1:
            y = _line(page, y, "and the Outlook for the Next", size=16, font="hebo")
            title += " and the Outlook for the Next"
        outline.append([1, title, number + 1])
        y = _paragraph(page, y + 10, f"{OWN_WORDS[2 * number]} {prose(number, 4)}")
        if number == 0:
            y = _line(page, y, "The supplier shall provide all informa-")
            y = _line(page, y, "tion needed to install the equipment.") + 10
        for indent, text in ((0, "- first item of the list"), (18, "- nested item"), (0, "- last item")):
            y = _line(page, y, text, x=LEFT + indent)
        _paragraph(page, y + 10, f"{OWN_WORDS[2 * number + 1]} {prose(number + 3, 3)}")
    document.set_toc(outline)
    path = tmp_path / "report.pdf"
    document.save(path)
    return path


@pytest.fixture
def columns_pdf(tmp_path: Path) -> Path:
    """A full-width title over two text columns whose lines are written row by row (left line 1, right
    line 1, left line 2, ...), so MuPDF may put both columns in one block."""
    document = pymupdf.open()
    page = document.new_page()
    y = _line(page, 100, "Quarterly Newsletter of the Society", size=18, font="hebo") + 10
    left = textwrap.wrap(LEFT_COLUMN, 38)
    right = textwrap.wrap(RIGHT_COLUMN, 38)
    for row in range(max(len(left), len(right))):
        if row < len(left):
            page.insert_text((LEFT, y), left[row], fontsize=10, fontname="tiro")
        if row < len(right):
            page.insert_text((316, y), right[row], fontsize=10, fontname="tiro")
        y += 13
    path = tmp_path / "columns.pdf"
    document.save(path)
    return path


# -- helpers --------------------------------------------------------------------------------------------


def _page_words(pdf: pymupdf.Document, index: int) -> list[tuple[float, float, float, float, str]]:
    # Ligatures expanded, as the text strategy reads them, so "ﬁnancial" on the page matches "financial".
    flags = pymupdf.TEXTFLAGS_WORDS & ~pymupdf.TEXT_PRESERVE_LIGATURES
    return [(w[0], w[1], w[2], w[3], w[4]) for w in pdf[index].get_text("words", flags=flags)]


def _inside(word: tuple[float, ...], box: tuple[int, int, int, int], slack: float = 1.0) -> bool:
    return (
        word[0] >= box[0] - slack
        and word[1] >= box[1] - slack
        and word[2] <= box[2] + slack
        and word[3] <= box[3] + slack
    )


def word_placement(
    pdf: pymupdf.Document, document: Document, types: tuple[type, ...]
) -> tuple[int, int, int]:
    """(words of the nodes found on their page, of those inside their node's box, words not found).

    Each word of a node's text is matched to one occurrence of the same word on the page (an occurrence is
    used once), preferring one inside the node's box, within 1 pt: a word counts as inside only when one of
    its page's unused occurrences lies in the box. Words the page spells otherwise (joined across a
    hyphenated line end) are not found and not counted.
    """
    found = inside = missing = 0
    for page in document.pages:
        unused: dict[str, list[tuple[float, ...]]] = {}
        for word in _page_words(pdf, page.index):
            unused.setdefault(word[4], []).append(word)
        for node in page.nodes:
            if not isinstance(node, types):
                continue
            for token in node.content.split():
                candidates = unused.get(token, [])
                if not candidates:
                    missing += 1
                    continue
                found += 1
                hit = next((word for word in candidates if node.bbox and _inside(word, node.bbox)), None)
                if hit is not None:
                    inside += 1
                    candidates.remove(hit)
    return found, inside, missing


def text_nodes(document: Document) -> Iterator[tuple[int, object]]:
    for page, node in document.iter_nodes():
        if isinstance(node, TEXT_NODES):
            yield page.index, node


def overlap(a: tuple[int, int, int, int], b: tuple[int, int, int, int]) -> float:
    """The area two boxes share, as a share of the smaller one."""
    width = min(a[2], b[2]) - max(a[0], b[0])
    height = min(a[3], b[3]) - max(a[1], b[1])
    if width <= 0 or height <= 0:
        return 0.0
    smaller = min((a[2] - a[0]) * (a[3] - a[1]), (b[2] - b[0]) * (b[3] - b[1]))
    return width * height / smaller


# -- the boxes of a PDF's text nodes --------------------------------------------------------------------


def test_every_text_node_has_a_whole_point_box_on_its_page(report_pdf: Path) -> None:
    document = build_index(report_pdf, strategy="text")
    kinds = {type(node) for _, node in text_nodes(document)}
    assert kinds == set(TEXT_NODES)  # the fixture makes one of each
    for _, node in text_nodes(document):
        assert node.bbox is not None, node
        x0, y0, x1, y1 = node.bbox
        assert all(isinstance(value, int) for value in node.bbox)
        assert 0 <= x0 < x1 <= math.ceil(595.3) and 0 <= y0 < y1 <= math.ceil(841.9)
    sections = [node for _, node in document.iter_nodes() if isinstance(node, SectionNode)]
    assert sections and not any(hasattr(node, "bbox") for node in sections)  # their headings are placed


def test_each_word_of_a_node_lies_in_its_box(report_pdf: Path) -> None:
    document = build_index(report_pdf, strategy="text")
    with pymupdf.open(report_pdf) as pdf:
        found, inside, missing = word_placement(pdf, document, TEXT_NODES)
    assert inside == found
    assert found > 300 and missing <= 2  # only "informa-"/"tion" are spelled otherwise on the page


def test_a_box_holds_its_lines_and_no_more(report_pdf: Path) -> None:
    # The union of the node's words, rounded outward, is the box (span boxes reach at most a point past
    # the words they hold): a box is never a whole block or page.
    document = build_index(report_pdf, strategy="text")
    with pymupdf.open(report_pdf) as pdf:
        for page in document.pages:
            words = _page_words(pdf, page.index)
            for node in page.nodes:
                if not isinstance(node, TEXT_NODES):
                    continue
                mine = [word for word in words if _inside(word, node.bbox, slack=0.5)]
                union = (
                    min(w[0] for w in mine),
                    min(w[1] for w in mine),
                    max(w[2] for w in mine),
                    max(w[3] for w in mine),
                )
                assert node.bbox[0] >= math.floor(union[0]) - 1 and node.bbox[1] >= math.floor(union[1]) - 1
                assert node.bbox[2] <= math.ceil(union[2]) + 1 and node.bbox[3] <= math.ceil(union[3]) + 1


@pytest.mark.parametrize("use_outline", [True, False])
def test_multi_line_heading_and_paragraph_boxes_span_their_lines(report_pdf: Path, use_outline: bool) -> None:
    document = build_index(report_pdf, strategy="text", use_outline=use_outline)
    second = next(page for page in document.pages if page.index == 1)
    heading = next(node for node in second.nodes if isinstance(node, HeadingNode))
    assert heading.content == "Chapter 2 Results of the Year and the Outlook for the Next"
    assert heading.bbox[3] - heading.bbox[1] > 30  # two lines of 16 pt
    joined = next(node for _, node in document.iter_nodes() if "information" in getattr(node, "content", ""))
    assert joined.bbox[3] - joined.bbox[1] > 20  # the hyphenated word's two lines


def test_boxes_of_distinct_blocks_do_not_overlap(report_pdf: Path) -> None:
    document = build_index(report_pdf, strategy="text")
    for page in document.pages:
        boxes = [node.bbox for node in page.nodes if isinstance(node, TEXT_NODES)]
        for position, box in enumerate(boxes):
            for other in boxes[position + 1 :]:
                # Consecutive list lines set 13 pt apart touch by a point (their line boxes are taller).
                assert overlap(box, other) < 0.1, (box, other)


def test_headers_and_footers_sit_in_their_bands(report_pdf: Path) -> None:
    document = build_index(report_pdf, strategy="text")
    headers = [node for _, node in document.iter_nodes() if isinstance(node, HeaderNode)]
    footers = [node for _, node in document.iter_nodes() if isinstance(node, FooterNode)]
    assert len(headers) == len(footers) == 3
    assert all(node.bbox[3] <= 0.09 * 842 for node in headers)
    assert all(node.bbox[1] >= 0.91 * 842 and node.bbox[0] >= 269 for node in footers)


def test_list_items_start_at_their_bullet_and_indent(report_pdf: Path) -> None:
    document = build_index(report_pdf, strategy="text")
    first = next(page for page in document.pages if page.index == 0)
    items = [node for node in first.nodes if isinstance(node, ListItemNode)]
    assert [(node.level, node.content) for node in items] == [
        ("l1", "first item of the list"),
        ("l2", "nested item"),
        ("l1", "last item"),
    ]
    assert [node.bbox[0] for node in items] == [72, 90, 72]  # the bullet is part of the item's line


def test_right_column_text_has_a_box_in_the_right_column(columns_pdf: Path) -> None:
    document = build_index(columns_pdf, strategy="text")
    (page,) = document.pages
    paragraphs = {node.content: node.bbox for node in page.nodes if isinstance(node, ParagraphNode)}
    assert set(paragraphs) == {LEFT_COLUMN, RIGHT_COLUMN}
    left, right = paragraphs[LEFT_COLUMN], paragraphs[RIGHT_COLUMN]
    middle = 595 / 2
    assert left[0] == 72 and left[2] < middle
    assert right[0] == 316 and right[2] > middle
    assert overlap(left, right) == 0
    with pymupdf.open(columns_pdf) as pdf:
        found, inside, _ = word_placement(pdf, document, TEXT_NODES)
    assert found > 40 and inside == found


@pytest.mark.parametrize("change", ["crop", "rotate"])
def test_boxes_use_the_page_own_coordinates(tmp_path: Path, change: str) -> None:
    # Like image and table boxes: from the crop box's top-left corner, before /Rotate is applied.
    document = pymupdf.open()
    page = document.new_page()
    y = _line(page, 150, "Results of the Year", x=90, size=16, font="hebo")
    _paragraph(page, y + 10, prose(0, 4), x=90, width=80)
    shift_page(page, change)
    path = tmp_path / f"{change}.pdf"
    document.save(path)

    built = build_index(path, strategy="text")
    heading = next(node for _, node in built.iter_nodes() if isinstance(node, HeadingNode))
    assert heading.bbox[0] == (50 if change == "crop" else 90)
    with pymupdf.open(path) as pdf:
        found, inside, _ = word_placement(pdf, built, TEXT_NODES)
    assert found > 40 and inside == found


def test_toc_entries_carry_the_box_of_their_heading(report_pdf: Path) -> None:
    for use_outline in (True, False):  # the TOC from the outline, and the one generated from the headings
        document = build_index(report_pdf, strategy="text", use_outline=use_outline)
        headings = {
            node.parent_id: (page.index, node.bbox)
            for page, node in document.iter_nodes()
            if isinstance(node, HeadingNode)
        }
        assert len(document.toc) >= 3
        for entry in document.toc:
            assert entry.target_section_id in headings
            assert (entry.target_page, entry.bbox) == headings[entry.target_section_id]


# -- saving and loading ---------------------------------------------------------------------------------


def test_boxes_are_saved_and_loaded(report_pdf: Path, tmp_path: Path) -> None:
    document, path = index_document(report_pdf, tmp_path / "report.pageindex", strategy="text")
    saved = json.loads((path / "document.json").read_text(encoding="utf-8"))
    assert saved["format_version"] == FORMAT_VERSION == "1.3"
    paragraph = next(node for node in saved["pages"][0]["nodes"] if node["type"] == "paragraph")
    assert isinstance(paragraph["bbox"], list) and len(paragraph["bbox"]) == 4
    assert all(isinstance(entry["bbox"], list) for entry in saved["toc"])
    assert load_index(path) == document


def _strip_to_format_1_0(data: dict) -> None:
    data["format_version"] = "1.0"
    for page in data["pages"]:
        page.pop("origin", None)  # format 1.2
        for node in page["nodes"]:
            if node["type"] not in ("image", "table"):
                node.pop("bbox", None)
    for entry in data["toc"]:
        entry.pop("bbox")


def test_an_index_of_format_1_0_still_loads(report_pdf: Path, tmp_path: Path) -> None:
    document, path = index_document(report_pdf, tmp_path / "report.pageindex", strategy="text")
    data = json.loads((path / "document.json").read_text(encoding="utf-8"))
    _strip_to_format_1_0(data)
    assert '"bbox"' not in json.dumps(data)
    (path / "document.json").write_text(json.dumps(data), encoding="utf-8")

    loaded = load_index(path)
    assert loaded.format_version == FORMAT_VERSION  # read as what it now is: a current document without boxes
    assert all(node.bbox is None for _, node in text_nodes(loaded))
    assert all(entry.bbox is None for entry in loaded.toc)
    unplaced = document.model_dump(exclude={"toc": {"__all__": {"bbox"}}})
    for page in unplaced["pages"]:
        for node in page["nodes"]:
            if "bbox" in node:
                node["bbox"] = None
    assert loaded.model_dump(exclude={"toc": {"__all__": {"bbox"}}}) == unplaced


def test_an_index_of_format_1_0_saves_again_as_the_current_version(report_pdf: Path, tmp_path: Path) -> None:
    _, path = index_document(report_pdf, tmp_path / "report.pageindex", strategy="text")
    data = json.loads((path / "document.json").read_text(encoding="utf-8"))
    _strip_to_format_1_0(data)
    (path / "document.json").write_text(json.dumps(data), encoding="utf-8")
    index_document(report_pdf, path, strategy="text")  # an old index is replaced like any other
    assert json.loads((path / "document.json").read_text(encoding="utf-8"))["format_version"] == "1.3"


@pytest.mark.parametrize("version", ["2.0", "0.9", "1", "1.1.0", "v1.1", "01.1"])
def test_another_major_version_or_a_malformed_one_is_refused(
    report_pdf: Path, tmp_path: Path, version: str
) -> None:
    _, path = index_document(report_pdf, tmp_path / "report.pageindex", strategy="text")
    data = json.loads((path / "document.json").read_text(encoding="utf-8"))
    data["format_version"] = version
    (path / "document.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(IndexFormatError, match=f"format_version '{version}'.*reads '1.0' to '1.3'"):
        load_index(path)
    with pytest.raises(ValidationError, match="format_version"):
        Document.model_validate(data)


def test_a_later_minor_version_loads_without_the_fields_it_added(report_pdf: Path, tmp_path: Path) -> None:
    document, path = index_document(report_pdf, tmp_path / "report.pageindex", strategy="text")
    data = json.loads((path / "document.json").read_text(encoding="utf-8"))
    data["format_version"] = "1.7"
    data["pages"][0]["nodes"][0]["confidence"] = 0.9  # a field a later release might add
    data["language"] = "en"
    (path / "document.json").write_text(json.dumps(data), encoding="utf-8")

    loaded = load_index(path)
    assert loaded.format_version == "1.3"
    assert loaded == document


def test_a_later_minor_version_this_release_cannot_hold_is_a_clear_error(
    report_pdf: Path, tmp_path: Path
) -> None:
    _, path = index_document(report_pdf, tmp_path / "report.pageindex", strategy="text")
    data = json.loads((path / "document.json").read_text(encoding="utf-8"))
    data["format_version"] = "1.7"
    data["pages"][0]["nodes"].append({"type": "formula", "id": "p0-99", "content": "E = mc^2"})
    (path / "document.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(IndexFormatError, match=r"'1\.7', written by a later release.*Upgrade"):
        load_index(path)


def test_a_toc_entry_box_needs_its_page(report_pdf: Path) -> None:
    document = build_index(report_pdf, strategy="text")
    data = document.model_dump()
    data["toc"][0]["target_page"] = None
    with pytest.raises(ValidationError, match="has a bbox but no target_page"):
        Document.model_validate(data)


# -- sources without positions --------------------------------------------------------------------------


def test_markdown_and_plain_text_nodes_have_no_box() -> None:
    markdown = build_index(
        "# Booking\n\nBook through the desk.\n\n- one\n- two\n\n## Approvals\n\nAsk first.\n",
        content_type="markdown",
    )
    text = build_index("A paragraph.\n\n- an item\n- another\n\fA second page.\n", content_type="text")
    for document in (markdown, text):
        nodes = [node for _, node in text_nodes(document)]
        assert nodes and all(node.bbox is None for node in nodes)
    assert markdown.toc and all(entry.bbox is None for entry in markdown.toc)


def test_a_model_answer_never_places_text() -> None:
    # A vision model is asked for no box on text and one it writes anyway (in its own scale, here 0-1,
    # which would round to an empty box) neither fails the answer nor reaches the document.
    assert "bbox" not in AnswerParagraphNode.model_json_schema()["properties"]
    answer = PageAnswer.model_validate(
        {"nodes": [{"type": "paragraph", "id": 1, "content": "Text.", "bbox": [0.1, 0.2, 0.3, 0.25]}]}
    )
    (node,) = answer.nodes
    assert isinstance(node, AnswerParagraphNode) and node.bbox is None
    placed = document_node(node, id="p0-1")
    assert type(placed) is ParagraphNode and placed.bbox is None and placed.id == "p0-1"


# -- a real filing --------------------------------------------------------------------------------------


@pytest.mark.eval
def test_paragraph_words_lie_in_their_boxes_on_a_filing(eval_dir: Path) -> None:
    path = eval_dir / "pdfs" / "NIKE_2019_10K.pdf"
    if not path.is_file():
        pytest.skip(f"{path.name} is not in the evaluation data")
    document = build_index(path, strategy="text", pages="3-5", images=False)
    assert [page.index for page in document.pages] == [2, 3, 4]
    with pymupdf.open(path) as pdf:
        found, inside, missing = word_placement(pdf, document, (ParagraphNode,))
    assert found >= 1000 and missing <= 0.02 * found
    assert inside >= 0.95 * found, f"{inside} of {found} words inside their paragraph's box"
