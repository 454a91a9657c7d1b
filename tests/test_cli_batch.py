"""``index --engine``: folders and files indexed as a batch from the command line, the summary table, the
report as JSON, exit codes, and the single-file behaviour left as it was without ``--engine``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from extract_thinker_pageindex import load_index
from extract_thinker_pageindex.batch import REPORT_FILE
from extract_thinker_pageindex.cli import main


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    (docs / "2023").mkdir(parents=True)
    (docs / "lease.md").write_text("# Lease\n\nRent is due monthly.\n")
    (docs / "2023" / "lease.md").write_text("# Lease 2023\n\nRent rose by three percent.\n")
    (docs / "notes.txt").write_text("Plain notes about the tenancy.\n")
    return docs


def test_a_folder_is_indexed_into_the_output_folder(folder: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "out"

    assert main(["index", "--engine", "local", "--workers", "1", str(folder), "-o", str(out)]) == 0

    stdout, stderr = capsys.readouterr()
    assert "3 indexed, 0 up to date, 0 failed of 3 document(s)" in stdout
    for name in ("lease.md", "2023/lease.md", "notes.txt"):
        assert name in stdout
    assert stderr == ""
    assert load_index(out / "2023" / "lease.pageindex").title == "Lease 2023"
    assert json.loads((out / REPORT_FILE).read_text())["totals"]["ok"] == 3

    assert main(["index", "--engine", "local", "--workers", "1", str(folder), "-o", str(out)]) == 0
    assert "0 indexed, 3 up to date, 0 failed" in capsys.readouterr().out


def test_a_failed_document_is_reported_and_exits_1(folder: Path, tmp_path: Path, capsys) -> None:
    (folder / "scan.pdf").write_bytes(b"%PDF-1.4 truncated")

    code = main(["index", "--engine", "local", "--workers", "2", str(folder), "-o", str(tmp_path / "out")])

    assert code == 1
    stdout, stderr = capsys.readouterr()
    assert "3 indexed, 0 up to date, 1 failed of 4" in stdout
    assert "DocumentLoadError" in stdout
    assert stderr.startswith("extract-thinker-pageindex: error: ")
    assert "scan.pdf" in stderr


def test_json_prints_the_report(folder: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "out"

    assert main(["index", "--engine", "local", "--workers", "1", str(folder), "-o", str(out), "--json"]) == 0

    report = json.loads(capsys.readouterr().out)
    assert report == json.loads((out / REPORT_FILE).read_text())
    assert [item["status"] for item in report["documents"]] == ["ok", "ok", "ok"]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--engine", "local"], "-o/--output"),
        (["--engine", "local", "-o", "out", "--workers", "0"], "--workers must be at least 1"),
        (["--engine", "local", "-o", "out", "--model-rate", "0"], "--model-rate must be at least 1"),
        (["--engine", "local", "-o", "out", "--model-rate", "2"], "pass model= as well"),
        (["--engine", "local", "-o", "out", "--address", "auto"], "engine='ray'"),
        (["--workers", "2"], "give --engine too"),
    ],
)
def test_bad_batch_options_are_usage_errors(folder: Path, capsys, extra: list[str], message: str) -> None:
    assert main(["index", str(folder), *extra]) == 2
    assert message in capsys.readouterr().err


def test_ray_engine_without_ray_is_a_usage_error_naming_the_extra(
    folder: Path, tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were not installed
    assert main(["index", "--engine", "ray", str(folder), "-o", str(tmp_path / "out")]) == 2
    assert "extract-thinker-pageindex[ray]" in capsys.readouterr().err


def test_without_engine_a_folder_still_fails_as_before(folder: Path, capsys) -> None:
    assert main(["index", str(folder)]) == 1
    assert "folder" in capsys.readouterr().err.lower()


def test_batch_runs_as_a_process_with_worker_processes(folder: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    command = [sys.executable, "-m", "extract_thinker_pageindex", "index", "--engine", "local"]

    result = subprocess.run(
        [*command, "--workers", "2", str(folder), "-o", str(out), "--json"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["workers"] == 2
    assert report["totals"]["ok"] == 3
    assert load_index(out / "notes.pageindex").pages


def test_a_long_run_lists_only_its_failures(tmp_path: Path, capsys) -> None:
    from extract_thinker_pageindex.cli_batch import MAX_ROWS

    docs = tmp_path / "many"
    docs.mkdir()
    for number in range(MAX_ROWS + 1):
        (docs / f"memo{number:03}.md").write_text(f"# Memo {number}\n\nBody {number}.\n")
    (docs / "zz-broken.pdf").write_bytes(b"not a pdf")

    assert main(["index", "--engine", "local", "--workers", "1", str(docs), "-o", str(tmp_path / "out")]) == 1

    stdout = capsys.readouterr().out
    assert f"{MAX_ROWS + 1} indexed, 0 up to date, 1 failed of {MAX_ROWS + 2}" in stdout
    assert "zz-broken.pdf" in stdout
    assert "memo000.md" not in stdout
    assert f"{MAX_ROWS + 1} more document(s) in index-report.json" in stdout
