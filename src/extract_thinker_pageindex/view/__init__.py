"""The HTML view of a page index: the TOC tree, and every node boxed on its page, coloured by type; with a
query, the retriever's best pages and the query's words marked on them. See :func:`view_index`.
The package root and the command line import it."""

from __future__ import annotations

from .build import default_view_path, view_index
from .output import images_folder

__all__ = ["default_view_path", "images_folder", "view_index"]
