"""The command line under hostile input: it keeps going, prints only safe text, starts without the
framework, and says clearly what it refuses."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from extract_thinker_pageindex import build_index, index_document, inspect, load_index, print_toc_tree
from extract_thinker_pageindex.cli import main
from extract_thinker_pageindex.cli.commands import _index_files
from extract_thinker_pageindex.cli.terminal import safe_text
from extract_thinker_pageindex.inputs.sources import EXTENSION_KINDS

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "examples" / "data"
ESC = "\x1b"

GOOD = "# Memo\n\nThe cafeteria closes at 15:00 on Fridays.\n"
# A real date that does not exist: the YAML loader turns it into a ValueError, not a document error.
IMPOSSIBLE_DATE = "---\ntitle: Minutes\ndate: 2024-02-30\n---\n\n# Minutes\n\nNothing was decided.\n"
HOSTILE = (
    "---\n"
    'author: "Mallory \\e]0;owned\\a"\n'  # YAML's own escapes for ESC and BEL
    "---\n\n"
    f"# Rent {ESC}[2J{ESC}[31mdue\u202e now\n\n"
    "Pay on the first day of the month.\n\n"
    f"## Late {ESC}[1Afees [/b] and [bold]interest\n\n"
    f"Interest of 8% accrues.\r{ESC}[Kfake line\n"
)


def _env() -> dict[str, str]:
    return {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def _unsafe(text: str) -> list[str]:
    """The characters a terminal would obey (escape, bell, carriage return, bidi override, surrogates)."""
    return re.findall("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]", text)


# -- the run keeps going -------------------------------------------------------------------------------


def test_index_indexes_the_files_after_one_that_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Whatever each bad input raises (a document error, an OSError, or something unexpected such as the
    # ValueError of an impossible date), the good file after them is indexed and the run exits 1.
    impossible = _write(tmp_path / "minutes.md", IMPOSSIBLE_DATE)
    folder = tmp_path / "drafts.md"
    folder.mkdir()
    missing = tmp_path / "gone.txt"
    good = _write(tmp_path / "memo.md", GOOD)

    code = main(["index", str(impossible), str(folder), str(missing), str(good)])

    out, err = capsys.readouterr()
    assert load_index(tmp_path / "memo.pageindex").title == "Memo"
    assert code == 1
    assert "Traceback" not in err
    errors = [line for line in err.splitlines() if line.startswith("extract-thinker-pageindex: error: ")]
    assert len(errors) == len(err.splitlines())  # one line per failure, nothing else
    assert any(str(folder) in line for line in errors)
    assert any(str(missing) in line for line in errors)
    failed = len(errors)
    assert f"Indexed {4 - failed} of 4 file(s)" in out
    assert f"; {failed} failed" in out
    assert f"{good} -> {tmp_path / 'memo.pageindex'}" in out


def _read_then_index(file: str, target: Path, progress: object) -> tuple[object, Path]:
    """Index a Markdown file read as strict UTF-8 text: reading a directory or Latin-1 bytes fails with the
    operating system's or the codec's own exception, not the library's."""
    text = Path(file).read_text(encoding="utf-8")
    document = build_index(text, content_type="markdown", doc_name=Path(file).stem)
    from extract_thinker_pageindex import save_index

    return document, save_index(document, target)


