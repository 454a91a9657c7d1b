"""The page index document model: typed nodes, pages, the TOC tree and the document.

The classes are pydantic models that subclass ExtractThinker's ``Contract``, so the same definitions serve
as the on-disk format (``document.json``) and as the response schema of the vision model.

Coordinates: a ``bbox`` is ``[xmin, ymin, xmax, ymax]`` in whole PDF points (1/72 inch) from the page's
top-left corner; for image sources one point is one pixel (see ``boxes``). Image and table nodes carry one,
and so do the text nodes (heading, paragraph, list item, header, footer) of the PDF text strategy: the union
of the text's line boxes, rounded outward. Section nodes have none: a section is a place in the reading
order, and its heading carries the position.

A ``Document`` checks its integrity whenever it is validated: ids unique and safe as file names (node ids
name ``images/<id>.png`` or ``.jpg``), references that resolve (node parents are sections, TOC entries
point at entries, sections and pages that exist), parent chains without cycles.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, NonNegativeInt, model_validator

from .._framework import Contract
from ..inputs.files import clean_text
from .boxes import BBox, LooseBBox, NoBox
from .format_version import FORMAT_VERSION, upgrade

__all__ = [
    "AnswerFooterNode",
    "AnswerHeaderNode",
    "AnswerHeadingNode",
    "AnswerImageNode",
    "AnswerListItemNode",
    "AnswerNode",
    "AnswerParagraphNode",
    "AnswerTableNode",
    "BBox",
    "Document",
    "FORMAT_VERSION",
    "FailedPage",
    "FooterNode",
    "HeaderNode",
    "HeadingNode",
    "ImageNode",
    "ListItemNode",
    "MAX_TOC_DEPTH",
    "MetadataNode",
    "ModelUsage",
    "Node",
    "Page",
    "PageAnswer",
    "PageOrigin",
    "PageRefinement",
    "ParagraphNode",
    "SectionInfo",
    "SectionNode",
    "TableNode",
    "TextContract",
    "TextSource",
    "TitleAnswer",
    "TocEntry",
    "TocEntryNode",
    "document_node",
]

HeadingLevel = Literal["h1", "h2", "h3", "h4", "h5", "h6"]
ParagraphLevel = Literal["paragraph", "citation", "code", "aside", "abstract", "footnote"]
ListLevel = Literal["l1", "l2", "l3", "l4", "l5", "l6"]
ImageKind = Literal[
    "photo", "diagram", "chart", "logo", "icon", "illustration", "screenshot", "signature", "map", "other"
]
TableKind = Literal["data", "form", "layout", "other"]


def level_number(level: str) -> int:
    """The number in a level name: ``"h2"`` -> 2, ``"l3"`` -> 3."""
    return int(level[1:])


def _id_to_str(value: Any) -> Any:
    # Models often number their ids (1, 2, 3); an id is text.
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return value


class TextContract(Contract):
    """The base of every model of this package (the document and the models' answers): the framework's
    ``Contract`` with one rule for every text field: lone UTF-16 surrogates (from
    non-UTF-8 file names, PDF metadata or a model's JSON escapes) become U+FFFD as the text enters the
    model, so every document can be written as JSON, indexed and printed."""

    @model_validator(mode="before")
    @classmethod
    def _clean_text(cls, data: Any) -> Any:
        # Each nested model cleans its own fields, so one level (text, or a list of texts) is enough here.
        if isinstance(data, dict) and any(_dirty(value) for value in data.values()):
            return {key: _cleaned(value) if _dirty(value) else value for key, value in data.items()}
        return data


def _dirty(value: Any) -> bool:
    if isinstance(value, str):
        return clean_text(value) is not value
    return isinstance(value, list) and any(isinstance(item, str) and _dirty(item) for item in value)


def _cleaned(value: Any) -> Any:
    if isinstance(value, str):
        return clean_text(value)
    return [clean_text(item) if isinstance(item, str) else item for item in value]


class _NodeBase(TextContract):
    id: Annotated[str, BeforeValidator(_id_to_str)] = Field(
        min_length=1, description="Identifier, unique within the document (page-local in a model answer)."
    )
    parent_id: Annotated[str | None, BeforeValidator(_id_to_str)] = Field(
        default=None, description="Id of the enclosing section, or null at top level."
    )


class SectionNode(_NodeBase):
    """A section: the container that a heading opens; content nodes point at it through ``parent_id``."""

    type: Literal["section"] = "section"
    description: str | None = Field(
        default=None, description="Two or three sentences on what the section covers."
    )


class HeadingNode(_NodeBase):
    """The heading text of a section (its ``parent_id`` is the section it titles)."""

    type: Literal["heading"] = "heading"
    level: HeadingLevel = Field(description="Heading level, h1 (top) to h6.")
    content: str = Field(description="The heading text, exactly as written.")
    bbox: BBox | None = None


class ParagraphNode(_NodeBase):
    """A block of running text: body paragraph, quotation, code, aside, abstract or footnote."""

    type: Literal["paragraph"] = "paragraph"
    level: ParagraphLevel = "paragraph"
    content: str = Field(description="The exact text of the block.")
    continuation: bool = Field(
        default=False, description="True when it continues a block from the previous page."
    )
    group_id: str | None = None
    bbox: BBox | None = None


class ListItemNode(_NodeBase):
    """One item of a bulleted or numbered list; ``level`` is its nesting depth."""

    type: Literal["list_item"] = "list_item"
    level: ListLevel = "l1"
    content: str = Field(description="The exact text of the item, without its bullet.")
    continuation: bool = False
    group_id: str | None = None
    bbox: BBox | None = None


class ImageNode(_NodeBase):
    """A picture on the page: photo, chart, diagram, logo...

    ``image_data`` holds its bytes: PNG, or JPEG where a PDF embeds the picture as a plain JPEG (kept as it
    is); a saved index holds them in ``images/<id>.png`` or ``images/<id>.jpg`` (``image_path``)."""

    type: Literal["image"] = "image"
    kind: ImageKind = "other"
    bbox: BBox | None = None
    caption: str | None = None
    description: str | None = Field(
        default=None, description="What the image shows, for a reader who cannot see it."
    )
    image_data: bytes | None = Field(default=None, exclude=True, repr=False)
    image_path: str | None = None
    continuation: bool = False
    group_id: str | None = None


class TableNode(_NodeBase):
    """A table, reproduced in full as Markdown in ``content``."""

    type: Literal["table"] = "table"
    kind: TableKind = "data"
    bbox: BBox | None = None
    caption: str | None = None
    description: str | None = None
    content: str = Field(default="", description="The whole table as a Markdown table.")
    image_data: bytes | None = Field(default=None, exclude=True, repr=False)
    image_path: str | None = None
    continuation: bool = False
    group_id: str | None = None


class HeaderNode(_NodeBase):
    """A running page header."""

    type: Literal["header"] = "header"
    content: str
    bbox: BBox | None = None


class FooterNode(_NodeBase):
    """A running page footer (page numbers, confidentiality notices)."""

    type: Literal["footer"] = "footer"
    content: str
    bbox: BBox | None = None


class MetadataNode(_NodeBase):
    """Document metadata found on a page (front matter, a document number, a date line)."""

    type: Literal["metadata"] = "metadata"
    content: str


def _printed_page_to_str(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError("printed_page must be a page label, not a boolean")
    if isinstance(value, int):
        return str(value)
    return value


class TocEntryNode(_NodeBase):
    """A line read from a printed table of contents.

    Only model answers hold these; post-processing moves them into the document's TOC.
    """

    type: Literal["toc_entry"] = "toc_entry"
    title: str
    printed_page: Annotated[str | None, BeforeValidator(_printed_page_to_str)] = None
    level: ListLevel = "l1"


#: Any node that can stand on a page of a document.
Node = Annotated[
    (
        SectionNode
        | HeadingNode
        | ParagraphNode
        | ListItemNode
        | ImageNode
        | TableNode
        | HeaderNode
        | FooterNode
        | MetadataNode
    ),
    Field(discriminator="type"),
]


class AnswerImageNode(ImageNode):
    """An image node as a vision model answers it: ``bbox`` in the model's own coordinates."""

    bbox: LooseBBox = Field(default=None, description="[xmin, ymin, xmax, ymax] of the image on the page.")  # type: ignore[assignment]


class AnswerTableNode(TableNode):
    """A table node as a vision model answers it: ``bbox`` in the model's own coordinates."""

    bbox: LooseBBox = Field(default=None, description="[xmin, ymin, xmax, ymax] of the table on the page.")  # type: ignore[assignment]


# Text nodes as a model answers them: without a box (see boxes.NoBox), so the answer schema and the
# validation of an answer are what they were before text nodes had one.
class AnswerHeadingNode(HeadingNode):
    """A heading as a model answers it (no box)."""

    bbox: NoBox = None


class AnswerParagraphNode(ParagraphNode):
    """A paragraph as a model answers it (no box)."""

    bbox: NoBox = None


class AnswerListItemNode(ListItemNode):
    """A list item as a model answers it (no box)."""

    bbox: NoBox = None


class AnswerHeaderNode(HeaderNode):
    """A running header as a model answers it (no box)."""

    bbox: NoBox = None


class AnswerFooterNode(FooterNode):
    """A running footer as a model answers it (no box)."""

    bbox: NoBox = None


_DOCUMENT_CLASS: dict[type, type] = {
    AnswerHeadingNode: HeadingNode,
    AnswerParagraphNode: ParagraphNode,
    AnswerListItemNode: ListItemNode,
    AnswerHeaderNode: HeaderNode,
    AnswerFooterNode: FooterNode,
}


def document_node(node: Any, **update: Any) -> Any:
    """A text node of a model's answer as the document's own node class (which has a ``bbox``, left
    ``None``), with ``update`` applied; other nodes are only updated."""
    target = _DOCUMENT_CLASS.get(type(node))
    if target is None:
        return node.model_copy(update=update)
    return target(**{**node.model_dump(exclude={"bbox"}), **update})


#: Any node a vision model may answer for a page, TOC entries of printed contents pages included.
AnswerNode = Annotated[
    (
        SectionNode
        | AnswerHeadingNode
        | AnswerParagraphNode
        | AnswerListItemNode
        | AnswerImageNode
        | AnswerTableNode
        | AnswerHeaderNode
        | AnswerFooterNode
        | MetadataNode
        | TocEntryNode
    ),
    Field(discriminator="type"),
]


_SCHEMAS: dict[Any, dict[str, Any]] = {}


class PageAnswer(TextContract):
    """The vision model's answer for one page: its nodes in reading order, with page-local ids.

    ``nodes`` is required: an answer without it (``{}``, or another schema's fields) is the wrong shape,
    re-asked and then failed, never taken for an empty page. A page with nothing on it is
    ``{"nodes": []}``."""

    nodes: list[AnswerNode] = Field(
        description="The page's nodes in reading order; [] for a page with nothing on it."
    )

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        # Building this schema costs ~15 ms; requests ask for it (compacted) often, so it is built once
        # per shape.
        key = (
            cls.__name__,
            tuple(cls.model_fields),
            repr(args),
            repr(sorted(kwargs.items(), key=lambda item: item[0])),
        )
        if key not in _SCHEMAS:
            _SCHEMAS[key] = super().model_json_schema(*args, **kwargs)
        return copy.deepcopy(_SCHEMAS[key])


class TitleAnswer(TextContract):
    """The model's answer when asked for a document's title."""

    title: str = Field(description="The document's title, as a reader would cite it.")


#: The deepest level of a TOC tree the builders make, and the deepest that ``inspect`` and
#: ``print_toc_tree`` indent: an entry of a PDF outline nested deeper is kept at this level (a sibling of
#: the entries there), and an entry of a saved TOC that nests deeper is printed at this indentation with its
#: level written out. A saved TOC of any depth loads.
MAX_TOC_DEPTH = 32


class TocEntry(TextContract):
    """An entry of the document's table of contents; entries form a tree through ``parent_id``."""

    id: str = Field(min_length=1)
    parent_id: str | None = None
    title: str
    description: str | None = None
    target_page: NonNegativeInt | None = Field(default=None, description="0-based physical page index.")
    printed_page: Annotated[str | None, BeforeValidator(_printed_page_to_str)] = None
    target_section_id: str | None = None
    level: ListLevel = "l1"
    bbox: BBox | None = Field(
        default=None, description="Where the target section's heading stands on target_page (format 1.1)."
    )


TextSource = Literal["text_layer", "ocr", "vision", "parsed"]


class PageOrigin(TextContract):
    """Where a page's text came from: the PDF's text layer, an OCR engine, a vision model, or a parsed
    text source (Markdown, plain text); ``engine`` names the OCR engine and its languages
    (``"tesseract (eng)"``) or the model."""

    source: TextSource
    engine: str | None = None


class Page(TextContract):
    """One page of the document: its 0-based index in the source, its nodes in reading order, and where
    its text came from (``None`` in an index written before format 1.2 that could not tell)."""

    index: NonNegativeInt
    nodes: list[Node] = Field(default_factory=list)
    origin: PageOrigin | None = None


class SectionInfo(TextContract):
    """A section as the document exposes it: title, level and the pages it spans (0-based, inclusive)."""

    id: str
    parent_id: str | None
    title: str
    level: HeadingLevel | None
    description: str | None
    first_page: int
    last_page: int


class ModelUsage(TextContract):
    """What building the index cost in model calls and tokens (retries and repairs included)."""

    calls: NonNegativeInt = 0
    input_tokens: NonNegativeInt = 0
    output_tokens: NonNegativeInt = 0


class FailedPage(TextContract):
    """A page left out because the model could not read it (``on_page_error="skip"``)."""

    index: NonNegativeInt
    reason: str


class PageRefinement(TextContract):
    """A page reviewed by the refinement step: its scores before and after, and re-extractions made."""

    index: NonNegativeInt
    score_before: float | None = None
    score_after: float | None = None
    reextractions: NonNegativeInt = 0
    note: str | None = None
    page: Page | None = Field(default=None, exclude=True, repr=False)


class Document(TextContract):
    """A page index: metadata, pages of typed nodes and a TOC tree linked to sections."""

    format_version: str = FORMAT_VERSION
    name: str
    title: str | None = None
    abstract: str | None = None
    extension: str | None = None
    author: str | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    source_page_count: NonNegativeInt | None = Field(
        default=None, description="Pages in the source, selected or not."
    )
    source_file: str | None = Field(
        default=None,
        description="The name of the file the index was built from (no folder), or None for an in-memory "
        "source: a save never replaces the index of another file without being told to.",
    )
    pages: list[Page] = Field(default_factory=list)
    toc: list[TocEntry] = Field(default_factory=list)
    usage: ModelUsage | None = Field(
        default=None, description="Model calls and tokens, when a model was used."
    )
    failed_pages: list[FailedPage] = Field(default_factory=list)
    refinement: list[PageRefinement] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _upgrade(cls, data: Any) -> Any:
        # Any 1.x document is read (see format_version.py); in memory it is a document of the current version.
        return upgrade(data) if isinstance(data, dict) else data

    @model_validator(mode="after")
    def _check_references(self) -> Document:
        _validate_structure(self)
        return self

    # -- traversal -----------------------------------------------------------------------------------

    def iter_nodes(self) -> Iterator[tuple[Page, Node]]:
        """Every node with its page, in page and reading order."""
        for page in self.pages:
            for node in page.nodes:
                yield page, node

    def node_map(self) -> dict[str, Node]:
        """All nodes by id."""
        return {node.id: node for _, node in self.iter_nodes()}

    def section_title(self, section_id: str) -> str:
        """The text of the heading that titles a section ('' when it has none)."""
        for _, node in self.iter_nodes():
            if isinstance(node, HeadingNode) and node.parent_id == section_id:
                return node.content
        return ""

    def heading_path(self, node_id: str) -> list[str]:
        """Titles of the sections enclosing a node, outermost first."""
        nodes = self.node_map()
        titles = _section_titles(self)
        path: list[str] = []
        current = nodes.get(node_id)
        parent = current.parent_id if current is not None else None
        if isinstance(current, SectionNode):
            path.append(titles.get(current.id, ""))
        while parent is not None:
            node = nodes.get(parent)
            if node is None:
                break
            if isinstance(node, SectionNode):
                path.append(titles.get(node.id, ""))
            parent = node.parent_id
        return list(reversed(path))

    def sections(self) -> list[SectionInfo]:
        """Every section with its title, level and page range, in document order.

        A section spans from the page it opens on to the last page holding any node inside it (its own
        nodes and those of its subsections), which is how builders express "until the next heading of
        the same or a higher level".
        """
        nodes = self.node_map()
        first: dict[str, int] = {}
        last: dict[str, int] = {}
        levels: dict[str, HeadingLevel] = {}
        for page, node in self.iter_nodes():
            if isinstance(node, SectionNode):
                first.setdefault(node.id, page.index)
                last[node.id] = max(last.get(node.id, page.index), page.index)
            if isinstance(node, HeadingNode) and node.parent_id is not None:
                levels.setdefault(node.parent_id, node.level)
            ancestor = node.parent_id
            seen = 0
            while ancestor is not None and seen < len(nodes):
                last[ancestor] = max(last.get(ancestor, page.index), page.index)
                parent = nodes.get(ancestor)
                ancestor = parent.parent_id if parent is not None else None
                seen += 1
        titles = _section_titles(self)
        result = []
        for _, node in self.iter_nodes():
            if isinstance(node, SectionNode):
                result.append(
                    SectionInfo(
                        id=node.id,
                        parent_id=node.parent_id,
                        title=titles.get(node.id, ""),
                        level=levels.get(node.id),
                        description=node.description,
                        first_page=first[node.id],
                        last_page=last[node.id],
                    )
                )
        return result

    def node_counts(self) -> dict[str, int]:
        """How many nodes of each type the document holds."""
        counts: dict[str, int] = {}
        for _, node in self.iter_nodes():
            counts[node.type] = counts.get(node.type, 0) + 1
        return counts


def _section_titles(document: Document) -> dict[str, str]:
    titles: dict[str, str] = {}
    for _, node in document.iter_nodes():
        if isinstance(node, HeadingNode) and node.parent_id is not None:
            titles.setdefault(node.parent_id, node.content)
    return titles


# -- integrity rules ------------------------------------------------------------------------------------

# Node ids become file names (images/<id>.png), so a document only admits ids that are safe there.
_SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def _validate_structure(document: Document) -> None:
    """Check ids are unique and safe, every reference resolves, and parent chains have no cycle."""
    page_indices = [page.index for page in document.pages]
    if len(set(page_indices)) != len(page_indices):
        raise ValueError("page indices must be unique")
    if page_indices != sorted(page_indices):
        raise ValueError("pages must be in source order (ascending index)")

    nodes: dict[str, Any] = {}
    for _, node in document.iter_nodes():
        if not _SAFE_ID.match(node.id):
            raise ValueError(f"node id {node.id!r} must be letters, digits, '.', '_' or '-' (at most 128)")
        if node.id in nodes:
            raise ValueError(f"node id {node.id!r} is used more than once")
        nodes[node.id] = node
    for node in nodes.values():
        if node.parent_id is not None:
            parent = nodes.get(node.parent_id)
            if parent is None:
                raise ValueError(f"node {node.id!r} has parent_id {node.parent_id!r}, which is not a node")
            if parent.type != "section":
                raise ValueError(f"node {node.id!r} has parent {node.parent_id!r}, which is not a section")
    _check_acyclic({node_id: node.parent_id for node_id, node in nodes.items()}, "node")

    entries: dict[str, TocEntry] = {}
    for entry in document.toc:
        if entry.id in entries:
            raise ValueError(f"TOC entry id {entry.id!r} is used more than once")
        entries[entry.id] = entry
    valid_pages = set(page_indices)
    for entry in entries.values():
        if entry.parent_id is not None and entry.parent_id not in entries:
            raise ValueError(
                f"TOC entry {entry.id!r} has parent_id {entry.parent_id!r}, which is not an entry"
            )
        if entry.bbox is not None and entry.target_page is None:
            raise ValueError(f"TOC entry {entry.id!r} has a bbox but no target_page to place it on")
        target = nodes.get(entry.target_section_id) if entry.target_section_id is not None else None
        if entry.target_section_id is not None and getattr(target, "type", None) != "section":
            raise ValueError(
                f"TOC entry {entry.id!r} targets section {entry.target_section_id!r}, which is not a section"
            )
        page = entry.target_page
        # A target may be an unselected page of the source, but never beyond the source.
        if (
            page is not None
            and valid_pages
            and page not in valid_pages
            and (document.source_page_count is None or page >= document.source_page_count)
        ):
            raise ValueError(f"TOC entry {entry.id!r} targets page {page}, outside the document")
    _check_acyclic({entry_id: entry.parent_id for entry_id, entry in entries.items()}, "TOC entry")


def _check_acyclic(parents: dict[str, str | None], what: str) -> None:
    state: dict[str, int] = {}  # 1 = on the current path, 2 = known to reach a root
    for start in parents:
        path = []
        current: str | None = start
        while current is not None and state.get(current) != 2:
            if state.get(current) == 1:
                raise ValueError(f"{what} {current!r} is its own ancestor (a parent_id cycle)")
            state[current] = 1
            path.append(current)
            current = parents.get(current)
        for item in path:
            state[item] = 2
