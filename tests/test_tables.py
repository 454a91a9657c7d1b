"""Tables on born-digital pages, found without a model: each detection rule on a PDF drawn here with
PyMuPDF, cells read as printed, and the lines that are no table."""

from __future__ import annotations

import pymupdf
import pytest

from extract_thinker_pageindex.tables import find_page_tables
from extract_thinker_pageindex.tables.rows import is_figure

SIZE = 9


def put(page: pymupdf.Page, x: float, y: float, text: str, *, right: bool = False, size: float = SIZE):
    """Write ``text`` with its baseline at ``y``, starting at ``x`` (or ending there, ``right=True``)."""
    if right:
        x -= pymupdf.get_text_length(text, fontname="helv", fontsize=size)
    page.insert_text((x, y), text, fontname="helv", fontsize=size)


def draw_rules(page: pymupdf.Page, lines: list[tuple[float, float, float, float]]) -> None:
    """Draw each ``(x0, y0, x1, y1)`` as a thin black rule."""
    shape = page.new_shape()
    for x0, y0, x1, y1 in lines:
        shape.draw_line((x0, y0), (x1, y1))
    shape.finish(color=(0, 0, 0), width=0.6)
    shape.commit()


def put_cells(page: pymupdf.Page, xs: list[float], rows: list[tuple[float, list[str]]]) -> None:
    """Write each row's cells at baseline ``y``, each 4 points right of its column's left rule."""
    for y, row in rows:
        for text, x in zip(row, xs, strict=False):
            put(page, x + 4, y, text)


def only_table(document: pymupdf.Document):
    """The one table found on the document's first page (the document is closed)."""
    with document:
        (table,) = find_page_tables(document[0])
    return table


def statement_page() -> pymupdf.Document:
    """A balance sheet as filings print it: no cell rules, figures right-aligned under years, currency
    signs at the columns' left edge, indented totals, a label on two lines, a footnote mark."""
    document = pymupdf.open()
    page = document.new_page(width=612, height=792)
    title = "Consolidated Statements of Financial Position"  # centred over the table (40 to 520)
    put(page, 280 - pymupdf.get_text_length(title, fontname="helv", fontsize=11) / 2, 60, title, size=11)
    put(page, 40, 80, "(Dollars in millions)")
    put(page, 380, 100, "Year ended December 31,")
    put(page, 420, 114, "2018", right=True)
    put(page, 520, 114, "2017", right=True)
    rows = [
        (40, "Assets", None, None),
        (40, "Cash and cash equivalents", "7,637", "8,813"),
        (40, "Inventories", "62,567(1)", "61,388"),
        (40, "Treasury stock, at cost", "(52,348)", "(43,454)"),
        (40, "Other assets, net of accumulated", None, None),
        (52, "amortization of $503 and $482", "1,826", "-"),
        (60, "Total assets", "117,359", "112,362"),
    ]
    y = 132
    for x, label, first, second in rows:
        put(page, x, y, label)
        if first is not None and second is not None:
            if label.startswith("Cash") or label.startswith("Total"):
                put(page, 370, y, "$")
                put(page, 470, y, "$")
            put(page, 420, y, first, right=True)
            put(page, 520, y, second, right=True)
        y += 14
    put(page, 40, y + 30, "The accompanying notes are an integral part of these financial statements.")
    return document


def test_a_statement_aligned_by_whitespace_is_read_cell_by_cell():
    table = only_table(statement_page())
    assert table.ruling == "aligned"
    assert table.caption == "Consolidated Statements of Financial Position"
    assert table.header_rows == 2
    assert table.header == ["", "Year ended December 31, 2018", "Year ended December 31, 2017"]
    # The spanning header stands once, in its first column: nothing is copied into an empty cell.
    assert table.rows[0] == ["", "Year ended December 31,", ""]
    assert table.rows[1] == ["", "2018", "2017"]
    assert table.body == [
        ["Assets", "", ""],
        ["Cash and cash equivalents", "$ 7,637", "$ 8,813"],
        ["Inventories", "62,567 (1)", "61,388"],  # the footnote mark set apart from the figure
        ["Treasury stock, at cost", "(52,348)", "(43,454)"],  # negative figures as printed
        ["Other assets, net of accumulated amortization of $503 and $482", "1,826", "-"],  # two lines
        ["Total assets", "$ 117,359", "$ 112,362"],
    ]
    # Indentation is kept as a level: totals stand further right than the items.
    assert table.levels[table.header_rows :] == [0, 0, 0, 0, 0, 1]
    markdown = table.markdown()
    assert markdown.splitlines()[0] == "|  | Year ended December 31, 2018 | Year ended December 31, 2017 |"
    assert "| \u00a0\u00a0Total assets | $ 117,359 | $ 112,362 |" in markdown
    # The sentence under the statement is not a row of it.
    assert all("accompanying" not in cell for row in table.rows for cell in row)


def ruled_page(*, shaded_row: bool = False) -> pymupdf.Document:
    """A table ruled into cells, with a header row of text and a cell on two lines."""
    document = pymupdf.open()
    page = document.new_page(width=612, height=792)
    put(page, 72, 90, "Table 3: Fees by service")
    xs, ys = [72, 200, 330, 460], [100, 120, 150, 170]
    draw_rules(page, [(x, ys[0], x, ys[-1]) for x in xs] + [(xs[0], y, xs[-1], y) for y in ys])
    cells = [["Service", "Fee", "Billing"], ["Hosting and", "1,200", "Monthly"], ["Support", "300", "Yearly"]]
    put_cells(page, xs, [(y + 13, row) for row, y in zip(cells, ys, strict=False)])
    put(page, 76, 145, "maintenance")  # the second line of "Hosting and maintenance"
    if shaded_row:
        page.draw_rect(pymupdf.Rect(72, 300, 460, 314), color=None, fill=(0.85, 0.85, 0.85))
        put(page, 76, 310, "Revenue")
        put(page, 400, 310, "1,234")
    return document


def test_a_ruled_grid_gives_its_cells_and_its_caption():
    table = only_table(ruled_page())
    assert table.ruling == "grid"
    assert table.caption == "Table 3: Fees by service"
    assert table.header == ["Service", "Fee", "Billing"]
    assert table.body == [["Hosting and maintenance", "1,200", "Monthly"], ["Support", "300", "Yearly"]]
    assert table.markdown().splitlines()[:3] == [
        "| Service | Fee | Billing |",
        "|---|---|---|",
        "| Hosting and maintenance | 1,200 | Monthly |",
    ]


