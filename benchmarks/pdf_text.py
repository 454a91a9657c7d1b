"""The PDF text strategy next to pymupdf4llm: headings and TOC against PDF outlines, speed, peak memory.

Structure: every PDF with an outline is parsed three ways, with the outline hidden from ours
(``build_index(..., use_outline=False, strategy="text")``): ours, pymupdf4llm with its layout engine, and
pymupdf4llm's legacy rules (markdown ``#`` lines as headings; no TOC; legacy makes a heading only of
text larger than the body, so bold body-size headings of filings are missed). Each is scored by
``benchmarks/structure_eval.py`` against the outline entries of level 1-2 printed on their target page:
strict recovery (a heading on that page with the same title, fuzzy >= 85), numbering-tolerant recovery
(leading "1.2", "Item 7.", "PART II" ignored), headings per outline entry (over-segmentation) and level order
(a level-1 entry's heading shallower than its level-2 children's). Our TOC is scored for precision (entries
matching an outline entry), right page and right nesting. Peers run in a fresh interpreter per mode and
document (layout activation is global); their headings and timings (of to_markdown alone) are cached.

Speed: pages/s of raw ``page.get_text()`` and of ours over every page of every PDF, as a multiple of raw's
time: the text layer alone (OCR off; tables off, then on; these and raw timed in turn, best of
``--repeat`` runs each), with images too, the defaults (OCR on pages without a text layer), and with
images; ours, ours without tables and both pymupdf4llm modes on the first pages of the first PDF.

Memory: peak RSS of a fresh process indexing the largest PDF.

Usage: python benchmarks/pdf_text.py [DATA_DIR ...] [--no-peers] [--sample-pages 40] [--repeat 3]
       [--cache /tmp/pdf_text_bench_cache] [-v]
(each DATA_DIR holds pdfs/; default ../shared/eval/structure and ../shared/eval/financebench)
"""

from __future__ import annotations

import argparse
import functools
import json
import logging
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import pymupdf
from structure_eval import Parsed, Score, TocItem, evaluate, reference

from extract_thinker_pageindex import HeadingNode, build_index

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DIRS = [
    REPO_ROOT.parent / "shared" / "eval" / "structure",
    REPO_ROOT.parent / "shared" / "eval" / "financebench",
]
PEERS = ["layout", "legacy"]  # pymupdf4llm with use_layout(True) and use_layout(False)
PARSERS = ["ours", *PEERS]
MARKDOWN_HEADING = re.compile(r"^(#{1,6})\s+(.*)$")

# Runs pymupdf4llm in one mode on one document (optionally its first N pages) and writes the markdown of
# each page with the seconds to_markdown took as JSON: {"seconds": s, "pages": [[page_index, text], ...]}.
PEER_CODE = """
import json, os, sys, time
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
import pymupdf4llm
mode, path, out, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
pymupdf4llm.use_layout(mode == "layout")
pages = list(range(count)) if count else None
start = time.perf_counter()
chunks = pymupdf4llm.to_markdown(path, page_chunks=True, show_progress=False, pages=pages)
seconds = time.perf_counter() - start
texts = []
for position, chunk in enumerate(chunks):
    metadata = chunk.get("metadata", {})
    number = metadata.get("page_number", metadata.get("page"))
    texts.append([number - 1 if number else position, chunk["text"]])
with open(out, "w") as file:
    json.dump({"seconds": seconds, "pages": texts}, file)
"""


@dataclass
class Run:
    parsed: Parsed
    seconds: float


def page_count(path: Path) -> int:
    with pymupdf.open(path) as document:
        return document.page_count


def run_ours(path: Path) -> Run:
    start = time.perf_counter()
    document = build_index(path, use_outline=False, images=False, strategy="text")
    seconds = time.perf_counter() - start
    headings: dict[int, list[tuple[int, str]]] = {}
    for page, node in document.iter_nodes():
        if isinstance(node, HeadingNode):
            headings.setdefault(page.index, []).append((int(node.level[1:]), node.content))
    positions = {entry.id: position for position, entry in enumerate(document.toc)}
    toc = [TocItem(entry.title, entry.target_page, positions.get(entry.parent_id)) for entry in document.toc]
    return Run(Parsed(headings, toc), seconds)


def markdown_headings(text: str) -> list[tuple[int, str]]:
    """Markdown heading lines as (level, text), without emphasis markers."""
    headings = []
    for line in text.splitlines():
        match = MARKDOWN_HEADING.match(line.strip())
        if match:
            title = re.sub(r"[*_]+", "", match.group(2)).strip()
            if title:
                headings.append((len(match.group(1)), title))
    return headings


