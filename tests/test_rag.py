"""DocumentLoaderRAG: retrieval before extraction, alone and inside ExtractThinker's Extractor."""

from __future__ import annotations

import asyncio
import base64
import io
import json
import re
import threading
from pathlib import Path
from typing import Any

import pytest
from extract_thinker import Contract, Extractor
from extract_thinker.document_loader.document_loader import DocumentLoader
from PIL import Image

from extract_thinker_pageindex import (
    DocumentLoaderPyMuPDF,
    DocumentLoaderRAG,
    InvalidOptionError,
    NoMatchError,
    PageSpecError,
    RetrieverClosedError,
    SQLitePageRetriever,
)
from llm_server import LLMServer, Reply, completion_body

FILLER = "General provisions about delivery schedules, scope of work and the service description."


def contract_pages(marker: str, special: dict[int, str]) -> list[str]:
    """Ten pages, each tagged 'marker-N'; the pages in ``special`` carry extra text."""
    return [f"{marker}-{number} {special.get(number, FILLER)}" for number in range(1, 11)]


@pytest.fixture
def contract_pdf(make_pdf):
    return make_pdf(
        contract_pages(
            "PAGE",
            {
                3: "Indemnification: the supplier shall indemnify the customer.",
                8: "Indemnification terms. Indemnification covers all losses; "
                "indemnification survives termination.",
            },
        ),
        name="contract.pdf",
    )


class ParagraphLoader(DocumentLoader):
    """A third-party-style loader: one page per paragraph of a text file, no page_number key."""

    SUPPORTED_FORMATS = ["txt"]  # noqa: RUF012 - the framework's attribute

    def load(self, source: Any) -> list[dict[str, Any]]:
        text = Path(source).read_text(encoding="utf-8")
        return [{"content": part, "custom": index} for index, part in enumerate(text.split("\n\n"))]


class Terms(Contract):
    clause: str


def test_best_pages_come_back_in_source_order_with_their_keys(contract_pdf: Path) -> None:
    with DocumentLoaderRAG(DocumentLoaderPyMuPDF(), query="indemnification", max_pages=2) as loader:
        pages = loader.load(str(contract_pdf))
        assert [page["page_number"] for page in pages] == [3, 8]
        assert [match.page_number for match in loader.last_matches] == [8, 3]
        assert loader.last_matches[0].score < loader.last_matches[1].score < 0
        for page in pages:
            assert set(page) >= {"content", "markdown", "tables", "page_number"}
        assert "supplier shall indemnify" in pages[0]["content"]


def test_existing_page_numbers_are_kept_not_renumbered(contract_pdf: Path) -> None:
    inner = DocumentLoaderPyMuPDF(pages="4-10")
    with DocumentLoaderRAG(inner, query="indemnification", max_pages=1) as loader:
        pages = loader.load(str(contract_pdf))
        # Page 8 of the PDF is position 5 of the loaded pages; its page_number stays 8.
        assert [page["page_number"] for page in pages] == [8]
        assert loader.last_matches[0].page_number == 5


