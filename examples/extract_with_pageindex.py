"""Extract a Contract from the pages that matter, found through the page index and the Contract itself.

Runs without an API key: it prints the query written from the Contract and the pages retrieval keeps.
With a model configured it also extracts:

    EXTRACT_THINKER_MODEL=gpt-4o-mini OPENAI_API_KEY=... python examples/extract_with_pageindex.py
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from extract_thinker import Contract, Extractor
from pydantic import Field

from extract_thinker_pageindex import DocumentLoaderPageIndex, DocumentLoaderRAG, query_from_contract

SAMPLE = Path(__file__).resolve().parent / "data" / "service-agreement.pdf"


class CancellationTerms(Contract):
    notice_period: str = Field(description="Written notice required to terminate for convenience")
    early_termination_penalty: str = Field(description="Penalty owed on termination for convenience")
    governing_law: str = Field(description="The law that governs the agreement")


def main() -> None:
    query = query_from_contract(CancellationTerms)
    print(f"query from the Contract: {query!r}")
    pages_of = DocumentLoaderPageIndex(cache_dir=Path(tempfile.gettempdir()) / "pageindex-example-cache")
    with DocumentLoaderRAG(pages_of, query=query, max_pages=2) as loader:
        pages = loader.load(str(SAMPLE))
        for page in pages:
            print(f"\npage {page['page_number']} (sections: {', '.join(page['sections'][:2])} ...)")
            print(page["content"][:300].strip(), "...")
        model = os.environ.get("EXTRACT_THINKER_MODEL")
        if not model:
            print("\nSet EXTRACT_THINKER_MODEL (and the provider's key) to extract CancellationTerms.")
            return
        extractor = Extractor(loader)
        extractor.load_llm(model)
        print(extractor.extract(str(SAMPLE), CancellationTerms))


if __name__ == "__main__":
    main()
