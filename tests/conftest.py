"""Shared fixtures. Importing litellm offline stalls on a price-map download unless this is set first."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from typing import NoReturn

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from pathlib import Path

import pytest

# The local model server (tests/llm_server.py) is test support code, imported as a top-level module.
sys.path.insert(0, str(Path(__file__).resolve().parent))

EVAL_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "eval" / "financebench"


@pytest.fixture
def eval_dir() -> Path:
    """The FinanceBench sample beside the checkout; tests that need it skip when it is absent."""
    if not (EVAL_DIR / "questions.jsonl").is_file():
        pytest.skip(f"evaluation data not found at {EVAL_DIR}")
    return EVAL_DIR


@pytest.fixture
def llm_server(monkeypatch: pytest.MonkeyPatch):
    """A local OpenAI-compatible server; litellm's ``openai/<name>`` models are pointed at it."""
    from llm_server import LLMServer

    with LLMServer() as server:
        monkeypatch.setenv("OPENAI_API_BASE", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
        yield server


@pytest.fixture
def make_pdf(tmp_path: Path):
    """Write a PDF with one page per text (PyMuPDF), returning its path."""
    import pymupdf

    def make(texts: list[str], name: str = "doc.pdf", **save: object) -> Path:
        document = pymupdf.open()
        for text in texts:
            page = document.new_page()
            page.insert_textbox(pymupdf.Rect(50, 50, 550, 800), text, fontsize=11)
        path = tmp_path / name
        document.save(path, **save)
        document.close()
        return path

    return make


# -- retriever backends -------------------------------------------------------------------------------

#: Every retriever backend; the shared retriever tests run once per backend.
BACKENDS = ("sqlite", "postgres")


def unavailable(variable: str, reason: str) -> NoReturn:
    """Skip for lack of ``reason``; fail instead where ``variable`` is ``1`` (CI: the test must run)."""
    if os.environ.get(variable) == "1":
        pytest.fail(f"{variable}=1 but {reason}")
    pytest.skip(reason)


@pytest.fixture
def rapidocr_engine() -> None:
    """RapidOCR's packages (the [rapidocr] extra). Skips without them, unless ``PAGEINDEX_REQUIRE_RAPIDOCR=1``
    (CI installs them)."""
    from extract_thinker_pageindex.ocr.settings import engine_problem, ocr_settings

    problem = engine_problem(ocr_settings(ocr_engine="rapidocr"))
    if problem is not None:
        unavailable("PAGEINDEX_REQUIRE_RAPIDOCR", problem)


@pytest.fixture(scope="session")
def postgres_dsn():
    """A real PostgreSQL server: ``PAGEINDEX_TEST_POSTGRES_DSN``, or one started from the machine's binaries
    for the session. Skips when psycopg (the ``[postgres]`` extra) or the binaries are missing, unless
    ``PAGEINDEX_REQUIRE_POSTGRES=1`` (CI), where that fails."""
    try:
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError:
        unavailable("PAGEINDEX_REQUIRE_POSTGRES", "the [postgres] extra (psycopg, psycopg_pool) is missing")
    given = os.environ.get("PAGEINDEX_TEST_POSTGRES_DSN")
    if given:
        yield given
        return
    from postgres_server import PostgresServer, find_binaries

    binaries = find_binaries()
    if binaries is None:
        unavailable("PAGEINDEX_REQUIRE_POSTGRES", "no PostgreSQL binaries (initdb, pg_ctl) on this machine")
    server = PostgresServer(binaries).start()
    try:
        yield server.dsn
    finally:
        server.remove()


class RetrieverMaker:
    """Opens retrievers of one backend for a test and cleans up after it: closes them and, for PostgreSQL,
    drops the schemas made for them (each retriever gets a fresh schema unless one is named)."""

    def __init__(self, backend: str, request: pytest.FixtureRequest) -> None:
        self.backend = backend
        self._opened: list = []
        self._schemas: set[str] = set()
        # The server first: without the [postgres] extra or a server, the test skips here, at setup.
        self._dsn = request.getfixturevalue("postgres_dsn") if backend == "postgres" else None

    @property
    def dsn(self) -> str:
        assert self._dsn is not None, "the SQLite backend has no connection string"
        return self._dsn

    def fresh_schema(self) -> str:
        import uuid

        schema = f"test_{uuid.uuid4().hex[:16]}"
        self._schemas.add(schema)
        return schema

    def __call__(self, where: object = None, **options):
        """A new retriever. ``where``: an SQLite path (default in memory), or a PostgreSQL schema name
        (default a fresh one); two calls with the same ``where`` open the same index."""
        if self.backend == "sqlite":
            from extract_thinker_pageindex import SQLitePageRetriever

            opened = SQLitePageRetriever(":memory:" if where is None else where, **options)
        else:
            from extract_thinker_pageindex import PostgresPageRetriever

            schema = self.fresh_schema() if where is None else str(where)
            self._schemas.add(schema)
            opened = PostgresPageRetriever(self.dsn, schema=schema, **options)
        self._opened.append(opened)
        return opened

    def where(self, tmp_path: Path) -> object:
        """A place for an index both backends can reopen: a file path, or a schema name."""
        return tmp_path / "pages.sqlite" if self.backend == "sqlite" else self.fresh_schema()

    def cleanup(self) -> None:
        for opened in self._opened:
            opened.close()
        if self._schemas and self._dsn is not None:
            import psycopg
            from psycopg import sql

            with psycopg.connect(self.dsn, autocommit=True) as conn:
                for schema in self._schemas:
                    conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


@pytest.fixture(params=BACKENDS)
def make_retriever(request: pytest.FixtureRequest):
    """Open retrievers of each backend in turn (see :class:`RetrieverMaker`)."""
    maker = RetrieverMaker(request.param, request)
    try:
        yield maker
    finally:
        maker.cleanup()


@pytest.fixture(scope="module", params=BACKENDS)
def make_module_retriever(request: pytest.FixtureRequest):
    """As ``make_retriever``, for retrievers shared by the tests of a module."""
    maker = RetrieverMaker(request.param, request)
    try:
        yield maker
    finally:
        maker.cleanup()


# -- a real browser -----------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def browser():
    """Headless Chromium driven by playwright: the system's ``chromium`` (``PAGEINDEX_CHROMIUM`` names
    another). Skips when playwright or Chromium is missing, unless ``PAGEINDEX_REQUIRE_BROWSER=1`` (CI),
    where that fails."""
    try:
        from playwright.sync_api import Error as PlaywrightError
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("PAGEINDEX_REQUIRE_BROWSER", "playwright (the [dev] extra) is not installed")
    executable = os.environ.get("PAGEINDEX_CHROMIUM") or next(
        filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))), None
    )
    if executable is None:
        unavailable("PAGEINDEX_REQUIRE_BROWSER", "no Chromium (chromium, chromium-browser) on this machine")
    with sync_playwright() as playwright:
        try:
            launched = playwright.chromium.launch(executable_path=executable, headless=True)
        except PlaywrightError as exc:
            unavailable("PAGEINDEX_REQUIRE_BROWSER", f"Chromium ({executable}) did not start: {exc}")
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    """A 256 KiB tmpfs: a disk that really fills up. Needs root (mount), else the test is skipped."""
    from system_support import mounted_tmpfs

    with mounted_tmpfs(tmp_path / "disk", "size=256k") as mount_point:
        yield mount_point


