"""PostgresPageRetriever against hostile connection strings and inputs past PostgreSQL's limits, on a real
server: secrets in every position of a connection string (a password holding an unencoded ``/`` or ``@``,
``sslpassword``, ``options``, query parameters, quoted values) never reach ``.dsn``, ``repr``, an error, a
traceback, the command line's output or ``index-report.json``; a page over the 1 MB tsvector limit and a
doc id over the btree limit are indexed as SQLite indexes them; a refusal by the server is a
``RetrieverError`` that is never retried, and leaves the old pages as they were."""

from __future__ import annotations

import json
import logging
import os
import random
import subprocess
import sys
import traceback
from pathlib import Path

import pytest

psycopg = pytest.importorskip("psycopg", reason="the [postgres] extra is not installed")
from psycopg import sql  # noqa: E402
from psycopg.conninfo import conninfo_to_dict  # noqa: E402

from extract_thinker_pageindex import (  # noqa: E402
    InvalidOptionError,
    PostgresPageRetriever,
    RetrieverConnectionError,
    RetrieverError,
    SQLitePageRetriever,
    index_documents,
)
from extract_thinker_pageindex.retrieval.pg_conninfo import ConnectionString  # noqa: E402
from extract_thinker_pageindex.retrieval.pg_database import connection_lost, translate_error  # noqa: E402
from postgres_schemas import execute, new_schema  # noqa: E402
from postgres_server import free_port  # noqa: E402

#: The secret put in every position; no output may hold it, in any case.
MARK = "Hush7Secret"


def assert_hidden(*texts: str) -> None:
    for text in texts:
        assert MARK.casefold() not in text.casefold(), text


@pytest.fixture
def port(postgres_dsn: str) -> int:
    return int(conninfo_to_dict(postgres_dsn)["port"])


def live_forms(port: int) -> dict[str, str]:
    """Connection strings that connect (the test server trusts every login) with the secret in each
    position: libpq reads the mis-split password into host, port and database, which the query overrides."""
    return {
        "slash in the password": (
            f"postgresql://postgres:{MARK}/{MARK}@nowhere.invalid/postgres"
            f"?host=127.0.0.1&port={port}&dbname=postgres&user=postgres"
        ),
        "at signs in the password": (
            f"postgresql://postgres:{MARK}@{MARK}@nowhere.invalid/postgres?host=127.0.0.1&port={port}"
        ),
        "query parameters": (
            f"postgresql://postgres@127.0.0.1:{port}/postgres?password={MARK}&sslpassword={MARK}"
            f"&options=-c%20application_name%3D{MARK}"
        ),
        "key=value, quoted": (
            f"host=127.0.0.1 port={port} dbname=postgres user=postgres password='{MARK} x\\'y' "
            f"sslpassword={MARK} options='-c application_name={MARK}'"
        ),
        "percent-encoded": f"postgresql://postgres:{MARK}%2F%40{MARK}@127.0.0.1:{port}/postgres",
    }


def dead_forms(port: int) -> dict[str, str]:
    """Connection strings whose connection fails, each quoting the secret in libpq's or the server's error."""
    return {
        "port from the password": f"postgresql://postgres:{MARK}/x@127.0.0.1:{port}/postgres",
        "database from the password": f"postgresql://postgres:x/{MARK}@127.0.0.1:{port}/postgres",
        "host from the password": f"postgresql://postgres:x@{MARK}@127.0.0.1:{port}/postgres",
        "host and port from the password": f"postgresql://postgres:12/{MARK}:9@127.0.0.1:{port}/postgres",
        "options the server refuses": f"postgresql://postgres@127.0.0.1:{port}/postgres?options={MARK}",
        "a setting the server does not know": (
            f"postgresql://postgres@127.0.0.1:{port}/postgres?options=-c%20{MARK}%3D1&sslpassword={MARK}"
        ),
        "key=value options": (
            f"host=127.0.0.1 port={port} dbname=postgres user=postgres options='-c {MARK}=1' "
            f"password='{MARK}'"
        ),
        "unreadable: a bad escape": f"postgresql://postgres:a%zz{MARK}@127.0.0.1:{port}/postgres",
        "unreadable: a bare word": f"host=127.0.0.1 {MARK}",
        "unreadable: an open quote": f"host=127.0.0.1 password='{MARK}",
        "unreadable: a lone surrogate": f"postgresql://postgres:{MARK}\udcff@127.0.0.1:{port}/postgres",
    }


