"""Model answers and uses that once broke the vision path: cycles, duplicate ids, rotation, usage, budgets."""

from __future__ import annotations

import io
import json
import threading
import time
from pathlib import Path
from typing import Any

import pymupdf
import pytest
from extract_thinker import LLM
from PIL import Image

from extract_thinker_pageindex import InvalidOptionError, LLMExtractionError, build_index
from extract_thinker_pageindex.document.model import PageAnswer, TocEntryNode
from extract_thinker_pageindex.llm.client import ModelClient
from extract_thinker_pageindex.postprocess.toc import toc_from_entries
from extract_thinker_pageindex.strategies.text_model import MAX_CHUNK_CHARS, text_chunks
from extract_thinker_pageindex.strategies.vision import RenderedPage, extract_pages
from llm_server import Reply, completion_body

MODEL = "openai/test-vision"


def scan(path: Path, pages: int = 1, *, title: str | None = "T") -> Path:
    document = pymupdf.open()
    for _ in range(pages):
        document.new_page(width=612, height=792)
    if title:
        document.set_metadata({"title": title})
    document.save(path)
    return path


def answering(server, *answers: dict[str, Any]) -> list[dict[str, Any]]:
    queue = list(answers)

    def reply(body: dict[str, Any]) -> Reply:
        system = json.dumps(body["messages"][0]["content"])
        if "Give the title" in system:
            return Reply(200, completion_body(json.dumps({"title": "Inferred"})))
        return Reply(200, completion_body(json.dumps(queue.pop(0))))

    server.default = reply
    return queue


def quiet_client(**options: Any) -> ModelClient:
    return ModelClient(MODEL, **{"sleep": lambda seconds: None, **options})


def test_cyclic_parents_from_a_model_are_broken_not_followed(tmp_path: Path, llm_server) -> None:
    answering(
        llm_server,
        {
            "nodes": [
                {"type": "section", "id": "s", "parent_id": "s"},
                {"type": "heading", "id": "h", "parent_id": "s", "level": "h1", "content": "Self"},
                {"type": "section", "id": "a", "parent_id": "b"},
                {"type": "heading", "id": "ha", "parent_id": "a", "level": "h2", "content": "A"},
                {"type": "section", "id": "b", "parent_id": "a"},
                {"type": "heading", "id": "hb", "parent_id": "b", "level": "h2", "content": "B"},
            ]
        },
    )
    built: dict[str, Any] = {}

    def run() -> None:
        with pytest.warns(Warning):
            built["document"] = build_index(
                scan(tmp_path / "c.pdf"), strategy="vision", model=quiet_client(), abstract=False
            )

    worker = threading.Thread(target=run)
    worker.start()
    worker.join(60)
    assert not worker.is_alive(), "a cycle of parents made the build hang"
    document = built["document"]
    assert [entry.title for entry in document.toc] == ["Self", "A", "B"]  # every section, none lost


def test_duplicate_and_colliding_ids_stay_distinct(tmp_path: Path, llm_server) -> None:
    answering(
        llm_server,
        {
            "nodes": [
                {"type": "section", "id": "n1"},
                {"type": "heading", "id": "n1", "parent_id": "n1", "level": "h1", "content": "Dup"},
                {"type": "paragraph", "id": "n 1", "parent_id": "n1", "content": "spaced"},
                {"type": "paragraph", "id": "n-1", "parent_id": "n1", "content": "dashed"},
            ]
        },
    )
    document = build_index(scan(tmp_path / "d.pdf"), strategy="vision", model=quiet_client(), abstract=False)
    ids = [node.id for node in document.pages[0].nodes]
    assert len(ids) == len(set(ids)) == 4
    section = document.pages[0].nodes[0]
    assert all(node.parent_id == section.id for node in document.pages[0].nodes[1:])


@pytest.mark.parametrize("rotation", [0, 90, 180, 270])
def test_pages_turned_by_rotate_are_not_turned_twice(tmp_path: Path, llm_server, rotation: int) -> None:
    answering(llm_server, {"nodes": []})
    document = pymupdf.open()
    page = document.new_page(width=612, height=792)
    # Text written sideways in the stored page; /Rotate 270 is what makes such a page upright on screen.
    page.insert_text((300, 700), "A landscape table, as wide tables often are. " * 2, fontsize=12, rotate=90)
    page.set_rotation(rotation)
    path = tmp_path / "r.pdf"
    document.save(path)
    build_index(path, strategy="vision", model=quiet_client(), dpi=72, abstract=False, title="R")
    import base64

    sent = Image.open(io.BytesIO(base64.b64decode(llm_server.image_urls(0)[0].split(",", 1)[1])))
    # Only the orientation that puts the text upright is landscape here: /Rotate 270 already does it.
    upright_landscape = (792, 612)
    assert sent.size == upright_landscape


