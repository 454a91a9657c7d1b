"""Index every PDF under some folders with the text strategy and count how each one ends.

Each file is indexed in a worker process (two by default) with ``build_index(path, strategy="text",
ocr="never")`` under an alarm of ``--timeout`` seconds. An outcome is ``ok`` (pages indexed), one of the
project's errors (``PageIndexError``: an encrypted file, one without pages, one MuPDF cannot read), a
timeout, or any other exception — a bug: it is printed with its traceback. The slowest files are listed
with raw ``page.get_text()`` time for comparison, so that a page that takes seconds stands out.

Usage: python benchmarks/robustness.py DIR [DIR ...] [--workers 2] [--timeout 120] [--slowest 10]
       [--output results.jsonl]
"""

from __future__ import annotations

import argparse
import collections
import json
import multiprocessing
import os
import signal
import sys
import time
import traceback
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


class _Timeout(Exception):
    pass


def _index(task: tuple[str, int]) -> tuple[str, str, str, float, float | None]:
    """(path, outcome, detail, seconds, raw get_text seconds) of indexing one file."""
    import logging
    import warnings

    path, timeout = task
    warnings.simplefilter("ignore")
    logging.disable(logging.WARNING)
    from extract_thinker_pageindex import build_index
    from extract_thinker_pageindex.errors import PageIndexError

    def alarm(*_args: object) -> None:
        raise _Timeout

    signal.signal(signal.SIGALRM, alarm)
    signal.alarm(timeout)
    start = time.perf_counter()
    try:
        document = build_index(Path(path), strategy="text", ocr="never")
        outcome, detail = "ok", f"{len(document.pages)} pages"
    except PageIndexError as exc:
        outcome, detail = type(exc).__name__, str(exc)[:200]
    except _Timeout:
        outcome, detail = "timeout", f"over {timeout} s"
    except Exception:  # the bugs this looks for
        outcome, detail = "UNEXPECTED", traceback.format_exc()[-2000:]
    finally:
        signal.alarm(0)
    seconds = time.perf_counter() - start
    return path, outcome, detail, seconds, _raw_seconds(path) if outcome == "ok" else None


def _raw_seconds(path: str) -> float | None:
    import pymupdf

    try:
        with pymupdf.open(path) as document:
            start = time.perf_counter()
            for page in document:
                page.get_text()
            return time.perf_counter() - start
    except Exception:
        return None


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--timeout", type=int, default=120, help="seconds a file may take")
    parser.add_argument("--slowest", type=int, default=10, help="how many of the slowest files to list")
    parser.add_argument("--output", type=Path, help="write one JSON line per file here")
    args = parser.parse_args()
    files = sorted(
        {str(path) for folder in args.folders for path in folder.rglob("*") if path.suffix.lower() == ".pdf"}
    )
    if not files:
        print("no PDF files found", file=sys.stderr)
        return 2
    results = []
    started = time.perf_counter()
    output = args.output.open("w") if args.output else None
    with multiprocessing.Pool(args.workers, maxtasksperchild=200) as pool:
        for done, result in enumerate(
            pool.imap_unordered(_index, [(path, args.timeout) for path in files]), 1
        ):
            results.append(result)
            if output:
                output.write(json.dumps(result) + "\n")
            if done % 200 == 0:
                print(f"{done} / {len(files)}", file=sys.stderr)
    if output:
        output.close()
    wall = time.perf_counter() - started
    outcomes = collections.Counter(outcome for _path, outcome, *_ in results)
    pages = sum(int(detail.split()[0]) for _path, outcome, detail, *_ in results if outcome == "ok")
    work = sum(result[3] for result in results)
    print(f"{len(files)} files, {pages} pages indexed, {work:.0f} s of work, {wall:.0f} s wall")
    for outcome, count in outcomes.most_common():
        print(f"  {outcome:24s} {count}")
    for path, outcome, detail, *_ in results:
        if outcome in ("UNEXPECTED", "timeout"):
            print(f"\n{outcome}: {path}\n{detail}")
    print(f"\nslowest {args.slowest} (seconds; raw get_text seconds):")
    for path, outcome, _detail, seconds, raw in sorted(results, key=lambda r: -r[3])[: args.slowest]:
        raw_text = f"{raw:.3f}" if raw is not None else "-"
        print(f"  {seconds:7.2f}  {raw_text:>7}  {outcome:10s} {path}")
    return 1 if outcomes["UNEXPECTED"] or outcomes["timeout"] else 0


if __name__ == "__main__":
    sys.exit(main())
