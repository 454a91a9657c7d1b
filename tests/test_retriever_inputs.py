"""Hard inputs to the retriever and the loaders: odd pages, unencodable text, full disks, other
applications' files, read-only files, missing paths. Real SQLite files, real PDFs, no fakes."""

from __future__ import annotations

import os
import random
import sqlite3
from collections.abc import Callable
from io import BytesIO
from pathlib import Path
from typing import Any

import pytest
from extract_thinker import Contract, Extractor
from extract_thinker.document_loader.document_loader import DocumentLoader
from extract_thinker.document_loader.document_loader_txt import DocumentLoaderTxt
from extract_thinker.exceptions import ExtractThinkerError
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from extract_thinker_pageindex import (
    DocumentLoaderPageIndex,
    DocumentLoaderPyMuPDF,
    DocumentLoaderRAG,
    DocumentLoadError,
    IndexFormatError,
    InvalidOptionError,
    NoMatchError,
    PageIndexError,
    PageSpecError,
    RetrieverError,
    SQLitePageRetriever,
)
from extract_thinker_pageindex.loaders.rag import document_id
from llm_server import LLMServer
from system_support import as_another_user


def numbers(matches: list[Any]) -> list[int]:
    return [match.page_number for match in matches]


@pytest.fixture
def retriever(make_retriever: Any, tmp_path: Path) -> Any:
    """A retriever of each backend in turn (an SQLite file, a PostgreSQL schema)."""
    return make_retriever(make_retriever.where(tmp_path))


# -- what counts as pages -----------------------------------------------------------------------------


def test_a_lone_string_is_one_page(retriever: Any) -> None:
    retriever.index("doc", "The notice period is thirty days.")
    assert retriever.page_count("doc") == 1
    assert numbers(retriever.search("doc", "notice period")) == [1]
    assert retriever.snippet("doc", 1, "notice") == "The [notice] period is thirty days."


def test_a_lone_page_dict_is_one_page(retriever: Any) -> None:
    retriever.index("doc", {"content": "Governing law: Delaware.", "sections": ["Miscellaneous"]})
    assert retriever.page_count("doc") == 1
    assert numbers(retriever.search("doc", "delaware miscellaneous")) == [1]


def test_document_id_reads_a_lone_string_as_one_page() -> None:
    assert document_id("one page of text") == document_id(["one page of text"])
    assert document_id("one page of text") != document_id(list("one page of text"))


def test_none_is_a_page_without_text_that_keeps_its_position(retriever: Any) -> None:
    retriever.index("doc", ["alpha clause", None, "gamma clause", {"content": None}])
    assert retriever.page_count("doc") == 4
    assert numbers(retriever.search("doc", "gamma")) == [3]
    assert retriever.snippet("doc", 2, "clause") == ""


@pytest.mark.parametrize(
    ("page", "type_name"),
    [(42, "int"), (b"raw bytes", "bytes"), (3.5, "float"), (True, "bool"), (object(), "object")],
)
def test_a_page_of_another_type_is_refused_by_position(retriever: Any, page: object, type_name: str) -> None:
    retriever.index("doc", ["original wording"])
    with pytest.raises(InvalidOptionError) as info:
        retriever.index("doc", ["replacement", page])  # type: ignore[list-item]
    message = str(info.value)
    assert message.startswith(f"Page 2 is {type_name}")
    assert "a page is a dict" in message
    # Nothing was replaced.
    assert retriever.page_count("doc") == 1
    assert numbers(retriever.search("doc", "original")) == [1]


@pytest.mark.parametrize(("pages", "words"), [(None, "NoneType"), (7, "int"), (b"text", "decode it")])
def test_pages_that_are_no_page_list_are_refused(retriever: Any, pages: object, words: str) -> None:
    with pytest.raises(InvalidOptionError, match=words):
        retriever.index("doc", pages)  # type: ignore[arg-type]
    assert "doc" not in retriever


# -- text SQLite cannot encode: lone surrogates ------------------------------------------------------