def test_usage_counts_every_call_of_the_build_and_only_its_own(tmp_path: Path, llm_server) -> None:
    text = {"nodes": [{"type": "paragraph", "id": "p", "content": "Opening words of the report."}]}
    answering(llm_server, text, text)
    shared = quiet_client()
    path = scan(tmp_path / "u.pdf", 2, title=None)  # no title: the title call is made too
    first = build_index(path, strategy="vision", model=shared, abstract=False)
    assert first.usage is not None and first.usage.calls == 3  # two pages and the title
    answering(llm_server, {"nodes": []}, {"nodes": []})
    second = build_index(scan(tmp_path / "v.pdf", 2), strategy="vision", model=shared, abstract=False)
    assert second.usage is not None and second.usage.calls == 2  # this build's calls, not the client's total


def test_clients_sharing_one_llm_count_their_own_calls(llm_server) -> None:
    answering(llm_server, *[{"nodes": []}] * 4)
    llm = LLM(MODEL)
    first, second = ModelClient(llm), ModelClient(llm)
    for _ in range(50):
        ModelClient(llm)  # constructing clients must not pile up hooks
    first.ask([{"role": "user", "content": "a"}], PageAnswer, what="a")
    assert (first.usage.calls, second.usage.calls) == (1, 0)
    second.ask([{"role": "user", "content": "b"}], PageAnswer, what="b")
    second.ask([{"role": "user", "content": "c"}], PageAnswer, what="c")
    assert (first.usage.calls, second.usage.calls) == (1, 2)
    assert len(llm_server.requests) == 3


def test_a_retry_never_sleeps_past_the_deadline(llm_server) -> None:
    llm_server.fail(429, retry_after=20)
    waits: list[float] = []

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        time.sleep(seconds)

    client = ModelClient(MODEL, sleep=sleep)
    with pytest.raises(LLMExtractionError, match="time allowed ran out after 1 attempt"):
        client.ask(
            [{"role": "user", "content": "x"}], PageAnswer, what="page 1", deadline=time.monotonic() + 0.3
        )
    assert len(waits) == 1 and waits[0] <= 0.3
    with pytest.raises(LLMExtractionError, match="no time was left"):
        client.ask(
            [{"role": "user", "content": "x"}], PageAnswer, what="page 1", deadline=time.monotonic() - 1
        )


def test_every_page_is_rendered_once_even_when_one_renders_slowly(llm_server) -> None:
    answering(llm_server, *[{"nodes": []}] * 8)
    calls: list[int] = []
    lock = threading.Lock()
    blank = io.BytesIO()
    Image.new("RGB", (50, 50), "white").save(blank, format="PNG")

    def render(index: int) -> RenderedPage:
        with lock:
            calls.append(index)
        if index == 0:
            time.sleep(0.4)
        return RenderedPage(blank.getvalue(), 50, 50, 50.0, 50.0)

    result = extract_pages(list(range(8)), render, quiet_client(), parallel=3)
    assert len(result.pages) == 8
    assert sorted(calls) == list(range(8))


def test_text_chunks_are_always_bounded() -> None:
    for text in ("x" * 50_000, "word " * 100 + "y" * 30_000, "a\n\n" + "b" * 12_001):
        chunks = text_chunks(text)
        assert all(len(chunk) <= MAX_CHUNK_CHARS for chunk in chunks)
        assert "".join(chunks).replace("\n", "").replace(" ", "") == text.replace("\n", "").replace(" ", "")


def test_bad_post_processing_options_fail_before_any_call(tmp_path: Path, llm_server) -> None:
    path = scan(tmp_path / "o.pdf", 3)
    for options in (
        {"abstract_words": 10},
        {"abstract_iterations": 0},
        {"refine_threshold": 80},
        {"refine_sample": 0},
        {"refine_iterations": -1},
    ):
        with pytest.raises(InvalidOptionError):
            build_index(path, strategy="vision", model=quiet_client(), **options)
    assert llm_server.requests == []
    with pytest.raises(InvalidOptionError):
        ModelClient(MODEL, backoff=-1)
    with pytest.raises(InvalidOptionError):
        ModelClient(MODEL, attempts=2.5)  # type: ignore[arg-type]


def test_odd_printed_page_labels_do_not_break_the_toc() -> None:
    from extract_thinker_pageindex import HeadingNode, Page, SectionNode

    pages = [
        Page(
            index=0,
            nodes=[SectionNode(id="s"), HeadingNode(id="h", parent_id="s", level="h1", content="Intro")],
        )
    ]
    entries = [
        (0, TocEntryNode(id="e", title="Intro", printed_page="²")),
        (0, TocEntryNode(id="f", title="Other", printed_page="ix")),
    ]
    toc = toc_from_entries(entries, pages)
    assert toc[0].target_section_id == "s" and toc[1].target_page is None


