"""Post-processing that turns per-page extractions into one coherent document. The strategies and
``indexing`` import it; it imports only ``document``, ``llm`` and ``errors``."""
