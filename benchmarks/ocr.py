"""OCR of scanned pages: word and number accuracy, CPU-seconds a page, retrieval next to born-digital.

Every engine and the born-digital originals are measured side by side in one run.

Scans are made here from the born-digital eval PDFs: each page is drawn at 200 dpi in grey, then degraded
like an office scanner's output with a seed fixed per page (a rotation of up to ±1°, a Gaussian blur of
0.4-0.8 px, Gaussian noise of σ 6 grey levels, JPEG at quality 60-75) and put back as a page-size picture
of a PDF with no text layer. Scans and OCR results are cached under ``--cache`` (default
``benchmarks/.cache/ocr/``, which holds its own ``.gitignore``), keyed by the source file's hash, the scan
settings, the engine and its settings and a hash of the package's OCR code, so a rerun is fast; a cached
figure keeps the timings of the run that made it (``--refresh`` measures again).

Printed, in order:

- Word quality: ``--pages`` pages per eval set (one each from documents evenly spaced through the set, a
  random page of each, seeded; pages with at least 50 words of text layer), each scanned and read by every
  engine of ``--engines``: this package's Tesseract (run by tesserocr where installed), the same with
  Tesseract run by the one inside PyMuPDF (``tesseract-mupdf``, what users without tesserocr get) and
  RapidOCR (``ocr.engines.read_page`` + ``plain_text``) and pymupdf4llm's
  ``to_markdown(force_ocr=True)`` with its Tesseract OCR function as a peer (its RapidOCR-detection
  plus Tesseract mode is probed first and reported as skipped when it fails). Word and number precision
  and recall against the page's own text layer (multisets of tokens after NFKC and lower case; words are
  runs of letters and digits, numbers are numeric tokens such as 1,234.5, (12), $8,813 or 3.4%, with "$"
  and thousands commas dropped), pooled per set and overall, with
  the per-page spread (min / median / max).
  CPU-seconds and wall seconds per page, each page read in a worker process (one per core, one thread
  each, warmed up first, as the package's own OCR workers run), and ratios to this package's Tesseract.
  Then every page's figures, and the pages where the engines disagree.
- Retrieval: for the questions of each eval set with ``questions.jsonl``, the ``--docs`` shortest
  documents (by pages; ties by name) are scanned whole, loaded with ``DocumentLoaderPyMuPDF()`` (OCR
  "auto": every page is a scan, so every page is OCR'd, in the loader's worker processes) and indexed with
  ``SQLitePageRetriever``; recall@1/3/5/10 of the evidence pages next to the born-digital originals loaded
  the same way, on the same questions, and the difference. Per document: pages, OCR'd and failed pages,
  CPU-seconds (this process and its workers, from ``getrusage``) and wall seconds per page, and the
  scan's word recall against the original's content. Then the rank of the first evidence page per question.
- The targets of the OCR issue next to the measured values, pass or fail.

Usage: python benchmarks/ocr.py [DATA_DIR ...] [--pages 12] [--docs 8] [--engines tesseract,rapidocr,...]
       [--retrieval-engines tesseract] [--dpi 300] [--workers N] [--seed 7] [--cache DIR] [--refresh]
       [--json OUT]
(each DATA_DIR holds pdfs/, and questions.jsonl for the retrieval part; default ../shared/eval/financebench,
../shared/eval/mmlongbench and ../shared/eval/structure)
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import hashlib
import io
import json
import multiprocessing
import os
import random
import re
import resource
import statistics
import sys
import time
import unicodedata
import warnings
from collections import Counter
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
# One OpenMP thread per OCR process, as the package's own OCR workers run: the processes use the cores.
os.environ.setdefault("OMP_THREAD_LIMIT", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy
import pymupdf
from PIL import Image, ImageFilter
from retrieval import Question, load_questions

import extract_thinker_pageindex
from extract_thinker_pageindex import DocumentLoaderPyMuPDF, SQLitePageRetriever
from extract_thinker_pageindex.ocr import engines
from extract_thinker_pageindex.ocr.settings import (
    DEFAULT_OCR_DPI,
    READER_VARIABLE,
    ocr_settings,
    tesseract_reader,
)
from extract_thinker_pageindex.ocr.tessdata import find_tessdata

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DIRS = [
    REPO_ROOT.parent / "shared" / "eval" / name for name in ("financebench", "mmlongbench", "structure")
]
DEFAULT_CACHE = REPO_ROOT / "benchmarks" / ".cache" / "ocr"
KS = (1, 3, 5, 10)
MIN_WORDS = 50  # a sampled page has at least this many words of text layer

#: How the scans are made; part of every cache key.
SCAN = {
    "version": 1,
    "dpi": 200,
    "skew_deg": 1.0,
    "blur_px": (0.4, 0.8),
    "noise_sigma": 6.0,
    "jpeg": (60, 75),
}

OURS = ("tesseract", "tesseract-mupdf", "rapidocr")
#: Ours with Tesseract run by the one inside PyMuPDF (what users without tesserocr get).
READERS = {"tesseract": None, "tesseract-mupdf": "pymupdf", "rapidocr": None}
PEERS = {
    "pymupdf4llm-tesseract": "tesseract_api",  # pymupdf4llm's Tesseract OCR function
    "pymupdf4llm-rapidtess": "rapidtess_api",  # RapidOCR finds the lines, Tesseract reads them
    "pymupdf4llm-rapidocr": "rapidocr_api",  # RapidOCR alone (its default with RapidOCR 3.x installed)
}
ENGINES = (*OURS, *PEERS)
DEFAULT_ENGINES = "tesseract,tesseract-mupdf,rapidocr,pymupdf4llm-tesseract,pymupdf4llm-rapidtess"
ENGINE_LABELS = {
    "tesseract": "ours: Tesseract",
    "tesseract-mupdf": "ours: Tesseract in MuPDF",
    "rapidocr": "ours: RapidOCR",
    "pymupdf4llm-tesseract": "pymupdf4llm + Tesseract",
    "pymupdf4llm-rapidtess": "pymupdf4llm RapidOCR+Tess",
    "pymupdf4llm-rapidocr": "pymupdf4llm + RapidOCR",
}

TARGET_WORD_RECALL = 0.95
TARGET_NUMBER_RECALL = 0.93
TARGET_RECALL_GAP = 0.05
TARGET_CPU_PER_PAGE = 4.0


# --- scans ----------------------------------------------------------------------------------------------


def file_hash(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()[:16]


def short_hash(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:12]


def code_hash(loader: bool) -> str:
    """The package's code that makes OCR text (the engines; with ``loader``, also the PDF loader), so that
    cached OCR text goes stale when it changes. The worker pool does not change the text."""
    package = Path(extract_thinker_pageindex.__file__).parent
    files = [path for path in sorted((package / "ocr").glob("*.py")) if path.stem not in ("pool", "worker")]
    if loader:
        files += [package / "pdf.py", package / "pdf_pages.py", package / "loaders" / "pymupdf.py"]
    digest = hashlib.sha256()
    for path in files:
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def degrade(page: Any, key: str) -> bytes:
    """One page drawn at the scan resolution in grey and degraded like a scanner's output; JPEG bytes."""
    rng = random.Random(key)
    angle = rng.uniform(-SCAN["skew_deg"], SCAN["skew_deg"])
    blur = rng.uniform(*SCAN["blur_px"])
    quality = rng.randint(*SCAN["jpeg"])
    noise = numpy.random.default_rng(int(hashlib.sha256(key.encode()).hexdigest()[:16], 16))
    pixmap = page.get_pixmap(dpi=SCAN["dpi"], colorspace=pymupdf.csGRAY, alpha=False)
    image = Image.frombytes("L", (pixmap.width, pixmap.height), pixmap.samples)
    image = image.rotate(angle, resample=Image.Resampling.BICUBIC, fillcolor=255)
    image = image.filter(ImageFilter.GaussianBlur(blur))
    pixels = numpy.asarray(image, dtype=numpy.float32)
    pixels = pixels + noise.normal(0.0, SCAN["noise_sigma"], pixels.shape)
    out = io.BytesIO()
    Image.fromarray(numpy.clip(pixels, 0, 255).astype(numpy.uint8)).save(out, "JPEG", quality=quality)
    return out.getvalue()


