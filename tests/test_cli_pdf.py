"""The index command on PDFs: options passed through, warnings, and two inputs with one output name."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from extract_thinker_pageindex import load_index
from extract_thinker_pageindex.cli import main

SAMPLE = Path(__file__).resolve().parents[1] / "examples" / "data"


def test_index_a_pdf_with_and_without_its_outline(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["index", str(SAMPLE / "service-agreement.pdf"), "-o", str(tmp_path / "a"), "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["pages"] == 4 and record["toc_entries"] == 15
    assert record["title"] == "Master Services Agreement"
    with_outline = load_index(record["output"])

    assert (
        main(["index", str(SAMPLE / "service-agreement.pdf"), "-o", str(tmp_path / "b"), "--no-outline"]) == 0
    )
    assert "15 TOC entries" in capsys.readouterr().out
    detected = load_index(tmp_path / "b" / "service-agreement.pageindex")
    assert [entry.title for entry in detected.toc] == [entry.title for entry in with_outline.toc]


def test_same_output_name_twice_in_one_run_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("service-agreement.pdf", "service-agreement.md"):
        shutil.copy(SAMPLE / name, tmp_path / name)
    code = main(["index", str(tmp_path / "service-agreement.pdf"), str(tmp_path / "service-agreement.md")])
    captured = capsys.readouterr()
    assert code == 1
    assert "would replace the one just written" in captured.err
    # The first file's index is intact: it is the PDF's (four pages, no Markdown front matter node).
    kept = load_index(tmp_path / "service-agreement.pageindex")
    assert kept.extension == "pdf" and len(kept.pages) == 4


def test_pages_without_text_are_reported_and_skippable(make_pdf, tmp_path: Path, capsys) -> None:
    import pymupdf

    path = make_pdf(["Intro page with enough words to count as text.", "", "Closing page with text too."])
    # Without OCR, the page without text needs a model; OCR (the default) finds the page draws nothing.
    assert main(["index", str(path), "-o", str(tmp_path / "out"), "--ocr", "never"]) == 1
    assert "Page(s) 2" in capsys.readouterr().err
    assert main(["index", str(path), "-o", str(tmp_path / "ocr")]) == 0
    assert [len(page.nodes) for page in load_index(tmp_path / "ocr" / "doc.pageindex").pages][1] == 0
    assert main(["index", str(path), "-o", str(tmp_path / "out"), "--strategy", "text"]) == 0
    assert pymupdf.open(path).page_count == 3
    assert len(load_index(tmp_path / "out" / "doc.pageindex").pages) == 3
