"""Indexing at scale: (a) the PostgreSQL retriever against SQLite (not yet measured); (b) batch indexing of
the FinanceBench PDFs with the text strategy: a plain loop against ``index_documents`` on the local engine and
on Ray, with 1 and 2 workers; (c) a simulated vision run of many one-page scans against a local model server
with a cluster-wide limit on concurrent model calls, checking that the limit holds.

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

Usage: python benchmarks/scale.py [--pdfs DIR] [--limit-files N] [--scans 1000] [--delay 0.3]
                                  [--model-rate 4] [--in-flight 8] [--parts b c]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import pymupdf

from extract_thinker_pageindex import ModelClient, index_document, index_documents

ROOT = Path(__file__).resolve().parents[1]
PDFS = ROOT.parent / "shared" / "eval" / "financebench" / "pdfs"
sys.path.insert(0, str(ROOT / "tests"))

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


def part_a_retrievers() -> None:
    """(a) PostgreSQL retriever against SQLitePageRetriever: PLACEHOLDER until the PostgreSQL retriever
    exists (it is the other half of the scale work)."""
    print("(a) PostgreSQL vs SQLite retriever: not yet measured")


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
        ray.init(num_cpus=os.cpu_count(), include_dashboard=False, log_to_driver=False)
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

        from extract_thinker_pageindex.ray_engine import NAMESPACE, limiter_name

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
            ray.init(num_cpus=in_flight, include_dashboard=False, log_to_driver=False)
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
    parser.add_argument("--pdfs", type=Path, default=PDFS, help="folder of PDFs for (b)")
    parser.add_argument("--limit-files", type=int, default=None, help="(b): only the first N PDFs")
    parser.add_argument("--scans", type=int, default=1000, help="(c): one-page scans to index")
    parser.add_argument("--delay", type=float, default=0.3, help="(c): seconds the model takes per call")
    parser.add_argument("--model-rate", type=int, default=4, help="(c): the limit on concurrent calls")
    parser.add_argument("--in-flight", type=int, default=8, help="(c): documents in flight at once")
    parser.add_argument("--parts", nargs="+", choices=("a", "b", "c"), default=["a", "b", "c"])
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="scale-bench-"))
    try:
        if "a" in args.parts:
            part_a_retrievers()
        if "b" in args.parts:
            part_b_batch(args.pdfs, args.limit_files, folder)
        if "c" in args.parts and len(args.parts) > 1:
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