def test_refinement_never_installs_a_worse_page(tmp_path: Path, llm_server) -> None:
    def reply(body: dict[str, Any]) -> Reply:
        system = json.dumps(body["messages"][0]["content"])
        if "You check the extraction" in system:
            score = 0.5 if not reply.reviews else 0.1
            reply.reviews += 1
            return Reply(200, completion_body(json.dumps({"score": score, "problems": ["missing row"]})))
        content = "Worse re-read." if "A reviewer checked" in system else "Original read."
        return Reply(
            200,
            completion_body(json.dumps({"nodes": [{"type": "paragraph", "id": "p", "content": content}]})),
        )

    reply.reviews = 0  # type: ignore[attr-defined]
    llm_server.default = reply
    document = build_index(
        scan(tmp_path / "w.pdf"),
        strategy="vision",
        model=quiet_client(),
        refine=True,
        refine_iterations=1,
        abstract=False,
    )
    assert document.pages[0].nodes[0].content == "Original read."
    (item,) = document.refinement
    assert (item.score_before, item.score_after, item.reextractions) == (0.5, 0.5, 1)


def test_photos_are_turned_by_their_exif_orientation(tmp_path: Path, llm_server) -> None:
    answering(llm_server, {"nodes": []})
    photo = tmp_path / "phone.jpg"
    image = Image.new("RGB", (400, 200), "white")
    exif = image.getexif()
    exif[0x0112] = 6  # "rotate 90 clockwise to view"
    image.save(photo, exif=exif)
    build_index(photo, model=quiet_client(), abstract=False, title="Photo")
    import base64

    sent = Image.open(io.BytesIO(base64.b64decode(llm_server.image_urls(0)[0].split(",", 1)[1])))
    assert sent.size == (200, 400)


def test_skip_with_every_page_failed_saves_nothing(tmp_path: Path, llm_server) -> None:
    from extract_thinker_pageindex import index_document, load_index

    path = scan(tmp_path / "all.pdf", 2)
    answering(llm_server, {"nodes": [{"type": "paragraph", "id": "p", "content": "Good."}]}, {"nodes": []})
    _, written = index_document(path, strategy="vision", model=quiet_client(), abstract=False, parallel=1)
    before = (written / "document.json").read_bytes()
    llm_server.default = lambda body: Reply(401, b'{"error": {"message": "key revoked"}}')
    with pytest.raises(LLMExtractionError, match="Every page failed, so nothing was indexed"):
        index_document(path, strategy="vision", model=quiet_client(), on_page_error="skip", abstract=False)
    assert (written / "document.json").read_bytes() == before  # the good index stays
    assert load_index(written).pages[0].nodes[0].content == "Good."


# -- answers of the wrong shape ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "wrong",
    [
        {},
        {"foo": 1},
        {"penalty": "50%", "termination_date": "2024-01-01"},  # the fields of another schema
    ],
)
def test_an_answer_without_nodes_is_asked_again_then_fails_the_page(
    tmp_path: Path, llm_server, wrong: dict[str, Any]
) -> None:
    # Taken for an empty page, such an answer gave an index of 0 nodes with no failure and exit code 0.
    answering(llm_server, wrong, wrong)
    with pytest.raises(LLMExtractionError, match="did not match the expected schema after 2 answer"):
        build_index(scan(tmp_path / "w.pdf"), strategy="vision", model=quiet_client(), abstract=False)
    page_requests = [body for body in llm_server.requests if "image_url" in json.dumps(body)]
    assert len(page_requests) == 2  # asked once more, with the error shown
    assert "nodes" in json.dumps(page_requests[1]["messages"][-1])

    # Skipped as documented: recorded as failed, the other pages kept.
    answering(llm_server, wrong, wrong, {"nodes": [{"type": "paragraph", "id": "p", "content": "Kept."}]})
    document = build_index(
        scan(tmp_path / "w2.pdf", pages=2),
        strategy="vision",
        model=quiet_client(),
        on_page_error="skip",
        parallel=1,
        abstract=False,
    )
    assert [page.index for page in document.failed_pages] == [0]
    assert [page.index for page in document.pages] == [1]


def test_a_repaired_answer_and_an_explicitly_empty_page_are_kept(tmp_path: Path, llm_server) -> None:
    answering(
        llm_server, {}, {"nodes": [{"type": "paragraph", "id": "p", "content": "Read."}]}, {"nodes": []}
    )
    document = build_index(
        scan(tmp_path / "r.pdf", pages=2), strategy="vision", model=quiet_client(), parallel=1, abstract=False
    )
    assert [[node.content for node in page.nodes] for page in document.pages] == [["Read."], []]
    assert document.failed_pages == []


def test_the_command_line_exits_non_zero_when_a_page_answer_has_the_wrong_shape(
    tmp_path: Path, llm_server
) -> None:
    import os
    import subprocess
    import sys

    # A server of its own process: the command line runs in another process than this test.
    server = subprocess.Popen(
        [sys.executable, str(Path(__file__).parent / "llm_server.py"), "--answer", "{}"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        env = {
            **os.environ,
            "OPENAI_API_BASE": url,
            "OPENAI_API_KEY": "sk-test",
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        }
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "extract_thinker_pageindex",
                "index",
                str(scan(tmp_path / "cli.pdf")),
                "--strategy",
                "vision",
                "--model",
                MODEL,
                "--no-abstract",
            ],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
    finally:
        server.communicate(timeout=10)
    assert done.returncode == 1, done.stderr
    assert "did not match the expected schema" in done.stderr
    assert not (tmp_path / "cli.pageindex").exists()
