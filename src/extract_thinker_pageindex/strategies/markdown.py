"""The Markdown builder: a CommonMark parse (markdown-it-py) turned into pages of typed nodes, no model.

Rules:

- the smallest heading level present starts pages; deeper headings open sections inside them;
- text before the first top-level heading is kept on a preamble page; a file with no heading is one page;
- ATX and setext headings count; fenced (``` and ~~~) and indented code never yield headings;
- YAML front matter becomes a metadata node and fills title, author and dates when present;
- paragraphs, list items (with nesting depth), tables and code blocks become their own nodes.
"""

from __future__ import annotations

import functools
import re
import warnings
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token

from ..document.model import (
    HeadingNode,
    ListItemNode,
    MetadataNode,
    Node,
    Page,
    PageOrigin,
    ParagraphNode,
    SectionNode,
    TableNode,
)
from ..errors import PageIndexWarning

__all__ = ["MarkdownResult", "parse_markdown"]

_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?\n)?(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.DOTALL)
_HTML_COMMENT = re.compile(r"\A\s*<!--.*-->\s*\Z", re.DOTALL)


@dataclass
class MarkdownResult:
    """What the parse yields: pages (with builder-assigned ids) and front-matter fields."""

    pages: list[Page]
    title: str | None = None
    author: str | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    top_heading_titles: list[str] = field(default_factory=list)


def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark").enable("table")


def _plain_text(inline: Token) -> str:
    """The visible text of an inline token (emphasis, links and code spans reduced to their text)."""
    parts: list[str] = []
    for child in inline.children or []:
        if child.type in ("text", "code_inline", "html_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
        elif child.type == "image":
            parts.append(child.content)
    return " ".join("".join(parts).split())


#: Front matter fields longer than this are cut: a title or author is a line, not a chapter.
MAX_FIELD_CHARS = 1_000
#: Nesting deeper than this is refused (front matter holds a few flat fields).
MAX_FRONT_MATTER_DEPTH = 32
#: Front matter longer than this is not parsed: YAML is parsed in pure Python, and megabytes of it take
#: minutes and gigabytes. The block is kept as a metadata node all the same.
MAX_FRONT_MATTER_CHARS = 64 * 1024


@functools.cache
def _front_matter_loader() -> type[Any]:
    """A YAML loader for untrusted front matter: safe types only, no aliases, bounded nesting, dates as text.

    Aliases are refused because a few hundred bytes of nested aliases expand to gigabytes ("billion
    laughs"); nesting is bounded because composing is recursive; timestamps stay text (parsed leniently
    afterwards) because YAML's own constructor raises on dates such as 2024-02-30 or year 0000.
    """
    import yaml  # only needed for files that have front matter

    timestamp = "tag:yaml.org,2002:timestamp"

    class FrontMatterLoader(yaml.SafeLoader):
        depth = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                raise _FrontMatterRefused("it uses YAML aliases")
            self.depth += 1
            try:
                if self.depth > MAX_FRONT_MATTER_DEPTH:
                    raise _FrontMatterRefused(f"it nests deeper than {MAX_FRONT_MATTER_DEPTH} levels")
                return super().compose_node(parent, index)
            finally:
                self.depth -= 1

    # The resolvers are a class-level table: a copy without timestamps, so SafeLoader itself is untouched.
    FrontMatterLoader.yaml_implicit_resolvers = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag != timestamp]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    return FrontMatterLoader


class _FrontMatterRefused(Exception):
    """Front matter that is YAML but not loaded: aliases, deep nesting or values that cannot be built."""


