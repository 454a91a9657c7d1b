"""Indexing at scale: (a) the PostgreSQL retriever against SQLite; (b) batch indexing of
the FinanceBench PDFs with the text strategy: a plain loop against ``index_documents`` on the local engine and
on Ray, with 1 and 2 workers; (c) a simulated vision run of many one-page scans against a local model server
with a cluster-wide limit on concurrent model calls, checking that the limit holds.

(a) indexes the page texts of the FinanceBench questions' PDFs (DocumentLoaderPyMuPDF's, loaded by
benchmarks/retrieval.py; one doc id per PDF) into an SQLitePageRetriever file and a PostgresPageRetriever
schema (a fresh one per run, dropped after), then prints side by side with the PostgreSQL/SQLite ratio:
indexing pages/s; search latency p50/p95 and queries/s of the questions (each scoped to its document,
max_pages=5) from 1 client, 8 threads sharing one retriever and 8 spawned processes with a retriever each
(same file, same schema), every client running all questions 3x after a warm-up pass; recall@1/3/5/10 and
the overlap of the two backends' top-5 pages; and a scale probe: the same texts under 10 doc ids per PDF
(``name#0``..``name#9``), its indexing pages/s, 1-client latency and storage per page (the SQLite file; the
schema's tables by ``pg_total_relation_size``, its GIN index apart). The PostgreSQL tables get a
``VACUUM (ANALYZE)`` after each load (timed apart), as autovacuum would. ``--dsn`` names a server to use;
by default one is started from tests/postgres_server.py (fsync off) and removed at the end.

(b) prints pages/s and the ratio to the loop. Every run writes into a fresh folder (nothing is skipped).
Ray is started once with the machine's CPUs before the Ray runs; its start-up is printed apart, and the
first Ray run also pays its workers' start.

(c) indexes N one-page scans (no text layer, so every page is one model call) with
``strategy="vision"``; the server (tests/llm_server.py, in this process) answers each call after DELAY
seconds and records how many it was answering at once. Each engine runs with more documents in flight
than the limit (Ray with that many logical CPUs, the local engine with that many worker processes), once
without a limit and once with ``model_rate=LIMIT``. Printed: wall time against the ideal
``ceil(N / concurrency) * DELAY``, calls, and the most concurrent calls the server saw (must be <= the
limit), and for Ray the limiter actor's own peak.

(d) indexes the same PDFs as (b) with ``engine="local"``, 2 workers, into a shared PostgreSQL index
(``retriever=PostgresPageRetriever``, a fresh schema per run): the workers writing it themselves (the
default for a retriever every machine reaches) against the calling process feeding it (the same retriever
class with ``shared_across_machines = False``), and without a retriever. Prints pages/s and the ratio to the
run without one. The server is ``--dsn`` or a throwaway one, as for (a).

Usage: python benchmarks/scale.py [--data DIR] [--dsn DSN] [--pdfs DIR] [--limit-files N] [--scans 1000]
                                  [--delay 0.3] [--model-rate 4] [--in-flight 8] [--parts a b c d]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import pymupdf

from extract_thinker_pageindex import ModelClient, index_document, index_documents

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "eval" / "financebench"
PDFS = DATA / "pdfs"
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))  # retrieval.py: the questions and page texts

ANSWER = json.dumps(
    {
        "nodes": [
            {"type": "section", "id": "s", "description": "A scanned page."},
            {"type": "heading", "id": "h", "parent_id": "s", "level": "h2", "content": "Scanned page"},
            {"type": "paragraph", "id": "p", "parent_id": "s", "content": "Body text read by the model."},
        ]
    }
)


# -- (a) ---------------------------------------------------------------------------------------------------

COPIES = 10  # the scale probe's copies of every document
CLIENTS = 8  # threads, then processes, searching at once
REPEATS = 3  # each client runs every question this many times (after one warm-up pass)
TOP = 5  # max_pages of the timed searches; the top-5 overlap is measured at this depth


def _open(spec: tuple[str, ...]) -> Any:
    """A retriever from a picklable spec: ("sqlite", path) or ("postgres", dsn, schema)."""
    if spec[0] == "sqlite":
        from extract_thinker_pageindex import SQLitePageRetriever

        return SQLitePageRetriever(spec[1])
    from extract_thinker_pageindex import PostgresPageRetriever

    return PostgresPageRetriever(spec[1], schema=spec[2])


def _searches(retriever: Any, queries: list[tuple[str, str]], repeats: int) -> list[float]:
    """Seconds of each search: every (doc id, question) ``repeats`` times."""
    seconds = []
    for _ in range(repeats):
        for doc_id, text in queries:
            started = time.perf_counter()
            retriever.search(doc_id, text, max_pages=TOP)
            seconds.append(time.perf_counter() - started)
    return seconds


def _process_client(
    spec: tuple[str, ...], queries: list[tuple[str, str]], barrier: Any, results: Any
) -> None:
    """One of the concurrent processes: its own retriever, warmed up, then timed once all are ready.
    perf_counter is CLOCK_MONOTONIC on Linux, one clock for every process of the machine."""
    with _open(spec) as retriever:
        _searches(retriever, queries, 1)
        barrier.wait()
        started = time.perf_counter()
        seconds = _searches(retriever, queries, REPEATS)
        results.put((started, time.perf_counter(), seconds))


def _latency(seconds: list[float], wall: float) -> dict[str, float]:
    cuts = statistics.quantiles(seconds, n=100, method="inclusive")
    return {"p50": cuts[49] * 1000, "p95": cuts[94] * 1000, "qps": len(seconds) / wall}


def _one_client(retriever: Any, queries: list[tuple[str, str]]) -> dict[str, float]:
    _searches(retriever, queries, 1)
    started = time.perf_counter()
    seconds = _searches(retriever, queries, REPEATS)
    return _latency(seconds, time.perf_counter() - started)


def _threads(retriever: Any, queries: list[tuple[str, str]]) -> dict[str, float]:
    """CLIENTS threads sharing one (warm) retriever object."""
    import threading

    barrier = threading.Barrier(CLIENTS + 1)
    results: list[list[float]] = []

    def client() -> None:
        barrier.wait()
        results.append(_searches(retriever, queries, REPEATS))

    threads = [threading.Thread(target=client) for _ in range(CLIENTS)]
    for thread in threads:
        thread.start()
    barrier.wait()
    started = time.perf_counter()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - started
    if len(results) != CLIENTS:
        raise SystemExit("(a) a search thread failed")
    return _latency([value for seconds in results for value in seconds], wall)


def _processes(spec: tuple[str, ...], queries: list[tuple[str, str]]) -> dict[str, float]:
    """CLIENTS spawned processes, each with its own retriever on the same file or schema."""
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(CLIENTS)
    results = context.Queue()
    processes = [
        context.Process(target=_process_client, args=(spec, queries, barrier, results))
        for _ in range(CLIENTS)
    ]
    for process in processes:
        process.start()
    answers = []
    for _ in processes:
        answers.append(results.get(timeout=600))
    for process in processes:
        process.join()
        if process.exitcode:
            raise SystemExit(f"(a) a search process failed (exit code {process.exitcode})")
    wall = max(end for _, end, _ in answers) - min(start for start, _, _ in answers)
    return _latency([value for _, _, seconds in answers for value in seconds], wall)


def _index(retriever: Any, texts: dict[str, list[str]], copies: int | None) -> float:
    """Pages/s of indexing every document (under ``name#0``..``name#{copies-1}`` when copies is given)."""
    started = time.perf_counter()
    pages = 0
    for name, page_texts in texts.items():
        for doc_id in [name] if copies is None else [f"{name}#{copy}" for copy in range(copies)]:
            retriever.index(doc_id, page_texts)
            pages += len(page_texts)
    return pages / (time.perf_counter() - started)


def _vacuum(dsn: str, schema: str) -> float:
    """VACUUM (ANALYZE) the schema's tables, as autovacuum would after a bulk load: planner statistics, GIN
    pending list merged. Returns its seconds (not counted as indexing)."""
    import psycopg
    from psycopg import sql

    started = time.perf_counter()
    with psycopg.connect(dsn, autocommit=True) as conn:
        tables = conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = %s ORDER BY tablename", (schema,)
        ).fetchall()
        for (table,) in tables:
            conn.execute(
                sql.SQL("VACUUM (ANALYZE) {}.{}").format(sql.Identifier(schema), sql.Identifier(table))
            )
    return time.perf_counter() - started


