"""The strategies that read a source into pages of nodes: Markdown and plain text (``markdown``, ``text``),
a born-digital PDF's text layer (``pdf_text`` with ``pdf_layout`` and ``pdf_structure``), and a vision model
for pages without one (``vision``). ``build_index`` (in ``extract_thinker_pageindex.indexing``) picks one.
``indexing``, the loaders and the view import it; it imports ``document``, ``pdf``, ``ocr``, ``tables``,
``llm`` and ``postprocess``, never what builds or serves an index."""
