"""The view of a query's matches, in a real headless Chromium: it opens at the best match, a jump to a
match leaves the page's label in full view, and the snippets are plain text; on a PyMuPDF report, a
Markdown source and a FinanceBench filing."""

from __future__ import annotations

import itertools
import re
import shutil
from pathlib import Path
from typing import Any

import pymupdf
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from extract_thinker_pageindex import index_document, load_index, view_index
from extract_thinker_pageindex.document.render import page_markdown
from extract_thinker_pageindex.view.matches import run_query
from extract_thinker_pageindex.view.snippets import plain_snippet
from pdf_support import prose
from test_view import opened

QUERY = "deferred tariffs"
#: The report's pages holding the query's words (0-based): page 9 more often, so it ranks first.
MATCHED = {2: 1, 8: 3}
VIEWPORT = {"width": 1400, "height": 900}

# Where an element is on the screen, and where the side panel (fixed on the left) ends.
PLACE = """(element) => {
  const r = element.getBoundingClientRect();
  return {top: r.top, bottom: r.bottom, left: r.left,
          side: document.getElementById("side").getBoundingClientRect().right};
}"""


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 12-page report (PDF text strategy) whose query words stand low on two pages, under a heading
    that the paragraph after it repeats ("Deferred Tariffs" / "Deferred tariffs are recorded...")."""
    folder = tmp_path_factory.mktemp("report")
    pdf = pymupdf.open()
    for number in range(12):
        page = pdf.new_page()
        if number == 0:
            page.insert_text((72, 90), "Annual Report", fontsize=20, fontname="hebo")
        y = 120.0 if number == 0 else 80.0
        for block in range(4):
            rect = pymupdf.Rect(72, y, 540, y + 110)
            page.insert_textbox(rect, prose(number + block, 4), fontsize=10, fontname="helv")
            y += 130
        if number in MATCHED:
            page.insert_text((72, 640), "Deferred Tariffs", fontsize=14, fontname="hebo")
            text = "Deferred tariffs are recorded when the regulator approves them. " * MATCHED[number]
            page.insert_textbox(pymupdf.Rect(72, 652, 540, 760), text, fontsize=10, fontname="helv")
    pdf.save(folder / "report.pdf")
    pdf.close()
    index_document(folder / "report.pdf")
    return folder / "report.pageindex"


@pytest.fixture(scope="module")
def report_view(report: Path) -> Path:
    return view_index(report, query=QUERY)


def place(tab: Any, selector: str) -> dict[str, Any]:
    return tab.locator(selector).first.evaluate(PLACE)


def in_view(where: dict[str, Any]) -> bool:
    """Whole on the screen, none of it under the top edge, the bottom edge or the side panel."""
    return where["top"] >= 0 and where["bottom"] <= VIEWPORT["height"] and where["left"] >= where["side"]


# -- where the view opens -------------------------------------------------------------------------------


def test_the_report_is_what_the_tests_below_assume(report: Path) -> None:
    """The query's words are below the fold of their pages, and page 9 is the best match: so opening at
    the best match means scrolling down, and then down the page to its words."""
    document = load_index(report)
    markdown = page_markdown(document.pages[8])
    assert "## Deferred Tariffs\n\nDeferred tariffs are recorded" in markdown
    with run_query(document, QUERY, max_pages=3) as result:
        assert [match.page_index for match in result.matches][:2] == [8, 2]


def test_a_view_with_a_query_opens_at_its_best_match(browser: Any, report_view: Path) -> None:
    with opened(browser, report_view) as tab:
        # The best match's page, its label readable at the top, its first marked word on the screen.
        assert tab.evaluate("scrollY") > 7 * VIEWPORT["height"]
        label = place(tab, "#page-9 .page-head")
        assert in_view(label), label
        assert tab.locator("#page-9 .page-head").inner_text().startswith("Page 9 match 1")
        hit = place(tab, "#page-9 .hit")
        assert in_view(hit) and hit["top"] > label["bottom"], hit
        # The move is not written in the address: a reload opens at the best match again.
        assert tab.evaluate("location.hash") == ""


def test_a_page_named_in_the_address_wins_over_the_best_match(browser: Any, report_view: Path) -> None:
    with opened(browser, report_view) as tab:
        tab.goto("about:blank")
        tab.goto(report_view.as_uri() + "#page-5")
        tab.wait_for_load_state("load")
        label = place(tab, "#page-5 .page-head")
        assert in_view(label) and label["top"] < 40, label
        assert place(tab, "#page-9 .page-head")["top"] > VIEWPORT["height"]


def test_a_view_without_a_query_opens_at_the_first_page(browser: Any, report: Path, tmp_path: Path) -> None:
    with opened(browser, view_index(report, output=tmp_path / "plain.html")) as tab:
        assert tab.evaluate("scrollY") == 0
        assert in_view(place(tab, "#page-1 .page-head"))


def test_a_text_view_opens_at_its_first_marked_word(browser: Any, tmp_path: Path) -> None:
    """A Markdown source is one long page of text blocks: the view opens at the first marked word, far
    down it, with the page's label still at the top."""
    filler = "\n\n".join(prose(number, 3) for number in range(40))
    source = tmp_path / "policy.md"
    source.write_text(f"# Policy\n\n{filler}\n\n## Tariffs\n\nTariffs are set each year.\n", encoding="utf-8")
    index_document(source)
    with opened(browser, view_index(tmp_path / "policy.pageindex", query="tariffs")) as tab:
        assert tab.evaluate("scrollY") > VIEWPORT["height"]
        mark = place(tab, "#page-1 .sheet.text mark")
        assert in_view(mark), mark
        assert in_view(place(tab, "#page-1 .page-head"))


