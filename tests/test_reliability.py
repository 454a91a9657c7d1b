"""Reliability: bad documents, bad model answers, killed writers and a loaded retriever — nothing lost.

Everything is real: PDFs written with PyMuPDF (or by hand), real SQLite files, the local HTTP model server,
processes that are really spawned and really killed. The worker processes of the last tests import this
module, so the page-index builders (which pull in ExtractThinker and litellm, seconds to import) are imported
inside the tests that use them, never at the top.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import multiprocessing
import os
import random
import re
import signal
import sqlite3
import struct
import threading
import time
import traceback
import warnings
import zlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pymupdf
import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st
from PIL import Image

from extract_thinker_pageindex.errors import (
    DocumentLoadError,
    EmptyDocumentError,
    LLMExtractionError,
    ModelRequiredError,
    PageIndexError,
    PageIndexWarning,
    UnsupportedFormatError,
)
from extract_thinker_pageindex.llm.client import ModelClient
from extract_thinker_pageindex.retrieval.sqlite import SQLitePageRetriever
from llm_server import Reply, completion_body
from pdf_support import CATALOG, raw_pdf

MODEL = "openai/test-reliability"
ATTEMPTS = 3
REPAIRS = 1
EARLIER_MARKDOWN = (
    "# Earlier Report\n\nAn index saved before: every failed attempt must leave it as it was.\n"
)


# -- shared helpers ----------------------------------------------------------------------------------


def snapshot(root: Path) -> dict[str, bytes | None]:
    """Every entry under ``root``: files with their bytes, directories as None."""
    return {
        str(path.relative_to(root)): (path.read_bytes() if path.is_file() else None)
        for path in sorted(root.rglob("*"))
    }


def digest(root: Path) -> str:
    """One hash of a directory's files and their bytes (what a killed writer left, compared by value)."""
    hasher = hashlib.sha256()
    for name, data in snapshot(root).items():
        hasher.update(name.encode() + b"\0" + (data if data is not None else b"<dir>") + b"\0")
    return hasher.hexdigest()


def leftovers(folder: Path) -> list[str]:
    """Staging folders a save leaves beside its target when it does not finish."""
    return sorted(p.name for p in folder.iterdir() if ".tmp-" in p.name or ".old-" in p.name)


def without_image_paths(document: Any) -> dict[str, Any]:
    """A document as JSON data, minus ``image_path`` (set by saving, absent in what the builder returns)."""
    data = json.loads(document.model_dump_json())
    for page in data["pages"]:
        for node in page["nodes"]:
            node.pop("image_path", None)
    return data


def model_client(**options: Any) -> ModelClient:
    """A client of the local server that never really sleeps between retries."""
    return ModelClient(
        MODEL, **{"attempts": ATTEMPTS, "repairs": REPAIRS, "sleep": lambda s: None, **options}
    )


def png_bytes(width: int, height: int, mode: str = "RGB") -> bytes:
    buffer = io.BytesIO()
    Image.new(mode, (width, height), "white" if mode == "RGB" else 0).save(buffer, "PNG")
    return buffer.getvalue()


def text_pdf(texts: list[str]) -> pymupdf.Document:
    document = pymupdf.open()
    for text in texts:
        document.new_page().insert_textbox(pymupdf.Rect(72, 72, 540, 770), text, fontsize=10)
    return document


@pytest.fixture
def earlier(tmp_path: Path) -> Path:
    """A valid page index already saved at the output path the failing attempts write to."""
    from extract_thinker_pageindex import index_document

    source = tmp_path / "earlier" / "earlier.md"
    source.parent.mkdir()
    source.write_text(EARLIER_MARKDOWN, encoding="utf-8")
    _, target = index_document(source, output=tmp_path / "out" / "kept.pageindex")
    return target


def assert_earlier_index_intact(target: Path, before: dict[str, bytes | None]) -> None:
    from extract_thinker_pageindex import load_index

    assert snapshot(target) == before
    assert load_index(target).title == "Earlier Report"
    assert leftovers(target.parent) == []


# -- 1. bad documents --------------------------------------------------------------------------------


def six_page_pdf_bytes() -> bytes:
    return text_pdf(
        [f"Page {n} of the quarterly report, with its running text. " * 6 for n in range(1, 7)]
    ).tobytes()


def write_corrupt(folder: Path) -> Path:
    path = folder / "corrupt.pdf"
    path.write_bytes(b"%PDF-1.7\n" + b"\x00garbage" * 100)
    return path


def write_truncated_to_200_bytes(folder: Path) -> Path:
    path = folder / "cut-short.pdf"
    path.write_bytes(six_page_pdf_bytes()[:200])
    return path