def test_a_shaded_row_is_not_a_table():
    with ruled_page(shaded_row=True) as document:
        tables = find_page_tables(document[0])
    assert len(tables) == 1 and tables[0].ruling == "grid"
    assert all("Revenue" not in cell for table in tables for row in table.rows for cell in row)


def test_a_table_with_rules_across_only_is_found_by_its_alignment():
    document = pymupdf.open()
    page = document.new_page(width=612, height=792)
    draw_rules(page, [(72, y, 500, y) for y in (95, 112, 170)])
    put(page, 300, 107, "Q1", right=True)
    put(page, 400, 107, "Q2", right=True)
    put(page, 500, 107, "Q3", right=True)
    for number, (label, values) in enumerate(
        [
            ("North", ("12.5%", "13.0%", "11.2%")),
            ("South", ("8.1%", "9.4%", "10.0%")),
            ("West", ("n/a", "4.4%", "5.1%")),
        ]
    ):
        y = 126 + 14 * number
        put(page, 72, y, label)
        for value, x in zip(values, (300, 400, 500), strict=True):
            put(page, x, y, value, right=True)
    table = only_table(document)
    assert table.ruling == "aligned"
    assert table.header == ["", "Q1", "Q2", "Q3"]
    assert table.body == [
        ["North", "12.5%", "13.0%", "11.2%"],
        ["South", "8.1%", "9.4%", "10.0%"],
        ["West", "n/a", "4.4%", "5.1%"],
    ]


def test_prose_with_figures_and_an_underlined_row_are_no_tables():
    document = pymupdf.open()
    page = document.new_page(width=612, height=792)
    lines = [
        "In 2021 revenue rose to $79,474 million from $70,372 million in 2020, an increase of 12.9%,",
        "driven by higher volume and pricing; operating profit was $11,162 million, up 11%.",
        "The Board approved a dividend of $4.30 per share on February 10, 2022, payable in June.",
    ]
    for number, line in enumerate(lines):
        put(page, 72, 100 + 13 * number, line)
    # One line of a label and a figure, underlined: a single row is no table.
    put(page, 72, 200, "Total revenues")
    put(page, 500, 200, "101,127", right=True)
    page.draw_line((72, 203), (500, 203))
    # Two columns of running text side by side.
    for number in range(6):
        put(page, 72, 300 + 12 * number, f"Left column sentence number {number} goes on here.")
        put(page, 330, 300 + 12 * number, f"Right column text {number + 1} continues it there.")
    with document:
        assert find_page_tables(document[0]) == []


@pytest.mark.parametrize(
    ("text", "figure"),
    [
        ("7,637", True),
        ("$7,637", True),
        ("(1,234)", True),
        ("—", True),
        ("12.5%", True),
        ("$", True),
        ("-3.2", True),
        ("n/a", True),
        ("5.3**", True),  # a footnote mark glued to the figure
        ("12(a)", True),
        ("Inventories", False),
        ("Q1", False),
        ("2018 Notes", False),
    ],
)
def test_what_counts_as_a_figure(text: str, figure: bool):
    assert is_figure(text) is figure


def test_a_statement_running_over_two_pages_is_one_group(tmp_path):
    from extract_thinker_pageindex import build_index
    from extract_thinker_pageindex.document.model import TableNode

    document = pymupdf.open()
    for number, title in enumerate(("Statement of Cash Flows", "Statement of Cash Flows (continued)")):
        page = document.new_page(width=612, height=792)
        put(page, 72, 60, "Company name, annual report")  # the running header of both pages
        put(page, 306 - pymupdf.get_text_length(title, fontname="helv", fontsize=11) / 2, 500, title, size=11)
        put(page, 420, 530, "2021", right=True)
        put(page, 520, 530, "2020", right=True)
        for row in range(6):
            y = 546 + 14 * row
            put(page, 72, y, f"Item {number * 6 + row + 1}")
            put(page, 420, y, f"{(row + 1) * 111:,}", right=True)
            put(page, 520, y, f"{(row + 2) * 97:,}", right=True)
    path = tmp_path / "statement.pdf"
    document.save(path)
    document.close()
    index = build_index(path, abstract=False)
    tables = [node for page in index.pages for node in page.nodes if isinstance(node, TableNode)]
    assert [table.continuation for table in tables] == [False, True]
    assert tables[0].group_id is not None and tables[0].group_id == tables[1].group_id
    assert tables[1].caption == "Statement of Cash Flows (continued)"
    # With tables off there is nothing to continue.
    without = build_index(path, abstract=False, tables=False)
    assert not any(isinstance(node, TableNode) for page in without.pages for node in page.nodes)


def small_statement(page: pymupdf.Page, top: float) -> None:
    put(page, 420, top, "2021", right=True)
    put(page, 520, top, "2020", right=True)
    for row, label in enumerate(("Revenue", "Cost of sales", "Gross profit")):
        put(page, 72, top + 14 * (row + 1), label)
        put(page, 420, top + 14 * (row + 1), f"{(row + 3) * 1234:,}", right=True)
        put(page, 520, top + 14 * (row + 1), f"{(row + 2) * 987:,}", right=True)


@pytest.mark.parametrize(
    ("lines", "caption"),
    [
        # A statement's title over its company's name, flush with the table: both, top first.
        (
            [(60, "ACME, INC."), (74, "CONSOLIDATED STATEMENTS OF INCOME")],
            "ACME, INC. — CONSOLIDATED STATEMENTS OF INCOME",
        ),
        # A running "Table of Contents" link far above names no table.
        ([(20, "Table of Contents")], None),
        # "Table 7" does, even a line away.
        ([(74, "Table 7: Results by year")], "Table 7: Results by year"),
    ],
)
def test_a_caption_is_read_from_the_lines_above(lines: list[tuple[float, str]], caption: str | None):
    document = pymupdf.open()
    page = document.new_page(width=612, height=792)
    for y, text in lines:
        put(page, 72, y, text)
    small_statement(page, 96)
    table = only_table(document)
    assert table.caption == caption