def scan_one(source: str, index: int, key: str) -> tuple[bytes, float, float, float]:
    """A worker task: page ``index`` of ``source`` scanned; its JPEG, the page size in points and the
    CPU-seconds it took."""
    cpu = time.process_time()
    with pymupdf.open(source) as document:
        page = document[index]
        return degrade(page, key), page.rect.width, page.rect.height, time.process_time() - cpu


@dataclass
class Env:
    cache: Path
    seed: int
    dpi: int
    workers: int
    refresh: bool
    engine_code: str  # code_hash(False)
    loader_code: str  # code_hash(True)
    pool: concurrent.futures.ProcessPoolExecutor | None = None
    hashes: dict[Path, str] = field(default_factory=dict)
    scan_seconds: list[float] = field(default_factory=list)  # CPU-seconds per page made in this run

    def source_hash(self, path: Path) -> str:
        if path not in self.hashes:
            self.hashes[path] = file_hash(path)
        return self.hashes[path]

    def scan_pool(self) -> concurrent.futures.ProcessPoolExecutor:
        if self.pool is None:
            self.pool = concurrent.futures.ProcessPoolExecutor(
                self.workers, mp_context=multiprocessing.get_context("spawn")
            )
        return self.pool

    def scan(self, source: Path, pages: list[int] | None = None) -> Path:
        """An image-only PDF of the pages of ``source`` (all when None), made once and cached."""
        source_hash = self.source_hash(source)
        label = "all" if pages is None else "p" + "-".join(str(page + 1) for page in pages)
        path = (
            self.cache
            / "scans"
            / f"{source.stem[:40]}-{source_hash}-{short_hash([SCAN, self.seed])}-{label}.pdf"
        )
        if path.exists():
            return path
        with pymupdf.open(source) as document:
            indices = list(range(document.page_count)) if pages is None else pages
        keys = [f"{self.seed}:{source_hash}:{index}" for index in indices]
        images = list(self.scan_pool().map(scan_one, [str(source)] * len(indices), indices, keys))
        self.scan_seconds += [image[3] for image in images]
        out = pymupdf.open()
        for jpeg, width, height, _ in images:
            page = out.new_page(width=width, height=height)
            page.insert_image(page.rect, stream=jpeg)
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(".tmp")
        out.save(temporary, garbage=3, deflate=True)
        out.close()
        os.replace(temporary, path)
        return path

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown()
            self.pool = None


def cpu_seconds() -> float:
    """CPU-seconds of this process and of its children that have ended (workers are waited for)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def warmup_pdf(cache: Path) -> Path:
    """A small scanned page of ordinary text for each OCR worker's first (untimed) read."""
    path = cache / f"warmup-{short_hash(SCAN)}.pdf"
    if path.exists():
        return path
    source = pymupdf.open()
    page = source.new_page(width=612, height=792)
    lines = ["Warm-up page for the OCR benchmark.", "Revenue was $1,234.5 million in 2023, up 3.4%."] * 6
    for number, line in enumerate(lines):
        page.insert_text((72, 90 + 22 * number), line, fontsize=11)
    out = pymupdf.open()
    scanned = out.new_page(width=612, height=792)
    scanned.insert_image(scanned.rect, stream=degrade(page, "warmup"))
    path.parent.mkdir(parents=True, exist_ok=True)
    out.save(path)
    return path