def run_peer_process(mode: str, path: Path, count: int = 0) -> tuple[float, list[tuple[int, str]]]:
    """pymupdf4llm in a fresh interpreter: seconds of to_markdown and (page index, markdown) per page."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "peer.json"
        command = [sys.executable, "-c", PEER_CODE, mode, str(path), str(out), str(count)]
        subprocess.run(command, check=True, capture_output=True, text=True)
        result = json.loads(out.read_text())
    return result["seconds"], [(index, text) for index, text in result["pages"]]


def run_peer(mode: str, path: Path, cache: Path) -> Run:
    """A peer's headings on every page, from the cache when this file in this version was parsed before."""
    stat = path.stat()
    cached = cache / f"{path.name}.{stat.st_size}.{stat.st_mtime_ns}.{mode}.json"
    if cached.exists():
        result = json.loads(cached.read_text())
    else:
        seconds, pages = run_peer_process(mode, path)
        headings = {index: markdown_headings(text) for index, text in pages}
        found_headings = {index: found for index, found in headings.items() if found}
        result = {"seconds": seconds, "headings": found_headings}
        cache.mkdir(parents=True, exist_ok=True)
        cached.write_text(json.dumps(result))
    headings = {
        int(index): [(level, text) for level, text in found] for index, found in result["headings"].items()
    }
    return Run(Parsed(headings), result["seconds"])


