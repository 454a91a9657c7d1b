"""DocumentLoaderPageIndex: page dicts from the page index, the cache, retrieval over sections."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pymupdf
import pytest
from extract_thinker import Contract, Extractor
from extract_thinker.document_loader.document_loader import DocumentLoader
from pydantic import BaseModel, Field

from extract_thinker_pageindex import (
    DocumentLoaderPageIndex,
    DocumentLoaderRAG,
    InvalidOptionError,
    ModelRequiredError,
    query_from_contract,
)
from extract_thinker_pageindex.loaders.pageindex import default_cache_dir
from llm_server import Reply, completion_body

SAMPLE = Path(__file__).resolve().parents[1] / "examples" / "data"


def test_pages_are_markdown_with_sections_and_nodes(tmp_path: Path) -> None:
    loader = DocumentLoaderPageIndex(cache_dir=tmp_path / "cache")
    assert isinstance(loader, DocumentLoader)
    pages = loader.load(str(SAMPLE / "service-agreement.md"))
    assert [page["page_number"] for page in pages] == [1, 2, 3, 4]
    third = pages[2]
    assert third["content"].startswith("# Part II — Commercial Terms\n\n## 3. Fees and Payment")
    assert "### 4.1 Termination for convenience" in third["content"]
    assert "| Service tier | Monthly fee (USD) |" in third["content"]
    assert third["markdown"] == third["content"]
    assert third["sections"][:2] == [
        "Part II — Commercial Terms",
        "Part II — Commercial Terms > 3. Fees and Payment",
    ]
    assert {node["type"] for node in third["nodes"]} >= {"section", "heading", "paragraph", "table"}
    assert "image" not in third
    # List items stay on adjacent lines, nested ones indented.
    assert "- **Order Form**: an ordering document" in pages[1]["content"]
    assert "\n  - An Order Form may add service levels." in pages[1]["content"]


def test_the_second_load_comes_from_the_cache(tmp_path: Path, llm_server) -> None:
    answers = []

    def answer(body):
        answers.append(body)
        return Reply(
            200,
            completion_body(
                json.dumps({"nodes": [{"type": "paragraph", "id": "a", "content": "Scanned text."}]})
            ),
        )

    llm_server.default = answer
    document = pymupdf.open()
    document.new_page()
    document.set_metadata({"title": "Scan"})
    path = tmp_path / "scan.pdf"
    document.save(path)
    loader = DocumentLoaderPageIndex(cache_dir=tmp_path / "cache", model="openai/test", abstract=False)
    first = loader.load(str(path))
    assert loader.last_from_cache is False and len(answers) == 1
    second = loader.load(str(path))
    assert loader.last_from_cache is True and len(answers) == 1  # no model call the second time
    assert first == second
    assert first[0]["content"] == "Scanned text."
    # Other options are another entry; the same bytes under another name are the same entry.
    other = DocumentLoaderPageIndex(
        cache_dir=tmp_path / "cache", model="openai/test", abstract=False, dpi=100
    )
    other.load(str(path))
    assert other.last_from_cache is False and len(answers) == 2
    copy = tmp_path / "copy.pdf"
    copy.write_bytes(path.read_bytes())
    loader.load(str(copy))
    assert loader.last_from_cache is True and len(answers) == 2


def test_client_settings_that_change_answers_are_another_cache_entry(tmp_path: Path, llm_server) -> None:
    from extract_thinker_pageindex.llm.client import ImageLimits, ModelClient

    llm_server.default = lambda body: Reply(
        200, completion_body(json.dumps({"nodes": [{"type": "paragraph", "id": "a", "content": "Text."}]}))
    )
    document = pymupdf.open()
    document.new_page()
    document.set_metadata({"title": "Scan"})
    path = tmp_path / "scan.pdf"
    document.save(path)

    def load(model) -> bool:
        loader = DocumentLoaderPageIndex(cache_dir=tmp_path / "cache", model=model, abstract=False)
        loader.load(str(path))
        return loader.last_from_cache

    assert load("openai/test") is False
    # A client with the name's own settings is the same model: the same entry.
    assert load(ModelClient("openai/test", timeout=30, attempts=2)) is True
    # Smaller page pictures, other box coordinates, a forced schema path: other answers, other entries.
    smaller = ImageLimits(max_side=800, max_pixels=500_000)
    assert load(ModelClient("openai/test", image_limits=smaller)) is False
    assert load(ModelClient("openai/test", bbox_scale="normalized")) is False
    assert load(ModelClient("openai/test", structured_output=True)) is False
    assert load(ModelClient("openai/test", structured_output=True)) is True
    assert len(list((tmp_path / "cache").glob("*.pageindex"))) == 4


def test_a_damaged_cache_entry_is_rebuilt(tmp_path: Path) -> None:
    loader = DocumentLoaderPageIndex(cache_dir=tmp_path)
    loader.load(str(SAMPLE / "service-agreement.md"))
    (entry,) = tmp_path.glob("*.pageindex")
    (entry / "document.json").write_text("{ broken", encoding="utf-8")
    pages = loader.load(str(SAMPLE / "service-agreement.md"))
    assert loader.last_from_cache is False and len(pages) == 4
    assert json.loads((entry / "document.json").read_text(encoding="utf-8"))["name"] == "service-agreement"


def test_no_cache_and_the_default_cache_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    loader = DocumentLoaderPageIndex(cache_dir=False)
    loader.load(str(SAMPLE / "service-agreement.md"))
    loader.load(str(SAMPLE / "service-agreement.md"))
    assert loader.last_from_cache is False
    monkeypatch.setenv("EXTRACT_THINKER_PAGEINDEX_CACHE", str(tmp_path / "explicit"))
    assert default_cache_dir() == tmp_path / "explicit"
    monkeypatch.delenv("EXTRACT_THINKER_PAGEINDEX_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "extract-thinker-pageindex"


def test_unknown_options_and_missing_models_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="colour"):
        DocumentLoaderPageIndex(colour="red")
    picture = tmp_path / "photo.png"
    from PIL import Image

    Image.new("RGB", (40, 40)).save(picture)
    with pytest.raises(ModelRequiredError):
        DocumentLoaderPageIndex(cache_dir=tmp_path / "c").load(str(picture))


def test_vision_mode_attaches_page_images_and_streams_work(tmp_path: Path) -> None:
    loader = DocumentLoaderPageIndex(cache_dir=tmp_path, dpi=50)
    assert loader.can_handle_vision(str(SAMPLE / "service-agreement.pdf"))
    assert not loader.can_handle_vision(str(SAMPLE / "service-agreement.md"))
    loader.set_vision_mode(True)
    pages = loader.load(io.BytesIO((SAMPLE / "service-agreement.pdf").read_bytes()))
    assert len(pages) == 4 and all(page["image"].startswith(b"\x89PNG") for page in pages)
    assert loader.can_handle(str(SAMPLE / "service-agreement.pdf"))


def test_rag_over_page_index_pages_finds_words_only_in_section_titles(tmp_path: Path) -> None:
    text = "# Annex\n\n## Liquidated Damages\n\nThe amounts below apply per day of delay.\n\n# Other\n\nNo.\n"
    path = tmp_path / "annex.md"
    path.write_text(text, encoding="utf-8")
    inner = DocumentLoaderPageIndex(cache_dir=tmp_path / "cache")
    with DocumentLoaderRAG(inner, query="liquidated damages", max_pages=1) as loader:
        (page,) = loader.load(str(path))
    # "liquidated" is only in the heading path, not in the page's paragraph.
    assert page["page_number"] == 1
    assert page["sections"] == ["Annex", "Annex > Liquidated Damages"]


class Penalty(BaseModel):
    percent_of_remaining_fees: float = Field(description="Early termination penalty")


class CancellationTerms(Contract):
    notice_period: str = Field(description="Days of written notice required to terminate for convenience")
    penalty: Penalty
    governingLaw: str = Field(alias="governing_law", title="Governing law")


def test_query_from_contract_reads_names_titles_descriptions_and_nested_models() -> None:
    query = query_from_contract(CancellationTerms)
    words = query.split()
    assert words[:2] == ["cancellation", "terms"]
    for expected in (
        "notice",
        "period",
        "written",
        "convenience",
        "penalty",
        "percent",
        "remaining",
        "early",
        "governing",
        "law",
    ):
        assert expected in words
    assert len(words) == len(set(words))  # each word once
    assert "written" not in query_from_contract(CancellationTerms, include_descriptions=False).split()
    with pytest.raises(InvalidOptionError):
        query_from_contract("not a class")  # type: ignore[arg-type]


def test_extraction_with_a_contract_query_over_the_page_index(tmp_path: Path, llm_server) -> None:
    llm_server.reply_json(
        {
            "notice_period": "ninety (90) days",
            "penalty": {"percent_of_remaining_fees": 50},
            "governing_law": "New York",
        }
    )
    inner = DocumentLoaderPageIndex(cache_dir=tmp_path)
    with DocumentLoaderRAG(inner, query=query_from_contract(CancellationTerms), max_pages=2) as loader:
        extractor = Extractor(loader)
        extractor.load_llm("openai/test-model")
        result = extractor.extract(str(SAMPLE / "service-agreement.pdf"), CancellationTerms)
        chosen = sorted(match.page_number for match in loader.last_matches)
    assert result.notice_period == "ninety (90) days"
    assert chosen == [3, 4]  # termination (page 3) and governing law (page 4)
    # ExtractThinker sends the pages as YAML, which may wrap lines: look for single words.
    prompt = llm_server.prompt_texts()
    assert "Commercial" in prompt and "Confidentiality" in prompt  # pages 3 and 4
    assert "Definitions" not in prompt and "Scope" not in prompt  # page 2 stayed out
