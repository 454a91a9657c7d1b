"""Shared fixtures. Importing litellm offline stalls on a price-map download unless this is set first."""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from pathlib import Path

import pytest

EVAL_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "eval" / "financebench"


@pytest.fixture
def eval_dir() -> Path:
    """The FinanceBench sample beside the checkout; tests that need it skip when it is absent."""
    if not (EVAL_DIR / "questions.jsonl").is_file():
        pytest.skip(f"evaluation data not found at {EVAL_DIR}")
    return EVAL_DIR
