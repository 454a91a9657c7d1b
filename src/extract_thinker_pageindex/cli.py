"""The ``extract-thinker-pageindex`` command: argument parsing, output and error-to-exit-code mapping.

Exit codes: 0 success; 1 a document could not be processed (the others still are) or a search found
nothing; 2 bad usage; 130 interrupted.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ._version import __version__

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="extract-thinker-pageindex",
        description="Build, inspect and search page indexes of documents for ExtractThinker.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    index = commands.add_parser(
        "index",
        help="build the page index of files and save each as <name>.pageindex/",
        description="Build the page index of each FILE and save it as <name>.pageindex/ "
        "(beside the file, or in --output).",
    )
    index.add_argument("files", nargs="+", metavar="FILE", help="documents to index (.pdf, .md, .txt)")
    index.add_argument(
        "-o", "--output", metavar="DIR", help="directory to write the <name>.pageindex/ folders into"
    )
    index.add_argument("--pages", metavar="SPEC", help="1-based pages to index, e.g. '1-3,5,7-10'")
    index.add_argument(
        "--strategy", choices=("auto", "text", "vision"), default="auto", help="how PDF pages are read"
    )
    index.add_argument("--model", help="litellm model name for the parts that need a model")
    index.add_argument("--parallel", type=int, default=3, metavar="N", help="pages sent to the model at once")
    index.add_argument("--tables", action="store_true", help="find tables in PDFs (slow: a few pages/s)")
    index.add_argument("--no-images", action="store_true", help="leave embedded pictures out of PDF indexes")
    index.add_argument(
        "--no-outline", action="store_true", help="ignore PDF outlines; detect headings from fonts"
    )
    index.add_argument("--password", help="password of encrypted PDFs")
    index.add_argument(
        "--no-abstract", action="store_true", help="do not write an abstract (saves model calls)"
    )
    index.add_argument(
        "--refine", action="store_true", help="review sampled pages with the model and redo weak ones"
    )
    index.add_argument("--json", action="store_true", help="print one JSON object per file instead of text")

    search = commands.add_parser(
        "search",
        help="find the pages of a document that best match a query",
        description="Rank the pages of FILE against a query with the SQLite FTS5 retriever and print "
        "the best ones with a snippet (matched words in [brackets]).",
    )
    search.add_argument("file", metavar="FILE", help="a PDF, Markdown or text file")
    search.add_argument("-q", "--query", required=True, help="words to look for (OR-ed; no syntax)")
    search.add_argument(
        "-n", "--max-pages", type=int, default=3, metavar="N", help="how many pages (default 3)"
    )
    search.add_argument("--password", help="password of an encrypted PDF")
    search.add_argument("--json", action="store_true", help="print the matches as JSON")

    inspect = commands.add_parser(
        "inspect",
        help="summarise a saved page index and print its TOC tree",
        description="Summarise a page index.",
    )
    inspect.add_argument("path", metavar="PATH", help="a <name>.pageindex directory (or its document.json)")
    inspect.add_argument("--json", action="store_true", help="print the figures as JSON")
    return parser


def _error(message: str) -> None:
    print(f"extract-thinker-pageindex: error: {message}", file=sys.stderr)


def _run_index(args: argparse.Namespace) -> int:
    import warnings

    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from .errors import PageIndexError, PageIndexWarning
    from .store import default_output_path, index_document

    if args.parallel < 1:
        _error("--parallel must be at least 1")
        return EXIT_USAGE
    status = EXIT_OK
    stderr = Console(stderr=True)
    # Progress goes to standard error and only to a terminal, so standard output stays clean for scripts.
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=stderr,
        transient=True,
        disable=not stderr.is_terminal,
    ) as progress:
        overall = progress.add_task("files", total=len(args.files))
        written_by: dict[Path, str] = {}
        records: list[dict[str, Any]] = []
        started = time.perf_counter()
        for file in args.files:
            target = default_output_path(file)
            if args.output is not None:
                target = Path(args.output) / target.name
            earlier = written_by.get(target.resolve())
            if earlier is not None:
                _error(
                    f"{file}: its index would replace the one just written for {earlier} ({target}); "
                    "index it on its own or with another --output."
                )
                status = EXIT_FAILED
                progress.advance(overall)
                continue
            written_by[target.resolve()] = file
            pages_task = progress.add_task(f"  {Path(file).name}", total=None)

            def advance(done: int, total: int, task: Any = pages_task) -> None:
                progress.update(task, completed=done, total=total)

            try:
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always", PageIndexWarning)
                    document, written = index_document(
                        file,
                        output=target,
                        pages=args.pages,
                        strategy=args.strategy,
                        model=args.model,
                        parallel=args.parallel,
                        tables=args.tables,
                        images=not args.no_images,
                        use_outline=not args.no_outline,
                        password=args.password,
                        progress=advance,
                        abstract=not args.no_abstract,
                        refine=args.refine,
                    )
                for warning in caught:
                    print(f"extract-thinker-pageindex: warning: {file}: {warning.message}", file=sys.stderr)
            except (PageIndexError, OSError) as exc:
                _error(f"{file}: {exc}")
                status = EXIT_FAILED
                continue
            finally:
                progress.remove_task(pages_task)
                progress.advance(overall)
            counts = document.node_counts()
            record: dict[str, Any] = {
                "file": file,
                "output": str(written),
                "pages": len(document.pages),
                "nodes": sum(counts.values()),
                "toc_entries": len(document.toc),
                "title": document.title,
            }
            records.append(record)
            # While the progress display runs, rich shows what goes to standard output above it.
            if args.json:
                print(json.dumps(record))
            else:
                print(
                    f"{file} -> {written}: {record['pages']} page(s), {record['nodes']} nodes, "
                    f"{record['toc_entries']} TOC entries"
                )
    if len(args.files) > 1 and not args.json:
        _summary(records, len(args.files), time.perf_counter() - started)
    return status


def _summary(records: list[dict[str, Any]], total: int, seconds: float) -> None:
    """A table of what a multi-file run indexed, on standard output."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"Indexed {len(records)} of {total} file(s) in {seconds:.1f} s", title_justify="left")
    for column, justify in (
        ("file", "left"),
        ("pages", "right"),
        ("nodes", "right"),
        ("TOC", "right"),
        ("title", "left"),
    ):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    for record in records:
        table.add_row(
            Path(record["file"]).name,
            str(record["pages"]),
            str(record["nodes"]),
            str(record["toc_entries"]),
            record["title"] or "",
        )
    Console(width=120, highlight=False).print(table)


