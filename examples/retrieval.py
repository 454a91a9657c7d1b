"""Hand ExtractThinker only the pages that matter: DocumentLoaderRAG over the bundled contract PDF.

Runs without an API key: it prints the pages retrieval picks. With a model configured it also extracts:

    EXTRACT_THINKER_MODEL=gpt-4o-mini OPENAI_API_KEY=... python examples/retrieval.py

Any litellm model string works (for an OpenAI-compatible server: EXTRACT_THINKER_MODEL=openai/<name> and
OPENAI_API_BASE=http://host:port/v1).
"""

from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no price-map download on offline machines

from extract_thinker import Contract, Extractor

from extract_thinker_pageindex import DocumentLoaderPyMuPDF, DocumentLoaderRAG

SAMPLE = Path(__file__).resolve().parent / "data" / "service-agreement.pdf"


class CancellationTerms(Contract):
    notice_period: str
    penalty: str


def main() -> None:
    with DocumentLoaderRAG(
        DocumentLoaderPyMuPDF(), query="termination for convenience notice penalty", max_pages=1
    ) as loader:
        pages = loader.load(str(SAMPLE))
        print(f"{SAMPLE.name}: retrieval kept page(s) {[page['page_number'] for page in pages]}")
        print(f"matches (best first): {loader.last_matches}")
        print(pages[0]["content"][:400].strip(), "...\n")

        model = os.environ.get("EXTRACT_THINKER_MODEL")
        if not model:
            print("Set EXTRACT_THINKER_MODEL (and the provider's key) to extract CancellationTerms.")
            return
        extractor = Extractor(loader)
        extractor.load_llm(model)
        print(extractor.extract(str(SAMPLE), CancellationTerms))


if __name__ == "__main__":
    main()
