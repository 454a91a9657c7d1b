"""Talking to models: the client (litellm or an ExtractThinker ``LLM``, with retries, repair and token
accounting), what a request carries besides the page (``prompting``), and calls bounded across workers
(``call_limit``). The strategies, post-processing, ``indexing``, ``index_key`` and the batch import it; it
imports only ``errors`` and ``pdf`` (the image limits of a page sent to a model).

``ModelClient`` and ``ImageLimits`` are importable from here (``from extract_thinker_pageindex.llm import
ImageLimits``)."""

from ..pdf.images import ImageLimits
from .client import ModelClient

__all__ = ["ImageLimits", "ModelClient"]