# -- what is shown of a connection string ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("dsn", "shown"),
    [
        ("postgresql://u:pa/ss@host/db", "host=host dbname=db user=u"),
        ("postgresql://u:p@ss@host/db", "host=host dbname=db user=u"),
        ("postgresql://u:p@s/s@host:5433/db?sslmode=require", "host=host port=5433 dbname=db user=u"),
        ("postgresql://u:pa?ss@host/db", "host=host dbname=db user=u"),
        (
            "postgresql://u@host/db?password=pw&sslpassword=spw&options=-c%20x%3Dy",
            "host=host dbname=db user=u",
        ),
        ("postgresql://u:p%2Fw%40x@h/db", "host=h dbname=db user=u"),
        (
            "host=h port=5 dbname='my db' user=u password='a b' sslpassword=x options='-c y=z'",
            "host=h port=5 dbname='my db' user=u",
        ),
        ("postgresql:///db?host=/var/run/postgresql", "host=/var/run/postgresql dbname=db"),
        ("postgres://[::1]:5432/db", "host=::1 port=5432 dbname=db"),
        ("postgresql://h/db?password=p@ss&host=other", "host=other dbname=db"),
    ],
)
def test_only_host_port_database_and_user_are_shown(dsn: str, shown: str) -> None:
    assert ConnectionString(dsn).shown == shown


def test_what_libpq_read_from_a_mis_split_password_is_scrubbed_from_its_errors() -> None:
    connection = ConnectionString("postgresql://u:pa/ss@host/db")
    assert connection.misread
    assert (
        connection.scrub('invalid integer value "pa" for connection option "port"')
        == 'invalid integer value "..." for connection option "port"'
    )
    assert connection.scrub("failed to resolve host 'u': port pa") == "failed to resolve host 'u': port ..."
    # A piece is scrubbed where it stands as a word, not inside others ("pa" of "password" stays).
    assert connection.scrub("password authentication failed") == "password authentication failed"


@pytest.mark.parametrize("form", list(live_forms(0)))
def test_a_live_retriever_shows_no_secret(
    form: str, port: int, schemas: list[str], postgres_dsn: str
) -> None:
    dsn = live_forms(port)[form]
    schema = new_schema(schemas, "h")
    with PostgresPageRetriever(dsn, schema=schema, timeout=5) as retriever:
        assert retriever.dsn == f"host=127.0.0.1 port={port} dbname=postgres user=postgres"
        retriever.index("doc", ["Revenue rose."])
        assert_hidden(retriever.dsn, repr(retriever))
        refuse_writes(postgres_dsn, schema, "doc2")
        with pytest.raises(RetrieverError) as caught:
            retriever.index("doc2", ["refused by the server"])
        assert_hidden(str(caught.value), "".join(traceback.format_exception(caught.value)))
        assert [match.page_number for match in retriever.search("doc", "revenue")] == [1]


@pytest.mark.parametrize("form", list(dead_forms(0)))
def test_a_failed_connect_quotes_no_secret(form: str, port: int, schemas: list[str]) -> None:
    dsn = dead_forms(port)[form]
    with pytest.raises((RetrieverConnectionError, InvalidOptionError)) as caught:
        PostgresPageRetriever(dsn, schema=new_schema(schemas, "h"), timeout=5)
    assert_hidden(str(caught.value), "".join(traceback.format_exception(caught.value)))
    if form.startswith("unreadable"):
        assert isinstance(caught.value, InvalidOptionError)
        assert "connection string cannot be read" in str(caught.value)
    else:
        assert isinstance(caught.value, RetrieverConnectionError)
        assert "127.0.0.1" in str(caught.value)  # where it tried is still named


def test_a_misread_password_is_named_in_the_message(port: int) -> None:
    with pytest.raises(RetrieverConnectionError, match="must be percent-encoded in a URL: %2F, %40"):
        PostgresPageRetriever(f"postgresql://postgres:{MARK}/x@127.0.0.1:{port}/postgres", timeout=5)