def test_missing_page_numbers_are_set_to_the_source_position(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("alpha intro\n\nbeta details\n\nwarranty clause here\n\ngamma end", encoding="utf-8")
    with DocumentLoaderRAG(ParagraphLoader(), query="warranty", max_pages=1) as loader:
        pages = loader.load(str(path))
    assert pages == [{"content": "warranty clause here", "custom": 2, "page_number": 3}]


def test_no_match_says_to_broaden_the_query(contract_pdf: Path) -> None:
    with (
        DocumentLoaderRAG(DocumentLoaderPyMuPDF(), query="zeppelin dirigible") as loader,
        pytest.raises(NoMatchError, match="broaden the query or load the whole document"),
    ):
        loader.load(str(contract_pdf))


@pytest.mark.parametrize("query", ["", "   ", "the of and", "?!", None])
def test_a_query_without_words_is_refused_up_front(query: Any) -> None:
    with pytest.raises(InvalidOptionError, match="no searchable words"):
        DocumentLoaderRAG(DocumentLoaderPyMuPDF(), query=query)


@pytest.mark.parametrize("retriever", ["pages.sqlite", object(), SQLitePageRetriever])
def test_a_retriever_must_be_a_page_retriever(retriever: Any) -> None:
    with pytest.raises(InvalidOptionError, match="retriever must be a page retriever"):
        DocumentLoaderRAG(DocumentLoaderPyMuPDF(), query="x", retriever=retriever)


@pytest.mark.parametrize("max_pages", [0, -2, 1.5, True])
def test_max_pages_must_be_a_positive_whole_number(max_pages: Any) -> None:
    with pytest.raises(InvalidOptionError, match="max_pages"):
        DocumentLoaderRAG(DocumentLoaderPyMuPDF(), query="x", max_pages=max_pages)


def test_load_pages_selects_within_the_retrieved_pages_in_the_order_asked(contract_pdf: Path) -> None:
    with DocumentLoaderRAG(DocumentLoaderPyMuPDF(), query="indemnification", max_pages=2) as loader:
        assert [page["page_number"] for page in loader.load_pages(str(contract_pdf), [2])] == [8]
        assert [page["page_number"] for page in loader.load_pages(str(contract_pdf), [2, 1])] == [8, 3]
        with pytest.raises(PageSpecError, match="out of range"):
            loader.load_pages(str(contract_pdf), [3])


def test_an_owned_retriever_is_closed_and_a_borrowed_one_is_not(contract_pdf: Path, tmp_path: Path) -> None:
    loader = DocumentLoaderRAG(DocumentLoaderPyMuPDF(), query="indemnification")
    with loader:
        loader.load(str(contract_pdf))
    with pytest.raises(RetrieverClosedError):
        loader.retriever.search("anything", "indemnification")

    with SQLitePageRetriever(tmp_path / "pages.sqlite") as shared:
        with DocumentLoaderRAG(
            DocumentLoaderPyMuPDF(), query="indemnification", retriever=shared
        ) as borrowed:
            borrowed.load(str(contract_pdf))
        # Still open after the loader closed, and it holds the indexed document.
        assert len(shared.document_ids()) == 1


def test_document_id_comes_from_the_content(contract_pdf: Path, make_pdf) -> None:
    with (
        SQLitePageRetriever() as retriever,
        DocumentLoaderRAG(DocumentLoaderPyMuPDF(), query="indemnification", retriever=retriever) as loader,
    ):
        loader.load(str(contract_pdf))
        loader.load(io.BytesIO(contract_pdf.read_bytes()))  # same content by another route
        assert len(retriever.document_ids()) == 1
        changed = make_pdf(contract_pages("OTHER", {2: "Indemnification only here."}), name="changed.pdf")
        assert [page["page_number"] for page in loader.load(str(changed))] == [2]
        assert len(retriever.document_ids()) == 2


def test_it_presents_itself_as_the_wrapped_loader(contract_pdf: Path, tmp_path: Path) -> None:
    inner = DocumentLoaderPyMuPDF()
    with DocumentLoaderRAG(inner, query="indemnification", max_pages=1) as loader:
        assert loader.SUPPORTED_FORMATS == ["pdf"]
        assert loader.can_handle(str(contract_pdf))
        text_file = tmp_path / "a.txt"
        text_file.write_text("x", encoding="utf-8")
        assert not loader.can_handle(str(text_file))
        assert loader.can_handle_vision(str(contract_pdf))
        loader.set_vision_mode(True)
        assert inner.vision_mode
        (page,) = loader.load(str(contract_pdf))
        assert page["image"].startswith(b"\x89PNG")


# -- inside ExtractThinker's Extractor, against a local OpenAI-compatible server ---------------------


def test_extractor_sends_only_the_selected_pages_to_the_model(
    contract_pdf: Path, llm_server: LLMServer
) -> None:
    llm_server.reply_json({"clause": "supplier shall indemnify"})
    with DocumentLoaderRAG(DocumentLoaderPyMuPDF(), query="indemnification", max_pages=2) as loader:
        extractor = Extractor(loader)
        extractor.load_llm("openai/test-model")
        result = extractor.extract(str(contract_pdf), Terms)
    assert result.clause == "supplier shall indemnify"
    assert llm_server.paths == ["/v1/chat/completions"]
    prompt = llm_server.prompt_texts()
    assert "PAGE-3" in prompt and "PAGE-8" in prompt
    others = {f"PAGE-{number}" for number in range(1, 11)} - {"PAGE-3", "PAGE-8"}
    sent = set(re.findall(r"PAGE-\d+", prompt))
    assert sent == {"PAGE-3", "PAGE-8"}
    assert not sent & others


def echo_marker(body: dict[str, Any]) -> Reply:
    """Answer with the document markers seen in the prompt, so concurrent calls can be told apart."""
    text = json.dumps(body.get("messages", []))
    markers = sorted(set(re.findall(r"DOC[A-Z]-\d+", text)))
    return Reply(200, completion_body(json.dumps({"clause": " ".join(markers)})))


def test_one_retriever_shared_by_loaders_and_documents(
    make_pdf, tmp_path: Path, llm_server: LLMServer
) -> None:
    llm_server.default = echo_marker
    first = make_pdf(contract_pages("DOCA", {4: "Governing law: New York."}), name="a.pdf")
    second = make_pdf(contract_pages("DOCB", {9: "Governing law: Delaware."}), name="b.pdf")
    with SQLitePageRetriever(tmp_path / "shared.sqlite") as retriever:
        answers = []
        for path in (first, second):
            with DocumentLoaderRAG(
                DocumentLoaderPyMuPDF(), query="governing law", max_pages=1, retriever=retriever
            ) as loader:
                extractor = Extractor(loader)
                extractor.load_llm("openai/test-model")
                answers.append(extractor.extract(str(path), Terms).clause)
        assert answers == ["DOCA-4", "DOCB-9"]
        assert len(retriever.document_ids()) == 2
    # The file outlives the process's retriever: a new one finds both documents.
    with SQLitePageRetriever(tmp_path / "shared.sqlite") as reopened:
        assert len(reopened.document_ids()) == 2


def test_concurrent_extractions_from_threads_and_async(make_pdf, llm_server: LLMServer) -> None:
    llm_server.default = echo_marker
    paths = {
        letter: make_pdf(
            contract_pages(f"DOC{letter}", {index + 2: "Warranty period is two years."}), name=f"{letter}.pdf"
        )
        for index, letter in enumerate("CDEF")
    }
    with DocumentLoaderRAG(DocumentLoaderPyMuPDF(), query="warranty period", max_pages=1) as loader:
        extractor = Extractor(loader)
        extractor.load_llm("openai/test-model")
        results: dict[str, str] = {}
        errors: list[BaseException] = []

        def work(letter: str) -> None:
            try:
                results[letter] = extractor.extract(str(paths[letter]), Terms).clause
            except BaseException as exc:  # reported below
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(letter,)) for letter in "CD"]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)

        async def both() -> list[Any]:
            return await asyncio.gather(
                extractor.extract_async(str(paths["E"]), Terms),
                extractor.extract_async(str(paths["F"]), Terms),
            )

        async_results = asyncio.run(both())
    assert not errors
    assert results == {"C": "DOCC-2", "D": "DOCD-3"}
    assert [item.clause for item in async_results] == ["DOCE-4", "DOCF-5"]
    assert len(llm_server.requests) == 4


