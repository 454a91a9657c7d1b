"""What a model request carries: the compact answer schema, the fixed prefix, the structured-output path,
the prompt-cache marker, and page images sized for the model family — against the local server."""

from __future__ import annotations

import base64
import io
import json
import re
from pathlib import Path
from typing import Any

import pymupdf
import pytest
from hypothesis import given
from hypothesis import strategies as st
from PIL import Image

from extract_thinker_pageindex import ImageNode, InvalidOptionError, ParagraphNode, build_index
from extract_thinker_pageindex.document.model import PageAnswer, TitleAnswer
from extract_thinker_pageindex.llm.client import IMAGE_LIMITS, ImageLimits, ModelClient
from extract_thinker_pageindex.llm.prompting import compact_schema, family_of, schema_text
from extract_thinker_pageindex.pdf.opening import open_pdf
from extract_thinker_pageindex.strategies.page_images import pdf_renderer
from llm_server import Reply, completion_body

MODEL = "openai/test-vision"


def scan_pdf(path: Path, sizes: list[tuple[float, float]]) -> Path:
    """Pages without a text layer (a grey box each), of the given sizes in points."""
    document = pymupdf.open()
    for width, height in sizes:
        page = document.new_page(width=width, height=height)
        page.draw_rect(pymupdf.Rect(50, 50, 200, 150), color=(0.5, 0.5, 0.5), fill=(0.5, 0.5, 0.5))
    document.set_metadata({"title": "Scanned"})
    document.save(path)
    return path


def answer(*nodes: dict[str, Any]) -> Reply:
    return Reply(200, completion_body(json.dumps({"nodes": list(nodes)})))


def paragraph(text: str = "Read.") -> dict[str, Any]:
    return {"type": "paragraph", "id": "n1", "content": text}


def client(model: str = MODEL, **options: Any) -> ModelClient:
    return ModelClient(model, **{"sleep": lambda seconds: None, **options})


def schema_nodes(node: Any) -> list[dict[str, Any]]:
    """Every schema object in a JSON schema (the values of "properties", not its field names)."""
    found = []
    if isinstance(node, dict):
        found.append(node)
        for key, value in node.items():
            children = value.values() if key == "properties" and isinstance(value, dict) else [value]
            for child in children:
                found.extend(schema_nodes(child))
    elif isinstance(node, list):
        for value in node:
            found.extend(schema_nodes(value))
    return found


# -- the compact answer schema ----------------------------------------------------------------------------


def test_the_answer_schema_holds_only_what_the_model_writes() -> None:
    schema = compact_schema(PageAnswer)
    keys = {key for item in schema_nodes(schema) for key in item}
    assert not keys & {"title", "default", "description", "$defs", "$ref", "discriminator"}
    properties = {name for item in schema_nodes(schema) for name in item.get("properties", {})}
    assert not properties & {"image_data", "image_path", "group_id"}  # the package fills these
    node = schema["properties"]["nodes"]["items"]
    assert set(node["properties"]["type"]["enum"]) == {
        "section", "heading", "paragraph", "list_item", "image", "table", "header", "footer", "metadata",
        "toc_entry",
    }  # fmt: skip
    assert node["required"] == ["id", "type"]
    # Written without indentation: under a twentieth of the pretty-printed full schema.
    text = schema_text(PageAnswer)
    full = json.dumps(PageAnswer.model_json_schema(), indent=2)
    assert "\n" not in text and ": " not in text and len(text) < 1200 < len(full) / 15
    assert schema_text(PageAnswer) == text  # deterministic: the same bytes for every request


def test_an_answer_written_to_the_compact_schema_validates_as_the_exact_types() -> None:
    written = {
        "nodes": [
            {"type": "section", "id": "n1", "parent_id": None},
            {"type": "heading", "id": "n2", "parent_id": "n1", "level": "h2", "content": "Results"},
            {"type": "table", "id": "n3", "kind": "data", "content": "| a |", "bbox": [1, 2, 3, 4]},
            {"type": "toc_entry", "id": "n4", "title": "Results", "printed_page": "7", "level": "l1"},
        ]
    }  # fmt: skip
    parsed = PageAnswer.model_validate(written)
    assert [node.type for node in parsed.nodes] == ["section", "heading", "table", "toc_entry"]
    # A level that belongs to another node type is refused: the merged schema allows it, the answer model not.
    with pytest.raises(ValueError):
        PageAnswer.model_validate(
            {"nodes": [{"type": "paragraph", "id": "n1", "level": "h2", "content": "x"}]}
        )


# -- the request layout -----------------------------------------------------------------------------------


