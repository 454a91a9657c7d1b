"""index_documents: many documents on this machine's processes and on a real local Ray cluster; statuses,
the report, the resumable manifest, output names, bad options, and model calls bounded across workers."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pymupdf
import pytest

from extract_thinker_pageindex import (
    DocumentLoadError,
    InvalidOptionError,
    ModelClient,
    OutputExistsError,
    PageIndexWarning,
    SQLitePageRetriever,
    UnsupportedFormatError,
    index_documents,
    load_index,
)
from extract_thinker_pageindex.batch.manifest import MANIFEST_FILE, REPORT_FILE
from extract_thinker_pageindex.batch.run import collect_documents
from extract_thinker_pageindex.batch.tasks import BatchEntry
from llm_server import LLMServer, Reply, completion_body

MODEL = "openai/test-vision"
PAGE_ANSWER = json.dumps(
    {
        "nodes": [
            {"type": "section", "id": "s", "description": "A scanned page."},
            {"type": "heading", "id": "h", "parent_id": "s", "level": "h2", "content": "Scanned page"},
            {"type": "paragraph", "id": "p", "parent_id": "s", "content": "Body text read by the model."},
        ]
    }
)


def write_pdf(path: Path, texts: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    document = pymupdf.open()
    for text in texts:
        page = document.new_page()
        page.insert_textbox(pymupdf.Rect(50, 50, 550, 800), text, fontsize=11)
    document.save(path)
    document.close()
    return path


def write_scan(path: Path, pages: int) -> Path:
    """A PDF of pages without a text layer (as scans are), with a title so no model call asks for one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    document = pymupdf.open()
    for _ in range(pages):
        page = document.new_page(width=612, height=792)
        page.draw_rect(pymupdf.Rect(100, 100, 300, 200), color=(0.5, 0.5, 0.5), fill=(0.5, 0.5, 0.5))
    document.set_metadata({"title": "Scan"})
    document.save(path)
    document.close()
    return path


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """docs/: a Markdown file, a two-page PDF, a same-named Markdown file in a subfolder, a corrupt PDF."""
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / "alpha.md").write_text("# Alpha\n\nThe alpha document talks about turbines.\n")
    (docs / "sub" / "alpha.md").write_text("# Sub alpha\n\nThe other alpha talks about glaciers.\n")
    write_pdf(docs / "report.pdf", ["Annual report\n\nRevenue grew.", "Outlook\n\nMore growth."])
    (docs / "broken.pdf").write_bytes(b"%PDF-1.7\nthis is not a PDF at all")
    (docs / "notes.xyz").write_text("not a supported extension: left out of the folder")
    (docs / ".hidden.md").write_text("# Hidden\n")
    return docs


def by_name(entries: list[BatchEntry]) -> dict[str, BatchEntry]:
    return {entry.name: entry for entry in entries}


def statuses(entries: list[BatchEntry]) -> dict[str, str]:
    return {entry.name: entry.status for entry in entries}


# -- the local engine ------------------------------------------------------------------------------------


@pytest.mark.parametrize("workers", [1, 2])
def test_local_engine_indexes_every_document_and_records_the_corrupt_one(
    corpus: Path, tmp_path: Path, workers: int
) -> None:
    out = tmp_path / "out"
    report = index_documents([corpus], out, workers=workers)

    assert statuses(report.entries) == {
        "alpha.md": "ok",
        "broken.pdf": "failed",
        "report.pdf": "ok",
        "sub/alpha.md": "ok",
    }
    assert report.workers == workers
    entries = by_name(report.entries)
    broken = entries["broken.pdf"]
    assert broken.error_type == DocumentLoadError.__name__
    assert "broken.pdf" in (broken.error or "")
    assert broken.pages is None
    assert entries["report.pdf"].pages == 2
    assert entries["report.pdf"].sha256 is not None and len(entries["report.pdf"].sha256) == 64
    assert entries["report.pdf"].usage is None  # no model, no usage
    assert load_index(out / "report.pdf.pageindex").source_page_count == 2
    assert "turbines" in (out / "alpha.md.pageindex" / "document.json").read_text()
    assert "glaciers" in (out / "sub" / "alpha.md.pageindex" / "document.json").read_text()
    assert not (out / "broken.pdf.pageindex").exists()
    assert report.totals() == {
        "documents": 4,
        "ok": 3,
        "failed": 1,
        "skipped": 0,
        "pages": 4,
        "seconds": round(report.seconds, 3),
        "usage": {"calls": 0, "input_tokens": 0, "output_tokens": 0},
    }


