"""The command line (in-process and as a real process) and the summary views it prints."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from extract_thinker_pageindex import (
    Document,
    HeadingNode,
    Page,
    ParagraphNode,
    SectionNode,
    TocEntry,
    __version__,
    build_index,
    inspect,
    load_index,
    print_toc_tree,
)
from extract_thinker_pageindex.cli import main

LEASE = """\
# Lease Agreement

This lease is made between Northwind Properties and Contoso Ltd.

## Parties

- Landlord: Northwind Properties
- Tenant: Contoso Ltd

## Term

The term is five years from 1 July 2024.

# Rent

Rent is EUR 4,200 per month, payable in advance.

## Indexation

Rent rises with the consumer price index each January.

### Cap

The annual increase is capped at 3%.

# Termination

Either party may terminate with six months' notice.
"""

LEASE_TOC = [
    "- Lease Agreement  [p. 1]",
    "  - Parties  [p. 1]",
    "  - Term  [p. 1]",
    "- Rent  [p. 2]",
    "  - Indexation  [p. 2]",
    "    - Cap  [p. 2]",
    "- Termination  [p. 3]",
]

MEMO = """\
# Memo

The cafeteria closes at 15:00 on Fridays from next week.
"""


@pytest.fixture
def lease(tmp_path: Path) -> Path:
    path = tmp_path / "lease.md"
    path.write_text(LEASE, encoding="utf-8")
    return path


@pytest.fixture
def memo(tmp_path: Path) -> Path:
    path = tmp_path / "memo.md"
    path.write_text(MEMO, encoding="utf-8")
    return path


def _toc_block(text: str) -> list[str]:
    """The lines printed after the 'Table of contents' header."""
    lines = text.splitlines()
    return lines[lines.index("Table of contents") + 1 :]


# -- index -------------------------------------------------------------------------------------------


def test_index_writes_the_index_beside_the_file(lease: Path, capsys):
    assert main(["index", str(lease)]) == 0

    out, err = capsys.readouterr()
    written = lease.parent / "lease.pageindex"
    assert (written / "document.json").is_file()
    assert out == f"{lease} -> {written}: 3 page(s), 22 nodes, 7 TOC entries\n"
    assert err == ""
    assert load_index(written).title == "Lease Agreement"


def test_index_with_output_writes_into_that_directory(lease: Path, tmp_path: Path, capsys):
    out_dir = tmp_path / "indexes"

    assert main(["index", str(lease), "--output", str(out_dir)]) == 0

    assert (out_dir / "lease.pageindex" / "document.json").is_file()
    assert not (lease.parent / "lease.pageindex").exists()
    assert f"-> {out_dir / 'lease.pageindex'}:" in capsys.readouterr().out


def test_index_with_pages_keeps_only_that_page(lease: Path, capsys):
    assert main(["index", str(lease), "--pages", "2"]) == 0

    document = load_index(lease.parent / "lease.pageindex")
    assert [page.index for page in document.pages] == [1]
    assert document.source_page_count == 3
    assert [entry.title for entry in document.toc] == ["Rent", "Indexation", "Cap"]
    assert ": 1 page(s), 9 nodes, 3 TOC entries" in capsys.readouterr().out


def test_index_json_prints_one_parseable_line_per_file(lease: Path, memo: Path, capsys):
    assert main(["index", str(lease), str(memo), "--json"]) == 0

    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2
    records = [json.loads(line) for line in lines]
    assert records[0] == {
        "file": str(lease),
        "output": str(lease.parent / "lease.pageindex"),
        "pages": 3,
        "nodes": 22,
        "toc_entries": 7,
        "title": "Lease Agreement",
    }
    assert records[1]["file"] == str(memo)
    assert records[1]["title"] == "Memo"
    memo_document = load_index(records[1]["output"])
    assert records[1]["pages"] == len(memo_document.pages) == 1
    assert records[1]["nodes"] == sum(memo_document.node_counts().values()) == 3


def test_index_goes_on_after_a_missing_file_and_exits_1(lease: Path, tmp_path: Path, capsys):
    missing = tmp_path / "minutes-2023.md"

    assert main(["index", str(missing), str(lease)]) == 1

    out, err = capsys.readouterr()
    assert load_index(lease.parent / "lease.pageindex").title == "Lease Agreement"
    assert str(missing) in err
    assert "No such file" in err
    assert err.startswith("extract-thinker-pageindex: error: ")
    assert str(lease) in out
    assert str(missing) not in out
    assert not (tmp_path / "minutes-2023.pageindex").exists()


def test_index_of_an_unsupported_extension_exits_1(tmp_path: Path, capsys):
    contract = tmp_path / "contract.docx"
    contract.write_bytes(b"PK\x03\x04 a word document")

    assert main(["index", str(contract)]) == 1

    err = capsys.readouterr().err
    assert "contract.docx" in err
    assert "'.docx' is not one this command reads" in err
    assert not (tmp_path / "contract.pageindex").exists()


def test_index_of_a_format_not_built_yet_exits_1(tmp_path: Path, capsys):
    scan = tmp_path / "scan.pdf"
    scan.write_bytes(b"%PDF-1.7\n%%EOF\n")

    assert main(["index", str(scan)]) == 1

    assert "scan.pdf" in capsys.readouterr().err
    assert not (tmp_path / "scan.pageindex").exists()


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("0", "start at 1"),
        ("4", "out of range"),
        ("3-1", "reversed"),
        ("1-", "Cannot read '1-'"),
        ("abc", "Cannot read 'abc'"),
        ("", "empty"),
    ],
)
def test_index_with_bad_pages_exits_1_with_a_message(lease: Path, capsys, spec: str, message: str):
    assert main(["index", str(lease), "--pages", spec]) == 1

    err = capsys.readouterr().err
    assert "extract-thinker-pageindex: error:" in err
    assert message in err
    assert not (lease.parent / "lease.pageindex").exists()


def test_index_with_an_absurdly_long_page_number_exits_1_with_a_message(lease: Path, capsys):
    # int() refuses more than 4300 digits; the CLI must still report a usage error, not a traceback.
    assert main(["index", str(lease), "--pages", "1" * 5000]) == 1
    assert "extract-thinker-pageindex: error:" in capsys.readouterr().err


def test_index_refuses_to_replace_a_directory_that_is_not_an_index(lease: Path, capsys):
    occupied = lease.parent / "lease.pageindex"
    occupied.mkdir()
    (occupied / "draft.txt").write_text("keep me\n", encoding="utf-8")

    assert main(["index", str(lease)]) == 1

    assert "not a page index directory" in capsys.readouterr().err
    assert sorted(p.name for p in occupied.iterdir()) == ["draft.txt"]


def test_an_encrypted_pdf_needs_password_on_the_command_line(tmp_path: Path, capsys):
    import pymupdf

    locked = tmp_path / "locked.pdf"
    document = pymupdf.open()
    document.new_page().insert_text((72, 72), "Salaries of the board, strictly confidential.", fontsize=11)
    document.save(locked, encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="user-secret", owner_pw="owner")

    assert main(["index", str(locked)]) == 1
    err = capsys.readouterr().err
    assert "is encrypted" in err and "--password" in err  # the option this front end takes
    assert not (tmp_path / "locked.pageindex").exists()

    assert main(["index", str(locked), "--password", "user-secret"]) == 0
    capsys.readouterr()
    assert "Salaries of the board" in load_index(tmp_path / "locked.pageindex").pages[0].nodes[0].content

    assert main(["search", str(locked), "-q", "board salaries", "--password", "user-secret"]) == 0
    assert "[Salaries] of the [board]" in capsys.readouterr().out
    assert main(["index", str(locked), "--password", "wrong"]) == 1
    assert "password" in capsys.readouterr().err


def test_index_with_parallel_zero_is_a_usage_error(lease: Path, capsys):
    assert main(["index", str(lease), "--parallel", "0"]) == 2
    assert "--parallel" in capsys.readouterr().err
    assert not (lease.parent / "lease.pageindex").exists()


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param([], id="no-args"),
        pytest.param(["frobnicate", "x.md"], id="unknown-command"),
        pytest.param(["index"], id="index-without-files"),
        pytest.param(["index", "x.md", "--strategy", "ocr"], id="bad-strategy"),
        pytest.param(["inspect"], id="inspect-without-path"),
    ],
)
def test_bad_usage_exits_2(argv: list[str], capsys):
    with pytest.raises(SystemExit) as excinfo:
        main(argv)
    assert excinfo.value.code == 2
    assert "usage:" in capsys.readouterr().err


def test_version(capsys):
    with pytest.raises(SystemExit) as excinfo:
        main(["--version"])
    assert excinfo.value.code == 0
    assert __version__ in capsys.readouterr().out


# -- inspect -----------------------------------------------------------------------------------------


def test_inspect_prints_the_title_and_the_toc_tree(lease: Path, capsys):
    assert main(["index", str(lease)]) == 0
    capsys.readouterr()

    assert main(["inspect", str(lease.parent / "lease.pageindex")]) == 0

    out = capsys.readouterr().out
    assert "Title:    Lease Agreement" in out.splitlines()
    assert "Document: lease.md" in out.splitlines()
    assert _toc_block(out) == LEASE_TOC


def test_inspect_accepts_the_document_json_path(lease: Path, capsys):
    main(["index", str(lease)])
    capsys.readouterr()

    assert main(["inspect", str(lease.parent / "lease.pageindex" / "document.json")]) == 0
    assert _toc_block(capsys.readouterr().out) == LEASE_TOC


def test_inspect_json_prints_the_figures(lease: Path, capsys):
    main(["index", str(lease), "--pages", "1,3"])
    capsys.readouterr()

    assert main(["inspect", str(lease.parent / "lease.pageindex"), "--json"]) == 0

    stats = json.loads(capsys.readouterr().out)
    assert stats["pages"] == 2
    assert stats["source_pages"] == 3
    assert stats["node_counts"] == {"heading": 4, "list_item": 2, "paragraph": 3, "section": 4}
    assert stats["toc_entries"] == 4
    assert stats["title"] == "Lease Agreement"


@pytest.mark.parametrize("kind", ["source-file", "empty-directory", "missing"])
def test_inspect_of_something_that_is_not_an_index_exits_1(lease: Path, tmp_path: Path, capsys, kind: str):
    path = {
        "source-file": lease,
        "empty-directory": tmp_path / "empty",
        "missing": tmp_path / "gone.pageindex",
    }[kind]
    if kind == "empty-directory":
        path.mkdir()

    assert main(["inspect", str(path)]) == 1

    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("extract-thinker-pageindex: error: ")
    assert "document.json" in err


# -- a real process ----------------------------------------------------------------------------------


def test_module_entry_point_runs_as_a_process(lease: Path, tmp_path: Path):
    missing = tmp_path / "appendix.md"
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}

    result = subprocess.run(
        [sys.executable, "-m", "extract_thinker_pageindex", "index", str(lease), str(missing), "--json"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert result.returncode == 1, result.stderr
    record = json.loads(result.stdout)
    assert record["output"] == str(lease.parent / "lease.pageindex")
    assert record["pages"] == 3
    assert "appendix.md" in result.stderr
    assert "Traceback" not in result.stderr
    assert load_index(record["output"]).title == "Lease Agreement"


# -- summary.inspect and print_toc_tree --------------------------------------------------------------


def test_inspect_returns_the_figures_of_a_known_document():
    document = build_index(LEASE, content_type="markdown", doc_name="lease")

    stats = inspect(document, file=io.StringIO())

    assert stats == {
        "name": "lease",
        "title": "Lease Agreement",
        "pages": 3,
        "source_pages": 3,
        "nodes": 22,
        "node_counts": {"heading": 7, "list_item": 2, "paragraph": 6, "section": 7},
        "toc_entries": 7,
        "sections": [
            {"title": "Lease Agreement", "level": "h1", "first_page": 1, "last_page": 1},
            {"title": "Parties", "level": "h2", "first_page": 1, "last_page": 1},
            {"title": "Term", "level": "h2", "first_page": 1, "last_page": 1},
            {"title": "Rent", "level": "h1", "first_page": 2, "last_page": 2},
            {"title": "Indexation", "level": "h2", "first_page": 2, "last_page": 2},
            {"title": "Cap", "level": "h3", "first_page": 2, "last_page": 2},
            {"title": "Termination", "level": "h1", "first_page": 3, "last_page": 3},
        ],
        "has_abstract": False,
        "usage": None,
        "failed_pages": [],
        "refinement": [],
        "text_sources": {"parsed": 3},
        "ocr_pages": [],
        "vision_pages": [],
    }


def test_inspect_prints_the_summary_lines():
    document = build_index(LEASE, content_type="markdown", doc_name="lease", author="Legal Ops")
    buffer = io.StringIO()

    inspect(document, file=buffer)

    lines = buffer.getvalue().splitlines()
    assert lines[:8] == [
        "Document: lease",
        "Title:    Lease Agreement",
        "Author:   Legal Ops",
        "Pages:    3",
        "Nodes:    22 (heading 7, list_item 2, paragraph 6, section 7)",
        "Text:     3 parsed",
        "Sections: 7",
        "TOC:      7 entries",
    ]
    assert _toc_block(buffer.getvalue()) == LEASE_TOC


def test_inspect_of_a_saved_path_matches_inspect_of_the_document(lease: Path):
    main(["index", str(lease), "--pages", "2-3"])
    document = build_index(lease, pages="2-3")

    from_path = inspect(lease.parent / "lease.pageindex", file=io.StringIO())
    from_document = inspect(document, file=io.StringIO())

    assert from_path == from_document
    assert from_path["pages"] == 2
    assert from_path["source_pages"] == 3


def test_inspect_reports_a_page_selection_and_can_skip_the_toc():
    document = build_index(LEASE, content_type="markdown", pages=3)
    buffer = io.StringIO()

    inspect(document, file=buffer, show_toc=False)

    text = buffer.getvalue()
    assert "Pages:    1 of 3 (selection)" in text.splitlines()
    assert "Table of contents" not in text
    assert "Termination" not in text


def test_print_toc_tree_indents_by_nesting(capsys):
    document = build_index(LEASE, content_type="markdown")

    print_toc_tree(document)

    assert capsys.readouterr().out.splitlines() == LEASE_TOC


def test_print_toc_tree_of_a_document_without_headings():
    document = build_index("Call the duty engineer on extension 4410.\n", content_type="markdown")
    buffer = io.StringIO()

    print_toc_tree(document, file=buffer)

    assert buffer.getvalue() == "(no table of contents)\n"


def test_print_toc_tree_shows_page_ranges_and_printed_pages():
    # A chapter that runs over two pages, found in a printed TOC that numbers it page 7.
    document = Document(
        name="handbook",
        pages=[
            Page(
                index=4,
                nodes=[
                    SectionNode(id="s1"),
                    HeadingNode(id="h1", parent_id="s1", level="h1", content="Benefits"),
                    ParagraphNode(id="p1", parent_id="s1", content="Employees receive 25 days of leave."),
                    SectionNode(id="s2", parent_id="s1"),
                    HeadingNode(id="h2", parent_id="s2", level="h2", content="Pension"),
                ],
            ),
            Page(index=5, nodes=[ParagraphNode(id="p2", parent_id="s2", content="The employer pays 8%.")]),
            Page(index=6, nodes=[ParagraphNode(id="p3", content="Appendix without a heading.")]),
        ],
        toc=[
            TocEntry(id="t1", title="Benefits", target_page=4, printed_page="7", target_section_id="s1"),
            TocEntry(
                id="t2", parent_id="t1", title="Pension", target_page=4, target_section_id="s2", level="l2"
            ),
            TocEntry(id="t3", title="Appendix", target_page=6),
            TocEntry(id="t4", title="Index"),
        ],
    )
    buffer = io.StringIO()

    print_toc_tree(document, file=buffer)

    assert buffer.getvalue().splitlines() == [
        "- Benefits  [pp. 5-6 (printed 7)]",
        "  - Pension  [pp. 5-6]",
        "- Appendix  [p. 7]",
        "- Index  [p. ?]",
    ]


# -- the command line speaks its own terms ----------------------------------------------------------------


def test_a_folder_given_to_index_names_the_engine_option_and_indexes_nothing(tmp_path: Path, capsys) -> None:
    folder = tmp_path / "contracts"
    folder.mkdir()
    (folder / "lease.md").write_text(LEASE)
    assert main(["index", str(folder)]) == 1
    error = capsys.readouterr().err
    assert f"{folder}: it is a folder" in error and "--engine local" in error
    assert "content_type" not in error
    assert list(folder.iterdir()) == [folder / "lease.md"]


@pytest.mark.parametrize("command", ["index", "search"])
def test_an_unreadable_extension_is_refused_in_the_command_lines_terms(
    tmp_path: Path, capsys, command: str
) -> None:
    docx = tmp_path / "contract.docx"
    docx.write_bytes(b"PK\x03\x04 not really a docx")
    argv = [command, str(docx)] + (["--query", "termination"] if command == "search" else [])
    assert main(argv) == 1
    error = capsys.readouterr().err
    assert "'.docx' is not one this command reads" in error and ".pdf" in error and ".md" in error
    assert "content_type" not in error


@pytest.mark.parametrize(
    ("argv", "named", "suggested"),
    [
        (["search", "x.pdf", "--querry", "rent"], "--querry", "--query"),  # --query missing as well
        (["index", "x.md", "--page", "1"], "--page", "--pages"),  # once taken for --pages, silently
        (["search", "x.pdf", "-q", "rent", "--max-page", "2"], "--max-page", "--max-pages"),
        (["index", "x.md", "--zzzz"], "--zzzz", None),
    ],
)
def test_a_mistyped_option_is_named_and_never_taken_for_another(
    capsys, argv: list[str], named: str, suggested: str | None
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    error = capsys.readouterr().err
    assert f"unknown option {named}" in error
    if suggested is not None:
        assert f"did you mean {suggested}?" in error
    else:
        assert "--help lists the options" in error


def test_an_option_value_after_a_double_dash_is_not_taken_for_an_option(tmp_path: Path, capsys) -> None:
    source = tmp_path / "lease.md"
    source.write_text(LEASE)
    assert main(["search", "--query", "rent", "--", str(source)]) == 0
    assert "Rent" in capsys.readouterr().out
