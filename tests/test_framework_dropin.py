"""Code written for ExtractThinker's own page retrieval (its main branch, after 0.1.14) runs on ours with only
the import changed: ``SQLitePageRetriever(database)``, ``index(document_id, pages)``,
``search(document_id, query, max_pages=5)``, ``delete(document_id)``, ``PageMatch``,
``DocumentLoaderRAG(loader, query, max_pages=5, retriever=None)`` and ``load_pages(source, positions)``.

Every test here uses only the framework's documented spellings (keywords included), and checks what its
own tests and documentation promise; nothing depends on its unreleased ``Extractor``.
"""

from __future__ import annotations

import shutil
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest
from extract_thinker import Contract, Extractor
from extract_thinker.document_loader.document_loader import DocumentLoader

from extract_thinker_pageindex import DocumentLoaderPyMuPDF, DocumentLoaderRAG, PageMatch, SQLitePageRetriever
from extract_thinker_pageindex.errors import IndexFormatError

PENALTY = "The cancellation penalty is 120 euros, payable within thirty days of notice."


class PagesLoader(DocumentLoader):
    """A loader that gives the same page dicts for any source (as the framework's tests use one)."""

    def __init__(self, pages: list[dict[str, Any]]) -> None:
        super().__init__()
        self.pages = pages
        self.loads = 0

    def can_handle(self, source: Any) -> bool:
        return True

    def load(self, source: Any) -> list[dict[str, Any]]:
        self.loads += 1
        return self.pages


def invoice_pages(count: int) -> list[dict[str, Any]]:
    return [
        {"content": f"Invoice {number} lists office supplies and their delivery."} for number in range(count)
    ]


# -- SQLitePageRetriever ---------------------------------------------------------------------------------


def test_a_file_index_persists_replaces_per_document_and_keeps_documents_apart(tmp_path: Path) -> None:
    database = str(tmp_path / "document-pages.sqlite")
    with SQLitePageRetriever(database=database) as retriever:
        retriever.index(document_id="first", pages=[{"content": "invoice"}, {"content": "payment due"}])
        retriever.index("second", [{"content": "payment secret"}])
        assert retriever.search(document_id="first", query="payment", max_pages=5)[0].page_number == 2
    with SQLitePageRetriever(database) as retriever:
        assert retriever.search("first", "payment")[0].page_number == 2
        retriever.index("first", [{"content": "replacement"}])
        assert retriever.search("first", "payment") == []  # re-indexed without the word
        assert len(retriever.search("second", "payment")) == 1
        retriever.delete(document_id="second")
        assert retriever.search("second", "payment") == []  # deleted
        assert retriever.search("never-indexed", "payment") == []  # unknown


def test_a_page_match_is_a_frozen_position_and_score() -> None:
    with SQLitePageRetriever() as retriever:
        pages = [{"content": "nothing"}, {"content": "termination notice of ninety days"}]
        retriever.index("contract-2026", pages)
        matches = retriever.search("contract-2026", "termination notice", max_pages=5)
        selected = [pages[match.page_number - 1] for match in matches]  # the framework's documented use
    assert selected == [pages[1]]
    (match,) = matches
    assert isinstance(match, PageMatch) and isinstance(match.score, float)
    assert PageMatch(2, match.score) == match
    with pytest.raises(AttributeError):
        match.page_number = 1  # type: ignore[misc]


def test_search_returns_five_pages_by_default() -> None:
    with SQLitePageRetriever() as retriever:
        retriever.index("doc", [{"content": f"royalty payment clause {number}"} for number in range(9)])
        assert len(retriever.search("doc", "royalty")) == 5


@pytest.mark.parametrize("limit", [0, -1, True, 1.5])
def test_a_limit_that_is_not_a_positive_integer_is_a_value_error(limit: Any) -> None:
    with SQLitePageRetriever() as retriever:
        retriever.index("doc", [{"content": "invoice"}])
        with pytest.raises(ValueError, match="positive integer"):
            retriever.search("doc", "invoice", max_pages=limit)
    with pytest.raises(ValueError, match="positive integer"):
        DocumentLoaderRAG(PagesLoader([]), "invoice", max_pages=limit)


def test_a_literal_query_cannot_inject_sql_or_fts_syntax() -> None:
    with SQLitePageRetriever() as retriever:
        retriever.index("doc", [{"content": "invoice total"}])
        assert retriever.search("doc", 'invoice"; DROP TABLE extractthinker_pages; --')
        assert retriever.search("doc", "invoice")


