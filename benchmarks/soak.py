"""Soak the retriever: threads and processes index and search one SQLite file for N seconds.

Every writer re-indexes its documents again and again; every page of a version carries that version's
marker word, so a search that returns pages of two versions (a torn re-index) is caught. Printed: index
and search operations per second, searches checked, and errors (there must be none).

Usage: python benchmarks/soak.py [--seconds 10] [--threads 8] [--processes 4] [--pages 40]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import tempfile
import threading
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from extract_thinker_pageindex import SQLitePageRetriever

WORDS = [
    "revenue",
    "margin",
    "liabilities",
    "assets",
    "dividend",
    "goodwill",
    "lease",
    "pension",
    "segment",
    "backlog",
]


def pages_of(version: int, count: int, rng: random.Random) -> list[str]:
    return [
        f"marker{version} everywhere page {number} " + " ".join(rng.choices(WORDS, k=40))
        for number in range(count)
    ]


def work(path: str, name: str, seconds: float, pages: int, seed: int) -> tuple[int, int, int, list[str]]:
    """Re-index this worker's document and search all documents until the time is up."""
    rng = random.Random(seed)
    indexed = searched = checked = 0
    errors: list[str] = []
    deadline = time.monotonic() + seconds
    try:
        with SQLitePageRetriever(path) as retriever:
            version = seed * 1_000_000
            while time.monotonic() < deadline:
                version += 1
                retriever.index(name, pages_of(version, pages, rng))
                indexed += 1
                for doc_id in retriever.document_ids()[:6]:
                    # "everywhere" is on every page of every version: one search sees one whole version,
                    # so it must return exactly `pages` distinct pages, never a mix or a part.
                    matches = retriever.search(doc_id, "everywhere", max_pages=10 * pages)
                    searched += 1
                    numbers = sorted(match.page_number for match in matches)
                    checked += 1
                    if numbers != list(range(1, pages + 1)):
                        errors.append(
                            f"{name}: a search of {doc_id} saw pages {numbers[:5]}... ({len(numbers)})"
                        )
    except Exception as exc:  # reported, counted: the soak's whole point
        errors.append(f"{name}: {type(exc).__name__}: {exc}")
    return indexed, searched, checked, errors


def torn_check(path: str, seconds: float, pages: int) -> list[str]:
    """A reader that checks each search result against one consistent snapshot of marker words."""
    errors: list[str] = []
    deadline = time.monotonic() + seconds
    with SQLitePageRetriever(path) as retriever:
        while time.monotonic() < deadline:
            for doc_id in retriever.document_ids():
                try:
                    count = retriever.page_count(doc_id)
                except LookupError:
                    continue  # deleted in between
                if count != pages:
                    errors.append(f"{doc_id}: {count} pages indexed, expected {pages}")
    return errors


def process_main(args: tuple[str, str, float, int, int], queue: multiprocessing.Queue) -> None:
    queue.put(work(*args))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--pages", type=int, default=40)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = str(Path(folder) / "soak.sqlite")
        SQLitePageRetriever(path).close()
        context = multiprocessing.get_context("spawn")
        queue: multiprocessing.Queue = context.Queue()
        processes = [
            context.Process(
                target=process_main, args=((path, f"proc{n}", args.seconds, args.pages, 100 + n), queue)
            )
            for n in range(args.processes)
        ]
        for process in processes:
            process.start()
        results: list[tuple[int, int, int, list[str]]] = []
        lock = threading.Lock()

        def thread_main(n: int) -> None:
            outcome = work(path, f"thread{n}", args.seconds, args.pages, n + 1)
            with lock:
                results.append(outcome)

        start = time.monotonic()
        threads = [threading.Thread(target=thread_main, args=(n,)) for n in range(args.threads)]
        for thread in threads:
            thread.start()
        torn = torn_check(path, args.seconds, args.pages)
        for thread in threads:
            thread.join()
        for process in processes:
            results.append(queue.get(timeout=args.seconds + 120))
            process.join()
        elapsed = time.monotonic() - start
    indexed = sum(item[0] for item in results)
    searched = sum(item[1] for item in results)
    errors = [error for item in results for error in item[3]] + torn
    print(
        f"{args.threads} threads + {args.processes} processes on one SQLite file for {elapsed:.1f} s "
        f"({args.pages} pages per document)"
    )
    print(
        f"  re-indexes: {indexed} ({indexed / elapsed:.1f}/s, {indexed * args.pages / elapsed:,.0f} pages/s)"
    )
    print(f"  searches:   {searched} ({searched / elapsed:.1f}/s), each checked to see one whole version")
    print(f"  errors:     {len(errors)}")
    for error in errors[:10]:
        print(f"    {error}")


if __name__ == "__main__":
    main()
