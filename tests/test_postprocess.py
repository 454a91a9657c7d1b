"""Post-processing: printed TOC linking, continuation groups, the abstract, refinement, reference checks."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path
from typing import Any

import pymupdf
import pytest

from extract_thinker_pageindex import (
    Document,
    Page,
    PageIndexWarning,
    ParagraphNode,
    SectionNode,
    TableNode,
    TocEntry,
    build_index,
    index_document,
    load_index,
)
from extract_thinker_pageindex.llm.client import ModelClient
from extract_thinker_pageindex.postprocess.abstract import MAX_ABSTRACT_INPUT
from extract_thinker_pageindex.postprocess.continuations import group_continuations
from extract_thinker_pageindex.postprocess.ids import drop_dangling_references
from extract_thinker_pageindex.postprocess.refine import sample_pages
from extract_thinker_pageindex.postprocess.toc import comparable_title
from llm_server import Reply, completion_body

MODEL = "openai/test-vision"


def model() -> ModelClient:
    return ModelClient(MODEL, sleep=lambda seconds: None)


def scan(path: Path, pages: int) -> Path:
    document = pymupdf.open()
    for _ in range(pages):
        document.new_page(width=612, height=792)
    document.set_metadata({"title": "A Report"})
    document.save(path)
    return path


class Router:
    """Answers each kind of request the library makes: pages (in order), reviews, re-reads, abstracts."""

    def __init__(self, server) -> None:
        self.pages: list[dict[str, Any]] = []
        self.reviews: dict[int, list[float]] = {}
        self.rereads: list[dict[str, Any]] = []
        self.calls: dict[str, int] = {"page": 0, "review": 0, "reread": 0, "abstract": 0}
        self.abstract_inputs: list[int] = []
        server.default = self

    def __call__(self, body: dict[str, Any]) -> Reply:
        system = json.dumps(body["messages"][0]["content"])
        everything = json.dumps(body["messages"])
        if "You check the extraction" in system:
            self.calls["review"] += 1
            page = int(re.search(r"Extraction of page (\d+)", everything).group(1))
            score = self.reviews[page].pop(0)
            answer: dict[str, Any] = {
                "score": score,
                "problems": [] if score >= 0.8 else ["the table lost a row"],
            }
        elif "You write the abstract" in system:
            self.calls["abstract"] += 1
            self.abstract_inputs.append(len(body["messages"][1]["content"]))
            answer = {"missing_entities": ["x"], "abstract": f"Abstract {self.calls['abstract']}."}
        elif "A reviewer checked" in everything:  # the findings come after the fixed prefix
            self.calls["reread"] += 1
            answer = self.rereads.pop(0)
        else:
            self.calls["page"] += 1
            answer = self.pages.pop(0)
        return Reply(200, completion_body(json.dumps(answer)))


def nodes(*items: dict[str, Any]) -> dict[str, Any]:
    return {"nodes": list(items)}


def test_a_printed_toc_links_every_entry_to_its_section_and_page(tmp_path: Path, llm_server) -> None:
    router = Router(llm_server)

    def opening(title: str, level: str = "h1") -> dict[str, Any]:
        return nodes(
            {"type": "section", "id": "s"},
            {"type": "heading", "id": "h", "parent_id": "s", "level": level, "content": title},
            {"type": "paragraph", "id": "p", "parent_id": "s", "content": f"About {title.lower()}."},
        )

    router.pages = [
        nodes({"type": "paragraph", "id": "c", "content": "Annual Report 2024"}),
        nodes(  # page 2: the printed contents, numbered titles, printed page = physical page - 2
            {
                "type": "toc_entry",
                "id": "1",
                "title": "1. Overview .......... 1",
                "printed_page": "1",
                "level": "l1",
            },
            {"type": "toc_entry", "id": "2", "title": "1.1  Markets", "printed_page": "2", "level": "l2"},
            {
                "type": "toc_entry",
                "id": "3",
                "title": "Item 2. Risk Factors",
                "printed_page": "3",
                "level": "l1",
            },
            {
                "type": "toc_entry",
                "id": "4",
                "title": "3 FINANCIAL STATEMENTS",
                "printed_page": 4,
                "level": "l1",
            },
        ),
        opening("Overview"),
        opening("Markets", "h2"),
        opening("Risk Factors"),
        opening("Financial Statements"),
    ]
    document = build_index(
        scan(tmp_path / "report.pdf", 6), strategy="vision", model=model(), parallel=1, abstract=False
    )
    sections = {section.title: section for section in document.sections()}
    expected = {
        "1. Overview .......... 1": ("Overview", 2, None),
        "1.1  Markets": ("Markets", 3, "1. Overview .......... 1"),
        "Item 2. Risk Factors": ("Risk Factors", 4, None),
        "3 FINANCIAL STATEMENTS": ("Financial Statements", 5, None),
    }
    by_id = {entry.id: entry.title for entry in document.toc}
    assert len(document.toc) == 4
    for entry in document.toc:
        title, page, parent = expected[entry.title]
        assert entry.target_section_id == sections[title].id
        assert entry.target_page == page
        assert (by_id[entry.parent_id] if entry.parent_id else None) == parent
    assert [entry.printed_page for entry in document.toc] == ["1", "2", "3", "4"]


@pytest.mark.parametrize(
    ("printed", "plain"),
    [
        ("2.1 Scope of Work", "scope of work"),
        ("Item 7. Management's Discussion", "management s discussion"),
        ("IV. Appendix ........... 112", "appendix"),
        ("  Section 3:  Fees …… 9", "fees"),
        ("Introduction", "introduction"),
        ("2023 Highlights", "2023 highlights"),  # a year is no numbering
        ("Civil Liability", "civil liability"),  # nor a word made of Roman-numeral letters
        ("Note 4(a) - Leases", "leases"),
    ],
)
def test_titles_compare_without_numbering_leaders_case_and_spacing(printed: str, plain: str) -> None:
    assert comparable_title(printed) == plain


def test_a_table_continued_over_three_pages_is_one_group(tmp_path: Path, llm_server) -> None:
    router = Router(llm_server)
    table = {"type": "table", "content": "| a | b |\n|---|---|\n| 1 | 2 |"}
    router.pages = [
        nodes({"id": "t", **table}, {"type": "paragraph", "id": "p", "content": "Text that runs on"}),
        nodes(
            {"type": "paragraph", "id": "p", "content": "and on.", "continuation": True},
            {"id": "t", **table, "continuation": True},
        ),
        nodes({"id": "t", **table, "continuation": True}, {"id": "u", **table}),
    ]
    document = build_index(
        scan(tmp_path / "t.pdf", 3), strategy="vision", model=model(), parallel=1, abstract=False
    )
    tables = [node for _, node in document.iter_nodes() if isinstance(node, TableNode)]
    assert [table.group_id for table in tables] == ["g-p0-t", "g-p0-t", "g-p0-t", None]
    paragraphs = [node for _, node in document.iter_nodes() if isinstance(node, ParagraphNode)]
    assert [paragraph.group_id for paragraph in paragraphs] == ["g-p0-p", "g-p0-p"]


def test_a_continuation_after_a_gap_in_the_pages_starts_no_group() -> None:
    pages = [
        Page(index=0, nodes=[TableNode(id="a", content="|x|")]),
        Page(index=2, nodes=[TableNode(id="b", content="|y|", continuation=True)]),  # page 1 not indexed
    ]
    assert group_continuations(pages) == 0
    assert [page.nodes[0].group_id for page in pages] == [None, None]


def test_the_abstract_makes_exactly_the_configured_calls_with_bounded_input(
    tmp_path: Path, llm_server
) -> None:
    router = Router(llm_server)
    section = (
        "## Section {n}\n\n" + "A long paragraph of the section, repeated to make the document big. " * 60
    )
    text = "# Long Document\n\n" + "\n\n".join(section.format(n=n) for n in range(120))  # ~500,000 characters
    path = tmp_path / "long.md"
    path.write_text(text, encoding="utf-8")
    assert len(text) > 10 * MAX_ABSTRACT_INPUT
    document = build_index(path, model=model(), abstract_iterations=2, abstract_words=80)
    assert router.calls == {"page": 0, "review": 0, "reread": 0, "abstract": 2}
    assert document.abstract == "Abstract 2."
    # Each call shows the bounded source plus the instructions (and the previous abstract), no more.
    assert all(size <= MAX_ABSTRACT_INPUT + 1_000 for size in router.abstract_inputs)
    assert document.usage is not None and document.usage.calls == 2


def test_no_model_means_no_abstract_and_no_call(tmp_path: Path, llm_server) -> None:
    router = Router(llm_server)
    document = build_index("# A\n\nText.\n", content_type="markdown")
    assert document.abstract is None and document.usage is None
    assert sum(router.calls.values()) == 0


def test_refinement_rereads_only_pages_under_the_threshold(tmp_path: Path, llm_server) -> None:
    router = Router(llm_server)
    router.pages = [
        nodes({"type": "paragraph", "id": "p", "content": f"Page {n} first read."}) for n in (1, 2, 3)
    ]
    router.reviews = {1: [0.9], 2: [0.4, 0.95], 3: [0.85]}
    router.rereads = [nodes({"type": "paragraph", "id": "p", "content": "Page 2 read again, with the row."})]
    document = build_index(
        scan(tmp_path / "r.pdf", 3),
        strategy="vision",
        model=model(),
        refine=True,
        refine_sample=3,
        refine_threshold=0.8,
        abstract=False,
        parallel=1,  # pages are answered in order
    )
    assert router.calls == {"page": 3, "review": 4, "reread": 1, "abstract": 0}
    assert [page.nodes[0].content for page in document.pages] == [
        "Page 1 first read.",
        "Page 2 read again, with the row.",
        "Page 3 first read.",
    ]
    assert [
        (item.index, item.score_before, item.score_after, item.reextractions) for item in document.refinement
    ] == [
        (0, 0.9, 0.9, 0),
        (1, 0.4, 0.95, 1),
        (2, 0.85, 0.85, 0),
    ]
    import io

    from extract_thinker_pageindex import inspect

    shown = io.StringIO()
    assert inspect(document, file=shown)["refinement"][1]["reextractions"] == 1
    assert "Refined:  page 2 scored 0.40 -> 0.95 (1 re-read(s))" in shown.getvalue()
    # The re-read was told what the reviewer found.
    reread = next(request for request in llm_server.requests if "A reviewer checked" in json.dumps(request))
    assert "the table lost a row" in json.dumps(reread)


def test_refinement_stops_after_the_bounded_iterations(tmp_path: Path, llm_server) -> None:
    router = Router(llm_server)
    router.pages = [nodes({"type": "paragraph", "id": "p", "content": "Weak."})]
    router.reviews = {1: [0.2, 0.3, 0.4]}
    router.rereads = [nodes({"type": "paragraph", "id": "p", "content": f"Try {n}."}) for n in (1, 2)]
    document = build_index(
        scan(tmp_path / "r.pdf", 1),
        strategy="vision",
        model=model(),
        refine=True,
        refine_iterations=2,
        abstract=False,
    )
    (item,) = document.refinement
    assert (item.score_before, item.score_after, item.reextractions) == (0.2, 0.4, 2)
    assert router.calls["reread"] == 2


def test_refinement_samples_first_last_and_a_seeded_middle() -> None:
    assert sample_pages(range(10), 3, seed=1) == sample_pages(range(10), 3, seed=1)
    chosen = sample_pages(range(10), 4, seed=7)
    assert chosen[0] == 0 and chosen[-1] == 9 and len(chosen) == 4
    assert sample_pages([2, 5], 5) == [2, 5]
    with pytest.raises(ValueError, match="refine_sample"):
        sample_pages(range(3), 0)


def test_refinement_needs_pages_with_images(tmp_path: Path) -> None:
    from extract_thinker_pageindex import ModelRequiredError, UnsupportedFormatError

    with pytest.raises(ModelRequiredError):
        build_index("# A\n", content_type="markdown", refine=True)
    with pytest.raises(UnsupportedFormatError, match="PDFs and images"):
        build_index("# A\n", content_type="markdown", refine=True, model=model())


def test_dangling_references_are_dropped_with_one_warning() -> None:
    pages = [
        Page(
            index=0,
            nodes=[
                SectionNode(id="s"),
                ParagraphNode(id="a", parent_id="s", content="kept"),
                ParagraphNode(id="b", parent_id="gone", content="orphan"),
            ],
        )
    ]
    toc = [
        TocEntry(id="t1", title="S", target_section_id="s"),
        TocEntry(id="t2", parent_id="t9", title="T", target_section_id="nowhere"),
    ]
    with pytest.warns(PageIndexWarning, match="3 reference"):
        assert drop_dangling_references(pages, toc) == 3
    assert [node.parent_id for node in pages[0].nodes] == [None, "s", None]
    assert (toc[1].parent_id, toc[1].target_section_id) == (None, None)
    Document(name="d", pages=pages, toc=toc)  # validates: nothing dangles


def test_every_kind_of_document_round_trips_through_the_store(tmp_path: Path, llm_server) -> None:
    router = Router(llm_server)
    router.pages = [
        nodes(
            {"type": "section", "id": "s", "description": "d"},
            {"type": "heading", "id": "h", "parent_id": "s", "level": "h1", "content": "T"},
            {"type": "image", "id": "i", "kind": "chart", "bbox": [10, 10, 300, 300]},
        )
    ]
    markdown = tmp_path / "m.md"
    markdown.write_text(textwrap.dedent("# A\n\ntext\n\n## B\n\n- x\n"), encoding="utf-8")
    sample = Path(__file__).resolve().parents[1] / "examples" / "data" / "service-agreement.pdf"
    built = [
        index_document(markdown),
        index_document(sample, output=tmp_path / "pdf.pageindex"),
        index_document(scan(tmp_path / "v.pdf", 1), strategy="vision", model=model()),
    ]
    for document, written in built:
        loaded = load_index(written)
        strip = {"pages": {"__all__": {"nodes": {"__all__": {"image_path"}}}}}
        assert loaded.model_dump(exclude=strip) == document.model_dump(exclude=strip)
        assert Document.model_validate_json(loaded.model_dump_json()).model_dump() == loaded.model_dump()
    assert built[2][0].abstract == "Abstract 3."
