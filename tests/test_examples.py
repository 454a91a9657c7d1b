"""Every example runs as written, and every README command and snippet that needs no API key works."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted(path for path in (ROOT / "examples").glob("*.py"))
README = (ROOT / "README.md").read_text(encoding="utf-8")


def clean_env() -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("EXTRACT_THINKER_MODEL", "OPENAI_API_KEY")
    }
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    return env


@pytest.mark.parametrize("example", EXAMPLES, ids=[path.name for path in EXAMPLES])
def test_every_example_runs_without_a_key(example: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(example)], capture_output=True, text=True, env=clean_env(), timeout=300, cwd=ROOT
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip()
    assert "Traceback" not in result.stderr


def test_examples_folder_holds_the_expected_scripts() -> None:
    assert {path.name for path in EXAMPLES} >= {"retrieval.py", "page_index.py", "extract_with_pageindex.py"}


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README, flags=re.DOTALL)


def test_the_readme_starts_with_the_two_commands() -> None:
    first, second = _blocks("bash")[:2]
    assert "pip install -e '.[dev]'" in first and "extract-thinker-pageindex index" in first
    assert "pytest" in second


def test_the_readme_main_job_runs(tmp_path: Path) -> None:
    # The install part is what CI does; the commands after it run here, on a copy of the examples.
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    command = _blocks("bash")[0]
    steps = [step.strip() for step in command.split("&&") if "extract-thinker-pageindex" in step]
    assert len(steps) == 2
    outputs = []
    for step in steps:
        arguments = step.split()[1:]
        result = subprocess.run(
            [sys.executable, "-m", "extract_thinker_pageindex", *arguments],
            capture_output=True,
            text=True,
            env=clean_env(),
            cwd=tmp_path,
            timeout=300,
        )
        assert result.returncode == 0, result.stderr
        outputs.append(result.stdout)
    assert "15 TOC entries" in outputs[0]
    assert "Title:    Master Services Agreement" in outputs[1]
    assert "- Part II — Commercial Terms  [p. 3]" in outputs[1]


def test_the_readme_python_snippets_without_a_model_run(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    snippets = [block for block in _blocks("python") if "load_llm" not in block and "LLM(" not in block]
    assert snippets, "the README should show at least one snippet that needs no model"
    for snippet in snippets:
        result = subprocess.run(
            [sys.executable, "-c", snippet],
            capture_output=True,
            text=True,
            env=clean_env(),
            cwd=tmp_path,
            timeout=300,
        )
        assert result.returncode == 0, f"{snippet}\n{result.stderr[-2000:]}"