# What os.listdir gives for a file named with the Latin-1 bytes of "résumé": é is byte 0xE9, no UTF-8.
LISTDIR_NAME = "r\udce9sum\udce9.txt"


def test_a_doc_id_with_lone_surrogates_works_everywhere_and_persists(
    make_retriever: Any, tmp_path: Path
) -> None:
    path = make_retriever.where(tmp_path)
    with make_retriever(path) as retriever:
        retriever.index(LISTDIR_NAME, ["termination penalty", "other terms"])
        # The replacement character is another id, never the same document.
        retriever.index("r\ufffdsum\ufffd.txt", ["unrelated penalty page", "more"])
        assert LISTDIR_NAME in retriever
        assert retriever.page_count(LISTDIR_NAME) == 2
        assert numbers(retriever.search(LISTDIR_NAME, "termination")) == [1]
        assert retriever.snippet(LISTDIR_NAME, 1, "penalty") == "termination [penalty]"
    with make_retriever(path) as reopened:
        assert reopened.document_ids() == sorted([LISTDIR_NAME, "r\ufffdsum\ufffd.txt"])
        assert reopened.search("r\ufffdsum\ufffd.txt", "termination") == []
        assert reopened.delete(LISTDIR_NAME) is True
        assert LISTDIR_NAME not in reopened
        assert reopened.document_ids() == ["r\ufffdsum\ufffd.txt"]


def test_page_text_and_queries_with_lone_surrogates_are_searchable(retriever: Any) -> None:
    retriever.index(
        "doc",
        [
            {"content": "Early termination\udcff penalty", "sections": ["Fees \udcff"]},
            "smile \ud83d\ude00 here",  # a surrogate pair split in two code points, as some JSON gives
        ],
    )
    assert numbers(retriever.search("doc", "termination\udcff fees")) == [1]
    # The lone surrogate separates words, as an unknown character would.
    assert retriever.snippet("doc", 1, "penalty\udcff") == "Early termination\ufffd [penalty]"
    assert retriever.snippet("doc", 2, "smile") == "[smile] \U0001f600 here"


@pytest.fixture(scope="module")
def shared_retriever(make_module_retriever: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    where = None
    if make_module_retriever.backend == "sqlite":
        where = tmp_path_factory.mktemp("surrogates") / "pages.sqlite"
    opened = make_module_retriever(where)
    opened.index("neighbour", ["everywhere next door"])
    return opened


# Any code point, with lone surrogates drawn often (Hypothesis's text() leaves them out by default).
SURROGATES = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF, categories=["Cs"])
ANY_TEXT = st.text(st.one_of(st.characters(), SURROGATES))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(doc_id=ANY_TEXT, text=ANY_TEXT)
@example(doc_id="\udcff", text="penalty\udcff")
@example(doc_id="\ud800\udc00", text="\ud83d\ude00\udfff")
def test_any_code_points_in_doc_id_text_and_query_never_raise(
    shared_retriever: Any, doc_id: str, text: str
) -> None:
    retriever = shared_retriever
    if doc_id == "neighbour":
        return
    retriever.index(doc_id, [f"everywhere {text}", "everywhere plain"])
    try:
        assert doc_id in retriever
        assert doc_id in retriever.document_ids()
        for query in (text, f"everywhere {text}"):
            assert {m.page_number for m in retriever.search(doc_id, query, max_pages=5)} <= {1, 2}
            assert isinstance(retriever.snippet(doc_id, 1, query), str)
        assert retriever.snippet(doc_id, 2, "plain") == "everywhere [plain]"
    finally:
        assert retriever.delete(doc_id) is True
    assert numbers(retriever.search("neighbour", "everywhere")) == [1]


class Latin1Loader(DocumentLoader):
    """A third-party-style loader that heads each file's text with its name and decodes bytes with
    surrogateescape, as Python does for file names: both can hold lone surrogates."""

    SUPPORTED_FORMATS = ["txt"]  # noqa: RUF012 - the framework's attribute

    def load(self, source: Any) -> list[dict[str, Any]]:
        text = Path(source).read_bytes().decode("utf-8", "surrogateescape")
        return [{"content": f"{Path(source).name}\n{part}"} for part in text.split("\n\n")]


