"""Query understanding: a question (or a query built from a Contract) turned into weighted search terms.

- Words of instructions and boilerplate ("round your answer to two decimal places", "in USD millions",
  "you are an investment analyst") carry no weight: they say how to answer, not where the answer is.
- Acronyms and synonyms (the profile's and the user's) are searched too, at a lower weight than the words
  written ("capex" also finds "purchases of property and equipment").
- Numbers and years are terms like any word.
- Function words are dropped, except where they matter: a capitalised one inside a sentence ("May 2024",
  "IT") and negations ("not").
- A query that asks for a figure ("how much", "what was", "ratio", "total") is marked, so that pages dense
  with numbers can be preferred.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from .page_text import WORD
from .stopwords import ENGLISH_STOP_WORDS

__all__ = ["INSTRUCTION_WORDS", "QueryPlan", "analyse_query", "query_words", "fiscal_years", "respellings"]

MAX_QUERY_WORDS = 64
MAX_WORD_LENGTH = 64

# Words that tell the reader how to answer, never where the answer stands. Kept out of the ranking when
# ``Ranking.query_weights`` is on; a query made only of them still searches them.
_INSTRUCTION = """
answer answers answering question questions respond round rounded rounding decimal decimals perspective
analyst analysts banker bankers judgment judgments judgement judgements basing outlined primarily
referencing plainly clearly assume assuming calculate calculated calculating calculation compute computed
computing please approximation percents usd millions billions thousands according solely
"""
INSTRUCTION_WORDS = frozenset(_INSTRUCTION.split())
# Phrases of boilerplate whose words are content elsewhere ("information", "agreement", "value", "units"):
# only the whole phrase is dropped, never the word on its own.
_BOILERPLATE = re.compile(
    r"\b(?:you are an? [a-z ]{0,30}?(?:banker|analyst|expert|accountant)s?"
    r"|(?:and )?your only resources?(?: ?\(s\))?(?: to answer)?"
    r"|investment (?:banker|analyst)s?|(?:a |the )?financial metrics?|decimal places?"
    r"|in agreement with the information(?: outlined| provided)?"
    r"|(?:the |based on the |using the )?(?:information|details) (?:provided|outlined|shown)(?: in| within)?"
    r"|in units of|provide a response|answer in|respond to the question"
    r"|round(?:ed|ing)? (?:your |the )?(?:answers? |results? )?to (?:the nearest )?\w+"
    r"(?: decimal places?| decimals?| digits?)?"
    r"|in (?:usd|us dollars|dollars|eur|euros)(?: (?:millions|billions|thousands))?"
    r"|here'?s the question|the following question"
    # How to write the answer down, in every domain: "Please write the answer in float format", "list the
    # numbers in the list format by descending order", "e.g., ["2","1"]".
    r"|(?:please )?(?:write|give|list|provide|return|express|present|output)(?: down)? (?:the |your )?"
    r"(?:final )?(?:answers?|numbers?|results?|values?) (?:in|into|as|with|using)\b[^.?!]*"
    r"|in (?:the )?(?:int|integer|float|string|list|json|percentage|decimal|numeric|number) format"
    r"|in (?:ascending|descending|ascend|descend) order)\b",
    re.IGNORECASE,
)
# "e.g." and "i.e." with the example that follows in brackets or quotes: the form of an answer, not its place.
_EXAMPLE = re.compile(r"(?<!\w)(?:e\.\s?g|i\.\s?e)\.,?(?:\s*\[[^\]]*\]|\s*\"[^\"]*\")?", re.IGNORECASE)
# A question that asks for a figure, not for a passage.
_ASKS_FIGURE = re.compile(
    r"\b(?:how (?:much|many)|amounts?|totals?|ratios?|margins?|percent(?:age)?s?|cagr|turnover|average"
    r"|rates?|fees?|prices?|costs?|in (?:usd|us dollars|dollars|millions|billions|thousands)"
    # Superlatives compare figures, in any domain: "which segment had the lowest...", "the largest drop".
    r"|highest|lowest|largest|smallest|biggest|greatest|fewest|least|most|best|worst|maximum|minimum"
    r"|top (?:\d+|three|five|ten))\b|%",
    re.IGNORECASE,
)
# Negations decide what a passage says; the retriever keeps them although English lists them as stop words.
_KEPT_FUNCTION_WORDS = frozenset({"not", "no", "nor"})
_OPERATOR_WORDS = frozenset({"and", "or"})


@dataclass(frozen=True)
class QueryPlan:
    """A query's search terms with their weights, and what it asks for.

    Attributes:
        terms: ``(word, weight)`` in query order, each word once: written words 1.0, expansions less.
        asks_figure: The query asks for a number (an amount, a ratio, a total).
        text: The query as given, for the profile's patterns.
        written: The words written in the query that are searched (no expansions).
        fallbacks: Other spellings of written words, searched only when a document has the written word on
            none of its pages ("FY2020" -> "2020").
        pairs: Written words that stand next to each other in the query, as in a phrase ("capital
            expenditure"), for the proximity bonus: only function words may stand between them, and no
            punctuation, instruction word or dropped boilerplate.
    """

    terms: tuple[tuple[str, float], ...]
    asks_figure: bool = False
    text: str = ""
    written: tuple[str, ...] = field(default=())
    pairs: tuple[tuple[str, str], ...] = field(default=())
    fallbacks: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def words(self) -> list[str]:
        """The searched words, in order."""
        return [word for word, _ in self.terms]


def _sentence_start(text: str, start: int) -> bool:
    before = text[:start].rstrip()
    return not before or before[-1] in ".?!:;\n\"'(["


def query_words(query: str) -> list[str]:
    """The searchable words of a query: lower-cased letter and digit runs, without repeats, and without
    English function words unless they matter: a capitalised one inside a sentence, such as "May" in
    "May 2024" or "IT", and the negations "not", "no" and "nor".

    Nothing in the query is ever interpreted as FTS5 or SQL syntax: quotes, ``NEAR``, ``*``, ``:``, ``-``,
    ``AND`` and parentheses are just text, and text that is no word is dropped.
    """
    words: list[str] = []
    seen: set[str] = set()
    letters = [match.group(0) for match in WORD.finditer(query) if match.group(0)[:1].isalpha()]
    # In a query written in capitals or Title Case, a capital says nothing about a word.
    mixed_case = sum(word[:1].isupper() for word in letters) * 2 < len(letters)
    for match in WORD.finditer(query):
        raw = match.group(0)
        word = raw.lower()
        if len(word) > MAX_WORD_LENGTH or word in seen:
            continue
        seen.add(word)
        if word in ENGLISH_STOP_WORDS and word not in _KEPT_FUNCTION_WORDS:
            # "AND" and "OR" in capitals are operators people type out of habit, never names.
            capitalised = mixed_case and raw[:1].isupper() and not _sentence_start(query, match.start())
            if not capitalised or word in _OPERATOR_WORDS:
                continue
        words.append(word)
        if len(words) >= MAX_QUERY_WORDS:
            break
    return words


_PHRASE_BREAK = re.compile(r"[.?!,;:()\[\]{}\"/|]")


def _phrase_pairs(text: str, searched: set[str]) -> tuple[tuple[str, str], ...]:
    """Pairs of searched words adjacent in ``text``: at most two function words between, no punctuation."""
    pairs: list[tuple[str, str]] = []
    previous: str | None = None
    gap = 0
    last_end = 0
    for match in WORD.finditer(text):
        word = match.group(0).lower()
        if _PHRASE_BREAK.search(text, last_end, match.start()):
            previous, gap = None, 0
        last_end = match.end()
        if word in searched:
            if previous is not None and previous != word and gap <= 2 and (previous, word) not in pairs:
                pairs.append((previous, word))
            previous, gap = word, 0
        elif word in ENGLISH_STOP_WORDS:
            gap += 1
        else:
            previous, gap = None, 0  # an instruction word, or one dropped: the phrase ends here
    return tuple(pairs)


_TOKEN = re.compile(r"[\w&]+")
_PLAIN_PHRASE = re.compile(r"[\w&]+(?: [\w&]+)*")
# The phrase index of the synonym tables in use (a retriever keeps its tables for its life): the table
# itself is kept with its index, so an id is never mistaken for that of a table made later.
_PHRASE_INDEXES: dict[
    int, tuple[Mapping[str, Iterable[str]], dict[str, list[tuple[list[str], str]]], list[str]]
] = {}


def _phrase_index(
    synonyms: Mapping[str, Iterable[str]],
) -> tuple[dict[str, list[tuple[list[str], str]]], list[str]]:
    """The phrases of a synonym table by their first word, and those that are not plain words (matched by
    a regular expression)."""
    entry = _PHRASE_INDEXES.get(id(synonyms))
    if entry is not None and entry[0] is synonyms:
        return entry[1], entry[2]
    by_first: dict[str, list[tuple[list[str], str]]] = {}
    others: list[str] = []
    for phrase in synonyms:
        lowered = " ".join(phrase.lower().split())
        if _PLAIN_PHRASE.fullmatch(lowered):
            words = lowered.split(" ")
            by_first.setdefault(words[0], []).append((words, phrase))
        else:
            others.append(phrase)
    if len(_PHRASE_INDEXES) > 64:
        _PHRASE_INDEXES.clear()
    _PHRASE_INDEXES[id(synonyms)] = (synonyms, by_first, others)
    return by_first, others


def _phrases_in(lowered: str, synonyms: Mapping[str, Iterable[str]]) -> list[str]:
    """The phrases of a synonym table that stand in a lower-cased query whose white space is single
    spaces, as whole words (not inside "r&d" or "year-end2"), in the table's order."""
    by_first, others = _phrase_index(synonyms)
    tokens = [(match.group(0), match.start(), match.end()) for match in _TOKEN.finditer(lowered)]
    found: set[str] = set()
    for position, (word, _, _) in enumerate(tokens):
        for words, phrase in by_first.get(word, ()):
            if position + len(words) > len(tokens):
                continue
            if all(
                tokens[position + offset][0] == words[offset]
                and tokens[position + offset][1] == tokens[position + offset - 1][2] + 1
                and lowered[tokens[position + offset - 1][2]] == " "
                for offset in range(1, len(words))
            ):
                found.add(phrase)
    found.update(phrase for phrase in others if _phrase_pattern(phrase.lower()).search(lowered))
    return [phrase for phrase in synonyms if phrase in found]


@functools.lru_cache(maxsize=4096)
def _phrase_pattern(phrase: str) -> re.Pattern[str]:
    escaped = r"\s+".join(re.escape(part) for part in phrase.split())
    return re.compile(rf"(?<![\w&]){escaped}(?![\w&])")


# "U.S.", "U.K.", "E.U.": capitals with full stops, one word however a document spells it.
_DOTTED = re.compile(r"(?<![\w.])((?:[A-Z]\.){2,})(?!\w)")
_SHORT_CAPITALS = re.compile(r"\b[A-Z]{2,3}\b")
_ADJACENT = re.compile(r"\b([^\W\d_]{3,})[ -](?=([^\W\d_]{3,})\b)")
# Fiscal years as questions write them: "FY20", "FY2020", "FY 2020", "FY'20".
_FISCAL = re.compile(r"\bfy\s?'?(\d{2}|\d{4})\b", re.IGNORECASE)


def respellings(text: str, written: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """Other spellings of the query's words that a document may use, each a word or a phrase:

    - letters with full stops and without: "U.S." and "US" (the index reads "U.S." as the letters "u s");
    - two words written apart also search them joined ("cash flow" finds "cashflow"), and one word is split
      where the document prints it apart (done by the retriever, which sees the document).

    Returns:
        ``{written word: spellings}``; a spelling equal to a written word is left out.
    """
    found: dict[str, list[str]] = {}
    writtenset = set(written)

    def add(word: str, spelling: str) -> None:
        if word in writtenset and spelling not in writtenset and spelling != word:
            found.setdefault(word, [])
            if spelling not in found[word]:
                found[word].append(spelling)

    # Spelled with its full stops, which each backend's tokenizer reads as it read the document's "U.S."
    for match in _DOTTED.finditer(text):
        letters = match.group(1).replace(".", "").lower()
        add(letters, ".".join(letters) + ".")
    capitals = set(_SHORT_CAPITALS.findall(text))
    for word in written:
        if word.isalpha() and word != "fy" and word.upper() in capitals:
            add(word, ".".join(word) + ".")  # "US" also finds "U.S."
    # Two words of three letters or more, side by side or hyphenated: "cash flow", "pass-through".
    for match in _ADJACENT.finditer(text.lower()):
        if match.group(1) in writtenset and match.group(2) in writtenset:
            add(match.group(1), match.group(1) + match.group(2))
    return {word: tuple(spellings) for word, spellings in found.items()}


def fiscal_years(text: str, written: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """The year each fiscal-year form of the query stands for ("FY20", "FY2020" -> "2020"), by the written
    word it became; searched only where the document does not print the form as written."""
    found: dict[str, tuple[str, ...]] = {}
    for match in _FISCAL.finditer(text):
        digits = match.group(1)
        year = digits if len(digits) == 4 else ("20" if int(digits) < 70 else "19") + digits
        word = re.sub(r"[\s']", "", match.group(0)).lower()
        key = word if word in written else digits  # "FY 2020" and "FY'20" are written as two words
        if key in written and year not in written:
            found[key] = (year,)
    return found


def analyse_query(
    query: str,
    *,
    synonyms: Mapping[str, Iterable[str]] | None = None,
    instruction_words: bool = True,
    expansion_weight: float = 0.75,
    respell: bool = False,
) -> QueryPlan:
    """Turn a query into weighted terms.

    Args:
        query: The question or keywords.
        synonyms: Lower-cased phrase -> phrases also searched, at ``expansion_weight``.
        instruction_words: Give the words of instructions and boilerplate no weight.
        expansion_weight: The weight of an expansion relative to a written word.
        respell: Search the other spellings of :func:`respellings` too, at ``expansion_weight``.

    Returns:
        The plan: terms with weights, and whether the query asks for a figure.
    """
    text = query.replace("’", "'")
    if respell:
        # "U.S." is one word, "us" ("US" when written so), wherever the query has it.
        text = _DOTTED.sub(lambda match: match.group(1).replace(".", "") + " ", text)
    # Boilerplate becomes a full stop, so no phrase is taken across the words it held.
    content = _BOILERPLATE.sub(" . ", _EXAMPLE.sub(" . ", text)) if instruction_words else text
    written = query_words(content) or query_words(text)  # a query of nothing but boilerplate searches it
    if instruction_words:
        kept = [word for word in written if word not in INSTRUCTION_WORDS]
        written = kept or written  # a query of nothing but such words still searches them
    terms: dict[str, float] = dict.fromkeys(written, 1.0)
    if synonyms:
        lowered = " ".join(text.lower().split())
        for phrase in _phrases_in(lowered, synonyms):
            for expansion in synonyms[phrase]:
                for word in query_words(expansion):
                    if word not in terms and len(terms) < MAX_QUERY_WORDS:
                        terms[word] = expansion_weight
    if respell:
        for word, spellings in respellings(query.replace("’", "'"), written).items():
            for spelling in spellings:
                if spelling not in terms and len(terms) < MAX_QUERY_WORDS:
                    terms[spelling] = expansion_weight * terms.get(word, 1.0)
    return QueryPlan(
        fallbacks=fiscal_years(query, written) if respell else {},
        terms=tuple(terms.items()),
        pairs=_phrase_pairs(content, set(written)),
        asks_figure=_ASKS_FIGURE.search(text) is not None,
        text=query,
        written=tuple(written),
    )
