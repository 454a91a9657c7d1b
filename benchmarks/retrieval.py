"""Page retrieval quality and speed: this project's retriever next to plain FTS5 bm25() and bm25s, one run.

For every question of a FinanceBench-style data folder (``questions.jsonl`` + ``pdfs/<doc_name>.pdf``), each
system ranks the pages of the question's document; recall@k is the share of questions with an evidence page
among the first k. All systems get the same page text (DocumentLoaderPyMuPDF's ``content``).

Also printed: median query latency per system, latency on a 300-page document, indexing throughput with
the text already extracted, and the loader's speed next to raw PyMuPDF ``page.get_text()``.

Usage: python benchmarks/retrieval.py ../shared/eval/financebench
Peers: pip install bm25s PyStemmer (bm25s is skipped, with a note, when it is not importable).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sqlite3
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from extract_thinker_pageindex import DocumentLoaderPyMuPDF, SQLitePageRetriever

KS = (1, 3, 5, 10)
Ranker = Callable[[str, str, int], list[int]]  # (doc_name, question, k) -> 1-based page numbers


def load_questions(data_dir: Path) -> list[dict]:
    with open(data_dir / "questions.jsonl", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def extract_pages(data_dir: Path, names: list[str]) -> tuple[dict[str, list[str]], float, float]:
    """Page texts per document, and pages/s of the loader and of raw get_text() over the same files."""
    import pymupdf

    loader = DocumentLoaderPyMuPDF()
    texts: dict[str, list[str]] = {}
    start = time.perf_counter()
    for name in names:
        texts[name] = [page["content"] for page in loader.load(str(data_dir / "pdfs" / f"{name}.pdf"))]
    loader_seconds = time.perf_counter() - start
    start = time.perf_counter()
    for name in names:
        with pymupdf.open(data_dir / "pdfs" / f"{name}.pdf") as document:
            for page in document:
                page.get_text()
    raw_seconds = time.perf_counter() - start
    total = sum(len(pages) for pages in texts.values())
    return texts, total / loader_seconds, total / raw_seconds


class OurRetriever:
    name = "extract-thinker-pageindex"

    def __init__(self, texts: dict[str, list[str]]) -> None:
        self.retriever = SQLitePageRetriever()
        start = time.perf_counter()
        for name, pages in texts.items():
            self.retriever.index(name, pages)
        self.index_pages_per_second = sum(map(len, texts.values())) / (time.perf_counter() - start)

    def rank(self, doc: str, question: str, k: int) -> list[int]:
        return [match.page_number for match in self.retriever.search(doc, question, max_pages=k)]


class PlainFTS5:
    """FTS5 with the porter tokenizer and its built-in bm25(); the query's words OR-ed together."""

    name = "FTS5 bm25() (porter)"

    def __init__(self, texts: dict[str, list[str]]) -> None:
        self.conn = sqlite3.connect(":memory:")
        self.conn.execute(
            "CREATE VIRTUAL TABLE pages USING fts5(doc UNINDEXED, page UNINDEXED, body, tokenize='porter')"
        )
        for name, pages in texts.items():
            self.conn.executemany(
                "INSERT INTO pages VALUES (?, ?, ?)",
                [(name, number, text) for number, text in enumerate(pages, 1)],
            )

    def rank(self, doc: str, question: str, k: int) -> list[int]:
        words = sorted(set(re.findall(r"[^\W_]+", question.lower())))
        expression = " OR ".join(f'"{word}"' for word in words)
        rows = self.conn.execute(
            "SELECT page FROM pages WHERE pages MATCH ? AND doc = ? ORDER BY bm25(pages) LIMIT ?",
            (expression, doc, k),
        ).fetchall()
        return [row[0] for row in rows]


class BM25S:
    """bm25s, Lucene variant, English stop words, Snowball stemming; one index per document."""

    name = "bm25s (lucene, stop words, stemming)"

    def __init__(self, texts: dict[str, list[str]]) -> None:
        import bm25s
        import Stemmer

        self.bm25s = bm25s
        self.stemmer = Stemmer.Stemmer("english")
        self.indexes = {}
        for name, pages in texts.items():
            tokens = bm25s.tokenize(pages, stopwords="en", stemmer=self.stemmer, show_progress=False)
            index = bm25s.BM25(method="lucene")
            index.index(tokens, show_progress=False)
            self.indexes[name] = (index, len(pages))

    def rank(self, doc: str, question: str, k: int) -> list[int]:
        index, count = self.indexes[doc]
        tokens = self.bm25s.tokenize([question], stopwords="en", stemmer=self.stemmer, show_progress=False)
        results, scores = index.retrieve(tokens, k=min(k, count), show_progress=False)
        return [int(page) + 1 for page, score in zip(results[0], scores[0], strict=True) if score > 0]


