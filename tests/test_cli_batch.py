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
from extract_thinker_pageindex.batch.manifest import REPORT_FILE
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
    assert load_index(out / "2023" / "lease.md.pageindex").title == "Lease 2023"
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
        (["--retriever", "pages.sqlite"], "give --engine too"),
        (["--engine", "local", "-o", "out", "--schema", "filings"], "give --retriever too"),
        (["--engine", "local", "-o", "out", "--retriever", "pages.sqlite", "--schema", "x"], "SQLite file"),
        (["--engine", "local", "-o", "out", "--retriever", " "], "PostgreSQL URL or an SQLite file"),
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
    assert load_index(out / "notes.txt.pageindex").pages


def test_a_long_run_lists_only_its_failures(tmp_path: Path, capsys) -> None:
    from extract_thinker_pageindex.cli.batch import MAX_ROWS

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


# -- a page retriever index fed by the batch and searched from the command line ---------------------------


def test_a_batch_feeds_an_sqlite_index_that_search_reads(folder: Path, tmp_path: Path, capsys) -> None:
    index = tmp_path / "pages.sqlite"
    out = tmp_path / "out"
    batch = ["index", "--engine", "local", "--workers", "2", str(folder), "-o", str(out), "--retriever"]
    assert main([*batch, str(index)]) == 0
    capsys.readouterr()

    assert main(["search", "2023/lease.md", "-q", "rent rose percent", "--retriever", str(index)]) == 0
    out_text = capsys.readouterr().out
    assert out_text.startswith("page    1  score")
    assert "[Rent] [rose]" in out_text

    assert main(["search", "2023/lease.md", "-q", "rent", "--retriever", str(index), "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["file"] == "2023/lease.md" and found["matches"][0]["page_number"] == 1

    # A name the index does not hold: the error lists the names it does.
    assert main(["search", "lease.pdf", "-q", "rent", "--retriever", str(index)]) == 1
    err = capsys.readouterr().err
    assert "'lease.pdf' is not a document of that index; it holds 3:" in err
    assert "'2023/lease.md'" in err

    assert main(["search", "lease.md", "-q", "rent", "--retriever", str(index), "--password", "x"]) == 2
    assert main(["search", "lease.md", "-q", "rent", "--schema", "x"]) == 2


def test_a_batch_feeds_a_postgres_index_that_search_reads(
    folder: Path, tmp_path: Path, capsys, postgres_dsn: str
) -> None:
    import uuid

    import psycopg
    from psycopg import sql

    schema = f"t_{uuid.uuid4().hex[:16]}"
    target = ["--retriever", postgres_dsn, "--schema", schema]
    try:
        code = main(
            ["index", "--engine", "local", "--workers", "2", str(folder), "-o", str(tmp_path / "o"), *target]
        )
        assert code == 0
        assert "3 indexed" in capsys.readouterr().out
        assert main(["search", "notes.txt", "-q", "tenancy", *target]) == 0
        assert "[tenancy]" in capsys.readouterr().out
    finally:
        with psycopg.connect(postgres_dsn, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


def test_a_postgres_index_that_cannot_be_reached_exits_1(folder: Path, tmp_path: Path, capsys) -> None:
    pytest.importorskip("psycopg")
    from postgres_server import free_port

    dsn = f"postgresql://nobody:secret@127.0.0.1:{free_port()}/none"
    assert (
        main(["index", "--engine", "local", str(folder), "-o", str(tmp_path / "out"), "--retriever", dsn])
        == 1
    )
    err = capsys.readouterr().err
    assert err.startswith("extract-thinker-pageindex: error: ")
    assert "secret" not in err  # the password stays out of messages
    assert not (tmp_path / "out").exists()  # nothing was indexed without its index


def test_options_are_checked_before_the_retriever_is_opened(
    folder: Path, tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out"
    (tmp_path / "a-file").write_text("not a folder")
    for extra, code in (
        (["-o", str(out), "--model-rate", "2"], 2),
        (["-o", str(out), "--address", "auto"], 2),
        (["-o", str(tmp_path / "a-file")], 1),
    ):
        assert main(["index", "--engine", "local", str(folder), *extra, "--retriever", "new.sqlite"]) == code
        capsys.readouterr()
        assert not (tmp_path / "new.sqlite").exists()  # no index made for a run that never started


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("mysql://reader:s3cret@db/pages", "a mysql:// URL is neither"),
        ("sqlite:///pages.db", "a sqlite:// URL is neither"),
    ],
)
def test_a_url_of_another_database_is_refused_without_echoing_it(
    folder: Path, tmp_path: Path, capsys, target: str, message: str
) -> None:
    assert (
        main(["index", "--engine", "local", str(folder), "-o", str(tmp_path / "o"), "--retriever", target])
        == 2
    )
    err = capsys.readouterr().err
    assert message in err and "s3cret" not in err


def test_a_key_value_connection_string_is_postgres_not_a_file_name(
    folder: Path, tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("psycopg")
    from postgres_server import free_port

    monkeypatch.chdir(tmp_path)
    target = f"host=127.0.0.1 port={free_port()} dbname=pages user=nobody password=s3cret connect_timeout=2"
    assert (
        main(["index", "--engine", "local", str(folder), "-o", str(tmp_path / "o"), "--retriever", target])
        == 1
    )
    err = capsys.readouterr().err
    assert "s3cret" not in err
    assert sorted(path.name for path in tmp_path.iterdir()) == ["docs"]  # no file named after the string


def test_search_never_creates_the_index_it_reads(folder: Path, tmp_path: Path, capsys) -> None:
    assert main(["search", "lease.md", "-q", "rent", "--retriever", str(tmp_path / "typo.sqlite")]) == 2
    err = capsys.readouterr().err
    assert "typo.sqlite' is no file" in err and "--retriever" in err
    assert "read_only" not in err  # the Python argument means nothing on the command line
    assert not (tmp_path / "typo.sqlite").exists()


def test_search_of_a_postgres_schema_that_does_not_exist_creates_nothing(capsys, postgres_dsn: str) -> None:
    import psycopg

    target = ["--retriever", postgres_dsn, "--schema", "no_such_index_schema"]
    assert main(["search", "lease.md", "-q", "rent", *target]) == 2
    assert "holds none" in capsys.readouterr().err
    with psycopg.connect(postgres_dsn) as conn:
        found = conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = 'no_such_index_schema'").fetchall()
    assert found == []
