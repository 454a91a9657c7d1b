"""PyMuPDF in one place: opening a PDF (the lock, its errors, safe reading: ``opening``) and drawing its
pages and pictures within bounds as PNG (``images``). Everything that reads PDFs imports it (the
strategies, OCR, the loaders, the model client's image limits, the view); it imports only ``errors`` and
``inputs``."""