def test_every_page_request_opens_with_the_same_prefix_and_puts_the_page_after_it(
    tmp_path: Path, llm_server
) -> None:
    llm_server.default = lambda body: answer(paragraph())
    pdf = scan_pdf(tmp_path / "three.pdf", [(612, 792), (600, 800), (842, 595)])
    build_index(pdf, strategy="vision", model=client(), dpi=72, abstract=False, parallel=1)

    systems = [json.dumps(request["messages"][0]) for request in llm_server.requests]
    assert len(systems) == 3 and len(set(systems)) == 1  # byte-identical: one prefix to cache
    system = llm_server.requests[0]["messages"][0]["content"]
    assert "{{" not in system and "{width}" not in system  # no template text left in the prefix
    assert system.endswith(schema_text(PageAnswer))  # no structured output known here: the prompt has it
    assert all("response_format" not in request for request in llm_server.requests)
    for request, size in zip(llm_server.requests, ["612 x 792", "600 x 800", "842 x 595"], strict=True):
        assert size not in json.dumps(request["messages"][0])
        assert f"This page image is {size} pixels" in json.dumps(request["messages"][1:])
    # The page's non-image input stays small: prefix and page text under 6,000 characters.
    text = system + request["messages"][1]["content"][0]["text"]
    assert len(text) < 6000


def test_structured_output_sends_the_schema_once_outside_the_prompt(tmp_path: Path, llm_server) -> None:
    llm_server.push(Reply(200, completion_body("not json at all")))  # the first answer is repaired
    llm_server.default = lambda body: answer(paragraph("Fixed."))
    pdf = scan_pdf(tmp_path / "one.pdf", [(612, 792)])
    document = build_index(
        pdf, strategy="vision", model=client(structured_output=True), dpi=72, abstract=False
    )

    assert [node.content for node in document.pages[0].nodes if isinstance(node, ParagraphNode)] == ["Fixed."]
    first, second = llm_server.requests
    for request in (first, second):
        assert request["response_format"]["type"] == "json_schema"
        assert request["response_format"]["json_schema"]["schema"] == compact_schema(PageAnswer)
        assert "JSON schema" not in request["messages"][0]["content"]  # not in the prompt as well
    assert first["messages"][0] == second["messages"][0]
    assert "Correct your JSON" in second["messages"][-1]["content"]
    assert second["messages"][-2] == {"role": "assistant", "content": "not json at all"}


def test_which_path_a_model_takes_follows_litellm_and_can_be_forced() -> None:
    assert ModelClient("gpt-4o").structured_output is True  # litellm knows it supports response schemas
    assert ModelClient(MODEL).structured_output is False  # an unknown model: the prompt carries the schema
    assert ModelClient("gpt-4o", structured_output=False).structured_output is False
    assert ModelClient(MODEL, structured_output=True).structured_output is True
    with pytest.raises(InvalidOptionError, match="structured_output"):
        ModelClient(MODEL, structured_output="yes")  # type: ignore[arg-type]


def test_anthropic_requests_mark_the_prefix_for_prompt_caching() -> None:
    model = ModelClient("anthropic/claude-3-5-sonnet-20241022", structured_output=False)
    messages, extra = model.request(
        [{"role": "system", "content": "Give the title."}, {"role": "user", "content": "Extracts."}],
        TitleAnswer,
    )
    (block,) = messages[0]["content"]
    assert block["cache_control"] == {"type": "ephemeral"}
    assert block["text"].startswith("Give the title.") and block["text"].endswith(schema_text(TitleAnswer))
    assert messages[1] == {"role": "user", "content": "Extracts."} and extra == {}
    # Other families get the prefix as plain text: no marker the provider might refuse.
    messages, _ = ModelClient("gpt-4o-mini", structured_output=False).request(
        [{"role": "system", "content": "Give the title."}], TitleAnswer
    )
    assert isinstance(messages[0]["content"], str)


@pytest.mark.parametrize(
    ("model", "marked"),
    [
        ("anthropic/claude-3-5-sonnet-20241022", True),
        ("vertex_ai/claude-3-5-sonnet-v2@20241022", True),
        ("bedrock/us.anthropic.claude-3-7-sonnet-20250219-v1:0", True),  # litellm lists caching for it
        ("bedrock/anthropic.claude-3-sonnet-20240229-v1:0", False),  # Bedrock has no caching for it
        ("bedrock/anthropic.claude-not-a-model-v9:0", False),  # unknown to litellm: no marker to refuse
    ],
)
def test_bedrock_models_are_marked_for_caching_only_where_it_exists(model: str, marked: bool) -> None:
    client = ModelClient(model, structured_output=False)
    assert client.family == "anthropic"  # page pictures sized for Claude either way
    messages, _ = client.request([{"role": "system", "content": "Give the title."}], TitleAnswer)
    assert isinstance(messages[0]["content"], list) is marked


@pytest.mark.parametrize(
    ("model", "family"),
    [
        ("gpt-4o", "openai"),
        ("openai/gpt-4.1-mini", "openai"),
        ("azure/my-deployment", "openai"),
        ("anthropic/claude-3-5-sonnet-20241022", "anthropic"),
        ("claude-3-haiku-20240307", "anthropic"),
        ("gemini/gemini-2.0-flash", "gemini"),
        ("openai/qwen2.5-vl-7b", "qwen"),
        ("openai/test-vision", "other"),
        ("bedrock/us.anthropic.claude-3-5-sonnet-20241022-v2:0", "anthropic"),
        ("bedrock/converse/anthropic.claude-3-haiku-20240307-v1:0", "anthropic"),
        ("bedrock/eu.anthropic.claude-3-7-sonnet-20250219-v1:0", "anthropic"),
        ("bedrock/jp.anthropic.claude-sonnet-4-5-20250929-v1:0", "anthropic"),
        ("bedrock/us-gov.anthropic.claude-3-5-sonnet-20240620-v1:0", "anthropic"),
        ("bedrock/us.meta.llama3-2-90b-instruct-v1:0", "other"),
        ("ft:gpt-4o-mini-2024-07-18:acme::9abc", "openai"),
        ("openai/ft:gpt-4o-2024-08-06:acme::9abc", "openai"),
    ],
)
def test_model_families(model: str, family: str) -> None:
    assert family_of(model) == family