def _search_pages(file: str, password: str | None) -> list[dict[str, Any]]:
    """The pages of a file as page dicts: PyMuPDF for PDFs, the page index for Markdown and text."""
    if Path(file).suffix.lower() == ".pdf":
        from .loaders.pymupdf import DocumentLoaderPyMuPDF

        return DocumentLoaderPyMuPDF(password=password).load(file)
    from .build import build_index

    document = build_index(file)
    pages: list[dict[str, Any]] = [{"content": ""} for _ in range(document.source_page_count or 0)]
    for page in document.pages:
        texts = [getattr(node, "content", "") for node in page.nodes]
        pages[page.index] = {"content": "\n\n".join(text for text in texts if text)}
    return pages


def _run_search(args: argparse.Namespace) -> int:
    from .errors import PageIndexError
    from .loaders.rag import document_id
    from .retrieval.sqlite import SQLitePageRetriever

    if args.max_pages < 1:
        _error("--max-pages must be at least 1")
        return EXIT_USAGE
    try:
        pages = _search_pages(args.file, args.password)
        with SQLitePageRetriever() as retriever:
            doc_id = document_id(pages)
            retriever.index(doc_id, pages)
            matches = retriever.search(doc_id, args.query, max_pages=args.max_pages)
            found = [
                {
                    "page_number": match.page_number,
                    "score": match.score,
                    "snippet": retriever.snippet(doc_id, match.page_number, args.query),
                }
                for match in matches
            ]
    except (PageIndexError, OSError) as exc:
        _error(f"{args.file}: {exc}")
        return EXIT_FAILED
    if args.json:
        print(json.dumps({"file": args.file, "query": args.query, "matches": found}, indent=2))
    elif not found:
        print(f"No page of {args.file} matched {args.query!r}.")
    else:
        for item in found:
            print(f"page {item['page_number']:>4}  score {item['score']:8.3f}  {item['snippet']}")
    return EXIT_OK if found else EXIT_FAILED


def _run_inspect(args: argparse.Namespace) -> int:
    from .errors import PageIndexError
    from .summary import inspect

    try:
        if args.json:
            import io

            stats = inspect(args.path, file=io.StringIO())
            print(json.dumps(stats, indent=2))
        else:
            inspect(args.path)
    except PageIndexError as exc:
        _error(str(exc))
        return EXIT_FAILED
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    # Offline machines stall on litellm's price-map download at import; the bundled map is enough here.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    args = _parser().parse_args(argv)
    # The library logs why it set something aside (an outline it did not trust); say it the CLI's way.
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("extract-thinker-pageindex: warning: %(message)s"))
    # instructor logs every retried call at ERROR level; the retries are ours to report, as errors.
    logging.getLogger("instructor").setLevel(logging.CRITICAL)
    package_logger = logging.getLogger("extract_thinker_pageindex")
    if not package_logger.handlers:
        package_logger.addHandler(handler)
        package_logger.setLevel(logging.WARNING)
    runners = {"index": _run_index, "search": _run_search, "inspect": _run_inspect}
    try:
        return runners[args.command](args)
    except KeyboardInterrupt:
        _error("interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (``... | head``): stop quietly, as Unix tools do.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_FAILED


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
