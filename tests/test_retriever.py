"""The page retrievers' shared behaviour, each test run on every backend (``make_retriever``: SQLite files and
a real PostgreSQL server): lifecycle, scope, ranking, hostile input, threads, processes. Tests of one
backend's own storage (SQLite's files) say so in their name."""

from __future__ import annotations

import multiprocessing
import random
import sqlite3
import threading
import time
import traceback
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from extract_thinker_pageindex.errors import (
    IndexFormatError,
    InvalidOptionError,
    NoMatchError,
    PageIndexError,
    RetrieverClosedError,
)
from extract_thinker_pageindex.retrieval.base import PageRetriever
from extract_thinker_pageindex.retrieval.sqlite import (
    PageMatch,
    SQLitePageRetriever,
    page_text_fields,
    query_words,
)

FILLER = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa"


def filler(count: int, offset: int = 0) -> str:
    """``count`` neutral words, different from every query word used below."""
    words = FILLER.split()
    return " ".join(words[(offset + i) % len(words)] for i in range(count))


def numbers(matches: list[PageMatch]) -> list[int]:
    return [match.page_number for match in matches]


def plain_fts5_ranking(docs: dict[str, list[str]], doc_id: str, query: str) -> list[tuple[int, float]]:
    """What plain FTS5 ``bm25()`` says, in a table of our own: ``(page_number, score)`` best first.

    Used only to show that a ranking fixture is one plain FTS5 gets wrong, so the test is discriminating.
    """
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(body, tokenize = 'porter unicode61 remove_diacritics 2')")
    first = {}
    rowid = 1
    for name, pages in docs.items():
        first[name] = rowid
        for page in pages:
            conn.execute("INSERT INTO t (rowid, body) VALUES (?, ?)", (rowid, page))
            rowid += 1
    start, end = first[doc_id], first[doc_id] + len(docs[doc_id]) - 1
    expression = " OR ".join(f'"{word}"' for word in query_words(query))
    rows = conn.execute(
        "SELECT rowid, bm25(t) FROM t WHERE t MATCH ? AND rowid BETWEEN ? AND ? ORDER BY bm25(t), rowid",
        (expression, start, end),
    ).fetchall()
    conn.close()
    return [(row - start + 1, score) for row, score in rows]


@pytest.fixture
def retriever(make_retriever):
    """A new, empty retriever of each backend in turn."""
    return make_retriever()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "pages.sqlite"


# -- lifecycle ---------------------------------------------------------------------------------------


def test_sqlite_default_path_is_in_memory_and_works():
    with SQLitePageRetriever() as retriever:
        assert retriever.database == ":memory:"
        retriever.index("doc", ["the penalty clause", "nothing here"])
        assert numbers(retriever.search("doc", "penalty")) == [1]


def test_sqlite_in_memory_retrievers_do_not_share_pages():
    with SQLitePageRetriever() as first, SQLitePageRetriever() as second:
        first.index("doc", ["penalty"])
        assert "doc" in first
        assert "doc" not in second
        assert second.search("doc", "penalty") == []


def test_an_index_persists_across_retrievers(make_retriever, tmp_path: Path):
    pages = ["governing law is Delaware", "payment terms net thirty", "termination for convenience"]
    where = make_retriever.where(tmp_path)
    with make_retriever(where) as retriever:
        retriever.index("contract", pages)
        before = retriever.search("contract", "termination")
    with make_retriever(where) as reopened:
        assert reopened.document_ids() == ["contract"]
        assert reopened.page_count("contract") == 3
        after = reopened.search("contract", "termination")
    assert numbers(after) == [3]
    assert after == before


def test_sqlite_file_path_may_be_a_string_or_a_path(db_path: Path):
    with SQLitePageRetriever(str(db_path)) as retriever:
        retriever.index("contract", ["termination for convenience"])
    assert db_path.is_file()
    with SQLitePageRetriever(db_path) as reopened:
        assert reopened.document_ids() == ["contract"]


def test_context_manager_closes(make_retriever):
    with make_retriever() as retriever:
        retriever.index("doc", ["text"])
    with pytest.raises(RetrieverClosedError):
        retriever.search("doc", "text")
    assert "closed" in repr(retriever)


def test_close_is_idempotent(make_retriever):
    retriever = make_retriever()
    retriever.close()
    retriever.close()
    assert "closed" in repr(retriever)
    with pytest.raises(RetrieverClosedError):
        retriever.document_ids()


def test_entering_a_closed_retriever_raises(make_retriever):
    retriever = make_retriever()
    retriever.close()
    with pytest.raises(RetrieverClosedError), retriever:
        pass


