"""The text a page gives the retriever's index: pages as a list, their text fields, text SQLite can store."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import InvalidOptionError

__all__ = ["SURROGATE", "WORD", "Page", "clean_text", "page_list", "page_text_fields"]

#: One page as ``index`` takes it: a page dict, a plain string, or ``None`` for a page without text.
Page = Mapping[str, Any] | str | None

# A word as FTS5's unicode61 tokenizer sees one: a run of letters and digits.
WORD = re.compile(r"[^\W_]+")
# UTF-16 surrogate code points: a str may hold them (os.listdir and surrogateescape decoding turn undecodable
# bytes into U+DC80..U+DCFF), but UTF-8, and so SQLite, cannot store them.
SURROGATE = re.compile(r"[\ud800-\udfff]")


def clean_text(text: str) -> str:
    """Text SQLite can store: lone surrogates become U+FFFD, a split surrogate pair becomes its character.

    U+FFFD is no letter or digit to FTS5, so the words on either side of a lone surrogate stay two words.
    """
    if SURROGATE.search(text) is None:
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def page_list(pages: Iterable[Page] | str | Mapping[str, Any]) -> list[Mapping[str, Any] | str]:
    """The pages of a document as a list, each a page dict or a string.

    A lone string or a lone page dict is **one** page (never one page per character or per key). ``None``
    in the list is a page without text: it keeps its position, so the pages after it keep their numbers.

    Args:
        pages: Page dicts, strings or ``None``, in document order (any iterable); or one string or dict.

    Returns:
        The pages, ``None`` replaced by ``""``.

    Raises:
        InvalidOptionError: ``pages`` is not an iterable of pages, or a page is of another type (bytes,
            a number...); the message names its 1-based position.
    """
    if isinstance(pages, (str, Mapping)):
        return [pages]
    if isinstance(pages, (bytes, bytearray, memoryview)):
        raise InvalidOptionError(
            f"pages is {type(pages).__name__}, not text; decode it (for example pages.decode('utf-8')) and "
            "pass the string, or a list of page dicts or strings."
        )
    if not isinstance(pages, Iterable):
        raise InvalidOptionError(
            f"pages must be a list of page dicts or strings (or one string); got {type(pages).__name__}."
        )
    result: list[Mapping[str, Any] | str] = []
    for position, page in enumerate(pages, start=1):
        if page is None:
            result.append("")
        elif isinstance(page, (str, Mapping)):
            result.append(page)
        else:
            hint = " (decode it to a string first)" if isinstance(page, (bytes, bytearray)) else ""
            raise InvalidOptionError(
                f"Page {position} is {type(page).__name__}{hint}; a page is a dict with 'content', a string, "
                "or None for a page without text."
            )
    return result


def _flatten(value: Any, out: list[str]) -> None:
    if value is None:
        return
    if isinstance(value, str):
        if value.strip():
            out.append(value)
    elif isinstance(value, Mapping):
        # Form fields are {label: value}: the printed label is page text too.
        for key, item in value.items():
            _flatten(key, out)
            _flatten(item, out)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _flatten(item, out)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        out.append(str(value))


def page_text_fields(page: Page) -> tuple[str, str, str]:
    """The text a page contributes to the index: ``(body, headings, descriptions)``.

    The body is ``content`` plus whatever of ``markdown``, ``tables`` and ``forms`` is not already in it (so
    no text is counted twice); headings are the page's ``sections`` titles; descriptions are the
    ``section_descriptions``. Images and other keys are ignored. A string is the body; ``None`` is no text.
    Lone surrogates, which SQLite cannot store, become U+FFFD.
    """
    if page is None:
        return "", "", ""
    if isinstance(page, str):
        return clean_text(page), "", ""
    content = page.get("content")
    body_parts = [content] if isinstance(content, str) and content.strip() else []
    markdown = page.get("markdown")
    if (
        isinstance(markdown, str)
        and markdown.strip()
        and (not body_parts or markdown.strip() not in body_parts[0])
    ):
        body_parts.append(markdown)
    # Table cells and form fields count once: those already in the text (as whole words) are skipped.
    words = set(WORD.findall("\n".join(body_parts).lower()))
    for key in ("tables", "forms"):
        extra: list[str] = []
        _flatten(page.get(key), extra)
        missing = [text for text in extra if not set(WORD.findall(text.lower())) <= words]
        if missing:
            body_parts.append("\n".join(missing))
    paths: list[str] = []
    _flatten(page.get("sections"), paths)
    # A heading path ("Part II > Item 7 > Liquidity") names each title once, however many paths share it.
    headings = list(
        dict.fromkeys(title.strip() for path in paths for title in path.split(" > ") if title.strip())
    )
    descriptions: list[str] = []
    _flatten(page.get("section_descriptions"), descriptions)
    return (
        clean_text("\n".join(body_parts)),
        clean_text("\n".join(headings)),
        clean_text("\n".join(descriptions)),
    )
