"""Models and providers that refuse part of a request: temperature=0 (OpenAI's reasoning models, in litellm
or at the provider), structured output (``response_format``) — and answers with prose around their JSON.
All against the local OpenAI-compatible server."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pymupdf
import pytest

from extract_thinker_pageindex import LLMExtractionError, PageIndexWarning, ParagraphNode, build_index
from extract_thinker_pageindex.document.model import PageAnswer
from extract_thinker_pageindex.llm.call_limit import model_spec
from extract_thinker_pageindex.llm.client import ModelClient
from llm_server import Reply, completion_body

PAGE = [{"role": "system", "content": "Read the page."}, {"role": "user", "content": "The page."}]
NODES = {"nodes": [{"type": "paragraph", "id": "n1", "content": "Read."}]}


def client(model: str, **options: Any) -> ModelClient:
    return ModelClient(model, **{"sleep": lambda seconds: None, **options})


def refusal(message: str, param: str | None = None, status: int = 400) -> Reply:
    """A provider's error answer, as OpenAI words it."""
    error = {"message": message, "type": "invalid_request_error", "param": param, "code": None}
    return Reply(status, json.dumps({"error": error}).encode())


def scans(path: Path, pages: int) -> Path:
    document = pymupdf.open()
    for _ in range(pages):
        page = document.new_page()
        page.draw_rect(pymupdf.Rect(50, 50, 200, 150), color=(0.5, 0.5, 0.5), fill=(0.5, 0.5, 0.5))
    document.save(path)
    return path


def refusal_warnings(caught: list[warnings.WarningMessage]) -> list[str]:
    return [str(item.message) for item in caught if issubclass(item.category, PageIndexWarning)]


# -- temperature ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("model", ["openai/gpt-5-mini", "openai/o3"])
def test_a_reasoning_model_is_asked_without_temperature(tmp_path: Path, llm_server, model: str) -> None:
    # litellm refuses temperature=0 for these models before sending anything.
    llm_server.default = lambda body: Reply(
        200, completion_body(json.dumps({"title": "Scans"} if "TitleAnswer" in json.dumps(body) else NODES))
    )
    model_client = client(model)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        document = build_index(
            scans(tmp_path / "scan.pdf", 3), strategy="vision", model=model_client, dpi=72, abstract=False
        )

    assert [len(page.nodes) for page in document.pages] == [1, 1, 1]
    assert document.title == "Scans"
    assert len(llm_server.requests) == 4  # a request per page and one for the title: none sent twice
    assert all("temperature" not in request for request in llm_server.requests)
    assert model_client.send_temperature is False
    said = refusal_warnings(caught)
    assert len(said) == 1 and "temperature=0" in said[0] and model in said[0]
    assert model_client.usage.calls == 4  # the refusals made no HTTP call


def test_a_model_that_takes_temperature_zero_gets_it(llm_server) -> None:
    llm_server.reply_json(NODES)
    model_client = client("openai/test-vision")
    model_client.ask(PAGE, PageAnswer, what="page 1")
    assert llm_server.requests[0]["temperature"] == 0
    assert model_client.send_temperature is True


