"""The ranking's switches and weights, in one value: what ``SQLitePageRetriever(ranking=...)`` takes.

Every mechanism can be switched off on its own, which is how ``benchmarks/retrieval.py`` measures what each
one is worth (an ablation). The weights are set by rules that can be explained, not fitted to questions:
a boost is a share of the best lexical score of the query, so it means the same on every document and for
every query length; the one weight chosen on data, ``expansion_weight``, was chosen by cross-validation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Literal

from ..errors import InvalidOptionError

__all__ = ["Ranking"]


@dataclass(frozen=True)
class Ranking:
    """How ``SQLitePageRetriever`` ranks pages.

    Attributes:
        query_weights: Words of instructions and boilerplate ("round your answer to two decimal places",
            "you are an analyst") carry no weight; the words that name what is sought do.
        synonyms: Acronyms and synonyms of the query's words (the profile's and the user's) are searched
            too, with ``expansion_weight``.
        respell: Query words the document spells otherwise are searched in its spelling too, at
            ``expansion_weight``: "U.S." and "US", "FY20" and "2020", "cash flow" and "cashflow", and,
            for a word on no page of the document, its split where the document prints it apart
            ("cashflow" finds "cash flow") and, for an acronym on no page, the phrase of the document
            whose initials it is ("PPNE" finds "property, plant and equipment", "JnJ" "Johnson & Johnson").
        title_zone: The first heading-like lines of a page without a heading path are indexed as its
            title, weighted like headings. Acts when pages are indexed.
        join_split_words: Letter-spaced words that PyMuPDF reads apart ("Balance Shee t", "P A C I F I C")
            are joined in what is indexed (not in the pages a loader returns) when the document prints
            the word whole elsewhere. Acts when pages are indexed.
        numeric_density: A query that asks for a figure ("how much", "ratio", "total") prefers pages
            dense with numbers (tables, statements).
        proximity: Adjacent query words found near each other on a page add a bonus.
        decoys: A page whose only query words stand on half the document's pages or more (a running
            header, the document's name, its subject) ranks below every page holding a written query word
            that tells pages apart (certifications, signatures and covers repeat the former).
        references: Pages a question names are candidates: "page 17" or "slide 5" raises the pages that
            print that number (else the file's 17th page) by ``reference_boost``; "Table 3" or "Figure 2"
            raises the pages whose caption starts with that label by ``caption_boost``.
        profile: The domain profile's page prior (a question about capital expenditure points to the cash
            flow statement): ``"auto"`` uses it only when both the document (pages of at least two of
            the profile's kinds, such as a balance sheet and a cash flow statement) and the query (a
            metric it knows) show the domain, ``"on"`` whenever the query names a metric and a page of its
            kind exists, ``"off"`` never.
        expansion_weight: The weight of an expansion term, relative to a word written in the query: below
            1, so the words written count most. In a 5-fold cross-validation the folds chose 1 four times
            and 0.75 once; 0.75 is the largest value below 1 of that grid, and held out it scores as the
            fitted values do (see docs/benchmarks.md).
        numeric_boost: The most a page's density of numbers adds, as a share of the best lexical score.
        statement_boost: What a page of the statement the query points to adds, as a share of the best
            lexical score.
        reference_boost: What a page the question names by its number adds, as a share of the best
            lexical score: at 1 it ranks with the best page found by words, plus its own words.
        caption_boost: What a page with the caption of a table or figure the question names adds, as a
            share of the best lexical score.
    """

    query_weights: bool = True
    synonyms: bool = True
    respell: bool = True
    title_zone: bool = True
    join_split_words: bool = True
    numeric_density: bool = True
    proximity: bool = True
    decoys: bool = True
    references: bool = True
    profile: Literal["auto", "on", "off"] = "auto"
    expansion_weight: float = 0.75
    numeric_boost: float = 0.5
    statement_boost: float = 0.5
    reference_boost: float = 1.0
    caption_boost: float = 0.5

    def __post_init__(self) -> None:
        for field in fields(self):
            value = getattr(self, field.name)
            if field.type in ("bool", bool) and not isinstance(value, bool):
                raise InvalidOptionError(f"Ranking.{field.name} must be True or False; got {value!r}.")
            if field.type in ("float", float) and (
                isinstance(value, bool)
                or not isinstance(value, (int, float))
                or not math.isfinite(value)
                or not 0 <= value <= 10
            ):
                raise InvalidOptionError(
                    f"Ranking.{field.name} must be a number from 0 to 10; got {value!r}."
                )
        if self.profile not in ("auto", "on", "off"):
            raise InvalidOptionError(f"Ranking.profile must be 'auto', 'on' or 'off'; got {self.profile!r}.")
