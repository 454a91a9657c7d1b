"""A page's drawn lines read with its text (the vector boxes of a text page), on PDFs drawn here with
PyMuPDF: the same rules as the page's drawings, the page's drawings read where a box hides its shape, the
text blocks as they are without the shapes, and slivers of shading that are no rules."""

from __future__ import annotations

import itertools
from pathlib import Path

import pymupdf
import pytest

from extract_thinker_pageindex.tables import find_page_tables
from extract_thinker_pageindex.tables.drawings import VECTOR_FLAGS, page_paths, text_blocks, textpage_paths
from extract_thinker_pageindex.tables.ruled import page_rules

DICT_FLAGS = pymupdf.TEXTFLAGS_DICT & ~pymupdf.TEXT_PRESERVE_IMAGES
DEJAVU = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")


def rules(drawings: list[dict]) -> set[tuple[bool, int, int, int]]:
    """Each rule as ``(horizontal, at, start, end)`` rounded to whole points (duplicates folded)."""
    across, down = page_rules(drawings)
    return {(rule.horizontal, round(rule.at), rule.start, rule.end) for rule in across + down}


def near(one: set[tuple[bool, int, int, int]], other: set[tuple[bool, int, int, int]]) -> bool:
    """Whether every rule of ``one`` has a rule of ``other`` within a point at its place and ends."""
    return all(
        any(a[0] == b[0] and all(abs(p - q) <= 1 for p, q in zip(a[1:], b[1:], strict=True)) for b in other)
        for a in one
    )


def vector_paths(page: pymupdf.Page) -> list[dict]:
    textpage = page.get_textpage(flags=DICT_FLAGS | VECTOR_FLAGS)
    return textpage_paths(page, textpage)


def test_the_vector_flags_are_pymupdfs():
    assert pymupdf.TEXT_COLLECT_VECTORS | pymupdf.TEXT_LAZY_VECTORS == VECTOR_FLAGS


def test_lines_and_bars_read_with_the_text_are_the_rules_of_the_drawings():
    with pymupdf.open() as document:
        page = document.new_page(width=612, height=792)
        shape = page.new_shape()  # a grid drawn as one path of separate lines
        for y in (100, 120, 140):
            shape.draw_line((72, y), (400, y))
        for x in (72, 200, 400):
            shape.draw_line((x, 100), (x, 140))
        shape.finish(color=(0, 0, 0), width=0.5)
        shape.commit()
        shape = page.new_shape()  # a thick stroke: its box is widened by the width and the mitre
        shape.draw_line((72, 200), (300, 200))
        shape.finish(color=(0, 0, 0), width=1)
        shape.commit()
        page.draw_rect(pymupdf.Rect(72, 250, 500, 250.8), color=None, fill=(0, 0, 0))  # a filled bar
        page.insert_text((80, 115), "Cell", fontsize=9)
        drawn = rules(page.get_cdrawings())
        read = rules(vector_paths(page))
    assert len(drawn) == 8  # three across and three down, the stroke and the bar
    assert near(drawn, read) and near(read, drawn)


def test_a_stroked_box_makes_the_page_read_its_drawings():
    with pymupdf.open() as document:
        page = document.new_page(width=612, height=792)
        page.draw_rect(pymupdf.Rect(72, 100, 300, 160), color=(0, 0, 0), width=0.5)  # a cell drawn as a box
        page.insert_text((80, 115), "Cell", fontsize=9)
        assert vector_paths(page) == page.get_cdrawings()
        assert len(rules(vector_paths(page))) == 4  # its four sides


def test_an_invisible_shape_gives_no_rule():
    with pymupdf.open() as document:
        page = document.new_page(width=612, height=792)
        shape = page.new_shape()
        shape.draw_rect(pymupdf.Rect(72, 300, 400, 301))
        shape.finish(color=None, fill=(0, 0, 0), fill_opacity=0)
        shape.commit()
        page.draw_rect(pymupdf.Rect(72, 400, 400, 401), color=None, fill=(0, 0, 0))
        read = rules(vector_paths(page))
    assert [rule[1] for rule in read] == [400]


def paragraph_page(*, break_after_rule: bool) -> pymupdf.Page:
    """Three lines of one paragraph with a rule drawn under the first, between its text and the next
    line's (a second paragraph starts after the rule when ``break_after_rule``)."""
    document = pymupdf.open()
    page = document.new_page(width=612, height=792)
    page.insert_text((72, 100), "The first line of a paragraph has a rule drawn under it", fontsize=10)
    shape = page.new_shape()
    shape.draw_line((72, 102), (200, 102))
    shape.finish(color=(0, 0, 0), width=0.5)
    shape.commit()
    second = 130 if break_after_rule else 112
    page.insert_text((72, second), "and the paragraph goes on in the line under the rule", fontsize=10)
    page.insert_text((72, second + 12), "to its third line, still in the same block of text.", fontsize=10)
    return page