def test_a_title_line_over_the_columns_is_not_their_header():
    """A statement's title at the left and the company's name set right, over the columns, a blank line
    above the header: a title, not a header row of every column."""
    document = pymupdf.open()
    page = document.new_page(width=612, height=792)
    put(page, 72, 60, "Consolidated Statements of Income")
    put(page, 540, 60, "Acme Corporation and Subsidiaries", right=True)
    put(page, 512, 84, "Year ended December 31,", right=True)  # over both year columns
    small_statement(page, 96)
    table = only_table(document)
    assert table.header == ["", "Year ended December 31, 2021", "Year ended December 31, 2020"]
    assert all("Acme" not in cell for row in table.rows for cell in row)


def test_groups_of_rows_under_centred_labels_are_one_table_and_a_row_across_two_columns_joins_none():
    """Two groups of rows under "Males" and "Females" centred over the columns are one table; a note that
    runs across the gap between two columns in one row of many does not make them one column."""
    document = pymupdf.open()
    page = document.new_page(width=612, height=792)
    for x, text in ((300, "Dose"), (400, "Weight"), (500, "Gain")):
        put(page, x, 80, text, right=True)
    y = 96
    for group in ("Males", "Females"):
        put(page, 320, y, group)
        y += 16
        for row in range(5):
            put(page, 72, y, f"Group {row + 1}")
            for x, value in (
                (300, f"{(row + 1) * 250:,}"),
                (400, f"{5.1 + row / 10:.1f}"),
                (500, f"{row + 3}.0"),
            ):
                put(page, x, y, value, right=True)
            y += 12
        y += 6
    put(page, 72, y, "Overall")
    put(page, 330, y, "not measured in this group")  # across the gap between "Weight" and "Gain"
    put(page, 300, y, "900", right=True)
    table = only_table(document)
    assert table.header == ["", "Dose", "Weight", "Gain"]
    labels = [row[0] for row in table.body]
    assert (
        labels[0] == ""
        and "Males" in table.body[0]
        and "Females" in [cell for row in table.body for cell in row]
    )
    assert len(table.body) == 13  # two labels, ten rows, the last row
    assert table.body[-1][:2] == ["Overall", "900"]


def test_a_grid_drawn_without_its_outer_borders_keeps_its_first_and_last_columns():
    """Rules down only between the columns, rules across the whole width: the label column at the left and
    the last column at the right are cells too."""
    document = pymupdf.open()
    page = document.new_page(width=612, height=792)
    xs, ys = [72, 250, 330, 410, 490], [100, 120, 140, 160]
    # No rule down at the table's left and right edges.
    draw_rules(page, [(x, ys[0], x, ys[-1]) for x in xs[1:-1]] + [(xs[0], y, xs[-1], y) for y in ys])
    cells = [["", "2000", "2002", "2004"], ["Upper secondary", "15 455", "13 951", "12 068"]]
    cells.append(["Polytechnics", "20 527", "20 922", "22 083"])
    put_cells(page, xs, [(y + 13, row) for row, y in zip(cells, ys, strict=False)])
    table = only_table(document)
    assert table.ruling == "grid"
    assert table.rows == [["", "2000", "2002", "2004"], *cells[1:]]


def labelled_rows(
    page: pymupdf.Page, rows: list[tuple[float, str, tuple[str, ...]]], top: float = 100
) -> None:
    """A row of years over rows of a label at ``x`` and figures right-aligned at 300 and 380, one line
    apart."""
    put(page, 300, top, "2007", right=True)
    put(page, 380, top, "2009", right=True)
    put_rows(page, rows, top + 14)


def put_rows(page: pymupdf.Page, rows: list[tuple[float, str, tuple[str, ...]]], top: float) -> None:
    """Rows of a label at ``x`` and figures right-aligned at 300 and 380, 12 points apart from ``top``."""
    for number, (x, label, figures) in enumerate(rows):
        put(page, x, top + 12 * number, label)
        for text, right in zip(figures, (300, 380), strict=False):
            put(page, right, top + 12 * number, text, right=True)


def test_a_section_label_over_indented_rows_is_a_row_of_its_own():
    """ "Sex" over "Male" and "Female": the row under a short label would have fitted on its line, so it
    is no label's second line; nor is "Public" under "Type of degree-granting institution", whose rows
    under it stand at its indentation."""
    document = pymupdf.open()
    page = document.new_page(width=612, height=792)
    labelled_rows(
        page,
        [
            (72, "Sex", ()),
            (80, "Male", ("61,206", "60,721")),
            (80, "Female", ("63,512", "62,140")),
            (72, "Type of degree-granting institution", ()),
            (80, "Public", ("2,862", "2,962")),
            (80, "Private", ("3,001", "3,114")),
            (72, "Region", ()),
            (80, "Northeast", ("1,096", "1,320")),
        ],
    )
    table = only_table(document)
    assert [row[0] for row in table.body] == [
        "Sex",
        "Male",
        "Female",
        "Type of degree-granting institution",
        "Public",
        "Private",
        "Region",
        "Northeast",
    ]
    assert table.levels[table.header_rows :] == [0, 1, 1, 0, 1, 1, 0, 1]


def test_a_label_on_two_lines_is_one_whether_its_figures_stand_on_the_first_or_the_second():
    """A full first line runs on: under it indented with the figures ("American Indian/Alaska" over
    "Native  707"), or with the figures on the first line and its second line alone under it."""
    document = pymupdf.open()
    page = document.new_page(width=612, height=792)
    labelled_rows(
        page,
        [
            (72, "White, non-Hispanic", ("78,744", "79,333")),
            (72, "American Indian/Alaska", ("707", "730")),
            (80, "Native", ()),
            (72, "Asian", ("3,530", "3,690")),
            (72, "Hawaiian/Pacific Islander,", ()),
            (80, "not Hispanic", ("212", "230")),
            (72, "Two or more races", ("1,120", "1,207")),
        ],
    )
    table = only_table(document)
    assert table.body == [
        ["White, non-Hispanic", "78,744", "79,333"],
        ["American Indian/Alaska Native", "707", "730"],
        ["Asian", "3,530", "3,690"],
        ["Hawaiian/Pacific Islander, not Hispanic", "212", "230"],
        ["Two or more races", "1,120", "1,207"],
    ]