@pytest.mark.parametrize(
    "use",
    [
        lambda r: r.index("other", ["text"]),
        lambda r: r.search("doc", "text"),
        lambda r: r.delete("doc"),
        lambda r: r.document_ids(),
        lambda r: r.page_count("doc"),
        lambda r: "doc" in r,
        lambda r: r.snippet("doc", 1, "text"),
    ],
    ids=["index", "search", "delete", "doc_ids", "page_count", "contains", "snippet"],
)
def test_every_use_after_close_raises(use, make_retriever, tmp_path: Path):
    retriever = make_retriever(make_retriever.where(tmp_path))
    retriever.index("doc", ["text"])
    retriever.close()
    with pytest.raises(RetrieverClosedError) as info:
        use(retriever)
    assert isinstance(info.value, RuntimeError)
    assert isinstance(info.value, PageIndexError)
    assert "closed" in str(info.value)


# -- search: scope, order, limits --------------------------------------------------------------------


def test_search_is_scoped_to_the_doc_id(retriever: PageRetriever):
    retriever.index("first", [filler(10), "indemnity clause " + filler(8), filler(10, 3)])
    retriever.index("second", ["indemnity " * 5, "indemnity clause", filler(10), "indemnity", filler(5)])
    first = retriever.search("first", "indemnity clause", max_pages=10)
    second = retriever.search("second", "indemnity clause", max_pages=10)
    assert numbers(first) == [2]
    assert sorted(numbers(second)) == [1, 2, 4]
    # Every page number of a result belongs to the document that was asked.
    assert all(1 <= n <= 3 for n in numbers(first))


def test_results_are_best_first_with_negative_scores(retriever: PageRetriever):
    pages = [
        filler(12),
        "dividend " + filler(11),
        "dividend dividend dividend " + filler(9),
        "dividend dividend " + filler(10),
        filler(12, 5),
    ]
    retriever.index("doc", pages)
    matches = retriever.search("doc", "dividend", max_pages=10)
    assert numbers(matches) == [3, 4, 2]
    scores = [match.score for match in matches]
    assert scores == sorted(scores)
    assert len(set(scores)) == 3
    assert all(score < 0 for score in scores)
    assert all(isinstance(match, PageMatch) for match in matches)


def test_max_pages_is_respected(retriever: PageRetriever):
    retriever.index("doc", [f"royalty {filler(i + 1)}" for i in range(10)])
    assert len(retriever.search("doc", "royalty", max_pages=3)) == 3
    assert len(retriever.search("doc", "royalty", max_pages=1)) == 1
    assert len(retriever.search("doc", "royalty", max_pages=100)) == 10
    assert len(retriever.search("doc", "royalty")) == 5  # the default, as ExtractThinker's retriever has it


def test_page_number_is_the_one_based_position(retriever: PageRetriever):
    pages = [filler(8, i) for i in range(12)]
    pages[6] = "warranty " + filler(7)
    retriever.index("filler-before", [filler(5)] * 4)  # rows before ours in the table
    retriever.index("doc", pages)
    assert numbers(retriever.search("doc", "warranty")) == [7]
    pages[0] = "warranty"
    retriever.index("first-page", pages)
    assert sorted(numbers(retriever.search("first-page", "warranty"))) == [1, 7]


def test_an_unknown_document_has_no_matches_and_no_page_count(retriever: PageRetriever):
    # As ExtractThinker's own retriever: searching a document never indexed finds nothing.
    retriever.index("known", ["text"])
    assert retriever.search("unknown", "text") == []
    with pytest.raises(NoMatchError) as info:
        retriever.page_count("unknown")
    assert isinstance(info.value, LookupError) and isinstance(info.value, ValueError)
    assert "unknown" in str(info.value)


@pytest.mark.parametrize("bad", [0, -1, True, False, 2.5, "3", None])
def test_invalid_max_pages_raises(retriever: PageRetriever, bad):
    retriever.index("doc", ["text"])
    with pytest.raises(InvalidOptionError) as info:
        retriever.search("doc", "text", max_pages=bad)
    assert isinstance(info.value, ValueError)
    assert repr(bad) in str(info.value)


def test_query_with_words_on_no_page_returns_empty(retriever: PageRetriever):
    retriever.index("doc", ["revenue grew", "costs fell"])
    assert retriever.search("doc", "zebra xylophone") == []


@pytest.mark.parametrize("query", ["the of and a", "The AND the OR", "!!! ??? ...", "", "   ", "— … «»"])
def test_query_of_only_stop_words_or_punctuation_returns_empty(retriever: PageRetriever, query):
    # Every page is full of stop words, so returning anything would mean they were searched.
    retriever.index("doc", ["the of and a the of and", "and a the", "!!! ??? ... the"])
    assert retriever.search("doc", query) == []


