"""Where the text strategy's time goes with pictures, document by document, as multiples of raw
``page.get_text()`` time.

For each PDF (each run best of ``--repeat``): raw ``get_text()`` over every page; the text layer with
tables and no pictures; the same with pictures; and, inside the run with pictures, the time spent placing
pictures (``_page_images``: where each page draws its pictures) and making their bytes (``picture_bytes``:
a JPEG's own bytes, or decoding, scaling and PNG encoding). The medians at the foot say what the per-document
median with pictures would be if placing them, or making their bytes, or both, cost nothing: the text layer
alone is the floor any work on pictures can reach.

Usage: python benchmarks/picture_cost.py DIR [DIR ...] [--repeat 3]
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def _timed(module: Any, name: str, spent: dict[str, float], key: str) -> None:
    """Wrap ``module.name`` so that the time spent in it is added to ``spent[key]``."""
    function: Callable[..., Any] = getattr(module, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            spent[key] += time.perf_counter() - start

    setattr(module, name, wrapper)


def measure(path: Path, repeat: int, spent: dict[str, float]) -> dict[str, float]:
    """Seconds of each stage for one PDF, each the best of ``repeat`` runs."""
    import pymupdf

    from extract_thinker_pageindex.strategies.pdf_text import parse_pdf_text

    data = path.read_bytes()
    best: dict[str, float] = {}

    def keep(key: str, seconds: float) -> None:
        best[key] = min(best.get(key, float("inf")), seconds)

    for _ in range(repeat):
        start = time.perf_counter()
        with pymupdf.open(stream=data) as document:
            for page in document:
                page.get_text()
        keep("raw", time.perf_counter() - start)
        start = time.perf_counter()
        parse_pdf_text(data, name=path.name, images=False)
        keep("text", time.perf_counter() - start)
        spent.update(place=0.0, bytes=0.0)
        start = time.perf_counter()
        parse_pdf_text(data, name=path.name, images=True)
        keep("pictures", time.perf_counter() - start)
        keep("place", spent["place"])
        keep("bytes", spent["bytes"])
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="+", type=Path, metavar="DIR")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each document (the best is kept)")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    logging.disable(logging.WARNING)

    import extract_thinker_pageindex.pdf.images as images
    import extract_thinker_pageindex.strategies.pdf_text as pdf_text

    spent = {"place": 0.0, "bytes": 0.0}
    _timed(pdf_text, "_page_images", spent, "place")
    _timed(images, "picture_bytes", spent, "bytes")  # imported by the strategy at each call

    for folder in args.dirs:
        pdfs = sorted(folder.rglob("*.pdf"))
        if not pdfs:
            print(f"{folder}: no PDF")
            continue
        rows = []
        for path in pdfs:
            stages = measure(path, args.repeat, spent)
            raw = max(stages["raw"], 1e-9)
            rows.append(
                {key: value / raw for key, value in stages.items() if key != "raw"} | {"name": path.stem}
            )
        report(folder, rows, args.repeat)


def report(folder: Path, rows: list[dict[str, Any]], repeat: int) -> None:
    """Print one set's documents (sorted by their time with pictures) and its medians."""
    print(f"\n{folder} ({len(rows)} PDFs; multiples of raw get_text() time, best of {repeat})")
    print(f"  {'document':40} {'text':>6} {'+pict.':>7} {'place':>6} {'bytes':>6}")
    for row in sorted(rows, key=lambda row: row["pictures"]):
        print(
            f"  {row['name'][:40]:40} {row['text']:6.2f} {row['pictures']:7.2f} "
            f"{row['place']:6.2f} {row['bytes']:6.2f}"
        )

    def median(value: Callable[[dict[str, Any]], float]) -> float:
        return statistics.median(value(row) for row in rows)

    over = sum(row["pictures"] > 3 for row in rows)
    print(
        f"  median: text layer {median(lambda row: row['text']):.2f}, with pictures "
        f"{median(lambda row: row['pictures']):.2f} ({over} of {len(rows)} over 3x)"
    )
    print(
        "  median with pictures if placing cost nothing "
        f"{median(lambda row: row['pictures'] - row['place']):.2f}, if their bytes cost nothing "
        f"{median(lambda row: row['pictures'] - row['bytes']):.2f}, if both "
        f"{median(lambda row: row['pictures'] - row['place'] - row['bytes']):.2f}"
    )


if __name__ == "__main__":
    main()