def _pg_sizes(dsn: str, schema: str) -> tuple[int, int]:
    """Bytes of the schema's tables (pg_total_relation_size: heap, TOAST, indexes) and of its GIN indexes."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        ((total,),) = conn.execute(
            "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c"
            " JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = %s AND c.relkind = 'r'",
            (schema,),
        ).fetchall()
        ((gin,),) = conn.execute(
            "SELECT coalesce(sum(pg_relation_size(c.oid)), 0) FROM pg_class c"
            " JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_am a ON a.oid = c.relam"
            " WHERE n.nspname = %s AND c.relkind = 'i' AND a.amname = 'gin'",
            (schema,),
        ).fetchall()
    return int(total), int(gin)


def _drop_schema(dsn: str, schema: str) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


def _file_size(path: Path) -> int:
    """An SQLite database's bytes on disk (with its -wal file, if one is left)."""
    return sum(os.path.getsize(file) for file in (path, Path(f"{path}-wal")) if file.exists())


def _quality(retriever: Any, questions: list[Any]) -> tuple[dict[int, float], dict[str, list[int]]]:
    """Recall@k (an evidence page among the first k) and each question's pages, best first."""
    from retrieval import DEPTH, KS

    top = {
        question.id: [match.page_number for match in retriever.search(question.doc, question.text, DEPTH)]
        for question in questions
    }
    recall = {
        k: sum(1 for question in questions if question.evidence & set(top[question.id][:k])) / len(questions)
        for k in KS
    }
    return recall, top