def _split_front_matter(text: str) -> tuple[dict[str, Any] | None, str | None, str]:
    match = _FRONT_MATTER.match(text)
    if match is None:
        return None, None, text
    raw = match.group(1) or ""
    body = text[match.end() :]
    import yaml

    try:
        if len(raw) > MAX_FRONT_MATTER_CHARS:
            raise _FrontMatterRefused(f"it is longer than {MAX_FRONT_MATTER_CHARS:,} characters")
        data = yaml.load(raw, Loader=_front_matter_loader()) if raw.strip() else {}
    except yaml.YAMLError:
        # Not YAML after all (for example a document that opens with a thematic break): keep it as text.
        return None, None, text
    except (_FrontMatterRefused, ValueError, TypeError, OverflowError, RecursionError) as exc:
        # YAML, but not loaded: aliases, deep nesting, or a value Python cannot build (an explicit
        # !!timestamp of 2024-02-30, an integer of thousands of digits).
        reason = str(exc) if isinstance(exc, _FrontMatterRefused) else f"a value cannot be read ({exc})"
        warnings.warn(
            f"The front matter's fields were not read: {reason}; it is kept as a metadata node.",
            PageIndexWarning,
            stacklevel=4,
        )
        return {}, raw.strip(), body
    if not isinstance(data, dict):
        return None, None, text
    return data, raw.strip(), body


def _as_datetime(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return value
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day)
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.strip())
        except ValueError:  # not a date, or an impossible one (2024-02-30, year 0000)
            return None
    return None


def _scalar_text(value: Any) -> str | None:
    if isinstance(value, (str, int, float, date)):
        try:
            return str(value)[:MAX_FIELD_CHARS]
        except ValueError:  # an integer of thousands of digits
            return None
    return None


def _as_text(value: Any) -> str | None:
    """A front matter field as text: scalars, or a list of scalars joined; anything else is ignored."""
    if isinstance(value, (list, tuple)):
        items = [_scalar_text(item) for item in value[:50]]
        return ", ".join(item for item in items if item)[:MAX_FIELD_CHARS] or None
    return _scalar_text(value)


class _Builder:
    """Walks the token stream once, opening pages and sections as headings arrive."""

    def __init__(self, lines: list[str], top_level: int | None) -> None:
        self.lines = lines
        self.top_level = top_level
        self.pages: list[list[dict[str, Any]]] = []
        self.sections: list[tuple[int, str]] = []  # (heading level, section id), outermost first
        self.counters: list[int] = []
        self.open_items: list[dict[str, Any]] = []  # list items being filled, innermost last
        self.list_depth = 0
        self.quote_depth = 0

    # -- pages and ids --------------------------------------------------------------------------------

    def _ensure_page(self) -> int:
        if not self.pages:
            self._new_page()
        return len(self.pages) - 1

    def _new_page(self) -> None:
        self.pages.append([])
        self.counters.append(0)

    def _next_id(self) -> str:
        page_index = self._ensure_page()
        self.counters[page_index] += 1
        return f"p{page_index}-{self.counters[page_index]}"

    def _parent(self) -> str | None:
        return self.sections[-1][1] if self.sections else None

    def add(self, **fields: Any) -> dict[str, Any]:
        node = {"id": self._next_id(), "parent_id": self._parent(), **fields}
        self.pages[-1].append(node)
        return node

    def _source(self, token: Token) -> str:
        if token.map is None:
            return token.content
        start, end = token.map
        return "\n".join(self.lines[start:end]).strip("\n")

    # -- blocks ---------------------------------------------------------------------------------------

    def heading(self, level: int, text: str) -> None:
        # Front matter alone does not make a preamble page: it stays with the first section.
        if (
            self.top_level is not None
            and level == self.top_level
            and self.pages
            and any(node["type"] != "metadata" for node in self.pages[-1])
        ):
            self._new_page()
        while self.sections and self.sections[-1][0] >= level:
            self.sections.pop()
        section = self.add(type="section")
        self.sections.append((level, section["id"]))
        self.add(type="heading", level=f"h{level}", content=text)

    def text_block(self, content: str, level: str) -> None:
        if not content.strip():
            return
        if self.open_items:
            item = self.open_items[-1]
            item["content"] = f"{item['content']}\n\n{content}" if item["content"] else content
            return
        self.add(type="paragraph", level="citation" if self.quote_depth else level, content=content)

    def run(self, tokens: list[Token]) -> None:
        index = 0
        while index < len(tokens):
            token = tokens[index]
            kind = token.type
            if kind == "heading_open" and not self.quote_depth and not self.list_depth:
                self.heading(int(token.tag[1:]), _plain_text(tokens[index + 1]))
                index += 3
                continue
            if kind == "heading_open":
                # A heading quoted or nested in a list is content, not document structure.
                self.text_block(_plain_text(tokens[index + 1]), "paragraph")
                index += 3
                continue
            if kind == "paragraph_open":
                self.text_block(tokens[index + 1].content.strip(), "paragraph")
                index += 3
                continue
            if kind in ("fence", "code_block"):
                self.text_block(token.content.rstrip("\n"), "code")
            elif kind == "html_block":
                if not _HTML_COMMENT.match(token.content):
                    self.text_block(token.content.strip(), "paragraph")
            elif kind == "table_open":
                close = index
                while tokens[close].type != "table_close":
                    close += 1
                if self.open_items:
                    self.text_block(self._source(token), "paragraph")
                else:
                    self.add(type="table", kind="data", content=self._source(token))
                index = close + 1
                continue
            elif kind in ("bullet_list_open", "ordered_list_open"):
                self.list_depth += 1
            elif kind in ("bullet_list_close", "ordered_list_close"):
                self.list_depth -= 1
            elif kind == "list_item_open":
                level = f"l{min(self.list_depth, 6)}"
                # Add before filling, so a parent item precedes its nested items in reading order.
                was_open, self.open_items = self.open_items, []
                item = self.add(type="list_item", level=level, content="")
                self.open_items = [*was_open, item]
            elif kind == "list_item_close":
                self.open_items.pop()
            elif kind == "blockquote_open":
                self.quote_depth += 1
            elif kind == "blockquote_close":
                self.quote_depth -= 1
            index += 1


