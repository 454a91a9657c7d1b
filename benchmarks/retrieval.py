"""Page retrieval quality and speed: this project's retriever next to plain FTS5 bm25() and bm25s, one run.

For every question of a FinanceBench-style data folder (``questions.jsonl`` + ``pdfs/<doc_name>.pdf``), each
system ranks the pages of the question's document; recall@k is the share of questions with an evidence page
among the first k. All systems get the same page text (DocumentLoaderPyMuPDF's ``content``, extracted once).

Printed, in order:

- Ablation: the retriever with all its ranking mechanisms, then with each switch of
  ``extract_thinker_pageindex.retrieval.ranking.Ranking`` turned off in turn (found with
  ``dataclasses.fields``, so a new switch gets its row by itself), the finance profile off and forced on, and
  every mechanism off; the peers (the same retriever on DocumentLoaderPageIndex pages, FTS5 ranked as
  ExtractThinker's own retriever ranks, plain FTS5 with porter stemming, bm25s) in the same table. Every
  variant gets its own retriever, indexed anew, since some switches act at index time.
- Per-question hits: the rank of the first evidence page for the full system, with every mechanism off and
  for bm25s, so misses can be read one by one.
- 5-fold cross-validation of every float weight of ``Ranking``: folds from the sorted question ids shuffled
  with a fixed seed; on four folds a small grid value is chosen by recall@5 (ties go to the value closest to
  the default), then scored on the held-out fold. Printed per weight (and for all weights jointly): the value
  each fold chose, held-out recall@5 and @10 per fold, and their mean, min and max next to the default's.
- Median query latency per system, latency on a 500-page document (each question asked first, then
  again), indexing throughput with the text already extracted, and the loader's speed next to raw PyMuPDF
  ``page.get_text()``.

When ``Ranking`` is not importable (a retriever from before it), the ablation shows today's retriever only
and cross-validation is skipped, each with a note.

With several data folders (by default every set of ../shared/eval with ``questions.jsonl``), each set is
run and printed in turn, then a table puts every ablation row of every set side by side (ΔR@5 and ΔR@10
against the defaults), with a sign test per mechanism over all sets' questions: how many questions the
mechanism brings into the top 5 and how many it pushes out.

Usage: python benchmarks/retrieval.py [DATA_DIR ...] [--no-ablation] [--no-cv] [--json OUT] [--plot PNG]
Peers: pip install bm25s PyStemmer (bm25s is skipped, with a note, when it is not importable).
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import itertools
import json
import math
import os
import random
import re
import sqlite3
import statistics
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from extract_thinker_pageindex import DocumentLoaderPyMuPDF, SQLitePageRetriever

DEFAULT_EVAL = Path(__file__).resolve().parents[2] / "shared" / "eval"
KS = (1, 3, 5, 10)
DEPTH = max(KS)  # pages asked of every system per question
GRID = (0.0, 0.25, 0.5, 0.75, 1.0)  # candidate values of each fitted weight, the default added
JOINT_GRID = (0.0, 0.5, 1.0)  # per weight when all are fitted together, the default added
MAX_JOINT = 64  # largest product grid searched jointly over all weights
FOLDS = 5
LONG_PAGES = 500  # the long document's latency is taken on its first pages, up to this many
SEED = 12  # the fold shuffle; fixed so that every run splits the questions the same way


@dataclasses.dataclass(frozen=True)
class Question:
    id: str
    doc: str
    text: str
    evidence: frozenset[int]  # 1-based page numbers; a hit on any counts


@dataclasses.dataclass
class Run:
    """One system's answers to every question."""

    ranks: dict[str, int | None]  # question id -> 1-based rank of the first evidence page, None past DEPTH
    top: dict[str, list[int]]  # question id -> pages returned, best first
    median_ms: float

    def recall(self, k: int, ids: list[str] | None = None) -> float:
        chosen = list(self.ranks) if ids is None else ids
        return sum(1 for qid in chosen if (rank := self.ranks[qid]) is not None and rank <= k) / len(chosen)