def _measure(backend: str, spec: tuple[str, ...], texts: dict[str, list[str]], questions: list[Any]) -> dict:
    """Everything (a) prints for one backend; ``spec`` names its store at 1x, the scale probe's store is
    made from it with a "-10x" suffix."""
    queries = [(question.doc, question.text) for question in questions]
    row: dict[str, Any] = {}
    with _open(spec) as retriever:
        row["index"] = _index(retriever, texts, None)
        if backend == "postgres":
            row["vacuum"] = _vacuum(spec[1], spec[2])
        row["recall"], row["top"] = _quality(retriever, questions)
        row["1 client"] = _one_client(retriever, queries)
        row[f"{CLIENTS} threads"] = _threads(retriever, queries)
        row[f"{CLIENTS} processes"] = _processes(spec, queries)
    if backend == "sqlite":
        row["bytes"] = _file_size(Path(spec[1]))
    else:
        row["bytes"], row["gin"] = _pg_sizes(spec[1], spec[2])
    big = (spec[0], spec[1] + "-10x") if backend == "sqlite" else (spec[0], spec[1], spec[2] + "_10x")
    copy = f"#{COPIES // 2}"
    try:
        with _open(big) as retriever:
            row["10x index"] = _index(retriever, texts, COPIES)
            if backend == "postgres":
                row["10x vacuum"] = _vacuum(big[1], big[2])
            row["10x 1 client"] = _one_client(retriever, [(doc + copy, text) for doc, text in queries])
        if backend == "sqlite":
            row["10x bytes"] = _file_size(Path(big[1]))
        else:
            row["10x bytes"], row["10x gin"] = _pg_sizes(big[1], big[2])
    finally:
        if backend == "postgres":
            _drop_schema(big[1], big[2])
    return row


def _server(dsn: str | None, part: str) -> tuple[Any, str | None]:
    """``(server, dsn)``: the ``--dsn`` given, or a throwaway server started for the part (``server`` is
    then to be removed); ``(None, None)`` when there is neither."""
    if dsn is not None:
        return None, dsn
    from postgres_server import PostgresServer, find_binaries

    binaries = find_binaries()
    if binaries is None:
        print(f"{part} no PostgreSQL binaries found (initdb, pg_ctl) and no --dsn; skipped")
        return None, None
    server = PostgresServer(binaries).start()
    return server, server.dsn