def _top_heading_level(tokens: list[Token]) -> int | None:
    depth = 0
    levels = []
    for token in tokens:
        if token.type in ("blockquote_open", "bullet_list_open", "ordered_list_open"):
            depth += 1
        elif token.type in ("blockquote_close", "bullet_list_close", "ordered_list_close"):
            depth -= 1
        elif token.type == "heading_open" and depth == 0:
            levels.append(int(token.tag[1:]))
    return min(levels) if levels else None


def parse_markdown(text: str) -> MarkdownResult:
    """Parse Markdown text into pages of nodes (ids ``p<page>-<n>``) and front-matter fields.

    Args:
        text: The Markdown source, newlines already normalised to ``\\n``.

    Returns:
        The pages, in order, each with index equal to its position, and the front-matter fields.
    """
    front, front_raw, body = _split_front_matter(text)
    tokens = _parser().parse(body)
    top_level = _top_heading_level(tokens)
    builder = _Builder(body.split("\n"), top_level)
    if front_raw is not None:
        builder.add(type="metadata", content=front_raw)
    builder.run(tokens)
    # A list item with no text of its own (only a nested list) says nothing: drop it.
    raw_pages = [
        [node for node in page if node["type"] != "list_item" or node["content"]] for page in builder.pages
    ]

    pages = []
    top_titles = []
    for index, raw_nodes in enumerate(raw_pages):
        nodes: list[Node] = [_NODE_TYPES[raw["type"]].model_validate(raw) for raw in raw_nodes]
        pages.append(Page(index=index, nodes=nodes, origin=PageOrigin(source="parsed")))
        for node in nodes:
            if isinstance(node, HeadingNode) and top_level is not None and node.level == f"h{top_level}":
                top_titles.append(node.content)

    front = front or {}
    return MarkdownResult(
        pages=pages,
        title=_as_text(front.get("title")),
        author=_as_text(front.get("author") or front.get("authors")),
        created_at=_as_datetime(front.get("date") or front.get("created")),
        updated_at=_as_datetime(front.get("updated") or front.get("modified")),
        top_heading_titles=top_titles,
    )


_NODE_TYPES: dict[str, type[Any]] = {
    "section": SectionNode,
    "heading": HeadingNode,
    "paragraph": ParagraphNode,
    "list_item": ListItemNode,
    "table": TableNode,
    "metadata": MetadataNode,
}
