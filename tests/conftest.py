"""Shared fixtures. Importing litellm offline stalls on a price-map download unless this is set first."""

from __future__ import annotations

import os
import sys

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from pathlib import Path

import pytest

# The local model server (tests/llm_server.py) is test support code, imported as a top-level module.
sys.path.insert(0, str(Path(__file__).resolve().parent))

EVAL_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "eval" / "financebench"


@pytest.fixture
def eval_dir() -> Path:
    """The FinanceBench sample beside the checkout; tests that need it skip when it is absent."""
    if not (EVAL_DIR / "questions.jsonl").is_file():
        pytest.skip(f"evaluation data not found at {EVAL_DIR}")
    return EVAL_DIR


@pytest.fixture
def llm_server(monkeypatch: pytest.MonkeyPatch):
    """A local OpenAI-compatible server; litellm's ``openai/<name>`` models are pointed at it."""
    from llm_server import LLMServer

    with LLMServer() as server:
        monkeypatch.setenv("OPENAI_API_BASE", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
        yield server


@pytest.fixture
def make_pdf(tmp_path: Path):
    """Write a PDF with one page per text (PyMuPDF), returning its path."""
    import pymupdf

    def make(texts: list[str], name: str = "doc.pdf", **save: object) -> Path:
        document = pymupdf.open()
        for text in texts:
            page = document.new_page()
            page.insert_textbox(pymupdf.Rect(50, 50, 550, 800), text, fontsize=11)
        path = tmp_path / name
        document.save(path, **save)
        document.close()
        return path

    return make