def part_a_retrievers(data: Path, dsn: str | None, folder: Path) -> None:
    """(a) PostgresPageRetriever against SQLitePageRetriever on the FinanceBench page texts."""
    from retrieval import KS, load_page_texts, load_questions

    if not (data / "questions.jsonl").exists():
        print(f"(a) no questions.jsonl in {data}; skipped")
        return
    server, dsn = _server(dsn, "(a)")
    if dsn is None:
        return
    schema = f"scale_bench_{os.getpid()}_{int(time.time())}"
    try:
        questions = load_questions(data)
        texts = load_page_texts(data, sorted({question.doc for question in questions}))
        pages = sum(map(len, texts.values()))
        where = (
            "a throwaway server from tests/postgres_server.py (fsync=off, synchronous_commit=off)"
            if server
            else "--dsn"
        )
        print(
            f"(a) PostgresPageRetriever vs SQLitePageRetriever: {len(questions)} questions over {len(texts)} "
            f"documents, {pages:,} pages; {os.cpu_count()} CPUs; PostgreSQL: {where}, schema {schema}"
        )
        try:
            rows = {
                "sqlite": _measure("sqlite", ("sqlite", str(folder / "retriever.db")), texts, questions),
                "postgres": _measure("postgres", ("postgres", dsn, schema), texts, questions),
            }
        finally:
            _drop_schema(dsn, schema)
        _print_a(rows, pages, KS, questions)
    finally:
        if server is not None:
            server.remove()


def _print_a(rows: dict[str, dict], pages: int, ks: tuple[int, ...], questions: list[Any]) -> None:
    lite, pg = rows["sqlite"], rows["postgres"]
    lines: list[tuple[str, float, float, str]] = [("index 1x, pages/s", lite["index"], pg["index"], ",.0f")]
    for level in ("1 client", f"{CLIENTS} threads", f"{CLIENTS} processes"):
        for key, unit, fmt in (("p50", "ms", ".1f"), ("p95", "ms", ".1f"), ("qps", "queries/s", ".1f")):
            lines.append(
                (
                    f"search {level}, {key} {unit}" if key != "qps" else f"search {level}, {unit}",
                    lite[level][key],
                    pg[level][key],
                    fmt,
                )
            )
    for k in ks:
        lines.append((f"recall@{k}", lite["recall"][k], pg["recall"][k], ".3f"))
    big = pages * COPIES
    lines.append((f"index 10x ({big:,} pages), pages/s", lite["10x index"], pg["10x index"], ",.0f"))
    for key, fmt in (("p50", ".1f"), ("p95", ".1f")):
        lines.append(
            (f"search 10x 1 client, {key} ms", lite["10x 1 client"][key], pg["10x 1 client"][key], fmt)
        )
    lines.append(("storage 1x, bytes/page", lite["bytes"] / pages, pg["bytes"] / pages, ",.0f"))
    lines.append(("storage 10x, bytes/page", lite["10x bytes"] / big, pg["10x bytes"] / big, ",.0f"))
    print(f"    {'measure':<40} {'SQLite':>10} {'Postgres':>10} {'PG/SQLite':>10}")
    for label, left, right, fmt in lines:
        ratio = f"{right / left:10.2f}" if left else f"{'-':>10}"
        print(f"    {label:<40} {left:>10{fmt}} {right:>10{fmt}} {ratio}")
    print(
        f"    Postgres GIN index, bytes/page: {pg['gin'] / pages:,.0f} at 1x, "
        f"{pg['10x gin'] / big:,.0f} at 10x (in the storage row); total 10x: "
        f"SQLite {lite['10x bytes']:,} B, Postgres {pg['10x bytes']:,} B"
    )
    print(
        f"    Postgres VACUUM (ANALYZE) after indexing, not counted: {pg['vacuum']:.1f} s at 1x, "
        f"{pg['10x vacuum']:.1f} s at 10x"
    )
    overlaps = [
        len(set(lite["top"][q.id][:TOP]) & set(pg["top"][q.id][:TOP]))
        / max(len(lite["top"][q.id][:TOP]), len(pg["top"][q.id][:TOP]), 1)
        for q in questions
    ]
    same = sum(1 for q in questions if lite["top"][q.id][:TOP] == pg["top"][q.id][:TOP])
    first = sum(1 for q in questions if lite["top"][q.id][:1] == pg["top"][q.id][:1])
    print(
        f"    top-{TOP} page sets, SQLite vs Postgres: mean overlap {statistics.mean(overlaps):.3f} "
        f"(|A∩B| / max(|A|, |B|)); same order {same}/{len(questions)}, "
        f"same first page {first}/{len(questions)}"
    )
    print(
        f"    search: max_pages={TOP}, each question scoped to its document (10x: to copy #{COPIES // 2}); "
        f"1 client and each of {CLIENTS} threads/processes run all {len(questions)} questions {REPEATS}x "
        "after one warm-up pass; queries/s = all queries / wall time"
    )