def test_empty_document_can_be_indexed_and_searched(retriever: PageRetriever):
    retriever.index("empty", [])
    assert "empty" in retriever
    assert retriever.page_count("empty") == 0
    assert retriever.search("empty", "anything") == []
    retriever.index("after", ["anything"])
    assert numbers(retriever.search("after", "anything")) == [1]
    assert retriever.search("empty", "anything") == []


# -- re-index, delete, bookkeeping -------------------------------------------------------------------


def test_reindex_replaces_pages(retriever: PageRetriever):
    retriever.index("doc", ["obsolete clause"] * 5)
    retriever.index("neighbour", ["obsolete clause", "fresh clause"])
    assert len(retriever.search("doc", "obsolete", max_pages=10)) == 5
    retriever.index("doc", ["fresh wording", "more fresh wording", "unrelated"])
    assert retriever.page_count("doc") == 3
    assert retriever.search("doc", "obsolete", max_pages=10) == []
    assert sorted(numbers(retriever.search("doc", "fresh", max_pages=10))) == [1, 2]
    # The neighbour is untouched.
    assert numbers(retriever.search("neighbour", "obsolete")) == [1]
    assert retriever.page_count("neighbour") == 2


def test_failed_reindex_keeps_the_old_pages(retriever: PageRetriever):
    retriever.index("doc", ["original wording", "second original page"])
    with pytest.raises((TypeError, AttributeError, ValueError)):
        retriever.index("doc", ["replacement wording", 42])  # type: ignore[list-item]
    assert retriever.page_count("doc") == 2
    assert sorted(numbers(retriever.search("doc", "original"))) == [1, 2]
    assert retriever.search("doc", "replacement") == []


def test_pages_may_be_any_iterable_sequence(retriever: PageRetriever):
    retriever.index("tuple", ("first", "second lemur"))
    retriever.index("generator", (text for text in ["lemur", "other"]))  # type: ignore[arg-type]
    assert numbers(retriever.search("tuple", "lemur")) == [2]
    assert numbers(retriever.search("generator", "lemur")) == [1]
    assert retriever.page_count("generator") == 2


def test_delete_removes_pages_and_reports_whether_it_did(retriever: PageRetriever):
    retriever.index("doc", ["penalty"])
    retriever.index("keep", ["penalty"])
    assert retriever.delete("doc") is True
    assert retriever.delete("doc") is False
    assert retriever.delete("never-indexed") is False
    assert "doc" not in retriever
    assert retriever.search("doc", "penalty") == []
    assert numbers(retriever.search("keep", "penalty")) == [1]


def test_sqlite_delete_frees_the_rows(db_path: Path):
    with SQLitePageRetriever(db_path) as retriever:
        retriever.index("doc", ["marker" + str(i) for i in range(7)])
        retriever.delete("doc")
    conn = sqlite3.connect(db_path)
    (count,) = conn.execute("SELECT count(*) FROM pi_fts").fetchone()
    conn.close()
    assert count == 0


def test_doc_ids_page_count_and_contains(retriever: PageRetriever):
    assert retriever.document_ids() == []
    retriever.index("b", ["x", "y"])
    retriever.index("a", ["x"])
    retriever.index("c", ["x", "y", "z"])
    assert retriever.document_ids() == ["a", "b", "c"]
    assert [retriever.page_count(d) for d in ("a", "b", "c")] == [1, 2, 3]
    assert "a" in retriever
    assert "d" not in retriever
    assert 1 not in retriever
    assert None not in retriever


def test_non_string_doc_id_is_refused(retriever: PageRetriever):
    with pytest.raises(TypeError):
        retriever.index(42, ["text"])  # type: ignore[arg-type]


# -- what a page contributes -------------------------------------------------------------------------


def test_every_text_field_of_a_page_dict_is_searchable(retriever: PageRetriever):
    pages = [
        {"content": "plain content word quokka"},
        {"content": "content", "markdown": "# Heading with wombat"},
        {"content": "see table", "tables": [[["Segment", "Revenue"], ["Numbat", 2015]]]},
        {"content": "a form", "forms": [{"key": "Policy holder", "value": "Bilby"}]},
        {"content": "body text", "sections": ["Annual report", "Platypus risk factors"]},
        {"content": filler(6)},
    ]
    retriever.index("doc", pages)
    for word, page_number in [
        ("quokka", 1),
        ("wombat", 2),
        ("numbat", 3),
        ("2015", 3),
        ("bilby", 4),
        ("platypus", 5),
    ]:
        assert numbers(retriever.search("doc", word, max_pages=10)) == [page_number], word


def test_plain_strings_work_as_pages(retriever: PageRetriever):
    retriever.index("doc", ["first page about leases", "second page about debt"])
    assert numbers(retriever.search("doc", "debt")) == [2]
    assert page_text_fields("some text") == ("some text", "", "")


