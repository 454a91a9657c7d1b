"""The search command: ranked pages with snippets, JSON output and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from extract_thinker_pageindex.cli import main

SAMPLE = Path(__file__).resolve().parents[1] / "examples" / "data"


def test_search_a_pdf_prints_ranked_pages_with_marked_snippets(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["search", str(SAMPLE / "service-agreement.pdf"), "--query", "termination penalty", "-n", "2"]
    )
    out = capsys.readouterr().out.splitlines()
    assert code == 0
    assert len(out) == 2
    assert out[0].startswith("page    3")
    assert "[termination]" in out[0] and "[penalty]" in out[0]


def test_search_markdown_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["search", str(SAMPLE / "service-agreement.md"), "-q", "governing law New York", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    assert data["query"] == "governing law New York"
    first = data["matches"][0]
    assert first["page_number"] == 4  # Part III holds section 7, Governing Law
    assert first["score"] < 0
    assert "[Governing]" in first["snippet"]
    assert [match["score"] for match in data["matches"]] == sorted(
        match["score"] for match in data["matches"]
    )


def test_search_snippets_are_plain_text_without_the_pages_markdown(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(
        ["search", str(SAMPLE / "service-agreement.md"), "-q", "governing law taxes", "-n", "3", "--json"]
    )
    snippets = [match["snippet"] for match in json.loads(capsys.readouterr().out)["matches"]]
    assert code == 0 and len(snippets) == 3
    for snippet in snippets:
        assert "[" in snippet and "\n" not in snippet  # the matched words are marked, on one line
        assert "#" not in snippet and "**" not in snippet and " - " not in snippet and "|" not in snippet


def test_search_a_saved_page_index_as_its_source(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from extract_thinker_pageindex import index_document

    source = SAMPLE / "service-agreement.md"
    _, saved = index_document(source, output=tmp_path / "service-agreement.pageindex")
    query = ["-q", "governing law New York", "--json"]
    assert main(["search", str(source), *query]) == 0
    from_source = json.loads(capsys.readouterr().out)["matches"]

    for target in (saved, saved / "document.json"):
        assert main(["search", str(target), *query]) == 0
        assert json.loads(capsys.readouterr().out)["matches"] == from_source

    # A folder that is no page index says so.
    assert main(["search", str(tmp_path), "-q", "law"]) == 1
    assert "No page index" in capsys.readouterr().err


def test_search_without_a_match_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", str(SAMPLE / "service-agreement.pdf"), "-q", "zeppelin"]) == 1
    assert "No page" in capsys.readouterr().out


@pytest.mark.parametrize("query", ['"unbalanced', "NEAR(a b", "col:*", "'; DROP TABLE pi_docs; --"])
def test_search_treats_query_syntax_as_text(query: str, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["search", str(SAMPLE / "service-agreement.pdf"), "-q", query])
    captured = capsys.readouterr()
    assert code in (0, 1)
    assert "Traceback" not in captured.err


def test_search_errors_and_usage(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", str(tmp_path / "missing.pdf"), "-q", "x"]) == 1
    assert "missing.pdf" in capsys.readouterr().err
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.7 this is not really a pdf")
    assert main(["search", str(broken), "-q", "x"]) == 1
    assert "not a readable PDF" in capsys.readouterr().err
    assert main(["search", str(SAMPLE / "service-agreement.pdf"), "-q", "x", "-n", "0"]) == 2
    with pytest.raises(SystemExit) as exit_info:
        main(["search", str(SAMPLE / "service-agreement.pdf")])
    assert exit_info.value.code == 2


def test_search_a_saved_index_finds_what_its_pictures_show(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A vision index describes its pictures in fields of their own, with no text layer behind them.
    from extract_thinker_pageindex import Document, ImageNode, Page, ParagraphNode, save_index

    document = Document(
        name="scan",
        pages=[
            Page(index=0, nodes=[ParagraphNode(id="p1-1", content="Quarterly letter to shareholders.")]),
            Page(
                index=1,
                nodes=[
                    ImageNode(
                        id="p2-1",
                        kind="chart",
                        caption="Figure 2",
                        description="Revenue by quarter, 2019-2023.",
                    )
                ],
            ),
        ],
    )
    saved = save_index(document, tmp_path / "scan.pageindex")
    assert main(["search", str(saved), "-q", "revenue by quarter", "--json"]) == 0
    assert [match["page_number"] for match in json.loads(capsys.readouterr().out)["matches"]] == [2]
    assert main(["search", str(saved), "-q", "revenue", "--password", "x"]) == 2
    assert "needs none" in capsys.readouterr().err
