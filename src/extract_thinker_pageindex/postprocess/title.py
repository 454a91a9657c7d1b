"""The document's title: from metadata, else asked of the model from the opening of the document."""

from __future__ import annotations

from collections.abc import Sequence

from ..document.model import HeadingNode, Page, ParagraphNode, SectionNode, TitleAnswer
from ..errors import LLMExtractionError
from ..llm.client import ModelClient

__all__ = ["infer_title"]

MAX_TITLE_INPUT = 4_000  # characters of headings, descriptions and opening text shown to the model


def infer_title(client: ModelClient, pages: Sequence[Page]) -> str | None:
    """Ask the model for the title, showing it the first headings, section descriptions and the opening
    paragraph (bounded to ``MAX_TITLE_INPUT`` characters). ``None`` when the call fails."""
    lines: list[str] = []
    opening = ""
    for page in pages:
        for node in page.nodes:
            if isinstance(node, HeadingNode):
                lines.append(f"Heading ({node.level}): {node.content}")
            elif isinstance(node, SectionNode) and node.description:
                lines.append(f"Section description: {node.description}")
            elif isinstance(node, ParagraphNode) and not opening:
                opening = node.content
    if opening:
        lines.insert(0, f"Opening paragraph: {opening}")
    material = "\n".join(lines)[:MAX_TITLE_INPUT]
    if not material.strip():
        return None
    messages = [
        {
            "role": "system",
            "content": "Give the title of the document these extracts come from, as a reader would cite it. "
            'Answer with JSON {"title": "..."}.',
        },
        {"role": "user", "content": material},
    ]
    try:
        return client.ask(messages, TitleAnswer, what="the document's title").title.strip() or None
    except LLMExtractionError:
        return None
