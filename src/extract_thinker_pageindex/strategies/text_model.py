"""The plain-text builder with a model: pages split into bounded passages, each read into typed nodes."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ..document.model import (
    AnswerImageNode,
    AnswerTableNode,
    Node,
    Page,
    PageAnswer,
    PageOrigin,
    TableNode,
    TocEntryNode,
    document_node,
)
from ..errors import LLMExtractionError
from ..llm.client import ModelClient
from .vision import PageFailure, VisionResult, nest_across_pages, resolve_answer_ids

__all__ = ["MAX_CHUNK_CHARS", "TEXT_OBJECTIVE", "extract_text_pages", "text_chunks"]

TEXT_OBJECTIVE = """You turn a passage of a plain-text document into its typed structure, for a page index.
Answer with JSON {"nodes": [...]}: every piece of the passage in order, each with a passage-local "id"
(n1, n2, ...) and "parent_id" (the id of the section it belongs to, or null). Types: "section" (with a
2-3 sentence "description"), "heading" ("level" h1..h6, exact "content", parent_id its section),
"paragraph" ("level" paragraph | citation | code | aside | abstract | footnote, exact "content"),
"list_item" ("level" l1..l6, exact "content" without the bullet), "table" (the whole table as Markdown in
"content"), "metadata". Copy the text exactly; never summarise it."""

MAX_CHUNK_CHARS = 12_000  # about 3,000 tokens: a passage and its answer fit any current model


def text_chunks(text: str, limit: int = MAX_CHUNK_CHARS) -> list[str]:
    """Split text at paragraph boundaries into chunks of at most ``limit`` characters (a longer
    paragraph is cut at line, then word, boundaries)."""
    chunks: list[str] = []
    current = ""
    for paragraph in re.split(r"\n\s*\n", text):
        pieces = [paragraph]
        if len(paragraph) > limit:
            pieces, piece = [], ""
            # A "word" longer than the limit (a run without spaces) is cut into slices of the limit.
            parts = re.split(r"(\s+)", paragraph)
            words = [
                part[start : start + limit] for part in parts for start in range(0, max(len(part), 1), limit)
            ]
            for word in words:
                if len(piece) + len(word) > limit and piece:
                    pieces.append(piece)
                    piece = ""
                piece += word
            pieces.append(piece)
        for piece in pieces:
            if current and len(current) + len(piece) + 2 > limit:
                chunks.append(current)
                current = ""
            current = f"{current}\n\n{piece}" if current else piece
    if current.strip():
        chunks.append(current)
    return [chunk for chunk in chunks if chunk.strip()]


def extract_text_pages(
    pages_text: dict[int, str], client: ModelClient, *, parallel: int = 3, on_page_error: str = "raise"
) -> VisionResult:
    """Read plain-text pages (``{page index: text}``) with a model, chunk by chunk (never one unbounded
    call), the nodes of each page's chunks merged in order."""
    jobs = [
        (index, number, chunk)
        for index, text in pages_text.items()
        for number, chunk in enumerate(text_chunks(text))
    ]

    def work(job: tuple[int, int, str]) -> tuple[list[Node], int] | PageFailure:
        index, number, chunk = job
        messages = [{"role": "system", "content": TEXT_OBJECTIVE}, {"role": "user", "content": chunk}]
        try:
            answer = client.ask(messages, PageAnswer, what=f"page {index + 1}, passage {number + 1}")
        except LLMExtractionError as exc:
            return PageFailure(index, str(exc))
        ids, parents, lost = resolve_answer_ids(answer, f"p{index}-c{number}")
        nodes: list[Node] = []
        for node, node_id, parent in zip(answer.nodes, ids, parents, strict=True):
            if isinstance(node, (TocEntryNode, AnswerImageNode)):
                continue  # plain text has neither printed contents pages nor pictures
            update: dict[str, Any] = {"id": node_id, "parent_id": parent}
            if hasattr(node, "group_id"):
                update["group_id"] = None
            if isinstance(node, AnswerTableNode):
                fields = {**node.model_dump(exclude={"bbox", "image_data", "image_path"}), **update}
                nodes.append(TableNode(**fields))
            else:
                nodes.append(document_node(node, **update))
        return nodes, lost

    with ThreadPoolExecutor(max_workers=max(1, parallel)) as pool:
        outcomes = list(pool.map(work, jobs))
    failures = [outcome for outcome in outcomes if isinstance(outcome, PageFailure)]
    if failures and on_page_error == "raise":
        listed = "; ".join(failure.reason for failure in failures)
        raise LLMExtractionError(f"{len(failures)} passage(s) could not be read by the model. {listed}")
    failed_pages = {failure.index for failure in failures}
    if failures and failed_pages >= set(pages_text):
        listed = "; ".join(failure.reason for failure in failures)
        raise LLMExtractionError(f"Every page failed, so nothing was indexed. {listed}")
    merged: dict[int, list[Node]] = {index: [] for index in pages_text if index not in failed_pages}
    for (index, _, _), outcome in zip(jobs, outcomes, strict=True):
        if index in merged and not isinstance(outcome, PageFailure):
            merged[index].extend(outcome[0])
    pages = [
        Page(index=index, nodes=nodes, origin=PageOrigin(source="parsed")) for index, nodes in merged.items()
    ]
    nest_across_pages(pages)
    unique = {failure.index: failure for failure in failures}
    return VisionResult(pages=pages, failures=list(unique.values()))