# -- (b) ---------------------------------------------------------------------------------------------------


def _loop(files: list[Path], out: Path) -> tuple[float, int]:
    started = time.perf_counter()
    pages = 0
    for file in files:
        document, _ = index_document(file, output=out / (file.stem + ".pageindex"), strategy="text")
        pages += len(document.pages)
    return time.perf_counter() - started, pages


def _batch(files: list[Path], out: Path, **options: Any) -> tuple[float, int]:
    started = time.perf_counter()
    report = index_documents(files, out, strategy="text", **options)
    seconds = time.perf_counter() - started
    if report.failed:
        raise SystemExit(f"a document failed: {report.failed[0].name}: {report.failed[0].error}")
    return seconds, report.pages


def part_b_batch(pdfs: Path, limit_files: int | None, folder: Path) -> None:
    files = sorted(pdfs.glob("*.pdf"))[:limit_files]
    if not files:
        print(f"(b) no PDFs in {pdfs}; skipped")
        return
    print(f"(b) batch indexing, text strategy: {len(files)} PDFs of {pdfs} ({os.cpu_count()} CPUs)")
    rows: list[tuple[str, float, int]] = []
    seconds, pages = _loop(files, folder / "loop")
    rows.append(("plain loop of index_document", seconds, pages))
    for workers in (1, 2):
        seconds, pages = _batch(files, folder / f"local{workers}", engine="local", workers=workers)
        rows.append((f"engine='local', workers={workers}", seconds, pages))
    try:
        import ray
    except ImportError:
        print("    (ray not installed: pip install -e '.[ray]'; Ray rows skipped)")
    else:
        started = time.perf_counter()
        ray.init(address="local", num_cpus=os.cpu_count(), include_dashboard=False, log_to_driver=False)
        print(f"    ray.init: {time.perf_counter() - started:.1f} s (not counted below)")
        try:
            for workers in (1, 2):
                seconds, pages = _batch(files, folder / f"ray{workers}", engine="ray", workers=workers)
                rows.append((f"engine='ray', workers={workers}", seconds, pages))
        finally:
            ray.shutdown()
    base = rows[0][2] / rows[0][1]
    print(f"    {'run':<34} {'pages':>6} {'seconds':>8} {'pages/s':>8} {'x loop':>7}")
    for name, seconds, pages in rows:
        rate = pages / seconds
        print(f"    {name:<34} {pages:6} {seconds:8.1f} {rate:8.1f} {rate / base:7.2f}")


# -- (d) ---------------------------------------------------------------------------------------------------