def test_rag_loads_a_file_whose_name_and_text_are_not_utf8(tmp_path: Path) -> None:
    raw_name = b"r\xe9sum\xe9 terms.txt"
    with open(os.path.join(os.fsencode(tmp_path), raw_name), "wb") as handle:
        handle.write(b"General scope.\n\nEarly termination penalty: caf\xe9 fees.\n\nPayment terms.")
    (name,) = os.listdir(tmp_path)
    assert "\udce9" in name  # what os.listdir really gives
    with DocumentLoaderRAG(Latin1Loader(), query="termination penalty", max_pages=1) as loader:
        pages = loader.load(str(tmp_path / name))
    assert [page["page_number"] for page in pages] == [2]
    assert pages[0]["content"].endswith("Early termination penalty: caf\udce9 fees.")  # the page, intact


# -- option values that cannot work ------------------------------------------------------------------


@pytest.mark.parametrize("timeout", [float("inf"), float("nan"), -1, True, "30"])
def test_a_timeout_that_cannot_work_is_refused(tmp_path: Path, timeout: object) -> None:
    with pytest.raises(InvalidOptionError, match="timeout must be a finite number"):
        SQLitePageRetriever(tmp_path / "pages.sqlite", timeout=timeout)  # type: ignore[arg-type]
    assert not (tmp_path / "pages.sqlite").exists()


def test_a_path_with_nul_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidOptionError, match="NUL"):
        SQLitePageRetriever(str(tmp_path / "pa\x00ges.sqlite"))


# -- SQLite's own errors -----------------------------------------------------------------------------


def big_pages(count: int = 20, words: int = 3000) -> list[str]:
    """Pages of random, incompressible words: many database pages of FTS postings."""
    rng = random.Random(11)
    return [" ".join(f"w{rng.getrandbits(40):x}" for _ in range(words)) for _ in range(count)]


def assert_full_disk_changed_nothing(retriever: Any, path: Path) -> None:
    with pytest.raises(RetrieverError) as info:
        retriever.index("big", big_pages())
    assert isinstance(info.value, PageIndexError)
    assert not isinstance(info.value, sqlite3.Error)
    assert isinstance(info.value.__cause__, sqlite3.OperationalError)
    assert "database or disk is full" in str(info.value)
    assert str(path) in str(info.value)
    # Replacing an indexed document fails the same way and keeps its pages.
    with pytest.raises(RetrieverError, match="full"):
        retriever.index("keep", big_pages())
    for opened in (retriever, SQLitePageRetriever(path)):
        assert opened.document_ids() == ["keep"]
        assert opened.page_count("keep") == 3
        assert numbers(opened.search("keep", "keep")) == [1, 2, 3]
    # The retriever is still usable for writes that fit.
    retriever.index("small", "it still fits")
    assert retriever.document_ids() == ["keep", "small"]


def test_a_database_that_is_full_raises_the_projects_error_and_keeps_its_data(tmp_path: Path) -> None:
    path = tmp_path / "pages.sqlite"
    with SQLitePageRetriever(path) as retriever:
        retriever.index("keep", ["keep this page"] * 3)
        # SQLite's own size cap gives the real SQLITE_FULL, on any platform. It is a setting of the
        # connection, so it has to be made on the retriever's own.
        (pages,) = retriever._conn.execute("PRAGMA page_count").fetchone()
        retriever._conn.execute(f"PRAGMA max_page_count = {pages + 8}")
        assert_full_disk_changed_nothing(retriever, path)


def test_a_disk_that_is_full_raises_the_projects_error_and_keeps_its_data(tiny_disk: Path) -> None:
    path = tiny_disk / "pages.sqlite"
    with SQLitePageRetriever(path) as retriever:
        retriever.index("keep", ["keep this page"] * 3)
        assert_full_disk_changed_nothing(retriever, path)


