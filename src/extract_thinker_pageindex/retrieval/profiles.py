"""Domain profiles for retrieval: the page kinds a domain titles its pages with, the metrics that live on
each kind, and the domain's acronyms and synonyms.

A profile is knowledge, not a weight: it says that "capital expenditure" is read off the cash flow
statement, and that a page whose first lines say "Consolidated Statements of Cash Flows" is that statement.
The retriever uses it only when the document and the query both show the domain (see ``Ranking.profile``).
``FINANCE`` ships built in; pass your own :class:`RetrievalProfile` for another domain.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["FINANCE", "GENERAL_SYNONYMS", "RetrievalProfile"]


#: Acronyms and synonyms of business documents in general (filings, contracts, reports), searched with any
#: profile or none (``Ranking.synonyms``): the words a question uses for what documents spell out.
GENERAL_SYNONYMS: Mapping[str, tuple[str, ...]] = {
    "ceo": ("chief executive officer",),
    "chief executive officer": ("ceo",),
    "cfo": ("chief financial officer",),
    "chief financial officer": ("cfo",),
    "coo": ("chief operating officer",),
    "legal": ("litigation", "legal proceedings"),
    "lawsuit": ("litigation", "legal proceedings"),
    "lawsuits": ("litigation", "legal proceedings"),
    "litigation": ("legal proceedings", "lawsuits"),
    "yoy": ("year over year",),
    "m&a": ("mergers", "acquisitions"),
    "r&d": ("research and development",),
    "research and development": ("r&d",),
    "spin off": ("spin-off", "separation"),
    "spinoff": ("spin-off", "separation"),
    "spinning off": ("spin-off", "separation"),
    "termination": ("terminate", "cancellation"),
    "cancellation": ("terminate", "termination"),
}


_FOOTNOTE_MARK = re.compile(r"(?<=[a-z])\d{1,2}\b")
_QUALIFIERS = re.compile(r"(?:\s*\b(?:condensed|consolidated|combined|unaudited|interim|selected))+\s*$")
_COMPANY = re.compile(
    r"\b(?:inc|incorporated|corp|corporation|company|co|ltd|limited|plc|llc|lp|group|holdings|sa|ag|nv)\.?$"
)
_TRAILER = re.compile(r"\s*(?:\([^)]*\)|-\s*continued|—\s*continued)\s*$")


# A plural's "s" or "es" ("margins", "losses"; not the "s" of "loss", "gross", "bonus", "basis"): dropped to
# try a pattern on the singular.
_PLURAL = re.compile(r"(?<=[a-z]ss|..[xz]|.ch|.sh)es\b|(?<=[a-z]{2}[^\Wsui])s\b")


def _pattern(alternatives: list[str]) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(alternatives) + r")\b")


@dataclass(frozen=True)
class RetrievalProfile:
    """What a domain knows about where things are.

    Attributes:
        name: The profile's name, shown in ``repr`` and docs.
        page_kinds: For each page kind, a regular expression that a whole line of a page's title zone
            must match (lower-cased, white space collapsed, qualifiers such as "consolidated" before it and
            a parenthesis or footnote mark after it removed).
        query_kinds: For each page kind, a regular expression matched against the lower-cased query: the
            kind's own name ("cash flow statement") and the metrics read off it ("capital expenditure").
        synonyms: Lower-cased phrase -> phrases searched with it at a lower weight (acronyms both ways).
        min_numeric_share: A page is of a kind only when at least this share of its words are numbers
            (a statement is a table of figures; the contents page that lists the statements is not).
    """

    name: str
    page_kinds: Mapping[str, re.Pattern[str]] = field(default_factory=dict)
    query_kinds: Mapping[str, re.Pattern[str]] = field(default_factory=dict)
    synonyms: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    min_numeric_share: float = 0.15

    def page_kind(self, title_zone: str, numeric_share: float) -> str | None:
        """The kind of a page from its title zone, or None."""
        if numeric_share < self.min_numeric_share or not title_zone:
            return None
        # A title is a line of its own (or two, when it wraps): "Consolidated Balance Sheets (continued)",
        # "NIKE, Inc. Consolidated Statements of Income", not "balance sheet activity" inside a sentence.
        # Qualifiers ("consolidated") and the company's name may stand before it, a parenthesis or a
        # footnote mark after it.
        lines = [" ".join(line.replace("’", "'").split()) for line in title_zone.lower().splitlines()]
        candidates = lines + [f"{first} {second}" for first, second in itertools.pairwise(lines)]
        for candidate in candidates:
            text = _TRAILER.sub("", _FOOTNOTE_MARK.sub("", candidate)).strip(" .:-—")
            for kind, pattern in self.page_kinds.items():
                for match in pattern.finditer(text):
                    if match.end() != len(text):
                        continue
                    before = _QUALIFIERS.sub("", text[: match.start()]).strip(" ,.:-—")
                    if not before or _COMPANY.search(before):
                        return kind
        return None

    def kinds_asked(self, query: str) -> set[str]:
        """The page kinds a query points to (by naming them, or a metric read off them), in the singular or
        the plural: a pattern written for "gross margin" also takes "gross margins", and the other way."""
        text = " ".join(query.lower().replace("’", "'").split())
        forms = (text, _PLURAL.sub("", text))
        return {
            kind for kind, pattern in self.query_kinds.items() if any(pattern.search(form) for form in forms)
        }


# Ratios of a figure from the income statement to one from the balance sheet: they point to both.
_RATIOS = [
    r"inventory turnover",
    r"days payable outstanding",
    r"dpo",
    r"days sales outstanding",
    r"dso",
    r"return on (?:assets|equity)",
    r"ro[ae]",
    r"asset turnover",
]
_CASH_FLOW_METRICS = [
    r"cash flows? statements?",
    r"statements? of (?:consolidated )?cash flows?",
    r"capex",
    r"capital expenditures?",
    r"capital spending",
    r"capital[- ]intensive",
    r"operating cash flows?",
    r"cash (?:flows? )?(?:from|provided by|generated by) operat\w*",
    r"free cash flows?",
    r"dividends? paid",
    r"(?:share|stock) (?:repurchases?|buybacks?)",
    r"depreciation(?: and| &) amortization",
    r"d&a",
]
_INCOME_METRICS = [
    r"income statements?",
    r"statements? of (?:consolidated )?(?:income|operations|earnings)",
    r"p&l",
    r"profit and loss",
    r"revenues?",
    r"net sales",
    r"topline",
    r"net (?:income|earnings|profit|loss)",
    r"operating (?:income|profit|margin|loss)",
    r"gross (?:profit|margin)",
    r"cost of (?:goods sold|sales|revenues?)",
    r"cogs",
    r"eps",
    r"earnings per share",
    r"ebitd?a?r?",
    r"interest (?:expense|coverage)",
    r"(?:effective )?tax rate",
    r"profit margin",
    r"sg&a",
    *_RATIOS,
]
_BALANCE_METRICS = [
    r"balance sheets?",
    r"statements? of (?:consolidated )?financial (?:position|condition)",
    r"total (?:current )?assets",
    r"current assets",
    r"(?:total |current )?liabilities",
    r"inventor(?:y|ies)",
    r"accounts (?:payable|receivable)",
    r"receivables",
    r"working capital",
    r"(?:total|long[- ]term) debt",
    r"(?:shareholders|stockholders)'? equity",
    r"pp&e",
    r"property,? plant,? and equipment",
    r"goodwill",
    r"(?:quick|current|debt[- ]to[- ]equity) ratio",
    r"capital[- ]intensive",
    *_RATIOS,
]

FINANCE = RetrievalProfile(
    name="finance",
    page_kinds={
        "cash_flow_statement": _pattern(
            [r"statements? of (?:consolidated )?cash flows?", r"cash flows? statements?"]
        ),
        "balance_sheet": _pattern(
            [r"balance sheets?", r"statements? of (?:consolidated )?financial (?:position|condition)"]
        ),
        "income_statement": _pattern(
            [r"statements? of (?:consolidated )?(?:operations|income|earnings)", r"income statements?"]
        ),
        # Its own kind, which no metric points to: revenue questions belong to the income statement.
        "comprehensive_income": _pattern(
            [
                r"statements? of (?:consolidated )?comprehensive (?:income|loss|earnings)(?: \(loss\))?",
                r"comprehensive (?:income|loss) statements?",
            ]
        ),
        "equity_statement": _pattern(
            [r"statements? of (?:changes in )?(?:stockholders|shareholders|share ?owners)'? equity"]
        ),
    },
    query_kinds={
        "cash_flow_statement": _pattern(_CASH_FLOW_METRICS),
        "income_statement": _pattern(_INCOME_METRICS),
        "balance_sheet": _pattern(_BALANCE_METRICS),
    },
    synonyms={
        "capex": ("capital expenditures", "purchases of property and equipment", "additions to property"),
        "capital expenditure": ("capex", "purchases of property and equipment", "additions to property"),
        "capital expenditures": ("capex", "purchases of property and equipment", "additions to property"),
        "revenue": ("net sales", "total revenues"),
        "revenues": ("net sales", "total revenues"),
        "topline": ("revenues", "net sales"),
        "net sales": ("revenues",),
        "eps": ("earnings per share", "diluted"),
        "earnings per share": ("eps",),
        "d&a": ("depreciation", "amortization"),
        "pp&e": ("property plant and equipment",),
        "cogs": ("cost of goods sold", "cost of sales"),
        "cost of goods sold": ("cost of sales", "cogs"),
        "ebit": ("operating income", "earnings before interest and taxes"),
        "ebitda": ("operating income", "depreciation", "amortization"),
        "dpo": ("days payable outstanding", "accounts payable", "cost of sales"),
        "days payable outstanding": ("accounts payable", "cost of sales"),
        "dso": ("days sales outstanding", "accounts receivable"),
        "inventory turnover": ("inventories", "cost of sales"),
        "operating cash flow": ("net cash provided by operating activities",),
        "cash from operations": ("net cash provided by operating activities",),
        "net profit": ("net income", "net earnings"),
        "net income": ("net earnings",),
        "net earnings": ("net income",),
        "operating income": ("operating profit", "income from operations"),
        "total debt": ("long-term debt", "short-term borrowings", "notes payable"),
        "dividends": ("dividends paid", "dividends declared"),
        "buybacks": ("repurchases of common stock", "treasury stock"),
        "roa": ("return on assets", "net income", "total assets"),
        "roe": ("return on equity", "net income", "shareholders equity"),
    },
)
