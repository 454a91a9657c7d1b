"""Vision mode behind retrieval: DocumentLoaderRAG drawing only the pages it keeps, or every page.

For each question of a FinanceBench-style folder (``questions.jsonl`` + ``pdfs/``), up to ``--questions``,
``DocumentLoaderRAG(inner, query=question, max_pages=3)`` loads the question's filing in vision mode three
ways, in the same run:

- **two-step** (today): the inner loader's text first (``load_text``), then PNGs of the kept pages only
  (``page_images``);
- **whole** (before): the inner loader's ``load`` in vision mode, every page drawn, then 3 kept (an inner
  loader seen only through ``load``, as any third-party loader is);
- the wrapped loader's own text load, with no image at all, as the floor.

Printed per inner loader (``DocumentLoaderPyMuPDF``; ``DocumentLoaderPageIndex`` with a warm cache): median
seconds per load, PNG megabytes made per load, pages drawn, and the ratio whole / two-step.

Usage: python benchmarks/rag_vision.py ../shared/eval/financebench [--questions 6]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from extract_thinker.document_loader.document_loader import DocumentLoader

from extract_thinker_pageindex import DocumentLoaderPageIndex, DocumentLoaderPyMuPDF, DocumentLoaderRAG


class LoadOnly(DocumentLoader):
    """The inner loader seen only through ``load``: how DocumentLoaderRAG used every loader before."""

    def __init__(self, inner: Any) -> None:
        super().__init__()
        self.inner = inner

    def set_vision_mode(self, enabled: bool = True) -> None:
        super().set_vision_mode(enabled)
        self.inner.set_vision_mode(enabled)

    def load(self, source: Any) -> list[dict[str, Any]]:
        return self.inner.load(source)


def _measure(make_rag: Any, jobs: list[tuple[str, str]], vision: bool) -> dict[str, float]:
    seconds, megabytes, drawn = [], [], []
    for path, question in jobs:
        with make_rag(question) as rag:
            rag.set_vision_mode(vision)
            start = time.perf_counter()
            pages = rag.load(path)
            seconds.append(time.perf_counter() - start)
        images = [page["image"] for page in pages if "image" in page]
        megabytes.append(sum(len(image) for image in images) / 1e6)
        drawn.append(len(images))
    return {
        "seconds": statistics.median(seconds),
        "kept_png_mb": statistics.median(megabytes),
        "kept_images": statistics.median(drawn),
    }


def _whole_png_mb(loader: Any, jobs: list[tuple[str, str]]) -> float:
    """PNG megabytes the whole path makes per load (every page drawn, most thrown away)."""
    loader.set_vision_mode(True)
    sizes = []
    for path in dict.fromkeys(path for path, _ in jobs):
        sizes.append(sum(len(page.get("image", b"")) for page in loader.load(path)) / 1e6)
    loader.set_vision_mode(False)
    return statistics.median(sizes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_dir", type=Path)
    parser.add_argument("--questions", type=int, default=6)
    args = parser.parse_args()
    questions = [json.loads(line) for line in (args.data_dir / "questions.jsonl").read_text().splitlines()]
    jobs = [
        (str(args.data_dir / "pdfs" / f"{question['doc_name']}.pdf"), question["question"])
        for question in questions[: args.questions]
    ]
    import pymupdf

    pages = [pymupdf.open(path).page_count for path, _ in jobs]
    print(
        f"{len(jobs)} questions, filings of {min(pages)}-{max(pages)} pages "
        f"(median {statistics.median(pages)})"
    )
    print(
        f"{'inner loader':26}{'way':12}{'s / load':>10}{'PNG MB made':>13}{'pages drawn':>13}"
        f"{'whole/2-step':>14}"
    )
    with tempfile.TemporaryDirectory() as cache:
        inners = {
            "DocumentLoaderPyMuPDF": DocumentLoaderPyMuPDF,
            "DocumentLoaderPageIndex": lambda: DocumentLoaderPageIndex(cache_dir=cache, strategy="text"),
        }
        for name, make in inners.items():
            for path, _ in jobs:
                make().load(path)  # a warm page-index cache, imports out of the way
            floor = _measure(lambda question, make=make: DocumentLoaderRAG(make(), question), jobs, False)
            two = _measure(lambda question, make=make: DocumentLoaderRAG(make(), question), jobs, True)
            whole = _measure(
                lambda question, make=make: DocumentLoaderRAG(LoadOnly(make()), question), jobs, True
            )
            whole_mb = _whole_png_mb(make(), jobs)
            ratio = whole["seconds"] / two["seconds"]
            median_pages = statistics.median(pages)
            print(f"{name:26}{'text only':12}{floor['seconds']:>10.2f}{0:>13.1f}{0:>13}{'':>14}")
            print(
                f"{'':26}{'two-step':12}{two['seconds']:>10.2f}{two['kept_png_mb']:>13.1f}{two['kept_images']:>13.0f}{ratio:>13.1f}x"
            )
            print(
                f"{'':26}{'whole':12}{whole['seconds']:>10.2f}{whole_mb:>13.1f}{median_pages:>13.0f}{'':>14}"
            )


if __name__ == "__main__":
    main()