def load_questions(data_dir: Path) -> list[Question]:
    questions = []
    with open(data_dir / "questions.jsonl", encoding="utf-8") as handle:
        for number, line in enumerate(handle):
            if not line.strip():
                continue
            item = json.loads(line)
            qid = str(item.get("financebench_id") or f"q{number:03d}")
            while any(question.id == qid for question in questions):
                qid += "'"
            evidence = frozenset(entry["evidence_page_num"] + 1 for entry in item["evidence"])
            questions.append(Question(qid, item["doc_name"], item["question"], evidence))
    return questions


def load_page_texts(data_dir: Path, names: list[str]) -> dict[str, list[str]]:
    """Page texts per document (DocumentLoaderPyMuPDF's ``content``), the text every system is given; also
    used by benchmarks/scale.py."""
    loader = DocumentLoaderPyMuPDF()
    return {
        name: [page["content"] for page in loader.load(str(data_dir / "pdfs" / f"{name}.pdf"))]
        for name in names
    }


def extract_pages(data_dir: Path, names: list[str]) -> tuple[dict[str, list[str]], float, float]:
    """Page texts per document, and pages/s of the loader and of raw get_text() over the same files."""
    import pymupdf

    start = time.perf_counter()
    texts = load_page_texts(data_dir, names)
    loader_seconds = time.perf_counter() - start
    start = time.perf_counter()
    for name in names:
        with pymupdf.open(data_dir / "pdfs" / f"{name}.pdf") as document:
            for page in document:
                page.get_text()
    raw_seconds = time.perf_counter() - start
    total = sum(len(pages) for pages in texts.values())
    return texts, total / loader_seconds, total / raw_seconds


def ranking_type() -> tuple[type | None, str]:
    """The retriever's ``Ranking`` options class, or None and the reason it cannot be used."""
    try:
        from extract_thinker_pageindex.retrieval.ranking import Ranking
    except ImportError as exc:
        return None, f"extract_thinker_pageindex.retrieval.ranking.Ranking is not importable ({exc})"
    if "ranking" not in inspect.signature(SQLitePageRetriever).parameters:
        return None, "SQLitePageRetriever takes no ranking= argument yet"
    return Ranking, ""


class OurRetriever:
    name = "extract-thinker-pageindex"

    def __init__(self, texts: dict[str, list[str]], ranking: Any = None) -> None:
        options = {} if ranking is None else {"ranking": ranking}
        self.retriever = SQLitePageRetriever(":memory:", **options)
        start = time.perf_counter()
        for name, pages in texts.items():
            self.retriever.index(name, pages)
        self.index_pages_per_second = sum(map(len, texts.values())) / (time.perf_counter() - start)

    def rank(self, doc: str, question: str, k: int) -> list[int]:
        return [match.page_number for match in self.retriever.search(doc, question, max_pages=k)]

    def close(self) -> None:
        self.retriever.close()


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


class FrameworkFTS5:
    r"""Ranked as ExtractThinker's own ``SQLitePageRetriever`` ranks (its main branch, after 0.1.14): FTS5's
    default unicode61 tokenizer (no stemming, no stop words), the query's ``\w+`` words quoted and OR-ed,
    ``bm25()`` without weights, ties by page number. The framework's table layout; written here, since no
    released ExtractThinker has it."""

    name = "ExtractThinker's bm25() (unicode61)"

    def __init__(self, texts: dict[str, list[str]]) -> None:
        self.conn = sqlite3.connect(":memory:")
        self.conn.execute(
            "CREATE VIRTUAL TABLE extractthinker_pages "
            "USING fts5(document_id UNINDEXED, page_number UNINDEXED, content)"
        )
        for name, pages in texts.items():
            self.conn.executemany(
                "INSERT INTO extractthinker_pages VALUES (?, ?, ?)",
                [(name, number, text) for number, text in enumerate(pages, 1)],
            )

    def rank(self, doc: str, question: str, k: int) -> list[int]:
        words = dict.fromkeys(re.findall(r"\w+", question))
        expression = " OR ".join(f'"{word}"' for word in words)
        rows = self.conn.execute(
            "SELECT page_number FROM extractthinker_pages WHERE extractthinker_pages MATCH ? "
            "AND document_id = ? ORDER BY bm25(extractthinker_pages), CAST(page_number AS INTEGER) LIMIT ?",
            (expression, doc, k),
        ).fetchall()
        return [int(row[0]) for row in rows]


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
    """The same retriever (default ranking) fed DocumentLoaderPageIndex pages (text strategy): Markdown
    content plus the heading paths and section descriptions as their own weighted fields."""

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


