"""The ``extract-thinker-pageindex`` command: argument parsing, output and error-to-exit-code mapping.

Exit codes: 0 success; 1 a document could not be processed (the others still are); 2 bad usage;
130 interrupted.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
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
    index.add_argument("files", nargs="+", metavar="FILE", help="documents to index (.md, .txt, ...)")
    index.add_argument(
        "-o", "--output", metavar="DIR", help="directory to write the <name>.pageindex/ folders into"
    )
    index.add_argument("--pages", metavar="SPEC", help="1-based pages to index, e.g. '1-3,5,7-10'")
    index.add_argument(
        "--strategy", choices=("auto", "text", "vision"), default="auto", help="how PDF pages are read"
    )
    index.add_argument("--model", help="litellm model name for the parts that need a model")
    index.add_argument("--parallel", type=int, default=3, metavar="N", help="pages sent to the model at once")
    index.add_argument("--json", action="store_true", help="print one JSON object per file instead of text")

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
    from .errors import PageIndexError
    from .store import default_output_path, index_document

    if args.parallel < 1:
        _error("--parallel must be at least 1")
        return EXIT_USAGE
    status = EXIT_OK
    for file in args.files:
        target = default_output_path(file)
        if args.output is not None:
            target = Path(args.output) / target.name
        try:
            document, written = index_document(
                file,
                output=target,
                pages=args.pages,
                strategy=args.strategy,
                model=args.model,
                parallel=args.parallel,
            )
        except (PageIndexError, OSError) as exc:
            _error(f"{file}: {exc}")
            status = EXIT_FAILED
            continue
        counts = document.node_counts()
        record: dict[str, Any] = {
            "file": file,
            "output": str(written),
            "pages": len(document.pages),
            "nodes": sum(counts.values()),
            "toc_entries": len(document.toc),
            "title": document.title,
        }
        if args.json:
            print(json.dumps(record))
        else:
            print(
                f"{file} -> {written}: {record['pages']} page(s), {record['nodes']} nodes, "
                f"{record['toc_entries']} TOC entries"
            )
    return status


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
    try:
        if args.command == "index":
            return _run_index(args)
        return _run_inspect(args)
    except KeyboardInterrupt:
        _error("interrupted")
        return EXIT_INTERRUPTED


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
