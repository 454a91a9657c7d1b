"""A page of the page index as Markdown: what an extraction model reads of it."""

from __future__ import annotations

from typing import Any

from .model import (
    Document,
    FooterNode,
    HeaderNode,
    HeadingNode,
    ImageNode,
    ListItemNode,
    MetadataNode,
    Node,
    Page,
    ParagraphNode,
    SectionNode,
    TableNode,
    level_number,
)

__all__ = ["PageTexts", "node_markdown", "page_markdown", "page_sections", "page_texts"]


def node_markdown(node: Node) -> str:
    """One node as Markdown ('' for nodes that carry no reading text: sections, headers, footers)."""
    if isinstance(node, HeadingNode):
        return f"{'#' * level_number(node.level)} {node.content}"
    if isinstance(node, ParagraphNode):
        if node.level == "code":
            return f"```\n{node.content}\n```"
        if node.level == "citation":
            return "\n".join(f"> {line}" for line in node.content.splitlines())
        if node.level == "footnote":
            return f"<sup>note</sup> {node.content}"
        return node.content
    if isinstance(node, ListItemNode):
        return f"{'  ' * (level_number(node.level) - 1)}- {node.content}"
    if isinstance(node, TableNode):
        parts = [f"Table: {node.caption}" if node.caption else "", node.content]
        if node.description:
            parts.append(f"(Table: {node.description})")
        return "\n\n".join(part for part in parts if part)
    if isinstance(node, ImageNode):
        words = "; ".join(part for part in (node.kind, node.caption, node.description) if part)
        return f"[Image: {words}]" if words else ""
    if isinstance(node, (SectionNode, HeaderNode, FooterNode, MetadataNode)):
        return ""
    return ""


def page_markdown(page: Page, *, page_number: int | None = None) -> str:
    """A page's reading text as Markdown: headings with their levels, paragraphs, lists, tables and image
    descriptions; running headers, footers and metadata left out. List items stay on adjacent lines."""
    blocks: list[str] = []
    for node in page.nodes:
        text = node_markdown(node)
        if not text:
            continue
        if blocks and isinstance(node, ListItemNode) and blocks[-1].lstrip().startswith("- "):
            blocks[-1] = f"{blocks[-1]}\n{text}"
        else:
            blocks.append(text)
    body = "\n\n".join(blocks)
    return f"<!-- page {page_number} -->\n{body}" if page_number is not None and body else body


def page_sections(document: Document) -> dict[int, tuple[list[str], list[str]]]:
    """For each page index: the heading paths its content belongs to (titles joined with " > "), and the
    descriptions of those sections. Computed once for the whole document."""
    nodes = document.node_map()
    titles: dict[str, str] = {}
    for _, node in document.iter_nodes():
        if isinstance(node, HeadingNode) and node.parent_id is not None:
            titles.setdefault(node.parent_id, node.content)
    paths_of: dict[str, str] = {}

    def path(section_id: str) -> str:
        if section_id not in paths_of:
            chain: list[str] = []
            current: str | None = section_id
            for _ in range(64):  # the model forbids cycles; this only bounds the walk
                if current is None:
                    break
                if current in titles:
                    chain.append(titles[current])
                parent = nodes.get(current)
                current = parent.parent_id if parent is not None else None
            paths_of[section_id] = " > ".join(reversed(chain))
        return paths_of[section_id]

    result: dict[int, tuple[list[str], list[str]]] = {}
    for page in document.pages:
        paths: list[str] = []
        descriptions: list[str] = []
        seen: set[str] = set()
        for node in page.nodes:
            section_id = node.id if isinstance(node, SectionNode) else node.parent_id
            if section_id is None or section_id in seen:
                continue
            seen.add(section_id)
            joined = path(section_id)
            if joined and joined not in paths:
                paths.append(joined)
            section = nodes.get(section_id)
            if isinstance(section, SectionNode) and section.description:
                descriptions.append(section.description)
        result[page.index] = (paths, descriptions)
    return result


#: A document's pages as a retriever indexes them: one page dict per page number, ``None`` in gaps.
PageTexts = list[dict[str, Any] | None]


def page_texts(document: Document) -> PageTexts:
    """The document's pages as a retriever indexes them (``index_documents(retriever=...)``, ``search`` of
    a saved index, ``view --query``): each page's Markdown with its section paths and the descriptions of
    its sections, at its page number (``None`` in gaps)."""
    sections = page_sections(document)
    texts: PageTexts = [None] * (max((page.index for page in document.pages), default=-1) + 1)
    for page in document.pages:
        paths, descriptions = sections[page.index]
        texts[page.index] = {
            "content": page_markdown(page),
            "sections": paths,
            "section_descriptions": descriptions,
        }
    return texts