def test_the_pools_warnings_are_scrubbed(
    port: int, schemas: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    dsn = live_forms(port)["slash in the password"]
    with (
        PostgresPageRetriever(dsn, schema=new_schema(schemas, "h"), timeout=5),
        caplog.at_level(logging.WARNING),
    ):
        # What psycopg_pool logs when a connection fails: libpq's error, which may quote what it misread.
        logging.getLogger("psycopg.pool").warning(
            "error connecting in %r: %s", "pageindex", f'invalid integer value "{MARK}" for option "port"'
        )
    assert "error connecting in 'pageindex'" in caplog.text
    assert_hidden(caplog.text)


@pytest.mark.parametrize(
    ("target", "dsn"),
    [
        (f"sslpassword={MARK} host=db dbname=pages", f"sslpassword={MARK} host=db dbname=pages"),
        (f"application_name=x password={MARK} host=db", f"application_name=x password={MARK} host=db"),
        ("pages.sqlite", None),
        ("a=b.sqlite", None),
    ],
)
def test_key_value_pairs_naming_any_libpq_keyword_are_a_connection_string(
    target: str, dsn: str | None
) -> None:
    from extract_thinker_pageindex.retrieval.target import postgres_dsn

    assert postgres_dsn(target) == dsn  # never an SQLite file named after the string


@pytest.mark.parametrize("target", [f"postgresql:postgres:{MARK}@db/pages", f"Postgres:/{MARK}@db"])
def test_a_url_without_its_slashes_is_refused_without_echoing_it(target: str) -> None:
    from extract_thinker_pageindex.retrieval.target import open_retriever

    with pytest.raises(InvalidOptionError, match="without the '//' after its scheme") as caught:
        open_retriever(target)
    assert_hidden(str(caught.value))


# -- the command line and the batch report ---------------------------------------------------------------


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("PG")}
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    return subprocess.run(
        [sys.executable, "-m", "extract_thinker_pageindex", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def two_documents(folder: Path) -> Path:
    folder.mkdir()
    (folder / "alpha.md").write_text("# Alpha\n\nThe alpha document talks about turbines.\n")
    (folder / "beta.md").write_text("# Beta\n\nThe beta document talks about glaciers.\n")
    return folder


def refuse_writes(dsn: str, schema: str, doc_id: str) -> None:
    """Make the server refuse every write of ``doc_id`` with SQLSTATE 54000 (a limit exceeded), counting
    the attempts in a sequence (which a rollback does not undo)."""
    name = sql.Identifier(schema)
    execute(dsn, sql.SQL("CREATE SEQUENCE IF NOT EXISTS {}.refusals").format(name))
    execute(
        dsn,
        sql.SQL(
            "CREATE OR REPLACE FUNCTION {0}.refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
            " PERFORM nextval({1}); RAISE EXCEPTION USING ERRCODE = 'program_limit_exceeded',"
            " MESSAGE = 'the test server refuses this document'; END $$"
        ).format(name, sql.Literal(f'"{schema}".refusals')),
    )
    execute(
        dsn,
        sql.SQL(
            "CREATE TRIGGER refuse BEFORE INSERT ON {0}.pi_docs FOR EACH ROW"
            " WHEN (NEW.doc_id = {1}) EXECUTE FUNCTION {0}.refuse()"
        ).format(name, sql.Literal(doc_id.encode())),
    )


def refusals(dsn: str, schema: str) -> int:
    rows = execute(
        dsn, sql.SQL("SELECT last_value, is_called FROM {}.refusals").format(sql.Identifier(schema))
    )
    return int(rows[0][0]) if rows[0][1] else 0


@pytest.mark.parametrize("form", ["slash in the password", "at signs in the password", "key=value, quoted"])
def test_the_command_line_and_the_report_show_no_secret(
    form: str, tmp_path: Path, port: int, schemas: list[str], postgres_dsn: str
) -> None:
    dsn = live_forms(port)[form]
    schema = new_schema(schemas, "h")
    docs = two_documents(tmp_path / "docs")
    with PostgresPageRetriever(postgres_dsn, schema=schema) as retriever:
        retriever.index("beta.md", ["The old beta pages about moraines."])
    refuse_writes(postgres_dsn, schema, "beta.md")

    out = tmp_path / "out"
    target = ["--retriever", dsn, "--schema", schema]
    batch = run_cli("index", "--engine", "local", "--workers", "2", str(docs), "-o", str(out), *target)
    assert batch.returncode == 1, batch.stderr
    assert "beta.md" in batch.stderr and "refuses this document" in batch.stderr
    report = (out / "index-report.json").read_text()
    entries = {entry["name"]: entry for entry in json.loads(report)["documents"]}
    assert entries["alpha.md"]["status"] == "ok"
    assert entries["beta.md"]["status"] == "failed"
    assert "over a limit of PostgreSQL" in entries["beta.md"]["error"]
    found = run_cli("search", "alpha.md", "-q", "turbines", "--debug", *target)
    assert found.returncode == 0, found.stderr
    assert "[turbines]" in found.stdout
    missing = run_cli("search", "gamma.md", "-q", "turbines", *target)
    assert missing.returncode == 1
    assert_hidden(batch.stdout, batch.stderr, report, found.stdout, found.stderr, missing.stderr)
    assert "127.0.0.1" in entries["beta.md"]["error"]  # the server is named, without the secrets

    with PostgresPageRetriever(postgres_dsn, schema=schema) as retriever:
        assert [match.page_number for match in retriever.search("beta.md", "moraines")] == [1]
        assert retriever.search("alpha.md", "turbines")


@pytest.mark.parametrize(
    "form",
    ["port from the password", "host from the password", "key=value options", "unreadable: a bare word"],
)
def test_the_command_line_quotes_no_secret_when_it_cannot_connect(
    form: str, tmp_path: Path, port: int
) -> None:
    dsn = dead_forms(port)[form]
    docs = two_documents(tmp_path / "docs")
    batch = run_cli("index", "--engine", "local", str(docs), "-o", str(tmp_path / "out"), "--retriever", dsn)
    found = run_cli("search", "alpha.md", "-q", "turbines", "--debug", "--retriever", dsn)
    assert batch.returncode in (1, 2) and found.returncode in (1, 2)
    assert "error:" in batch.stderr and "error:" in found.stderr
    assert_hidden(batch.stdout, batch.stderr, found.stdout, found.stderr)
    assert not (tmp_path / "out").exists()
    assert sorted(path.name for path in tmp_path.iterdir()) == ["docs"]  # no file named after the string


@pytest.mark.parametrize("workers", [1, 2])
def test_index_documents_writes_no_secret_into_its_report(
    workers: int, tmp_path: Path, port: int, schemas: list[str], postgres_dsn: str
) -> None:
    schema = new_schema(schemas, "h")
    docs = two_documents(tmp_path / "docs")
    with PostgresPageRetriever(live_forms(port)["at signs in the password"], schema=schema) as retriever:
        refuse_writes(postgres_dsn, schema, "beta.md")
        report = index_documents([docs], tmp_path / "out", workers=workers, retriever=retriever)
    failed = [entry for entry in report.entries if entry.status == "failed"]
    assert [entry.name for entry in failed] == ["beta.md"]
    assert failed[0].error_type == "RetrieverError"
    assert_hidden(failed[0].error or "", (tmp_path / "out" / "index-report.json").read_text())


# -- PostgreSQL's limits -----------------------------------------------------------------------------------


def huge_page(rng: random.Random, words: int) -> list[str]:
    """Words of a page far over the tsvector's 1 MB and 16,383 positions: distinct filler words, with
    "revenue" and the pair "dividend policy" throughout, one pair across the first part boundary."""
    text = [f"w{rng.randrange(10**7)}" for _ in range(words)]
    for position in range(0, words, 997):
        text[position] = "revenue"
    for position in range(5, words - 1, 1499):
        text[position : position + 2] = ["dividend", "policy"]
    text[7999:8001] = ["dividend", "policy"]  # the first part holds 8,000 words
    return text


def test_a_page_over_the_tsvector_limit_is_indexed_and_ranked_as_sqlite_ranks_it(
    postgres_dsn: str, schemas: list[str]
) -> None:
    rng = random.Random(11)
    huge = " ".join(huge_page(rng, 500_000))
    assert len(huge.encode()) > 3_600_000
    pages = ["Balance sheet: revenue 1,200.", huge, "Dividend policy approved; revenue grew."]
    schema = new_schema(schemas, "h")
    with SQLitePageRetriever() as lite, PostgresPageRetriever(postgres_dsn, schema=schema) as pg:
        pg.index("other", ["An older filing about revenue."])
        for retriever in (lite, pg):
            retriever.index("filing", pages)
        for query in ("revenue", "dividend policy", "revenue dividend"):
            expected = lite.search("filing", query, max_pages=3)
            found = pg.search("filing", query, max_pages=3)
            assert [match.page_number for match in found] == [match.page_number for match in expected]
            for mine, theirs in zip(found, expected, strict=True):
                assert mine.score == pytest.approx(theirs.score, rel=1e-6)
        assert "[dividend] [policy]" in pg.snippet("filing", 2, "dividend policy")
        assert pg.page_count("filing") == 3
        last_word = huge.rsplit(" ", 1)[1]
        assert [match.page_number for match in pg.search("filing", last_word)] == [2]
        parts = sql.SQL("SELECT count(*) FROM {}.pi_parts").format(sql.Identifier(schema))
        assert execute(postgres_dsn, parts)[0][0] > 1
        # Re-indexed with short pages, the parts go with the old pages.
        pg.index("filing", ["Short now: revenue."])
        assert execute(postgres_dsn, parts) == [(0,)]
        assert [match.page_number for match in pg.search("other", "revenue")] == [1]


def test_a_doc_id_over_the_btree_limit_works_as_in_sqlite(postgres_dsn: str, schemas: list[str]) -> None:
    rng = random.Random(5)
    # Random CJK (3 bytes each in UTF-8) does not compress: 12,000 bytes, over the 2,704 of a btree entry.
    long_id = "".join(chr(rng.randrange(0x4E00, 0x9FFF)) for _ in range(4_000))
    odd_id = long_id[:100] + "\udcff" + "/é"
    with (
        SQLitePageRetriever() as lite,
        PostgresPageRetriever(postgres_dsn, schema=new_schema(schemas, "h")) as pg,
    ):
        for retriever in (lite, pg):
            retriever.index("short", ["Unrelated page."])
            retriever.index(long_id, ["A page about turbines.", "A page about glaciers."])
            retriever.index(odd_id, ["Another page about turbines."])
            assert long_id in retriever and odd_id in retriever
            assert retriever.page_count(long_id) == 2
            assert [match.page_number for match in retriever.search(long_id, "glaciers")] == [2]
        assert pg.document_ids() == lite.document_ids() == sorted(["short", long_id, odd_id])
        assert pg.delete(long_id) and long_id not in pg
        assert pg.document_ids() == sorted(["short", odd_id])


@pytest.mark.parametrize("option", ["schema", "text_search_config"])
def test_a_lone_surrogate_in_a_name_is_an_invalid_option(option: str) -> None:
    # The port is closed: a refusal that reached the server would be a connection error instead.
    with pytest.raises(InvalidOptionError, match=rf"{option} must .*lone surrogates\)?; got 's\\udcff'"):
        PostgresPageRetriever(f"postgresql://u@127.0.0.1:{free_port()}/db", **{option: "s\udcff"})


def server_error(dsn: str, statement: str) -> psycopg.Error:
    with psycopg.connect(dsn, autocommit=True) as conn, pytest.raises(psycopg.Error) as caught:
        conn.execute(statement)
    return caught.value


@pytest.mark.parametrize(
    ("statement", "message"),
    [
        (
            "SELECT string_agg(md5(i::text), ' ')::tsvector FROM generate_series(1, 40000) AS i",
            "over a limit of PostgreSQL (string is too long for tsvector",
        ),
        (
            "CREATE TEMP TABLE keys (key bytea PRIMARY KEY);"
            " INSERT INTO keys SELECT decode(string_agg(md5(i::text), ''), 'hex')"
            " FROM generate_series(1, 300) AS i",
            "over a limit of PostgreSQL (index row size",
        ),
        ("SELECT 'lots'::integer", "cannot take a value it was sent"),
        ("SELECT 1000::numeric(2, 1)", "cannot take a value it was sent"),
    ],
)
def test_the_servers_limits_and_data_errors_are_no_lost_connection(
    postgres_dsn: str, statement: str, message: str
) -> None:
    exc = server_error(postgres_dsn, statement)
    assert not connection_lost(exc)
    error = translate_error(
        exc, "write to", where="the retriever schema 'x'", connection=ConnectionString(postgres_dsn)
    )
    assert type(error) is RetrieverError
    assert message in str(error) and "Nothing was changed" in str(error)


def test_a_refused_write_is_not_retried_and_keeps_the_old_pages(
    postgres_dsn: str, schemas: list[str]
) -> None:
    schema = new_schema(schemas, "h")
    with PostgresPageRetriever(postgres_dsn, schema=schema) as retriever:
        retriever.index("filing", ["Old page one about revenue.", "Old page two about dividends."])
        retriever.index("other", ["Another filing about turbines."])
        refuse_writes(postgres_dsn, schema, "filing")
        with pytest.raises(RetrieverError, match="over a limit of PostgreSQL") as caught:
            retriever.index("filing", ["A new page that the server refuses."])
        assert not isinstance(caught.value, RetrieverConnectionError)
        assert refusals(postgres_dsn, schema) == 1  # tried once: a refusal comes back the same
        assert [match.page_number for match in retriever.search("filing", "dividends")] == [2]
        assert retriever.page_count("filing") == 2
        assert [match.page_number for match in retriever.search("other", "turbines")] == [1]
        retriever.index("third", ["The retriever is still usable."])
        assert "third" in retriever