def test_a_group_label_over_a_column_of_years_is_not_joined_to_the_year():
    """ "Actual" alone over "1996" in a table whose first column is years: a figure under a text cell is a
    row of its own, not the cell's second line."""
    document = pymupdf.open()
    page = document.new_page(width=612, height=792)
    put(page, 72, 100, "Year")
    put(page, 200, 100, "Total", right=True)
    put(page, 280, 100, "Public", right=True)
    rows = [("Actual", None, None), ("1996", "3,051", "2,667"), ("1997", "3,138", "2,746")]
    rows += [("Projected", None, None), ("2011", "3,679", "3,246"), ("2012", "3,711", "3,283")]
    for number, (label, total, public) in enumerate(rows):
        y = 114 + 12 * number
        put(page, 72, y, label)
        if total and public:
            put(page, 200, y, total, right=True)
            put(page, 280, y, public, right=True)
    table = only_table(document)
    texts = [" ".join(cell for cell in row if cell) for row in table.rows]
    assert texts == [
        "Year Total Public",
        "Actual",
        "1996 3,051 2,667",
        "1997 3,138 2,746",
        "Projected",
        "2011 3,679 3,246",
        "2012 3,711 3,283",
    ]


def test_a_header_boxed_apart_from_the_body_is_one_table_and_a_cell_spans_where_its_rule_is_missing():
    """Two grids with the same columns, one right under the other (a double rule under the header), are
    one table; "Course Year" runs across the place of a column rule drawn only in the row under it, so
    it is one cell over two columns (its text in the first, nothing copied)."""
    document = pymupdf.open()
    page = document.new_page(width=612, height=792)
    xs = [72, 200, 300, 400]
    header = [(xs[0], y, xs[-1], y) for y in (100, 115, 130)] + [(x, 100, x, 130) for x in (72, 200, 400)]
    header.append((300, 115, 300, 130))  # not drawn across the first row
    # The body's grid, 3 points under the header's.
    body = [(xs[0], y, xs[-1], y) for y in (133, 148, 163)] + [(x, 133, x, 163) for x in xs]
    draw_rules(page, header + body)
    put(page, 270, 111, "Course Year")  # centred over the last two columns, across x = 300
    put_cells(page, xs, [(126, ["Illnesses", "1st year", "2nd year"])])
    put_cells(page, xs, [(144, ["Allergy", "23", "55"]), (159, ["Anxiety", "22", "42"])])
    table = only_table(document)
    assert table.ruling == "grid"
    assert table.rows == [
        ["", "Course Year", ""],
        ["Illnesses", "1st year", "2nd year"],
        ["Allergy", "23", "55"],
        ["Anxiety", "22", "42"],
    ]


def test_a_caption_and_a_unit_line_are_no_header_rows_and_a_header_printed_on_two_lines_is_one_row():
    """Over the table: a caption on two lines, "[In thousands]" centred over the whole table (over no run
    of its columns), then header cells printed on two lines side by side ("Public" over "schools"): the
    header is one row, and neither the caption's second line nor the unit line is in it."""
    document = pymupdf.open()
    page = document.new_page(width=612, height=792)
    put(page, 72, 60, "Table 2.")
    put(page, 110, 60, "Actual and projected numbers for enrollment in public and private schools, by year:")
    put(page, 110, 70, "fall 1996 through fall 2021")
    unit = "[In thousands]"
    put(page, 251 - pymupdf.get_text_length(unit, fontname="helv", fontsize=SIZE) / 2, 84, unit)
    for text, right in (("Public", 270), ("Private", 350), ("Two or", 430)):
        put(page, right, 98, text, right=True)
    put(page, 72, 108, "Year")
    for text, right in (("schools", 270), ("schools", 350), ("more", 430)):
        put(page, right, 108, text, right=True)
    body = [
        ("1996", "3,051", "2,667", "384"),
        ("1997", "3,138", "2,746", "391"),
        ("1998", "3,230", "2,830", "400"),
    ]
    for number, row in enumerate(body):
        put(page, 72, 124 + 12 * number, row[0])
        for text, right in zip(row[1:], (270, 350, 430), strict=True):
            put(page, right, 124 + 12 * number, text, right=True)
    table = only_table(document)
    assert table.header_rows == 1
    assert [cell for cell in table.header if cell] == [
        "Year",
        "Public schools",
        "Private schools",
        "Two or more",
    ]
    assert [[cell for cell in row if cell] for row in table.body] == [list(row) for row in body]
    assert not any("thousands" in cell or "fall" in cell for row in table.rows for cell in row)


def test_labels_of_groups_of_columns_stay_a_header_row_of_their_own():
    """ "Total" and "Public" each centred over a group of two columns, in the gap between them, stand apart:
    not lines of the cells under them, and each spans its pair."""
    document = pymupdf.open()
    page = document.new_page(width=612, height=792)
    rights = (200, 260, 340, 400)
    put(page, 230, 90, "Total", right=True)
    put(page, 370, 90, "Public", right=True)
    put(page, 72, 102, "Year")
    for text, right in zip(("All", "Boys", "All", "Boys"), rights, strict=True):
        put(page, right, 102, text, right=True)
    for number, year in enumerate(("1996", "1997", "1998")):
        put(page, 72, 116 + 12 * number, year)
        for right in rights:
            put(page, right, 116 + 12 * number, f"{number + 3},{right}", right=True)
    table = only_table(document)
    assert table.header_rows == 2
    assert "Total" in table.rows[0] and "Boys" in table.rows[1]
    # Each group's label heads both columns under it.
    assert table.header[-4:] == ["Total All", "Total Boys", "Public All", "Public Boys"]


def test_header_cells_of_several_lines_right_aligned_over_narrow_columns_are_one_header_row():
    """Column headers printed single-spaced on one to three lines, bottom-aligned and right-aligned over
    columns of narrow figures (so their middles stand left of the figures): one header row, each cell's
    lines joined; the figures under them are the body."""
    document = pymupdf.open()
    page = document.new_page(width=612, height=792)
    headers = {230: ["Percentage of", "desired", "coverage"], 320: ["Exclusion", "rate"], 410: ["Response"]}
    for right, lines in headers.items():
        for number, line in enumerate(reversed(lines)):
            put(page, right, 130 - 10 * number, line, right=True)
    put(page, 72, 130, "Education system")
    body = [("Australia", "100", "4", "95"), ("Austria", "100", "5", "98"), ("Azerbaijan", "92", "7", "100")]
    for number, row in enumerate(body):
        put(page, 72, 144 + 12 * number, row[0])
        for text, right in zip(row[1:], headers, strict=True):
            put(page, right, 144 + 12 * number, text, right=True)
    table = only_table(document)
    assert table.header_rows == 1
    assert table.header == [
        "Education system",
        "Percentage of desired coverage",
        "Exclusion rate",
        "Response",
    ]
    assert table.body == [list(row) for row in body]