def test_a_lock_held_too_long_raises_the_projects_error(tmp_path: Path) -> None:
    path = tmp_path / "pages.sqlite"
    with SQLitePageRetriever(path, timeout=0) as retriever:
        retriever.index("doc", "first version")
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # another process's writer, holding the write lock
        try:
            with pytest.raises(RetrieverError, match="locked") as info:
                retriever.index("doc", "second version")
            assert isinstance(info.value.__cause__, sqlite3.OperationalError)
            assert "timeout" in str(info.value)
        finally:
            other.execute("ROLLBACK")
            other.close()
        assert retriever.snippet("doc", 1, "version") == "first [version]"


def test_a_file_that_cannot_be_created_raises_retriever_error(tmp_path: Path) -> None:
    path = tmp_path / "no such folder" / "pages.sqlite"
    with pytest.raises(RetrieverError, match="Cannot open the retriever database") as info:
        SQLitePageRetriever(path)
    assert isinstance(info.value, RuntimeError)
    assert isinstance(info.value, PageIndexError)
    assert isinstance(info.value.__cause__, sqlite3.OperationalError)
    assert str(path) in str(info.value)
    assert not path.parent.exists()


def test_a_damaged_file_raises_index_format_error(tmp_path: Path) -> None:
    path = tmp_path / "pages.sqlite"
    with SQLitePageRetriever(path) as retriever:
        retriever.index("doc", [f"page {number} alpha beta gamma " * 50 for number in range(200)])
    data = bytearray(path.read_bytes())
    noise = random.Random(3)
    for offset in range(8 * 4096, len(data), 4096):  # the schema page survives, the index does not
        data[offset : offset + 4096] = noise.randbytes(4096)
    path.write_bytes(bytes(data))
    with (
        pytest.raises(IndexFormatError, match="not a page retriever database") as info,
        SQLitePageRetriever(path) as damaged,
    ):
        damaged.search("doc", "alpha")
    assert isinstance(info.value.__cause__, sqlite3.DatabaseError)


# -- other applications' files -----------------------------------------------------------------------


def make_app_database(path: Path) -> None:
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
        conn.execute("INSERT INTO customers (name) VALUES ('Ada'), ('Grace')")
    conn.close()


def journal_mode(path: Path) -> str:
    conn = sqlite3.connect(path)
    try:
        return str(conn.execute("PRAGMA journal_mode").fetchone()[0])
    finally:
        conn.close()


def test_another_applications_database_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "app.db"
    make_app_database(path)
    before = path.read_bytes()
    with pytest.raises(IndexFormatError) as info:
        SQLitePageRetriever(path)
    message = str(info.value)
    assert "'customers'" in message and "allow_foreign_tables=True" in message and str(path) in message
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["app.db"]  # no -wal, no -shm, no journal left behind
    assert journal_mode(path) == "delete"


def test_allow_foreign_tables_adds_the_index_beside_them(tmp_path: Path) -> None:
    path = tmp_path / "app.db"
    make_app_database(path)
    with SQLitePageRetriever(path, allow_foreign_tables=True) as retriever:
        retriever.index("contract", ["governing law: Delaware", "fees"])
        assert numbers(retriever.search("contract", "delaware")) == [1]
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT name FROM customers ORDER BY id").fetchall() == [("Ada",), ("Grace",)]
    conn.close()
    assert journal_mode(path) == "delete"  # the application's choice, kept
    # The file now holds both; each open has to say so again.
    after = path.read_bytes()
    with pytest.raises(IndexFormatError, match="allow_foreign_tables"):
        SQLitePageRetriever(path)
    assert path.read_bytes() == after
    with SQLitePageRetriever(path, allow_foreign_tables=True, read_only=True) as reader:
        assert numbers(reader.search("contract", "delaware")) == [1]


