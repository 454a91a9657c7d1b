"""The public API: an explicit, sorted __all__, lazy attributes and the error tree."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

import extract_thinker_pageindex as package
from extract_thinker_pageindex import errors

EXPECTED = [
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


def test_exported_members_are_pinned_and_sorted() -> None:
    assert package.__all__ == EXPECTED
    assert package.__all__ == sorted(package.__all__)


@pytest.mark.parametrize("name", EXPECTED)
def test_every_exported_name_resolves(name: str) -> None:
    if name == "PostgresPageRetriever" and importlib.util.find_spec("psycopg") is None:
        # Without the [postgres] extra the name still resolves, to an error that says what to install.
        with pytest.raises(ImportError, match=r"extract-thinker-pageindex\[postgres\]"):
            getattr(package, name)
        return
    value = getattr(package, name)
    assert value is not None
    if isinstance(value, type) or (callable(value) and name != "Node"):
        assert value.__module__.startswith("extract_thinker_pageindex")


def test_unknown_attribute_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_thing"):
        package.no_such_thing  # noqa: B018


def test_import_is_lazy() -> None:
    code = (
        "import sys, extract_thinker_pageindex\n"
        "print('extract_thinker' in sys.modules, 'fitz' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["False", "False"]


@pytest.mark.parametrize(
    ("error", "builtin"),
    [
        (errors.UnsupportedFormatError, ValueError),
        (errors.InvalidOptionError, ValueError),
        (errors.DocumentLoadError, ValueError),
        (errors.EmptyDocumentError, errors.DocumentLoadError),
        (errors.PageSpecError, ValueError),
        (errors.NoMatchError, LookupError),
        (errors.ModelRequiredError, ValueError),
        (errors.LLMExtractionError, RuntimeError),
        (errors.IndexFormatError, ValueError),
        (errors.OutputExistsError, FileExistsError),
        (errors.OutputWriteError, OSError),
        (errors.RetrieverClosedError, RuntimeError),
        (errors.RetrieverError, RuntimeError),
    ],
)
def test_errors_refine_a_builtin_and_share_one_base(error: type, builtin: type) -> None:
    assert issubclass(error, errors.PageIndexError)
    assert issubclass(error, builtin)