def test_a_long_label_header_is_no_caption_and_a_lower_case_line_runs_on_however_short():
    """A header row whose label cell is long ("Scheduled Maturity (Dollars in millions)", seven words)
    over a section label is no paragraph the section label continues; "Total designated cash" over "flow
    hedges" is one label though its first line is not full (the next line starts in lower case)."""
    document = pymupdf.open()
    page = document.new_page(width=612, height=792)
    put(page, 72, 100, "Scheduled Maturity (Dollars and Yen in millions)")
    put(page, 330, 100, "Principal", right=True)
    put(page, 420, 100, "2018", right=True)
    put(page, 500, 100, "2017", right=True)
    rows = [
        (72, "Corporate Bond Payables:", ()),
        (80, "May 1, 2023", ("$ 500", "$ 498", "$ 497")),
        (80, "November 1, 2026", ("$ 1,000", "994", "993")),
        (72, "Total designated cash", ()),
        (72, "flow hedges", ("1,500", "1,492", "1,490")),
        (72, "Total long-term debt and other obligations", ("1,500", "1,492", "1,490")),
    ]
    for number, (x, label, figures) in enumerate(rows):
        y = 114 + 12 * number
        put(page, x, y, label)
        for text, right in zip(figures, (330, 420, 500), strict=False):
            put(page, right, y, text, right=True)
    table = only_table(document)
    assert table.header == ["Scheduled Maturity (Dollars and Yen in millions)", "Principal", "2018", "2017"]
    assert [row[0] for row in table.body] == [
        "Corporate Bond Payables:",
        "May 1, 2023",
        "November 1, 2026",
        "Total designated cash flow hedges",
        "Total long-term debt and other obligations",
    ]


def test_one_long_rule_touching_a_grid_adds_no_row_or_column():
    """A column divider running down the page along a grid's right edge, and a rule across the page on its
    top edge: one rule past the grid's outer rule opens no side, so the text above, below and beside the
    table stays out of it."""
    document = pymupdf.open()
    page = document.new_page(width=612, height=792)
    xs, ys = [150, 250, 330, 410], [300, 320, 340]
    long_rules = [(410, 60, 410, 780), (40, 300, 560, 300)]  # the divider (its right rule), its top rule
    draw_rules(
        page, long_rules + [(x, ys[0], x, ys[-1]) for x in xs[:-1]] + [(xs[0], y, xs[-1], y) for y in ys[1:]]
    )
    put(page, 60, 200, "Body text of the left column above the table.")
    put(page, 60, 500, "A later paragraph under the table.")
    put(page, 420, 313, "Side note")
    put_cells(page, xs, [(313, ["Name", "Q1", "Q2"]), (333, ["Alpha", "12", "34"])])
    table = only_table(document)
    assert table.ruling == "grid"
    assert table.rows == [["Name", "Q1", "Q2"], ["Alpha", "12", "34"]]


def centred_label_page(document: pymupdf.Document, first: str, second: str) -> pymupdf.Page:
    """A page with a row "Cases Charged 217 197", then a label on two lines 13 points apart with its
    figures (426, 365) set half-way between them."""
    page = document.new_page(width=612, height=792)
    labelled_rows(page, [(72, "Cases Charged", ("217", "197"))], top=100)
    put(page, 72, 140, first)
    put(page, 72, 153, second)
    put(page, 300, 146.5, "426", right=True)
    put(page, 380, 146.5, "365", right=True)
    return page


def test_a_label_on_two_lines_with_its_figures_centred_between_them_is_one_row():
    """ "Investigative Matters" over "Received by AUSAs", with the row's figures set half a line lower,
    between the two and overlapping both: one row with both lines as its label; rows a line apart are
    untouched."""
    document = pymupdf.open()
    page = centred_label_page(document, "Investigative Matters", "Received by AUSAs")
    put(page, 72, 170, "Defendants Charged")
    put(page, 300, 170, "290", right=True)
    put(page, 380, 170, "259", right=True)
    table = only_table(document)
    assert table.body == [
        ["Cases Charged", "217", "197"],
        ["Investigative Matters Received by AUSAs", "426", "365"],
        ["Defendants Charged", "290", "259"],
    ]
    assert table.bbox[3] >= 150  # the label's second line is inside the table: not repeated as a paragraph


LANDSCAPE_CELLS = [
    ["Name", "City", "Amount"],
    ["Lidstad", "Saint Paul", "60.00"],
    ["Strom", "St. Paul", "75.00"],
]


def landscape_source() -> pymupdf.Document:
    """A landscape page: a title line, a ruled table, a closing line."""
    source = pymupdf.open()
    landscape = source.new_page(width=792, height=612)
    xs, ys = [72, 250, 330, 410], [100, 120, 140, 160]
    put(landscape, 72, 80, "Major Contribution Report")
    draw_rules(landscape, [(x, ys[0], x, ys[-1]) for x in xs] + [(xs[0], y, xs[-1], y) for y in ys])
    put_cells(landscape, xs, [(y + 13, row) for row, y in zip(LANDSCAPE_CELLS, ys, strict=False)])
    put(landscape, 72, 200, "Contributions received after the period are reported next quarter.")
    return source


@pytest.mark.parametrize("rotation", [90, 180, 270])
def test_a_table_on_a_rotated_page_is_read_as_it_is_shown(rotation: int):
    """A landscape page placed on a sheet shown turned (rotation 90, 180 or 270): its words run down or
    backwards in the page's own coordinates, and are read upright, as on the landscape page; its box comes
    back in the page's own coordinates."""
    source = landscape_source()
    document = pymupdf.open()
    sheet = (
        document.new_page(width=612, height=792)
        if rotation != 180
        else document.new_page(width=792, height=612)
    )
    sheet.show_pdf_page(sheet.rect, source, 0, rotate=rotation)
    sheet.set_rotation(rotation)
    assert sheet.get_text("dict")["blocks"][0]["lines"][0]["dir"] != (1.0, 0.0)  # the words do not run right
    own = sheet.rect * sheet.derotation_matrix
    table = only_table(document)
    assert table.rows == LANDSCAPE_CELLS
    # The box is in the sheet's own (unturned) coordinates, within it.
    x0, y0, x1, y1 = table.bbox
    assert own.x0 - 1 <= x0 < x1 <= own.x1 + 1 and own.y0 - 1 <= y0 < y1 <= own.y1 + 1


