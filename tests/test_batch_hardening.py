"""index_documents and ``index --engine`` against a hostile source folder and damaged records: sources
whose indexes would meet, file names that are not UTF-8, FIFOs and devices among the sources, and a
manifest or report that is nested too deeply, a FIFO, a device or a folder. Everything here is real: real
files, FIFOs and links, the real command line in a subprocess (with a timeout, since the failure was a
hang)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pymupdf
import pytest

from extract_thinker_pageindex import (
    InvalidOptionError,
    OutputExistsError,
    PageIndexWarning,
    SQLitePageRetriever,
    index_documents,
    load_index,
)
from extract_thinker_pageindex.batch.manifest import MANIFEST_FILE, REPORT_FILE
from extract_thinker_pageindex.batch.run import collect_documents

ENV = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
CLI = [sys.executable, "-m", "extract_thinker_pageindex", "index", "--engine", "local"]


def write_pdf(path: Path, text: str) -> None:
    document = pymupdf.open()
    document.new_page().insert_text((72, 72), text, fontsize=11)
    document.save(path)
    document.close()


def text_of(index: Path) -> str:
    return " ".join(
        getattr(node, "content", None) or "" for page in load_index(index).pages for node in page.nodes
    )


def by_name(report) -> dict[str, object]:
    return {entry.name: entry for entry in report.entries}


# -- 1. two documents, one index -------------------------------------------------------------------------


@pytest.fixture
def same_stems(tmp_path: Path) -> Path:
    """``report.pdf``, ``report.md`` and ``report.pdf.md``: two of them shared ``report.pdf.pageindex``."""
    folder = tmp_path / "src"
    folder.mkdir()
    write_pdf(folder / "report.pdf", "Quarterly turbines from the PDF.")
    (folder / "report.md").write_text("# Report\n\nGlaciers from the Markdown.\n")
    (folder / "report.pdf.md").write_text("# Notes\n\nVolcanoes from the notes on the PDF.\n")
    return folder


@pytest.mark.parametrize("workers", [1, 2])
def test_every_source_gets_its_own_index_and_retriever_name(
    same_stems: Path, tmp_path: Path, workers
) -> None:
    out = tmp_path / "out"
    retriever = SQLitePageRetriever(str(tmp_path / "pages.db"))

    report = index_documents([same_stems], out, workers=workers, retriever=retriever)

    outputs = {entry.name: Path(entry.output).relative_to(out).as_posix() for entry in report.entries}
    assert outputs == {
        "report.md": "report.md.pageindex",
        "report.pdf": "report.pdf.pageindex",
        "report.pdf.md": "report.pdf.md.pageindex",
    }
    assert {entry.status for entry in report.entries} == {"ok"}
    words = {"report.md": "Glaciers", "report.pdf": "turbines", "report.pdf.md": "Volcanoes"}
    for name, word in words.items():
        assert word in text_of(out / outputs[name])
        assert all(other not in text_of(out / outputs[name]) for other in set(words.values()) - {word})
        assert retriever.search(name, word, max_pages=1)
        assert not any(retriever.search(name, other) for other in set(words.values()) - {word})
    assert set(json.loads((out / MANIFEST_FILE).read_text())["documents"]) == set(outputs.values())

    again = index_documents([same_stems], out, workers=workers, retriever=retriever)

    assert {entry.status for entry in again.entries} == {"skipped"}
    for name, word in words.items():
        assert word in text_of(out / outputs[name])
        assert retriever.search(name, word, max_pages=1)
    retriever.close()


def test_a_documents_index_does_not_depend_on_the_other_files(tmp_path: Path) -> None:
    folder = tmp_path / "src"
    folder.mkdir()
    write_pdf(folder / "report.pdf", "Quarterly turbines from the PDF.")
    out = tmp_path / "out"
    index_documents([folder], out, workers=1)
    (folder / "report.md").write_text("# Report\n\nGlaciers.\n")

    report = index_documents([folder], out, workers=1)

    assert by_name(report)["report.pdf"].status == "skipped"  # same index folder as before
    assert sorted(path.name for path in out.glob("*.pageindex")) == [
        "report.md.pageindex",
        "report.pdf.pageindex",
    ]


def test_an_index_inside_another_index_is_refused_before_any_work(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# A\n\nText.\n")
    inner = tmp_path / "a.md.pageindex"
    inner.mkdir()
    (inner / "b.md").write_text("# B\n\nText.\n")
    out = tmp_path / "out"

    with pytest.raises(InvalidOptionError, match=r"would lie inside the index of 'a\.md'"):
        index_documents([tmp_path / "a.md", inner / "b.md"], out, workers=1)
    assert not out.exists()


def test_names_that_differ_in_case_are_two_indexes_where_case_counts(tmp_path: Path) -> None:
    folder = tmp_path / "src"
    folder.mkdir()
    (folder / "Report.md").write_text("# Upper\n\nCopper.\n")
    (folder / "report.md").write_text("# Lower\n\nNickel.\n")

    documents = collect_documents([folder], tmp_path / "out")  # this file system tells the two apart

    assert [Path(output).name for _, _, output in documents] == ["Report.md.pageindex", "report.md.pageindex"]


# -- 2. a file name that is not UTF-8 --------------------------------------------------------------------


def make_bad_named(folder: Path, count: int = 41, bad_at: int = 23) -> bytes:
    folder.mkdir(parents=True)
    bad = b""
    for number in range(count):
        name = f"memo{number:02}".encode() + (b"-caf\xe9\xff" if number == bad_at else b"") + b".md"
        with open(os.fsencode(folder) + b"/" + name, "w") as handle:
            handle.write(f"# Memo {number}\n\nBody of memo {number}.\n")
        if number == bad_at:
            bad = name
    return bad


def test_a_file_name_that_is_not_utf8_is_one_entry_and_the_batch_records_everything(tmp_path: Path) -> None:
    folder, out = tmp_path / "src", tmp_path / "out"
    bad = make_bad_named(folder)
    retriever = SQLitePageRetriever(str(tmp_path / "pages.db"))

    report = index_documents([folder], out, workers=1, retriever=retriever)

    assert report.count("ok") == 41
    name = os.fsdecode(bad)
    assert by_name(report)[name].status == "ok"
    assert os.path.isdir(os.fsencode(out) + b"/" + bad + b".pageindex")
    assert len(json.loads((out / MANIFEST_FILE).read_bytes())["documents"]) == 41
    assert json.loads((out / REPORT_FILE).read_bytes())["totals"]["ok"] == 41
    assert retriever.search(name, "memo 23", max_pages=1)

    again = index_documents([folder], out, workers=1)

    assert again.count("skipped") == 41  # the odd name's record was read back as it was written
    retriever.close()


def test_the_command_line_indexes_a_folder_with_a_name_that_is_not_utf8(tmp_path: Path) -> None:
    folder, out = tmp_path / "src", tmp_path / "out"
    make_bad_named(folder, count=5, bad_at=2)

    result = subprocess.run(
        [*CLI, "--workers", "1", str(folder), "-o", str(out)],
        env=ENV,
        capture_output=True,
        timeout=120,
    )

    assert result.returncode == 0, result.stderr
    assert b"5 indexed, 0 up to date, 0 failed of 5 document(s)" in result.stdout
    assert b"memo02-caf\\udce9\\udcff.md" in result.stdout  # shown escaped
    assert json.loads((out / REPORT_FILE).read_bytes())["totals"]["ok"] == 5


# -- 3. FIFOs and devices among the sources --------------------------------------------------------------


@pytest.fixture
def hostile_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "src"
    folder.mkdir()
    (folder / "good.md").write_text("# Good\n\nA fine memo.\n")
    os.mkfifo(folder / "pipe.md")
    os.symlink("/dev/zero", folder / "zero.md")
    return folder


def run_batch_in_child(folder: Path, out: Path, workers: int) -> dict:
    """index_documents in a child process, so that a hang fails the test instead of the run."""
    code = (
        "import json, sys\n"
        "from extract_thinker_pageindex import index_documents\n"
        f"report = index_documents([{str(folder)!r}], {str(out)!r}, workers={workers})\n"
        "print(json.dumps(report.to_dict()))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], env=ENV, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.parametrize("workers", [1, 2])
def test_a_fifo_and_a_link_to_dev_zero_fail_on_their_own(
    hostile_folder: Path, tmp_path: Path, workers
) -> None:
    out = tmp_path / "out"

    report = run_batch_in_child(hostile_folder, out, workers)

    entries = {entry["name"]: entry for entry in report["documents"]}
    assert entries["good.md"]["status"] == "ok"
    assert entries["pipe.md"]["status"] == "failed"
    assert "named pipe (FIFO), not a regular file" in entries["pipe.md"]["error"]
    assert entries["zero.md"]["status"] == "failed"
    assert "character device, not a regular file" in entries["zero.md"]["error"]
    assert entries["pipe.md"]["error_type"] == entries["zero.md"]["error_type"] == "DocumentLoadError"
    assert json.loads((out / MANIFEST_FILE).read_text())["documents"]["good.md.pageindex"]["status"] == "ok"


def test_the_command_line_batch_does_not_hang_on_a_fifo(hostile_folder: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"

    result = subprocess.run(
        [*CLI, "--workers", "2", str(hostile_folder), "-o", str(out)],
        env=ENV,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert result.returncode == 1
    assert "1 indexed, 0 up to date, 2 failed of 3 document(s)" in result.stdout
    assert load_index(out / "good.md.pageindex").pages


# -- 8. damaged batch records ----------------------------------------------------------------------------


@pytest.fixture
def indexed(tmp_path: Path) -> tuple[Path, Path]:
    folder, out = tmp_path / "src", tmp_path / "out"
    folder.mkdir()
    for word in ("alpha", "beta"):
        (folder / f"{word}.md").write_text(f"# {word.title()}\n\nAbout {word}.\n")
    assert index_documents([folder], out, workers=1).count("ok") == 2
    return folder, out


def damage(manifest: Path, how: str) -> None:
    manifest.unlink()
    if how == "nested":
        manifest.write_text("[" * 100_000 + "]" * 100_000)
    elif how == "fifo":
        os.mkfifo(manifest)
    elif how == "dev-zero":
        os.symlink("/dev/zero", manifest)
    elif how == "not an object":
        manifest.write_text("[1, 2]")
    elif how == "huge":
        with open(manifest, "wb") as handle:
            handle.truncate(300 << 20)  # sparse: over the manifest's limit without taking the disk


@pytest.mark.parametrize("how", ["nested", "fifo", "dev-zero", "not an object", "huge"])
def test_an_unreadable_manifest_is_a_warning_and_a_full_reindex(indexed, how: str) -> None:
    folder, out = indexed
    damage(out / MANIFEST_FILE, how)

    with pytest.warns(PageIndexWarning, match="cannot be read .*every document is indexed again"):
        report = index_documents([folder], out, workers=1)

    assert report.count("ok") == 2
    manifest = out / MANIFEST_FILE
    assert manifest.is_file() and not manifest.is_symlink()  # replaced by a real manifest
    assert len(json.loads(manifest.read_text())["documents"]) == 2
    assert index_documents([folder], out, workers=1).count("skipped") == 2


@pytest.mark.parametrize("record", [MANIFEST_FILE, REPORT_FILE])
def test_a_record_that_is_a_folder_is_refused_before_any_work(indexed, record: str) -> None:
    folder, out = indexed
    (folder / "gamma.md").write_text("# Gamma\n\nAbout gamma.\n")
    (out / record).unlink()
    (out / record).mkdir()

    with pytest.raises(OutputExistsError, match=f"{record}' is a folder.*move it away"):
        index_documents([folder], out, workers=1)

    assert not (out / "gamma.md.pageindex").exists()  # no work was done


def test_the_command_line_says_a_record_folder_is_in_the_way(indexed) -> None:
    folder, out = indexed
    (out / REPORT_FILE).unlink()
    (out / REPORT_FILE).mkdir()

    result = subprocess.run(
        [*CLI, "--workers", "1", str(folder), "-o", str(out)],
        env=ENV,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert result.returncode == 1
    assert "is a folder, so the batch's records cannot be written there" in result.stderr
    assert "Traceback" not in result.stderr