# -- page pixels for the model ----------------------------------------------------------------------------


def image_sizes(server) -> list[tuple[int, int]]:
    sizes = []
    for index in range(len(server.requests)):
        for url in server.image_urls(index):
            with Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))) as image:
                sizes.append(image.size)
    return sizes


def test_an_openai_model_gets_the_page_at_the_size_it_sees_and_boxes_map_back(
    tmp_path: Path, llm_server
) -> None:
    # OpenAI scales a high-detail image's shorter side to 768: a letter page at 150 dpi (1275 x 1650) is
    # sent at about 768 x 994 (a pixel less, as MuPDF rounds outwards), and a box over the whole image the
    # model was told of is the whole page.
    def reply(body: dict[str, Any]) -> Reply:
        width, height = map(int, re.search(r"image is (\d+) x (\d+)", json.dumps(body)).groups())
        return answer({"type": "image", "id": "n1", "kind": "photo", "bbox": [0, 0, width, height]})

    llm_server.default = reply
    pdf = scan_pdf(tmp_path / "letter.pdf", [(612, 792)])
    document = build_index(pdf, strategy="vision", model=client("openai/gpt-4o"), dpi=150, abstract=False)

    ((width, height),) = image_sizes(llm_server)
    assert 767 <= width <= 768 and 993 <= height <= 994
    (image,) = [node for node in document.pages[0].nodes if isinstance(node, ImageNode)]
    assert image.bbox == (0, 0, 612, 792)


def test_a_model_of_unknown_family_keeps_the_dpi_asked_for(tmp_path: Path, llm_server) -> None:
    llm_server.default = lambda body: answer(paragraph())
    pdf = scan_pdf(tmp_path / "letter.pdf", [(612, 792)])
    build_index(pdf, strategy="vision", model=client(), dpi=150, abstract=False)
    assert image_sizes(llm_server) == [(1275, 1650)]


@pytest.mark.parametrize("family", sorted(IMAGE_LIMITS))
def test_each_family_page_image_is_within_its_limits(tmp_path: Path, family: str) -> None:
    limits = IMAGE_LIMITS[family]
    pdf = scan_pdf(tmp_path / "pages.pdf", [(612, 792), (1224, 792), (2000, 3000)])
    with open_pdf(pdf.read_bytes(), name="pages") as document:
        render = pdf_renderer(document, 300, limits)
        pages = [render(index) for index in range(3)]
    for page in pages:
        width, height = page.width_px, page.height_px
        assert max(width, height) <= limits.max_side and width * height <= limits.max_pixels
        if limits.max_short_side is not None:
            assert min(width, height) <= limits.max_short_side
        # Reduced only as far as the limits need: one more pixel a side would break one of them.
        grown = (width + 2, height + 2)
        assert (
            max(grown) > limits.max_side
            or grown[0] * grown[1] > limits.max_pixels
            or (limits.max_short_side is not None and min(grown) > limits.max_short_side)
        )


@given(st.integers(1, 6000), st.integers(1, 6000))
def test_qwen25_pages_are_sent_at_a_size_its_processor_keeps(width: int, height: int) -> None:
    # Qwen2.5-VL's processor rounds each side to a multiple of 28 within its pixel budget: a size it
    # would change is never sent (its boxes would then be in pixels of another image).
    from extract_thinker_pageindex.llm.client import QWEN25_IMAGE_LIMITS as limits

    snapped_width, snapped_height = limits.snapped(width, height)
    assert snapped_width % 28 == 0 and snapped_height % 28 == 0
    assert snapped_width * snapped_height <= limits.max_pixels and max(snapped_width, snapped_height) <= 2048
    assert limits.snapped(snapped_width, snapped_height) == (snapped_width, snapped_height)
    if width * height <= 900_000 and max(width, height) <= 2000 and min(width, height) >= 28:
        assert abs(snapped_width - width) <= 14 and abs(snapped_height - height) <= 14


def test_image_limits_are_checked() -> None:
    with pytest.raises(InvalidOptionError):
        ImageLimits(max_side=0)
    with pytest.raises(InvalidOptionError):
        ImageLimits(max_pixels=True)  # type: ignore[arg-type]
    with pytest.raises(InvalidOptionError, match="image_limits"):
        ModelClient(MODEL, image_limits=(800, 600))  # type: ignore[arg-type]
    assert ModelClient(MODEL, image_limits=ImageLimits(max_side=800)).image_limits.max_side == 800