# -- jumps to a match -----------------------------------------------------------------------------------


def test_after_a_jump_to_a_match_its_label_is_in_full_view(browser: Any, report_view: Path) -> None:
    with opened(browser, report_view) as tab:
        links = tab.locator("#matches li.match a")
        assert links.count() == 5  # the default max_pages
        for round_trip in range(2):
            for i in range(links.count()):
                tab.evaluate("window.scrollTo(0, 0)" if round_trip else "window.scrollTo(0, 1e6)")
                links.nth(i).click()
                number = int(links.nth(i).get_attribute("data-goto") or "0")
                assert tab.evaluate("location.hash") == f"#page-{number}"
                # Pages near it get their boxes drawn after the jump: the label must stay in view.
                tab.wait_for_timeout(200)
                label = place(tab, f"#page-{number} .page-head")
                assert in_view(label), (number, label)
                if number - 1 in MATCHED:
                    assert in_view(place(tab, f"#page-{number} .hit")), number


def test_the_label_lets_clicks_through_to_the_boxes_under_it(browser: Any, report_view: Path) -> None:
    with opened(browser, report_view) as tab:
        tab.locator("#matches li.match a").first.click()  # page 9's label now stands over its picture
        label = tab.locator("#page-9 .page-head").bounding_box()
        assert label is not None
        under = tab.evaluate(
            "([x, y]) => document.elementFromPoint(x, y).closest('section.page').id",
            [label["x"] + 5, label["y"] + label["height"] / 2],
        )
        assert under == "page-9"
        assert tab.evaluate(
            "([x, y]) => !document.elementFromPoint(x, y).closest('.page-head')",
            [label["x"] + 5, label["y"] + label["height"] / 2],
        )


# -- snippets ------------------------------------------------------------------------------------------


def test_the_report_snippets_are_plain_and_say_the_heading_once(browser: Any, report_view: Path) -> None:
    with opened(browser, report_view) as tab:
        snippets = [
            tab.locator(".snippet").nth(i).inner_text() for i in range(tab.locator(".snippet").count())
        ]
        assert len(snippets) == 5  # the default max_pages
        for snippet in snippets:
            assert "#" not in snippet and "|" not in snippet and "\n" not in snippet
            assert not re.search(r"deferred tariffs\W+deferred tariffs", snippet, re.IGNORECASE), snippet
        assert "Deferred tariffs are recorded when the regulator" in snippets[0]
        # Page 11 is found by its section's title alone: the titles are shown apart.
        assert snippets[2] == "Annual Report · Deferred Tariffs"
        assert tab.locator("#matches li.match").nth(0).locator("mark").count() >= 2


# Short enough for the snippet's 24 words to hold every kind of block.
MARKDOWN = """## Note 11 – Income Taxes

Note 11 – Income Taxes are on **pretax income**, see
[rates](#rates).

| Year | Income taxes |
| --- | ---: |
| 2018 | 1,200 |

- taxes in *cash*
  - `income`
"""


def test_markdown_snippets_show_no_marks(tmp_path: Path) -> None:
    source = tmp_path / "notes.md"
    source.write_text(MARKDOWN, encoding="utf-8")
    index_document(source)
    html = view_index(tmp_path / "notes.pageindex", query="income taxes", max_pages=1)
    snippet = html.read_text(encoding="utf-8").split('<div class="snippet">', 1)[1].split("</div>", 1)[0]
    text = re.sub(r"</?mark>", "", snippet)
    for mark in ("#", "|", "**", "`", "](", "---", "- income", "&gt;"):
        assert mark not in text, (mark, text)
    assert text == (
        "Note 11 – Income Taxes are on pretax income, see rates. Year Income taxes · 2018 1,200 · "
        "taxes in cash…"
    )
    assert "<mark>Income</mark> <mark>Taxes</mark>" in snippet


