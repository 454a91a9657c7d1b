"""The text a page gives the retriever's index: pages as a list, their text fields, text SQLite can store."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ..errors import InvalidOptionError
from ..inputs.files import clean_text

if TYPE_CHECKING:
    from .profiles import RetrievalProfile

__all__ = [
    "SURROGATE",
    "WORD",
    "Page",
    "clean_text",
    "join_split_words",
    "numeric_share",
    "page_facts",
    "page_list",
    "page_text_fields",
    "title_zone",
]

#: One page as ``index`` takes it: a page dict, a plain string, or ``None`` for a page without text.
Page = Mapping[str, Any] | str | None

# A word as FTS5's unicode61 tokenizer sees one: a run of letters and digits.
WORD = re.compile(r"[^\W_]+")
# UTF-16 surrogate code points: a str may hold them (os.listdir and surrogateescape decoding turn undecodable
# bytes into U+DC80..U+DCFF), but UTF-8, and so SQLite, cannot store them.
SURROGATE = re.compile(r"[\ud800-\udfff]")


#: How many of a page's first lines can be its title, and how long such a line may be.
TITLE_ZONE_LINES = 4
TITLE_LINE_CHARS = 80


def title_zone(body: str) -> str:
    """A page's first heading-like lines: up to ``TITLE_ZONE_LINES`` short lines with letters in them,
    before the first line of running text (a long line, one that continues a sentence in lower case, or a
    sentence of many words). Page numbers and amounts are passed over; a Markdown heading's ``#`` marks
    are dropped. A title stands over something: a page with fewer than two lines after it has none."""
    lines: list[str] = []
    rest = 0
    for line in body.splitlines():
        text = " ".join(line.lstrip("#").split())
        if not text or not any(character.isalpha() for character in text):
            continue
        if rest or len(lines) >= TITLE_ZONE_LINES or _running_text(text):
            rest += 1
            if rest >= 2:
                break
            continue
        lines.append(text)
    return "\n".join(lines) if rest >= 2 else ""


# A word broken before its last letter ("Shee t", "ne t", "SHEE T"), and a run of three or more letters
# set one space apart ("P A C I F I C"): how PyMuPDF reads letter-spaced print. The scan looks for a lone
# letter after a space (not "a", "I" or "A", which are words, nor an initial such as the "U" of "U.S."),
# which keeps it cheap; the word before it is read only where one is found.
_LONE_LETTER = re.compile(r" [b-hj-zB-HJ-Z](?![\w.'’&/-])")
_HEAD = re.compile(r"(?<![^\W\d_])[^\W\d_]{2,}$")
_SPACED = re.compile(r"(?<![^\W\d_] )\b[^\W\d_](?: [^\W\d_]){2,}\b(?! [^\W\d_]\b)")
#: How many times more often the joined word must stand whole in the document than its broken head.
JOIN_RATIO = 4


def join_split_words(bodies: list[str]) -> list[str]:
    """The pages' text with letter-spaced words joined again, for the index only (the text a model is
    given is not changed): "Consolidated Balance Shee t" becomes "... Sheet" when the document prints
    "sheet" whole at least :data:`JOIN_RATIO` times as often as "shee" (so "Regulation S" stays apart:
    "regulation" is a word of its own there), and "P A C I F I C" becomes "PACIFIC" when the document
    prints "pacific" whole elsewhere. Both parts must be of one case ("America N" stays)."""
    breaks: list[list[tuple[int, str, str]]] = []  # per page: (the space's offset, head, tail)
    spaced_pages: set[int] = set()
    candidates: set[str] = set()
    for number, body in enumerate(bodies):
        found = []
        for match in _LONE_LETTER.finditer(body):
            space = match.start()
            tail = body[space + 1]
            before = body[space - 1] if space else " "
            if space >= 2 and body[space - 2] == " " and before.isalpha():
                spaced_pages.add(number)  # "... I C": a run of spaced letters
                continue
            if not _same_case(before, tail):
                continue
            word = _HEAD.search(body, max(0, space - 40), space)
            if word is not None:
                found.append((space, word.group(0), tail))
                candidates.update((word.group(0).lower(), (word.group(0) + tail).lower()))
        breaks.append(found)
        if number in spaced_pages:
            for match in _SPACED.finditer(body):
                candidates.add(match.group(0).replace(" ", "").lower())
    if not candidates:
        return bodies
    counts: dict[str, int] = dict.fromkeys(candidates, 0)
    longest_first = sorted(candidates, key=len, reverse=True)
    wanted = re.compile(r"\b(?:" + "|".join(map(re.escape, longest_first)) + r")\b")
    for word in wanted.findall("\n".join(bodies).lower()):
        counts[word] += 1

    def spaced(match: re.Match[str]) -> str:
        joined = match.group(0).replace(" ", "")
        return joined if counts.get(joined.lower(), 0) >= 1 else match.group(0)

    repaired = []
    for number, (body, found) in enumerate(zip(bodies, breaks, strict=True)):
        parts: list[str] = []
        done = 0
        for space, head, tail in found:
            whole = counts.get((head + tail).lower(), 0)
            if whole >= 2 and whole >= JOIN_RATIO * counts.get(head.lower(), 0):
                parts.append(body[done:space])
                done = space + 1  # the space goes
        parts.append(body[done:])
        text = "".join(parts) if done else body
        repaired.append(_SPACED.sub(spaced, text) if number in spaced_pages else text)
    return repaired


def _same_case(last: str, tail: str) -> bool:
    return (last.islower() and tail.islower()) or (last.isupper() and tail.isupper())


def _running_text(line: str) -> bool:
    words = line.split()
    return (
        len(line) > TITLE_LINE_CHARS
        or line[0].islower()
        or (line.endswith((".", ",", ";")) and len(words) > 8)
    )


def page_facts(body: str, profile: RetrievalProfile | None) -> tuple[str | None, float]:
    """What the ranking needs to know of a page, computed once when it is indexed: its kind in the domain
    profile (from its title zone) and its share of numbers."""
    share = numeric_share(body)
    kind = profile.page_kind(title_zone(body), share) if profile is not None else None
    return kind, round(share, 4)


def numeric_share(body: str) -> float:
    """The share of a page's words that are numbers: about 0.3-0.6 on a financial statement, under 0.1 in
    running text."""
    words = WORD.findall(body)
    if not words:
        return 0.0
    return sum(word.isdigit() for word in words) / len(words)


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

    The body is ``content`` (its texts and numbers, when it is a list or a dict) plus whatever of
    ``markdown``, ``tables`` and ``forms`` is not already in it (so no text is counted twice); headings are
    the page's ``sections`` titles; descriptions are the ``section_descriptions``. Images and other keys
    are ignored. A string is the body; ``None`` is no text. Lone surrogates, which SQLite cannot store,
    become U+FFFD.
    """
    if page is None:
        return "", "", ""
    if isinstance(page, str):
        return clean_text(page), "", ""
    content = page.get("content")
    if content is not None and not isinstance(content, str):
        # A loader of your own may give structured content (a list of lines, a dict of fields): its texts
        # and numbers are the page's text, as the framework's retriever indexes it (as JSON there).
        parts: list[str] = []
        _flatten(content, parts)
        content = "\n".join(parts)
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