def write_truncated_in_half(folder: Path) -> Path:
    data = six_page_pdf_bytes()
    path = folder / "half-download.pdf"
    path.write_bytes(data[: len(data) // 2])
    return path


def write_truncated_tail(folder: Path) -> Path:
    path = folder / "no-trailer.pdf"
    path.write_bytes(six_page_pdf_bytes()[:-30])  # the xref offset and %%EOF are gone
    return path


def write_encrypted(folder: Path) -> Path:
    path = folder / "locked.pdf"
    text_pdf(["Salaries of the board, strictly confidential."]).save(
        path, encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="user-secret", owner_pw="owner-secret"
    )
    return path


def write_zero_pages(folder: Path) -> Path:
    path = folder / "no-pages.pdf"  # PyMuPDF refuses to write a PDF without pages
    path.write_bytes(raw_pdf([CATALOG, "<< /Type /Pages /Kids [] /Count 0 >>"]))
    return path


def write_zero_bytes(folder: Path) -> Path:
    path = folder / "empty.pdf"
    path.write_bytes(b"")
    return path


def write_html_named_pdf(folder: Path) -> Path:
    path = folder / "download.pdf"
    path.write_bytes(b"<html><body><h1>502 Bad Gateway</h1></body></html>")
    return path


def write_png_named_pdf(folder: Path) -> Path:
    path = folder / "scan.pdf"
    path.write_bytes(png_bytes(40, 30))
    return path


def write_directory_named_pdf(folder: Path) -> Path:
    path = folder / "folder.pdf"
    path.mkdir()
    return path


def write_nothing(folder: Path) -> Path:
    return folder / "missing.pdf"


def write_image_only_pages(folder: Path) -> Path:
    document = pymupdf.open()
    for _ in range(2):
        document.new_page().insert_image(pymupdf.Rect(72, 72, 472, 472), stream=png_bytes(200, 200))
    path = folder / "pictures.pdf"
    document.save(path)
    return path


def write_small_image(folder: Path) -> Path:
    path = folder / "photo.png"
    path.write_bytes(png_bytes(64, 48))
    return path


def write_image_over_pixel_limit(folder: Path) -> Path:
    # 64 million pixels: over the project's 60 million, under Pillow's own 89 million warning.
    path = folder / "poster.png"
    path.write_bytes(png_bytes(8000, 8000, mode="1"))
    return path


def write_decompression_bomb(folder: Path) -> Path:
    """A PNG whose header claims 100,000 x 100,000 pixels: a few bytes that would expand to 30 GB."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 100_000, 100_000, 8, 2, 0, 0, 0)
    path = folder / "bomb.png"
    path.write_bytes(
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\x00" * 64))
        + chunk(b"IEND", b"")
    )
    return path


def write_binary_markdown(folder: Path) -> Path:
    path = folder / "notes.md"
    path.write_bytes(b"# Notes\n\n\x00\x01\x02\x03 binary")
    return path


def write_cp1252_markdown(folder: Path) -> Path:
    path = folder / "menu.md"
    path.write_bytes("# Café crème\n\nPrix: 3 €".encode("cp1252"))
    return path


def write_utf16_markdown(folder: Path) -> Path:
    path = folder / "wide.md"
    path.write_bytes("# Title\n\nBody text.".encode("utf-16"))
    return path


def write_blank_markdown(folder: Path) -> Path:
    path = folder / "blank.md"
    path.write_text(" \n\n\t\n", encoding="utf-8")
    return path


def write_partial_download(folder: Path) -> Path:
    path = folder / "annual-report.pdf.part"
    path.write_bytes(six_page_pdf_bytes())
    return path


OUTLINE_HEADINGS = ["Introduction", "Methods", "Results"]


def outlined_pdf(break_outline: Callable[[pymupdf.Document, int, int, int], None]) -> pymupdf.Document:
    """Three pages, each opened by a 16pt heading, with an outline that ``break_outline`` then damages."""
    document = pymupdf.open()
    for title in OUTLINE_HEADINGS:
        page = document.new_page()
        page.insert_text((72, 80), title, fontsize=16)
        page.insert_text((72, 120), f"The {title.lower()} of the study, in plain words.", fontsize=10)
        page.insert_text((72, 135), "Each line of this body text is set in the same small size.", fontsize=10)
    document.set_toc([[1, title, number] for number, title in enumerate(OUTLINE_HEADINGS, start=1)])
    root = int(document.xref_get_key(document.pdf_catalog(), "Outlines")[1].split()[0])
    first = int(document.xref_get_key(root, "First")[1].split()[0])
    last = int(document.xref_get_key(root, "Last")[1].split()[0])
    break_outline(document, root, first, last)
    return document


def write_outline_dangling(folder: Path) -> Path:
    path = folder / "dangling-outline.pdf"
    outlined_pdf(lambda doc, root, first, last: doc.xref_set_key(root, "First", "999 0 R")).save(path)
    return path


def write_outline_cycle(folder: Path) -> Path:
    path = folder / "cyclic-outline.pdf"
    outlined_pdf(lambda doc, root, first, last: doc.xref_set_key(last, "Next", f"{first} 0 R")).save(path)
    return path


@dataclass(frozen=True)
class BadDocument:
    """A bad document, the ``index_document`` options it is tried with, and what must come of it."""

    write: Callable[[Path], Path]
    error: type[PageIndexError]
    message: str  # a regular expression the error message matches
    options: dict[str, Any] = field(default_factory=dict)
    model: bool = False  # pass a model client (for images): the error must come before any call
    warning: str | None = None  # the PageIndexWarning given on the way (a repaired file)


BAD_DOCUMENTS = {
    "corrupt": BadDocument(write_corrupt, DocumentLoadError, "is not a readable PDF"),
    "truncated-to-200-bytes": BadDocument(
        write_truncated_to_200_bytes, DocumentLoadError, "is not a readable PDF"
    ),
    # MuPDF repairs a half file; the pages it lost are named, and nothing is written.
    # (Without OCR: with it, the lost pages are found to draw nothing; see test_ocr.py.)
    "truncated-in-half": BadDocument(
        write_truncated_in_half,
        ModelRequiredError,
        r"Page\(s\) 4, 5, 6 of .* have no text layer",
        options={"ocr": "never"},
        warning="damaged; MuPDF repaired it",
    ),
    "encrypted-without-password": BadDocument(
        write_encrypted, DocumentLoadError, "is encrypted; pass its password"
    ),
    "encrypted-wrong-password": BadDocument(
        write_encrypted, DocumentLoadError, "password for .* is wrong", {"password": "guess"}
    ),
    "zero-pages": BadDocument(write_zero_pages, EmptyDocumentError, "has no pages"),
    "zero-bytes": BadDocument(write_zero_bytes, EmptyDocumentError, r"is empty \(0 bytes\)"),
    "html-named-pdf": BadDocument(write_html_named_pdf, DocumentLoadError, "is not a PDF"),
    "png-named-pdf": BadDocument(write_png_named_pdf, DocumentLoadError, "is not a PDF"),
    "directory-named-pdf": BadDocument(write_directory_named_pdf, DocumentLoadError, "is a directory"),
    "missing-file": BadDocument(write_nothing, DocumentLoadError, "No such file"),
    "image-only-pages": BadDocument(
        write_image_only_pages,
        ModelRequiredError,
        r"Page\(s\) 1, 2 of .* have no text layer",
        options={"ocr": "never"},
    ),
    "image-without-model": BadDocument(write_small_image, ModelRequiredError, "needs a vision model"),
    "image-over-pixel-limit": BadDocument(
        write_image_over_pixel_limit, DocumentLoadError, "8000 x 8000 pixels, over the limit", model=True
    ),
    "image-decompression-bomb": BadDocument(
        write_decompression_bomb, DocumentLoadError, "refused as a decompression bomb", model=True
    ),
    "markdown-binary": BadDocument(write_binary_markdown, DocumentLoadError, "looks binary"),
    "markdown-cp1252": BadDocument(
        write_cp1252_markdown, DocumentLoadError, r"is not valid UTF-8 \(byte \d+\)"
    ),
    "markdown-utf16": BadDocument(write_utf16_markdown, DocumentLoadError, "looks binary"),
    "markdown-blank": BadDocument(write_blank_markdown, EmptyDocumentError, "no text to index"),
    "partial-download": BadDocument(
        write_partial_download, UnsupportedFormatError, r"extension '\.part' is not supported.*content_type="
    ),
}


@pytest.fixture
def bad_document(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[BadDocument, Path]:
    case = BAD_DOCUMENTS[request.param]
    folder = tmp_path / "in"
    folder.mkdir()
    return case, case.write(folder)


@pytest.mark.parametrize("bad_document", list(BAD_DOCUMENTS), indirect=True)
def test_a_bad_document_raises_its_documented_error_and_keeps_the_earlier_index(
    bad_document: tuple[BadDocument, Path], earlier: Path, request: pytest.FixtureRequest
) -> None:
    from extract_thinker_pageindex import index_document
    from extract_thinker_pageindex.document.store import default_output_path

    case, path = bad_document
    before = snapshot(earlier)
    options = dict(case.options)
    server = request.getfixturevalue("llm_server") if case.model else None
    if case.model:
        options["model"] = model_client()

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with pytest.raises(PageIndexError) as caught:
            index_document(path, output=earlier, overwrite=True, **options)

    error = caught.value
    assert type(error) is case.error, f"{type(error).__name__}: {error}"
    assert re.search(case.message, str(error)), str(error)
    assert path.stem in str(error), "the message names the file"
    given = [str(item.message) for item in seen if issubclass(item.category, PageIndexWarning)]
    if case.warning is None:
        assert given == []
    else:
        assert len(given) == 1 and case.warning in given[0], given
    assert_earlier_index_intact(earlier, before)
    assert not default_output_path(path).exists()
    assert leftovers(path.parent) == []
    if server is not None:
        assert server.requests == []  # refused before any model call


@dataclass(frozen=True)
class DegradedDocument:
    """A damaged (or locked) document that still indexes, its documented warning or log line, and what it
    must hold."""

    write: Callable[[Path], Path]
    pages: int
    options: dict[str, Any] = field(default_factory=dict)
    warning: str | None = None  # the PageIndexWarning
    logged: str | None = None  # the warning logged on extract_thinker_pageindex.pdf
    headings: list[str] | None = None
    text: str | None = None  # words that must be in the document


DEGRADED_DOCUMENTS = {
    "image-only-pages-skipped": DegradedDocument(
        write_image_only_pages,
        pages=2,
        options={"on_page_error": "skip", "ocr": "never"},
        warning="have no text layer (scanned or pictures only) and were kept empty",
    ),
    "outline-pointing-nowhere": DegradedDocument(
        write_outline_dangling,
        pages=3,
        logged="outline ignored: 1 of 1 outline entries point outside the document",
        headings=OUTLINE_HEADINGS,
    ),
    # MuPDF reads a cyclic outline as no outline at all, so there is nothing to log: headings come from fonts.
    "outline-with-a-cycle": DegradedDocument(write_outline_cycle, pages=3, headings=OUTLINE_HEADINGS),
    "trailer-cut-off": DegradedDocument(
        write_truncated_tail,
        pages=6,
        warning="damaged; MuPDF repaired it",
        text="Page 6 of the quarterly report",
    ),
    "encrypted-right-password": DegradedDocument(
        write_encrypted, pages=1, options={"password": "user-secret"}, text="strictly confidential"
    ),
}


@pytest.fixture
def degraded_document(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[DegradedDocument, Path]:
    case = DEGRADED_DOCUMENTS[request.param]
    folder = tmp_path / "in"
    folder.mkdir()
    return case, case.write(folder)


@pytest.mark.parametrize("degraded_document", list(DEGRADED_DOCUMENTS), indirect=True)
def test_a_damaged_but_usable_document_indexes_with_its_documented_notice(
    degraded_document: tuple[DegradedDocument, Path], earlier: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from extract_thinker_pageindex import HeadingNode, index_document, load_index

    case, path = degraded_document
    with warnings.catch_warnings(record=True) as seen, caplog.at_level(logging.WARNING):
        warnings.simplefilter("always")
        document, written = index_document(path, output=earlier, overwrite=True, **case.options)

    given = [str(item.message) for item in seen if issubclass(item.category, PageIndexWarning)]
    if case.warning is None:
        assert given == []
    else:
        assert len(given) == 1 and case.warning in given[0], given
    logged = [r.getMessage() for r in caplog.records if r.name == "extract_thinker_pageindex.pdf"]
    if case.logged is not None:
        assert len(logged) == 1 and case.logged in logged[0], logged
    assert len(document.pages) == case.pages
    if case.headings is not None:
        headings = [node.content for _, node in document.iter_nodes() if isinstance(node, HeadingNode)]
        assert headings == case.headings
        assert [entry.title for entry in document.toc] == case.headings
    if case.text is not None:
        assert case.text in document.model_dump_json()
    # The earlier index was replaced, whole, by this one.
    assert written == earlier
    assert without_image_paths(load_index(earlier)) == without_image_paths(document)
    assert leftovers(earlier.parent) == []


def test_a_two_thousand_page_pdf_indexes_every_page(tmp_path: Path) -> None:
    from extract_thinker_pageindex import ParagraphNode, index_document, load_index

    document = pymupdf.open()
    for number in range(1, 2001):
        document.new_page(width=200, height=200).insert_text(
            (20, 100), f"Leaf {number} of the ledger.", fontsize=9
        )
    path = tmp_path / "ledger.pdf"
    document.save(path)
    document.close()

    built, written = index_document(path, strategy="text", images=False)

    assert built.source_page_count == 2000
    assert [page.index for page in built.pages] == list(range(2000))
    for position in (0, 999, 1999):
        (node,) = built.pages[position].nodes
        assert isinstance(node, ParagraphNode) and node.content == f"Leaf {position + 1} of the ledger."
    assert len(load_index(written).pages) == 2000


# -- 2. bad model answers ----------------------------------------------------------------------------


def scan_pdf(path: Path, sizes: list[tuple[int, int]]) -> Path:
    """Pages without text (as scans are), of the given sizes in points; titled, so no title call is made."""
    document = pymupdf.open()
    for width, height in sizes:
        page = document.new_page(width=width, height=height)
        page.draw_rect(pymupdf.Rect(100, 100, 300, 200), color=(0.5, 0.5, 0.5), fill=(0.5, 0.5, 0.5))
    document.set_metadata({"title": "Scanned"})
    document.save(path)
    return path


def answer(*nodes: dict[str, Any]) -> Reply:
    return Reply(200, completion_body(json.dumps({"nodes": list(nodes)})))


def cut_off_completion() -> bytes:
    """A chat.completion the model stopped at its token limit: JSON cut mid-string, finish_reason "length"."""
    return json.dumps(
        {
            "id": "chatcmpl-cut",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": "test-model",
            "choices": [
                {
                    "index": 0,
                    "message": {
                        "role": "assistant",
                        "content": '{"nodes": [{"type": "paragraph", "id": "n1", "content": "Revenue for t',
                    },
                    "finish_reason": "length",
                }
            ],
            "usage": {"prompt_tokens": 1200, "completion_tokens": 4096, "total_tokens": 5296},
        }
    ).encode()


@dataclass(frozen=True)
class BadAnswer:
    """What the server answers every page request with, and what the build must make of it."""

    reply: Callable[[], Reply]
    requests: tuple[int, int]  # the fewest and most requests one page may cost
    reason: str  # a regular expression the error message matches
    client: dict[str, Any] = field(default_factory=dict)


BAD_ANSWERS = {
    "empty-http-body": BadAnswer(
        lambda: Reply(200, b""), (1, ATTEMPTS), r"page 1: The model could not extract page 1"
    ),
    "empty-content": BadAnswer(
        lambda: Reply(200, completion_body("")),
        (1 + REPAIRS, 1 + REPAIRS),
        rf"page 1: .*did not match the expected schema after {1 + REPAIRS} answer",
    ),
    "cut-off-by-the-token-limit": BadAnswer(
        lambda: Reply(200, cut_off_completion()),
        (1, 1 + REPAIRS),
        r"page 1: .*cut off by the model.s output token limit",
    ),
    "429-storm": BadAnswer(
        lambda: Reply(429, b'{"error": {"message": "slow down"}}'),
        (ATTEMPTS, ATTEMPTS),
        r"page 1: .*rate limited \(429\)",
    ),
    # Under a page deadline a call waits at least a second (ModelClient.ask): two attempts suffice.
    "timeouts": BadAnswer(
        lambda: Reply(200, completion_body('{"nodes": []}'), delay=1.5),
        (2, 2),
        r"page 1: .*timed out",
        {"timeout": 0.3, "attempts": 2},
    ),
}


@pytest.mark.parametrize("kind", list(BAD_ANSWERS))
def test_a_bad_answer_costs_bounded_calls_then_fails_without_writing(
    kind: str, tmp_path: Path, earlier: Path, llm_server
) -> None:
    from extract_thinker_pageindex import build_index, index_document
    from extract_thinker_pageindex.document.store import default_output_path

    case = BAD_ANSWERS[kind]
    llm_server.default = lambda body: case.reply()
    folder = tmp_path / "scans"
    folder.mkdir()
    pdf = scan_pdf(folder / "statement.pdf", [(612, 792)])
    fewest, most = case.requests

    with pytest.raises(LLMExtractionError) as caught:
        build_index(pdf, strategy="vision", model=model_client(**case.client), abstract=False)
    assert type(caught.value) is LLMExtractionError
    assert re.search(case.reason, str(caught.value)), str(caught.value)
    assert fewest <= len(llm_server.requests) <= most

    # index_document fails the same way and writes nothing: no index, no staging folder, beside the source
    # or over an earlier index.
    before = snapshot(earlier)
    for output in (None, earlier):
        llm_server.requests.clear()
        with pytest.raises(LLMExtractionError):
            index_document(
                pdf,
                output=output,
                overwrite=True,  # the earlier index is another file's: replaced only if the build succeeds
                strategy="vision",
                model=model_client(**case.client),
                abstract=False,
            )
        assert fewest <= len(llm_server.requests) <= most
        assert not default_output_path(pdf).exists()
        assert sorted(p.name for p in folder.iterdir()) == ["statement.pdf"]
        assert_earlier_index_intact(earlier, before)


def test_a_429_storm_on_one_page_is_skipped_and_recorded_with_the_rest_kept(
    tmp_path: Path, llm_server
) -> None:
    from extract_thinker_pageindex import index_document, load_index

    # The middle page has its own size, so the server can tell its requests from the others'.
    def reply(body: dict[str, Any]) -> Reply:
        if "600 x 800 pixels" in json.dumps(body["messages"]):
            return Reply(429, b'{"error": {"message": "slow down"}}')
        return answer({"type": "paragraph", "id": "p", "content": "Read."})

    llm_server.default = reply
    waits: list[float] = []
    pdf = scan_pdf(tmp_path / "three.pdf", [(612, 792), (600, 800), (612, 792)])
    client = ModelClient(MODEL, attempts=ATTEMPTS, sleep=waits.append)
    options: dict[str, Any] = {
        "strategy": "vision",
        "model": client,
        "dpi": 72,
        "parallel": 1,
        "abstract": False,
    }

    document, written = index_document(pdf, on_page_error="skip", **options)

    stormed = [r for r in llm_server.requests if "600 x 800 pixels" in json.dumps(r["messages"])]
    assert len(stormed) == ATTEMPTS and len(waits) == ATTEMPTS - 1
    assert len(llm_server.requests) == ATTEMPTS + 2
    assert [page.index for page in document.pages] == [0, 2]
    assert [page.nodes[0].content for page in document.pages] == ["Read.", "Read."]
    (failed,) = document.failed_pages
    assert failed.index == 1 and "page 2" in failed.reason and "rate limited (429)" in failed.reason
    loaded = load_index(written)
    assert [page.index for page in loaded.pages] == [0, 2]
    assert loaded.failed_pages == document.failed_pages

    # With on_page_error="raise", the same storm fails the document naming the page.
    llm_server.requests.clear()
    with pytest.raises(
        LLMExtractionError, match=r"1 page\(s\) could not be read.*page 2: .*rate limited \(429\)"
    ):
        index_document(pdf, output=tmp_path / "strict.pageindex", **options)
    assert len(llm_server.requests) == ATTEMPTS + 2
    assert not (tmp_path / "strict.pageindex").exists()
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize(
    ("bbox", "saved"),
    [
        pytest.param([300, 200, 100, 50], (93, 42, 306, 208), id="inverted"),
        pytest.param([5000, 6000, 9000, 9999], None, id="beyond-the-page"),
        pytest.param([-900, -800, -100, -50], None, id="before-the-page"),
        pytest.param([10**400, 0, 10**400 + 1, 10], None, id="beyond-float-range"),
    ],
)
def test_a_bad_box_is_normalised_or_dropped_and_the_page_kept(
    bbox: list[int], saved: tuple[int, int, int, int] | None, tmp_path: Path, llm_server
) -> None:
    from extract_thinker_pageindex import ImageNode, ParagraphNode, index_document, load_index

    llm_server.default = lambda body: answer(
        {"type": "paragraph", "id": "p", "content": "Figure 1 shows the trend."},
        {"type": "image", "id": "i", "kind": "chart", "bbox": bbox},
    )
    # 72 dpi: one pixel per point, so the saved box is the answered one, ordered, padded by 1% and clamped.
    _, written = index_document(
        scan_pdf(tmp_path / "figure.pdf", [(612, 792)]),
        strategy="vision",
        model=model_client(),
        dpi=72,
        abstract=False,
    )

    paragraph, image = load_index(written).pages[0].nodes
    assert isinstance(paragraph, ParagraphNode) and paragraph.content == "Figure 1 shows the trend."
    assert isinstance(image, ImageNode) and image.kind == "chart"
    assert image.bbox == saved
    if saved is None:
        assert image.image_data is None and not (written / "images").exists()
    else:
        x0, y0, x1, y1 = saved
        assert Image.open(io.BytesIO(image.image_data)).size == (x1 - x0, y1 - y0)
    assert len(llm_server.requests) == 1


# -- 3. a writer killed at any instant ---------------------------------------------------------------


def wait_for_staging(folder: Path, before: set[str], timeout: float) -> bool:
    """Poll ``folder`` until a staging folder not in ``before`` appears (a save is under way)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if set(leftovers(folder)) - before:
            return True
    return False


def kill_while_indexing(sources: list[str], target: str, trials: int, seed: int, results: Any) -> None:
    """Fork a child that re-indexes ``sources`` into ``target`` in a loop, SIGKILL it after its first save,
    and record what ``target`` then holds; ``trials`` times.

    Odd trials kill at a random instant (mostly while the writer parses, between saves); even trials wait
    until a save's staging folder appears and kill then, so that kills land inside the save's few
    milliseconds however busy the machine is, rather than by luck.

    Runs in a freshly spawned process: single-threaded, so forking it is safe. Module level so that the
    spawn start method can import it.
    """
    import importlib

    from extract_thinker_pageindex import index_document, load_index

    importlib.import_module("extract_thinker_pageindex.strategies.pdf_text")  # forked writers start warm
    rng = random.Random(seed)
    outcomes = []
    for trial in range(trials):
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # the writer
            os.close(read_end)
            try:
                rounds = 0
                while True:
                    index_document(sources[rounds % 2], output=target, overwrite=True)
                    rounds += 1
                    if rounds == 1:
                        os.write(write_end, b"!")
            finally:
                os._exit(1)
        os.close(write_end)
        saved_once = os.read(read_end, 1) == b"!"
        os.close(read_end)
        if trial % 2:
            time.sleep(rng.uniform(0.0, 0.03))
        else:
            wait_for_staging(Path(target).parent, set(leftovers(Path(target).parent)), timeout=10.0)
            time.sleep(rng.uniform(0.0, 0.001))
        os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        killed = os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
        try:
            pages = len(load_index(target).pages)
            state = digest(Path(target))
        except Exception as exc:
            pages, state = -1, f"{type(exc).__name__}: {exc}"
        outcomes.append((trial, saved_once, killed, len(leftovers(Path(target).parent)), pages, state))
    results.put(outcomes)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="kills forked writers")
def test_a_writer_killed_at_any_instant_leaves_one_whole_index(tmp_path: Path) -> None:
    from extract_thinker_pageindex import index_document, load_index

    sources = []
    for name, pages in (("first", 2), ("second", 3)):
        document = pymupdf.open()
        for number in range(pages):
            page = document.new_page()
            page.insert_text(
                (72, 72), f"The {name} version, page {number + 1}, with its own words.", fontsize=11
            )
            noise = Image.frombytes("RGB", (200, 200), random.Random(number).randbytes(200 * 200 * 3))
            buffer = io.BytesIO()
            noise.save(buffer, "PNG")
            page.insert_image(pymupdf.Rect(72, 100, 472, 500), stream=buffer.getvalue())
        sources.append(tmp_path / f"{name}.pdf")
        document.save(sources[-1])
    expected = {}
    for source in sources:
        _, reference = index_document(source, output=tmp_path / "reference" / f"{source.stem}.pageindex")
        expected[digest(reference)] = source.stem
    target = tmp_path / "out" / "shared.pageindex"
    index_document(sources[0], output=target)

    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    killer = context.Process(
        target=kill_while_indexing, args=([str(s) for s in sources], str(target), 30, 7, results)
    )
    killer.start()
    try:
        outcomes = results.get(timeout=120)
    finally:
        killer.join(timeout=30)
        if killer.is_alive():
            killer.kill()

    assert killer.exitcode == 0
    for trial, saved_once, killed, _, pages, state in outcomes:
        assert saved_once and killed, f"trial {trial}: the writer did not run, or died on its own"
        assert state in expected, f"trial {trial}: the index holds {state}"
        assert pages == {"first": 2, "second": 3}[expected[state]]
    # Kills landed mid-write (they left staging folders behind): the test did what it says.
    assert outcomes[-1][3] > 0, "no kill landed inside a save"
    # And a later save still works over the debris.
    index_document(sources[1], output=target, overwrite=True)
    assert len(load_index(target).pages) == 3


# -- 4. the retriever under load ---------------------------------------------------------------------

# Document ids as hostile as the ones users pass: NUL inside, emoji, 5,000 characters.
LOAD_DOC_IDS = ("plain", "nul\x00inside", "📄 ünïcödé", "long-" + "x" * 5000)
# Query tails that are no words: FTS5 syntax, NUL bytes, symbols. A search must ignore them.
QUERY_TAILS = ("", " \x00", ' "', " NEAR(", " *", " ^:-", " 📄", " " + "\x00" * 300, " —… ((")
LOAD_SECONDS = 3.0
LOAD_MAX_LOOPS = 4000
PAGE_TEXT = re.compile(r"\beverywhere\]? doc(\d+) ver(\d+) slot(\d+)")


def version_pages(doc: int, version: int) -> list[str]:
    """The pages of one version of one document.

    Every page names its document, its version and its slot. The page count (2 to 6) and the page length
    (4 to 10 words) follow the version, so a search result holding pages of two versions shows as a wrong
    count, unequal scores (BM25 sees the lengths) or mixed markers in the snippets.
    """
    filler = " filler" * (version % 7)
    return [f"everywhere doc{doc} ver{version} slot{slot}{filler}" for slot in range(2 + version % 5)]


def churn(
    retriever: SQLitePageRetriever, worker: int, started: Any, finished: Any, seconds: float, max_loops: int
) -> tuple[list[str], dict[str, int], set[tuple[int, int]]]:
    """Re-index random documents with new versions and check every search; returns errors, counts and the
    (document, version) pairs written.

    ``started[d]`` and ``finished[d]`` count the re-indexes of document ``d`` begun and done, by every
    thread and process. A reader that sees them equal before its reads and ``started`` unchanged after
    them knew no write could land in between: its reads must then agree exactly, across calls.
    """
    rng = random.Random(worker)
    errors: list[str] = []
    counts = {"writes": 0, "searches": 0, "settled": 0}
    written: set[tuple[int, int]] = set()
    stop = time.monotonic() + seconds
    loops = 0
    try:
        while time.monotonic() < stop and loops < max_loops and len(errors) < 20:
            loops += 1
            d = rng.randrange(len(LOAD_DOC_IDS))
            doc_id = LOAD_DOC_IDS[d]
            if rng.random() < 0.35:
                version = worker * 1_000_000 + counts["writes"] + 1
                with started.get_lock():
                    started[d] += 1
                try:
                    retriever.index(doc_id, version_pages(d, version))
                finally:
                    with finished.get_lock():
                        finished[d] += 1
                counts["writes"] += 1
                written.add((d, version))
                continue

            done_before = finished[d]
            begun_before = started[d]
            matches = retriever.search(doc_id, "everywhere" + rng.choice(QUERY_TAILS), max_pages=50)
            counts["searches"] += 1
            pages = sorted(match.page_number for match in matches)
            where = f"worker {worker}, doc {d}"
            # One search is one snapshot: all the pages of exactly one version, identical in shape.
            if pages != list(range(1, len(pages) + 1)) or not 2 <= len(pages) <= 6:
                errors.append(f"{where}: a search returned pages {pages}")
                continue
            if len({match.score for match in matches}) != 1:
                errors.append(f"{where}: pages of unequal shape in one search: {matches}")
            snippets = [retriever.snippet(doc_id, number, "everywhere") for number in pages]
            page_count = retriever.page_count(doc_id)
            settled = done_before == begun_before == started[d]
            markers = []
            for number, text in zip(pages, snippets, strict=True):
                found = PAGE_TEXT.search(text)
                if found is None:
                    # Pages 1 and 2 exist in every version: their snippet is never empty. Later pages may
                    # have gone with a re-index between the search and the snippet, unless none could land.
                    if number <= 2 or settled:
                        errors.append(f"{where}: the snippet of page {number} is {text!r}")
                    continue
                if int(found[1]) != d or int(found[3]) != number - 1:
                    errors.append(f"{where}: the snippet of page {number} is another page's: {text!r}")
                markers.append(int(found[2]))
            if settled:
                counts["settled"] += 1
                if (
                    len(set(markers)) != 1
                    or len(version_pages(d, markers[0])) != len(pages)
                    or page_count != len(pages)
                ):
                    errors.append(f"{where}: one settled read saw versions {markers}, {page_count} pages")
            if loops % 16 == 0 and retriever.document_ids() != sorted(LOAD_DOC_IDS):
                errors.append(f"{where}: a document went missing during a re-index")
    except Exception:
        errors.append(f"worker {worker}: {traceback.format_exc()}")
    return errors, counts, written


def error_kind(error: str) -> str:
    """What went wrong, without who saw it: the exception line of a traceback, or the message's gist."""
    if "Traceback" in error:
        return error.strip().splitlines()[-1][:120]
    return re.sub(r"^worker \d+, doc \d+: |'.*$|\[.*$", "", error)[:120]


def load_worker(
    path: str, worker: int, started: Any, finished: Any, ready: Any, go: Any, seconds: float, results: Any
) -> None:
    """One process of the load test: its own retriever on the shared file. Module level for spawn."""
    try:
        with SQLitePageRetriever(path) as retriever:
            ready.put(worker)
            go.wait(60)
            outcome = churn(retriever, worker, started, finished, seconds, LOAD_MAX_LOOPS)
    except Exception:
        outcome = ([f"process {worker}: {traceback.format_exc()}"], {}, set())
    results.put((worker, *outcome))


def test_threads_and_processes_share_one_file_and_every_search_sees_one_version(tmp_path: Path) -> None:
    path = tmp_path / "pages.sqlite"
    threads_count, processes_count = 8, 4
    context = multiprocessing.get_context("spawn")
    started = context.Array("q", len(LOAD_DOC_IDS))
    finished = context.Array("q", len(LOAD_DOC_IDS))
    ready, results, go = context.Queue(), context.Queue(), context.Event()

    with SQLitePageRetriever(path) as shared:
        for d, doc_id in enumerate(LOAD_DOC_IDS):
            shared.index(doc_id, version_pages(d, 0))
        processes = [
            context.Process(
                target=load_worker,
                args=(str(path), worker, started, finished, ready, go, LOAD_SECONDS, results),
            )
            for worker in range(threads_count + 1, threads_count + processes_count + 1)
        ]
        for process in processes:
            process.start()
        outcomes: list[tuple[Any, ...]] = []
        try:
            assert sorted(ready.get(timeout=90) for _ in processes) == list(range(9, 13))
            go.set()
            lock = threading.Lock()

            def thread_main(worker: int) -> None:
                outcome = churn(shared, worker, started, finished, LOAD_SECONDS, LOAD_MAX_LOOPS)
                with lock:
                    outcomes.append((worker, *outcome))

            threads = [threading.Thread(target=thread_main, args=(w,)) for w in range(1, threads_count + 1)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(timeout=60)
            assert not any(thread.is_alive() for thread in threads)
            outcomes.extend(results.get(timeout=60) for _ in processes)
        finally:
            go.set()
            for process in processes:
                process.join(timeout=30)
                if process.is_alive():
                    process.kill()
        assert [process.exitcode for process in processes] == [0] * processes_count

        errors = [error for outcome in outcomes for error in outcome[1]]
        written = {(d, 0) for d in range(len(LOAD_DOC_IDS))} | {
            pair for outcome in outcomes for pair in outcome[3]
        }
        # The end state, through the shared retriever and a fresh one: each document is one whole version
        # that some writer wrote.
        with SQLitePageRetriever(path) as fresh:
            for retriever in (shared, fresh):
                for d, doc_id in enumerate(LOAD_DOC_IDS):
                    pages = sorted(
                        m.page_number for m in retriever.search(doc_id, "everywhere", max_pages=50)
                    )
                    texts = [retriever.snippet(doc_id, number, "everywhere") for number in pages]
                    markers = [PAGE_TEXT.search(text) for text in texts]
                    versions = {int(found[2]) for found in markers if found}
                    if (
                        None in markers
                        or len(versions) != 1
                        or pages != list(range(1, len(version_pages(d, min(versions))) + 1))
                        or [int(found[3]) for found in markers] != [n - 1 for n in pages]
                        or retriever.page_count(doc_id) != len(pages)
                        or (d, min(versions)) not in written
                    ):
                        errors.append(f"end state of doc {d}: pages {pages}, snippets {texts}")
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        conn.execute("INSERT INTO pi_fts (pi_fts) VALUES ('integrity-check')")
        (rows,) = conn.execute("SELECT count(*) FROM pi_fts").fetchone()
        (indexed,) = conn.execute("SELECT sum(page_count) FROM pi_docs").fetchone()
    finally:
        conn.close()
    assert rows == indexed, "re-indexes left pages behind"

    writes = {"threads": 0, "processes": 0}
    for worker, _, counts, _ in outcomes:
        writes["threads" if worker <= threads_count else "processes"] += counts.get("writes", 0)
    settled = sum(counts.get("settled", 0) for _, _, counts, _ in outcomes)
    kinds = Counter(error_kind(error) for error in errors)
    assert errors == [], (
        f"{len(errors)} error(s): {kinds.most_common()}; first: {[e[-400:] for e in errors[:3]]}"
    )
    assert len(outcomes) == threads_count + processes_count
    assert writes["threads"] > 0 and writes["processes"] > 0, writes
    assert settled > 0, "no read ever ran without a write in flight: the cross-call check did not run"


@pytest.mark.parametrize(
    ("documents", "meanwhile", "acceptable"),
    [
        pytest.param(
            ["public", "draft"],  # "draft" is the last document: its rows are the next ones handed out
            lambda writer: (
                writer.delete("draft"),
                writer.index("payroll", ["everywhere salary of the chief"]),
            ),
            {"", "[everywhere] draft minutes"},
            id="deleted-then-another-document-indexed",
        ),
        pytest.param(
            ["public", "draft", "last"],
            lambda writer: writer.index("draft", ["everywhere draft minutes, revised"]),
            {"[everywhere] draft minutes", "[everywhere] draft minutes, revised"},
            id="reindexed",
        ),
    ],
)
def test_a_snippet_sees_one_version_while_another_connection_writes(
    tmp_path: Path,
    documents: list[str],
    meanwhile: Callable[[SQLitePageRetriever], Any],
    acceptable: set[str],
) -> None:
    """The load test's snippet failures, made deterministic: another connection (as another process would)
    writes at the one instant between ``snippet``'s look-up of the document and its read of the page. The
    instant is picked with SQLite's statement trace on the reader's connection; nothing is faked."""
    path = tmp_path / "pages.sqlite"
    texts = {
        "public": "everywhere public notice",
        "draft": "everywhere draft minutes",
        "last": "everywhere end",
    }
    with SQLitePageRetriever(path) as reader, SQLitePageRetriever(path) as writer:
        for doc_id in documents:
            reader.index(doc_id, [texts[doc_id]])
        interleaved: list[str] = []

        def between_statements(sql: str) -> None:
            if "snippet(pi_fts" in sql and not interleaved:
                interleaved.append(sql)
                meanwhile(writer)

        reader._conn.set_trace_callback(between_statements)
        try:
            text = reader.snippet("draft", 1, "everywhere")
        finally:
            reader._conn.set_trace_callback(None)

    assert interleaved, "the write never ran between the two statements"
    assert text in acceptable, f"the snippet of page 1 of 'draft' is {text!r}"


@pytest.fixture(scope="module")
def file_retriever(tmp_path_factory: pytest.TempPathFactory):
    with SQLitePageRetriever(tmp_path_factory.mktemp("any-text") / "pages.sqlite") as opened:
        opened.index("neighbour", ["everywhere next door", "everywhere plain", "everywhere again"])
        yield opened


@settings(max_examples=120, deadline=None)
@given(doc_id=st.text(), text=st.text())
@example(doc_id="\x00", text="\x00")
@example(doc_id="d" * 100_000, text="everywhere " * 20_000)
@example(doc_id="a\x00b", text='"everywhere" NEAR(plain x) * ^ -- ;')
def test_any_doc_id_page_text_and_query_stay_in_their_document(
    file_retriever: SQLitePageRetriever, doc_id: str, text: str
) -> None:
    assume(doc_id != "neighbour")
    retriever = file_retriever
    retriever.index(doc_id, [f"everywhere {text}", "everywhere plain"])
    try:
        for query in (text, "everywhere " + text, "plain"):
            matches = retriever.search(doc_id, query, max_pages=5)
            assert {m.page_number for m in matches} <= {1, 2}
            for number in (1, 2, 3):
                assert isinstance(retriever.snippet(doc_id, number, query), str)
        assert sorted(m.page_number for m in retriever.search(doc_id, "everywhere", max_pages=5)) == [1, 2]
        assert retriever.snippet(doc_id, 2, "plain") == "everywhere [plain]"
        assert retriever.page_count(doc_id) == 2
        # The neighbour's pages are untouched and never mixed in.
        neighbour = retriever.search("neighbour", "everywhere", max_pages=5)
        assert sorted(m.page_number for m in neighbour) == [1, 2, 3]
        assert retriever.snippet("neighbour", 1, "next") == "everywhere [next] door"
    finally:
        assert retriever.delete(doc_id) is True
    assert doc_id not in retriever
