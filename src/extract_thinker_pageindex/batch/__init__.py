"""Indexing many documents into one output folder: the run (``run.index_documents``), one document's task
and entry (``tasks``), the output folder's manifest (``manifest``) and one module per engine
(``local_engine``, ``ray_engine``). The package root and the command line import it; the engines import
``tasks``, never ``run``, and nothing below the batch imports it."""
