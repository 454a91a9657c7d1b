"""Query words a document spells otherwise are found in its spelling, on both backends: "U.S." and
"US", fiscal years, words joined or split, acronyms spelled out in the document; a written word still
counts most."""

from __future__ import annotations

import pytest

from extract_thinker_pageindex.retrieval.profiles import FINANCE
from extract_thinker_pageindex.retrieval.query import analyse_query, fiscal_years, respellings
from extract_thinker_pageindex.retrieval.ranking import Ranking
from extract_thinker_pageindex.retrieval.respelling import acronym_patterns


def filler(topic: str, words: int = 40) -> str:
    pool = ["river", "stone", "harbor", "meadow", "lantern", "orchard", "valley", "summit", "canal", "fern"]
    return f"{topic}. " + " ".join(pool[(len(topic) + n) % len(pool)] for n in range(words))


def pages_found(retriever, query: str, count: int = 5) -> list[int]:
    return [match.page_number for match in retriever.search("doc", query, max_pages=count)]


def with_and_without(make_retriever, pages: list[str]):
    """A retriever with the default ranking and one without respelling, both holding ``pages``."""
    opened = make_retriever(), make_retriever(ranking=Ranking(respell=False))
    for retriever in opened:
        retriever.index("doc", pages)
    return opened


# -- the query's own spellings -------------------------------------------------------------------------------


def test_dotted_capitals_are_one_word_with_both_spellings():
    plan = analyse_query("What were U.S. sales?", respell=True)
    assert plan.written == ("us", "sales")
    assert dict(plan.terms)["u.s."] == 0.75
    assert dict(analyse_query("What were US sales?", respell=True).terms)["u.s."] == 0.75
    # A pronoun in lower case is no country, and "e.g." is no abbreviation to respell.
    assert "u.s." not in dict(analyse_query("Tell us about sales", respell=True).terms)
    assert "eg" not in analyse_query("sales, e.g. in stores", respell=True).words


def test_two_words_side_by_side_are_also_searched_joined():
    assert respellings("cash flow from operations", ["cash", "flow", "operations"]) == {"cash": ("cashflow",)}
    assert respellings("free cash", ["free", "cash"]) == {"free": ("freecash",)}
    assert respellings("US revenue", ["us", "revenue"]) == {"us": ("u.s.",)}  # too short to join


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Revenue in FY20?", {"fy20": ("2020",)}),
        ("Revenue in FY2021 and FY 2019?", {"fy2021": ("2021",)}),
        ("Revenue in FY'98", {"98": ("1998",)}),
        ("Revenue in 2020", {}),
    ],
)
def test_a_fiscal_year_form_falls_back_to_its_year(question: str, expected: dict):
    written = analyse_query(question, respell=True).written
    assert fiscal_years(question, written) == expected


def test_without_respelling_the_query_is_as_written():
    plan = analyse_query("U.S. cash flow in FY20", respell=False)
    assert "u.s." not in plan.words and "cashflow" not in plan.words and plan.fallbacks == {}


@pytest.mark.parametrize(
    ("acronym", "text", "found"),
    [
        ("PPNE", "property, plant and equipment, net", "property, plant and equipment"),
        ("PPE", "Property, Plant & Equipment", "property, plant & equipment"),
        ("JnJ", "Johnson & Johnson reported", "johnson & johnson"),
        ("SNS", "social networking sites", "social networking sites"),
        ("FYE", "for the year ended", None),  # function words start no word of an expansion
    ],
)
def test_acronym_patterns_read_initials(acronym: str, text: str, found: str | None):
    matches = [
        match.group(0) for pattern in acronym_patterns(acronym) for match in pattern.finditer(text.lower())
    ]
    assert (matches[0] if matches else None) == found


def test_a_profile_pattern_takes_the_plural_and_the_singular():
    assert FINANCE.kinds_asked("What were the gross margins?") == FINANCE.kinds_asked("gross margin") != set()
    assert FINANCE.kinds_asked("capital expenditures") == {"cash_flow_statement"}
    assert FINANCE.kinds_asked("net losses") == FINANCE.kinds_asked("net loss")


# -- the document's spellings, on both backends -------------------------------------------------------------


def test_us_finds_u_s_and_the_written_word_counts_most(make_retriever):
    pages = [filler("Overview"), filler("U.S. revenue grew in every U.S. region"), filler("Europe revenue")]
    retriever, plain = with_and_without(make_retriever, pages)
    assert pages_found(retriever, "US revenue")[0] == 2
    score = {match.page_number: match.score for match in retriever.search("doc", "US revenue")}
    plain_score = {match.page_number: match.score for match in plain.search("doc", "US revenue")}
    assert score[2] < plain_score[2]  # lower ranks first: "U.S." counts only with respelling
    assert score[3] == pytest.approx(plain_score[3])

    # A page with the word as written outranks one with only the other spelling.
    retriever.index("doc", [filler("US revenue"), filler("U.S. revenue"), filler("Other")])
    assert pages_found(retriever, "US revenue")[:2] == [1, 2]


def test_a_word_on_no_page_is_split_where_the_document_prints_it_apart(make_retriever):
    pages = [filler("Overview"), filler("Net cash flow from operating activities"), filler("Cash on hand")]
    retriever, plain = with_and_without(make_retriever, pages)
    assert pages_found(retriever, "cashflow")[0] == 2
    assert pages_found(plain, "cashflow") == []


def test_an_acronym_on_no_page_finds_the_phrase_it_abbreviates(make_retriever):
    pages = [
        filler("Overview of Johnson & Johnson"),
        filler("Property, plant and equipment, net 12,645; property, plant and equipment at cost"),
        filler("Johnson & Johnson segment results"),
    ]
    retriever, plain = with_and_without(make_retriever, pages)
    assert pages_found(retriever, "What was the PPNE?")[0] == 2
    assert set(pages_found(retriever, "JnJ segments")[:2]) == {1, 3}
    assert pages_found(plain, "What was the PPNE?") == []


def test_a_fiscal_year_the_document_prints_as_a_year(make_retriever):
    pages = [filler("Revenue in fiscal 2019"), filler("Revenue in fiscal 2020"), filler("Outlook")]
    retriever = make_retriever()
    retriever.index("doc", pages)
    assert pages_found(retriever, "FY20 revenue")[0] == 2


def test_spellings_follow_the_document_when_it_is_indexed_again(make_retriever):
    retriever = make_retriever()
    retriever.index(
        "doc", [filler("Overview"), filler("Property, plant and equipment; property, plant and equipment")]
    )
    assert pages_found(retriever, "PPNE")[0] == 2
    retriever.index(
        "doc", [filler("Overview"), filler("Other"), filler("Personal protective equipment " * 2)]
    )
    assert pages_found(retriever, "PPNE") == []  # "personal protective equipment" has no N
    assert pages_found(retriever, "PPE")[0] == 3
