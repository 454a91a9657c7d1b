"""The page index document: its typed model and integrity rules (``model``), the positions it stores
(``boxes``), the format's versions (``format_version``), its folder on disk (``store``) and the Markdown a
model reads of a page (``render``). Everything that builds, serves or shows an index imports it; it
imports only ``errors``, ``inputs`` and the framework's ``Contract``."""