def test_one_retriever_serves_documents_from_four_threads() -> None:
    found: dict[int, list[int]] = {}
    with SQLitePageRetriever() as retriever:

        def work(number: int) -> None:
            document_id = f"document-{number}"
            retriever.index(document_id, [{"content": f"invoice {number}"}, {"content": "other"}])
            found[number] = [match.page_number for match in retriever.search(document_id, "invoice")]

        threads = [
            threading.Thread(target=lambda start=start: [work(n) for n in range(start, 12, 4)])
            for start in range(4)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert [found[number] for number in range(12)] == [[1]] * 12


def _framework_file(path: Path) -> None:
    """A retriever file as ExtractThinker's own SQLitePageRetriever writes it (its schema, its rows)."""
    with sqlite3.connect(path) as connection:
        connection.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS extractthinker_pages "
            "USING fts5(document_id UNINDEXED, page_number UNINDEXED, content)"
        )
        connection.execute("INSERT INTO extractthinker_pages VALUES ('contract', 1, 'cancellation penalty')")
    connection.close()


def test_a_file_the_framework_retriever_wrote_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "document-pages.sqlite"
    _framework_file(path)
    before = path.read_bytes()
    with pytest.raises(IndexFormatError) as info:
        SQLitePageRetriever(str(path))
    message = str(info.value)
    assert "ExtractThinker's own SQLitePageRetriever" in message and "extract-thinker-pageindex" in message
    assert "extractthinker_pages" in message and "left untouched" in message
    assert path.read_bytes() == before
    assert sorted(file.name for file in tmp_path.iterdir()) == ["document-pages.sqlite"]


def test_both_retrievers_can_share_a_file_when_asked_and_neither_touches_the_other(tmp_path: Path) -> None:
    path = tmp_path / "document-pages.sqlite"
    _framework_file(path)
    with SQLitePageRetriever(str(path), allow_foreign_tables=True) as retriever:
        retriever.index("contract", [{"content": "nothing"}, {"content": "cancellation penalty"}])
        assert [match.page_number for match in retriever.search("contract", "penalty")] == [2]
    copy = tmp_path / "copy.sqlite"
    shutil.copy(path, copy)
    with sqlite3.connect(copy) as connection:
        rows = connection.execute(
            "SELECT document_id, page_number FROM extractthinker_pages "
            "WHERE extractthinker_pages MATCH 'penalty'"
        ).fetchall()
    connection.close()
    assert rows == [("contract", 1)]  # the framework's row as it wrote it


# -- DocumentLoaderRAG -----------------------------------------------------------------------------------


def test_one_page_in_a_hundred_is_kept_with_its_evidence_and_the_source_is_not_changed() -> None:
    pages = invoice_pages(100)
    pages[47] = {
        "content": PENALTY,
        "page_number": 48,
        "tables": [[["penalty", "120"]]],
        "image": b"original",
    }
    with DocumentLoaderRAG(PagesLoader(pages), "cancellation penalty", max_pages=1) as loader:
        (selected,) = loader.load("document")
        assert selected["page_number"] == 48
        assert selected["tables"] == pages[47]["tables"] and selected["image"] == b"original"
        assert selected is not pages[47]
        assert loader.last_matches[0].page_number == 48
    assert "page_number" not in pages[0]


def test_no_match_is_a_value_error_that_never_falls_back_to_the_whole_document() -> None:
    with DocumentLoaderRAG(PagesLoader(invoice_pages(3)), "absent") as loader:
        with pytest.raises(ValueError, match=r"^No pages matched"):
            loader.load("source")
        assert loader.last_matches == []


def test_tables_are_searched_and_pages_come_back_in_source_order() -> None:
    pages = [
        {"content": "", "tables": [[["special", "300"]]]},
        {"content": "general"},
        {"content": "special special special"},
    ]
    with DocumentLoaderRAG(PagesLoader(pages), "special", max_pages=2) as loader:
        assert [page["page_number"] for page in loader.load("source")] == [1, 3]


def test_a_borrowed_retriever_stays_open_after_the_loader_closes() -> None:
    with SQLitePageRetriever() as retriever:
        with DocumentLoaderRAG(PagesLoader(invoice_pages(2)), "invoice", retriever=retriever) as loader:
            loader.load("source")
        retriever.index("other", [{"content": "open"}])
        assert retriever.search("other", "open")


