"""Query words on no page of a document, searched as that document spells them.

A question says "cashflow" where the filing prints "cash flow", "PPNE" for "property, plant and equipment",
"JnJ" for "Johnson & Johnson". When a written word is on no page of the searched document, the retriever
looks in the document itself for what the word stands for:

- **a split**: the word cut in two where the document prints both parts as a phrase ("cashflow" ->
  "cash flow", "passthrough" -> "pass-through"); the split found on the most pages wins;
- **an acronym**: a word written with capitals ("PPNE", "JnJ", "SNS") becomes the phrase of the document
  whose initials it is, small connecting words allowed ("and", "of", "&"; a lower-case "n" between capitals
  stands for "and", as in "JnJ"), if the document prints that phrase at least twice.

What is found is searched at the expansion weight, so it never outweighs a word the user wrote (which here
found nothing). The document-independent spellings ("U.S." and "US", "FY20" and "2020", two words joined)
are made with the query, in :func:`.query.respellings`.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from .stopwords import ENGLISH_STOP_WORDS

if TYPE_CHECKING:
    from .scoring import DocumentView, TermStatistics

__all__ = ["acronym_patterns", "document_spellings", "lowered_text"]

#: At most this many missing words are looked up per query (each costs a few index lookups).
MAX_MISSING = 3
#: An acronym's expansion must be printed at least this many times in the document.
MIN_EXPANSIONS = 2
# Between two words of an expansion: spaces or a comma, perhaps a small word ("plant and equipment").
_SEPARATOR = r"(?:[\s,]+(?:(?:and|of|the|for|on|in|to|&)\s+)?)"
# What a lower-case "n" or "&" of an acronym stands for: "and" or "&".
_CONNECTOR = r"(?:\s*&\s*|\s+and\s+|\s+n\s+|\s*'n'?\s*)"


def _word(letter: str) -> str:
    """A word of the expansion that starts with ``letter``, in lower-cased text, that is no function word
    ("for the year" is not "FY"). The pattern starts with the letter itself, so the regular expression
    engine skips quickly to the places worth trying."""
    rests = sorted(word[1:] for word in ENGLISH_STOP_WORDS if word[0] == letter and len(word) > 1)
    guard = f"(?!(?:{'|'.join(rests)})\\b)" if rests else ""
    # Plain ASCII marks beside \w: a class with "’" takes Python's compiler milliseconds to build (the text
    # searched has its "’" turned into "'").
    rest = r"[\w'-]+" if letter in ENGLISH_STOP_WORDS else r"[\w'-]*"
    return f"{re.escape(letter)}(?<![\\w&]{re.escape(letter)}){guard}{rest}"


@functools.lru_cache(maxsize=1024)
def acronym_patterns(raw: str) -> tuple[re.Pattern[str], ...]:
    """Regular expressions for the phrases whose initials spell ``raw`` ("PPNE", "JnJ"), in lower-cased
    text.

    Each letter starts a word; a lower-case "n" or "&" between capitals is the connector "and" / "&"; an
    upper-case "N" inside may be either, so it gives two patterns.
    """
    letters = [char for char in raw if char.isalpha() or char == "&"]
    if not 2 <= sum(char.isalpha() for char in letters) <= 6:
        return ()
    options: list[list[str]] = [[]]
    for position, char in enumerate(letters):
        inner = 0 < position < len(letters) - 1
        connector = char == "&" or (char == "n" and inner)
        either = char == "N" and inner
        grown: list[list[str]] = []
        for option in options:
            if connector or either:
                grown.append([*option, "&"])
            if not connector:
                grown.append([*option, char])
        options = grown
    patterns = []
    for option in options:
        if not option or option[0] == "&" or option[-1] == "&":
            continue
        regex = ""
        previous = None
        for item in option:
            if item == "&":
                previous = "&"
                continue
            if previous is not None:
                regex += _CONNECTOR if previous == "&" else _SEPARATOR
            regex += _word(item.lower())
            previous = item
        patterns.append(re.compile(rf"{regex}(?!\w)"))
    return tuple(patterns)


def lowered_text(bodies: Iterable[str]) -> str:
    """A document's text as acronym look-ups search it: lower case, with "’" as "'"."""
    return "\n".join(bodies).lower().replace("’", "'")


