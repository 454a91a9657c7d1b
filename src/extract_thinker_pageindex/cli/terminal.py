"""Text made safe to print (a document's or a file name's control characters are shown, never obeyed),
and the command line's progress display.

Titles, authors, TOC entries and abstracts come from the documents indexed, file names from the file
system and error messages often quote both. Printed as they are, an escape sequence in a PDF's title
(``ESC [2J``) clears the user's terminal or retitles its window, a carriage return overwrites the line
before it, a right-to-left override reverses what follows it, and a lone UTF-16 surrogate (from a file
name that is not UTF-8, or a JSON ``\\udcff`` escape) makes ``print`` raise ``UnicodeEncodeError``.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["progress_bar", "safe_text"]

# C0 controls (ESC included) but tab and newline, DEL, C1 controls, the bidirectional formatting
# characters (marks, embeddings, overrides, isolates), the line and paragraph separators and surrogates.
_UNSAFE = "\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff"
_UNSAFE_KEEPING_NEWLINES = re.compile(f"[{_UNSAFE}]")
_UNSAFE_ON_ONE_LINE = re.compile(f"[\n{_UNSAFE}]")
_NAMED = {"\n": "\\n", "\r": "\\r"}


def _escape(match: re.Match[str]) -> str:
    character = match.group(0)
    code = ord(character)
    return _NAMED.get(character) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def safe_text(text: object, *, newlines: bool = True) -> str:
    """Text with every character that a terminal would obey written as a visible escape instead.

    Escaped: C0 control characters but tab (and newline, unless ``newlines=False``), DEL, C1 control
    characters, the bidirectional formatting characters (U+061C, U+200E, U+200F, U+202A-U+202E,
    U+2066-U+2069), U+2028 and U+2029, and lone surrogates. Each becomes ``\\n``, ``\\r``, ``\\xNN`` or
    ``\\uNNNN``: ``"\\x1b[31mRed"`` prints as ``\\x1b[31mRed``, and a surrogate can no longer fail to
    encode.

    Args:
        text: What to print; anything else than a string is converted with ``str()`` first.
        newlines: Keep newlines (multi-line text such as an abstract or a traceback); with False they are
            escaped too, for a value shown on one line (a title, a file name, a TOC entry).

    Returns:
        The text, unchanged when it holds none of those characters.
    """
    string = text if isinstance(text, str) else str(text)
    pattern = _UNSAFE_KEEPING_NEWLINES if newlines else _UNSAFE_ON_ONE_LINE
    return pattern.sub(_escape, string)


def text_table(columns: list[tuple[str, str]], **options: Any) -> Any:
    """A rich ``Table`` with ``(name, justify)`` columns; ``options`` go to the table (title, caption)."""
    from rich.table import Table

    table = Table(**options)
    for column, justify in columns:
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    return table


def text_cell(value: object) -> Any:
    """A table cell for any value: rich ``Text`` (never markup, so "[...]" in a name is shown as it is),
    through :func:`safe_text` on one line."""
    from rich.text import Text

    return Text(safe_text(value, newlines=False))


def progress_bar(stderr: Any) -> Any:
    """The command line's progress display (``index``, ``index --engine``, ``view``): a line per task with
    its bar, done/total and the time taken. It goes to standard error and only to a terminal, so standard
    output stays clean for scripts, and is gone once done.

    Args:
        stderr: A rich ``Console`` on standard error.
    """
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=stderr,
        transient=True,
        disable=not stderr.is_terminal,
    )