def test_load_pages_selects_among_the_retrieved_pages_keeping_source_numbers() -> None:
    pages = [{"content": "nothing"}, {"content": "invoice"}, {"content": "invoice"}]
    with DocumentLoaderRAG(PagesLoader(pages), "invoice", max_pages=2) as loader:
        assert [page["page_number"] for page in loader.load_pages("source", [2, 1])] == [3, 2]


def test_the_wrapper_takes_the_loaders_vision_mode_and_passes_settings_on() -> None:
    inner = DocumentLoaderPyMuPDF()
    inner.set_vision_mode(True)
    loader = DocumentLoaderRAG(inner, "invoice")
    assert loader.vision_mode is True
    loader.set_vision_mode(False)
    loader.set_max_image_size(100)
    assert inner.vision_mode is False and inner.max_image_size == 100
    loader.close()


def test_the_wrapped_loaders_vision_mode_decides_whether_pages_are_drawn(three_pages: Path) -> None:
    inner = DocumentLoaderPyMuPDF()
    inner.set_vision_mode(True)
    with DocumentLoaderRAG(inner, "third") as loader:
        assert "image" in loader.load(str(three_pages))[0]
        inner.set_vision_mode(False)  # turned off on the wrapped loader itself, after wrapping
        assert "image" not in loader.load(str(three_pages))[0]


def test_the_framework_retrieval_module_names_import_from_ours() -> None:
    from extract_thinker_pageindex import retrieval  # for `from extract_thinker.retrieval import ...`

    assert retrieval.DocumentLoaderRAG is DocumentLoaderRAG
    assert retrieval.PageMatch is PageMatch and retrieval.SQLitePageRetriever is SQLitePageRetriever


# -- load_pages on the loaders ---------------------------------------------------------------------------


@pytest.fixture
def three_pages(make_pdf) -> Path:
    return make_pdf(["first page", "second page", "third page"], name="three.pdf")


def test_load_pages_gives_the_pages_in_the_order_asked(three_pages: Path) -> None:
    pages = DocumentLoaderPyMuPDF().load_pages(str(three_pages), [3, 1])
    assert [page["page_number"] for page in pages] == [3, 1]
    assert "third page" in pages[0]["content"] and "first page" in pages[1]["content"]


@pytest.mark.parametrize("positions", [[0], [-1], [True], [1.5], [1, 1]])
def test_bad_positions_are_refused_before_anything_is_loaded(positions: list[Any]) -> None:
    loader = PagesLoader(invoice_pages(3))
    rag = DocumentLoaderRAG(loader, "invoice")
    with pytest.raises(ValueError):
        rag.load_pages("source", positions)
    assert loader.loads == 0
    with pytest.raises(ValueError):
        DocumentLoaderPyMuPDF().load_pages("/no/such/file.pdf", positions)  # not a missing-file error


def test_no_positions_give_no_pages_without_loading() -> None:
    assert DocumentLoaderPyMuPDF().load_pages("/no/such/file.pdf", []) == []


def test_a_position_past_the_end_says_how_many_pages_there_are(three_pages: Path) -> None:
    with pytest.raises(ValueError, match="contains 3 pages"):
        DocumentLoaderPyMuPDF().load_pages(str(three_pages), [4])


def test_a_recent_load_is_served_from_the_loaders_cache_until_the_file_changes(make_pdf) -> None:
    path = make_pdf(["alpha page", "beta page"], name="cached.pdf")
    loader = DocumentLoaderPyMuPDF()
    first = loader.load(str(path))
    first[0]["content"] = "edited by the caller"  # each load gets its own page dicts...
    again = loader.load(str(path))
    assert "alpha page" in again[0]["content"]
    assert again[0]["tables"] is first[0]["tables"]  # ...of one cached read
    assert loader.load(path.read_bytes())[0]["tables"] is not first[0]["tables"]  # another key: read
    make_pdf(["a third text, longer than the others"], name="cached.pdf")  # the file changed: read again
    changed = loader.load(str(path))
    assert "third text" in changed[0]["content"] and changed[0]["tables"] is not first[0]["tables"]
    loader.set_vision_mode(True)
    assert "image" in loader.load(str(path))[0]  # vision mode is part of the key
    loader.set_vision_mode(False)
    assert "image" not in loader.load(str(path))[0]