def _raw_forms(text: str, word: str) -> list[str]:
    return re.findall(rf"(?<![\w&]){re.escape(word)}(?![\w&])", text, re.IGNORECASE)


def _is_acronym(raw: str) -> bool:
    """A word of three to six letters written in capitals ("PPNE", "SNS"), or in capitals but one ("JnJ");
    not one with digits ("FY2020", "Q2"), and not two letters, which too many phrases share."""
    capitals = sum(char.isupper() for char in raw)
    return raw.isalpha() and 3 <= len(raw) <= 6 and capitals >= len(raw) - 1 and capitals >= 2


def document_spellings(
    view: DocumentView,
    statistics: TermStatistics,
    stem: Callable[[Sequence[str]], Mapping[str, tuple[str, ...]]],
    text: str,
    missing: Sequence[str],
    memo: dict[str, tuple[str, ...]] | None = None,
    document_text: Callable[[], str] | None = None,
) -> list[str]:
    """How the document spells written query words found on none of its pages: splits and acronym
    expansions that are on its pages (see the module's docstring), as words or phrases to search.

    ``memo`` keeps what was found for each word (the raw form of an acronym) in this version of the
    document, so the document's later queries look nothing up again; ``document_text`` gives the
    document's whole text in lower case (the retriever keeps the latest one), else it is read here.
    """
    memo = {} if memo is None else memo
    raws = {
        word: [raw for raw in dict.fromkeys(_raw_forms(text, word)) if _is_acronym(raw)]
        for word in list(missing)[:MAX_MISSING]
    }
    # A word is looked up once per document version, and once more for each new acronym form of it.
    keys = {word: " ".join([word, *forms]) for word, forms in raws.items()}
    known = [spelling for word, key in keys.items() if key in memo for spelling in memo[key]]
    words = [word for word, key in keys.items() if key not in memo]
    if not words:
        return known
    splits: dict[str, list[str]] = {}
    for word in words:
        if word.isalpha() and len(word) >= 6:
            splits[word] = [f"{word[:cut]} {word[cut:]}" for cut in range(3, len(word) - 2)]
    spellings: list[str] = []
    if splits:
        phrases = [phrase for options in splits.values() for phrase in options]
        stems = stem(phrases)
        tokens = {token for phrase in phrases for token in stems.get(phrase, ())}
        lookup = view.statistics(tokens) if tokens else statistics
        for word, options in splits.items():
            counted = [
                (len(lookup.term_hits(phrase, stems[phrase])), phrase)
                for phrase in options
                if len(stems.get(phrase, ())) == 2
            ]
            best = max(counted, default=(0, ""))
            if best[0]:
                spellings.append(best[1])
                memo[keys[word]] = (best[1],)
    acronyms = {word: [pattern for raw in raws[word] for pattern in acronym_patterns(raw)] for word in words}
    if any(acronyms.values()):
        text = (
            document_text()
            if document_text is not None
            else lowered_text(view.page_bodies(range(1, view.page_count + 1)).values())
        )
        for word, patterns in acronyms.items():
            counts: Counter[str] = Counter()
            for pattern in patterns:
                counts.update(" ".join(match.group(0).split()) for match in pattern.finditer(text))
            if counts:
                phrase, count = counts.most_common(1)[0]
                if count >= MIN_EXPANSIONS and phrase not in spellings:
                    spellings.append(phrase)
                    memo[keys[word]] = (*memo.get(keys[word], ()), phrase)
    for word in words:
        memo.setdefault(keys[word], ())
    return known + spellings