@pytest.mark.parametrize(
    ("statement", "named"),
    [
        ("CREATE TABLE pi_docs (name TEXT, size INTEGER)", "pi_docs"),
        ("CREATE TABLE pi_fts (body, headings, descriptions)", "pi_fts"),
        ("CREATE VIEW pi_meta AS SELECT 'schema_version' AS key, '1' AS value", "pi_meta"),
        ("CREATE TABLE PI_DOCS (doc_id, first_row, page_count)", "PI_DOCS"),
    ],
    ids=["other-columns", "plain-not-fts5", "view", "other-case"],
)
@pytest.mark.parametrize("allow", [False, True])
def test_a_retriever_named_table_of_another_layout_is_refused(
    tmp_path: Path, statement: str, named: str, allow: bool
) -> None:
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute(statement)
    conn.commit()
    conn.close()
    before = path.read_bytes()
    with pytest.raises(IndexFormatError) as info:
        SQLitePageRetriever(path, allow_foreign_tables=allow)
    assert f"named {named!r} where the page retriever keeps " in str(info.value)
    assert path.read_bytes() == before
    assert journal_mode(path) == "delete"


# -- read-only files ---------------------------------------------------------------------------------


def make_index(path: Path) -> None:
    with SQLitePageRetriever(path) as retriever:
        retriever.index("doc", ["alpha beta", "gamma delta"])


def read_only_session(path: Path) -> dict[str, Any]:
    """Everything a reader does with a read-only retriever file, and what a writer is told."""
    result: dict[str, Any] = {}
    with SQLitePageRetriever(path) as retriever:
        result["read_only"] = retriever.read_only
        result["matches"] = numbers(retriever.search("doc", "gamma"))
        result["contains"] = "doc" in retriever
        result["snippet"] = retriever.snippet("doc", 1, "alpha")
        result["doc_ids"] = retriever.document_ids()
        for name, write in (
            ("index", lambda: retriever.index("new", "text")),
            ("delete", lambda: retriever.delete("doc")),
        ):
            try:
                write()
                result[name] = "written"
            except RetrieverError as exc:
                result[name] = f"{type(exc).__name__}: {exc}"
    return result


EXPECTED_READS = {
    "read_only": True,
    "matches": [2],
    "contains": True,
    "snippet": "[alpha] beta",
    "doc_ids": ["doc"],
}


def assert_read_only(result: dict[str, Any], reason: str) -> None:
    assert {key: result[key] for key in EXPECTED_READS} == EXPECTED_READS
    for name in ("index", "delete"):
        assert result[name].startswith("RetrieverError: ")
        assert "is open read-only" in result[name] and reason in result[name]


def index_with_journal(path: Path, journal: str) -> Path:
    """A retriever file left in the given journal mode ("wal", as the retriever writes it, or "delete")."""
    make_index(path)
    if journal == "delete":
        conn = sqlite3.connect(path)
        conn.execute("PRAGMA journal_mode = DELETE")
        conn.close()
    return path


@pytest.mark.parametrize("journal", ["wal", "delete"])
def test_a_read_only_file_is_opened_for_searching(open_folder: Path, journal: str) -> None:
    path = index_with_journal(open_folder / "pages.sqlite", journal)
    path.chmod(0o444)
    before = path.read_bytes()
    assert_read_only(as_another_user(lambda: read_only_session(path)), "the file is read-only")
    assert path.read_bytes() == before


@pytest.mark.parametrize("journal", ["wal", "delete"])
def test_a_file_in_a_read_only_folder_is_opened_for_searching(open_folder: Path, journal: str) -> None:
    path = index_with_journal(open_folder / "pages.sqlite", journal)
    path.chmod(0o666)  # the file itself may be written: only the folder (for the journal) may not
    before = path.read_bytes()
    open_folder.chmod(0o555)
    try:
        result = as_another_user(lambda: read_only_session(path))
    finally:
        open_folder.chmod(0o777)
    assert_read_only(result, "its folder is read-only")
    assert path.read_bytes() == before
    assert sorted(os.listdir(open_folder)) == ["pages.sqlite"]


def test_a_writer_whose_shared_files_are_not_writable_is_served_read_only(open_folder: Path) -> None:
    path = open_folder / "pages.sqlite"
    with SQLitePageRetriever(path) as owner:  # another user's live retriever keeps -wal and -shm open
        owner.index("doc", ["alpha beta", "gamma delta"])
        path.chmod(0o666)
        for suffix in ("-wal", "-shm"):
            Path(f"{path}{suffix}").chmod(0o444)
        result = as_another_user(lambda: read_only_session(path))
    assert_read_only(result, "SQLite cannot write it")