def test_markdown_equal_to_content_is_not_counted_twice(retriever: PageRetriever):
    text = "goodwill impairment " + filler(10)
    retriever.index("with-copy", [{"content": text, "markdown": text}, filler(12)])
    retriever.index("without", [{"content": text}, filler(12)])
    assert retriever.search("with-copy", "goodwill") == retriever.search("without", "goodwill")
    assert page_text_fields({"content": text, "markdown": text})[0] == text


def test_page_text_fields_splits_body_headings_descriptions():
    body, headings, descriptions = page_text_fields(
        {
            "content": "Body text.",
            "markdown": "**Different** markdown",
            "tables": [[["Cell A", "Cell B"]]],
            "forms": [{"name": "Name", "value": "Jane"}],
            "sections": ["Part I", "Item 7"],
            "section_descriptions": ["Management discussion"],
            "image": b"\x89PNG not text",
            "page_number": 4,
        }
    )
    assert body.startswith("Body text.")
    for part in ("**Different** markdown", "Cell A", "Cell B", "Name", "Jane"):
        assert part in body
    assert "PNG" not in body
    assert headings == "Part I\nItem 7"
    assert descriptions == "Management discussion"


def test_form_field_labels_are_searchable(retriever: PageRetriever):
    # ExtractThinker's Azure Document Intelligence and AWS Textract loaders give a page's form fields as
    # {label: value}; the label is text printed on the page ("Policy number"), as searchable as the value.
    pages = [
        {"content": "Application form", "forms": {"Policy number": "AX-1042", "Insured party": "Jane Roe"}},
        {"content": filler(6)},
        {"content": filler(6, 3)},
    ]
    retriever.index("doc", pages)
    assert numbers(retriever.search("doc", "AX-1042")) == [1]
    assert numbers(retriever.search("doc", "insured")) == [1]
    assert "Policy number" in page_text_fields(pages[0])[0]


def test_table_cells_inside_longer_words_are_still_indexed(retriever: PageRetriever):
    # "Net" and "10" are in the content only inside "Network" and "2010": as words, only in the table.
    page = {"content": "Network expenses rose in fiscal 2010", "tables": [[["Net", "10"], ["Gross", "7"]]]}
    retriever.index("doc", [page, filler(6), filler(6, 3)])
    assert numbers(retriever.search("doc", "gross")) == [1]
    assert numbers(retriever.search("doc", "net")) == [1]
    assert numbers(retriever.search("doc", "10")) == [1]


def test_table_cells_already_in_content_are_not_repeated():
    body, _, _ = page_text_fields({"content": "| Revenue | 100 |", "tables": [[["Revenue", "100"]]]})
    assert body == "| Revenue | 100 |"


def test_sqlite_images_and_bytes_are_not_stored(db_path: Path):
    secret = b"QZXJVSECRETIMAGEBYTES0123456789"
    pages = [
        {"content": "visible wallaroo text", "image": b"\x89PNG\r\n\x1a\n" + secret, "page_number": 1},
        {"content": "second page", "image": secret, "raw": bytearray(secret)},
    ]
    with SQLitePageRetriever(db_path) as retriever:
        retriever.index("doc", pages)
        assert numbers(retriever.search("doc", "wallaroo")) == [1]
    stored = b"".join(p.read_bytes() for p in db_path.parent.iterdir() if p.name.startswith(db_path.name))
    assert b"wallaroo" in stored  # the text is there, so a byte search would find the image if it were
    assert secret not in stored


# -- ranking properties plain FTS5 bm25() gets wrong -------------------------------------------------


def test_common_word_still_ranks_by_frequency(retriever: PageRetriever):
    # "revenue" is on 7 of 10 pages: FTS5's IDF floors it to ~0 and every page scores about nothing.
    pages = [
        "revenue " + filler(11, 1),
        "revenue " + filler(11, 2),
        "revenue " + filler(11, 3),
        "revenue revenue revenue revenue revenue " + filler(7, 4),
        "revenue " + filler(11, 5),
        "revenue " + filler(11, 6),
        "revenue " + filler(11, 7),
        filler(12, 8),
        filler(12, 9),
        filler(12, 10),
    ]
    plain = plain_fts5_ranking({"doc": pages}, "doc", "revenue")
    assert all(abs(score) < 1e-4 for _, score in plain)  # the trap this test is about
    retriever.index("doc", pages)
    matches = retriever.search("doc", "revenue", max_pages=10)
    assert numbers(matches)[0] == 4
    assert len(matches) == 7
    assert matches[0].score < matches[1].score
    assert all(match.score < -0.05 for match in matches)