def evaluate(system: Any, questions: list[Question]) -> Run:
    ranks: dict[str, int | None] = {}
    top: dict[str, list[int]] = {}
    latencies = []
    for question in questions:
        start = time.perf_counter()
        ranked = system.rank(question.doc, question.text, DEPTH)
        latencies.append(time.perf_counter() - start)
        top[question.id] = ranked
        ranks[question.id] = next(
            (position for position, page in enumerate(ranked, 1) if page in question.evidence), None
        )
    return Run(ranks, top, statistics.median(latencies) * 1000)


def evaluate_ranking(texts: dict[str, list[str]], questions: list[Question], ranking: Any) -> Run:
    """A fresh retriever with these options, indexed anew (some options act at index time), then queried."""
    system = OurRetriever(texts, ranking)
    try:
        return evaluate(system, questions)
    finally:
        system.close()


def latency_on(
    system_type: type, pages: list[str], questions: list[Question], label: str
) -> tuple[float, float]:
    """Median query latency on one document, ms: every question once (first asked: nothing of the
    document's queries kept yet), then twice more (what a retriever keeps between a document's queries
    counts)."""
    system = system_type({label: pages})
    first: list[float] = []
    again: list[float] = []
    for round_number in range(3):
        for question in questions:
            start = time.perf_counter()
            system.rank(label, question.text, 5)
            (first if round_number == 0 else again).append(time.perf_counter() - start)
    return statistics.median(first) * 1000, statistics.median(again) * 1000


# --- ablation -------------------------------------------------------------------------------------------


def switch_names(ranking: Any) -> list[str]:
    """The boolean fields of a Ranking: the mechanisms that can be switched off."""
    return [
        field.name for field in dataclasses.fields(ranking) if isinstance(getattr(ranking, field.name), bool)
    ]


def weight_names(ranking: Any) -> list[str]:
    """The float fields of a Ranking: the weights that are fitted, hence cross-validated."""
    return [
        field.name for field in dataclasses.fields(ranking) if isinstance(getattr(ranking, field.name), float)
    ]


def ablation_variants(ranking_cls: type) -> list[tuple[str, Any]]:
    """(label, Ranking) pairs: the defaults, each switch flipped in turn, the profile off and on, all off."""
    default = ranking_cls()
    variants = [("all mechanisms (defaults)", default)]
    switches = switch_names(default)
    for name in switches:
        value = getattr(default, name)
        variants.append(
            (f"{'without' if value else 'with'} {name}", dataclasses.replace(default, **{name: not value}))
        )
    everything_off: dict[str, Any] = dict.fromkeys(switches, False)
    if isinstance(getattr(default, "profile", None), str):
        for mode in ("off", "on"):
            if default.profile != mode:
                variants.append((f"profile={mode}", dataclasses.replace(default, profile=mode)))
        everything_off["profile"] = "off"
    variants.append(("none (every switch off, profile off)", dataclasses.replace(default, **everything_off)))
    return variants


def recall_row(label: str, run: Run, reference: Run | None) -> str:
    row = f"{label:42}" + "".join(f"{run.recall(k):7.3f}" for k in KS)
    if reference is not None:
        row += "".join(f"{run.recall(k) - reference.recall(k):+7.3f}" for k in (5, 10))
    return row + f"{run.median_ms:10.2f}"


def print_recall_table(rows: list[tuple[str, Run]], peers: list[tuple[str, Run]]) -> None:
    reference = rows[0][1]
    header = (
        f"{'system':42}"
        + "".join(f"{'R@' + str(k):>7}" for k in KS)
        + "".join(f"{'ΔR@' + str(k):>7}" for k in (5, 10))
        + f"{'median ms':>10}"
    )
    print(header)
    print("-" * len(header))
    for label, run in rows:
        print(recall_row(label, run, reference))
    print("-" * len(header))
    for label, run in peers:
        print(recall_row(label, run, reference))
    print("(Δ: against the first row)")