def test_read_only_true_opens_for_searching_and_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "pages.sqlite"
    make_index(path)
    before = path.read_bytes()
    with SQLitePageRetriever(path, read_only=True) as retriever:
        assert retriever.read_only is True
        assert "read-only" in repr(retriever)
        assert numbers(retriever.search("doc", "gamma")) == [2]
        assert retriever.page_count("doc") == 2
        with pytest.raises(RetrieverError, match=r"is open read-only \(it was opened with read_only=True\)"):
            retriever.index("doc", "replacement")
        with pytest.raises(RetrieverError, match="is open read-only"):
            retriever.delete("doc")
    assert path.read_bytes() == before


def test_read_only_true_needs_an_existing_retriever_file(tmp_path: Path) -> None:
    with pytest.raises(InvalidOptionError, match="is no file"):
        SQLitePageRetriever(tmp_path / "absent.sqlite", read_only=True)
    assert not (tmp_path / "absent.sqlite").exists()
    with pytest.raises(InvalidOptionError, match="is no file"):
        SQLitePageRetriever(read_only=True)
    empty = tmp_path / "empty.sqlite"
    sqlite3.connect(empty).close()
    with pytest.raises(IndexFormatError, match=r"not a page retriever database .* no index can be created"):
        SQLitePageRetriever(empty, read_only=True)


# -- DocumentLoaderRAG -------------------------------------------------------------------------------


def test_a_load_that_finds_nothing_clears_last_matches(make_pdf) -> None:
    matching = make_pdf(["intro", "indemnification clause", "end"], name="matching.pdf")
    unrelated = make_pdf(["weather report", "sunny"], name="unrelated.pdf")
    with DocumentLoaderRAG(DocumentLoaderPyMuPDF(), query="indemnification", max_pages=2) as loader:
        loader.load(str(matching))
        assert numbers(loader.last_matches) == [2]
        with pytest.raises(NoMatchError):
            loader.load(str(unrelated))
        assert loader.last_matches == []


def test_load_pages_speaks_of_retrieved_pages(make_pdf) -> None:
    pdf = make_pdf([f"page {number} penalty" for number in range(1, 7)], name="penalties.pdf")
    with DocumentLoaderRAG(DocumentLoaderPyMuPDF(), query="penalty", max_pages=3) as loader:
        with pytest.raises(PageSpecError) as info:
            loader.load_pages(str(pdf), [4])
        message = str(info.value)
        assert message.startswith("Page position 4 is out of range: the set the query retrieved contains 3")
        assert "the document" not in message
        assert len(loader.load_pages(str(pdf), [1, 3])) == 2


def test_a_loader_that_returns_no_pages_is_named(tmp_path: Path) -> None:
    class NumberLoader(DocumentLoader):
        SUPPORTED_FORMATS = ["txt"]  # noqa: RUF012 - the framework's attribute

        def load(self, source: Any) -> list[Any]:
            return ["first page", 2]

    with (
        DocumentLoaderRAG(NumberLoader(), query="page") as loader,
        pytest.raises(DocumentLoadError, match=r"NumberLoader returned unusable pages .* Page 2 is int"),
    ):
        loader.load("any.txt")


# -- can_handle: a missing file is named, not "no suitable loader" ---------------------------------


LOADERS: dict[str, Callable[[], DocumentLoader]] = {
    "pymupdf": DocumentLoaderPyMuPDF,
    "pageindex": lambda: DocumentLoaderPageIndex(cache_dir=False),
    "rag": lambda: DocumentLoaderRAG(DocumentLoaderPyMuPDF(), query="terms"),
}