@pytest.mark.parametrize(
    ("fragment", "plain"),
    [
        ("###### Note 6 – [Income] [Taxes]\n\nThe components", "Note 6 – [Income] [Taxes] · The components"),
        ("## [Open] [Value]\n\n[Open] [Value] agreements are…", "[Open] [Value] agreements are…"),
        ("PART IV\n\n# PART IV\n\n## ITEM 15. EXHIBITS", "PART IV · ITEM 15. EXHIBITS"),
        ("…in detail.\n\n## Tariffs\n\nTariffs are set", "…in detail. Tariffs are set"),
        ("…[Total] | 5 | 6 |\n| Net | 7 | 8 |…", "…[Total] 5 6 · Net 7 8 …"),
        ("| a \\| b | c |\n|:---|---:|\n| d | e |", "a | b c · d e"),
        ("- one\n  - two\n> - quoted", "one · two · quoted"),
        (
            "<sup>note</sup> A **bold** and *slanted* `code` [link](http://x.org/a)",
            "A bold and slanted code link",
        ),
        ("Revenue* rose 3*4 and [1] stays", "Revenue* rose 3*4 and [1] stays"),
        ("- paid in *cash…", "paid in cash…"),  # an emphasis the extract cut in two
        ("Costs - see below ........ 12", "Costs - see below … 12"),
        ("```\nx = 1\n```", "x = 1"),
        ("A paragraph\nwrapped in the source", "A paragraph wrapped in the source"),
    ],
)
def test_plain_snippet(fragment: str, plain: str) -> None:
    assert plain_snippet(fragment) == plain


def test_section_titles_are_kept_apart() -> None:
    titles = ["Notes to the Statements", "Note 6 – Income Taxes"]
    assert plain_snippet("Notes to the Statements\nNote 6 – [Income] [Taxes]", titles=titles) == (
        "Notes to the Statements · Note 6 – [Income] [Taxes]"
    )
    assert plain_snippet("…the Statements\nNote 6 – [Income]…", titles=titles) == (
        "…the Statements · Note 6 – [Income]…"
    )


_LINE = st.lists(
    st.sampled_from(["#", "##", "-", "*", ">", "|", "**", "`", "[", "]", "(", ")", "…", "word", "Note", "6"]),
    max_size=8,
).map(" ".join)


# Timing is no part of the property: a machine busy with other tests must not fail it.
@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_LINE, max_size=8).map("\n".join))
def test_plain_snippet_is_one_line_of_the_fragment_s_own_words(fragment: str) -> None:
    plain = plain_snippet(fragment)
    assert "\n" not in plain and "**" not in plain and "`" not in plain
    assert plain == plain.strip()
    words = re.findall(r"\w+", fragment)
    for word in re.findall(r"\w+", plain):
        assert word in words


# -- a FinanceBench filing ------------------------------------------------------------------------------


@pytest.mark.eval
def test_a_filing_view_reports_progress_opens_at_its_match_and_shows_plain_snippets(
    browser: Any, eval_dir: Path, tmp_path: Path
) -> None:
    """Boeing's 136-page 10-K, the filing of the issue: progress page by page, the view at its best match,
    snippets without Markdown, and no heading said twice where its paragraph repeats it."""
    source = eval_dir / "pdfs" / "BOEING_2018_10K.pdf"
    shutil.copy(source, tmp_path / source.name)
    index_document(tmp_path / source.name, strategy="text")
    index = tmp_path / "BOEING_2018_10K.pageindex"
    document = load_index(index)
    calls: list[tuple[int, int]] = []
    html = view_index(
        index, query="income taxes", dpi=24, progress=lambda done, total: calls.append((done, total))
    )
    assert calls == [(done, 136) for done in range(137)]

    with opened(browser, html) as tab:
        best = int(tab.locator("#matches li.match a").first.get_attribute("data-goto") or "0")
        assert in_view(place(tab, f"#page-{best} .page-head"))
        assert in_view(place(tab, f"#page-{best} .hit"))
        snippets = tab.locator(".snippet")
        assert snippets.count() == 5  # the default max_pages
        for i in range(3):
            assert not {"#", "|", "*"} & set(snippets.nth(i).inner_text())

    # Headings that the paragraph after them opens by repeating ("Program Accounting" / "Program
    # accounting requires..."): searched for, their page's snippet says them once.
    repeated = []
    for page in document.pages:
        nodes = [node for node in page.nodes if node.type in ("heading", "paragraph")]
        for heading, paragraph in itertools.pairwise(nodes):
            words = re.findall(r"\w+", str(getattr(heading, "content", "")).casefold())
            following = re.findall(r"\w+", str(getattr(paragraph, "content", "")).casefold())
            if heading.type == "heading" and len(words) >= 2 and following[: len(words)] == words:
                repeated.append((page.index, " ".join(words)))
    assert len(repeated) >= 5
    checked = 0
    for page_index, title in repeated:
        with run_query(document, title, max_pages=5) as result:
            for match in result.matches:
                if match.page_index != page_index:
                    continue
                text = re.sub(r"[\[\]]", "", match.snippet).casefold()
                assert not re.search(rf"{re.escape(title)}\W+{re.escape(title)}", text), match.snippet
                checked += 1
    assert checked >= 5