def print_per_question(questions: list[Question], columns: list[tuple[str, Run]], full: Run) -> None:
    """Rank of the first evidence page per question and system ('-': not in the first DEPTH pages)."""
    width = max(len(question.doc) for question in questions)
    header = (
        f"{'question':24}{'doc':{width + 2}}"
        + "".join(f"{label:>8}" for label, _ in columns)
        + f"  {'evidence':12}{'ours, top 3'}"
    )
    print(header)
    print("-" * len(header))
    for question in questions:
        cells = "".join(f"{run.ranks[question.id] or '-':>8}" for _, run in columns)
        evidence = ",".join(map(str, sorted(question.evidence)))
        top = ",".join(map(str, full.top[question.id][:3]))
        print(f"{question.id:24}{question.doc:{width + 2}}{cells}  {evidence:12}{top}")


# --- cross-validation -----------------------------------------------------------------------------------


def make_folds(questions: list[Question]) -> list[list[str]]:
    ids = sorted(question.id for question in questions)
    random.Random(SEED).shuffle(ids)
    return [ids[fold::FOLDS] for fold in range(FOLDS)]


def cross_validate(
    name: str,
    candidates: list[tuple[tuple[float, ...], Run]],
    default: tuple[float, ...],
    folds: list[list[str]],
) -> dict[str, Any]:
    """Per fold: the candidate with the best training recall@5 (ties: closest to the default), held out."""

    def distance(values: tuple[float, ...]) -> float:
        return sum(abs(value - base) for value, base in zip(values, default, strict=True))

    default_run = next(run for values, run in candidates if values == default)
    fold_results = []
    for held_out in folds:
        train = [qid for fold in folds if fold is not held_out for qid in fold]
        best = max(run.recall(5, train) for _, run in candidates)
        tied = [(values, run) for values, run in candidates if run.recall(5, train) == best]
        values, run = min(tied, key=lambda pair: (distance(pair[0]), pair[0]))
        fold_results.append(
            {
                "size": len(held_out),
                "chosen": values,
                "train_r5": best,
                "held_out": {k: run.recall(k, held_out) for k in (5, 10)},
                "default_held_out": {k: default_run.recall(k, held_out) for k in (5, 10)},
            }
        )
    summary = {
        key: {
            k: {
                "mean": statistics.mean(result[key][k] for result in fold_results),
                "min": min(result[key][k] for result in fold_results),
                "max": max(result[key][k] for result in fold_results),
            }
            for k in (5, 10)
        }
        for key in ("held_out", "default_held_out")
    }
    return {
        "weights": name,
        "default": default,
        "grid": {_values_label(values): {k: run.recall(k) for k in (5, 10)} for values, run in candidates},
        "folds": fold_results,
        "summary": summary,
    }


def _values_label(values: tuple[float, ...]) -> str:
    return "/".join(f"{value:g}" for value in values)


def print_cv(result: dict[str, Any]) -> None:
    print(f"\n{result['weights']} (default {_values_label(result['default'])})")
    grid = result["grid"]
    if len(result["default"]) == 1:
        values = "  ".join(f"{label}: {recall[5]:.3f}/{recall[10]:.3f}" for label, recall in grid.items())
        print(f"  R@5/R@10 on all questions per value: {values}")
    else:
        spread = "; ".join(
            f"R@{k} min {min(recall[k] for recall in grid.values()):.3f} "
            f"median {statistics.median(recall[k] for recall in grid.values()):.3f} "
            f"max {max(recall[k] for recall in grid.values()):.3f}"
            for k in (5, 10)
        )
        print(
            f"  on all questions over the {len(grid)} combinations of "
            f"{', '.join(f'{value:g}' for value in JOINT_GRID)} (plus defaults): {spread}"
        )
    print(
        f"  {'fold':>4}{'n':>4}{'chosen':>16}{'train R@5':>11}{'held R@5':>10}{'held R@10':>11}"
        f"{'default R@5':>13}{'R@10':>7}"
    )
    for number, fold in enumerate(result["folds"], 1):
        print(
            f"  {number:>4}{fold['size']:>4}{_values_label(fold['chosen']):>16}{fold['train_r5']:11.3f}"
            f"{fold['held_out'][5]:10.3f}{fold['held_out'][10]:11.3f}"
            f"{fold['default_held_out'][5]:13.3f}{fold['default_held_out'][10]:7.3f}"
        )
    for key, label in (("held_out", "fitted, held out"), ("default_held_out", "default, same folds")):
        spread = "; ".join(
            f"R@{k} mean {stats['mean']:.3f} min {stats['min']:.3f} max {stats['max']:.3f}"
            for k, stats in result["summary"][key].items()
        )
        print(f"  {label:20}{spread}")


