"""PDFs written by hand, byte by byte, for page trees that PyMuPDF refuses to write (test support)."""

from __future__ import annotations


def raw_pdf(objects: list[str]) -> bytes:
    """A PDF of the given objects (numbered from 1, object 1 the catalog) with a correct xref table."""
    out = b"%PDF-1.7\n"
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{body}\nendobj\n".encode()
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{offset:010d} 00000 n \n".encode() for offset in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return out


CATALOG = "<< /Type /Catalog /Pages 2 0 R >>"
LEAF = "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>"
