"""An OCR worker process: ``python -m extract_thinker_pageindex.ocr.worker``, started by :mod:`.pool`.

It speaks length-prefixed pickle frames on its standard input and output (a private pipe between this
package and the process it started itself): first the job (the PDF, its password, the OCR settings), then
one page index at a time, each answered with the page's blocks and tables or the engine's error; ``None``
ends it.
The protocol's output is moved off file descriptor 1 first, so that whatever a C library prints there
(Tesseract's warnings) cannot corrupt it.
"""

from __future__ import annotations

import os
import pickle
import struct
import sys
from typing import IO, Any

__all__ = ["main", "read_frame", "write_frame"]

_HEADER = struct.Struct("!Q")


def write_frame(stream: IO[bytes], value: Any) -> None:
    payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(payload)) + payload)
    stream.flush()


def read_frame(stream: IO[bytes]) -> Any:
    """The next frame, or raise ``EOFError`` when the other side is gone."""
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        raise EOFError("the other side closed the pipe")
    (size,) = _HEADER.unpack(header)
    payload = stream.read(size)
    if len(payload) < size:
        raise EOFError("the other side closed the pipe")
    return pickle.loads(payload)


def main() -> None:
    protocol_out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # C libraries' prints go where stderr goes
    sys.stdout = sys.stderr
    requests = sys.stdin.buffer
    from ..pdf.opening import load_pymupdf
    from .engines import read_page
    from .settings import OcrSettings

    pymupdf = load_pymupdf()  # without PyMuPDF 2.0's layout model: a second less at each worker's start
    job = read_frame(requests)
    settings = OcrSettings(**job["settings"])
    source = job["source"]
    try:
        document = pymupdf.open(source) if isinstance(source, str) else pymupdf.open("pdf", source)
        if document.needs_pass and not document.authenticate(job.get("password") or ""):
            raise RuntimeError("the password does not open the PDF")
    except Exception as exc:
        write_frame(protocol_out, ("failed", None, f"cannot open the PDF: {exc}"))
        return
    write_frame(protocol_out, ("ready", None, None))
    while True:
        try:
            index = read_frame(requests)
        except EOFError:
            return
        if index is None:
            return
        try:
            page = document[index]
            read = read_page(page, settings, threads=1)
            write_frame(protocol_out, ("ok", index, (read.blocks, read.tables)))
        except Exception as exc:  # one page's failure is reported; the worker goes on
            write_frame(protocol_out, ("error", index, str(exc)))


if __name__ == "__main__":
    main()