def run_cv(
    texts: dict[str, list[str]], questions: list[Question], ranking_cls: type, cache: dict[Any, Run]
) -> list[dict[str, Any]]:
    """Cross-validate each float weight of Ranking alone (others at their defaults), then all jointly."""
    default = ranking_cls()
    weights = weight_names(default)
    if not weights:
        print("Ranking has no float weight; nothing is fitted, nothing to cross-validate.")
        return []
    folds = make_folds(questions)
    print(
        f"{FOLDS}-fold cross-validation: folds of {', '.join(str(len(fold)) for fold in folds)} questions "
        f"(sorted ids, shuffled with seed {SEED}); each fold's value is chosen on the other four by "
        "recall@5 (ties: closest to the default) and scored on the held-out fold."
    )

    def run_for(values: tuple[float, ...], names: list[str]) -> Run:
        ranking = dataclasses.replace(default, **dict(zip(names, values, strict=True)))
        if ranking not in cache:
            cache[ranking] = evaluate_ranking(texts, questions, ranking)
        return cache[ranking]

    def grid_for(name: str, grid: tuple[float, ...]) -> list[float]:
        return sorted({*grid, getattr(default, name)})

    results = []
    for name in weights:
        candidates = [((value,), run_for((value,), [name])) for value in grid_for(name, GRID)]
        result = cross_validate(name, candidates, (getattr(default, name),), folds)
        print_cv(result)
        results.append(result)
    if len(weights) < 2:
        return results
    grids = [grid_for(name, JOINT_GRID) for name in weights]
    combinations = [tuple(values) for values in itertools.product(*grids)]
    if len(combinations) > MAX_JOINT:
        print(f"\n(joint fit skipped: {len(combinations)} combinations, more than {MAX_JOINT})")
        return results
    candidates = [(values, run_for(values, weights)) for values in combinations]
    defaults = tuple(getattr(default, name) for name in weights)
    result = cross_validate(" + ".join(weights) + " (jointly)", candidates, defaults, folds)
    print_cv(result)
    results.append(result)
    return results


# --- main -----------------------------------------------------------------------------------------------


