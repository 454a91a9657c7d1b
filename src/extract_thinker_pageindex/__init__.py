"""extract-thinker-pageindex: page retrieval and a typed page index for ExtractThinker.

Everything public is importable from here. Attributes load on first use, so ``import
extract_thinker_pageindex`` stays cheap and the command line starts fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__

if TYPE_CHECKING:
    from .batch.run import BatchReport, index_documents
    from .batch.tasks import BatchEntry
    from .cli.summary import inspect, print_toc_tree
    from .document.model import (
        FORMAT_VERSION,
        Document,
        FailedPage,
        FooterNode,
        HeaderNode,
        HeadingNode,
        ImageNode,
        ListItemNode,
        MetadataNode,
        ModelUsage,
        Node,
        Page,
        PageAnswer,
        PageOrigin,
        ParagraphNode,
        SectionInfo,
        SectionNode,
        TableNode,
        TocEntry,
        TocEntryNode,
    )
    from .document.store import load_index, save_index
    from .errors import (
        DocumentLoadError,
        EmptyDocumentError,
        IndexFormatError,
        InvalidOptionError,
        LLMExtractionError,
        ModelRequiredError,
        NoMatchError,
        OcrError,
        OutputExistsError,
        OutputWriteError,
        PageIndexError,
        PageIndexWarning,
        PageSpecError,
        RetrieverClosedError,
        RetrieverConnectionError,
        RetrieverError,
        UnsupportedFormatError,
    )
    from .indexing import build_index, index_document
    from .inputs.pages import filter_pages, normalize_page_spec
    from .llm.client import ModelClient
    from .loaders.pageindex import DocumentLoaderPageIndex
    from .loaders.pymupdf import DocumentLoaderPyMuPDF
    from .loaders.pymupdf_config import PyMuPDFConfig
    from .loaders.rag import DocumentLoaderRAG
    from .postprocess.continuations import group_continuations
    from .retrieval.base import PageRetriever
    from .retrieval.contract_query import query_from_contract
    from .retrieval.postgres import PostgresPageRetriever
    from .retrieval.profiles import FINANCE, RetrievalProfile
    from .retrieval.ranking import Ranking
    from .retrieval.sqlite import PageMatch, SQLitePageRetriever, query_words
    from .view import view_index

__all__ = [
    "BatchEntry",
    "BatchReport",
    "Document",
    "DocumentLoadError",
    "DocumentLoaderPageIndex",
    "DocumentLoaderPyMuPDF",
    "DocumentLoaderRAG",
    "EmptyDocumentError",
    "FINANCE",
    "FORMAT_VERSION",
    "FailedPage",
    "FooterNode",
    "HeaderNode",
    "HeadingNode",
    "ImageNode",
    "IndexFormatError",
    "InvalidOptionError",
    "LLMExtractionError",
    "ListItemNode",
    "MetadataNode",
    "ModelClient",
    "ModelRequiredError",
    "ModelUsage",
    "NoMatchError",
    "Node",
    "OcrError",
    "OutputExistsError",
    "OutputWriteError",
    "Page",
    "PageAnswer",
    "PageIndexError",
    "PageIndexWarning",
    "PageMatch",
    "PageOrigin",
    "PageRetriever",
    "PageSpecError",
    "ParagraphNode",
    "PostgresPageRetriever",
    "PyMuPDFConfig",
    "Ranking",
    "RetrievalProfile",
    "RetrieverClosedError",
    "RetrieverConnectionError",
    "RetrieverError",
    "SQLitePageRetriever",
    "SectionInfo",
    "SectionNode",
    "TableNode",
    "TocEntry",
    "TocEntryNode",
    "UnsupportedFormatError",
    "__version__",
    "build_index",
    "filter_pages",
    "group_continuations",
    "index_document",
    "index_documents",
    "inspect",
    "load_index",
    "normalize_page_spec",
    "print_toc_tree",
    "query_from_contract",
    "query_words",
    "save_index",
    "view_index",
]

# Where each public name lives; resolved lazily by __getattr__ below.
_LOCATIONS = {
    "BatchEntry": ".batch.tasks",
    "BatchReport": ".batch.run",
    "index_documents": ".batch.run",
    "build_index": ".indexing",
    "filter_pages": ".inputs.pages",
    "normalize_page_spec": ".inputs.pages",
    "group_continuations": ".postprocess.continuations",
    "index_document": ".indexing",
    "load_index": ".document.store",
    "save_index": ".document.store",
    "inspect": ".cli.summary",
    "DocumentLoaderPyMuPDF": ".loaders.pymupdf",
    "PyMuPDFConfig": ".loaders.pymupdf_config",
    "DocumentLoaderRAG": ".loaders.rag",
    "PageMatch": ".retrieval.sqlite",
    "PageRetriever": ".retrieval.base",
    "PostgresPageRetriever": ".retrieval.postgres",
    "SQLitePageRetriever": ".retrieval.sqlite",
    "query_words": ".retrieval.sqlite",
    "DocumentLoaderPageIndex": ".loaders.pageindex",
    "query_from_contract": ".retrieval.contract_query",
    "FINANCE": ".retrieval.profiles",
    "RetrievalProfile": ".retrieval.profiles",
    "Ranking": ".retrieval.ranking",
    "ModelClient": ".llm.client",
    "print_toc_tree": ".cli.summary",
    "view_index": ".view",
    **{
        name: ".errors"
        for name in (
            "DocumentLoadError",
            "EmptyDocumentError",
            "IndexFormatError",
            "InvalidOptionError",
            "LLMExtractionError",
            "ModelRequiredError",
            "NoMatchError",
            "OcrError",
            "OutputExistsError",
            "OutputWriteError",
            "PageIndexError",
            "PageIndexWarning",
            "PageSpecError",
            "RetrieverClosedError",
            "RetrieverConnectionError",
            "RetrieverError",
            "UnsupportedFormatError",
        )
    },
    **{
        name: ".document.model"
        for name in (
            "FORMAT_VERSION",
            "Document",
            "FailedPage",
            "FooterNode",
            "HeaderNode",
            "HeadingNode",
            "ImageNode",
            "ListItemNode",
            "MetadataNode",
            "ModelUsage",
            "Node",
            "Page",
            "PageOrigin",
            "PageAnswer",
            "ParagraphNode",
            "SectionInfo",
            "SectionNode",
            "TableNode",
            "TocEntry",
            "TocEntryNode",
        )
    },
}


def __getattr__(name: str) -> Any:
    module = _LOCATIONS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