class PageIndexRetriever(OurRetriever):
    """The same retriever fed DocumentLoaderPageIndex pages (text strategy): Markdown content plus the
    heading paths and section descriptions as their own weighted fields."""

    name = "ours on DocumentLoaderPageIndex pages"

    def __init__(self, texts: dict[str, list[str]], data_dir: Path) -> None:
        import tempfile

        from extract_thinker_pageindex import DocumentLoaderPageIndex

        loader = DocumentLoaderPageIndex(
            cache_dir=tempfile.mkdtemp(), strategy="text", images=False, abstract=False
        )
        pages = {name: loader.load(str(data_dir / "pdfs" / f"{name}.pdf")) for name in texts}
        self.retriever = SQLitePageRetriever()
        start = time.perf_counter()
        for name, items in pages.items():
            self.retriever.index(name, items)
        self.index_pages_per_second = sum(map(len, pages.values())) / (time.perf_counter() - start)


def evaluate(system: object, questions: list[dict]) -> tuple[dict[int, float], float]:
    hits = dict.fromkeys(KS, 0)
    latencies = []
    for question in questions:
        evidence = {item["evidence_page_num"] + 1 for item in question["evidence"]}
        start = time.perf_counter()
        ranked = system.rank(question["doc_name"], question["question"], max(KS))  # type: ignore[attr-defined]
        latencies.append(time.perf_counter() - start)
        for k in KS:
            if evidence & set(ranked[:k]):
                hits[k] += 1
    return {k: hits[k] / len(questions) for k in KS}, statistics.median(latencies) * 1000


def latency_on(system_type: type, pages: list[str], questions: list[dict], label: str) -> float:
    system = system_type({label: pages})
    latencies = []
    for _ in range(3):
        for question in questions:
            start = time.perf_counter()
            system.rank(label, question["question"], 5)
            latencies.append(time.perf_counter() - start)
    return statistics.median(latencies) * 1000


def plot(results: dict[str, dict[int, float]], path: Path) -> None:
    """Recall@k of every system as grouped bars."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(8, 4.2))
    width = 0.8 / len(results)
    for number, (name, recall) in enumerate(results.items()):
        positions = [k_index + number * width for k_index in range(len(KS))]
        bars = axes.bar(positions, [recall[k] for k in KS], width, label=name)
        axes.bar_label(bars, fmt="%.2f", fontsize=7)
    axes.set_xticks(
        [k_index + width * (len(results) - 1) / 2 for k_index in range(len(KS))], [f"recall@{k}" for k in KS]
    )
    axes.set_ylim(0, 1)
    axes.set_ylabel("share of questions with an evidence page found")
    axes.set_title("Page retrieval on FinanceBench filings (27 questions, 2,682 pages)")
    axes.legend(fontsize=8, loc="upper left")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)
    print(f"(plot written to {path})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_dir", type=Path, help="folder with questions.jsonl and pdfs/")
    parser.add_argument(
        "--plot", type=Path, metavar="PNG", help="also draw recall@k per system (needs matplotlib)"
    )
    args = parser.parse_args()
    questions = load_questions(args.data_dir)
    names = sorted({question["doc_name"] for question in questions})
    texts, loader_rate, raw_rate = extract_pages(args.data_dir, names)
    total_pages = sum(map(len, texts.values()))
    print(f"{len(questions)} questions over {len(names)} documents, {total_pages} pages\n")

    systems: list[object] = [OurRetriever(texts), PageIndexRetriever(texts, args.data_dir), PlainFTS5(texts)]
    try:
        systems.append(BM25S(texts))
    except ImportError as exc:
        print(f"(bm25s skipped: {exc}; pip install bm25s PyStemmer)\n")

    header = f"{'system':40}" + "".join(f"{'R@' + str(k):>7}" for k in KS) + f"{'median ms':>11}"
    print(header)
    print("-" * len(header))
    results = {}
    for system in systems:
        recall, median_ms = evaluate(system, questions)
        results[system.name] = recall  # type: ignore[attr-defined]
        row = f"{system.name:40}" + "".join(f"{recall[k]:7.3f}" for k in KS) + f"{median_ms:11.2f}"  # type: ignore[attr-defined]
        print(row)
    if args.plot is not None:
        plot(results, args.plot)
    ours = results[OurRetriever.name]
    for name, recall in results.items():
        if name != OurRetriever.name:
            ratios = "  ".join(f"@{k} {ours[k] / recall[k]:.2f}x" if recall[k] else f"@{k} n/a" for k in KS)
            print(f"  ours / {name}: {ratios}")

    # Latency on a long document: the first 300 pages of the longest one, every question as a query.
    longest = max(texts, key=lambda name: len(texts[name]))
    long_pages = texts[longest][:300]
    print(f"\nmedian query latency on a {len(long_pages)}-page document ({longest}), ms:")
    for system_type in [type(system) for system in systems if not isinstance(system, PageIndexRetriever)]:
        print(f"  {system_type.name:40}{latency_on(system_type, long_pages, questions, longest):8.2f}")

    print(f"\nindexing, text in hand: {systems[0].index_pages_per_second:,.0f} pages/s")  # type: ignore[attr-defined]
    print(
        f"DocumentLoaderPyMuPDF: {loader_rate:,.0f} pages/s; raw page.get_text(): {raw_rate:,.0f} pages/s "
        f"(ratio {loader_rate / raw_rate:.2f})"
    )


if __name__ == "__main__":
    sys.exit(main())
