"""Pages a question names ("the figure on page 17", "slide 5", "Table 3") are candidates, on both backends;
printed page numbers are read in sequence; instructions on how to write an answer carry no weight."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from extract_thinker_pageindex import DocumentLoaderPyMuPDF, DocumentLoaderRAG
from extract_thinker_pageindex.retrieval.page_text import join_split_words
from extract_thinker_pageindex.retrieval.query import analyse_query
from extract_thinker_pageindex.retrieval.ranking import Ranking
from extract_thinker_pageindex.retrieval.references import (
    Reference,
    caption_pages,
    find_references,
    pages_printed,
    printed_numbers,
)


def body(topic: str, words: int = 60) -> str:
    filler = ["river", "stone", "harbor", "meadow", "lantern", "orchard", "valley", "summit", "canal", "fern"]
    return f"{topic}\n" + " ".join(filler[(len(topic) + n) % len(filler)] for n in range(words))


def edges(pages: list[str]) -> list[tuple[int, str, str]]:
    return [(number, text[:240], text[-240:]) for number, text in enumerate(pages, start=1)]


# -- reading the question ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "pages", "labels"),
    [
        ("What is the central component of the figure at page 17?", (17,), ()),
        ("How many people are there in  Page 5?", (5,), ()),
        ("What does slide 3 say?", (3,), ()),
        ("Compare p. 12 with pages 4-6", (12, 4, 5, 6), ()),
        ("Summarise pages 4 and 9", (4, 9), ()),
        ("Which model is best in Table 2?", (), (("table", "2"),)),
        ("Describe Fig. 3b and figure 4", (), (("figure", "3b"), ("figure", "4"))),
        ("What is the total revenue in 2023?", (), ()),
        ("How many pages does the report have?", (), ()),
    ],
)
def test_a_question_names_pages_and_labels(question: str, pages: tuple[int, ...], labels: tuple):
    reference = find_references(question)
    assert reference.pages == pages
    assert reference.labels == labels
    assert bool(reference) is bool(pages or labels)


# -- printed page numbers ------------------------------------------------------------------------------------


def test_printed_numbers_count_from_after_the_front_matter():
    # A cover and a contents page, then pages printing 1, 2, 3... at their foot.
    pages = [body("Annual report"), body("Contents")]
    pages += [body(f"Chapter {n}") + f"\n{n}" for n in range(1, 9)]
    printed = printed_numbers(edges(pages))
    assert printed == {position: {position - 2} for position in range(3, 11)}
    assert pages_printed(Reference(pages=(5,)), edges(pages), len(pages)) == {7}


def test_a_spread_prints_two_numbers_on_one_page():
    pages = [body("Cover")]
    pages += [
        f"{body('Left')}\n{2 * n}  Graduate Studies & Learning\nGraduate Studies & Learning  {2 * n + 1}"
        for n in range(1, 7)
    ]
    printed = printed_numbers(edges(pages))
    assert printed[3] == {4, 5}
    assert pages_printed(Reference(pages=(5,)), edges(pages), len(pages)) == {3}


def test_numbers_that_run_in_no_sequence_are_not_page_numbers():
    # Amounts and years at the foot of pages, unrelated from page to page: no page prints a number,
    # so "page 4" is the file's fourth page.
    pages = [body(f"Note {n}") + f"\n{value}" for n, value in enumerate([830, 12, 2021, 455, 61, 1999], 1)]
    assert printed_numbers(edges(pages)) == {}
    assert pages_printed(Reference(pages=(4,)), edges(pages), len(pages)) == {4}


def test_a_number_no_page_prints_is_the_files_page():
    # An article printing its journal's page numbers (488, 489...): "page 3" is its third page.
    pages = [body(f"Section {n}") + f"\n{487 + n}\nDownloaded from the publisher" for n in range(1, 7)]
    assert printed_numbers(edges(pages))[1] == {488}
    assert pages_printed(Reference(pages=(3,)), edges(pages), len(pages)) == {3}
    assert pages_printed(Reference(pages=(40,)), edges(pages), len(pages)) == set()


@pytest.mark.parametrize(
    "line", ["Page 4", "- 4 -", "4 of 12", "4/12", "Cloud | 4", "4  Annual Report", "Annual Report  4"]
)
def test_the_forms_a_page_number_is_printed_in(line: str):
    pages = [body(f"Part {n}") + "\n" + line.replace("4", str(n), 1) for n in range(2, 7)]
    assert printed_numbers(edges(pages))[3] == {4}


def test_a_caption_is_a_line_that_starts_with_the_label():
    bodies = {
        1: "As Table 2 shows, the baseline is weak.",
        2: "Results\nTable 2: Accuracy of every model\nmodel 81.2",
        3: "Figure 2. The pipeline\nTab. 3 lists the rest",
        4: "Table 21: Another table",
    }
    assert caption_pages([("table", "2")], bodies) == {2}
    assert caption_pages([("figure", "2")], bodies) == {3}
    assert caption_pages([("table", "3")], bodies) == {3}
    assert caption_pages([], bodies) == set()


# -- searching, on both backends ----------------------------------------------------------------------------


def numbered_document() -> list[str]:
    """Twelve pages: a cover and a contents page, then printed pages 1-10; each names a diagram."""
    pages = [body("Company overview diagram"), body("Contents diagram")]
    for number in range(1, 11):
        central = number in (2, 3)
        topic = "The central component of the diagram, its central component" if central else "Diagram"
        pages.append(body(f"{topic} section {chr(64 + number)}") + f"\nProduct guide  {number}")
    return pages


def top(retriever, query: str, count: int = 3) -> list[int]:
    return [match.page_number for match in retriever.search("guide", query, max_pages=count)]


def test_page_n_finds_the_page_that_prints_n(make_retriever):
    retriever = make_retriever()
    retriever.index("guide", numbered_document())
    assert top(retriever, "What is the central component of the diagram at page 7?")[0] == 9
    assert top(retriever, "What does slide 7 show?")[0] == 9  # no query word on any page but the number

    plain = make_retriever(ranking=Ranking(references=False))
    plain.index("guide", numbered_document())
    assert 9 not in top(plain, "What is the central component of the diagram at page 7?", 1)


def test_without_printed_numbers_page_n_is_the_files_nth_page(make_retriever):
    retriever = make_retriever()
    retriever.index("guide", [body(f"Architecture diagram section {chr(64 + n)}") for n in range(1, 9)])
    assert top(retriever, "the diagram on page 6")[0] == 6


def test_a_named_table_raises_its_caption_page_over_pages_that_cite_it(make_retriever):
    pages = [
        body("Introduction. The best model has the best accuracy, as Table 2 shows."),
        body("Method"),
        body("Results: the accuracy of each model") + "\nTable 2: Scores\nalpha 81.2\nbeta 79.4",
        body("Discussion. Which model is best? The accuracy of the best model is in Table 2."),
    ]
    question = "Which model has the best accuracy in Table 2?"
    retriever = make_retriever()
    retriever.index("guide", pages)
    found = top(retriever, question, 4)
    assert found.index(3) < found.index(4)  # the caption page before the page that cites the table

    plain = make_retriever(ranking=Ranking(references=False))
    plain.index("guide", pages)
    found = top(plain, question, 4)
    assert found.index(3) > found.index(4)


def test_a_page_reference_from_a_pdf_through_the_loader(tmp_path: Path):
    path = tmp_path / "guide.pdf"
    with pymupdf.open() as document:
        for number in range(1, 9):
            page = document.new_page()
            page.insert_text((72, 100), "Architecture diagram and its components")
            if number > 2:  # a cover and a contents page carry no number
                page.insert_text((300, 800), str(number - 2))
        document.save(path)
    query = "the components of the diagram on page 4"
    with DocumentLoaderRAG(DocumentLoaderPyMuPDF(), query, max_pages=1) as rag:
        pages = rag.load(str(path))
    assert [page["page_number"] for page in pages] == [6]


# -- instructions on how to write the answer ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "words"),
    [
        (
            "How many green rectangles in the first figure? Please list the numbers in the list format by "
            'descending order. e.g., ["2","1"]',
            ["green", "rectangles", "first", "figure"],
        ),
        ("What is the percentage gap? Please write the answer into float format.", ["percentage", "gap"]),
        ("How many items in total? Write down the answer in int format.", ["items", "total"]),
        (
            "Write the filling id and case number in this document?",
            ["write", "filling", "id", "case", "number", "document"],
        ),
    ],
)
def test_how_to_write_the_answer_carries_no_weight(question: str, words: list[str]):
    assert analyse_query(question).words == words
    assert "format" in analyse_query(question, instruction_words=False).words or "format" not in question


def test_a_query_of_nothing_but_answer_instructions_still_searches_them():
    assert analyse_query("Please write the answer in int format").words


# -- letter-spaced words, joined for the index only ----------------------------------------------------------


def test_a_word_broken_before_its_last_letter_is_joined_where_the_document_prints_it_whole():
    pages = [
        "Consolidated Balance Shee t\nTotal assets 1,200",
        "The balance sheet shows the sheet of accounts; a sheet. " * 3,
        "SUMMARY BALANCE SHEE T\nthe ne t income, net of tax; net, net and net again, net",
        "Regulation S-K applies, as regulation and regulation require; America N",
        "P A C I F I C  O C E A N, on the Pacific coast",
        "The M x N x K matrix",
    ]
    joined = join_split_words(pages)
    assert joined[0] == "Consolidated Balance Sheet\nTotal assets 1,200"
    assert joined[2] == "SUMMARY BALANCE SHEET\nthe net income, net of tax; net, net and net again, net"
    assert joined[3] == pages[3]  # "regulation" is a word of its own; "America N" mixes cases
    assert joined[4] == "PACIFIC  O C E A N, on the Pacific coast"  # "ocean" is printed nowhere whole
    assert joined[5] == pages[5]
    assert join_split_words(["no breaks here", ""]) == ["no breaks here", ""]


def test_a_letter_spaced_title_is_found_but_the_page_keeps_its_text(make_retriever, tmp_path: Path):
    path = tmp_path / "statements.pdf"
    with pymupdf.open() as document:
        for number in range(6):
            page = document.new_page()
            if number == 4:
                # Drawn letter by letter with a gap before the last one, as designers space titles.
                x = 72.0
                for char in "Balance Shee":
                    page.insert_text((x, 72), char, fontsize=14)
                    x += pymupdf.get_text_length(char, fontsize=14)
                page.insert_text((x + 6, 72), "t", fontsize=14)
                page.insert_text((72, 110), "Total assets 1,200\nTotal liabilities 700")
            else:
                page.insert_text((72, 72), f"Note {number}: the balance sheet and the sheet of figures")
        document.save(path)
    pages = DocumentLoaderPyMuPDF().load(str(path))
    assert "Shee t" in pages[4]["content"]  # what the model is given is not changed

    retriever = make_retriever()
    retriever.index("statements", pages)
    assert 5 in [match.page_number for match in retriever.search("statements", "sheet", max_pages=6)]
    assert "[Sheet]" in retriever.snippet("statements", 5, "balance sheet")

    plain = make_retriever(ranking=Ranking(join_split_words=False))
    plain.index("statements", pages)
    assert 5 not in [match.page_number for match in plain.search("statements", "sheet", max_pages=6)]