def test_the_per_file_loop_survives_errors_that_are_not_the_librarys(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    latin1 = tmp_path / "résumé.md"
    latin1.write_bytes("# Résumé\n\nÉcole normale.\n".encode("latin-1"))  # UnicodeDecodeError on read
    folder = tmp_path / "folder.md"
    folder.mkdir()  # IsADirectoryError on read
    good = _write(tmp_path / "memo.md", GOOD)
    jobs = [(str(path), tmp_path / "out" / f"{path.stem}.pageindex") for path in (latin1, folder, good)]

    code = _index_files(jobs, _read_then_index, as_json=False, debug=False)  # type: ignore[arg-type]

    out, err = capsys.readouterr()
    assert code == 1
    assert load_index(tmp_path / "out" / "memo.pageindex").title == "Memo"
    lines = err.splitlines()
    assert len(lines) == 2
    assert "résumé.md" in lines[0] and "(unexpected UnicodeDecodeError; run with --debug" in lines[0]
    assert "folder.md" in lines[1] and "Is a directory" in lines[1]
    assert "Traceback" not in err
    assert "Indexed 1 of 3 file(s)" in out and "; 2 failed" in out
    assert re.search(r"folder\.md\s+│\s+-\s+│\s+-\s+│\s+-\s+│\s+\(failed\)", out)


def test_the_per_file_loop_prints_tracebacks_with_debug(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    latin1 = tmp_path / "notes.md"
    latin1.write_bytes("Caf\xe9".encode("latin-1"))
    good = _write(tmp_path / "memo.md", GOOD)
    jobs = [(str(path), tmp_path / f"{path.stem}.pageindex") for path in (latin1, good)]

    code = _index_files(jobs, _read_then_index, as_json=True, debug=True)  # type: ignore[arg-type]

    out, err = capsys.readouterr()
    assert code == 1
    assert "(unexpected UnicodeDecodeError)." in err
    assert "Traceback (most recent call last):" in err
    assert "UnicodeDecodeError: 'utf-8' codec can't decode" in err
    assert json.loads(out)["title"] == "Memo"  # JSON output: no summary table


def test_debug_prints_the_traceback_of_a_failure(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "gone.md"

    assert main(["index", str(missing)]) == 1
    assert "Traceback" not in capsys.readouterr().err

    assert main(["index", "--debug", str(missing)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"extract-thinker-pageindex: error: {missing}: ")
    assert "Traceback (most recent call last):" in err
    assert "DocumentLoadError" in err


# -- only safe text reaches the terminal ---------------------------------------------------------------


def test_index_and_inspect_show_control_characters_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hostile = _write(tmp_path / "lease.md", HOSTILE)
    good = _write(tmp_path / "memo.md", GOOD)

    # Two files, so the summary table prints the title too (and "[/b]" must not be read as rich markup).
    assert main(["index", str(hostile), str(good)]) == 0
    out, err = capsys.readouterr()
    assert _unsafe(out + err) == []
    assert "Rent \\x1b[2J\\x1b[31mdue\\u202e now" in out

    assert main(["inspect", str(tmp_path / "lease.pageindex")]) == 0
    out, err = capsys.readouterr()
    assert _unsafe(out + err) == []
    lines = out.splitlines()
    assert "Title:    Rent \\x1b[2J\\x1b[31mdue\\u202e now" in lines
    assert "Author:   Mallory \\x1b]0;owned\\x07" in lines
    assert "  - Late \\x1b[1Afees [/b] and [bold]interest  [p. 1]" in lines

    # The JSON keeps the text as it is, escaped by JSON itself.
    assert main(["inspect", "--json", str(tmp_path / "lease.pageindex")]) == 0
    out = capsys.readouterr().out
    assert _unsafe(out) == []
    assert json.loads(out)["title"] == f"Rent {ESC}[2J{ESC}[31mdue\u202e now"


def test_print_toc_tree_and_inspect_escape_titles() -> None:
    document = build_index(HOSTILE, content_type="markdown", doc_name=f"lease{ESC}[31m")
    tree, summary = io.StringIO(), io.StringIO()

    print_toc_tree(document, file=tree)
    inspect(document, file=summary)

    assert _unsafe(tree.getvalue() + summary.getvalue()) == []
    assert tree.getvalue().splitlines()[0] == "- Rent \\x1b[2J\\x1b[31mdue\\u202e now  [p. 1]"
    assert "Document: lease\\x1b[31m" in summary.getvalue().splitlines()


def test_a_lone_surrogate_in_a_title_prints_on_a_strict_utf8_stream() -> None:
    document = build_index(GOOD, content_type="markdown")
    # As a JSON "\udcff" escape or a non-UTF-8 file name leaves it; assignment is not validated.
    document.title = "Caf\udcff"
    document.toc[0].title = "Menu\udcff"
    stream = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict")

    inspect(document, file=stream)
    stream.flush()

    text = stream.buffer.getvalue().decode("utf-8")  # type: ignore[attr-defined]
    assert "Title:    Caf\\udcff" in text.splitlines()
    assert "- Menu\\udcff  [p. 1]" in text.splitlines()


def _edit_title(index: Path, raw_json_title: str) -> None:
    path = index / "document.json"
    data = path.read_text(encoding="utf-8")
    path.write_text(data.replace('"title": "Memo"', f'"title": "{raw_json_title}"', 1), encoding="utf-8")


def test_inspect_of_a_saved_title_with_a_surrogate_and_escapes(tmp_path: Path) -> None:
    good = _write(tmp_path / "memo.md", GOOD)
    _, written = index_document(good)
    _edit_title(written, "\\udcff\\u001b[31mMemo")  # JSON escapes, as a hostile or damaged file holds them

    for extra in ([], ["--json"]):
        result = subprocess.run(
            [sys.executable, "-m", "extract_thinker_pageindex", "inspect", *extra, str(written)],
            capture_output=True,
            env={**_env(), "PYTHONIOENCODING": "utf-8"},  # strict, as on most terminals
            timeout=120,
        )
        assert result.returncode == 0, result.stderr
        out = result.stdout.decode("utf-8")
        assert ESC not in out
        if extra:
            assert json.loads(out)["title"].endswith(f"{ESC}[31mMemo")
        else:
            assert "\\x1b[31mMemo" in out


def test_inspect_prints_on_a_terminal_that_cannot_encode_the_title(tmp_path: Path) -> None:
    overview = _write(tmp_path / "overview.md", "# Überblick über Ελλάδα\n\nText.\n")
    _, written = index_document(overview)

    result = subprocess.run(
        [sys.executable, "-m", "extract_thinker_pageindex", "inspect", str(written)],
        capture_output=True,
        env={**_env(), "PYTHONIOENCODING": "ascii"},
        timeout=120,
    )

    assert result.returncode == 0, result.stderr
    assert b"Title:    \\xdcberblick \\xfcber \\u0395\\u03bb" in result.stdout


def test_file_names_and_errors_are_escaped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    named = _write(tmp_path / f"memo{ESC}[31m.md", GOOD)
    missing = tmp_path / f"gone{ESC}]0;x\a.md"

    assert main(["index", str(named), str(missing)]) == 1

    out, err = capsys.readouterr()
    assert _unsafe(out + err) == []
    assert f"memo\\x1b[31m.md -> {tmp_path}/memo\\x1b[31m.pageindex: 1 page(s)" in out
    assert "gone\\x1b]0;x\\x07.md" in err


def test_search_escapes_snippets_and_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    notes = _write(
        tmp_path / "notes.txt", f"The termination fee {ESC}]0;pwned{ESC}\\ is due\r{ESC}[2K at once.\n"
    )

    assert main(["search", str(notes), "-q", "termination"]) == 0
    out = capsys.readouterr().out
    assert _unsafe(out) == []
    assert "[termination]" in out and "\\x1b]0;pwned" in out

    with pytest.raises(SystemExit):
        main(["index", str(notes), "--strategy", f"{ESC}[2J"])
    err = capsys.readouterr().err
    assert "invalid choice: '\\x1b[2J'" in err
    assert _unsafe(err) == []


def test_safe_text_escapes_what_a_terminal_obeys_and_keeps_the_rest() -> None:
    assert (
        safe_text(f"a{ESC}[31mb\a\x9b\u202e\u2066\udcff\r") == "a\\x1b[31mb\\x07\\x9b\\u202e\\u2066\\udcff\\r"
    )
    assert safe_text("line one\n\tindented — ünïcödé 中文 👍") == "line one\n\tindented — ünïcödé 中文 👍"
    assert safe_text("two\nlines", newlines=False) == "two\\nlines"
    assert safe_text(Path("a") / "b") == str(Path("a") / "b")


# -- fast start: no ExtractThinker (litellm) where none is needed --------------------------------------


def _modules_after(argv: list[str], cwd: Path) -> dict[str, object]:
    code = textwrap.dedent(
        f"""
        import contextlib, io, json, sys
        from extract_thinker_pageindex.cli import main
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            try:
                code = main({argv!r})
            except SystemExit as exc:
                code = exc.code
        print(json.dumps({{
            "code": code,
            "out": out.getvalue(),
            "litellm": "litellm" in sys.modules,
            "extract_thinker": "extract_thinker" in sys.modules,
        }}))
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=_env(), cwd=cwd, timeout=120
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("argv", "expected_code", "expected_out"),
    [
        pytest.param(["--help"], 0, "Build, inspect and search", id="help"),
        pytest.param(["index", "--help"], 0, "images with --model", id="index-help"),
        pytest.param(
            ["search", str(SAMPLE / "service-agreement.pdf"), "-q", "termination penalty"],
            0,
            "[penalty]",
            id="search-pdf",
        ),
        pytest.param(
            ["search", str(SAMPLE / "service-agreement.md"), "-q", "governing law"],
            0,
            "[law]",
            id="search-md",
        ),
        pytest.param(["index", "memo.md", "-o", "out"], 0, "memo.md -> out/memo.pageindex", id="index-md"),
        pytest.param(
            ["index", str(SAMPLE / "service-agreement.pdf"), "-o", "out"], 0, "4 page(s)", id="index-pdf"
        ),
    ],
)
def test_commands_run_without_importing_the_framework(
    tmp_path: Path, argv: list[str], expected_code: int, expected_out: str
) -> None:
    _write(tmp_path / "memo.md", GOOD)

    seen = _modules_after(argv, tmp_path)

    assert seen["code"] == expected_code
    assert expected_out in str(seen["out"])
    assert seen["litellm"] is False
    assert seen["extract_thinker"] is False


def test_inspect_runs_without_importing_the_framework(tmp_path: Path) -> None:
    _, written = index_document(_write(tmp_path / "memo.md", GOOD))

    seen = _modules_after(["inspect", str(written)], tmp_path)

    assert seen["code"] == 0
    assert "Title:    Memo" in str(seen["out"])
    assert seen["litellm"] is False and seen["extract_thinker"] is False


def test_a_later_framework_import_reuses_the_contract_class_and_extracts_into_it(
    llm_server, tmp_path: Path
) -> None:
    # The document model is imported first (without the framework), the framework after it: the classes
    # must be one, and Extractor must fill the project's models as any Contract.
    llm_server.reply_json({"title": "Master Services Agreement"})
    code = textwrap.dedent(
        f"""
        import sys
        from extract_thinker_pageindex.document.model import Document, TitleAnswer
        from extract_thinker_pageindex._framework import Contract
        assert "extract_thinker" not in sys.modules and "litellm" not in sys.modules

        import extract_thinker
        import extract_thinker.models.contract
        assert extract_thinker.models.contract.Contract is Contract
        assert extract_thinker.Contract is Contract
        from extract_thinker.models.contract import Contract as Again
        assert Again is Contract and issubclass(Document, extract_thinker.Contract)

        from extract_thinker import Extractor
        from extract_thinker_pageindex import DocumentLoaderPyMuPDF
        extractor = Extractor(DocumentLoaderPyMuPDF())
        extractor.load_llm("openai/test-model")
        answer = extractor.extract({str(SAMPLE / "service-agreement.pdf")!r}, TitleAnswer)
        assert isinstance(answer, TitleAnswer) and isinstance(answer, extract_thinker.Contract)
        print(answer.title)
        """
    )

    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=_env(), cwd=tmp_path, timeout=120
    )

    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "Master Services Agreement"
    assert llm_server.paths == ["/v1/chat/completions"]


def test_a_framework_laid_out_otherwise_is_imported_normally(tmp_path: Path) -> None:
    # A future ExtractThinker whose Contract lives in a package, not in models/contract.py: the file cannot
    # be loaded alone, so the normal import runs, and the models still subclass the framework's class.
    package = tmp_path / "extract_thinker"
    (package / "models" / "contract").mkdir(parents=True)
    _write(package / "__init__.py", "from .models.contract import Contract\n")
    _write(
        package / "models" / "contract" / "__init__.py",
        "from pydantic import BaseModel\n\n\nclass Contract(BaseModel):\n    pass\n",
    )
    code = textwrap.dedent(
        """
        import sys
        from extract_thinker_pageindex.document.model import Document
        import extract_thinker
        assert extract_thinker.__file__.startswith(sys.argv[1]), extract_thinker.__file__
        assert issubclass(Document, extract_thinker.Contract)
        assert "litellm" not in sys.modules
        print("fell back")
        """
    )

    result = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)],
        capture_output=True,
        text=True,
        env={**_env(), "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT / "src")])},
        timeout=120,
    )

    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "fell back"


def test_the_contract_is_the_frameworks_once_it_is_imported() -> None:
    import extract_thinker

    from extract_thinker_pageindex import Document
    from extract_thinker_pageindex._framework import contract_class

    assert contract_class() is extract_thinker.Contract
    assert issubclass(Document, extract_thinker.Contract)


# -- frictions -------------------------------------------------------------------------------------------


def test_search_with_only_stop_words_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", str(SAMPLE / "service-agreement.pdf"), "-q", "the of"]) == 2

    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        "extract-thinker-pageindex: error: The query 'the of' has no searchable words (stop words and "
        "punctuation are ignored); name what the pages you need talk about.\n"
    )


def test_index_help_lists_every_accepted_extension(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["index", "--help"])

    assert exit_info.value.code == 0
    help_text = " ".join(capsys.readouterr().out.split())
    listed = set(re.findall(r"\.[a-z]+", help_text.split("documents to index", 1)[1].split(")", 1)[0]))
    assert listed == set(EXTENSION_KINDS)


def test_output_ending_in_pageindex_is_the_index_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = _write(tmp_path / "memo.md", GOOD)
    target = tmp_path / "archive" / "cafeteria.pageindex"

    assert main(["index", str(good), "-o", str(target)]) == 0
    assert f"-> {target}: 1 page(s)" in capsys.readouterr().out

    assert main(["inspect", str(target)]) == 0
    assert "Title:    Memo" in capsys.readouterr().out
    assert sorted(path.name for path in target.parent.iterdir()) == ["cafeteria.pageindex"]


def test_output_ending_in_pageindex_with_several_files_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = _write(tmp_path / "memo.md", GOOD)
    second = _write(tmp_path / "notes.txt", "Call the duty engineer.\n")
    target = tmp_path / "both.pageindex"

    assert main(["index", str(first), str(second), "-o", str(target)]) == 2

    out, err = capsys.readouterr()
    assert out == ""
    assert "names one index folder" in err and "2 files were given" in err
    assert not target.exists()
    assert not (tmp_path / "memo.pageindex").exists()


def test_output_ending_in_pageindex_that_is_not_an_index_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = _write(tmp_path / "memo.md", GOOD)
    occupied = tmp_path / "photos.pageindex"
    occupied.mkdir()
    _write(occupied / "holiday.txt", "keep me\n")

    assert main(["index", str(good), "-o", str(occupied)]) == 1

    err = capsys.readouterr().err
    assert err.startswith(f"extract-thinker-pageindex: error: {good}: ")
    assert "Traceback" not in err
    assert sorted(path.name for path in occupied.iterdir()) == ["holiday.txt"]


def test_the_readme_sets_the_price_map_variable_before_importing_the_framework() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = [
        block
        for block in re.findall(r"```python\n(.*?)```", readme, flags=re.DOTALL)
        if "from extract_thinker import" in block
    ]
    assert blocks
    for block in blocks:
        setting = block.find('os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")')
        assert 0 <= setting < block.find("from extract_thinker import"), block