def test_idf_is_per_document(retriever: PageRetriever):
    first = [filler(10, i) for i in range(10)]
    first[1] = "zeta zeta " + filler(8)
    first[4] = "omega " + filler(9)
    second = ["zeta " + filler(9, i) for i in range(40)]
    query = "zeta omega"
    # Plain FTS5 over both documents floors "zeta" and ranks the omega page first.
    assert plain_fts5_ranking({"first": first}, "first", query)[0][0] == 2
    assert plain_fts5_ranking({"first": first, "second": second}, "first", query)[0][0] == 5

    retriever.index("first", first)
    before = retriever.search("first", query, max_pages=10)
    retriever.index("second", second)
    after = retriever.search("first", query, max_pages=10)
    assert numbers(before) == [2, 5]
    assert numbers(after) == numbers(before)
    assert [m.score for m in after] == pytest.approx([m.score for m in before], rel=0.05)


@pytest.mark.parametrize(
    ("query", "page_text"),
    [
        ("terminated", "the termination of the agreement"),
        ("termination", "either party terminated it"),
        ("penalties", "a penalty applies"),
        ("Leasing", "the leases expire"),
    ],
)
def test_stemming_matches_word_forms(retriever: PageRetriever, query, page_text):
    retriever.index("doc", [filler(8), page_text, filler(8, 4)])
    assert numbers(retriever.search("doc", query)) == [2]


def test_stop_words_are_ignored(retriever: PageRetriever):
    pages = [
        "the the the of of the the of the " + filler(3),
        "penalty clause " + filler(8),
        "contract terms " + filler(8),
        "penalty of the contract " + filler(6),
        filler(10),
    ]
    retriever.index("doc", pages)
    with_stop_words = retriever.search("doc", "the penalty of the contract", max_pages=10)
    assert with_stop_words == retriever.search("doc", "penalty contract", max_pages=10)
    assert 1 not in numbers(with_stop_words)
    assert numbers(with_stop_words)[0] == 4


def test_adjacent_query_words_near_each_other_rank_first(retriever: PageRetriever):
    far = "operating " + filler(12) + " income"
    near = filler(6) + " operating income " + filler(6)
    # The same words, the same length: without proximity they tie and page 1 (far) would come first.
    pages = [far, near, filler(14, 2), filler(14, 5), filler(14, 7)]
    retriever.index("doc", pages)
    matches = retriever.search("doc", "operating income", max_pages=10)
    assert numbers(matches) == [2, 1]
    assert matches[0].score < matches[1].score


def test_heading_outranks_the_same_word_in_body(retriever: PageRetriever):
    body_page = {"content": "liquidity " + filler(10)}
    heading_page = {"content": filler(10), "sections": ["Liquidity"]}
    # Same token count; heading page second so that a tie would put the body page first.
    retriever.index("doc", [body_page, heading_page, filler(11, 3), filler(11, 6)])
    matches = retriever.search("doc", "liquidity", max_pages=10)
    assert numbers(matches) == [2, 1]
    assert matches[0].score < matches[1].score


# -- hostile queries ---------------------------------------------------------------------------------

HOSTILE_QUERIES = [
    '"',
    "'",
    '"unbalanced',
    "unbalanced'",
    '"penalty',
    "NEAR(a b)",
    "NEAR(penalty contract, 2)",
    "a NEAR/3 b",
    "*",
    "term*",
    "penalty*",
    "col:term",
    "body:x",
    "headings:penalty",
    "-x",
    "-penalty",
    "^x",
    "^penalty",
    "AND",
    "OR",
    "NOT",
    "a AND",
    "penalty AND NOT contract",
    "(",
    ")",
    "((penalty)",
    "{a b}",
    "{body headings}: penalty",
    "'; DROP TABLE pi_docs; --",
    '"; DROP TABLE pi_fts; --',
    "penalty -- comment",
    "penalty /* comment */ contract",
    "\x00",
    "penalty\x00contract",
    "x" * 100_000,
    "penalty " * 20_000,
    " ".join(f"w{i}" for i in range(10_000)),
    "🔥💼📄 penalty 🚀",
    "عقد الإيجار والغرامة",
    "שלום penalty עולם",
    "e\u0301\u0301\u0301 pe\u0301nalty",
    "Z̷̢̛a̴l̸g̵o̶",
    "合同违约金条款",
    "契約の解除",
    "   \t\n  ",
    "\u200b\u200d\ufeff",
    "\ud7ff\ue000\uffff",
    "%_ LIKE '%'",
    "?1 :name @x $y",
    "rowid = 1 OR 1=1",
]


@pytest.fixture(scope="module")
def hostile_retriever(make_module_retriever, tmp_path_factory: pytest.TempPathFactory):
    where = (
        tmp_path_factory.mktemp("hostile") / "pages.sqlite"
        if make_module_retriever.backend == "sqlite"
        else None
    )
    opened = make_module_retriever(where)
    opened.index("contract", ["the penalty for late payment", "contract terms and conditions", "body x"])
    opened.index("other", ["penalty", "penalty"])
    return opened