def test_vision_mode_sends_the_selected_pages_images(contract_pdf: Path, llm_server: LLMServer) -> None:
    llm_server.reply_json({"clause": "seen"})
    with DocumentLoaderRAG(DocumentLoaderPyMuPDF(dpi=50), query="indemnification", max_pages=2) as loader:
        extractor = Extractor(loader)
        extractor.load_llm("openai/test-model")
        assert extractor.extract(str(contract_pdf), Terms, vision=True).clause == "seen"
    urls = llm_server.image_urls()
    assert len(urls) == 2
    for url in urls:
        header, data = url.split(",", 1)
        assert header.startswith("data:image/")
        image = Image.open(io.BytesIO(base64.b64decode(data)))
        # PyMuPDF's default page is A4, 595 x 842 pt: at 50 dpi, 414 x 585 px.
        assert image.size == (414, 585)


def test_the_owned_retriever_keeps_only_the_latest_documents(tmp_path: Path) -> None:
    from extract_thinker_pageindex.loaders.rag import KEPT_DOCUMENTS

    paths = []
    for number in range(30):
        path = tmp_path / f"memo{number}.txt"
        path.write_text(
            f"Memo {number} intro.\n\nIndemnification clause of memo {number}.\n\nClosing {number}."
        )
        paths.append(path)
    loader = DocumentLoaderRAG(ParagraphLoader(), query="indemnification", max_pages=1)

    for number, path in enumerate(paths):
        assert loader.load(path)[0]["content"] == f"Indemnification clause of memo {number}."
        assert len(loader.retriever.document_ids()) == min(number + 1, KEPT_DOCUMENTS)

    latest = set(loader.retriever.document_ids())
    assert loader.load_pages(paths[-1], [1])[0]["custom"] == 1  # a recent document: not indexed again
    assert set(loader.retriever.document_ids()) == latest
    # An older document was dropped, and a new load of it indexes it again.
    assert loader.load(paths[0])[0]["content"] == "Indemnification clause of memo 0."
    assert len(loader.retriever.document_ids()) == KEPT_DOCUMENTS
    loader.close()


