"""The document's abstract, by Chain of Density over its section descriptions (or section text).

Chain of Density (Adams et al., 2023): a first abstract of the target length, then rounds that each find
one to three salient facts of the source missing from it and rewrite it to include them without growing.
"""

from __future__ import annotations

from pydantic import Field

from ..document.model import Document, HeadingNode, ListItemNode, ParagraphNode, SectionNode, TextContract
from ..errors import InvalidOptionError, LLMExtractionError
from ..llm.client import ModelClient

__all__ = ["DensityStep", "MAX_ABSTRACT_INPUT", "chain_of_density", "abstract_source"]

#: Characters of section material shown to the model at most (about 6,000 tokens).
MAX_ABSTRACT_INPUT = 24_000


class DensityStep(TextContract):
    """One round of Chain of Density: what the previous abstract missed, and the denser abstract."""

    missing_entities: list[str] = Field(
        default_factory=list,
        description="1-3 salient facts or names of the source missing from the previous abstract.",
    )
    abstract: str = Field(description="The abstract, rewritten to include them at the same length.")


def abstract_source(document: Document, limit: int = MAX_ABSTRACT_INPUT) -> str:
    """The material an abstract is written from, at most ``limit`` characters: each section's title and
    description, or the opening of its text when it has no description; sections in document order."""
    text: dict[str, list[str]] = {}
    for _, node in document.iter_nodes():
        if isinstance(node, (ParagraphNode, ListItemNode)) and node.parent_id is not None:
            text.setdefault(node.parent_id, []).append(node.content)
    descriptions = {
        node.id: node.description
        for _, node in document.iter_nodes()
        if isinstance(node, SectionNode) and node.description
    }
    parts: list[str] = []
    for section in document.sections():
        body = descriptions.get(section.id) or " ".join(text.get(section.id, []))[:600]
        parts.append(f"## {section.title}\n{body}".strip())
    if not parts:  # no sections: the running text itself
        parts = [
            node.content
            for _, node in document.iter_nodes()
            if isinstance(node, (ParagraphNode, HeadingNode))
        ]
    material = "\n\n".join(parts)
    return material[:limit]


def chain_of_density(
    client: ModelClient,
    document: Document,
    *,
    iterations: int = 3,
    words: int = 150,
    limit: int = MAX_ABSTRACT_INPUT,
) -> str | None:
    """Write the abstract in exactly ``iterations`` model calls (the first writes, the others densify).

    Returns:
        The abstract, or ``None`` when the document has no material or a call fails (the index is still
        built; an abstract is a bonus, never a reason to lose the work).
    """
    if isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 1:
        raise InvalidOptionError(
            f"abstract iterations must be a whole number of at least 1; got {iterations!r}."
        )
    if isinstance(words, bool) or not isinstance(words, int) or words < 20:
        raise InvalidOptionError(f"abstract words must be a whole number of at least 20; got {words!r}.")
    material = abstract_source(document, limit)
    if not material.strip():
        return None
    system = (
        f"You write the abstract of a document from its sections. Aim for about {words} words, plain prose, "
        "no list, no heading. Use only facts stated in the source."
    )
    abstract = ""
    try:
        for round_number in range(1, iterations + 1):
            if round_number == 1:
                ask = f"Source:\n{material}\n\nWrite the first abstract. Leave missing_entities empty."
            else:
                ask = (
                    f"Source:\n{material}\n\nPrevious abstract:\n{abstract}\n\n"
                    "Find 1-3 salient facts of the source missing from the previous abstract, then rewrite "
                    f"the abstract to include them without growing past about {words} words (fuse, compress, "
                    "drop filler)."
                )
            step = client.ask(
                [{"role": "system", "content": system}, {"role": "user", "content": ask}],
                DensityStep,
                what=f"the abstract (round {round_number} of {iterations})",
            )
            abstract = step.abstract.strip() or abstract
    except LLMExtractionError:
        return abstract or None
    return abstract or None
