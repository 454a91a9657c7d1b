"""The ``extract-thinker-pageindex`` command: argument parsing, output and error-to-exit-code mapping.

Exit codes: 0 success; 1 a document could not be processed (the others still are), a search found
nothing, or a view could not be written; 2 bad usage; 130 interrupted.

The command starts fast: ``--help``, ``--version``, ``search``, ``inspect`` and ``view``, and ``index``
without a model, never import ExtractThinker's package (and litellm with it, about four seconds); see
``_framework.py``. Every text printed goes through :func:`~.terminal.safe_text`.
"""

from __future__ import annotations

import argparse
import io
import json
import logging
import os
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._version import __version__
from .terminal import progress_bar, safe_text

if TYPE_CHECKING:
    from ..document.model import Document

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
PROG = "extract-thinker-pageindex"
INDEX_SUFFIX = ".pageindex"  # store.SUFFIX, without importing the store (and pydantic) for --help

#: ``index_one(file, target, progress)`` indexes one file and returns the document and where it went.
IndexOne = Callable[[str, Path, Callable[[int, int], None]], "tuple[Document, Path]"]


class _Parser(argparse.ArgumentParser):
    """argparse, with what it prints (usage errors quote the user's arguments) made safe to print, no
    abbreviated options (``--page`` is not taken for ``--pages``), and an unknown option named before any
    other complaint (argparse reports a missing ``--query`` first and never mentions ``--querry``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def _print_message(self, message: str, file: Any = None) -> None:
        super()._print_message(safe_text(message), file)

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        if self._subparsers is None and args is not None:
            self._refuse_unknown_options(list(args))
        return super().parse_known_args(args, namespace)

    def _refuse_unknown_options(self, args: list[str]) -> None:
        import difflib

        known = list(self._option_string_actions)
        for arg in args:
            if arg == "--":
                return
            option = arg.split("=", 1)[0]
            if not option.startswith("--") or option in known:
                continue
            close = difflib.get_close_matches(option, known, n=1)
            hint = f"; did you mean {close[0]}?" if close else f"; {self.prog} --help lists the options"
            self.error(f"unknown option {option}{hint}")


def _extensions_help() -> str:
    """The accepted extensions, by kind, as ``index --help`` lists them (read from ``sources``)."""
    from ..inputs.sources import EXTENSION_KINDS

    by_kind: dict[str, list[str]] = {}
    for extension, kind in EXTENSION_KINDS.items():
        by_kind.setdefault(kind, []).append(extension)
    parts = [" ".join(by_kind.pop(kind)) for kind in ("pdf", "markdown", "text") if kind in by_kind]
    images = by_kind.pop("image", [])
    parts += [" ".join(extensions) for extensions in by_kind.values()]
    listed = ", ".join(parts)
    if images:
        listed += f"; images with --model: {' '.join(images)}"
    return listed


def _positive(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of at least 1, not {value!r}")
    return number


def _languages(value: str) -> str:
    from ..errors import InvalidOptionError
    from ..ocr.settings import ocr_settings

    try:
        ocr_settings(ocr_languages=value)
    except InvalidOptionError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return value


def _add_ocr_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("OCR (scanned PDF pages, read without a model)")
    group.add_argument(
        "--ocr",
        choices=("auto", "always", "never"),
        default="auto",
        help="auto: pages without a usable text layer (default); always: every page; never",
    )
    group.add_argument(
        "--ocr-engine", choices=("tesseract", "rapidocr"), default="tesseract", help="the OCR engine"
    )
    group.add_argument(
        "--ocr-languages",
        default="eng",
        type=_languages,
        metavar="LANGS",
        help="Tesseract languages, e.g. 'eng+deu' (eng)",
    )
    group.add_argument(
        "--ocr-workers",
        type=_positive,
        metavar="N",
        help="processes that OCR pages side by side (default: the machine's cores)",
    )


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG,
        description="Build, inspect and search page indexes of documents for ExtractThinker.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    common = _Parser(add_help=False)
    common.add_argument(
        "--debug", action="store_true", help="on an error, also print its traceback on standard error"
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    index = commands.add_parser(
        "index",
        parents=[common],
        help="build the page index of files and save each as <name>.pageindex/",
        description="Build the page index of each FILE and save it as <name>.pageindex/ "
        "(beside the file, or in --output).",
    )
    index.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help=f"documents to index ({_extensions_help()}); with --engine, folders too",
    )
    index.add_argument(
        "-o",
        "--output",
        metavar="DIR",
        help="directory to write the <name>.pageindex/ folders into; with one FILE, a path ending in "
        f"{INDEX_SUFFIX} is the index folder itself",
    )
    index.add_argument("--pages", metavar="SPEC", help="1-based pages to index, e.g. '1-3,5,7-10'")
    index.add_argument(
        "--strategy", choices=("auto", "text", "vision"), default="auto", help="how PDF pages are read"
    )
    index.add_argument("--model", help="litellm model name for the parts that need a model")
    index.add_argument("--parallel", type=int, default=3, metavar="N", help="pages sent to the model at once")
    index.add_argument(
        "--tables",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="find tables in PDFs: ruled grids and columns aligned by whitespace (default: on)",
    )
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
    index.add_argument(
        "--force",
        action="store_true",
        help="replace an index built from another file (report.md where report.pdf's index is)",
    )
    _add_ocr_arguments(index)
    from .batch import add_batch_arguments

    add_batch_arguments(index)

    search = commands.add_parser(
        "search",
        parents=[common],
        help="find the pages of a document that best match a query",
        description="Rank the pages of FILE against a query with the SQLite FTS5 retriever and print "
        "the best ones with a snippet (matched words in [brackets]). With --retriever, search a document "
        "of that index instead: FILE is then its name there (as index --engine ... --retriever named it).",
    )
    search.add_argument(
        "file",
        metavar="FILE",
        help="a PDF, Markdown or text file, or a saved <name>.pageindex; with --retriever, a document's name",
    )
    search.add_argument("-q", "--query", required=True, help="words to look for (OR-ed; no syntax)")
    search.add_argument(
        "-n", "--max-pages", type=int, default=5, metavar="N", help="how many pages (default 5)"
    )
    search.add_argument("--password", help="password of an encrypted PDF")
    search.add_argument("--json", action="store_true", help="print the matches as JSON")
    _add_ocr_arguments(search)
    from .batch import add_retriever_arguments

    add_retriever_arguments(search, "search a document of this page retriever index")

    inspect = commands.add_parser(
        "inspect",
        parents=[common],
        help="summarise a saved page index and print its TOC tree",
        description="Summarise a page index.",
    )
    inspect.add_argument("path", metavar="PATH", help="a <name>.pageindex directory (or its document.json)")
    inspect.add_argument("--json", action="store_true", help="print the figures as JSON")

    view = commands.add_parser(
        "view",
        parents=[common],
        help="write an HTML view of a page index: every node boxed on its page, the TOC tree",
        description="Write one HTML file showing the page index INDEX: the TOC tree, and each page's picture "
        "with every node's box drawn on it, coloured by type (Markdown and text sources: the nodes as text "
        "blocks). With --query, the best pages for it are listed and its words marked on them. The file "
        "needs no network; page pictures go in <OUT stem>_files/ beside it unless --embed-images.",
    )
    view.add_argument("index", metavar="INDEX", help="a <name>.pageindex directory (or its document.json)")
    view.add_argument(
        "--source",
        metavar="FILE",
        help="the indexed PDF or image, when it is not the file named as INDEX beside it "
        "(report.pageindex -> report.pdf)",
    )
    view.add_argument(
        "-o",
        "--output",
        metavar="OUT.html",
        help="the HTML file to write (default: <name>.view.html beside INDEX)",
    )
    view.add_argument("-q", "--query", help="words to search for; the best pages are listed and marked")
    view.add_argument(
        "-n", "--max-pages", type=int, default=5, metavar="N", help="how many matches of --query (default 5)"
    )
    view.add_argument(
        "--embed-images", action="store_true", help="put the page pictures inside the HTML file (data: URIs)"
    )
    view.add_argument("--dpi", type=int, default=96, metavar="N", help="resolution of PDF page pictures (96)")
    view.add_argument("--password", help="password of an encrypted PDF source")
    return parser


def _error(message: str) -> None:
    print(f"{PROG}: error: {safe_text(message)}", file=sys.stderr)


def _warn(message: str) -> None:
    print(f"{PROG}: warning: {safe_text(message)}", file=sys.stderr)


def _print_json(data: Any, *, indent: int | None = None) -> None:
    # ensure_ascii writes every non-ASCII character, a lone surrogate included, as a \u escape: the
    # output is valid JSON and encodes on any terminal.
    print(json.dumps(data, indent=indent, ensure_ascii=True))


def _report_failure(subject: str | None, exc: Exception, *, debug: bool) -> None:
    """One error line for a failure; the traceback too with ``--debug``.

    The library's own errors (and the operating system's) are expected: their message is the whole
    report. Anything else is a bug here or in a library used, so the line names its type.
    """
    from ..errors import PageIndexError

    message = " ".join(str(exc).split()) or type(exc).__name__
    if not isinstance(exc, (PageIndexError, OSError)):
        hint = "" if debug else "; run with --debug to see its traceback"
        message = f"{message} (unexpected {type(exc).__name__}{hint})."
    _error(f"{subject}: {message}" if subject is not None else message)
    if debug:
        sys.stderr.write(safe_text("".join(traceback.format_exception(exc))))


def _check_source(file: str) -> None:
    """Refuse a folder, or a file whose extension no builder reads, in the command line's terms (the
    Python API's message says to pass ``content_type=``, which the command line has no option for).

    Raises:
        DocumentLoadError: ``file`` is a folder (batch indexing reads folders).
        UnsupportedFormatError: the extension is not one ``index --help`` lists.
    """
    from ..errors import DocumentLoadError, UnsupportedFormatError
    from ..inputs.sources import EXTENSION_KINDS

    if Path(file).is_dir():
        raise DocumentLoadError(
            "it is a folder: index the documents in it with --engine local -o OUT_DIR (one index per file, "
            "resumable), or name its files."
        )
    suffix = Path(file).suffix.lower()
    if suffix not in EXTENSION_KINDS:
        raise UnsupportedFormatError(
            f"Cannot read {Path(file).name!r}: the extension {suffix or '(none)'!r} is not one this command "
            f"reads ({_extensions_help()}); convert it to PDF, or rename a Markdown or text file to .md or "
            ".txt."
        )


def _single_index_path(args: argparse.Namespace) -> Path | None:
    """The index folder ``-o`` names when it ends in ``.pageindex``, else None (``-o`` is a directory)."""
    if args.output is None or not Path(args.output).name.endswith(INDEX_SUFFIX):
        return None
    return Path(args.output)


def _run_index(args: argparse.Namespace) -> int:
    if args.engine is not None:
        from .batch import run_batch

        return run_batch(args)
    batch_only = (args.workers, args.address, args.model_rate, args.retriever, args.schema)
    if any(value is not None for value in batch_only):
        _error(
            "--workers, --address, --model-rate, --retriever and --schema apply to batch indexing; give "
            "--engine too (--engine local indexes on this machine)."
        )
        return EXIT_USAGE
    if args.parallel < 1:
        _error("--parallel must be at least 1")
        return EXIT_USAGE
    single = _single_index_path(args)
    if single is not None and len(args.files) > 1:
        _error(
            f"--output {args.output} names one index folder (it ends in {INDEX_SUFFIX}), but "
            f"{len(args.files)} files were given; give a directory to write several indexes into."
        )
        return EXIT_USAGE

    from ..document.store import default_output_path
    from ..indexing import index_document
    from .batch import build_options

    jobs: list[tuple[str, Path]] = []
    for file in args.files:
        target = default_output_path(file)
        if single is not None:
            target = single
        elif args.output is not None:
            target = Path(args.output) / target.name
        jobs.append((file, target))

    def index_one(file: str, target: Path, progress: Callable[[int, int], None]) -> tuple[Document, Path]:
        _check_source(file)
        return index_document(
            file, output=target, progress=progress, overwrite=args.force, **build_options(args)
        )

    return _index_files(jobs, index_one, as_json=args.json, debug=args.debug)


def _index_files(jobs: Sequence[tuple[str, Path]], index_one: IndexOne, *, as_json: bool, debug: bool) -> int:
    """Index each ``(file, target)`` in turn; a file that fails, for whatever reason, is reported and counted,
    and the others are still indexed.

    Args:
        jobs: The files and the index folder each is written to.
        index_one: Indexes one file (see ``IndexOne``).
        as_json: Print one JSON object per indexed file instead of a line of text.
        debug: Print the traceback of each failure as well.

    Returns:
        ``EXIT_OK``, or ``EXIT_FAILED`` when any file failed.
    """
    import warnings

    from rich.console import Console
    from rich.markup import escape

    from ..errors import PageIndexWarning

    stderr = Console(stderr=True)
    # One row per file, in order: the indexed file's record, or None when it failed.
    rows: list[tuple[str, dict[str, Any] | None]] = []
    written_by: dict[Path, str] = {}
    started = time.perf_counter()
    with progress_bar(stderr) as progress:
        overall = progress.add_task("files", total=len(jobs))
        for file, target in jobs:
            earlier = written_by.get(Path(os.path.abspath(target)))
            if earlier is not None:
                _error(
                    f"{file}: its index would replace the one just written for {earlier} ({target}); "
                    "index it on its own or with another --output."
                )
                rows.append((file, None))
                progress.advance(overall)
                continue
            written_by[Path(os.path.abspath(target))] = (
                file  # not resolve(): a link loop must not stop the run
            )
            # Descriptions are rich markup: a file named "[red].md" must show as it is.
            pages_task = progress.add_task(
                f"  {escape(safe_text(Path(file).name, newlines=False))}", total=None
            )

            def advance(done: int, total: int, task: Any = pages_task) -> None:
                progress.update(task, completed=done, total=total)

            try:
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always", PageIndexWarning)
                    document, written = index_one(file, target, advance)
                for warning in caught:
                    _warn(f"{file}: {warning.message}")
            except Exception as exc:  # one file's failure, whatever it is, must not end the run
                _report_failure(file, exc, debug=debug)
                rows.append((file, None))
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
            rows.append((file, record))
            # While the progress display runs, rich shows what goes to standard output above it.
            if as_json:
                _print_json(record)
            else:
                print(
                    f"{safe_text(file, newlines=False)} -> {safe_text(written, newlines=False)}: "
                    f"{record['pages']} page(s), {record['nodes']} nodes, {record['toc_entries']} TOC entries"
                )
    if len(jobs) > 1 and not as_json:
        _summary(rows, time.perf_counter() - started)
    return EXIT_FAILED if any(record is None for _, record in rows) else EXIT_OK


def _summary(rows: list[tuple[str, dict[str, Any] | None]], seconds: float) -> None:
    """A table of what a multi-file run indexed and which files failed, on standard output."""
    from rich.console import Console

    from .terminal import text_cell as cell
    from .terminal import text_table

    failed = sum(record is None for _, record in rows)
    title = f"Indexed {len(rows) - failed} of {len(rows)} file(s) in {seconds:.1f} s"
    if failed:
        title += f"; {failed} failed"
    columns = [("file", "left"), ("pages", "right"), ("nodes", "right"), ("TOC", "right"), ("title", "left")]
    table = text_table(columns, title=title, title_justify="left")
    for file, record in rows:
        if record is None:
            table.add_row(cell(Path(file).name), cell("-"), cell("-"), cell("-"), cell("(failed)"))
        else:
            table.add_row(
                cell(Path(file).name),
                cell(record["pages"]),
                cell(record["nodes"]),
                cell(record["toc_entries"]),
                cell(record["title"] or ""),
            )
    Console(width=120, highlight=False).print(table)


def _is_saved_index(file: str) -> bool:
    from ..document.store import DOCUMENT_FILE

    return Path(file).is_dir() or Path(file).name == DOCUMENT_FILE


def _search_pages(file: str, password: str | None, ocr: dict[str, Any]) -> list[dict[str, Any] | None]:
    """The pages of a file as the retriever indexes them: PyMuPDF's text for PDFs; for Markdown and text,
    and for a saved page index (a ``.pageindex`` folder or its ``document.json``), each page's Markdown
    with its section paths and descriptions, as ``DocumentLoaderPageIndex`` and ``index --retriever``
    give them (image and table descriptions included)."""
    from ..document.render import page_texts

    if _is_saved_index(file):
        from ..document.store import load_index

        return page_texts(load_index(file))
    if Path(file).suffix.lower() == ".pdf":
        from ..loaders.pdf_pages import read_pdf_pages
        from ..ocr.settings import ocr_settings

        return list(read_pdf_pages(file, password=password, ocr=ocr_settings(**ocr)))
    _check_source(file)
    from ..indexing import build_index

    return page_texts(build_index(file))


def _matches(retriever: Any, doc_id: str, query: str, max_pages: int) -> list[dict[str, Any]]:
    """The best pages with their extracts as plain text: the page's Markdown marks (``#``, ``-`` bullets,
    ``**``, table pipes) dropped, as the view shows them; the matched words stay in ``[`` ``]``."""
    from ..view.snippets import plain_snippet

    return [
        {
            "page_number": match.page_number,
            "score": match.score,
            "snippet": plain_snippet(retriever.snippet(doc_id, match.page_number, query, lines=True)),
        }
        for match in retriever.search(doc_id, query, max_pages=max_pages)
    ]


def _search_index(args: argparse.Namespace) -> list[dict[str, Any]] | int:
    """``search --retriever``: the matches of the document ``FILE`` names in that index, or an exit code
    after saying what went wrong."""
    from .batch import open_cli_retriever

    retriever, code = open_cli_retriever(args.retriever, args.schema, read_only=True)
    if retriever is None:
        return code
    try:
        with retriever:
            if args.file not in retriever:
                names = retriever.document_ids()
                listed = ", ".join(repr(name) for name in names[:10]) + (", ..." if len(names) > 10 else "")
                _error(
                    f"{args.file!r} is not a document of that index"
                    + (f"; it holds {len(names)}: {listed}" if names else "; it holds none")
                )
                return EXIT_FAILED
            return _matches(retriever, args.file, args.query, args.max_pages)
    except Exception as exc:
        _report_failure(args.file, exc, debug=args.debug)
        return EXIT_FAILED


def _run_search(args: argparse.Namespace) -> int:
    from ..errors import InvalidOptionError
    from ..retrieval.sqlite import SQLitePageRetriever, require_query_words
    from .batch import ocr_options, schema_without_retriever

    if args.max_pages < 1:
        _error("--max-pages must be at least 1")
        return EXIT_USAGE
    try:
        require_query_words(args.query)  # refused as DocumentLoaderRAG refuses it
    except InvalidOptionError as exc:
        _error(str(exc))
        return EXIT_USAGE
    if args.retriever is not None:
        if args.password is not None:
            _error("--password opens a file; with --retriever, FILE names a document of the index.")
            return EXIT_USAGE
        found_in_index = _search_index(args)
        if isinstance(found_in_index, int):
            return found_in_index
        found = found_in_index
    elif schema_without_retriever(args):
        return EXIT_USAGE
    elif args.password is not None and _is_saved_index(args.file):
        _error("--password opens an encrypted PDF; a saved page index needs none.")
        return EXIT_USAGE
    else:
        try:
            pages = _search_pages(args.file, args.password, ocr_options(args))
            with SQLitePageRetriever() as retriever:
                retriever.index("search", pages)  # the in-memory retriever holds this one document
                found = _matches(retriever, "search", args.query, args.max_pages)
        except Exception as exc:
            _report_failure(args.file, exc, debug=args.debug)
            return EXIT_FAILED
    if args.json:
        _print_json({"file": args.file, "query": args.query, "matches": found}, indent=2)
    elif not found:
        print(safe_text(f"No page of {args.file} matched {args.query!r}.", newlines=False))
    else:
        for item in found:
            snippet = safe_text(item["snippet"], newlines=False)
            print(f"page {item['page_number']:>4}  score {item['score']:8.3f}  {snippet}")
    return EXIT_OK if found else EXIT_FAILED


def _run_view(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.markup import escape

    from ..errors import InvalidOptionError
    from ..view import images_folder, view_index

    try:
        # Drawing the pages is most of a long document's view (seconds for a 10-K): shown page by page.
        with progress_bar(Console(stderr=True)) as bar:
            # Descriptions are rich markup: an index named "[red].pageindex" must show as it is.
            task = bar.add_task(escape(safe_text(Path(args.index).name, newlines=False)), total=None)

            def advance(done: int, total: int) -> None:
                bar.update(task, completed=done, total=total)

            written = view_index(
                args.index,
                source=args.source,
                output=args.output,
                query=args.query,
                max_pages=args.max_pages,
                embed_images=args.embed_images,
                dpi=args.dpi,
                password=args.password,
                progress=advance,
            )
    except InvalidOptionError as exc:  # view_index checks its options before it reads anything
        _error(str(exc))
        return EXIT_USAGE
    except Exception as exc:
        _report_failure(None, exc, debug=args.debug)  # the messages name the index or the source
        return EXIT_FAILED
    folder = images_folder(written)
    pictures = f" (page pictures in {folder})" if not args.embed_images and folder.is_dir() else ""
    print(safe_text(f"{args.index} -> {written}{pictures}", newlines=False))
    return EXIT_OK


def _run_inspect(args: argparse.Namespace) -> int:
    from .summary import inspect

    try:
        if args.json:
            stats = inspect(args.path, file=io.StringIO())
            _print_json(stats, indent=2)
        else:
            inspect(args.path)
    except BrokenPipeError:
        raise  # the reader went away: main() stops quietly
    except Exception as exc:
        _report_failure(None, exc, debug=args.debug)
        return EXIT_FAILED
    return EXIT_OK


class _SafeFormatter(logging.Formatter):
    """The library's log records as the command's warnings, their text made safe to print."""

    def format(self, record: logging.LogRecord) -> str:
        return safe_text(super().format(record))


def _tolerate_unencodable_output() -> None:
    """Write characters the terminal's encoding lacks as escapes instead of failing on them.

    A title in Greek printed to a Windows console in cp1252 (or with ``PYTHONIOENCODING=ascii``) would
    otherwise raise ``UnicodeEncodeError`` halfway through the output.
    """
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper) and stream.errors == "strict":
            stream.reconfigure(errors="backslashreplace")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code.

    Args:
        argv: The arguments, without the program name; ``sys.argv[1:]`` by default.

    Returns:
        The exit code (see the module docstring).
    """
    # Offline machines stall on litellm's price-map download at import; the bundled map is enough here.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    _tolerate_unencodable_output()
    args = _parser().parse_args(argv)
    # The library logs why it set something aside (an outline it did not trust); say it the CLI's way.
    handler = logging.StreamHandler()
    handler.setFormatter(_SafeFormatter(f"{PROG}: warning: %(message)s"))
    # instructor logs every retried call at ERROR level; the retries are ours to report, as errors.
    logging.getLogger("instructor").setLevel(logging.CRITICAL)
    package_logger = logging.getLogger("extract_thinker_pageindex")
    if not package_logger.handlers:
        package_logger.addHandler(handler)
        package_logger.setLevel(logging.WARNING)
    runners = {"index": _run_index, "search": _run_search, "inspect": _run_inspect, "view": _run_view}
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