def test_a_provider_that_refuses_temperature_is_asked_again_without_it(llm_server) -> None:
    llm_server.push(
        refusal(
            "Unsupported value: 'temperature' does not support 0 with this model. Only the default (1) "
            "value is supported.",
            param="temperature",
        )
    )
    llm_server.default = lambda body: Reply(200, completion_body(json.dumps(NODES)))
    model_client = client("openai/my-deployment", attempts=1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = model_client.ask(PAGE, PageAnswer, what="page 1")
        model_client.ask(PAGE, PageAnswer, what="page 2")

    assert first.nodes[0].content == "Read."  # type: ignore[union-attr]
    refused, again, later = llm_server.requests
    assert refused["temperature"] == 0
    assert "temperature" not in again and "temperature" not in later
    assert again["messages"] == refused["messages"]
    assert model_client.usage.calls == 3  # the refused call reached the server: it counts
    assert len(refusal_warnings(caught)) == 1


def test_a_refusal_that_names_no_optional_parameter_stays_an_error(llm_server) -> None:
    llm_server.push(refusal("Invalid image: the picture could not be decoded.", param="messages"))
    model_client = client("openai/test-vision")
    with pytest.raises(LLMExtractionError, match="could not be decoded"):
        model_client.ask(PAGE, PageAnswer, what="page 1")
    assert len(llm_server.requests) == 1  # a bad request is not retried
    assert model_client.send_temperature is True


def test_an_error_that_quotes_the_request_is_no_refusal(llm_server) -> None:
    # A server that echoes the request body names temperature and response_format without refusing them.
    llm_server.push(
        refusal('Could not read the image in {"temperature": 0, "response_format": {"type": "json_schema"}}')
    )
    model_client = client("openai/gpt-4o")
    with pytest.raises(LLMExtractionError, match="Could not read the image"):
        model_client.ask(PAGE, PageAnswer, what="page 1")
    assert len(llm_server.requests) == 1
    assert model_client.send_temperature is True and model_client.structured_output is True


# -- structured output ------------------------------------------------------------------------------------


def test_a_provider_that_refuses_structured_output_gets_the_schema_in_the_prompt(llm_server) -> None:
    llm_server.push(
        refusal(
            "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model.",
            param="response_format",
        )
    )
    llm_server.default = lambda body: Reply(200, completion_body(json.dumps(NODES)))
    model_client = client("openai/gpt-4o")  # litellm says gpt-4o supports response schemas
    assert model_client.structured_output is True
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model_client.ask(PAGE, PageAnswer, what="page 1")
        model_client.ask(PAGE, PageAnswer, what="page 2")

    refused, again, later = llm_server.requests
    assert refused["response_format"]["type"] == "json_schema"
    for request in (again, later):
        assert "response_format" not in request
        assert "JSON schema" in request["messages"][0]["content"]  # the prompt carries it now
        assert request["temperature"] == 0
    assert model_client.structured_output is False
    said = refusal_warnings(caught)
    assert len(said) == 1 and "response_format" in said[0]


def test_structured_output_asked_for_explicitly_is_not_dropped(llm_server) -> None:
    llm_server.push(refusal("response_format json_schema is not supported by this server.", status=422))
    model_client = client("openai/gpt-4o", structured_output=True)
    with pytest.raises(LLMExtractionError, match="structured_output=True"):
        model_client.ask(PAGE, PageAnswer, what="page 1")
    assert len(llm_server.requests) == 1
    assert model_client.structured_output is True


def test_workers_get_the_structured_output_option_not_the_path_taken() -> None:
    assert model_spec(ModelClient("openai/gpt-4o"), portable=True).settings["structured_output"] is None
    forced = model_spec(ModelClient("openai/gpt-4o", structured_output=False), portable=True)
    assert forced.settings["structured_output"] is False
    assert forced.client().structured_output is False


# -- prose around the JSON --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [
        json.dumps(NODES) + "\n\nThat is the page. Ask me {anything} else.",
        "Sure! " + json.dumps(NODES) + " Done.",
        "An empty page would be {}. This one:\n```json\n" + json.dumps(NODES) + "\n```",
        "```json\n" + json.dumps(NODES) + '\n```\nand my notes:\n```json\n{"note": "no tables"}\n```',
    ],
    ids=["prose-after", "prose-around", "example-before", "notes-after"],
)
def test_the_one_answer_object_of_an_answer_is_taken(llm_server, content: str) -> None:
    llm_server.reply_text(content)
    model_client = client("openai/test-vision")
    answer = model_client.ask(PAGE, PageAnswer, what="page 1")
    assert [node.content for node in answer.nodes if isinstance(node, ParagraphNode)] == ["Read."]
    assert len(llm_server.requests) == 1  # no repair was needed


def test_two_answer_objects_are_repaired_not_guessed(llm_server) -> None:
    # The first object is an example that would validate as an empty page: taking it would lose the page.
    llm_server.reply_text('I return an object like {"nodes": []} for each page.\n' + json.dumps(NODES))
    llm_server.reply_json(NODES)
    model_client = client("openai/test-vision")
    answer = model_client.ask(PAGE, PageAnswer, what="page 1")
    assert len(answer.nodes) == 1
    assert len(llm_server.requests) == 2
    assert "Correct your JSON" in llm_server.requests[1]["messages"][-1]["content"]


def test_a_broken_answer_is_repaired_on_its_own_error_not_on_an_object_inside_it(llm_server) -> None:
    llm_server.reply_text('{"nodes": [{"type": "paragraph", "id": "n1", "content": "Read."}')  # cut short
    llm_server.reply_json(NODES)
    model_client = client("openai/test-vision")
    model_client.ask(PAGE, PageAnswer, what="page 1")
    repair = llm_server.requests[1]["messages"][-1]["content"]
    assert "Correct your JSON" in repair
    assert "json" in repair.lower() and "nodes: Field required" not in repair


def test_an_answer_nested_past_the_decoder_is_an_extraction_error(llm_server) -> None:
    llm_server.default = lambda body: Reply(200, completion_body('{"nodes": ' + "[" * 3000))
    model_client = client("openai/test-vision", repairs=1)
    with pytest.raises(LLMExtractionError, match="did not match the expected schema"):
        model_client.ask(PAGE, PageAnswer, what="page 1")
    assert len(llm_server.requests) == 2