def test_a_table_ruled_into_columns_only_is_read_line_by_line():
    """Rules down between the columns and across only round the header and the body: the body's lines of
    figures are its rows, not one row of cells holding every line; the header's cells printed on two
    lines stay one row."""
    document = pymupdf.open()
    page = document.new_page(width=612, height=792)
    xs, ys = [72, 250, 350, 450], [100, 128, 210]
    draw_rules(page, [(x, ys[0], x, ys[-1]) for x in xs] + [(xs[0], y, xs[-1], y) for y in ys])
    put_cells(page, xs, [(111, ["Segment", "Revenue", "Operating"]), (123, ["", "2023", "income"])])
    body = [
        ("Cloud", "1,250", "310"),
        ("Devices", "830", "(45)"),
        ("Services", "2,075", "512"),
        ("Other", "96", "0"),
    ]
    for number, (label, revenue, income) in enumerate(body):
        y = 142 + 14 * number
        put(page, 76, y, label)
        put(page, 346, y, revenue, right=True)
        put(page, 446, y, income, right=True)
    table = only_table(document)
    assert table.ruling == "grid"
    assert table.rows[0] == ["Segment", "Revenue 2023", "Operating income"]
    assert table.rows[1:] == [list(row) for row in body]


def test_a_label_wrapped_over_more_lines_than_its_figures_stays_one_ruled_row():
    """A fully ruled grid whose row holds a label on five lines beside three lines of figures: one row,
    its lines together, not cut between them."""
    document = pymupdf.open()
    page = document.new_page(width=612, height=792)
    xs, ys = [72, 250, 350, 450], [100, 124, 184, 206]
    draw_rules(page, [(x, ys[0], x, ys[-1]) for x in xs] + [(xs[0], y, xs[-1], y) for y in ys])
    put_cells(page, xs, [(114, ["Item"])])
    put(page, 346, 114, "2023", right=True)
    put(page, 446, 114, "2022", right=True)
    label = ["Property, plant and", "equipment, net of", "accumulated", "depreciation of", "$1.2 billion"]
    for number, text in enumerate(label):
        put(page, 76, 136 + 10 * number, text, size=8)
    for number, (this, last) in enumerate([("4,512", "4,220"), ("(1,210)", "(1,105)"), ("3,302", "3,115")]):
        put(page, 346, 136 + 16 * number, this, right=True)
        put(page, 446, 136 + 16 * number, last, right=True)
    put_cells(page, xs, [(198, ["Goodwill"])])
    put(page, 346, 198, "912", right=True)
    put(page, 446, 198, "912", right=True)
    table = only_table(document)
    assert table.rows == [
        ["Item", "2023", "2022"],
        [" ".join(label), "4,512 (1,210) 3,302", "4,220 (1,105) 3,115"],
        ["Goodwill", "912", "912"],
    ]


@pytest.mark.parametrize("turn", [90, 270])
def test_a_statement_printed_sideways_on_an_upright_page_is_read_turned_upright(turn: int):
    """A balance sheet aligned by whitespace, printed a quarter turned on a sheet that is not rotated (its
    words run up or down the page, the columns across it): read as it reads turned upright, cell for
    cell as upright, its box on the sheet."""
    upright = only_table(statement_page())
    document = pymupdf.open()
    sheet = document.new_page(width=792, height=612)
    with statement_page() as source:
        sheet.show_pdf_page(sheet.rect, source, 0, rotate=turn)
    assert sheet.rotation == 0
    assert {line["dir"] for block in sheet.get_text("dict")["blocks"] for line in block["lines"]} in (
        {(0.0, -1.0)},
        {(0.0, 1.0)},
    )
    table = only_table(document)
    assert table.rows == upright.rows and table.header == upright.header
    x0, y0, x1, y1 = table.bbox
    assert 0 <= x0 < x1 <= 792 and 0 <= y0 < y1 <= 612 and y1 - y0 > x1 - x0  # tall on the wide sheet


def test_a_note_printed_sideways_in_the_margin_does_not_turn_an_upright_table():
    """A grid of one- and two-digit figures (no word of three letters) and a note printed up the margin:
    most longer words stand on end, but most characters do not; the grid is read as it stands."""
    document = pymupdf.open()
    page = document.new_page(width=612, height=792)
    xs, ys = [100, 160, 220, 280, 340], [100, 120, 140, 160, 180]
    draw_rules(page, [(x, ys[0], x, ys[-1]) for x in xs] + [(xs[0], y, xs[-1], y) for y in ys])
    cells = [[str(row * 7 + column * 3) for column in range(4)] for row in range(4)]
    put_cells(page, xs, [(y + 13, row) for row, y in zip(cells, ys, strict=False)])
    note = "Confidential working draft prepared for discussion by the audit committee members only"
    page.insert_text((560, 750), note, fontsize=8, rotate=90)
    assert only_table(document).rows == cells


def test_a_page_turned_for_viewing_keeps_its_tables():
    """A page whose text is stored upright but which carries a rotation (turned for viewing, its text
    shown sideways) is read as stored: its table is found as drawn."""
    document = landscape_source()
    document[0].set_rotation(90)
    assert only_table(document).rows == LANDSCAPE_CELLS


def test_the_loader_and_the_strategy_keep_a_rotated_pages_reading_order(tmp_path):
    """On a rotated page shown upright, the title comes before the table and the closing line after it,
    in the loader's content and in the page index's nodes."""
    from extract_thinker_pageindex import DocumentLoaderPyMuPDF, build_index
    from extract_thinker_pageindex.document.model import ParagraphNode, TableNode

    source = landscape_source()
    document = pymupdf.open()
    sheet = document.new_page(width=612, height=792)
    sheet.show_pdf_page(sheet.rect, source, 0, rotate=90)
    sheet.set_rotation(90)
    path = tmp_path / "turned.pdf"
    document.save(path)
    content = DocumentLoaderPyMuPDF().load(str(path))[0]["content"]
    title, table, closing = (
        content.index(text) for text in ("Major Contribution", "| Name |", "Contributions")
    )
    assert title < table < closing
    nodes = [node for node in build_index(path).pages[0].nodes if isinstance(node, ParagraphNode | TableNode)]
    kinds = [node.type for node in nodes]
    assert kinds.index("table") > 0 and kinds.index("table") < len(kinds) - 1
    assert "Contributions" in (nodes[-1].content or "")