@pytest.fixture
def open_folder() -> Iterator[Path]:
    """A folder any user can reach (pytest's tmp_path is private to root)."""
    folder = Path(tempfile.mkdtemp(prefix="retriever-read-only-"))
    folder.chmod(0o777)
    try:
        yield folder
    finally:
        folder.chmod(0o755)
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def schemas(postgres_dsn: str) -> Iterator[list[str]]:
    """Fresh PostgreSQL schema names for a test (``postgres_schemas.new_schema``), dropped after it."""
    import psycopg
    from psycopg import sql

    made: list[str] = []
    yield made
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        for schema in made:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


# -- the fast subset: pytest -m "not slow" --------------------------------------------------------------
#
# CI runs every test (`pytest -q`). While editing, `pytest -q -m "not slow"` leaves out the tests marked
# `slow` here, and runs in about a minute on 2 cores. They are marked by name, from the lists below, never by
# a time measured during the run, so every machine and every run leaves out the same tests. A test is slow
# when it needs a server or a cluster (PostgreSQL, Ray, a browser), starts other processes (OCR and batch
# workers, writers killed on purpose, whole scripts and commands in a fresh interpreter), builds big inputs
# (a 2,000-page PDF, a 40 MB index, 30,000-pixel pictures) or fuzzes at length. A new test that takes more
# than a second or so on 2 cores belongs here: its module in SLOW_MODULES when all of the module is like it,
# else its name in SLOW_TESTS. (tests/test_docs_snippets.py marks its own runs with @pytest.mark.slow.)