def line_groups(blocks: list[dict]) -> list[list[str]]:
    return [
        ["".join(span["text"] for span in line["spans"]) for line in block["lines"]]
        for block in blocks
        if block.get("type", 0) == 0
    ]


def test_a_shape_drawn_amid_a_paragraph_does_not_split_its_block():
    for break_after_rule in (False, True):
        page = paragraph_page(break_after_rule=break_after_rule)
        plain = page.get_text("dict", flags=DICT_FLAGS)["blocks"]
        shaped = page.get_text("dict", flags=DICT_FLAGS | VECTOR_FLAGS)["blocks"]
        assert any(block["type"] == 3 for block in shaped)
        assert len(line_groups(shaped)) == 2  # MuPDF closes the block after the shape
        assert line_groups(text_blocks(shaped)) == line_groups(plain)
        assert len(line_groups(plain)) == (2 if break_after_rule else 1)
        page.parent.close()


def test_slivers_of_shading_between_a_rows_cells_are_no_rules():
    """A shaded total row drawn as cells of one colour with narrow gaps of that colour between them, a
    double rule under it; and a black rule under a black band, which stays a rule."""
    with pymupdf.open() as document:
        page = document.new_page(width=612, height=792)
        blue = (0.8, 0.93, 1.0)
        edges = [72, 200, 202, 300, 302, 400]
        for x0, x1 in itertools.pairwise(edges):
            page.draw_rect(pymupdf.Rect(x0, 300, x1, 310), color=None, fill=blue)
        for y in (310, 312):
            page.draw_rect(pymupdf.Rect(72, y, 400, y + 0.7), color=None, fill=(0, 0, 0))
        page.draw_rect(pymupdf.Rect(72, 280, 400, 299), color=None, fill=(0, 0, 0))  # a black band...
        page.draw_rect(pymupdf.Rect(72, 299, 400, 299.7), color=None, fill=(0, 0, 0))  # ...and a rule
        page.insert_text((76, 293), "Revenue", fontsize=8, color=(1, 1, 1))  # white on the black band
        page.insert_text((250, 293), "1,000", fontsize=8, color=(1, 1, 1))
        page.insert_text((350, 293), "5,000", fontsize=8, color=(1, 1, 1))
        page.insert_text((76, 308), "Total", fontsize=8)
        page.insert_text((250, 308), "1,234", fontsize=8)
        page.insert_text((350, 308), "5,678", fontsize=8)
        for drawings in (page.get_cdrawings(), vector_paths(page)):
            found = rules(drawings)
            assert not any(not horizontal for horizontal, *_ in found)  # the gaps at 200 and 300
            assert {at for _, at, *_ in found} == {299, 310, 312}
        (table,) = find_page_tables(page)  # two rows of figures: the finder reads the drawings
        assert table.ruling != "grid"
        assert table.rows[-1] == ["Total", "1,234", "5,678"]


def test_a_rectangle_stored_from_its_right_edge_is_shading_not_a_rule():
    with pymupdf.open() as document:
        page = document.new_page(width=612, height=792)
        xref = document.get_new_xref()
        document.update_object(xref, "<<>>")
        # A shaded cell 53 points wide written from its right edge (a negative width), and a rule.
        document.update_stream(xref, b"0.8 g 160 600 -53 22 re f 0 g 72 560 300 0.6 re f")
        page.set_contents(xref)
        assert any(item[1][2] < item[1][0] for path in page.get_cdrawings() for item in path["items"])
        assert rules(page.get_cdrawings()) == {(True, 232, 72, 372)}


def test_page_paths_of_a_text_page_without_shapes_is_empty():
    with pymupdf.open() as document:
        page = document.new_page(width=612, height=792)
        page.insert_text((72, 100), "No drawing on this page", fontsize=10)
        assert page_paths(page, page.get_text("dict", flags=DICT_FLAGS | VECTOR_FLAGS)["blocks"]) == []


def test_a_thick_shape_that_is_no_rectangle_is_no_rule_and_does_not_make_the_page_read_its_drawings():
    """A chart's filled triangle: its drawn path has a straight base, its box is all the text page knows."""
    with pymupdf.open() as document:
        page = document.new_page(width=612, height=792)
        shape = page.new_shape()
        shape.draw_polyline([(100, 300), (200, 200), (300, 300), (100, 300)])
        shape.finish(color=None, fill=(0.2, 0.4, 0.8), closePath=True)
        shape.commit()
        (drawn,) = page.get_cdrawings()
        assert ("l", (300.0, 300.0), (100.0, 300.0)) in [
            (kind, *map(tuple, ends)) for kind, *ends in drawn["items"]
        ]
        assert rules([drawn]) == set()  # its straight base is an edge of a filled outline, no rule
        assert vector_paths(page) == []


