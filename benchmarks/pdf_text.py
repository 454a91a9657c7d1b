"""The PDF text strategy: heading recovery against PDF outlines, speed next to raw PyMuPDF and pymupdf4llm,
and peak memory, in one run.

Structure: for every PDF in DATA_DIR/pdfs that has an outline, the page index is built with
``use_outline=False`` and each outline entry counts as recovered when a detected heading on the same page
matches its title (rapidfuzz ratio >= 85 on normalised text). Printed per document, with how many headings
were detected per outline entry, and the median.

Speed: pages/s of ``strategy="text"`` (no tables) over every page, next to raw ``page.get_text()`` over the
same pages; pymupdf4llm's ``to_markdown`` and the table-finder variant on a sample of pages (both are slow).

Memory: peak RSS of a fresh process indexing the largest PDF.

Usage: python benchmarks/pdf_text.py ../shared/eval/financebench [--sample-pages 40]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import pymupdf
from rapidfuzz import fuzz

from extract_thinker_pageindex import HeadingNode, build_index
from extract_thinker_pageindex.strategies.pdf_text import normalise_title, parse_pdf_text


def structure(pdfs: list[Path]) -> None:
    print("Heading recovery with use_outline=False (outline entries found as headings on the same page)")
    print(f"{'document':42}{'entries':>8}{'found':>7}{'recall':>8}{'headings':>10}{'per entry':>10}  outline")
    recalls, valid_recalls = [], []
    for path in pdfs:
        with pymupdf.open(path) as document:
            outline = document.get_toc(simple=True)
        if not outline:
            continue
        # The same validation build_index applies when use_outline=True.
        note = parse_pdf_text(path.read_bytes(), name=path.stem, images=False).outline_note
        built = build_index(path, use_outline=False, images=False)
        detected: dict[int, list[str]] = {}
        for page, node in built.iter_nodes():
            if isinstance(node, HeadingNode):
                detected.setdefault(page.index, []).append(normalise_title(node.content))
        found = 0
        for _level, title, page_number in outline:
            wanted = normalise_title(title)
            if any(fuzz.ratio(wanted, heading) >= 85 for heading in detected.get(page_number - 1, [])):
                found += 1
        headings = sum(len(items) for items in detected.values())
        recall = found / len(outline)
        recalls.append(recall)
        if note is None:
            valid_recalls.append(recall)
        print(
            f"{path.stem:42}{len(outline):8}{found:7}{recall:8.2f}{headings:10}"
            f"{headings / len(outline):10.2f}"
            f"  {'valid' if note is None else 'ignored: ' + note}"
        )
    if recalls:
        print(f"{'median, every outline':42}{'':15}{statistics.median(recalls):8.2f}")
    if valid_recalls:
        print(f"{'median, outlines build_index accepts':42}{'':15}{statistics.median(valid_recalls):8.2f}")
    print()


def speed(pdfs: list[Path], sample_pages: int) -> None:
    total = sum(pymupdf.open(path).page_count for path in pdfs)
    start = time.perf_counter()
    for path in pdfs:
        with pymupdf.open(path) as document:
            for page in document:
                page.get_text()
    raw = total / (time.perf_counter() - start)

    start = time.perf_counter()
    for path in pdfs:
        build_index(path, strategy="text", images=False)
    ours = total / (time.perf_counter() - start)
    start = time.perf_counter()
    for path in pdfs:
        build_index(path, strategy="text")
    ours_images = total / (time.perf_counter() - start)

    sample = pdfs[0]
    pages = f"1-{min(sample_pages, pymupdf.open(sample).page_count)}"
    count = min(sample_pages, pymupdf.open(sample).page_count)
    start = time.perf_counter()
    build_index(sample, strategy="text", images=False, tables=True, pages=pages)
    tables = count / (time.perf_counter() - start)
    start = time.perf_counter()
    build_index(sample, strategy="text", images=False, pages=pages)
    ours_sample = count / (time.perf_counter() - start)

    print(f"Speed over {total} pages of {len(pdfs)} PDFs (pages/s)")
    print(f"  raw page.get_text()                         {raw:9.1f}")
    print(f"  build_index text strategy, no images        {ours:9.1f}   {ours / raw:.2f}x raw")
    print(f"  build_index text strategy, with images      {ours_images:9.1f}   {ours_images / raw:.2f}x raw")
    print(f"  on {count} pages of {sample.stem}:")
    print(f"    build_index text strategy                 {ours_sample:9.1f}")
    print(f"    build_index text strategy + tables        {tables:9.1f}   {tables / ours_sample:.3f}x")
    try:
        import pymupdf4llm
    except ImportError:
        print("    pymupdf4llm                               (not importable; pip install pymupdf4llm)")
    else:
        start = time.perf_counter()
        pymupdf4llm.to_markdown(str(sample), pages=list(range(count)), show_progress=False)
        llm = count / (time.perf_counter() - start)
        print(f"    pymupdf4llm.to_markdown                   {llm:9.1f}   ours {ours_sample / llm:.1f}x")
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
    parser.add_argument("data_dir", type=Path)
    parser.add_argument("--sample-pages", type=int, default=40)
    args = parser.parse_args()
    pdfs = sorted((args.data_dir / "pdfs").glob("*.pdf"))
    structure(pdfs)
    speed(pdfs, args.sample_pages)
    memory(pdfs)


if __name__ == "__main__":
    main()