#: Modules whose every test is slow.
SLOW_MODULES = frozenset(
    {
        "test_batch.py",  # worker processes and a Ray cluster
        "test_batch_hardening.py",  # worker processes meeting FIFOs, links and odd names
        "test_examples.py",  # each example and README command in a fresh interpreter
        "test_image_bounds.py",  # pictures of 32,000 and 40,000 pixels, 59-million-pixel PNGs
        "test_ocr.py",  # Tesseract and RapidOCR on real scans, OCR worker processes
        "test_postgres_hardening.py",  # a PostgreSQL server
        "test_reliability.py",  # killed writers, racing processes, a 2,000-page PDF, Hypothesis
        "test_retriever_postgres.py",  # a PostgreSQL server
        "test_saved_index_hardening.py",  # indexes of tens of megabytes, memory peaks
        "test_startup.py",  # what each command imports, each in a fresh interpreter
        "test_view.py",  # a headless Chromium, a filing's view
        "test_view_matches.py",  # a headless Chromium
        "test_vision_reader.py",  # real page pictures through the vision reader
    }
)

#: Fixtures that start a server, a cluster or a browser: a test that uses one is slow, wherever it is.
SLOW_FIXTURES = frozenset({"browser", "postgres_dsn", "ray_cluster", "schemas"})

#: Single slow tests of otherwise fast modules, as ``module::test`` (every parametrisation of it).
SLOW_TESTS = frozenset(
    {
        # A fresh interpreter that imports ExtractThinker and litellm (several seconds each).
        "test_cli_hardening.py::test_a_later_framework_import_reuses_the_contract_class_and_extracts_into_it",
        "test_cli_hardening.py::test_commands_run_without_importing_the_framework",
        "test_vision_faults.py::test_the_command_line_exits_non_zero_when_a_page_answer_has_the_wrong_shape",
        "test_cli_batch.py::test_batch_runs_as_a_process_with_worker_processes",
        "test_cli_batch.py::test_a_failed_document_is_reported_and_exits_1",
        "test_cli.py::test_module_entry_point_runs_as_a_process",
        # Processes sharing one file.
        "test_retriever.py::test_processes_share_one_index",
        "test_hardening.py::test_two_processes_racing_to_save_the_same_new_index",
        # Hypothesis and fuzzing over many inputs.
        "test_loader_pymupdf.py::test_damaged_bytes_only_ever_raise_project_errors",
        "test_retriever.py::test_search_never_raises_on_fts5_operator_soup",
        "test_retriever.py::test_search_never_raises_on_any_text",
        "test_retriever.py::test_any_text_doc_id_round_trips",
        "test_retriever_inputs.py::test_any_code_points_in_doc_id_text_and_query_never_raise",
        # Whole filings of ../shared/eval, pages rendered at full resolution.
        "test_pdf_text.py::test_font_statistics_recover_most_of_a_10k_outline",
        "test_pdf_text.py::test_built_documents_validate_and_round_trip",
        "test_loader_pymupdf.py::test_vision_mode_adds_png_images_at_the_dpi",
        "test_loader_pymupdf.py::test_adobe_10k_matches_raw_pymupdf",
        "test_retriever_inputs.py::test_load_pages_speaks_of_retrieved_pages",
        "test_retriever_inputs.py::test_a_load_that_finds_nothing_clears_last_matches",
    }
)

#: Parametrised fixtures whose ``postgres`` case runs against a PostgreSQL server.
BACKEND_FIXTURES = ("make_retriever", "make_module_retriever")


def _is_slow(item: pytest.Item) -> bool:
    module = item.path.name
    if module in SLOW_MODULES or SLOW_FIXTURES.intersection(getattr(item, "fixturenames", ())):
        return True
    if f"{module}::{getattr(item, 'originalname', item.name)}" in SLOW_TESTS:
        return True
    callspec = getattr(item, "callspec", None)
    return callspec is not None and any(callspec.params.get(name) == "postgres" for name in BACKEND_FIXTURES)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the slow tests (see SLOW_MODULES, SLOW_FIXTURES, SLOW_TESTS and BACKEND_FIXTURES above)."""
    for item in items:
        if _is_slow(item):
            item.add_marker(pytest.mark.slow)