# -- end to end, with ExtractThinker's Extractor ----------------------------------------------------------


class CancellationTerms(Contract):
    penalty: str


def test_the_documented_example_extracts_from_the_retrieved_pages_only(make_pdf, llm_server: Any) -> None:
    pdf = make_pdf(
        ["Scope of the services and the parties.", PENALTY, "Signatures of both parties and the date."],
        name="long-contract.pdf",
    )
    llm_server.reply_json({"penalty": "120 euros"})
    with DocumentLoaderRAG(
        DocumentLoaderPyMuPDF(),
        query="cancellation termination penalty",
        max_pages=1,
    ) as loader:
        extractor = Extractor(loader)
        extractor.load_llm("openai/test-model")
        result = extractor.extract(str(pdf), CancellationTerms)
        assert [match.page_number for match in loader.last_matches] == [2]
    assert result.penalty == "120 euros"
    prompt = llm_server.prompt_texts()
    assert "cancellation penalty is 120 euros" in prompt
    assert "Scope of the services" not in prompt and "Signatures of both parties" not in prompt


# -- what the framework's wrapper takes that ours refused -------------------------------------------------


class KeyedLoader(PagesLoader):
    """A loader of one's own that reads documents by key from a store, not from local files."""

    SUPPORTED_FORMATS = ["pdf"]  # noqa: RUF012 - the framework's attribute

    def can_handle(self, source: Any) -> bool:
        return isinstance(source, str) and source.startswith("contracts/")


def test_a_loader_that_reads_keys_of_a_store_is_wrapped_as_it_is() -> None:
    # "contracts/2024/acme.pdf" is no local file: asked first, the wrapped loader says it handles it.
    with DocumentLoaderRAG(
        KeyedLoader([{"content": "x"}, {"content": PENALTY}]), "cancellation penalty"
    ) as rag:
        assert rag.can_handle("contracts/2024/acme.pdf") is True
        assert [page["page_number"] for page in rag.load("contracts/2024/acme.pdf")] == [2]


class OwnRetriever:
    """A retriever of one's own with the two methods the framework's wrapper calls (a wrapper around
    another service, say): no ``in``, no page counts."""

    def __init__(self) -> None:
        self.inner = SQLitePageRetriever()
        self.indexed: list[str] = []

    def index(self, document_id: str, pages: list[dict[str, Any]]) -> None:
        self.indexed.append(document_id)
        self.inner.index(document_id, pages)

    def search(self, document_id: str, query: str, max_pages: int = 5) -> list[PageMatch]:
        return self.inner.search(document_id, query, max_pages=max_pages)


def test_a_retriever_of_ones_own_with_index_and_search_is_used() -> None:
    retriever = OwnRetriever()
    loader = PagesLoader([{"content": "x"}, {"content": PENALTY}])
    with DocumentLoaderRAG(loader, "cancellation penalty", retriever=retriever) as rag:
        assert [page["page_number"] for page in rag.load("a")] == [2]
        assert [page["page_number"] for page in rag.load("a")] == [2]
    assert len(retriever.indexed) == 2  # it cannot say what it holds: each load indexes, as the framework's
    retriever.inner.close()


def test_supported_formats_may_be_set_on_the_wrapper() -> None:
    with DocumentLoaderRAG(DocumentLoaderPyMuPDF(), "terms") as rag:
        assert rag.SUPPORTED_FORMATS == ["pdf"]
        rag.SUPPORTED_FORMATS = ["pdf", "png"]
        assert rag.SUPPORTED_FORMATS == ["pdf", "png"]


def test_a_page_whose_content_is_a_list_or_a_dict_is_searched() -> None:
    # The framework's retriever indexes content that is no string as JSON: its words are found.
    pages = [
        {"content": ["cancellation penalty", 120]},
        {"content": {"fee": "late payment"}},
        {"content": "x"},
    ]
    with DocumentLoaderRAG(PagesLoader(pages), "cancellation penalty") as rag:
        assert [page["page_number"] for page in rag.load("a")] == [1]
    with SQLitePageRetriever() as retriever:
        retriever.index("doc", pages)
        assert [match.page_number for match in retriever.search("doc", "late payment fee")] == [2]
        assert [match.page_number for match in retriever.search("doc", "120")] == [1]
