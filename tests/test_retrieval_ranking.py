"""The ranking's mechanisms, each shown on pages built to isolate it, and switched off to show it matters:
weighted query terms, synonyms, title zones, number-dense pages, the finance profile and its inertness."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest
from pydantic import Field

from extract_thinker_pageindex import SQLitePageRetriever, query_from_contract
from extract_thinker_pageindex._framework import Contract
from extract_thinker_pageindex.errors import InvalidOptionError
from extract_thinker_pageindex.retrieval.profiles import FINANCE, RetrievalProfile
from extract_thinker_pageindex.retrieval.query import analyse_query, query_words
from extract_thinker_pageindex.retrieval.ranking import Ranking


def filler(count: int, seed: int = 0) -> str:
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"]
    return " ".join(words[(seed + n) % len(words)] + str(n % 7) for n in range(count))


def ranked(pages: list[str], query: str, **options: object) -> list[int]:
    with SQLitePageRetriever(**options) as retriever:  # type: ignore[arg-type]
        retriever.index("doc", pages)
        return [match.page_number for match in retriever.search("doc", query, max_pages=10)]


# -- query understanding -------------------------------------------------------------------------------


def test_instruction_words_carry_no_weight_and_numbers_stay():
    plan = analyse_query(
        "You are an investment banker. Round your answer to two decimal places. "
        "What is the FY2021 capex in USD millions for 2021?"
    )
    weights = dict(plan.terms)
    assert weights["fy2021"] == 1.0 and weights["2021"] == 1.0 and weights["capex"] == 1.0
    for word in ("round", "decimal", "places", "answer", "banker", "investment", "usd", "millions"):
        assert word not in weights
    # Without the mechanism the same words are searched.
    assert "round" in dict(analyse_query("Round your answer", instruction_words=False).terms)


def test_synonyms_expand_at_a_lower_weight():
    plan = analyse_query("What was capex?", synonyms=FINANCE.synonyms, expansion_weight=0.5)
    weights = dict(plan.terms)
    assert weights["capex"] == 1.0
    assert weights["purchases"] == weights["property"] == weights["equipment"] == 0.5
    assert "purchases" not in dict(analyse_query("What was capex?").terms)


def test_instruction_phrases_go_but_their_words_stay_content_elsewhere():
    assert analyse_query("How is Confidential Information defined?").words == [
        "confidential",
        "information",
        "defined",
    ]
    assert "value" in analyse_query("What is the notional value of the swaps?").words
    assert "agreement" in analyse_query("Which law governs the agreement?").words
    plan = analyse_query("In agreement with the information outlined in the income statement, what is X?")
    assert "agreement" not in plan.words and "information" not in plan.words


@pytest.mark.parametrize(
    ("query", "figure"),
    [
        ("How much did the company spend on capex?", True),
        ("What was the total amount of debt?", True),
        ("Compute the inventory turnover ratio", True),
        ("What was the capital expenditure amount in 2021?", True),
        ("What is the monthly fee?", True),
        ("Which segment had the lowest operating income?", True),
        ("Which model performs best on the benchmark?", True),
        ("Which region had the largest drop in revenue?", True),
        ("Who is the new chief executive?", False),
        ("What were the main risk factors?", False),
        ("Describe the growth strategy", False),
        ("Is the company spinning off a segment?", False),
    ],
)
def test_a_question_asking_for_a_figure_is_told_apart(query: str, figure: bool):
    assert analyse_query(query).asks_figure is figure


@pytest.mark.parametrize(
    ("query", "words"),
    [
        ("sales in May 2024", ["sales", "may", "2024"]),
        ("spending on IT", ["spending", "it"]),
        ("is the lease not renewable", ["lease", "not", "renewable"]),
        ("May the lease end early?", ["lease", "end", "early"]),  # "May" opens the sentence
        ("WHAT IS THE GOVERNING LAW", ["governing", "law"]),  # in capitals a capital says nothing
        ("the of and", []),
    ],
)
def test_function_words_that_matter_are_kept(query: str, words: list[str]):
    assert query_words(query) == words


def test_proximity_pairs_are_phrases_of_the_query():
    plan = analyse_query(
        "What is the FY2021 capital expenditure amount (in USD billions) for PepsiCo? Use the statement of "
        "cash flows."
    )
    assert ("capital", "expenditure") in plan.pairs
    assert ("statement", "cash") in plan.pairs  # "of" between them is a function word
    assert ("cash", "flows") in plan.pairs
    # Across an instruction word, a parenthesis or a full stop there is no phrase.
    assert ("expenditure", "pepsico") not in plan.pairs
    assert ("pepsico", "statement") not in plan.pairs


def test_a_query_of_only_instruction_words_still_searches_them():
    assert analyse_query("Round the answer").words == ["round", "answer"]


# -- synonyms, title zone, numbers: each moves a page, and switched off it does not --------------------


def test_an_acronym_finds_the_page_that_spells_it_out():
    pages = [
        filler(60) + " ceo",
        "Ms. Dillon was appointed President and Chief Executive Officer of the Company. " + filler(55),
    ]
    assert 2 in ranked(pages, "ceo")  # it never says "CEO"
    assert ranked(pages, "ceo", ranking=Ranking(synonyms=False)) == [1]


def test_user_synonyms_are_searched_too():
    pages = [filler(60, 1), "The landlord may end the lease early. " + filler(50)]
    assert ranked(pages, "tenancy") == []
    assert ranked(pages, "tenancy", synonyms={"tenancy": ["lease"]}) == [2]


def test_instruction_words_of_a_question_do_not_pick_its_page():
    rounding = "Round each answer to two decimal places; the answer is rounded, places kept. " + filler(50)
    pages = [rounding, "Capex for the year was 412. " + filler(60, 2), filler(60, 4), filler(60, 6)]
    question = "Round your answer to two decimal places. What was capex?"
    assert ranked(pages, question)[0] == 2
    # Searched as content, the instruction's four words outweigh the one word asked about.
    assert ranked(pages, question, ranking=Ranking(query_weights=False))[0] == 1


def test_a_phrase_of_the_query_found_together_outranks_its_words_apart():
    far = "operating " + filler(12) + " income"
    near = filler(6) + " operating income " + filler(6)
    pages = [far, near, filler(14, 2), filler(14, 5), filler(14, 7)]
    assert ranked(pages, "operating income") == [2, 1]
    # The same words on pages of the same length: without the bonus they tie, and the earlier page leads.
    assert ranked(pages, "operating income", ranking=Ranking(proximity=False)) == [1, 2]


def test_a_title_zone_raises_the_page_titled_by_the_query():
    running = filler(40) + " and the segment results were reported " + filler(40, 3)
    titled = "Segment Results\n" + "\n".join(filler(12, n) for n in range(7))
    pages = [running, titled]
    assert ranked(pages, "segment results")[0] == 2
    assert ranked(pages, "segment results", ranking=Ranking(title_zone=False))[0] == 1


def test_a_title_zone_is_the_heading_lines_over_running_text():
    from extract_thinker_pageindex.retrieval.page_text import title_zone

    body = "Dividends\nPolicy\nthe board declares a dividend each quarter when cash allows it,\nand more.\n"
    assert title_zone(body) == "Dividends\nPolicy"
    assert title_zone("Dividends\nWe pay a dividend.\n") == ""  # nothing under it: no title
    assert title_zone("continued from the page before, the text runs on\nand on\nand on") == ""


def table_page(label: str) -> str:
    rows = "\n".join(f"Line {n} .... {1000 + 37 * n:,} {900 + 31 * n:,} {800 + 29 * n:,}" for n in range(20))
    return f"Selected data: {label}\n{rows}"


def test_a_question_asking_for_a_figure_prefers_pages_dense_with_numbers():
    prose = (
        "Our total revenue grew because customers renewed; total revenue from new markets also rose, and "
        "total revenue per customer too. " + filler(60, 2)
    )
    pages = [prose, table_page("total revenue")]
    assert ranked(pages, "What was the total revenue?")[0] == 2
    assert ranked(pages, "What was the total revenue?", ranking=Ranking(numeric_density=False))[0] == 1
    assert ranked(pages, "Why did revenue grow?")[0] == 1  # no figure asked: words alone decide


def test_a_superlative_is_a_figure_question_in_any_domain():
    prose = (
        "Which segment grew? The cloud segment income rose, the devices segment income fell, and segment "
        "income overall held. " + filler(60, 3)
    )
    pages = [prose, table_page("segment income")]
    assert ranked(pages, "Which segment had the lowest income?", profile=None)[0] == 2
    assert (
        ranked(
            pages,
            "Which segment had the lowest income?",
            profile=None,
            ranking=Ranking(numeric_density=False),
        )[0]
        == 1
    )


# -- the finance profile -------------------------------------------------------------------------------


def statement(title: str, items: list[str]) -> str:
    rows = "\n".join(f"{item} .......... {1200 + 41 * n:,} {1100 + 37 * n:,}" for n, item in enumerate(items))
    return f"ACME CORPORATION\n{title}\n(In millions)\n{rows}\n" + "\n".join(
        f"Other item {n} .... {n * 13:,} {n * 11:,}" for n in range(15)
    )


BALANCE = statement("CONSOLIDATED BALANCE SHEETS", ["Cash", "Inventories", "Total assets"])
CASH_FLOWS = statement(
    "CONSOLIDATED STATEMENTS OF CASH FLOWS",
    ["Net income", "Depreciation", "Capital expenditures", "Net cash used for investing activities"],
)
INCOME = statement(
    "CONSOLIDATED STATEMENTS OF OPERATIONS",
    ["Net sales", "Cost of sales", "Net income", "Diluted earnings per share"],
)
DISCUSSION = (
    "Liquidity. Capital expenditure plans for 2021 were discussed by management; capital expenditure "
    "priorities follow, and inventories were reduced, inventories being high. " + filler(80, 4)
)
FILING = [DISCUSSION, BALANCE, INCOME, CASH_FLOWS]


def test_a_footnote_mark_on_a_statement_title_is_passed_over():
    assert FINANCE.page_kind("Lockheed Martin Corporation\nConsolidated Statements of Earnings1", 0.3) == (
        "income_statement"
    )


def test_page_kinds_are_read_from_the_title_zone_of_number_dense_pages(tmp_path: Path):
    with SQLitePageRetriever(tmp_path / "r.sqlite") as retriever:
        retriever.index(
            "filing", [*FILING, "Contents\nConsolidated Statements of Cash Flows 63\n" + filler(40)]
        )
    with sqlite3.connect(tmp_path / "r.sqlite") as conn:
        kinds = [row[0] for row in conn.execute("SELECT kind FROM pi_pages ORDER BY row")]
    # The contents page names a statement but holds no table of figures: no kind.
    assert kinds == [None, "balance_sheet", "income_statement", "cash_flow_statement", None]


def test_a_metric_points_to_its_statement():
    query = "What was the capital expenditure amount in 2021?"
    assert ranked(FILING, query)[0] == 4
    assert ranked(FILING, query, ranking=Ranking(profile="off"))[0] == 1


def test_naming_a_statement_points_to_it():
    query = "Using the balance sheet, what were inventories?"
    assert ranked(FILING, query)[0] == 2
    with_profile, without = dict(scores(FILING, query)), dict(scores(FILING, query, profile=None))
    assert with_profile[2] < without[2]  # raised (lower ranks first)
    assert with_profile[1] == without[1]  # the prose page is not


def scores(pages: list[str], query: str, **options: object) -> list[tuple[int, float]]:
    with SQLitePageRetriever(**options) as retriever:  # type: ignore[arg-type]
        retriever.index("doc", pages)
        return [(m.page_number, m.score) for m in retriever.search("doc", query, max_pages=10)]


def test_the_profile_is_inert_without_statement_pages_in_the_document():
    # One page that happens to be titled as a statement is not a financial report.
    pages = [DISCUSSION, CASH_FLOWS, filler(90, 5)]
    query = "What was the capex amount in 2021?"
    assert scores(pages, query) == scores(pages, query, profile=None)  # no boost, and no finance synonyms
    assert scores(pages, query, ranking=Ranking(profile="on")) != scores(pages, query)
    # The same query on a whole filing: the profile acts.
    assert scores(FILING, query) != scores(FILING, query, profile=None)


def test_the_profile_is_inert_for_a_query_that_names_no_metric():
    pages = [*FILING, "The company is incorporated in Delaware and audited by Smith LLP. " + filler(50)]
    query = "Who audits the company and where is it incorporated?"
    assert scores(pages, query) == scores(pages, query, profile=None)
    metric = "What were the total assets?"
    assert scores(pages, metric) != scores(pages, metric, profile=None)  # the control: it does act


def test_a_users_own_profile_replaces_finance():
    clinical = RetrievalProfile(
        name="clinical",
        page_kinds={
            "adverse_events": re.compile(r"adverse events"),
            "dosing": re.compile(r"dosage and administration"),
        },
        query_kinds={"adverse_events": re.compile(r"\bside effects?\b")},
        min_numeric_share=0.1,
    )
    events = "ADVERSE EVENTS (side effects)\n" + "\n".join(
        f"Headache {n} {n * 3} {n * 7}%" for n in range(30)
    )
    dosing = "DOSAGE AND ADMINISTRATION\n" + "\n".join(f"Week {n} {n * 5} mg {n * 2}" for n in range(30))
    notes = "Side effects were rare and resolved without treatment. " + filler(70, 6)
    pages = [notes, events, dosing]
    query = "Which side effects were seen?"
    assert ranked(pages, query, profile=clinical)[0] == 2
    clinical_scores = dict(scores(pages, query, profile=clinical))
    assert clinical_scores[2] < dict(scores(pages, query, profile=None))[2]  # raised by the profile
    assert scores(pages, query) == scores(pages, query, profile=None)  # finance knows nothing of it


def test_query_from_contract_reaches_the_statement_pages():
    class Figures(Contract):
        capex: float = Field(description="Capital expenditures for the year")
        total_revenue: float
        eps_diluted: float

    query = query_from_contract(Figures)
    found = ranked(FILING, query)
    assert set(found[:2]) == {3, 4}  # the income statement and the cash flow statement


# -- options and the stored facts ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "options",
    [{"numeric_boost": -1}, {"statement_boost": float("nan")}, {"title_zone": "yes"}, {"profile": "maybe"}],
)
def test_bad_ranking_options_are_refused(options: dict[str, object]):
    with pytest.raises(InvalidOptionError):
        Ranking(**options)  # type: ignore[arg-type]


def test_bad_retriever_options_are_refused():
    with pytest.raises(InvalidOptionError, match="ranking must be a Ranking"):
        SQLitePageRetriever(ranking={"title_zone": False})  # type: ignore[arg-type]
    with pytest.raises(InvalidOptionError, match="profile must be"):
        SQLitePageRetriever(profile="finance")  # type: ignore[arg-type]


def test_a_version_1_file_is_brought_up_to_date(tmp_path: Path):
    path = tmp_path / "old.sqlite"
    with SQLitePageRetriever(path) as retriever:
        retriever.index("filing", FILING)
    # Make it what version 1 wrote: no page facts, no title zones, version 1.
    with sqlite3.connect(path) as conn:
        conn.execute("DROP TABLE pi_pages")
        conn.execute("UPDATE pi_fts SET headings = ''")
        conn.execute("UPDATE pi_meta SET value = '1' WHERE key = 'schema_version'")
    with SQLitePageRetriever(path) as retriever:
        found = retriever.search("filing", "What was the capital expenditure amount in 2021?")
        assert found[0].page_number == 4
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT value FROM pi_meta WHERE key = 'schema_version'").fetchone() == ("2",)
        assert conn.execute("SELECT count(*) FROM pi_pages").fetchone() == (4,)
        assert "BALANCE SHEETS" in conn.execute("SELECT headings FROM pi_fts WHERE rowid = 2").fetchone()[0]


def test_table_statistics_kept_between_searches_follow_every_write(tmp_path: Path):
    """FTS5's table-wide counts are read once and kept; a write through this retriever or another
    connection to the file makes the next search read them again, so its scores equal a fresh retriever's
    (with stale counts they would not: FTS5's scores change with the table, and the kept counts divide
    them). A document's scores are its own: other documents do not move them."""
    path = tmp_path / "pages.sqlite"
    pages = ["cash flow statement " + filler(30), "revenue by segment " + filler(30, 1), filler(30, 2)]
    with SQLitePageRetriever(path) as mine, SQLitePageRetriever(path) as other:
        mine.index("a", pages)
        before = mine.search("a", "cash revenue")
        other.index("b", ["cash cash cash " + filler(10, 3)] * 5)  # another connection changes the table
        after = mine.search("a", "cash revenue")
        with SQLitePageRetriever(path) as fresh:
            assert after == fresh.search("a", "cash revenue")
        assert after == before
        mine.delete("b")  # and a write through this one
        assert mine.search("a", "cash revenue") == before
        assert mine.search("a", "zebra") == []  # a word on no row of the table


def test_a_page_whose_only_query_words_head_every_page_is_no_match_for_content(make_retriever):
    """A page repeating words that head every page (the company's name, the report's title), as an exhibit
    certification does, must not outrank the pages holding the word that tells pages apart."""
    header = "Acme Industries annual report, fiscal year\n"
    pages = [header + filler(200, seed) for seed in range(6)]
    pages[2] = header + filler(400, 9) + " revenue " + filler(400, 4)
    pages[3] = header + filler(400, 7) + " revenue " + filler(400, 5)
    pages[5] = header + "Acme Industries annual report fiscal year; " * 3
    question = "Acme Industries annual report fiscal year revenue"
    on = make_retriever()
    on.index("doc", pages)
    found = [match.page_number for match in on.search("doc", question, max_pages=6)]
    assert sorted(found[:2]) == [3, 4]
    assert found[2:] == [6, 1, 2, 5]  # the others keep their order among themselves

    off = make_retriever(ranking=Ranking(decoys=False))
    off.index("doc", pages)
    assert off.search("doc", question, max_pages=6)[0].page_number == 6