def part_d_shared_index(pdfs: Path, limit_files: int | None, dsn: str | None, folder: Path) -> None:
    from extract_thinker_pageindex import PostgresPageRetriever

    class FedByCaller(PostgresPageRetriever):
        shared_across_machines = False  # index_documents then feeds it from the calling process

    files = sorted(pdfs.glob("*.pdf"))[:limit_files]
    if not files:
        print(f"(d) no PDFs in {pdfs}; skipped")
        return
    server, dsn = _server(dsn, "(d)")
    if dsn is None:
        return
    try:
        print(
            f"(d) batch indexing into a shared PostgreSQL index: {len(files)} PDFs, engine='local', "
            f"workers=2 ({os.cpu_count()} CPUs)"
        )
        rows: list[tuple[str, float, int]] = []
        seconds, pages = _batch(files, folder / "d-none", engine="local", workers=2)
        rows.append(("no retriever", seconds, pages))
        for name, kind in (
            ("written by the workers", PostgresPageRetriever),
            ("fed by the caller", FedByCaller),
        ):
            schema = f"scale_bench_d_{os.getpid()}_{len(rows)}"
            try:
                with kind(dsn, schema=schema) as retriever:
                    out = folder / f"d-{len(rows)}"
                    seconds, pages = _batch(files, out, engine="local", workers=2, retriever=retriever)
                    held = len(retriever.document_ids())
                    if held != len(files):
                        raise SystemExit(f"(d) {name}: the index holds {held} documents")
                rows.append((name, seconds, pages))
            finally:
                _drop_schema(dsn, schema)
        base = rows[0][2] / rows[0][1]
        print(f"    {'run':<34} {'pages':>6} {'seconds':>8} {'pages/s':>8} {'x none':>7}")
        for name, seconds, pages in rows:
            rate = pages / seconds
            print(f"    {name:<34} {pages:6} {seconds:8.1f} {rate:8.1f} {rate / base:7.2f}")
    finally:
        if server is not None:
            server.remove()


# -- (c) ---------------------------------------------------------------------------------------------------


def _scans(folder: Path, count: int) -> Path:
    scans = folder / "scans"
    scans.mkdir(parents=True, exist_ok=True)
    template = pymupdf.open()
    page = template.new_page(width=612, height=792)
    page.draw_rect(pymupdf.Rect(100, 100, 300, 200), color=(0.5, 0.5, 0.5), fill=(0.5, 0.5, 0.5))
    template.set_metadata({"title": "Scan"})  # no title call: one model call per document
    data = template.tobytes()
    for number in range(count):
        (scans / f"scan{number:05}.pdf").write_bytes(data)
    return scans


def _vision_run(
    server: Any, scans: Path, out: Path, *, engine: str, in_flight: int, model_rate: int | None
) -> dict[str, Any]:
    server.peak_concurrency = 0
    server.requests.clear()
    client = ModelClient("openai/bench-vision", api_base=server.url, api_key="sk-bench")
    started = time.perf_counter()
    report = index_documents(
        [scans],
        out,
        engine=engine,  # type: ignore[arg-type]
        workers=in_flight,
        model_rate=model_rate,
        strategy="vision",
        model=client,
        abstract=False,
    )
    seconds = time.perf_counter() - started
    row: dict[str, Any] = {
        "engine": engine,
        "limit": model_rate,
        "seconds": seconds,
        "calls": report.usage["calls"],
        "failed": len(report.failed),
        "server_peak": server.peak_concurrency,
        "limiter_peak": None,
    }
    if engine == "ray" and model_rate is not None:
        import ray

        from extract_thinker_pageindex.batch.ray_engine import NAMESPACE, limiter_name

        actor = ray.get_actor(limiter_name(client.model), namespace=NAMESPACE)
        row["limiter_peak"] = ray.get(actor.stats.remote())["peak"]
    return row