def test_a_rule_between_shading_that_does_not_line_it_stays_a_rule():
    """Rules of a header band's colour: the column rules run past the band through the white body, and a
    rule under a table ends where two boxes in the margin meet. Neither is a sliver."""
    with pymupdf.open() as document:
        page = document.new_page(width=612, height=792)
        navy = (0.1, 0.1, 0.4)
        xs = [72, 200, 300, 400]
        for x0, x1 in itertools.pairwise(xs):  # the header band, cell by cell, between the rules
            page.draw_rect(pymupdf.Rect(x0 + 0.6, 100, x1 - 0.6, 115), color=None, fill=navy)
        for x in xs:
            page.draw_rect(pymupdf.Rect(x - 0.6, 100, x + 0.6, 200), color=None, fill=navy)
        page.draw_rect(pymupdf.Rect(72, 400, 300, 400.5), color=None, fill=(0, 0, 0))
        page.draw_rect(pymupdf.Rect(450, 380, 540, 400), color=None, fill=(0, 0, 0))
        page.draw_rect(pymupdf.Rect(450, 400.5, 540, 420), color=None, fill=(0, 0, 0))
        for drawings in (page.get_cdrawings(), vector_paths(page)):
            found = rules(drawings)
            assert {at for horizontal, at, *_ in found if not horizontal} == {72, 200, 300, 400}
            assert (True, 400, 72, 300) in found


def test_invisible_bars_give_no_rules_where_a_stroked_box_makes_the_page_read_its_drawings():
    with pymupdf.open() as document:
        page = document.new_page(width=612, height=792)
        shape = page.new_shape()
        for y in (300, 320, 340):
            shape.draw_rect(pymupdf.Rect(72, y, 400, y + 0.8))
        shape.finish(color=None, fill=(0, 0, 0), fill_opacity=0)
        shape.commit()
        page.draw_rect(pymupdf.Rect(72, 500, 300, 560), color=(0, 0, 0), width=2)  # a thick stroked box
        for drawings in (page.get_cdrawings(), vector_paths(page)):
            assert {at for _, at, *_ in rules(drawings)} == {500, 560, 72, 300}  # the box's sides only


def test_a_stroked_line_read_from_its_box_ends_where_it_is_drawn():
    with pymupdf.open() as document:
        page = document.new_page(width=612, height=792)
        shape = page.new_shape()
        shape.draw_line((100, 300), (350, 300))
        shape.finish(color=(0, 0, 0), width=0.8)
        shape.commit()
        (path,) = vector_paths(page)
        (_, start, end) = path["items"][0]
        assert abs(start[0] - 100) < 0.1 and abs(end[0] - 350) < 0.1 and abs(start[1] - 300) < 0.1


def replayed(lines: list[tuple[float, float, str]], *, font: str = "helv", fontfile: str | None = None):
    """Each ``(x, baseline, text)`` written at 10 pt with a rule drawn under the first line, between its
    text and the next's: MuPDF's blocks without the shapes, and :func:`text_blocks` of them with."""
    with pymupdf.open() as document:
        page = document.new_page(width=612, height=792)
        if fontfile:
            page.insert_font(fontname=font, fontfile=fontfile)
        for number, (x, y, text) in enumerate(lines):
            page.insert_text((x, y), text, fontsize=10, fontname=font)
            if number == 0:
                page.draw_line((x, y + 2), (x + 80, y + 2), width=0.5)
        plain = line_groups(page.get_text("dict", flags=DICT_FLAGS)["blocks"])
        shaped = page.get_text("dict", flags=DICT_FLAGS | VECTOR_FLAGS)["blocks"]
        joined = text_blocks(shaped)
    return plain, line_groups(joined), joined


def test_the_replayed_blocks_follow_mupdfs_indent_and_bullet_rules():
    # 1.2 font sizes down: a new line of the same block, unless indented (a new paragraph), unless the
    # line before opens with a figure or a bullet (a list item's next line is indented under its text);
    # 2 font sizes down: a new paragraph.
    cases = {
        "flush": [(72, 100, "A first line of running text"), (72, 112, "and its second line")],
        "indented": [(72, 100, "A first line of running text"), (90, 112, "An indented next paragraph")],
        "numbered": [(72, 100, "1. A numbered item of the list"), (90, 112, "goes on under its text")],
        "apart": [(72, 100, "A paragraph's last line"), (72, 120, "A paragraph two font sizes below")],
    }
    sizes = {}
    for name, lines in cases.items():
        plain, joined, blocks = replayed(lines)
        assert joined == plain
        sizes[name] = [len(group) for group in plain]
        if len(blocks) == 1:
            union = blocks[0]["bbox"]
            assert union[1] < 95 and union[3] > 112  # the joined block's box holds both lines
    assert sizes == {"flush": [2], "indented": [1, 1], "numbered": [2], "apart": [1, 1]}


def test_the_replayed_blocks_of_right_to_left_text_are_mupdfs():
    if not DEJAVU.exists():
        pytest.skip("needs a TrueType font with Hebrew glyphs (DejaVu Sans; CI installs it)")
    lines = [(100, 100, "שלום עולם זה טקסט"), (100, 112, "שורה שנייה של טקסט")]
    plain, joined, _ = replayed(lines, font="dejavu", fontfile=str(DEJAVU))
    assert [len(group) for group in plain] == [2]
    assert joined == plain
