"""What the file loaders of this package (``DocumentLoaderPyMuPDF``, ``DocumentLoaderPageIndex``) say of a
source before loading it: a path with a supported extension that does not exist is a missing file, not a
source no loader handles."""

from __future__ import annotations

from io import BytesIO
from typing import Any, ClassVar

from ..inputs.sources import check_source_file

__all__ = ["FileSources"]


class FileSources:
    """``can_handle`` for a loader of files with the extensions ``SUPPORTED_FORMATS`` (mixed in before
    ExtractThinker's ``DocumentLoader``, which decides the rest)."""

    SUPPORTED_FORMATS: ClassVar[list[str]]

    def can_handle(self, source: str | BytesIO) -> bool:
        """Whether this loader reads the source: an existing file with a supported extension, or a stream.

        Raises:
            DocumentLoadError: the source is a path with a supported extension and no such file exists, so
                ExtractThinker's ``Extractor`` reports the missing file, not "No suitable document loader".
        """
        handled: Any = super().can_handle(check_source_file(source, self.SUPPORTED_FORMATS))  # type: ignore[misc]
        return bool(handled)
