"""Vision strategy throughput: pages read in parallel against a local model server with a fixed delay.

For each worker count, a PDF of N pages is indexed with ``strategy="vision"`` against the test suite's
OpenAI-compatible server on 127.0.0.1 (tests/llm_server.py), which answers every page after DELAY seconds.
Printed: wall time next to the ideal ``ceil(N / parallel) * DELAY``, model calls per page (must be 1), and the
peak resident memory of fresh processes indexing N/3 and N pages (it must not grow with the page count:
pages are rendered only when a worker takes them).

Usage: python benchmarks/vision_throughput.py [--pages 60] [--delay 0.2] [--parallel 3 8]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import pymupdf

from extract_thinker_pageindex import build_index

SERVER = Path(__file__).resolve().parents[1] / "tests" / "llm_server.py"
ANSWER = json.dumps(
    {
        "nodes": [
            {"type": "section", "id": "s", "description": "A page of the benchmark."},
            {"type": "heading", "id": "h", "parent_id": "s", "level": "h2", "content": "Page"},
            {"type": "paragraph", "id": "p", "parent_id": "s", "content": "Body text of the page."},
        ]
    }
)


def make_pdf(path: Path, pages: int) -> None:
    document = pymupdf.open()
    for number in range(pages):
        page = document.new_page()
        page.draw_rect(pymupdf.Rect(72, 72, 540, 300), color=(0.2, 0.2, 0.2), fill=(0.8, 0.8, 0.8))
        page.insert_text((72, 340), f"Scanned page {number + 1}" if number % 2 else " ", fontsize=1)
    document.set_metadata({"title": "Benchmark"})
    document.save(path)


def run(pages: int, delay: float, parallel: int, folder: Path) -> tuple[float, int]:
    """Index a ``pages``-page PDF against a model server in its own process (as a real one would be)."""
    path = folder / f"bench-{pages}.pdf"
    if not path.exists():
        make_pdf(path, pages)
    server = subprocess.Popen(
        [sys.executable, str(SERVER), "--answer", ANSWER, "--delay", str(delay)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        os.environ["OPENAI_API_BASE"] = server.stdout.readline().strip()
        os.environ["OPENAI_API_KEY"] = "sk-benchmark"
        start = time.perf_counter()
        document = build_index(
            path, strategy="vision", model="openai/bench", parallel=parallel, abstract=False
        )
        seconds = time.perf_counter() - start
    finally:
        server.communicate(timeout=30)  # closing its standard input stops it
    assert len(document.pages) == pages
    assert document.usage is not None
    return seconds, document.usage.calls


PEAK = """
import os, sys
sys.path.insert(0, sys.argv[4])
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
from pathlib import Path
import vision_throughput as bench
def hwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) // 1024
bench.run(int(sys.argv[1]), float(sys.argv[2]), 8, Path(sys.argv[3]))
print(hwm())
"""


def peak_memory(pages: int, delay: float, folder: Path) -> int:
    here = str(Path(__file__).resolve().parent)
    result = subprocess.run(
        [sys.executable, "-c", PEAK, str(pages), str(delay), str(folder), here],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(result.stdout.split()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=60)
    parser.add_argument("--delay", type=float, default=0.2)
    parser.add_argument("--parallel", type=int, nargs="+", default=[3, 8])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        run(4, 0.0, 2, folder)  # warm up imports and connections
        print(f"{args.pages} pages, model answers after {args.delay * 1000:.0f} ms")
        print(f"{'parallel':>8} {'seconds':>8} {'ideal':>7} {'ratio':>6} {'calls/page':>11}")
        for parallel in args.parallel:
            seconds, calls = run(args.pages, args.delay, parallel, folder)
            ideal = math.ceil(args.pages / parallel) * args.delay
            print(
                f"{parallel:8} {seconds:8.2f} {ideal:7.2f} {seconds / ideal:6.2f} {calls / args.pages:11.2f}"
            )
        small = max(1, args.pages // 3)
        low, high = (
            peak_memory(small, args.delay / 4, folder),
            peak_memory(args.pages, args.delay / 4, folder),
        )
        print(f"peak RSS: {low} MB for {small} pages, {high} MB for {args.pages} pages ({high - low:+d} MB)")


if __name__ == "__main__":
    main()