def show(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def median(values: list[float | None]) -> float | None:
    present = [value for value in values if value is not None]
    return statistics.median(present) if present else None


def lowest(values: list[float | None]) -> float | None:
    present = [value for value in values if value is not None]
    return min(present) if present else None


def print_summary(label: str, scores: dict[str, list[Score]]) -> None:
    for parser, items in scores.items():
        if not items:
            continue
        print(
            f"  {label:30}{parser:8}"
            f"{show(median([score.strict_recall for score in items])):>9}"
            f"{show(median([score.tolerant_recall for score in items])):>10}"
            f"{show(lowest([score.tolerant_recall for score in items])):>9}"
            f"{show(median([score.per_entry for score in items])):>11}"
            f"{show(median([score.toc_precision for score in items]) if parser == 'ours' else None):>15}"
        )


def structure(data_dirs: list[Path], peers: bool, cache: Path, verbose: bool) -> None:
    parsers = PARSERS if peers else ["ours"]
    every: dict[str, list[Score]] = {parser: [] for parser in parsers}
    per_dir: dict[str, dict[str, list[Score]]] = {}
    for data_dir in data_dirs:
        print(f"Headings and TOC against the outlines of {data_dir / 'pdfs'} (outline hidden)")
        print(
            f"{'document':34}{'pages':>6}{'entries':>8}  {'parser':8}{'strict':>7}{'tolerant':>9}"
            f"{'per entry':>10}{'order':>7}{'pages/s':>9}{'toc':>6}{'precision':>10}{'page':>6}{'nesting':>8}"
        )
        scores: dict[str, list[Score]] = {parser: [] for parser in parsers}
        for path in sorted((data_dir / "pdfs").glob("*.pdf")):
            if not reference(path)[1]:
                continue
            pages = page_count(path)
            runs: dict[str, Run] = {"ours": run_ours(path)}
            for mode in PEERS if peers else []:
                runs[mode] = run_peer(mode, path, cache)
            for row, (parser, run) in enumerate(runs.items()):
                score = evaluate(parser, path, run.parsed)
                scores[parser].append(score)
                every[parser].append(score)
                lead = f"{path.stem[:33]:34}{pages:6}{score.entries:8}" if row == 0 else " " * 48
                toc = ""
                if run.parsed.toc is not None:
                    toc = (
                        f"{score.toc_entries:6}{show(score.toc_precision):>10}"
                        f"{show(score.toc_page):>6}{show(score.toc_nesting):>8}"
                    )
                print(
                    f"{lead}  {parser:8}{show(score.strict_recall):>7}{show(score.tolerant_recall):>9}"
                    f"{show(score.per_entry):>10}{show(score.level_order):>7}"
                    f"{pages / run.seconds:9.1f}{toc}"
                )
            if verbose:
                for page_index, title in scores["ours"][-1].misses:
                    print(f"{'':50}ours misses p.{page_index + 1}: {title[:100]}")
        per_dir[data_dir.name] = scores
        print()
    print(
        f"  {'medians':30}{'parser':8}{'strict':>9}{'tolerant':>10}{'min tol.':>9}{'per entry':>11}"
        f"{'toc precision':>15}"
    )
    for name, scores in per_dir.items():
        print_summary(f"{name} ({len(scores['ours'])} PDFs)", scores)
    print_summary(f"all ({len(every['ours'])} PDFs)", every)
    print()


def timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def speed(pdfs: list[Path], sample_pages: int, peers: bool, repeat: int = 3) -> None:
    total = sum(page_count(path) for path in pdfs)

    def raw_text(path: Path) -> None:
        with pymupdf.open(path) as document:
            for page in document:
                page.get_text()

    # Raw text and the text layer (OCR off: raw get_text reads nothing on a scanned page) without tables,
    # with tables, and with tables and pictures, are timed document by document in turn, ``repeat`` times,
    # each at its best run (the machine's other work only ever slows a run).
    passes: dict[str, Callable[[Path], object]] = {
        "raw": raw_text,
        "plain": lambda path: build_index(path, strategy="text", images=False, tables=False, ocr="never"),
        "layer": lambda path: build_index(path, strategy="text", images=False, ocr="never"),
        "pictures": lambda path: build_index(path, strategy="text", ocr="never"),
    }
    best = {key: dict.fromkeys(pdfs, float("inf")) for key in passes}
    for _ in range(repeat):
        for key, action in passes.items():
            for path in pdfs:
                best[key][path] = min(best[key][path], timed(functools.partial(action, path)))
    raw, plain, layer, pictures = (total / sum(best[key].values()) for key in passes)
    # A document's ratio to raw text: the median over documents, as a user indexing one file meets it.
    ratios = {
        key: sorted(best[key][path] / best["raw"][path] for path in pdfs) for key in ("layer", "pictures")
    }
    ours = total / timed(lambda: [build_index(path, strategy="text", images=False) for path in pdfs])
    ours_images = total / timed(lambda: [build_index(path, strategy="text") for path in pdfs])

    sample = pdfs[0]
    count = min(sample_pages, page_count(sample))
    pages = f"1-{count}"
    ours_sample = count / timed(lambda: build_index(sample, strategy="text", images=False, pages=pages))
    no_tables = count / timed(
        lambda: build_index(sample, strategy="text", images=False, tables=False, pages=pages)
    )

    print(f"Speed over {total} pages of {len(pdfs)} PDFs (pages/s; raw and text layer: best of {repeat})")
    print(f"  raw page.get_text()                         {raw:9.1f}")
    for label, rate in (
        ("text layer (OCR off), no images/tables", plain),
        ("text layer (OCR off), tables, no images", layer),
        ("text layer (OCR off), tables and images", pictures),
        ("defaults (OCR where needed), no images", ours),
        ("defaults, with images", ours_images),
    ):
        print(f"  {label:43s} {rate:9.1f}   {raw / rate:.2f}x raw time")
    for key, label in (("layer", "tables, no images"), ("pictures", "tables and images")):
        values = ratios[key]
        print(
            f"  per document, text layer with {label:18s} median {statistics.median(values):.2f}x raw time, "
            f"worst {values[-1]:.2f}x, over 3x: {sum(value > 3 for value in values)} of {len(values)}"
        )
    print(f"  on {count} pages of {sample.stem}:")
    print(f"    build_index text strategy                 {ours_sample:9.1f}")
    share = no_tables / ours_sample
    print(f"    build_index text strategy, no tables      {no_tables:9.1f}   {share:.3f}x ours")
    for mode in PEERS if peers else []:
        seconds, _pages = run_peer_process(mode, sample, count)
        peer = count / seconds
        print(f"    pymupdf4llm.to_markdown, {mode:8}         {peer:9.1f}   ours {ours_sample / peer:.1f}x")
    print()


def memory(pdfs: list[Path]) -> None:
    largest = max(pdfs, key=lambda path: pymupdf.open(path).page_count)
    # VmHWM (the kernel's high-water mark of resident memory) starts afresh at exec, unlike ru_maxrss,
    # which a child inherits from the benchmark's own large process.
    code = (
        "import os, sys\n"
        "os.environ.setdefault('LITELLM_LOCAL_MODEL_COST_MAP', 'True')\n"
        "def hwm():\n"
        "    for line in open('/proc/self/status'):\n"
        "        if line.startswith('VmHWM:'):\n"
        "            return int(line.split()[1]) // 1024\n"
        "import pymupdf\n"
        "from extract_thinker_pageindex import build_index, Document\n"
        "base = hwm()\n"
        "document = build_index(sys.argv[1], strategy='text')\n"
        "print(len(document.pages), base, hwm())\n"
    )
    output = subprocess.run(
        [sys.executable, "-c", code, str(largest)], capture_output=True, text=True, check=True
    )
    pages, base, peak = output.stdout.split()
    print(
        f"Peak RSS indexing {largest.stem} ({pages} pages, with images): {peak} MB "
        f"(after imports of PyMuPDF and ExtractThinker: {base} MB)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_dirs", type=Path, nargs="*", default=DEFAULT_DIRS, metavar="DATA_DIR")
    parser.add_argument("--peers", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--sample-pages", type=int, default=40)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/pdf_text_bench_cache"))
    parser.add_argument("-v", "--verbose", action="store_true", help="list each of our misses")
    parser.add_argument("--repeat", type=int, default=3, help="runs of raw text and the text layer (best)")
    args = parser.parse_args()
    # The speed runs use outlines where valid; the "outline ignored" notes would interleave with the tables.
    logging.getLogger("extract_thinker_pageindex").setLevel(logging.ERROR)
    structure(args.data_dirs, args.peers, args.cache, args.verbose)
    pdfs = [path for data_dir in args.data_dirs for path in sorted((data_dir / "pdfs").glob("*.pdf"))]
    speed(pdfs, args.sample_pages, args.peers, args.repeat)
    memory(pdfs)


if __name__ == "__main__":
    main()