def test_a_retriever_passed_in_keeps_every_document(tmp_path: Path) -> None:
    with SQLitePageRetriever(tmp_path / "all.sqlite") as retriever:
        loader = DocumentLoaderRAG(
            ParagraphLoader(), query="indemnification", max_pages=1, retriever=retriever
        )
        for number in range(10):
            path = tmp_path / f"memo{number}.txt"
            path.write_text(f"Intro.\n\nIndemnification of memo {number}.")
            loader.load(path)
        assert len(retriever.document_ids()) == 10


def test_threads_loading_many_documents_through_one_owned_retriever(tmp_path: Path) -> None:
    paths = []
    for number in range(24):
        path = tmp_path / f"memo{number}.txt"
        path.write_text(f"Intro {number}.\n\nIndemnification clause {number}.")
        paths.append(path)
    loader = DocumentLoaderRAG(ParagraphLoader(), query="indemnification", max_pages=1)
    results: dict[int, str] = {}
    errors: list[BaseException] = []

    def work(offset: int) -> None:
        try:
            for number in range(offset, len(paths), 4):
                for _ in range(3):
                    results[number] = loader.load(paths[number])[0]["content"]
        except BaseException as exc:  # collected, then asserted
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(offset,)) for offset in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    assert results == {number: f"Indemnification clause {number}." for number in range(24)}
    loader.close()


# -- vision mode: only the kept pages are drawn -------------------------------------------------------------


@pytest.fixture
def drawn_pages(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The page numbers PyMuPDF draws (its own get_pixmap, counted as it is called, then run as it is)."""
    import pymupdf

    drawn: list[int] = []
    original = pymupdf.Page.get_pixmap

    def counting(page: Any, *args: Any, **kwargs: Any) -> Any:
        drawn.append(page.number + 1)
        return original(page, *args, **kwargs)

    monkeypatch.setattr(pymupdf.Page, "get_pixmap", counting)
    return drawn


def png_size(data: bytes) -> tuple[int, int]:
    with Image.open(io.BytesIO(data)) as image:
        assert image.format == "PNG"
        return image.size


@pytest.mark.parametrize("inner", ["pymupdf", "pageindex"])
def test_in_vision_mode_only_the_kept_pages_are_drawn(
    contract_pdf: Path, drawn_pages: list[int], tmp_path: Path, inner: str
) -> None:
    from extract_thinker_pageindex import DocumentLoaderPageIndex

    loader = DocumentLoaderPyMuPDF() if inner == "pymupdf" else DocumentLoaderPageIndex(cache_dir=tmp_path)
    with DocumentLoaderRAG(loader, query="indemnification", max_pages=2) as rag:
        rag.set_vision_mode(True)
        pages = rag.load(str(contract_pdf))
    assert [page["page_number"] for page in pages] == [3, 8]
    assert sorted(drawn_pages) == [3, 8]  # of ten pages, the two kept (every page was drawn before)
    assert all(png_size(page["image"]) == (1240, 1755) for page in pages)  # A4 at 150 dpi, as load draws it
    # The same images as the wrapped loader's own load gives those pages.
    loader.set_vision_mode(True)
    whole = {page["page_number"]: page["image"] for page in loader.load(str(contract_pdf))}
    assert all(page["image"] == whole[page["page_number"]] for page in pages)


def test_without_vision_mode_no_page_is_drawn(contract_pdf: Path, drawn_pages: list[int]) -> None:
    with DocumentLoaderRAG(DocumentLoaderPyMuPDF(), query="indemnification", max_pages=2) as rag:
        pages = rag.load(str(contract_pdf))
    assert drawn_pages == [] and all("image" not in page for page in pages)


def test_a_loader_without_the_two_steps_is_loaded_whole_in_vision_mode(tmp_path: Path) -> None:
    class Pictured(ParagraphLoader):
        def load(self, source: Any) -> list[dict[str, Any]]:
            pages = super().load(source)
            return [{**page, "image": b"picture-%d" % page["custom"]} for page in pages]

    source = tmp_path / "notes.txt"
    source.write_text(
        "Rent is due monthly.\n\nThe deposit is refunded.\n\nRent rises yearly.", encoding="utf-8"
    )
    with DocumentLoaderRAG(Pictured(), query="rent", max_pages=2) as rag:
        rag.set_vision_mode(True)
        pages = rag.load(str(source))
    assert [page["image"] for page in pages] == [b"picture-0", b"picture-2"]


def test_a_stream_is_read_again_for_the_images(contract_pdf: Path) -> None:
    stream = io.BytesIO(contract_pdf.read_bytes())
    with DocumentLoaderRAG(DocumentLoaderPyMuPDF(), query="indemnification", max_pages=1) as rag:
        rag.set_vision_mode(True)
        (page,) = rag.load(stream)
    assert page["page_number"] == 8 and png_size(page["image"]) == (1240, 1755)