def test_the_label_column_is_measured_before_centred_label_lines_merge():
    """The widest label line is the first line of a centred two-line label: merging the two lines does not
    narrow the label column, so a short indented line under a short label stays a row."""
    document = pymupdf.open()
    page = centred_label_page(document, "Investigative Matters Received by all", "The AUSAs")
    rows = [
        (72, "Defendants Charged", ("290", "259")),
        (84, "Sentenced", ()),
        (72, "Other matters", ("12", "9")),
    ]
    put_rows(page, rows, 170)
    table = only_table(document)
    assert [row[0] for row in table.body] == [
        "Cases Charged",
        "Investigative Matters Received by all The AUSAs",
        "Defendants Charged",
        "Sentenced",
        "Other matters",
    ]


def test_a_running_headers_page_number_is_no_row_of_a_small_table_far_below_it():
    """A page whose running header ends in its number ("3 CITATIONS ... 2"), then lines of text that all
    end left of that number, then a small table: the number stands in no column of the table (a column
    is held by two rows at least), so neither it nor the text between is part of the table."""
    document = pymupdf.open()
    page = document.new_page(width=612, height=792)
    put(page, 72, 60, "3 CITATIONS")
    put(page, 540, 60, "2", right=True)
    lines = ["3 Citations", "It is also possible to cite works", "from a database, here we cite two."]
    lines += ["2.3 Figures and Tables", "Small images may be shown inline", "and tables within the text:"]
    for number, text in enumerate(lines):
        put(page, 72, 76 + 12 * number, text)
    top = 76 + 12 * len(lines)
    for number, (label, value) in enumerate([("This", "11"), ("That", "2"), ("Other", "37")]):
        put(page, 151, top + 12 * number, label)
        put(page, 213, top + 12 * number, value, right=True)
    table = only_table(document)
    assert table.rows == [["This", "11"], ["That", "2"], ["Other", "37"]]
    assert table.bbox[1] > top - 12


@pytest.mark.parametrize("where", ["total under", "balance over", "balance over a section label"])
def test_a_total_in_an_outer_column_of_its_own_right_by_its_rows_stays_in_the_table(where: str) -> None:
    """A staggered statement: the items' figures in one column, their total (or the opening balance) in an
    outer column of its own, right under (or over) them, a section's label between at most: no blank line
    and no text sets it apart, so the row is the table's, though no other row holds a figure in its
    column."""
    document = pymupdf.open()
    page = document.new_page(width=612, height=792)
    items = [("Rent", "1,200"), ("Utilities", "300"), ("Insurance", "450")]
    outer = ("Total expenses", "1,950") if where == "total under" else ("Balance, January 1", "10,000")
    rows: list[tuple[str, str]] = [*items, outer] if where == "total under" else [outer, *items]
    if where == "balance over a section label":
        rows.insert(1, ("Additions:", ""))
    for number, (label, value) in enumerate(rows):
        put(page, 72, 100 + 12 * number, label)
        if value:
            put(page, 400 if (label, value) == outer else 300, 100 + 12 * number, value, right=True)
    table = only_table(document)
    assert [" ".join(cell for cell in row if cell) for row in table.rows] == [
        f"{label} {value}".strip() for label, value in rows
    ]


def test_a_running_header_a_blank_line_over_a_table_is_no_row_of_it() -> None:
    """A running header ending in the page number at the right margin, a blank line over a statement: its
    number stands in no column of the table and the blank line sets it apart, so it is no row."""
    document = pymupdf.open()
    page = document.new_page(width=612, height=792)
    put(page, 72, 40, "Notes to Consolidated Financial Statements")
    put(page, 540, 40, "47", right=True)
    rows = [("Cash", "1,200", "1,100"), ("Receivables", "300", "280"), ("Inventories", "450", "470")]
    for number, (label, first, second) in enumerate(rows):
        put(page, 72, 64 + 12 * number, label)
        put(page, 300, 64 + 12 * number, first, right=True)
        put(page, 380, 64 + 12 * number, second, right=True)
    table = only_table(document)
    assert table.rows == [list(row) for row in rows]


def index_page() -> pymupdf.Document:
    """A page of a back-of-book index in three columns: each entry a term, a dot leader and its page
    numbers, right-aligned in its column, a long list running on to the next line (its comma ending the
    first); a letter over each group of entries."""
    document = pymupdf.open()
    page = document.new_page(width=612, height=792)
    terms = ["abstract", "acknowledgments", "address", "affiliation", "appendix", "author", "bibliography"]
    terms += ["caption", "citation", "copyright", "date", "figure", "footnote", "keywords", "language"]
    for column, left in enumerate((72, 234, 396)):
        y = 80.0
        put(page, left, y, "ABC"[column], size=11)
        y += 16
        for number, term in enumerate(terms):
            pages = [str(10 + 37 * number + 5 * column + step) for step in range(1 + number % 4)]
            put(page, left, y, f"\\{term} . . . . .")
            if len(pages) > 2:  # the list runs on
                put(page, left + 144, y, ", ".join(pages[:2]) + ",", right=True)
                y += 11
                put(page, left + 144, y, ", ".join(pages[2:]), right=True)
            else:
                put(page, left + 144, y, ", ".join(pages), right=True)
            y += 11
    return document


def test_an_index_page_holds_no_table() -> None:
    """The columns of an index line up row after row (terms at three lefts, page numbers at three
    rights), but most of the numbers it prints are lists of page numbers ("84, 85,"): no table."""
    with index_page() as document:
        page = document[0]
        assert "84, 85," in page.get_text()
        assert find_page_tables(page) == []


def test_a_table_whose_cells_hold_whole_lists_is_still_a_table() -> None:
    """A table of hyperparameters: each row's search space a list ("16, 32, 64"), as many lists as
    figures, but each printed whole, with no dot leader before it: no index's lists, a table."""
    document = pymupdf.open()
    page = document.new_page(width=612, height=792)
    put(page, 72, 80, "Hyperparameter")
    put(page, 330, 80, "Search space", right=True)
    put(page, 420, 80, "Chosen", right=True)
    rows = [(f"Parameter {n}", f"{n}, {2 * n}, {4 * n}", str(2 * n)) for n in range(1, 13)]
    for number, (label, space, chosen) in enumerate(rows):
        put(page, 72, 96 + 12 * number, label)
        put(page, 330, 96 + 12 * number, space, right=True)
        put(page, 420, 96 + 12 * number, chosen, right=True)
    table = only_table(document)
    assert table.rows[0] == ["Hyperparameter", "Search space", "Chosen"]
    assert table.rows[1:] == [list(row) for row in rows]


