"""``index --engine``: the command line of
:func:`~extract_thinker_pageindex.batch.run.index_documents` (folders and many files into one output
folder, locally or on Ray), with a progress bar and a summary table of the report."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from .terminal import safe_text

if TYPE_CHECKING:
    from ..batch.run import BatchReport
    from ..batch.tasks import BatchEntry

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
PROG = "extract-thinker-pageindex"
MAX_ROWS = 50  # beyond it, the summary table lists the failed documents only


def add_batch_arguments(index: argparse.ArgumentParser) -> None:
    """The options of ``index`` that switch to, and tune, batch indexing."""
    group = index.add_argument_group(
        "batch indexing",
        "With --engine, FILE may also be a folder (its supported files are indexed, recursively) and the "
        "indexes go to --output as <relative path>.pageindex/ (report.pdf.pageindex), with "
        "index-manifest.json (a rerun skips what is up to date) and index-report.json.",
    )
    group.add_argument(
        "--engine",
        choices=("local", "ray"),
        help="index as a batch: 'local' (processes of this machine) or 'ray' (a Ray cluster; needs the "
        "[ray] extra)",
    )
    group.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="local: worker processes (default: CPUs; 1 runs in this process); ray: documents in flight "
        "(default: the cluster's CPUs)",
    )
    group.add_argument(
        "--address", metavar="ADDR", help="ray: the cluster to join ('auto', 'ray://host:10001')"
    )
    group.add_argument(
        "--model-rate",
        type=int,
        metavar="N",
        help="the most model calls in flight at once across all workers (with ray: the whole cluster)",
    )
    add_retriever_arguments(group, "add every document's pages to this page retriever index")


def add_retriever_arguments(parser: Any, purpose: str) -> None:
    """``--retriever TARGET`` and ``--schema NAME``: a page retriever index named on the command line."""
    parser.add_argument(
        "--retriever",
        metavar="TARGET",
        help=f"{purpose}: a postgresql:// URL (the [postgres] extra; the password may come from "
        "PGPASSWORD) or the path of an SQLite file",
    )
    parser.add_argument(
        "--schema", metavar="NAME", help="the PostgreSQL schema of --retriever (default: public)"
    )


def _error(message: str) -> None:
    print(f"{PROG}: error: {safe_text(message)}", file=sys.stderr)


def build_options(args: argparse.Namespace) -> dict[str, Any]:
    """The options of ``index`` that ``build_index`` takes, as keyword arguments."""
    return {
        "pages": args.pages,
        "strategy": args.strategy,
        "model": args.model,
        "parallel": args.parallel,
        "tables": args.tables,
        "images": not args.no_images,
        "use_outline": not args.no_outline,
        "password": args.password,
        "abstract": not args.no_abstract,
        "refine": args.refine,
        **ocr_options(args),
    }


def ocr_options(args: argparse.Namespace) -> dict[str, Any]:
    """The OCR options of ``index`` and ``search`` (``--ocr``, ``--ocr-engine``, ...) as keyword arguments."""
    return {
        "ocr": args.ocr,
        "ocr_engine": args.ocr_engine,
        "ocr_languages": args.ocr_languages,
        "ocr_workers": args.ocr_workers,
    }


def run_batch(args: argparse.Namespace) -> int:
    """``index --engine ...``: index every document, print the summary (or the report as JSON).

    Returns:
        ``EXIT_OK``; ``EXIT_FAILED`` when a document failed; ``EXIT_USAGE`` for bad options.
    """
    for flag, value in (("--workers", args.workers), ("--model-rate", args.model_rate)):
        if value is not None and value < 1:
            _error(f"{flag} must be at least 1")
            return EXIT_USAGE
    if args.output is None:
        _error("--engine writes every index into one folder: give it with -o/--output DIR.")
        return EXIT_USAGE
    if args.parallel < 1:
        _error("--parallel must be at least 1")
        return EXIT_USAGE
    from ..batch.run import check_run
    from ..errors import InvalidOptionError, UnsupportedFormatError

    try:  # before a retriever is opened (and perhaps created) for a run that would not start
        check_run(
            args.output,
            engine=args.engine,
            workers=args.workers,
            address=args.address,
            model_rate=args.model_rate,
            options=build_options(args),
        )
    except (InvalidOptionError, UnsupportedFormatError) as exc:
        _error(str(exc))
        return EXIT_USAGE
    except Exception as exc:  # out_dir is a file
        _error(f"{' '.join(str(exc).split()) or type(exc).__name__} ({type(exc).__name__})")
        return EXIT_FAILED
    if schema_without_retriever(args):
        return EXIT_USAGE
    if args.retriever is None:
        return _run(args, None)
    retriever, code = open_cli_retriever(args.retriever, args.schema)
    if retriever is None:
        return code
    with retriever:
        return _run(args, retriever)


def schema_without_retriever(args: argparse.Namespace) -> bool:
    """Whether ``--schema`` came without ``--retriever`` (a usage error, said here)."""
    if args.schema is not None and args.retriever is None:
        _error("--schema names the PostgreSQL schema of --retriever; give --retriever too.")
        return True
    return False


def open_cli_retriever(target: str, schema: str | None, *, read_only: bool = False) -> tuple[Any, int]:
    """``(retriever, EXIT_OK)`` for what ``--retriever`` and ``--schema`` name, or ``(None, exit code)``
    after saying why it cannot be opened (``EXIT_USAGE`` for a bad option or, ``read_only``, no index)."""
    import os

    from ..errors import InvalidOptionError
    from ..retrieval.target import open_retriever, postgres_dsn

    try:
        path = target.strip()
        if read_only and path and postgres_dsn(target) is None and not os.path.isfile(path):
            # Said for the command line: the retriever's own message speaks of its read_only argument.
            _error(
                f"--retriever {path!r} is no file; search reads the index that "
                "'index --engine ... --retriever' wrote: check the path."
            )
            return None, EXIT_USAGE
        return open_retriever(target, schema=schema, read_only=read_only), EXIT_OK
    except InvalidOptionError as exc:
        _error(str(exc))
        return None, EXIT_USAGE
    except Exception as exc:  # no [postgres] extra, the server refused, the file cannot be opened
        _error(" ".join(str(exc).split()) or type(exc).__name__)
    return None, EXIT_FAILED


def _run(args: argparse.Namespace, retriever: Any) -> int:
    from rich.console import Console

    from ..batch.run import index_documents
    from ..errors import InvalidOptionError, UnsupportedFormatError
    from .terminal import progress_bar

    stderr = Console(stderr=True)
    with progress_bar(stderr) as bar:
        task = bar.add_task("documents", total=None)

        def progress(done: int, total: int, entry: BatchEntry) -> None:
            bar.update(task, completed=done, total=total)
            if entry.status == "failed":
                _error(f"{entry.source}: {entry.error}")

        try:
            report = index_documents(
                args.files,
                args.output,
                engine=args.engine,
                workers=args.workers,
                address=args.address,
                model_rate=args.model_rate,
                retriever=retriever,
                progress=progress,
                **build_options(args),
            )
        except (InvalidOptionError, UnsupportedFormatError) as exc:
            _error(str(exc))
            return EXIT_USAGE
        except Exception as exc:  # the run could not start (out_dir is a file, Ray could not connect)
            _error(f"{' '.join(str(exc).split()) or type(exc).__name__} ({type(exc).__name__})")
            return EXIT_FAILED
    if args.json:
        print(json.dumps(report.to_dict(), indent=2, ensure_ascii=True))
    else:
        print_summary(report)
    return EXIT_FAILED if report.failed else EXIT_OK


def print_summary(report: BatchReport) -> None:
    """The report on standard output: a line of totals, a table with a row per document, the report's path."""
    from rich.console import Console

    from .terminal import text_cell as cell
    from .terminal import text_table

    totals = report.totals()
    title = (
        f"{report.engine} engine, {report.workers} worker(s): {totals['ok']} indexed, "
        f"{totals['skipped']} up to date, {totals['failed']} failed of {totals['documents']} document(s); "
        f"{totals['pages']} page(s) in {report.seconds:.1f} s"
    )
    if totals["usage"]["calls"]:
        usage = totals["usage"]
        title += f"; {usage['calls']} model calls, {usage['input_tokens'] + usage['output_tokens']} tokens"
    columns = [
        ("document", "left"),
        ("status", "left"),
        ("pages", "right"),
        ("seconds", "right"),
        ("error", "left"),
    ]
    table = text_table(columns)

    rows = report.entries
    if len(rows) > MAX_ROWS:
        # A run of thousands: the failures only; every document is in the report file.
        rows = report.failed[:MAX_ROWS]
        table.caption = f"{len(report.entries) - len(rows)} more document(s) in index-report.json"
    for entry in rows:
        error = f"{entry.error_type}: {entry.error}" if entry.status == "failed" else ""
        table.add_row(
            cell(entry.name),
            cell(entry.status),
            cell("-" if entry.pages is None else entry.pages),
            cell(f"{entry.seconds:.2f}"),
            cell(error[:200]),
        )
    print(safe_text(title, newlines=False))
    Console(width=140, highlight=False).print(table)
    print(safe_text(f"Report: {report.out_dir}/index-report.json", newlines=False))