# --- OCR workers ----------------------------------------------------------------------------------------

_WORKER: dict[str, Any] = {}


def _markdown_text(markdown: str) -> str:
    """pymupdf4llm's page Markdown as plain text: no HTML tags, no picture placeholders."""
    lines = [line for line in markdown.splitlines() if "intentionally omitted" not in line]
    return re.sub(r"<[^>]+>", " ", "\n".join(lines))


def read_page(engine: str, path: str, dpi: int) -> str:
    """The text an engine reads on the first page of a PDF."""
    if engine in OURS:
        name = "rapidocr" if engine == "rapidocr" else "tesseract"
        settings = ocr_settings(ocr="always", ocr_engine=name, ocr_dpi=dpi, ocr_workers=1)
        with pymupdf.open(path) as document:
            return engines.plain_text(engines.read_page(document[0], settings, threads=1).blocks)
    import importlib

    import pymupdf4llm

    function = importlib.import_module(f"pymupdf4llm.ocr.{PEERS[engine]}").exec_ocr
    chunks = pymupdf4llm.to_markdown(
        path, page_chunks=True, show_progress=False, force_ocr=True, ocr_function=function, ocr_dpi=dpi
    )
    return _markdown_text(chunks[0]["text"])


def worker_init(engine: str, dpi: int, warmup: str, tessdata: str | None) -> None:
    with open(os.devnull, "wb") as devnull:  # pymupdf4llm prints its messages, also at exit
        os.dup2(devnull.fileno(), 1)
    if tessdata:
        os.environ.setdefault("TESSDATA_PREFIX", tessdata)  # where pymupdf4llm's Tesseract looks
    _WORKER.update(engine=engine, dpi=dpi)
    if READERS.get(engine):
        os.environ[READER_VARIABLE] = READERS[engine] or ""
    with contextlib.suppress(Exception):
        read_page(engine, warmup, dpi)


def ocr_task(path: str) -> dict[str, Any]:
    """A worker task: one page read, with the CPU-seconds (every thread of this process) and wall seconds."""
    cpu, wall = time.process_time(), time.perf_counter()
    try:
        text, error = read_page(_WORKER["engine"], path, _WORKER["dpi"]), None
    except Exception as exc:
        text, error = "", f"{type(exc).__name__}: {exc}".splitlines()[0][:200]
    return {
        "text": text,
        "cpu": time.process_time() - cpu,
        "wall": time.perf_counter() - wall,
        "error": error,
    }


def ocr_pool(engine: str, env: Env, warmup: Path, workers: int) -> concurrent.futures.ProcessPoolExecutor:
    folder = find_tessdata(["eng"])
    return concurrent.futures.ProcessPoolExecutor(
        workers,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=worker_init,
        initargs=(engine, env.dpi, str(warmup), str(folder) if folder else None),
    )


# --- tokens and matching --------------------------------------------------------------------------------

WORD = re.compile(r"[^\W_]+")
NUMBER = re.compile(r"(?<![\w.,])(\(\s?)?\$?\s?(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(\s?%)?(\s?\))?(?!\w)")


def normalise(text: str) -> str:
    return unicodedata.normalize("NFKC", text).lower()


def words(text: str) -> Counter[str]:
    return Counter(WORD.findall(normalise(text)))


def numbers(text: str) -> Counter[str]:
    """Numeric tokens: thousands commas and "$" dropped, "%" kept, parentheses kept when both are there."""
    found: Counter[str] = Counter()
    for opening, whole, fraction, percent, closing in NUMBER.findall(normalise(text)):
        value = whole.replace(",", "") + fraction + ("%" if percent else "")
        found[f"({value})" if opening and closing else value] += 1
    return found


@dataclass
class Match:
    hits: int
    found: int  # tokens in the OCR text
    expected: int  # tokens in the reference

    @classmethod
    def of(cls, reference: Counter[str], candidate: Counter[str]) -> Match:
        return cls(sum((reference & candidate).values()), sum(candidate.values()), sum(reference.values()))

    @property
    def precision(self) -> float | None:
        return self.hits / self.found if self.found else None

    @property
    def recall(self) -> float | None:
        return self.hits / self.expected if self.expected else None


def pooled(matches: list[Match]) -> Match:
    return Match(
        sum(m.hits for m in matches), sum(m.found for m in matches), sum(m.expected for m in matches)
    )


# --- word quality ---------------------------------------------------------------------------------------


@dataclass
class SamplePage:
    set: str
    source: Path
    index: int  # 0-based
    reference: str

    @property
    def label(self) -> str:
        return f"{self.source.stem} p.{self.index + 1}"