@pytest.mark.parametrize("query", HOSTILE_QUERIES, ids=lambda q: repr(q[:30]))
def test_hostile_query_is_just_text(hostile_retriever: PageRetriever, query):
    matches = hostile_retriever.search("contract", query, max_pages=5)
    assert isinstance(matches, list)
    assert all(isinstance(m, PageMatch) and 1 <= m.page_number <= 3 for m in matches)
    # The database is intact.
    assert hostile_retriever.document_ids() == ["contract", "other"]
    assert numbers(hostile_retriever.search("contract", "penalty")) == [1]
    assert hostile_retriever.page_count("other") == 2


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("-penalty", [1]),  # no negation
        ("NOT penalty", [1]),
        ("contract NOT terms", [2]),
        ("penalty AND contract", [1, 2]),  # OR-ed, not AND-ed
        ("headings:penalty", [1]),  # no column filter
        ("body:x", [3]),
        ("contr*", []),  # no prefix query
        ('"payment late"', [1]),  # no phrase query
        ("NEAR(penalty conditions)", [1, 2]),
    ],
)
def test_query_syntax_is_never_interpreted(hostile_retriever: PageRetriever, query, expected):
    assert sorted(numbers(hostile_retriever.search("contract", query, max_pages=5))) == expected


def test_hostile_doc_ids_are_plain_values(hostile_retriever: PageRetriever):
    for doc_id in ("'; DROP TABLE pi_docs; --", "%", "_", "contract' OR '1'='1"):
        assert hostile_retriever.search(doc_id, "penalty") == []
    assert hostile_retriever.document_ids() == ["contract", "other"]


FTS5_TOKENS = [
    '"',
    "'",
    "NEAR",
    "NEAR(",
    "NEAR/2",
    "AND",
    "OR",
    "NOT",
    "*",
    "^",
    ":",
    "-",
    "+",
    "(",
    ")",
    "{",
    "}",
    ",",
    ";",
    "--",
    "/*",
    "\x00",
    "body",
    "headings:",
    "penalty",
    "contract",
    "the",
    "of",
]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=st.text())
def test_search_never_raises_on_any_text(hostile_retriever: PageRetriever, query):
    matches = hostile_retriever.search("contract", query, max_pages=3)
    assert len(matches) <= 3
    assert all(isinstance(m, PageMatch) and 1 <= m.page_number <= 3 and m.score < 0 for m in matches)
    assert [m.score for m in matches] == sorted(m.score for m in matches)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    tokens=st.lists(st.sampled_from(FTS5_TOKENS) | st.text(max_size=4), max_size=12),
    separator=st.sampled_from(["", " ", "  ", "\t"]),
)
def test_search_never_raises_on_fts5_operator_soup(hostile_retriever: PageRetriever, tokens, separator):
    matches = hostile_retriever.search("contract", separator.join(tokens), max_pages=3)
    assert all(isinstance(m, PageMatch) and 1 <= m.page_number <= 3 for m in matches)
    if any(token in ("penalty", "contract") for token in tokens) and separator:
        assert matches  # a real word in the soup is still searched


@pytest.fixture(scope="module")
def shared_memory_retriever(make_module_retriever):
    return make_module_retriever()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(doc_id=st.text())
@example(doc_id="\x00")
@example(doc_id="a\x00b")
@example(doc_id="x" * 100_000)
@example(doc_id="")
@example(doc_id="'; DROP TABLE pi_docs; --")
def test_any_text_doc_id_round_trips(shared_memory_retriever: PageRetriever, doc_id):
    retriever = shared_memory_retriever
    retriever.index(doc_id, [filler(5), "kangaroo court " + filler(3)])
    assert doc_id in retriever
    assert doc_id in retriever.document_ids()
    assert retriever.page_count(doc_id) == 2
    assert numbers(retriever.search(doc_id, "kangaroo")) == [2]
    assert retriever.delete(doc_id) is True
    assert doc_id not in retriever


def test_doc_ids_differing_only_after_nul_are_distinct(retriever: PageRetriever):
    retriever.index("a\x00b", ["koala"])
    retriever.index("a\x00c", [filler(3), "koala"])
    retriever.index("a", [filler(3), filler(4), "koala"])
    assert numbers(retriever.search("a\x00b", "koala")) == [1]
    assert numbers(retriever.search("a\x00c", "koala")) == [2]
    assert numbers(retriever.search("a", "koala")) == [3]


# -- threads -----------------------------------------------------------------------------------------


def _version_pages(owner: int, version: int) -> list[str]:
    """Pages of one version of a document: the page count and a marker word both encode the version."""
    count = 2 + version % 4
    return [f"shared owner{owner} mark{owner}x{version} page{i}" for i in range(count)]