def test_a_table_with_lists_in_a_few_cells_is_still_a_table() -> None:
    """Cells holding a list of numbers ("0, 0" sampling factors) among many figures: a table, not an
    index (the lists are far from most of the numbers it prints)."""
    document = pymupdf.open()
    page = document.new_page(width=612, height=792)
    put(page, 72, 80, "Component")
    for x, header in ((260, "Width"), (340, "Height"), (420, "Factors"), (500, "Offset")):
        put(page, x, 80, header, right=True)
    rows = [(f"Plane {n}", str(8 * n), str(6 * n), "0, 0", f"{n}.5") for n in range(1, 13)]
    for number, (label, *cells) in enumerate(rows):
        put(page, 72, 96 + 12 * number, label)
        for x, text in zip((260, 340, 420, 500), cells, strict=True):
            put(page, x, 96 + 12 * number, text, right=True)
    table = only_table(document)
    assert table.rows[1:] == [list(row) for row in rows]
    assert table.rows[0] == ["Component", "Width", "Height", "Factors", "Offset"]


def test_a_grid_drawn_as_thousands_of_cell_sides_is_one_table() -> None:
    """A form of small boxes each stroked on its own (graph paper, a grid of 40 rows by 30 columns: 2,430
    short rules, many of them ending on the 32-point bins the rules are filed in) is one grid, its
    words in their cells (its first and last rows numbered and lettered, the rows between empty)."""
    document = pymupdf.open()
    page = document.new_page(width=612, height=792)
    left, top, pitch, rows, columns = 64.0, 64.0, 16.0, 40, 30
    sides = []
    for row in range(rows + 1):
        for column in range(columns):
            y, x = top + row * pitch, left + column * pitch
            sides.append((x, y, x + pitch, y))
    for column in range(columns + 1):
        for row in range(rows):
            x, y = left + column * pitch, top + row * pitch
            sides.append((x, y, x, y + pitch))
    shape = page.new_shape()
    for x0, y0, x1, y1 in sides:  # each side a path of its own
        shape.draw_line((x0, y0), (x1, y1))
        shape.finish(color=(0, 0, 0), width=0.6)
    shape.commit()
    for column in range(columns):  # the first and the last row numbered, cell by cell
        put(page, left + 2 + column * pitch, top + 11, str(column), size=6)
        put(page, left + 2 + column * pitch, top + (rows - 1) * pitch + 11, chr(65 + column % 26), size=6)
    table = only_table(document)
    # Its empty rows are left out; every column is held.
    assert table.rows == [
        [str(column) for column in range(columns)],
        [chr(65 + column % 26) for column in range(columns)],
    ]
    assert table.bbox == pytest.approx((left, top, left + columns * pitch, top + rows * pitch), abs=1)


def test_rules_are_grouped_as_every_pair_that_meets_would_group_them() -> None:
    """Rules grouped by the bins they are filed in form the grids that testing every pair of rules
    across and down forms: rules of every length, meeting within the slack on either side of the bins'
    edges."""
    import random

    from extract_thinker_pageindex.tables.grid import Rule, group_rules

    generator = random.Random(7)
    slack = 2.0

    def near_edge() -> float:
        return generator.choice([0.0, 32.0, 64.0, 96.0, 128.0]) + generator.uniform(-3.0, 3.0)

    for _ in range(30):
        across, down = [], []
        for _ in range(generator.randint(2, 25)):
            start = near_edge()
            across.append(Rule(True, near_edge(), start, start + generator.choice([1.0, 20.0, 70.0, 140.0])))
        for _ in range(generator.randint(2, 25)):
            start = near_edge()
            down.append(Rule(False, near_edge(), start, start + generator.choice([1.0, 20.0, 70.0, 140.0])))
        # The components of the graph of every pair that meets, as sets of rules.
        rules = across + down
        component = list(range(len(rules)))
        for a, rule_a in enumerate(across):
            for d, rule_d in enumerate(down, start=len(across)):
                if (
                    rule_a.start - slack <= rule_d.at <= rule_a.end + slack
                    and rule_d.start - slack <= rule_a.at <= rule_d.end + slack
                ):
                    old, new = component[d], component[a]
                    component = [new if value == old else value for value in component]
        expected = sorted(
            sorted(id(rules[number]) for number in range(len(rules)) if component[number] == value)
            for value in set(component)
        )
        found = sorted(sorted(id(rule) for rule in grid.rules) for grid in group_rules(across, down, slack))
        # group_rules keeps the components that make a grid (two rows, three columns): each is one of
        # the pairs' components.
        assert all(members in expected for members in found)
        grids = [group for group in expected if _makes_grid([rule for rule in rules if id(rule) in group])]
        assert found == sorted(grids)


def _makes_grid(members: list) -> bool:
    from extract_thinker_pageindex.tables.grid import merge_positions

    rows = merge_positions([rule.at for rule in members if rule.horizontal], 2.0)
    columns = merge_positions([rule.at for rule in members if not rule.horizontal], 2.0)
    return len(rows) >= 2 and len(columns) >= 3


def test_rules_of_broken_coordinates_are_grouped_without_counting_out_to_them() -> None:
    """A rule whose coordinates are absurd (1e30, infinite, not a number) is filed in the outermost bins:
    grouping stays quick, and a rule that meets the others still joins them."""
    from extract_thinker_pageindex.tables.grid import Rule, group_rules

    across = [Rule(True, 10.0, -1e30, 1e30), Rule(True, 90.0, 0.0, 200.0), Rule(True, float("nan"), 0.0, 9.0)]
    down = [Rule(False, x, 0.0, 100.0) for x in (20.0, 80.0, 150.0)] + [Rule(False, float("inf"), 0.0, 1.0)]
    (grid,) = group_rules(across, down, 2.0)
    assert across[0] in grid.rules and across[1] in grid.rules and down[0] in grid.rules
    assert across[2] not in grid.rules and down[3] not in grid.rules
    assert {10.0, 90.0} <= set(grid.rows) and {20.0, 80.0, 150.0} <= set(grid.columns)