def part_c_vision(count: int, delay: float, model_rate: int, in_flight: int, folder: Path) -> None:
    from llm_server import LLMServer, Reply, completion_body

    print(
        f"(c) simulated vision run: {count} one-page scans, model answers after {delay * 1000:.0f} ms, "
        f"{in_flight} documents in flight, limit {model_rate} concurrent calls"
    )
    scans = _scans(folder, count)
    warm = _scans(folder / "warm", 2 * in_flight)
    body = completion_body(ANSWER)
    rows = []
    with LLMServer() as server:
        server.default = lambda request: Reply(200, body, delay=delay)
        engines = ["local"]
        try:
            import ray
        except ImportError:
            print("    (ray not installed: Ray rows skipped)")
        else:
            engines.append("ray")
            # Logical CPUs: the tasks wait on the model, so more run at once than the machine has cores.
            ray.init(address="local", num_cpus=in_flight, include_dashboard=False, log_to_driver=False)
        try:
            for engine in engines:
                # Not counted: starts the workers (and their import of ExtractThinker, ~5 s of CPU each).
                started = time.perf_counter()
                _vision_run(
                    server,
                    warm,
                    folder / f"{engine}-warm",
                    engine=engine,
                    in_flight=in_flight,
                    model_rate=None,
                )
                print(
                    f"    {engine}: warm-up of {2 * in_flight} scans, {time.perf_counter() - started:.1f} s"
                )
                for number, limit in enumerate((None, model_rate)):
                    out = folder / f"{engine}-{number}"
                    rows.append(
                        _vision_run(server, scans, out, engine=engine, in_flight=in_flight, model_rate=limit)
                    )
        finally:
            if "ray" in engines:
                ray.shutdown()
    print(
        f"    {'engine':<7} {'limit':>5} {'calls':>6} {'failed':>6} {'seconds':>8} {'ideal':>6} "
        f"{'calls/s':>8} {'peak seen by server':>20} {'limiter peak':>13}"
    )
    for row in rows:
        concurrency = row["limit"] or in_flight
        ideal = math.ceil(count / concurrency) * delay
        limit = row["limit"] if row["limit"] is not None else "-"
        limiter = row["limiter_peak"] if row["limiter_peak"] is not None else "-"
        held = "" if row["limit"] is None or row["server_peak"] <= row["limit"] else "  LIMIT EXCEEDED"
        print(
            f"    {row['engine']:<7} {limit!s:>5} {row['calls']:6} {row['failed']:6} {row['seconds']:8.1f} "
            f"{ideal:6.1f} {row['calls'] / row['seconds']:8.1f} {row['server_peak']:20} {limiter!s:>13}{held}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data", type=Path, default=DATA, help="(a): questions.jsonl and pdfs/ of FinanceBench"
    )
    parser.add_argument(
        "--dsn", default=None, help="(a), (d): a PostgreSQL server to use (default: start one)"
    )
    parser.add_argument("--pdfs", type=Path, default=PDFS, help="folder of PDFs for (b)")
    parser.add_argument("--limit-files", type=int, default=None, help="(b): only the first N PDFs")
    parser.add_argument("--scans", type=int, default=1000, help="(c): one-page scans to index")
    parser.add_argument("--delay", type=float, default=0.3, help="(c): seconds the model takes per call")
    parser.add_argument("--model-rate", type=int, default=4, help="(c): the limit on concurrent calls")
    parser.add_argument("--in-flight", type=int, default=8, help="(c): documents in flight at once")
    parser.add_argument("--parts", nargs="+", choices=("a", "b", "c", "d"), default=["a", "b", "c", "d"])
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="scale-bench-"))
    try:
        if "a" in args.parts:
            part_a_retrievers(args.data, args.dsn, folder)
        if "b" in args.parts:
            part_b_batch(args.pdfs, args.limit_files, folder)
        if "d" in args.parts:
            part_d_shared_index(args.pdfs, args.limit_files, args.dsn, folder)
        if "c" in args.parts and len(set(args.parts)) > 1:
            # A fresh process: the local engine's fork server preloads ExtractThinker only when the first
            # multi-process run of a process uses a model, which (b) does not.
            import subprocess

            command = [sys.executable, __file__, "--parts", "c", "--scans", str(args.scans)]
            command += ["--delay", str(args.delay), "--model-rate", str(args.model_rate)]
            subprocess.run([*command, "--in-flight", str(args.in_flight)], check=True)
        elif "c" in args.parts:
            part_c_vision(args.scans, args.delay, args.model_rate, args.in_flight, folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