def plot(results: dict[str, Run], path: Path, subtitle: str) -> None:
    """Recall@k of every system as grouped bars."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(8, 5))
    width = 0.8 / len(results)
    for number, (name, run) in enumerate(results.items()):
        positions = [k_index + number * width for k_index in range(len(KS))]
        bars = axes.bar(positions, [run.recall(k) for k in KS], width, label=name)
        axes.bar_label(bars, fmt="%.2f", fontsize=7)
    axes.set_xticks(
        [k_index + width * (len(results) - 1) / 2 for k_index in range(len(KS))], [f"recall@{k}" for k in KS]
    )
    axes.set_ylim(0, 1.08)  # room for a bar's label at 1.00
    axes.set_ylabel("share of questions with an evidence page found")
    axes.set_title(f"Page retrieval on FinanceBench filings ({subtitle})")
    # Below the axes: inside, the legend hides the bars it names.
    axes.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.08), ncol=3)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)
    print(f"(plot written to {path})")


def run_json(run: Run) -> dict[str, Any]:
    return {
        "recall": {str(k): run.recall(k) for k in KS},
        "median_ms": run.median_ms,
        "first_evidence_rank": run.ranks,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "data_dirs",
        nargs="*",
        type=Path,
        help="folders with questions.jsonl and pdfs/ (default: every set of ../shared/eval with questions)",
    )
    parser.add_argument(
        "--ablation",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="one row per ranking mechanism switched off (default: on)",
    )
    parser.add_argument(
        "--cv",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="5-fold cross-validation of the ranking weights, per set (default: on)",
    )
    parser.add_argument("--json", type=Path, metavar="OUT", help="also write every figure to this JSON file")
    parser.add_argument(
        "--plot", type=Path, metavar="PNG", help="also draw recall@k per system (needs matplotlib; first set)"
    )
    args = parser.parse_args()
    data_dirs = args.data_dirs or [
        folder for folder in sorted(DEFAULT_EVAL.glob("*")) if (folder / "questions.jsonl").is_file()
    ]
    if not data_dirs:
        parser.error(f"no data folder given, and none with questions.jsonl in {DEFAULT_EVAL}")
    reports: dict[str, dict[str, Any]] = {}
    for number, data_dir in enumerate(data_dirs):
        print(f"== {data_dir.name} ({data_dir})\n")
        plot_to = args.plot if number == 0 else None
        reports[data_dir.name] = run_set(data_dir, args, plot_to)
        print()
    report: dict[str, Any] = {"sets": reports}
    if len(reports) > 1 or args.ablation:
        report["across_sets"] = print_across_sets(reports)
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2, default=list) + "\n", encoding="utf-8")
        print(f"(figures written to {args.json})")


def run_set(data_dir: Path, args: argparse.Namespace, plot_to: Path | None) -> dict[str, Any]:
    """Every figure of one eval set, printed; returned for the JSON report and the cross-set summary."""
    questions = load_questions(data_dir)
    names = sorted({question.doc for question in questions})
    texts, loader_rate, raw_rate = extract_pages(data_dir, names)
    total_pages = sum(map(len, texts.values()))
    print(f"{len(questions)} questions over {len(names)} documents, {total_pages} pages\n")
    report: dict[str, Any] = {"questions": len(questions), "documents": len(names), "pages": total_pages}

    ranking_cls, missing = ranking_type()
    ours = OurRetriever(texts)
    rows: list[tuple[str, Run]] = [
        (
            "all mechanisms (defaults)" if ranking_cls else "ours (today's retriever)",
            evaluate(ours, questions),
        )
    ]
    if ranking_cls is None:
        print(
            f"(ablation: {missing}; the table shows today's retriever only, and no weight is cross-validated)"
        )
    elif args.ablation:
        rows += [
            (label, evaluate_ranking(texts, questions, ranking))
            for label, ranking in ablation_variants(ranking_cls)[1:]
        ]

    peer_systems: list[Any] = [
        PageIndexRetriever(texts, data_dir),
        FrameworkFTS5(texts),
        PlainFTS5(texts),
    ]
    try:
        peer_systems.append(BM25S(texts))
    except ImportError as exc:
        print(f"(bm25s skipped: {exc}; pip install bm25s PyStemmer)")
    peers = [(system.name, evaluate(system, questions)) for system in peer_systems]

    print(f"\nrecall@k over {len(questions)} questions, first evidence page among the first k:")
    print_recall_table(rows, peers)
    full = rows[0][1]
    for name, run in peers:
        ratios = "  ".join(
            f"@{k} {full.recall(k) / run.recall(k):.2f}x" if run.recall(k) else f"@{k} n/a" for k in KS
        )
        print(f"  ours / {name}: {ratios}")
    report["ablation"] = {label: run_json(run) for label, run in rows}
    report["peers"] = {label: run_json(run) for label, run in peers}
    if plot_to is not None:
        plot(
            {OurRetriever.name: full} | dict(peers),
            plot_to,
            f"{len(questions)} questions, {total_pages:,} pages",
        )

    print(f"\nper question, rank of the first evidence page among the first {DEPTH} ('-': none):")
    columns = [("ours", full)]
    if len(rows) > 1 and rows[-1][0].startswith("none"):
        columns.append(("none", rows[-1][1]))
    columns += [(label.split()[0], run) for label, run in peers if label != PageIndexRetriever.name]
    print_per_question(questions, columns, full)

    if args.cv and ranking_cls is not None:
        print()
        report["cross_validation"] = run_cv(texts, questions, ranking_cls, {ranking_cls(): full})

    # Latency on a long document: the first 500 pages of the longest one, every question as a query.
    longest = max(texts, key=lambda name: len(texts[name]))
    long_pages = texts[longest][:LONG_PAGES]
    print(
        f"\nmedian query latency on a {len(long_pages)}-page document ({longest}), ms: each question asked "
        "first, then asked again (twice)"
    )
    report["latency_long_ms"] = {}
    report["latency_long_repeat_ms"] = {}
    for system_type in [OurRetriever] + [
        type(system) for system in peer_systems if not isinstance(system, PageIndexRetriever)
    ]:
        first, again = latency_on(system_type, long_pages, questions, longest)
        report["latency_long_ms"][system_type.name] = first
        report["latency_long_repeat_ms"][system_type.name] = again
        print(f"  {system_type.name:40}{first:8.2f} first {again:8.2f} again")

    report["index_pages_per_second"] = ours.index_pages_per_second
    report["loader_pages_per_second"] = {"DocumentLoaderPyMuPDF": loader_rate, "raw get_text": raw_rate}
    print(f"\nindexing, text in hand: {ours.index_pages_per_second:,.0f} pages/s")
    print(
        f"DocumentLoaderPyMuPDF: {loader_rate:,.0f} pages/s; raw page.get_text(): {raw_rate:,.0f} pages/s "
        f"(ratio {loader_rate / raw_rate:.2f})"
    )
    report["question_ids"] = [question.id for question in questions]
    return report


def sign_test(better: int, worse: int) -> float:
    """Two-sided exact sign test: the chance of a split at least this uneven if either way were a coin."""
    total = better + worse
    if total == 0:
        return 1.0
    tail = sum(math.comb(total, i) for i in range(min(better, worse) + 1)) / 2**total
    return min(1.0, 2 * tail)


def print_across_sets(reports: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Each ablation row on every set side by side (ΔR@5 and ΔR@10 against the defaults), with a sign test
    over every question of every set: at k = 5, the questions the mechanism puts in the top 5 and its
    absence drops (helps), and the reverse (hurts)."""
    labels = list(next(iter(reports.values()))["ablation"])
    names = list(reports)
    print("== Across the sets: each mechanism switched off, ΔR@5 / ΔR@10 per set against the defaults")
    header = f"{'variant':40}" + "".join(f"{name[:22]:>24}" for name in names) + "  helps hurts  sign p"
    print(header)
    print("-" * len(header))
    summary: dict[str, Any] = {}
    for label in labels[1:]:
        cells, helps, hurts = [], 0, 0
        for name in names:
            ablation = reports[name]["ablation"]
            full, variant = ablation[labels[0]], ablation.get(label)
            if variant is None:
                cells.append(f"{'-':>24}")
                continue
            deltas = [variant["recall"][str(k)] - full["recall"][str(k)] for k in (5, 10)]
            cells.append(f"{f'{deltas[0]:+.3f} / {deltas[1]:+.3f}':>24}")
            for qid in reports[name]["question_ids"]:
                with_it, without = _hit(full, qid, 5), _hit(variant, qid, 5)
                helps += with_it and not without
                hurts += without and not with_it
        p_value = sign_test(helps, hurts)
        summary[label] = {"helps": helps, "hurts": hurts, "sign_p": p_value}
        print(f"{label[:40]:40}" + "".join(cells) + f"  {helps:5} {hurts:5}  {p_value:6.3g}")
    print(
        "(helps: questions with an evidence page in the top 5 with the mechanism and not without it; hurts: "
        "the reverse; sign p: two-sided exact sign test over all sets' questions)"
    )
    return summary


def _hit(run: dict[str, Any], qid: str, k: int) -> bool:
    rank = run["first_evidence_rank"].get(qid)
    return rank is not None and rank <= k


if __name__ == "__main__":
    sys.exit(main())