def sample_pages(data_dir: Path, count: int, seed: int) -> list[SamplePage]:
    """``count`` pages spread through the set's documents: documents evenly spaced in name order (each
    once while ``count`` is at most their number, else in turn), and in each a random page (seeded) of an
    equal run of its pages, with at least MIN_WORDS words of text layer. A document without such a page
    gives its turn to the next one."""
    paths = sorted((data_dir / "pdfs").glob("*.pdf"))
    documents = {path: pymupdf.open(path) for path in paths}
    try:
        turns = Counter(paths[slot * len(paths) // count] for slot in range(count))
        rng = random.Random(f"{seed}:{data_dir.name}")
        chosen: list[SamplePage] = []
        taken: set[tuple[Path, int]] = set()
        position = 0
        for path in paths:
            wanted = turns[path] + position  # turns left over from documents without a page carry on
            position = 0
            pages = documents[path].page_count
            for run in range(wanted):
                stratum = list(range(run * pages // wanted, (run + 1) * pages // wanted))
                rest = [index for index in range(pages) if index not in stratum]
                candidates = rng.sample(stratum, len(stratum)) + rng.sample(rest, len(rest))
                for index in candidates:
                    if (path, index) in taken:
                        continue
                    text = documents[path][index].get_text()
                    if sum(words(text).values()) >= MIN_WORDS:
                        chosen.append(SamplePage(data_dir.name, path, index, text))
                        taken.add((path, index))
                        break
                else:
                    position += 1
        return chosen
    finally:
        for document in documents.values():
            document.close()


def run_engine(
    engine: str, sample: list[SamplePage], env: Env, warmup: Path
) -> tuple[list[dict[str, Any]], int]:
    """Every sampled page read by one engine: results from the cache, the rest in worker processes."""
    scans = [env.scan(page.source, [page.index]) for page in sample]
    code = env.engine_code if engine in OURS else version("pymupdf4llm")
    keys = [short_hash([engine, env.dpi, code, scan.name]) for scan in scans]
    paths = [env.cache / "text" / f"{engine}-{key}.json" for key in keys]
    results: list[dict[str, Any] | None] = [
        None if env.refresh or not path.exists() else json.loads(path.read_text()) for path in paths
    ]
    missing = [position for position, result in enumerate(results) if result is None]
    if missing:
        with ocr_pool(engine, env, warmup, min(env.workers, len(missing))) as pool:
            answers = pool.map(ocr_task, [str(scans[position]) for position in missing])
            for position, answer in zip(missing, answers, strict=True):
                results[position] = answer
                paths[position].parent.mkdir(parents=True, exist_ok=True)
                paths[position].write_text(json.dumps(answer))
    return [result for result in results if result is not None], len(sample) - len(missing)


def probe(engine: str, env: Env, warmup: Path) -> str | None:
    """Why a peer cannot read the warm-up scan (its exception), or None when it can; cached per version."""
    key = short_hash(
        [engine, *(version(name) for name in ("pymupdf4llm", "pymupdf", "rapidocr")), warmup.name]
    )
    cached = env.cache / "probes" / f"{engine}-{key}.json"
    if not env.refresh and cached.exists():
        error: str | None = json.loads(cached.read_text())["error"]
        return error
    with ocr_pool(engine, env, warmup, 1) as pool:
        error = pool.submit(ocr_task, str(warmup)).result()["error"]
    cached.parent.mkdir(parents=True, exist_ok=True)
    cached.write_text(json.dumps({"error": error}))
    return error


@dataclass
class PageScore:
    words: Match
    numbers: Match
    cpu: float
    wall: float
    error: str | None


def score(page: SamplePage, result: dict[str, Any]) -> PageScore:
    return PageScore(
        Match.of(words(page.reference), words(result["text"])),
        Match.of(numbers(page.reference), numbers(result["text"])),
        result["cpu"],
        result["wall"],
        result["error"],
    )


def spread(values: list[float | None]) -> tuple[float, float, float] | None:
    present = [value for value in values if value is not None]
    return (min(present), statistics.median(present), max(present)) if present else None


def fmt(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def fmt_spread(values: tuple[float, float, float] | None, digits: int = 2) -> str:
    return "-" if values is None else " / ".join(f"{value:.{digits}f}" for value in values)


def summary(scores: list[PageScore]) -> dict[str, Any]:
    word, number = pooled([s.words for s in scores]), pooled([s.numbers for s in scores])
    return {
        "pages": len(scores),
        "failed": sum(1 for s in scores if s.error),
        "word_precision": word.precision,
        "word_recall": word.recall,
        "word_recall_spread": spread([s.words.recall for s in scores]),
        "word_precision_spread": spread([s.words.precision for s in scores]),
        "number_precision": number.precision,
        "number_recall": number.recall,
        "number_recall_spread": spread([s.numbers.recall for s in scores]),
        "number_precision_spread": spread([s.numbers.precision for s in scores]),
        "cpu_per_page": statistics.mean(s.cpu for s in scores),
        "cpu_spread": spread([s.cpu for s in scores]),
        "wall_per_page": statistics.mean(s.wall for s in scores),
        "wall_spread": spread([s.wall for s in scores]),
    }


def word_quality(
    data_dirs: list[Path], engines: list[str], args: argparse.Namespace, env: Env
) -> dict[str, Any]:
    sample = [page for data_dir in data_dirs for page in sample_pages(data_dir, args.pages, env.seed)]
    sets = list(dict.fromkeys(page.set for page in sample))
    print(
        f"\n== Word quality: {len(sample)} scanned pages ({args.pages} per set), OCR text against the "
        "text layer"
    )
    for name in sets:
        chosen = [page for page in sample if page.set == name]
        print(f"{name}: " + ", ".join(page.label for page in chosen))
    warmup = warmup_pdf(env.cache)
    scores: dict[str, list[PageScore]] = {}
    skipped: dict[str, str] = {}
    notes = []
    for engine in engines:
        if engine in PEERS:
            problem = probe(engine, env, warmup)
            if problem:
                skipped[engine] = problem
                continue
        start = time.perf_counter()
        results, cached = run_engine(engine, sample, env, warmup)
        elapsed = time.perf_counter() - start
        scores[engine] = [score(page, result) for page, result in zip(sample, results, strict=True)]
        notes.append(
            f"{ENGINE_LABELS[engine]}: {cached} of {len(sample)} pages from the cache"
            + ("" if cached == len(sample) else f"; {elapsed:.0f} s wall for the rest")
        )
    for engine, problem in skipped.items():
        print(f"(skipped: {ENGINE_LABELS[engine]} fails on a scanned page: {problem})")
    for note in notes:
        print(f"({note})")

    groups = [*sets, "overall"]
    table: dict[str, dict[str, Any]] = {}
    for engine, engine_scores in scores.items():
        table[engine] = {}
        for group in groups:
            chosen = [
                s for s, page in zip(engine_scores, sample, strict=True) if group in ("overall", page.set)
            ]
            table[engine][group] = summary(chosen)

    print("\naccuracy, pooled over the pages (R spread: per page min / median / max):")
    header = (
        f"{'engine':27}{'set':14}{'pages':>6}{'word P':>8}{'word R':>8}  {'word R spread':19}"
        f"{'num P':>7}{'num R':>7}  {'num R spread':17}"
    )
    print(header)
    print("-" * len(header))
    for engine in table:
        for group in groups:
            row = table[engine][group]
            failed = f" ({row['failed']} failed)" if row["failed"] else ""
            print(
                f"{ENGINE_LABELS[engine]:27}{group:14}{row['pages']:>6}{fmt(row['word_precision']):>8}"
                f"{fmt(row['word_recall']):>8}  {fmt_spread(row['word_recall_spread']):19}"
                f"{fmt(row['number_precision']):>7}{fmt(row['number_recall']):>7}  "
                f"{fmt_spread(row['number_recall_spread']):17}{failed}"
            )
    print("\nspeed per page, each page read in a worker process (one thread), warmed up:")
    header = (
        f"{'engine':27}{'set':14}{'CPU s mean':>11}  {'CPU s min / med / max':23}{'wall s mean':>12}"
        f"  {'ratio':>6}"
    )
    print(header)
    print("-" * len(header))
    base = table.get("tesseract", {})
    for engine in table:
        for group in groups:
            row = table[engine][group]
            reference = base.get(group, {}).get("cpu_per_page")
            ratio = f"{row['cpu_per_page'] / reference:.2f}x" if reference else "-"
            print(
                f"{ENGINE_LABELS[engine]:27}{group:14}{row['cpu_per_page']:>11.2f}  "
                f"{fmt_spread(row['cpu_spread']):23}{row['wall_per_page']:>12.2f}  {ratio:>6}"
            )
    print("(ratio: CPU-seconds per page ÷ ours: Tesseract's, same pages)")

    print("\nper page: word recall / number recall / CPU s per engine ('-': no numbers on the page)")
    width = max(len(page.label) for page in sample) + 2
    header = f"{'set':14}{'page':{width}}{'words':>6}{'nums':>5}" + "".join(
        f"  {ENGINE_LABELS[engine][:20]:>20}" for engine in scores
    )
    print(header)
    print("-" * len(header))
    for position, page in enumerate(sample):
        first = next(iter(scores.values()))[position] if scores else None
        cells = ""
        for engine in scores:
            s = scores[engine][position]
            cell = f"{fmt(s.words.recall, 2)}/{fmt(s.numbers.recall, 2)}/{s.cpu:.1f}" + (
                "!" if s.error else ""
            )
            cells += f"  {cell:>20}"
        expected = f"{first.words.expected:>6}{first.numbers.expected:>5}" if first else ""
        print(f"{page.set:14}{page.label:{width}}{expected}{cells}")
    print("('!': the engine failed on the page)")

    disagreements = []
    for position, page in enumerate(sample):
        recalls = {engine: scores[engine][position].words.recall or 0.0 for engine in scores}
        if len(recalls) > 1 and max(recalls.values()) - min(recalls.values()) >= 0.15:
            disagreements.append((page.label, recalls))
    if disagreements:
        print("\npages where the engines' word recall differs by 0.15 or more:")
        for label, recalls in disagreements:
            print(f"  {label}: " + ", ".join(f"{ENGINE_LABELS[e]} {r:.2f}" for e, r in recalls.items()))
    failures = [
        (page.label, engine, scores[engine][position].error)
        for engine in scores
        for position, page in enumerate(sample)
        if scores[engine][position].error
    ]
    for label, engine, error in failures:
        print(f"  failed: {ENGINE_LABELS[engine]} on {label}: {error}")

    return {
        "sample": [
            {"set": page.set, "document": page.source.stem, "page": page.index + 1} for page in sample
        ],
        "skipped": skipped,
        "summary": table,
        "pages": {
            engine: [
                {
                    "set": page.set,
                    "document": page.source.stem,
                    "page": page.index + 1,
                    "words": vars(s.words) | {"precision": s.words.precision, "recall": s.words.recall},
                    "numbers": vars(s.numbers)
                    | {"precision": s.numbers.precision, "recall": s.numbers.recall},
                    "cpu": s.cpu,
                    "wall": s.wall,
                    "error": s.error,
                }
                for page, s in zip(sample, engine_scores, strict=True)
            ]
            for engine, engine_scores in scores.items()
        },
        "disagreements": [{"page": label, "word_recall": recalls} for label, recalls in disagreements],
    }


# --- retrieval ------------------------------------------------------------------------------------------


def load_pages(path: Path, engine: str, env: Env, cache: bool) -> dict[str, Any]:
    """DocumentLoaderPyMuPDF's pages of a PDF (OCR "auto"), with CPU and wall seconds; cached for scans."""
    key = short_hash([path.name, engine, env.dpi, env.loader_code])
    cached = env.cache / "loads" / f"{path.stem[:60]}-{engine}-{key}.json"
    if cache and not env.refresh and cached.exists():
        return json.loads(cached.read_text()) | {"cached": True}
    name = "rapidocr" if engine == "rapidocr" else "tesseract"
    loader = DocumentLoaderPyMuPDF(ocr_engine=name, ocr_workers=env.workers, ocr_dpi=env.dpi)
    cpu, wall = cpu_seconds(), time.perf_counter()
    reader = os.environ.pop(READER_VARIABLE, None)
    if READERS.get(engine):
        os.environ[READER_VARIABLE] = READERS[engine] or ""  # the loader's workers inherit it
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            pages = loader.load(str(path))
    finally:
        os.environ.pop(READER_VARIABLE, None)
        if reader is not None:
            os.environ[READER_VARIABLE] = reader
    result = {
        "contents": [page["content"] for page in pages],
        "sources": [page.get("text_source", "text_layer") for page in pages],
        "cpu": cpu_seconds() - cpu,
        "wall": time.perf_counter() - wall,
        "warnings": [str(warning.message)[:300] for warning in caught],
    }
    if cache:
        cached.parent.mkdir(parents=True, exist_ok=True)
        cached.write_text(json.dumps(result))
    return result | {"cached": False}


def first_hits(texts: dict[str, list[str]], questions: list[Question]) -> dict[str, int | None]:
    """Rank of the first evidence page per question (None past 10), one retriever over all documents."""
    retriever = SQLitePageRetriever()
    try:
        for name, pages in texts.items():
            retriever.index(name, pages)
        ranks: dict[str, int | None] = {}
        for question in questions:
            found = [
                match.page_number
                for match in retriever.search(question.doc, question.text, max_pages=max(KS))
            ]
            ranks[question.id] = next(
                (rank for rank, page in enumerate(found, 1) if page in question.evidence), None
            )
        return ranks
    finally:
        retriever.close()


def recall(ranks: dict[str, int | None], k: int, ids: list[str] | None = None) -> float:
    chosen = list(ranks) if ids is None else ids
    return (
        sum(1 for qid in chosen if (rank := ranks[qid]) is not None and rank <= k) / len(chosen)
        if chosen
        else 0.0
    )


def retrieval(
    data_dirs: list[Path], engines: list[str], args: argparse.Namespace, env: Env
) -> dict[str, Any]:
    report: dict[str, Any] = {"sets": {}}
    all_questions: list[tuple[str, Question]] = []
    ranks: dict[str, dict[str, int | None]] = {"born-digital": {}} | {engine: {} for engine in engines}
    per_doc: list[dict[str, Any]] = []
    print(
        "\n== Retrieval: whole documents scanned, loaded with DocumentLoaderPyMuPDF() "
        f"(OCR auto, dpi {env.dpi}, {env.workers} workers) and indexed with SQLitePageRetriever"
    )
    for data_dir in data_dirs:
        if not (data_dir / "questions.jsonl").exists():
            continue
        questions = load_questions(data_dir)
        counts: dict[str, int] = {}
        for name in sorted({question.doc for question in questions}):
            with pymupdf.open(data_dir / "pdfs" / f"{name}.pdf") as document:
                counts[name] = document.page_count
        names = sorted(counts, key=lambda name: (counts[name], name))
        chosen = names if args.docs <= 0 else names[: args.docs]
        subset = [question for question in questions if question.doc in chosen]
        print(
            f"\n{data_dir.name}: {len(chosen)} of {len(names)} documents "
            f"({sum(counts[n] for n in chosen)} pages), "
            f"{len(subset)} of {len(questions)} questions: "
            + ", ".join(
                f"{name} ({counts[name]} p., {sum(q.doc == name for q in subset)} q.)" for name in chosen
            )
        )
        texts: dict[str, dict[str, list[str]]] = {"born-digital": {}} | {engine: {} for engine in engines}
        for name in chosen:
            source = data_dir / "pdfs" / f"{name}.pdf"
            born = load_pages(source, "tesseract", env, cache=False)
            texts["born-digital"][name] = born["contents"]
            scan = env.scan(source)
            for engine in engines:
                loaded = load_pages(scan, engine, env, cache=True)
                texts[engine][name] = loaded["contents"]
                scan_words = Match.of(
                    words("\n".join(born["contents"])), words("\n".join(loaded["contents"]))
                )
                per_doc.append(
                    {
                        "set": data_dir.name,
                        "document": name,
                        "engine": engine,
                        "pages": len(loaded["contents"]),
                        "ocr_pages": loaded["sources"].count("ocr"),
                        "born_ocr_pages": born["sources"].count("ocr"),
                        "failed_pages": len(loaded["sources"]) - loaded["sources"].count("ocr"),
                        "cpu": loaded["cpu"],
                        "wall": loaded["wall"],
                        "cached": loaded["cached"],
                        "word_recall": scan_words.recall,
                        "word_precision": scan_words.precision,
                        "warnings": loaded["warnings"],
                    }
                )
        set_ranks = {variant: first_hits(texts[variant], subset) for variant in texts}
        for variant, found in set_ranks.items():
            ranks[variant].update(found)
        all_questions += [(data_dir.name, question) for question in subset]
        report["sets"][data_dir.name] = {
            "documents": {name: counts[name] for name in chosen},
            "questions": len(subset),
            "recall": {
                variant: {str(k): recall(found, k) for k in KS} for variant, found in set_ranks.items()
            },
        }

    if not all_questions:
        print("(no data folder with questions.jsonl: retrieval skipped)")
        return report
    groups = [*report["sets"], "overall"]
    print("\nrecall@k, first evidence page among the first k (Δ: scan − born-digital):")
    header = f"{'set':14}{'questions':>10}  {'text':24}" + "".join(f"{'R@' + str(k):>7}" for k in KS)
    print(header)
    print("-" * len(header))
    report["recall"] = {}
    for group in groups:
        ids = [question.id for name, question in all_questions if group in ("overall", name)]
        born = {k: recall(ranks["born-digital"], k, ids) for k in KS}
        report["recall"][group] = {"questions": len(ids), "born-digital": born}
        print(f"{group:14}{len(ids):>10}  {'born-digital':24}" + "".join(f"{born[k]:7.3f}" for k in KS))
        for engine in engines:
            scanned = {k: recall(ranks[engine], k, ids) for k in KS}
            report["recall"][group][engine] = scanned
            print(f"{'':24}  {engine + ' scan':24}" + "".join(f"{scanned[k]:7.3f}" for k in KS))
            print(f"{'':24}  {'Δ':24}" + "".join(f"{scanned[k] - born[k]:+7.3f}" for k in KS))

    print("\nper document: the loader on the scan (CPU: this process and its OCR workers)")
    header = (
        f"{'set':14}{'document':42}{'engine':11}{'pages':>6}{'OCR':>5}{'fail':>5}{'CPU s/p':>8}"
        f"{'wall s/p':>9}{'word R':>8}{'word P':>8}"
    )
    print(header)
    print("-" * len(header))
    for row in per_doc:
        print(
            f"{row['set']:14}{row['document'][:40]:42}{row['engine']:11}{row['pages']:>6}{row['ocr_pages']:>5}"
            f"{row['failed_pages']:>5}{row['cpu'] / row['pages']:>8.2f}{row['wall'] / row['pages']:>9.2f}"
            f"{fmt(row['word_recall']):>8}{fmt(row['word_precision']):>8}"
            + (" (cached)" if row["cached"] else "")
        )
    report["loader"] = {}
    for engine in engines:
        rows = [row for row in per_doc if row["engine"] == engine]
        pages = sum(row["pages"] for row in rows)
        total = {
            "pages": pages,
            "ocr_pages": sum(row["ocr_pages"] for row in rows),
            "failed_pages": sum(row["failed_pages"] for row in rows),
            "cpu_per_page": sum(row["cpu"] for row in rows) / pages,
            "wall_per_page": sum(row["wall"] for row in rows) / pages,
            "cpu_per_page_spread": spread([row["cpu"] / row["pages"] for row in rows]),
        }
        report["loader"][engine] = total
        print(
            f"{'all':14}{'(' + str(len(rows)) + ' documents)':42}{engine:11}{pages:>6}{total['ocr_pages']:>5}"
            f"{total['failed_pages']:>5}{total['cpu_per_page']:>8.2f}{total['wall_per_page']:>9.2f}"
            f"   (CPU s/page per document min / med / max: {fmt_spread(total['cpu_per_page_spread'])})"
        )
    born_ocr = sum(row["born_ocr_pages"] for row in per_doc if row["engine"] == engines[0])
    if born_ocr:
        print(
            f"({born_ocr} pages of the born-digital originals have no usable text layer and were OCR'd too)"
        )
    for row in per_doc:
        for message in row["warnings"]:
            print(f"  warning, {row['document']} ({row['engine']}): {message}")
    report["documents"] = per_doc

    print(f"\nper question, rank of the first evidence page among the first {max(KS)} ('-': none):")
    width = max(len(question.doc) for _, question in all_questions) + 2
    header = f"{'question':26}{'doc':{width}}{'born':>6}" + "".join(
        f"{engine[:10]:>11}" for engine in engines
    )
    header += "  evidence"
    print(header)
    print("-" * len(header))
    for _, question in all_questions:
        cells = f"{ranks['born-digital'][question.id] or '-':>6}" + "".join(
            f"{ranks[engine][question.id] or '-':>11}" for engine in engines
        )
        evidence = ",".join(map(str, sorted(question.evidence)))
        print(f"{question.id[:25]:26}{question.doc:{width}}{cells}  {evidence}")
    report["ranks"] = ranks
    return report


# --- targets --------------------------------------------------------------------------------------------


def targets(quality: dict[str, Any] | None, found: dict[str, Any] | None) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    tesseract_pages = (quality or {}).get("pages", {}).get("tesseract", [])
    ten_k = [page for page in tesseract_pages if page["set"] == "financebench" and "10K" in page["document"]]
    if ten_k:
        word = pooled([Match(p["words"]["hits"], p["words"]["found"], p["words"]["expected"]) for p in ten_k])
        number = pooled(
            [Match(p["numbers"]["hits"], p["numbers"]["found"], p["numbers"]["expected"]) for p in ten_k]
        )
        where = f"financebench 10-K pages ({len(ten_k)})"
        rows.append(
            {
                "target": f"Tesseract word recall ≥ {TARGET_WORD_RECALL}, {where}",
                "value": word.recall,
                "spread": spread([p["words"]["recall"] for p in ten_k]),
                "pass": (word.recall or 0) >= TARGET_WORD_RECALL,
            }
        )
        rows.append(
            {
                "target": f"Tesseract number recall ≥ {TARGET_NUMBER_RECALL}, {where}",
                "value": number.recall,
                "spread": spread([p["numbers"]["recall"] for p in ten_k]),
                "pass": (number.recall or 0) >= TARGET_NUMBER_RECALL,
            }
        )
    if found and "recall" in found:
        for group, figures in found["recall"].items():
            if "tesseract" not in figures:
                continue
            gap = figures["born-digital"][5] - figures["tesseract"][5]
            rows.append(
                {
                    "target": f"R@5 on Tesseract scans within {TARGET_RECALL_GAP} of born-digital, {group} "
                    f"({figures['questions']} q.)",
                    "value": figures["tesseract"][5] - figures["born-digital"][5],
                    "spread": None,
                    "pass": gap <= TARGET_RECALL_GAP + 1e-9,
                }
            )
    loader = (found or {}).get("loader", {}).get("tesseract")
    if loader:
        rows.append(
            {
                "target": f"≤ {TARGET_CPU_PER_PAGE:g} CPU-s a page, Tesseract, loader on whole scans "
                f"({loader['pages']} pages)",
                "value": loader["cpu_per_page"],
                "spread": loader["cpu_per_page_spread"],
                "pass": loader["cpu_per_page"] <= TARGET_CPU_PER_PAGE,
            }
        )
    summary_row = (quality or {}).get("summary", {}).get("tesseract", {}).get("overall")
    if summary_row:
        rows.append(
            {
                "target": f"≤ {TARGET_CPU_PER_PAGE:g} CPU-s a page, Tesseract, engine alone "
                f"({summary_row['pages']} sampled pages)",
                "value": summary_row["cpu_per_page"],
                "spread": summary_row["cpu_spread"],
                "pass": summary_row["cpu_per_page"] <= TARGET_CPU_PER_PAGE,
            }
        )
    print("\n== Targets")
    header = f"{'target':78}{'measured':>9}  {'spread (min / med / max)':26}result"
    print(header)
    print("-" * len(header))
    for row in rows:
        value = f"{row['value']:+.3f}" if row["target"].startswith("R@5") else fmt(row["value"])
        print(
            f"{row['target']:78}{value:>9}  {fmt_spread(row['spread']):26}{'pass' if row['pass'] else 'FAIL'}"
        )
    print("(R@5 row: scan − born-digital; per-page spreads for recall, per-document for the loader's CPU)")
    return rows


# --- main -----------------------------------------------------------------------------------------------


def version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_dirs", nargs="*", type=Path, help="folders with pdfs/ (and questions.jsonl)")
    parser.add_argument("--pages", type=int, default=12, help="pages per set for word quality (default 12)")
    parser.add_argument(
        "--docs",
        type=int,
        default=8,
        help="shortest documents with questions scanned whole per set (default 8; 0: all)",
    )
    parser.add_argument(
        "--engines",
        default=DEFAULT_ENGINES,
        help=f"engines for word quality, comma-separated, from {', '.join(ENGINES)} "
        f"(default {DEFAULT_ENGINES})",
    )
    parser.add_argument(
        "--retrieval-engines", default="tesseract", help="engines for whole documents (default tesseract)"
    )
    parser.add_argument(
        "--dpi", type=int, default=DEFAULT_OCR_DPI, help="OCR resolution (default the package's)"
    )
    parser.add_argument(
        "--workers", type=int, default=os.cpu_count() or 1, help="OCR processes (default: cores)"
    )
    parser.add_argument(
        "--seed", type=int, default=7, help="page sample and scan degradation seed (default 7)"
    )
    parser.add_argument(
        "--cache", type=Path, default=DEFAULT_CACHE, help=f"cache folder (default {DEFAULT_CACHE})"
    )
    parser.add_argument("--refresh", action="store_true", help="OCR again, ignoring cached OCR text")
    parser.add_argument("--no-quality", dest="quality", action="store_false", help="skip word quality")
    parser.add_argument("--no-retrieval", dest="retrieval", action="store_false", help="skip retrieval")
    parser.add_argument("--json", type=Path, metavar="OUT", help="also write every figure to this JSON file")
    args = parser.parse_args()
    engines = [engine.strip() for engine in args.engines.split(",") if engine.strip()]
    retrieval_engines = [engine.strip() for engine in args.retrieval_engines.split(",") if engine.strip()]
    unknown = [engine for engine in engines if engine not in ENGINES] + [
        engine for engine in retrieval_engines if engine not in OURS
    ]
    if unknown:
        parser.error(f"unknown engine(s): {', '.join(unknown)}")
    data_dirs = args.data_dirs or DEFAULT_DIRS
    args.cache.mkdir(parents=True, exist_ok=True)
    (args.cache / ".gitignore").write_text("*\n")
    env = Env(args.cache, args.seed, args.dpi, args.workers, args.refresh, code_hash(False), code_hash(True))

    start_wall, start_cpu = time.perf_counter(), cpu_seconds()
    print(
        f"Scans: {SCAN['dpi']} dpi grey, rotation ±{SCAN['skew_deg']}°, blur {SCAN['blur_px'][0]}-"
        f"{SCAN['blur_px'][1]} px, noise σ {SCAN['noise_sigma']}, JPEG q{SCAN['jpeg'][0]}-{SCAN['jpeg'][1]}, "
        f"seed {args.seed}. OCR at {args.dpi} dpi, {args.workers} worker processes, {os.cpu_count()} cores."
    )
    print(
        f"PyMuPDF {version('pymupdf')}, RapidOCR {version('rapidocr')}, "
        f"onnxruntime {version('onnxruntime')}, pymupdf4llm {version('pymupdf4llm')}, "
        f"tesserocr {version('tesserocr')} (ours: Tesseract run by {tesseract_reader()}), "
        f"Tesseract data {find_tessdata(['eng'])}; OCR code {env.engine_code}, loader code {env.loader_code}"
    )
    report: dict[str, Any] = {
        "scan": SCAN,
        "seed": args.seed,
        "dpi": args.dpi,
        "workers": args.workers,
        "versions": {
            name: version(name) for name in ("pymupdf", "tesserocr", "rapidocr", "onnxruntime", "pymupdf4llm")
        },
        "tesseract_reader": tesseract_reader(),
        "code": {"engines": env.engine_code, "loader": env.loader_code},
    }
    try:
        quality = word_quality(data_dirs, engines, args, env) if args.quality else None
        found = retrieval(data_dirs, retrieval_engines, args, env) if args.retrieval else None
    finally:
        env.close()
    report["word_quality"] = quality
    report["retrieval"] = found
    report["targets"] = targets(quality, found)
    if env.scan_seconds:
        report["scan_cpu_per_page"] = statistics.mean(env.scan_seconds)
        print(
            f"\nmaking the scans: {report['scan_cpu_per_page']:.2f} CPU-s a page "
            f"({len(env.scan_seconds)} pages made in this run, the rest from the cache)"
        )
    wall, cpu = time.perf_counter() - start_wall, cpu_seconds() - start_cpu
    report["run"] = {"wall": wall, "cpu": cpu}
    print(f"\nthis run: {wall:.0f} s wall, {cpu:.0f} CPU-s (this process and its workers)")
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2, default=list) + "\n", encoding="utf-8")
        print(f"(figures written to {args.json})")


if __name__ == "__main__":
    sys.exit(main())
