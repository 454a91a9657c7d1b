"""What users bring, read safely: files (regular files only, bounded reads, clean text: ``files``), the
kind of a source (``sources``) and page selections (``pages``). Anything may import it; it imports only
``errors``."""