@pytest.mark.parametrize("make_loader", LOADERS.values(), ids=LOADERS.keys())
@pytest.mark.parametrize("as_path", [False, True], ids=["str", "Path"])
def test_can_handle_names_a_missing_file(tmp_path: Path, make_loader: Any, as_path: bool) -> None:
    missing = tmp_path / "contrat.pdf"
    with pytest.raises(DocumentLoadError) as info:
        make_loader().can_handle(missing if as_path else str(missing))
    assert str(info.value) == f"No such file: {str(missing)!r}."


@pytest.mark.parametrize("make_loader", LOADERS.values(), ids=LOADERS.keys())
def test_can_handle_still_answers_for_what_it_cannot_judge(
    tmp_path: Path, make_pdf, make_loader: Any
) -> None:
    loader = make_loader()
    pdf = make_pdf(["terms"], name="real.pdf")
    assert loader.can_handle(str(pdf)) is True
    assert loader.can_handle(pdf) is True  # a Path, which ExtractThinker's own check never accepted
    assert loader.can_handle(BytesIO(pdf.read_bytes())) is True
    assert loader.can_handle(str(tmp_path / "absent.docx")) is False  # not its format: another's to say
    assert loader.can_handle("https://example.com/contract.pdf") is False  # a URL, not a local file
    (tmp_path / "folder.pdf").mkdir()
    with pytest.raises(DocumentLoadError, match="is a folder, not a document"):
        loader.can_handle(str(tmp_path / "folder.pdf"))


def test_rag_names_a_missing_file_for_a_framework_loader(tmp_path: Path) -> None:
    (tmp_path / "present.txt").write_text("terms of payment", encoding="utf-8")
    with DocumentLoaderRAG(DocumentLoaderTxt(), query="payment") as loader:
        assert loader.can_handle(str(tmp_path / "present.txt")) is True
        with pytest.raises(DocumentLoadError, match="No such file"):
            loader.can_handle(str(tmp_path / "absent.txt"))


class Terms(Contract):
    clause: str


@pytest.mark.parametrize("make_loader", LOADERS.values(), ids=LOADERS.keys())
def test_extractor_names_the_missing_file(tmp_path: Path, llm_server: LLMServer, make_loader: Any) -> None:
    missing = tmp_path / "contarct.pdf"
    extractor = Extractor(make_loader())
    extractor.load_llm("openai/test-model")
    with pytest.raises(ExtractThinkerError) as info:  # ExtractThinker wraps every loading error in its own
        extractor.extract(str(missing), Terms)
    assert f"No such file: {str(missing)!r}." in str(info.value)
    assert "No suitable document loader" not in str(info.value)
    assert isinstance(info.value.__context__, DocumentLoadError)
    assert llm_server.paths == []


# -- a retriever named by one string (the command line's --retriever) -----------------------------------


@pytest.mark.parametrize(
    ("target", "dsn"),
    [
        ("postgresql://u@db:5432/pages", "postgresql://u@db:5432/pages"),
        ("postgres://u@db/pages?sslmode=require", "postgresql://u@db/pages?sslmode=require"),
        ("POSTGRESQL://u@db/pages", "postgresql://u@db/pages"),
        ("postgresql+psycopg://u:pw@db/pages", "postgresql://u:pw@db/pages"),
        ("  host=db dbname=pages user=u ", "host=db dbname=pages user=u"),
        ("dbname=pages", "dbname=pages"),
        ("pages.sqlite", None),
        ("indexes/a=b.sqlite", None),
        ("C:\\indexes\\pages.sqlite", None),
    ],
)
def test_which_strings_name_a_postgres_index(target: str, dsn: str | None) -> None:
    from extract_thinker_pageindex.retrieval.target import postgres_dsn

    assert postgres_dsn(target) == dsn


def test_a_url_of_another_database_is_no_retriever() -> None:
    from extract_thinker_pageindex.retrieval.target import open_retriever

    with pytest.raises(InvalidOptionError, match="a mysql:// URL is neither") as caught:
        open_retriever("mysql://u:s3cret@db/pages")
    assert "s3cret" not in str(caught.value)
    with pytest.raises(InvalidOptionError, match="schema belongs to a PostgreSQL index"):
        open_retriever("pages.sqlite", schema="filings")