def test_the_report_is_written_beside_the_outputs(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    report = index_documents([corpus], out, workers=1)

    saved = json.loads((out / REPORT_FILE).read_text())
    assert saved == json.loads(json.dumps(report.to_dict()))
    assert saved["totals"]["failed"] == 1
    assert [item["name"] for item in saved["documents"]] == sorted(
        item["name"] for item in saved["documents"]
    )
    failed = next(item for item in saved["documents"] if item["status"] == "failed")
    assert failed["error_type"] == "DocumentLoadError"
    assert saved["engine"] == "local"
    # Written through a temporary file and a rename: nothing else is left beside it.
    assert sorted(path.name for path in out.iterdir() if path.is_file()) == [MANIFEST_FILE, REPORT_FILE]


def test_a_second_run_skips_everything_up_to_date_and_retries_the_failed(
    corpus: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    index_documents([corpus], out, workers=1)
    before = (out / "report.pdf.pageindex" / "document.json").stat().st_mtime_ns

    second = index_documents([corpus], out, workers=1)

    assert statuses(second.entries) == {
        "alpha.md": "skipped",
        "broken.pdf": "failed",  # tried again, and still corrupt
        "report.pdf": "skipped",
        "sub/alpha.md": "skipped",
    }
    assert by_name(second.entries)["report.pdf"].pages == 2
    assert (out / "report.pdf.pageindex" / "document.json").stat().st_mtime_ns == before
    assert second.pages == 0

    write_pdf(corpus / "broken.pdf", ["Mended\n\nNow a real PDF."])
    third = index_documents([corpus], out, workers=1)
    assert statuses(third.entries)["broken.pdf"] == "ok"
    assert [entry.name for entry in third.entries if entry.status != "skipped"] == ["broken.pdf"]
    assert load_index(out / "broken.pdf.pageindex").pages


def test_changing_one_file_redoes_only_that_one(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    index_documents([corpus], out, workers=2)
    (corpus / "sub" / "alpha.md").write_text("# Sub alpha\n\nNow it talks about volcanoes.\n")

    report = index_documents([corpus], out, workers=2)

    assert [entry.name for entry in report.entries if entry.status == "ok"] == ["sub/alpha.md"]
    assert "volcanoes" in (out / "sub" / "alpha.md.pageindex" / "document.json").read_text()


def test_changing_an_option_that_changes_the_result_redoes_all_and_others_do_not(
    corpus: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    index_documents([corpus], out, workers=1)

    same = index_documents([corpus], out, workers=1, parallel=5)  # parallel never changes an index
    assert {entry.status for entry in same.entries} == {"skipped", "failed"}

    changed = index_documents([corpus], out, workers=1, pages="1")
    assert statuses(changed.entries) == {
        "alpha.md": "ok",
        "broken.pdf": "failed",
        "report.pdf": "ok",
        "sub/alpha.md": "ok",
    }
    assert by_name(changed.entries)["report.pdf"].pages == 1


def test_an_index_that_no_longer_loads_is_built_again(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    index_documents([corpus], out, workers=1)
    (out / "alpha.md.pageindex" / "document.json").write_text("{ damaged")
    shutil.rmtree(out / "sub" / "alpha.md.pageindex")

    report = index_documents([corpus], out, workers=1)

    assert statuses(report.entries)["alpha.md"] == "ok"
    assert statuses(report.entries)["sub/alpha.md"] == "ok"
    assert statuses(report.entries)["report.pdf"] == "skipped"
    assert load_index(out / "alpha.md.pageindex").name == "alpha"
    assert sorted(path.name for path in out.iterdir() if path.name.startswith(".")) == []


def test_a_damaged_output_holding_other_files_is_left_alone(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    index_documents([corpus], out, workers=1)
    (out / "alpha.md.pageindex" / "document.json").write_text("{ damaged")
    (out / "alpha.md.pageindex" / "my-notes.txt").write_text("a file this library did not write")

    report = index_documents([corpus], out, workers=1)

    assert by_name(report.entries)["alpha.md"].error_type == OutputExistsError.__name__
    assert (out / "alpha.md.pageindex" / "my-notes.txt").read_text() == "a file this library did not write"


def test_the_manifest_records_content_and_options(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    report = index_documents([corpus], out, workers=1)

    manifest = json.loads((out / MANIFEST_FILE).read_text())
    records = manifest["documents"]
    assert set(records) == {
        "alpha.md.pageindex",
        "broken.pdf.pageindex",
        "report.pdf.pageindex",
        "sub/alpha.md.pageindex",
    }
    assert records["report.pdf.pageindex"]["sha256"] == by_name(report.entries)["report.pdf"].sha256
    assert records["broken.pdf.pageindex"]["status"] == "failed"
    assert records["alpha.md.pageindex"]["options"] == records["sub/alpha.md.pageindex"]["options"]
    assert (
        records["alpha.md.pageindex"]["options"] != records["report.pdf.pageindex"]["options"]
    )  # another kind


def test_an_unreadable_manifest_is_a_warning_and_everything_is_redone(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    index_documents([corpus], out, workers=1)
    (out / MANIFEST_FILE).write_text("[not a manifest")

    with pytest.warns(PageIndexWarning, match="manifest"):
        report = index_documents([corpus], out, workers=1)

    assert "skipped" not in statuses(report.entries).values()
    assert json.loads((out / MANIFEST_FILE).read_text())["manifest_version"] == 1


def test_same_named_files_keep_apart(tmp_path: Path) -> None:
    first, second = tmp_path / "2021", tmp_path / "2022"
    for folder, word in ((first, "copper"), (second, "nickel")):
        folder.mkdir()
        (folder / "report.md").write_text(f"# Report\n\nAbout {word}.\n")
    (first / "report.txt").write_text("Report as text about zinc.\n")
    out = tmp_path / "out"

    report = index_documents([first, second / "report.md"], out, workers=1)

    assert [(entry.name, Path(entry.output).relative_to(out).as_posix()) for entry in report.entries] == [
        ("2021/report.md", "2021/report.md.pageindex"),
        ("2021/report.txt", "2021/report.txt.pageindex"),
        ("2022/report.md", "2022/report.md.pageindex"),
    ]
    assert "nickel" in (out / "2022" / "report.md.pageindex" / "document.json").read_text()
    assert "zinc" in (out / "2021" / "report.txt.pageindex" / "document.json").read_text()


def test_files_given_one_by_one_fail_on_their_own(tmp_path: Path) -> None:
    good = tmp_path / "good.md"
    good.write_text("# Good\n\nFine.\n")
    odd = tmp_path / "odd.xyz"
    odd.write_text("an extension nobody reads")

    report = index_documents([good, odd, tmp_path / "missing.pdf"], tmp_path / "out", workers=1)

    entries = by_name(report.entries)
    assert entries["good.md"].status == "ok"
    assert entries["odd.xyz"].error_type == UnsupportedFormatError.__name__
    assert entries["missing.pdf"].error_type == DocumentLoadError.__name__
    assert entries["missing.pdf"].error == f"No such file: {str(tmp_path / 'missing.pdf')!r}."
    assert entries["missing.pdf"].sha256 is None


def test_the_output_folder_inside_a_source_folder_is_not_indexed(corpus: Path) -> None:
    out = corpus / "indexes"
    index_documents([corpus], out, workers=1)
    report = index_documents([corpus], out, workers=1)

    assert sorted(statuses(report.entries)) == ["alpha.md", "broken.pdf", "report.pdf", "sub/alpha.md"]
    assert [name for name, _, _ in collect_documents([corpus], out)] == sorted(statuses(report.entries))


def test_progress_and_retriever_see_each_document_as_it_finishes(corpus: Path, tmp_path: Path) -> None:
    seen: list[tuple[int, int, str]] = []
    with SQLitePageRetriever() as retriever:
        index_documents(
            [corpus],
            tmp_path / "out",
            workers=2,
            retriever=retriever,
            progress=lambda done, total, entry: seen.append((done, total, entry.name)),
        )
        assert [match.page_number for match in retriever.search("report.pdf", "outlook")] == [2]
        assert [match.page_number for match in retriever.search("report.pdf", "revenue")] == [1]
        assert retriever.search("sub/alpha.md", "glaciers")

    assert [(done, total) for done, total, _ in seen] == [(1, 4), (2, 4), (3, 4), (4, 4)]
    assert sorted(name for _, _, name in seen) == ["alpha.md", "broken.pdf", "report.pdf", "sub/alpha.md"]

    # A second run skips every index, and still gives the retriever each document.
    with SQLitePageRetriever() as fresh:
        again = index_documents([corpus], tmp_path / "out", workers=1, retriever=fresh)
        assert by_name(again.entries)["alpha.md"].status == "skipped"
        assert fresh.search("alpha.md", "turbines")


@pytest.mark.parametrize(
    ("arguments", "error", "message"),
    [
        ({"engine": "spark"}, InvalidOptionError, "engine must be 'local' or 'ray'"),
        ({"workers": 0}, InvalidOptionError, "workers must be a whole number"),
        ({"workers": True}, InvalidOptionError, "workers must be a whole number"),
        ({"model_rate": 0, "model": MODEL}, InvalidOptionError, "model_rate must be"),
        ({"model_rate": 2}, InvalidOptionError, "pass model= as well"),
        ({"address": "auto"}, InvalidOptionError, "engine='ray'"),
        ({"retriever": object()}, InvalidOptionError, "index\\(document_id, pages\\)"),
        ({"doc_name": "x"}, InvalidOptionError, "sets doc_name per document"),
        ({"strategy": "magic"}, UnsupportedFormatError, "strategy must be one of"),
        ({"parallel": 0}, InvalidOptionError, "parallel must be"),
        ({"colour": "red"}, TypeError, "unknown build_index option"),
    ],
)
def test_bad_options_are_refused_before_any_work(
    corpus: Path, tmp_path: Path, arguments: dict[str, Any], error: type[Exception], message: str
) -> None:
    out = tmp_path / "out"
    with pytest.raises(error, match=message):
        index_documents([corpus], out, **arguments)
    assert not out.exists()


def test_bad_sources_and_out_dir_are_refused(corpus: Path, tmp_path: Path) -> None:
    with pytest.raises(InvalidOptionError, match="list of paths"):
        index_documents(str(corpus), tmp_path / "out")  # type: ignore[arg-type]
    with pytest.raises(InvalidOptionError, match="sources is empty"):
        index_documents([], tmp_path / "out")
    a_file = tmp_path / "taken"
    a_file.write_text("a file where the output folder should go")
    with pytest.raises(OutputExistsError, match="is a file"):
        index_documents([corpus], a_file)


def test_ray_engine_without_ray_names_the_extra(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were not installed
    with pytest.raises(InvalidOptionError, match=r"extract-thinker-pageindex\[ray\]"):
        index_documents([corpus], tmp_path / "out", engine="ray")
    assert not (tmp_path / "out").exists()


def test_a_model_that_cannot_reach_worker_processes_is_refused(corpus: Path, tmp_path: Path) -> None:
    client = ModelClient(MODEL, sleep=lambda seconds: None)  # a lambda does not pickle
    with pytest.raises(InvalidOptionError, match="worker processes"):
        index_documents([corpus], tmp_path / "out", workers=2, model=client)
    assert not (tmp_path / "out").exists()
    # In this process it is used as it is.
    report = index_documents([corpus / "alpha.md"], tmp_path / "out", workers=2, model=client, abstract=False)
    assert report.workers == 1 and report.entries[0].status == "ok"


def test_nothing_of_ray_or_extract_thinker_is_imported_by_a_local_run(corpus: Path, tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from extract_thinker_pageindex import index_documents\n"
        f"report = index_documents([{str(corpus)!r}], {str(tmp_path / 'out')!r}, workers=1)\n"
        "print(report.count('ok'), 'ray' in sys.modules, 'extract_thinker' in sys.modules)"
    )
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert result.stdout.split() == ["3", "False", "False"]


# -- model calls bounded across workers ------------------------------------------------------------------


def answer_pages(server: LLMServer, delay: float) -> None:
    body = completion_body(PAGE_ANSWER, prompt_tokens=100, completion_tokens=20)
    server.default = lambda request: Reply(200, body, delay=delay)


def test_model_rate_bounds_the_calls_of_page_threads(tmp_path: Path, llm_server: LLMServer) -> None:
    answer_pages(llm_server, 0.15)
    write_scan(tmp_path / "scans" / "a.pdf", 4)
    options: dict[str, Any] = {"strategy": "vision", "model": MODEL, "parallel": 4, "abstract": False}

    free = index_documents([tmp_path / "scans"], tmp_path / "free", workers=1, **options)
    assert free.entries[0].status == "ok"
    assert llm_server.peak_concurrency >= 2  # the control: without a limit, pages overlap

    llm_server.peak_concurrency = 0
    bounded = index_documents([tmp_path / "scans"], tmp_path / "bounded", workers=1, model_rate=1, **options)
    assert bounded.entries[0].status == "ok"
    assert llm_server.peak_concurrency == 1
    assert bounded.entries[0].usage == {"calls": 4, "input_tokens": 400, "output_tokens": 80}


def test_model_rate_holds_across_worker_processes(tmp_path: Path, llm_server: LLMServer) -> None:
    answer_pages(llm_server, 0.2)
    for number in range(3):
        write_scan(tmp_path / "scans" / f"scan{number}.pdf", 2)
    # Worker processes get the model by name and settings: the server's address goes with it.
    client = ModelClient(MODEL, api_base=llm_server.url, api_key="sk-test-not-a-real-key")

    report = index_documents(
        [tmp_path / "scans"],
        tmp_path / "out",
        workers=2,
        model_rate=2,
        strategy="vision",
        model=client,
        parallel=2,
        abstract=False,
    )

    assert {entry.status for entry in report.entries} == {"ok"}
    assert report.usage["calls"] == 6 == len(llm_server.requests)
    assert 1 <= llm_server.peak_concurrency <= 2


# -- the Ray engine, on a real local cluster -------------------------------------------------------------


@pytest.fixture(scope="module")
def ray_cluster() -> Any:
    ray = pytest.importorskip("ray")
    # address="local": a cluster of its own, whatever another `ray start` on the machine left behind.
    ray.init(
        address="local", num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False
    )
    yield ray
    ray.shutdown()


def test_ray_engine_indexes_documents_and_resumes(ray_cluster: Any, corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    seen: list[int] = []

    report = index_documents(
        [corpus], out, engine="ray", progress=lambda done, total, entry: seen.append(done)
    )

    assert statuses(report.entries) == {
        "alpha.md": "ok",
        "broken.pdf": "failed",
        "report.pdf": "ok",
        "sub/alpha.md": "ok",
    }
    assert report.engine == "ray" and report.workers == 2  # the cluster's CPUs
    assert by_name(report.entries)["broken.pdf"].error_type == "DocumentLoadError"
    assert load_index(out / "report.pdf.pageindex").source_page_count == 2
    assert seen == [1, 2, 3, 4]
    assert ray_cluster.is_initialized()  # a Ray it did not start is left running

    again = index_documents([corpus], out, engine="ray", workers=1)
    assert statuses(again.entries) == {
        "alpha.md": "skipped",
        "broken.pdf": "failed",
        "report.pdf": "skipped",
        "sub/alpha.md": "skipped",
    }


def test_ray_workers_write_a_shared_postgres_index(
    ray_cluster: Any, corpus: Path, tmp_path: Path, postgres_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import uuid

    import psycopg
    from psycopg import sql
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    from extract_thinker_pageindex import PostgresPageRetriever

    # The port comes from the caller's environment, which the cluster's workers did not start with (as a
    # PGPASSWORD would): the tasks must get it.
    params = conninfo_to_dict(postgres_dsn)
    monkeypatch.setenv("PGPORT", str(params.pop("port")))
    schema = f"t_{uuid.uuid4().hex[:16]}"
    try:
        with PostgresPageRetriever(make_conninfo("", **params), schema=schema) as retriever:
            report = index_documents([corpus], tmp_path / "out", engine="ray", retriever=retriever)
            assert statuses(report.entries)["report.pdf"] == "ok"
            # Each task opened its own retriever on the server and wrote its document's pages.
            assert retriever.document_ids() == ["alpha.md", "report.pdf", "sub/alpha.md"]
            assert [match.page_number for match in retriever.search("report.pdf", "outlook")] == [2]
    finally:
        with psycopg.connect(postgres_dsn, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


def test_ray_model_rate_holds_across_the_cluster(
    ray_cluster: Any, tmp_path: Path, llm_server: LLMServer
) -> None:
    from extract_thinker_pageindex.batch.ray_engine import NAMESPACE, limiter_name

    answer_pages(llm_server, 0.25)
    for number in range(4):
        write_scan(tmp_path / "scans" / f"scan{number}.pdf", 2)
    # Ray workers are other processes, started before this server: its address goes with the model.
    client = ModelClient(MODEL, api_base=llm_server.url, api_key="sk-test-not-a-real-key")

    report = index_documents(
        [tmp_path / "scans"],
        tmp_path / "out",
        engine="ray",
        model_rate=2,
        strategy="vision",
        model=client,
        parallel=2,  # two workers with two page threads each could make four calls at once
        abstract=False,
    )

    assert {entry.status for entry in report.entries} == {"ok"}, [entry.error for entry in report.entries]
    assert report.usage["calls"] == 8 == len(llm_server.requests)
    assert 1 <= llm_server.peak_concurrency <= 2
    limiter = ray_cluster.get_actor(limiter_name(MODEL), namespace=NAMESPACE)
    stats = ray_cluster.get(limiter.stats.remote())
    assert stats["limit"] == 2 and stats["held"] == 0 and stats["peak"] <= 2
    assert stats["granted"] == 8
    # The server saw requests overlap only as far as the limit allows: check it from the timings too.
    events = sorted(
        [(start, 1) for start, _ in llm_server.timings] + [(end, -1) for _, end in llm_server.timings]
    )
    running = peak = 0
    for _, change in events:
        running += change
        peak = max(peak, running)
    assert peak <= 2


def test_limiter_takes_back_a_permit_whose_lease_ran_out() -> None:
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    from extract_thinker_pageindex.llm.call_limit import LeaseSemaphore

    async def scenario() -> tuple[float, dict[str, int]]:
        semaphore = LeaseSemaphore(1)
        loop = asyncio.get_running_loop()
        started = loop.time()  # before the lease is taken: a busy machine may pause anywhere after
        await semaphore.acquire(0.2)  # a worker that died holding its permit never releases it
        # If the lease never ran out, this would wait for ever: a bound makes that a failure, not a hang.
        token = await asyncio.wait_for(semaphore.acquire(5.0), timeout=30)
        waited = loop.time() - started
        await semaphore.release(token)
        return waited, await semaphore.stats()

    # In a thread of its own: the session's headless browser (playwright) keeps an event loop running in
    # this one once a view test has run.
    with ThreadPoolExecutor(1) as thread:
        waited, stats = thread.submit(asyncio.run, scenario()).result()
    assert waited >= 0.19  # not before the lease ran out
    assert stats == {"limit": 1, "held": 0, "peak": 1, "granted": 2}
