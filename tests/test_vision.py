"""The vision strategy against the local OpenAI-compatible server: structure, boxes, faults, selections."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pymupdf
import pytest
from PIL import Image

from extract_thinker_pageindex import (
    DocumentLoadError,
    HeadingNode,
    ImageNode,
    LLMExtractionError,
    ModelRequiredError,
    PageIndexWarning,
    ParagraphNode,
    SectionNode,
    TableNode,
    build_index,
    index_document,
    load_index,
)
from extract_thinker_pageindex.llm.client import ModelClient
from extract_thinker_pageindex.strategies.text_model import MAX_CHUNK_CHARS, text_chunks
from extract_thinker_pageindex.strategies.vision import RenderedPage, scale_bbox
from llm_server import LLMServer, Reply, completion_body

MODEL = "openai/test-vision"


def blank_pdf(path: Path, pages: int, *, title: str | None = "Scanned Report") -> Path:
    """Pages with no text at all (as scans are), US Letter, each with a grey box to look at."""
    document = pymupdf.open()
    for _ in range(pages):
        page = document.new_page(width=612, height=792)
        page.draw_rect(pymupdf.Rect(100, 100, 300, 200), color=(0.5, 0.5, 0.5), fill=(0.5, 0.5, 0.5))
    if title:
        document.set_metadata({"title": title})
    document.save(path)
    return path


def page_answer(*nodes: dict[str, Any]) -> dict[str, Any]:
    return {"nodes": list(nodes)}


class Script:
    """Answers page requests from a queue in order, and title requests with a fixed title."""

    def __init__(self, server: LLMServer) -> None:
        self.server = server
        self.pages: list[Any] = []
        self.title = "Inferred Title"
        self.abstract_calls = 0
        server.default = self

    def __call__(self, body: dict[str, Any]) -> Reply:
        # instructor folds the schema into the system message, which may arrive as a list of parts.
        system = json.dumps(body["messages"][0]["content"])
        if "Give the title" in system:
            return Reply(200, completion_body(json.dumps({"title": self.title})))
        if "You write the abstract" in system:
            self.abstract_calls += 1
            answer = {"missing_entities": [], "abstract": f"Abstract, round {self.abstract_calls}."}
            return Reply(200, completion_body(json.dumps(answer)))
        answer = self.pages.pop(0)
        if isinstance(answer, Reply):
            return answer
        return Reply(200, completion_body(json.dumps(answer), prompt_tokens=1000, completion_tokens=50))


def client(**options: Any) -> ModelClient:
    return ModelClient(MODEL, **{"sleep": lambda seconds: None, **options})


def test_a_multi_page_pdf_becomes_exact_nodes_with_sections_across_pages(tmp_path: Path, llm_server) -> None:
    script = Script(llm_server)
    script.pages = [
        page_answer(
            {"type": "header", "id": "n1", "content": "ACME Annual Report"},
            {"type": "section", "id": "n2", "description": "How the year went."},
            {"type": "heading", "id": "n3", "parent_id": "n2", "level": "h1", "content": "Results"},
            {"type": "paragraph", "id": "n4", "parent_id": "n2", "content": "Revenue rose 12%."},
            {"type": "footer", "id": "n5", "content": "1"},
        ),
        page_answer(
            # No heading on this page: its text continues the section opened on page 1.
            {"type": "paragraph", "id": 1, "content": "Costs fell.", "continuation": True},
            {"type": "section", "id": 2},
            {"type": "heading", "id": 3, "parent_id": 2, "level": "h2", "content": "Outlook"},
            {"type": "list_item", "id": 4, "parent_id": 2, "level": "l1", "content": "Grow in Europe"},
        ),
        page_answer(
            {"type": "section", "id": "s"},
            {"type": "heading", "id": "h", "parent_id": "s", "level": "h1", "content": "Appendix"},
            {"type": "paragraph", "id": "p", "parent_id": "ghost", "content": "Tables follow."},
        ),
    ]
    path = blank_pdf(tmp_path / "report.pdf", 3)
    with pytest.warns(PageIndexWarning, match="1 parent reference"):
        document = build_index(path, strategy="vision", model=client(), parallel=1, dpi=72)

    assert [[(node.type, node.id, node.parent_id) for node in page.nodes] for page in document.pages] == [
        [
            ("header", "p0-n1", None),
            ("section", "p0-n2", None),
            ("heading", "p0-n3", "p0-n2"),
            ("paragraph", "p0-n4", "p0-n2"),
            ("footer", "p0-n5", None),
        ],
        [
            ("paragraph", "p1-1", "p0-n2"),
            ("section", "p1-2", "p0-n2"),  # an h2 opened under the h1 still open from page 1
            ("heading", "p1-3", "p1-2"),
            ("list_item", "p1-4", "p1-2"),
        ],
        [
            ("section", "p2-s", None),  # a new h1 closes both
            ("heading", "p2-h", "p2-s"),
            ("paragraph", "p2-p", "p2-s"),  # "ghost" named no section: dropped, then nested
        ],
    ]
    sections = {section.title: section for section in document.sections()}
    assert (sections["Results"].first_page, sections["Results"].last_page) == (0, 1)
    assert sections["Results"].description == "How the year went."
    assert [entry.title for entry in document.toc] == ["Results", "Outlook", "Appendix"]
    assert document.title == "Scanned Report"  # from the metadata: no title call
    # Three page calls, then the abstract's three Chain of Density rounds (11 + 7 tokens each).
    assert document.abstract == "Abstract, round 3."
    assert script.abstract_calls == 3
    assert document.usage is not None
    assert (document.usage.calls, document.usage.input_tokens, document.usage.output_tokens) == (6, 3033, 171)
    assert len(llm_server.requests) == 6


def test_each_request_carries_one_png_page_and_the_objective(tmp_path: Path, llm_server) -> None:
    script = Script(llm_server)
    script.pages = [page_answer()]
    build_index(blank_pdf(tmp_path / "a.pdf", 1), strategy="vision", model=client(), dpi=72)
    (url,) = llm_server.image_urls(0)
    assert url.startswith("data:image/png;base64,")
    import base64

    image = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))
    assert image.size == (612, 792)  # 72 dpi: one pixel per point
    prompt = llm_server.prompt_texts(0)
    assert "612 x 792 pixels" in prompt and "pixels of this 612 x 792 image" in prompt
    # The page's own facts come after the fixed prefix: the system message says nothing of this page.
    system = llm_server.requests[0]["messages"][0]["content"]
    assert "612" not in system and "You turn one page of a document" in system
    # The answer schema (the PageAnswer Contract, compacted) is in the prompt: this model has no
    # structured output as litellm knows it.
    assert '"toc_entry"' in system and "JSON schema" in system
    assert "response_format" not in llm_server.requests[0]


def test_boxes_in_pixels_are_scaled_to_points_and_cropped(tmp_path: Path, llm_server) -> None:
    script = Script(llm_server)
    script.pages = [
        page_answer(
            {
                "type": "image",
                "id": "i",
                "kind": "chart",
                "bbox": [200, 200, 600, 400],
                "description": "A box",
            },
            {"type": "table", "id": "t", "content": "|a|\n|-|\n|1|", "bbox": [50, 50, 50, 90]},  # empty
            {"type": "image", "id": "j", "bbox": [1300, 10, 1400, 20]},  # right of the 1224 px image
        )
    ]
    document = build_index(blank_pdf(tmp_path / "a.pdf", 1), strategy="vision", model=client(), dpi=144)
    image, table, offpage = document.pages[0].nodes
    assert isinstance(image, ImageNode) and isinstance(table, TableNode) and isinstance(offpage, ImageNode)
    # 144 dpi: 2 px per pt; padded by 1% of the page (6.12 x 7.92 pt) and clamped.
    assert image.bbox == (93, 92, 306, 208)
    crop = Image.open(io.BytesIO(image.image_data))
    assert crop.size == (425, 232)
    assert table.bbox is None and table.image_data is None
    assert offpage.bbox is None
    # The crop of the grey box is grey in its middle.
    assert crop.convert("L").getpixel((213, 115)) < 200


def test_normalised_boxes_for_families_that_answer_in_thousandths(llm_server) -> None:
    page = RenderedPage(b"", 1224, 1584, 612.0, 792.0)
    points, pixels = scale_bbox([100, 250, 500, 750], page, "normalized")
    assert points == (55, 190, 312, 602)
    assert pixels == (110, 380, 624, 1204)
    assert ModelClient("openai/qwen2-vl-7b").bbox_scale == "normalized"
    assert ModelClient("openai/qwen3-vl-8b-instruct").bbox_scale == "normalized"
    # Qwen2.5-VL answers pixels of its resized input (QwenLM/Qwen3-VL issues 676 and 721).
    for name in (
        "openai/qwen2.5-vl-72b-instruct",
        "hosted_vllm/Qwen/Qwen2.5-VL-7B-Instruct",
        "ollama/qwen2.5vl:7b",
    ):
        assert ModelClient(name).bbox_scale == "pixels"
        assert ModelClient(name).image_limits.multiple_of == 28
    assert ModelClient("openai/glm-4.5v").bbox_scale == "normalized"
    assert ModelClient("gpt-4o-mini").bbox_scale == "pixels"
    assert ModelClient("gpt-4o-mini", bbox_scale="normalized").bbox_scale == "normalized"
    assert scale_bbox([10, 10, 10, 10], page, "pixels") is None
    assert scale_bbox(None, page, "pixels") is None


def test_rate_limit_then_success_backs_off_and_counts_both_calls(tmp_path: Path, llm_server) -> None:
    script = Script(llm_server)
    script.pages = [
        Reply(429, b'{"error": {"message": "slow down"}}', headers={"Retry-After": "0.25"}),
        page_answer(),
    ]
    waits: list[float] = []
    model = ModelClient(MODEL, sleep=waits.append)
    document = build_index(blank_pdf(tmp_path / "a.pdf", 1), strategy="vision", model=model, abstract=False)
    assert waits == [0.25]  # the server's Retry-After
    assert document.usage is not None and document.usage.calls == 2
    assert len(llm_server.requests) == 2


def test_server_errors_until_failure_name_the_page(tmp_path: Path, llm_server) -> None:
    script = Script(llm_server)
    script.pages = [page_answer(), *[Reply(500, b'{"error": {"message": "boom"}}')] * 3, page_answer()]
    waits: list[float] = []
    model = ModelClient(MODEL, attempts=3, backoff=0.5, sleep=waits.append)
    path = blank_pdf(tmp_path / "a.pdf", 3)
    with pytest.raises(LLMExtractionError, match=r"page 2: .*server error \(500\)"):
        build_index(path, strategy="vision", model=model, parallel=1)
    assert len(waits) == 2 and 0.25 <= waits[0] <= 0.5 and 0.5 <= waits[1] <= 1.0  # backoff with jitter
    # Nothing was written: index_document fails before saving.
    script.pages = [page_answer(), *[Reply(500, b"{}")] * 3, page_answer()]
    with pytest.raises(LLMExtractionError):
        index_document(path, strategy="vision", model=model, parallel=1)
    assert not (tmp_path / "a.pageindex").exists()


def test_skip_records_the_failed_page_and_keeps_the_others(tmp_path: Path, llm_server) -> None:
    script = Script(llm_server)
    script.pages = [page_answer(), Reply(401, b'{"error": {"message": "bad key"}}'), page_answer()]
    document = build_index(
        blank_pdf(tmp_path / "a.pdf", 3), strategy="vision", model=client(), parallel=1, on_page_error="skip"
    )
    assert [page.index for page in document.pages] == [0, 2]
    (failed,) = document.failed_pages
    assert failed.index == 1 and "AuthenticationError" in failed.reason
    assert len(llm_server.requests) == 3  # an authentication error is not retried


def test_timeouts_are_retried_then_reported(tmp_path: Path, llm_server) -> None:
    script = Script(llm_server)
    slow = Reply(200, completion_body(json.dumps(page_answer())), delay=3.0)
    script.pages = [slow, slow]
    model = ModelClient(MODEL, timeout=0.5, attempts=2, sleep=lambda seconds: None)
    with pytest.raises(LLMExtractionError, match="timed out"):
        build_index(blank_pdf(tmp_path / "a.pdf", 1), strategy="vision", model=model)
    assert len(llm_server.requests) == 2


def test_malformed_json_is_repaired_by_asking_again(tmp_path: Path, llm_server) -> None:
    script = Script(llm_server)
    script.pages = [
        Reply(200, completion_body("Sure! Here are the nodes: {nodes: [oops")),
        page_answer({"type": "paragraph", "id": "a", "content": "Fixed."}),
    ]
    document = build_index(
        blank_pdf(tmp_path / "a.pdf", 1), strategy="vision", model=client(), abstract=False
    )
    (node,) = document.pages[0].nodes
    assert isinstance(node, ParagraphNode) and node.content == "Fixed."
    # The second request showed the model its error.
    assert "Correct your JSON" in json.dumps(llm_server.requests[1]["messages"][-1])
    assert document.usage is not None and document.usage.calls == 2


def test_an_answer_that_stays_invalid_fails_after_the_repairs(tmp_path: Path, llm_server) -> None:
    script = Script(llm_server)
    script.pages = [Reply(200, completion_body('{"nodes": [{"type": "sidebar", "id": "x"}]}'))] * 2
    with pytest.raises(LLMExtractionError, match="did not match the expected schema after 2 answer"):
        build_index(blank_pdf(tmp_path / "a.pdf", 1), strategy="vision", model=client())


def test_a_page_selection_sends_exactly_those_pages(tmp_path: Path, llm_server) -> None:
    script = Script(llm_server)
    script.pages = [page_answer({"type": "paragraph", "id": "a", "content": f"page {n}"}) for n in (2, 4)]
    document = build_index(
        blank_pdf(tmp_path / "ten.pdf", 10),
        strategy="vision",
        model=client(),
        pages=[2, 4],
        parallel=1,
        abstract=False,
    )
    assert [page.index for page in document.pages] == [1, 3]
    assert [page.nodes[0].content for page in document.pages] == ["page 2", "page 4"]
    assert len(llm_server.requests) == 2
    assert [len(llm_server.image_urls(index)) for index in range(2)] == [1, 1]
    assert document.source_page_count == 10


def test_auto_sends_only_pages_without_text_to_the_model(tmp_path: Path, llm_server) -> None:
    script = Script(llm_server)
    script.pages = [page_answer({"type": "paragraph", "id": "a", "content": "Read from the scan."})]
    document = pymupdf.open()
    for text in ("A page with a real text layer, long enough.", None, "Another page with text on it."):
        page = document.new_page()
        if text:
            page.insert_text((72, 72), text, fontsize=11)
    path = tmp_path / "mixed.pdf"
    document.save(path)
    built = build_index(path, model=client(), abstract=False)
    assert len(llm_server.requests) == 2  # page 2, then the title (the PDF has none)
    assert built.pages[1].nodes[0].content == "Read from the scan."
    assert built.pages[0].nodes[0].content.startswith("A page with a real text layer")
    assert built.title == "Inferred Title"


def test_images_are_one_page_and_huge_ones_are_refused(tmp_path: Path, llm_server) -> None:
    script = Script(llm_server)
    script.pages = [page_answer({"type": "image", "id": "a", "kind": "photo", "bbox": [0, 0, 1024, 512]})]
    picture = tmp_path / "photo.jpg"
    Image.new("RGB", (4096, 2048), (200, 30, 30)).save(picture)
    document = build_index(picture, model=client())
    (node,) = document.pages[0].nodes
    assert isinstance(node, ImageNode) and node.kind == "photo"
    # Scaled to 2048 px wide for the model; boxes come back in the original's pixels.
    assert node.bbox == (0, 0, 2089, 1044)
    sent = Image.open(
        io.BytesIO(__import__("base64").b64decode(llm_server.image_urls(0)[0].split(",", 1)[1]))
    )
    assert sent.size == (2048, 1024)
    with pytest.raises(ModelRequiredError, match="vision model"):
        build_index(picture)

    bomb = tmp_path / "bomb.png"
    Image.new("1", (9000, 9000)).save(bomb)
    with pytest.raises(DocumentLoadError, match="over the limit"):
        build_index(bomb, model=client())
    fake = tmp_path / "fake.png"
    fake.write_bytes(b"not an image at all")
    with pytest.raises(DocumentLoadError, match="not a readable image"):
        build_index(fake, model=client())


def test_plain_text_with_a_model_goes_in_bounded_chunks(tmp_path: Path, llm_server) -> None:
    script = Script(llm_server)
    paragraph = "Lorem ipsum dolor sit amet, consectetur adipiscing elit. " * 40  # ~2,300 characters
    text = "\n\n".join(f"{number}. {paragraph}" for number in range(12))  # ~28,000 characters
    path = tmp_path / "long.txt"
    path.write_text(text, encoding="utf-8")
    chunks = 3
    script.pages = [
        page_answer(
            {"type": "section", "id": "s"},
            {"type": "heading", "id": "h", "parent_id": "s", "level": "h1", "content": f"Part {n}"},
            {"type": "paragraph", "id": "p", "parent_id": "s", "content": f"text {n}"},
        )
        for n in range(chunks)
    ]
    document = build_index(path, model=client(), parallel=1, title="Given", abstract=False)
    expected = text_chunks(text)
    assert len(expected) == chunks == len(llm_server.requests)
    assert all(len(chunk) <= MAX_CHUNK_CHARS for chunk in expected)
    assert "".join(expected).replace("\n", "") == text.replace("\n", "")
    for index, chunk in enumerate(expected):
        assert chunk in llm_server.prompt_texts(index)
    headings = [node.content for _, node in document.iter_nodes() if isinstance(node, HeadingNode)]
    assert headings == ["Part 0", "Part 1", "Part 2"]
    assert len({node.id for _, node in document.iter_nodes()}) == 9  # ids stay unique across chunks


def test_printed_toc_entries_link_to_sections_and_map_printed_pages(tmp_path: Path, llm_server) -> None:
    script = Script(llm_server)
    toc_page = page_answer(
        {
            "type": "toc_entry",
            "id": "a",
            "title": "1. Introduction ........ 1",
            "printed_page": 1,
            "level": "l1",
        },
        {"type": "toc_entry", "id": "b", "title": "1.1 Scope", "printed_page": "2", "level": "l2"},
        {"type": "toc_entry", "id": "c", "title": "2. Methods", "printed_page": "3", "level": "l1"},
        {"type": "toc_entry", "id": "d", "title": "Index", "printed_page": "4", "level": "l1"},
    )

    def heading(title: str, level: str) -> dict[str, Any]:
        return page_answer(
            {"type": "section", "id": "s"},
            {"type": "heading", "id": "h", "parent_id": "s", "level": level, "content": title},
        )

    script.pages = [
        page_answer({"type": "heading", "id": "t", "level": "h1", "content": "Cover"}),
        toc_page,
        heading("Introduction", "h1"),
        heading("Scope", "h2"),
        heading("Methods", "h1"),
        page_answer({"type": "paragraph", "id": "x", "content": "Terms..."}),
    ]
    document = build_index(blank_pdf(tmp_path / "book.pdf", 6), strategy="vision", model=client(), parallel=1)
    entries = {entry.title: entry for entry in document.toc}
    sections = {section.title: section.id for section in document.sections()}
    assert entries["1. Introduction ........ 1"].target_section_id == sections["Introduction"]
    assert entries["1. Introduction ........ 1"].target_page == 2  # printed 1 is physical index 2
    assert entries["1.1 Scope"].parent_id == entries["1. Introduction ........ 1"].id
    assert entries["2. Methods"].target_page == 4
    # "Index" matches no section; its printed page 4 maps through the offset of 2 to index 5.
    assert entries["Index"].target_section_id is None and entries["Index"].target_page == 5


def test_saved_vision_index_round_trips_with_crops(tmp_path: Path, llm_server) -> None:
    script = Script(llm_server)
    script.pages = [
        page_answer({"type": "image", "id": "i", "kind": "diagram", "bbox": [100, 100, 300, 200]})
    ]
    document, written = index_document(
        blank_pdf(tmp_path / "a.pdf", 1), strategy="vision", model=client(), dpi=72
    )
    loaded = load_index(written)
    assert loaded.model_dump(exclude={"pages"}) == document.model_dump(exclude={"pages"})
    (node,) = loaded.pages[0].nodes
    assert node.model_dump(exclude={"image_path"}) == document.pages[0].nodes[0].model_dump(
        exclude={"image_path"}
    )
    assert node.image_path == f"images/{node.id}.png"
    assert node.image_data == document.pages[0].nodes[0].image_data
    assert (written / "images" / f"{node.id}.png").is_file()
    assert loaded.usage is not None and loaded.usage.calls == 1


def test_section_nodes_come_from_the_contract(tmp_path: Path, llm_server) -> None:
    # The model may number ids; they become text, and sections stay sections.
    script = Script(llm_server)
    script.pages = [
        page_answer(
            {"type": "section", "id": 7},
            {"type": "heading", "id": 8, "parent_id": 7, "level": "h3", "content": "X"},
        )
    ]
    document = build_index(blank_pdf(tmp_path / "a.pdf", 1), strategy="vision", model=client())
    section, heading = document.pages[0].nodes
    assert isinstance(section, SectionNode) and section.id == "p0-7"
    assert isinstance(heading, HeadingNode) and heading.parent_id == "p0-7"


def test_sideways_text_is_turned_upright_and_boxes_map_back(tmp_path: Path, llm_server) -> None:
    script = Script(llm_server)
    # On the turned (landscape) image the model sees, the grey box sits at its top right.
    script.pages = [page_answer({"type": "image", "id": "i", "bbox": [592, 100, 692, 300]})]
    document = pymupdf.open()
    page = document.new_page(width=612, height=792)
    page.insert_text(
        (300, 700), "A table set sideways, as wide tables often are. " * 2, fontsize=12, rotate=90
    )
    page.draw_rect(pymupdf.Rect(100, 100, 300, 200), color=(0.5, 0.5, 0.5), fill=(0.5, 0.5, 0.5))
    path = tmp_path / "sideways.pdf"
    document.save(path)
    built = build_index(path, strategy="vision", model=client(), dpi=72, title="Sideways")

    import base64

    sent = Image.open(io.BytesIO(base64.b64decode(llm_server.image_urls(0)[0].split(",", 1)[1])))
    assert sent.size == (792, 612)  # turned a quarter clockwise: the text now reads left to right
    (node,) = built.pages[0].nodes
    # Turned back, the box covers the grey rectangle (100, 100)-(300, 200) of the stored page, padded.
    assert node.bbox == (93, 92, 306, 208)
    assert Image.open(io.BytesIO(node.image_data)).size == (116, 213)  # cropped from the turned image


def test_rotation_helpers_round_trip() -> None:
    page = RenderedPage(b"", 792, 612, 612.0, 792.0, rotation=90)
    points, _ = scale_bbox([592, 100, 692, 300], page, "pixels")
    assert points == (93, 92, 306, 208)
    for rotation, box in ((180, [312, 592, 512, 692]), (270, [100, 312, 200, 512])):
        width, height = (612, 792) if rotation == 180 else (792, 612)
        turned = RenderedPage(b"", width, height, 612.0, 792.0, rotation=rotation)
        assert scale_bbox(box, turned, "pixels")[0] == (93, 92, 306, 208)


def test_cli_index_with_a_model_and_inspect_shows_the_cost(tmp_path: Path, llm_server, capsys) -> None:
    from extract_thinker_pageindex.cli import main

    script = Script(llm_server)
    script.pages = [page_answer({"type": "paragraph", "id": "a", "content": f"Page {n}."}) for n in (1, 2)]
    path = blank_pdf(tmp_path / "scan.pdf", 2)
    assert (
        main(
            ["index", str(path), "--strategy", "vision", "--model", MODEL, "--parallel", "1", "--no-abstract"]
        )
        == 0
    )
    assert "2 page(s)" in capsys.readouterr().out
    assert main(["inspect", str(tmp_path / "scan.pageindex")]) == 0
    assert "Model:    2 call(s), 2,000 input and 100 output tokens" in capsys.readouterr().out
    # Without a model or OCR, a scan is refused with the pages named.
    assert main(["index", str(path), "-o", str(tmp_path / "other"), "--ocr", "never"]) == 1
    assert "Page(s) 1, 2" in capsys.readouterr().err
