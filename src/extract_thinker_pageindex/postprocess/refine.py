"""Opt-in quality refinement: a model that sees the page image scores the extraction of sampled pages,
and pages under the threshold are extracted again with the reviewer's findings, a bounded number of times."""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from pydantic import Field

from ..document.model import ImageNode, Page, PageRefinement, TableNode, TextContract
from ..errors import InvalidOptionError, LLMExtractionError
from ..llm.client import ModelClient, image_part

__all__ = ["PageReview", "REVIEW_OBJECTIVE", "refine_pages", "sample_pages"]

# What the reviewer is not shown: what the package fills itself (picture bytes and paths, group ids) and,
# for text nodes, their boxes; empty fields are left out too.
_HIDDEN = {"image_data", "image_path", "group_id"}
_TEXT_HIDDEN = _HIDDEN | {"bbox"}

REVIEW_OBJECTIVE = """You check the extraction of one document page against the page image.
Score it from 0 to 1 against these criteria, each weighing a quarter:
1. completeness: every text block, heading, list item, table row and figure of the page is present;
2. exactness: text is copied, not paraphrased; tables keep every row and cell;
3. structure: headings, their levels and the section each piece belongs to are right;
4. faithfulness: nothing is invented.
Answer with JSON {"score": <0..1>, "problems": ["what is missing, wrong or invented", ...]}."""


class PageReview(TextContract):
    """A reviewer model's verdict on one page's extraction."""

    score: float = Field(ge=0.0, le=1.0, description="Quality of the extraction, 0 (useless) to 1 (perfect).")
    problems: list[str] = Field(default_factory=list, description="What is missing, wrong or invented.")


def sample_pages(indices: Sequence[int], size: int, seed: int = 0) -> list[int]:
    """The pages to review: the first, the last and a seeded random choice of the middle, ``size`` in all."""
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise InvalidOptionError(f"refine_sample must be a whole number of at least 1; got {size!r}.")
    ordered = sorted(indices)
    if len(ordered) <= size:
        return ordered
    chosen = {ordered[0], ordered[-1]}
    middle = ordered[1:-1]
    chosen.update(random.Random(seed).sample(middle, min(len(middle), max(0, size - 2))))
    return sorted(chosen)[:size] if size >= 2 else [ordered[0]]


def _review(client: ModelClient, page: Page, png: bytes) -> PageReview:
    # The boxes of text nodes (text layer pages) are left out: the reviewer judges text and structure,
    # and a box per paragraph would only lengthen the request.
    extraction = json.dumps(
        [
            node.model_dump(
                exclude=_HIDDEN if isinstance(node, (ImageNode, TableNode)) else _TEXT_HIDDEN,
                exclude_none=True,
            )
            for node in page.nodes
        ],
        ensure_ascii=False,
    )
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": REVIEW_OBJECTIVE},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": f"Extraction of page {page.index + 1}:\n{extraction}"},
                image_part(png),
            ],
        },
    ]
    return client.ask(messages, PageReview, what=f"the review of page {page.index + 1}")


def refine_pages(
    pages: list[Page],
    png_of: Callable[[int], bytes],
    reextract: Callable[[int, list[str]], Page],
    client: ModelClient,
    *,
    sample: int = 5,
    threshold: float = 0.8,
    iterations: int = 2,
    parallel: int = 3,
    seed: int = 0,
) -> list[PageRefinement]:
    """Review sampled pages and re-extract those scoring under ``threshold``, in place.

    Args:
        pages: The document's pages; refined pages are replaced in this list.
        png_of: The page image for a page index.
        reextract: Reads a page again given the reviewer's problems, returning the new page.
        sample: How many pages to review (first, last, seeded random middle).
        threshold: Pages scoring under it are extracted again.
        iterations: Re-extractions per page at most.
        parallel: Pages reviewed at once.
        seed: For the random middle of the sample.

    Returns:
        Per reviewed page: its score before and after (the best version is kept, never a worse one), and
        how many re-extractions were made.
    """
    if not 0.0 <= threshold <= 1.0:
        raise InvalidOptionError(f"refine_threshold must be between 0 and 1; got {threshold!r}.")
    if isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 0:
        raise InvalidOptionError(f"refine_iterations must be a whole number >= 0; got {iterations!r}.")
    position = {page.index: number for number, page in enumerate(pages)}
    chosen = sample_pages(list(position), sample, seed)

    def work(index: int) -> PageRefinement:
        page = pages[position[index]]
        png = png_of(index)
        try:
            review = _review(client, page, png)
        except LLMExtractionError as exc:
            return PageRefinement(
                index=index, score_before=None, score_after=None, reextractions=0, note=str(exc)
            )
        before = best_score = review.score
        best_page: Page | None = None  # the original stays unless a re-read scores better
        done = 0
        note = None
        while best_score < threshold and done < iterations:
            try:
                candidate = reextract(index, review.problems)
                review = _review(client, candidate, png)
            except LLMExtractionError as exc:
                note = str(exc)  # an unreviewed re-read is never installed
                break
            done += 1
            if review.score > best_score:
                best_score, best_page = review.score, candidate
        return PageRefinement(
            index=index,
            score_before=before,
            score_after=best_score,
            reextractions=done,
            note=note,
            page=best_page,
        )

    with ThreadPoolExecutor(max_workers=max(1, parallel)) as pool:
        results = list(pool.map(work, chosen))
    for result in results:
        if result.page is not None:
            pages[position[result.index]] = result.page
    return [result.model_copy(update={"page": None}) for result in results]