def test_threads_share_one_retriever(make_retriever, tmp_path: Path):
    threads_count, seconds, max_loops = 8, 2.0, 400
    errors: list[str] = []
    loops = [0] * threads_count
    with make_retriever(make_retriever.where(tmp_path)) as retriever:
        for owner in range(threads_count):
            retriever.index(f"doc{owner}", _version_pages(owner, 0))
        start = threading.Barrier(threads_count)
        deadline = time.monotonic() + seconds + 5

        def work(owner: int) -> None:
            rng = random.Random(owner)
            doc = f"doc{owner}"
            try:
                start.wait()
                stop = time.monotonic() + seconds
                version = 0
                while time.monotonic() < min(stop, deadline) and loops[owner] < max_loops:
                    version += 1
                    pages = _version_pages(owner, version)
                    retriever.index(doc, pages)
                    found = retriever.search(doc, "shared", max_pages=10)
                    if sorted(numbers(found)) != list(range(1, len(pages) + 1)):
                        errors.append(f"{doc} v{version}: pages {numbers(found)}, wrote {len(pages)}")
                    marked = retriever.search(doc, f"mark{owner}x{version}", max_pages=10)
                    if len(marked) != len(pages):
                        errors.append(f"{doc} v{version}: {len(marked)} pages carry the new marker")
                    if retriever.search(doc, f"mark{owner}x{version - 1}", max_pages=10):
                        errors.append(f"{doc} v{version}: old marker still found")
                    last = retriever.snippet(doc, len(pages), "shared")
                    if f"mark{owner}x{version}" not in last:
                        errors.append(f"{doc} v{version}: snippet {last!r}")
                    other = rng.randrange(threads_count)
                    seen = numbers(retriever.search(f"doc{other}", "shared", max_pages=10))
                    if sorted(seen) != list(range(1, len(seen) + 1)) or not 2 <= len(seen) <= 5:
                        errors.append(f"doc{other} seen by {owner}: pages {seen}")
                    loops[owner] += 1
            except Exception:
                errors.append(traceback.format_exc())

        workers = [threading.Thread(target=work, args=(owner,)) for owner in range(threads_count)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(timeout=60)
        assert not any(worker.is_alive() for worker in workers)
        assert errors == []
        assert all(count > 0 for count in loops)
        for owner in range(threads_count):
            assert retriever.page_count(f"doc{owner}") == len(_version_pages(owner, loops[owner]))


# -- processes ---------------------------------------------------------------------------------------


def open_in_process(where: tuple[str, ...]):
    """A retriever opened in a child process: ``("sqlite", path)`` or ``("postgres", dsn, schema)``."""
    if where[0] == "sqlite":
        return SQLitePageRetriever(where[1])
    from extract_thinker_pageindex import PostgresPageRetriever

    return PostgresPageRetriever(where[1], schema=where[2])


def process_worker(
    where: tuple[str, ...], owner: int, others: int, seconds: float, max_loops: int, queue
) -> None:
    """Re-index one document and search all of them; report (owner, errors, last page count, loops).

    Module level so that the spawn start method can import it in the child.
    """
    errors: list[str] = []
    count = loops = 0
    try:
        rng = random.Random(owner)
        with open_in_process(where) as retriever:
            doc = f"proc{owner}"
            stop = time.monotonic() + seconds
            while time.monotonic() < stop and loops < max_loops:
                loops += 1
                pages = _version_pages(owner, loops)
                retriever.index(doc, pages)
                count = len(pages)
                found = numbers(retriever.search(doc, "shared", max_pages=10))
                if sorted(found) != list(range(1, count + 1)):
                    errors.append(f"{doc} v{loops}: pages {found}, wrote {count}")
                if len(retriever.search(doc, f"mark{owner}x{loops}", max_pages=10)) != count:
                    errors.append(f"{doc} v{loops}: new marker not on every page")
                other = f"proc{rng.randrange(others)}"
                if other in retriever:
                    seen = numbers(retriever.search(other, "shared", max_pages=10))
                    if sorted(seen) != list(range(1, len(seen) + 1)) or not 2 <= len(seen) <= 5:
                        errors.append(f"{other} seen by {owner}: pages {seen}")
    except Exception:
        errors.append(traceback.format_exc())
    queue.put((owner, errors, count, loops))


def test_processes_share_one_index(make_retriever, tmp_path: Path):
    processes_count = 3
    place = make_retriever.where(tmp_path)
    make_retriever(place).close()  # created before the processes start, as a deployment would
    if make_retriever.backend == "sqlite":
        where: tuple[str, ...] = ("sqlite", str(place))
    else:
        where = ("postgres", make_retriever.dsn, str(place))
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    processes = [
        context.Process(target=process_worker, args=(where, owner, processes_count, 2.0, 3000, queue))
        for owner in range(processes_count)
    ]
    for process in processes:
        process.start()
    try:
        reports = [queue.get(timeout=90) for _ in processes]
    finally:
        for process in processes:
            process.join(timeout=30)
            if process.is_alive():
                process.kill()
    assert all(process.exitcode == 0 for process in processes)
    assert sorted(report[0] for report in reports) == list(range(processes_count))
    for owner, errors, _, loops in reports:
        assert errors == [], f"process {owner}"
        assert loops > 0
    with make_retriever(place) as retriever:
        assert retriever.document_ids() == [f"proc{owner}" for owner in range(processes_count)]
        for owner, _, count, loops in reports:
            assert retriever.page_count(f"proc{owner}") == count
            assert len(retriever.search(f"proc{owner}", f"mark{owner}x{loops}", max_pages=10)) == count
            assert retriever.search(f"proc{owner}", f"mark{owner}x{loops - 1}", max_pages=10) == []
    if make_retriever.backend == "sqlite":
        conn = sqlite3.connect(place)
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        conn.close()


# -- snippets ----------------------------------------------------------------------------------------


def test_snippet_brackets_matched_words(retriever: PageRetriever):
    retriever.index("doc", ["Early termination requires a penalty payment.", "Nothing relevant here."])
    snippet = retriever.snippet("doc", 1, "terminated penalty")
    assert "[termination]" in snippet
    assert "[penalty]" in snippet
    assert "[requires]" not in snippet
    assert retriever.snippet("doc", 2, "terminated penalty") == ""


def test_snippet_of_a_missing_page_or_wordless_query_is_empty(retriever: PageRetriever):
    retriever.index("doc", ["penalty"])
    assert retriever.snippet("doc", 2, "penalty") == ""
    assert retriever.snippet("doc", 0, "penalty") == ""
    assert retriever.snippet("unknown", 1, "penalty") == ""
    assert retriever.snippet("doc", 1, "the of") == ""


# -- files that are not our index --------------------------------------------------------------------


def test_sqlite_a_file_that_is_not_sqlite_raises_index_format_error(db_path: Path):
    junk = random.Random(7).randbytes(8192)
    db_path.write_bytes(junk)
    with pytest.raises(IndexFormatError) as info:
        SQLitePageRetriever(db_path)
    assert isinstance(info.value, ValueError)
    assert str(db_path) in str(info.value)
    assert db_path.read_bytes() == junk  # the file is left alone


def test_sqlite_an_unknown_schema_version_raises_index_format_error(db_path: Path):
    with SQLitePageRetriever(db_path) as retriever:
        retriever.index("doc", ["text"])
    conn = sqlite3.connect(db_path)
    with conn:
        conn.execute("UPDATE pi_meta SET value = '999' WHERE key = 'schema_version'")
    conn.close()
    with pytest.raises(IndexFormatError) as info:
        SQLitePageRetriever(db_path)
    assert "999" in str(info.value)
    conn = sqlite3.connect(db_path)
    assert conn.execute("SELECT value FROM pi_meta WHERE key = 'schema_version'").fetchone() == ("999",)
    assert conn.execute("SELECT count(*) FROM pi_docs").fetchone() == (1,)
    conn.close()


# -- query_words -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("Revenue GROWTH", ["revenue", "growth"]),
        ("the penalty of the contract", ["penalty", "contract"]),
        ("fees, fees; FEES and taxes fees", ["fees", "taxes"]),
        ("net_income __init__", ["net", "income", "init"]),
        ("(a) \"b\" 'c' d:e f-g h*x", ["b", "c", "e", "f", "g", "h", "x"]),
        ("NEAR/3 AND OR NOT", ["near", "3", "not"]),
        ("sales in May 2024 by IT", ["sales", "may", "2024", "it"]),
        ("May the results not change?", ["results", "not", "change"]),
        ("2015 10-K", ["2015", "10", "k"]),
        ("Café", ["café"]),
        ("", []),
        ("the a an of", []),
        ("!?.,;:", []),
    ],
)
def test_query_words(query, expected):
    assert query_words(query) == expected


@given(st.text())
def test_query_words_are_lowercase_unique_word_runs(query):
    words = query_words(query)
    assert len(words) == len(set(words))
    assert all(word == word.lower() and word and "_" not in word for word in words)
    assert all(word.isalnum() for word in words)
    lowered = query.lower()
    assert all(word in lowered for word in words)
    # Function words written in lower case are never searched (capitalised ones inside a sentence may be).
    assert not {"the", "of", "and", "a"} & set(query_words(query.lower()))


@given(st.lists(st.sampled_from(["alpha", "beta", "gamma", "the", "of", "Alpha"]), max_size=10))
def test_query_words_keep_first_occurrence_order(tokens):
    expected: list[str] = []
    for token in tokens:
        word = token.lower()
        if word not in ("the", "of") and word not in expected:
            expected.append(word)
    assert query_words(" ".join(tokens)) == expected
