"""JPEG pictures of a PDF kept as the PDF embeds them (format 1.3): nothing decoded or encoded, saved as
``images/<id>.jpg``, loaded back, shown by the view; every other picture stays a PNG."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pymupdf
import pytest
from PIL import Image

from extract_thinker_pageindex import (
    ImageNode,
    IndexFormatError,
    build_index,
    load_index,
    save_index,
    view_index,
)

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def photo(
    width: int = 240, height: int = 160, *, mode: str = "RGB", exif_orientation: int | None = None
) -> bytes:
    """A JPEG of a colour gradient (a photo's kind of pixels), as a camera or an editor writes it."""
    picture = Image.new("RGB", (width, height))
    picture.putdata([(x % 256, y % 256, (x + y) % 256) for y in range(height) for x in range(width)])
    buffer = io.BytesIO()
    exif = Image.Exif()
    if exif_orientation is not None:
        exif[0x0112] = exif_orientation
    picture.convert(mode).save(buffer, "JPEG", quality=85, exif=exif.tobytes() if exif_orientation else b"")
    return buffer.getvalue()


def pdf_with(
    tmp_path: Path,
    jpeg: bytes,
    *,
    rect: pymupdf.Rect | None = None,
    mask: bytes | None = None,
    keys: dict[str, str] | None = None,
) -> Path:
    document = pymupdf.open()
    page = document.new_page()
    page.insert_text((72, 72), "A page with a photo on it.", fontsize=11)
    xref = page.insert_image(rect or pymupdf.Rect(72, 100, 312, 260), stream=jpeg, mask=mask)
    for key, value in (keys or {}).items():
        document.xref_set_key(xref, key, value)
    path = tmp_path / "photo.pdf"
    document.save(path)
    return path


def embedded(path: Path) -> bytes:
    """The picture's stream as the PDF holds it."""
    with pymupdf.open(path) as document:
        (item,) = document[0].get_images(full=True)
        assert item[8] == "DCTDecode"
        return bytes(document.xref_stream_raw(item[0]))


def the_image(path: Path) -> ImageNode:
    (node,) = [
        node for node in build_index(path, strategy="text").pages[0].nodes if isinstance(node, ImageNode)
    ]
    return node


def test_a_jpeg_picture_is_kept_as_the_pdf_embeds_it_saved_loaded_and_shown(tmp_path: Path) -> None:
    path = pdf_with(tmp_path, photo())

    document = build_index(path, strategy="text")
    (node,) = [node for node in document.pages[0].nodes if isinstance(node, ImageNode)]
    assert node.image_data == embedded(path)  # the PDF's own bytes: nothing decoded, nothing encoded

    index = save_index(document, tmp_path / "photo.pageindex")
    saved = json.loads((index / "document.json").read_text(encoding="utf-8"))
    (entry,) = [item for item in saved["pages"][0]["nodes"] if item["type"] == "image"]
    assert entry["image_path"] == f"images/{node.id}.jpg"
    assert (index / entry["image_path"]).read_bytes() == node.image_data
    loaded = load_index(index)
    (again,) = [item for item in loaded.pages[0].nodes if isinstance(item, ImageNode)]
    assert again.image_data == node.image_data and again.image_path == entry["image_path"]
    # A save over it is allowed (its images/ folder holds only what a save writes).
    save_index(loaded, index)

    html = view_index(index, source=path, output=tmp_path / "embedded.html", embed_images=True).read_text()
    assert "data:image/jpeg;base64," in html
    view_index(index, source=path, output=tmp_path / "files.html")
    assert any(picture.suffix == ".jpg" for picture in (tmp_path / "files_files").iterdir())


@pytest.mark.parametrize(
    ("case", "jpeg", "rect", "keys"),
    [
        # 1,000 x 666 pixels over 120 x 80 points is 600 dpi: finer than a decoded picture is kept at, but
        # its own bytes cost nothing to keep (nothing decoded, nothing encoded).
        ("at 600 dpi", photo(1000, 666), pymupdf.Rect(72, 100, 192, 180), None),
        # What Acrobat Distiller leaves: its encoder's settings, which change nothing for a reader.
        (
            "with its encoder's parameters",
            photo(),
            None,
            {"DecodeParms": "<</QFactor .76/HSamples[2 1 1 2]/VSamples[2 1 1 2]/Colors 3/ColorTransform 1>>"},
        ),
        ("with the identity decode array", photo(), None, {"Decode": "[0 1 0 1 0 1]"}),
    ],
)
def test_more_jpeg_pictures_are_kept_as_the_pdf_embeds_them(
    tmp_path: Path, case: str, jpeg: bytes, rect: pymupdf.Rect | None, keys: dict[str, str] | None
) -> None:
    path = pdf_with(tmp_path, jpeg, rect=rect, keys=keys)

    node = the_image(path)

    assert node.image_data == embedded(path), case


@pytest.mark.parametrize(
    ("case", "jpeg", "rect", "mask"),
    [
        ("CMYK", photo(mode="CMYK"), None, None),
        ("CMYK declared RGB", photo(mode="CMYK"), None, "as RGB"),
        ("turned by EXIF", photo(exif_orientation=6), None, None),
        # 2,400 x 1,600 pixels over 120 x 80 points is 1,440 dpi: kept at 300 dpi of its place, re-encoded.
        ("finer than 600 dpi", photo(2400, 1600), pymupdf.Rect(72, 100, 192, 180), None),
        ("with a soft mask", photo(), None, "mask"),
        ("an inverted decode array", photo(), None, "inverted"),
        ("RGB stored without the colour transform", photo(), None, "no transform"),
    ],
)
def test_other_jpeg_pictures_become_pngs(
    tmp_path: Path, case: str, jpeg: bytes, rect: pymupdf.Rect | None, mask: str | None
) -> None:
    alpha = None
    if mask == "mask":
        buffer = io.BytesIO()
        Image.new("L", (240, 160), 128).save(buffer, "PNG")
        alpha = buffer.getvalue()
    # A JPEG of four components that its dictionary calls RGB (without CMYK's decode array): the stream's
    # own frame says otherwise.
    keys = {
        "as RGB": {"ColorSpace": "/DeviceRGB", "Decode": "null"},
        "inverted": {"Decode": "[1 0 1 0 1 0]"},
        "no transform": {"DecodeParms": "<</ColorTransform 0>>"},
    }.get(mask or "")
    path = pdf_with(tmp_path, jpeg, rect=rect, mask=alpha, keys=keys)

    node = the_image(path)

    assert node.image_data is not None and node.image_data.startswith(PNG_MAGIC), case
    with Image.open(io.BytesIO(node.image_data)) as picture:
        assert picture.mode in ("RGB", "RGBA", "L", "LA")
        if case == "turned by EXIF":
            assert picture.size == (240, 160)  # as the page shows it, not turned


def test_a_picture_file_of_a_later_versions_kind_is_said_to_be_that_releases(tmp_path: Path) -> None:
    index = save_index(
        build_index(pdf_with(tmp_path, photo()), strategy="text"), tmp_path / "photo.pageindex"
    )
    saved = json.loads((index / "document.json").read_text(encoding="utf-8"))
    (entry,) = [item for item in saved["pages"][0]["nodes"] if item["type"] == "image"]
    (index / entry["image_path"]).rename(index / "images" / f"{entry['id']}.webp")
    entry["image_path"] = f"images/{entry['id']}.webp"

    (index / "document.json").write_text(json.dumps(saved), encoding="utf-8")
    with pytest.raises(IndexFormatError, match=r"images live in images/<node id>\.png or \.jpg"):
        load_index(index)

    saved["format_version"] = "1.9"
    (index / "document.json").write_text(json.dumps(saved), encoding="utf-8")
    with pytest.raises(IndexFormatError, match=r"format_version '1\.9', written by a later release"):
        load_index(index)


def jpeg_segments(data: bytes) -> list[bytes]:
    """A JPEG's marker segments up to its scan (the scan and what follows as the last one)."""
    position, out = 2, []
    while position < len(data):
        if data[position + 1] == 0xDA:
            out.append(data[position:])
            break
        length = int.from_bytes(data[position + 2 : position + 4], "big")
        out.append(data[position : position + 2 + length])
        position += 2 + length
    return out


def test_a_jpeg_turned_by_exif_after_its_frame_header_or_of_12_bits_is_not_kept(tmp_path: Path) -> None:
    parts = jpeg_segments(photo())
    frame = next(k for k, part in enumerate(parts) if part[1] == 0xC0)
    exif = Image.Exif()
    exif[0x0112] = 6
    block = exif.tobytes()
    body = block if block.startswith(b"Exif") else b"Exif\x00\x00" + block
    app1 = b"\xff\xe1" + (len(body) + 2).to_bytes(2, "big") + body
    # Browsers and PIL read an EXIF segment wherever it stands before the scan, and turn the picture.
    late = b"\xff\xd8" + b"".join([*parts[: frame + 1], app1, *parts[frame + 1 :]])
    assert Image.open(io.BytesIO(late)).getexif().get(0x0112) == 6
    node = the_image(pdf_with(tmp_path, late))
    assert node.image_data is not None and node.image_data.startswith(PNG_MAGIC)
    with Image.open(io.BytesIO(node.image_data)) as picture:
        assert picture.size == (240, 160)  # as the page shows it

    # A 12-bit frame (precision 12 in an extended frame header) under /BitsPerComponent 8: not a JPEG a
    # browser opens; it is never kept as it is (MuPDF cannot decode it either: it is left out, warned).
    header = bytearray(parts[frame])
    header[1], header[4] = 0xC1, 12
    twelve = b"\xff\xd8" + b"".join([*parts[:frame], bytes(header), *parts[frame + 1 :]])
    document = build_index(pdf_with(tmp_path, twelve), strategy="text")
    assert not any(
        isinstance(node, ImageNode) and (node.image_data or b"").startswith(b"\xff\xd8")
        for node in document.pages[0].nodes
    )


def test_a_jpeg_whose_decode_parameters_stand_in_another_object_becomes_a_png(tmp_path: Path) -> None:
    # /DecodeParms [9 0 R] may hold /ColorTransform 0: parameters that are not read are not assumed.
    document = pymupdf.open()
    page = document.new_page()
    page.insert_text((72, 72), "A page with a photo on it.", fontsize=11)
    xref = page.insert_image(pymupdf.Rect(72, 100, 312, 260), stream=photo())
    parameters = document.get_new_xref()
    document.update_object(parameters, "<< /ColorTransform 0 >>")
    document.xref_set_key(xref, "Filter", "[/DCTDecode]")
    document.xref_set_key(xref, "DecodeParms", f"[{parameters} 0 R]")
    path = tmp_path / "photo.pdf"
    document.save(path)

    node = the_image(path)
    assert node.image_data is not None and node.image_data.startswith(PNG_MAGIC)


def test_a_jpeg_finer_than_its_limit_is_decoded_reduced_with_its_own_colours(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A photo of 1,600 x 1,200 pixels shown 2 x 1.5 inches (800 dpi, finer than ``MAX_JPEG_DPI``) becomes a
    PNG at 300 dpi: libjpeg decodes it at a half (never whole) and MuPDF scales that; the pixels are the
    whole photo's, reduced (red at the left, blue at the right, green along the bottom), not a corner."""
    decoded: list[tuple[int, int]] = []
    original = pymupdf.mupdf.fz_get_pixmap_from_image

    def noting(*args: object) -> object:
        result = original(*args)
        decoded.append((result[0].w(), result[0].h()))
        return result

    monkeypatch.setattr(pymupdf.mupdf, "fz_get_pixmap_from_image", noting)
    picture = Image.new("RGB", (1600, 1200), (220, 30, 30))
    picture.paste((30, 30, 220), (800, 0, 1600, 1200))
    picture.paste((30, 200, 30), (0, 1000, 1600, 1200))
    buffer = io.BytesIO()
    picture.save(buffer, "JPEG", quality=90)
    path = pdf_with(tmp_path, buffer.getvalue(), rect=pymupdf.Rect(72, 100, 216, 208))

    node = the_image(path)

    assert decoded == [(800, 600)]
    assert node.image_data is not None and node.image_data.startswith(PNG_MAGIC)
    with Image.open(io.BytesIO(node.image_data)) as kept:
        assert abs(kept.size[0] - 600) <= 4 and abs(kept.size[1] - 450) <= 4  # its place, to whole points
        rgb = kept.convert("RGB")
        for (x, y), colour in {
            (100, 100): (220, 30, 30),
            (500, 100): (30, 30, 220),
            (300, 430): (30, 200, 30),
        }.items():
            assert all(abs(a - b) <= 12 for a, b in zip(rgb.getpixel((x, y)), colour, strict=True)), (x, y)


def test_a_cut_jpeg_becomes_a_png_any_reader_opens(tmp_path: Path) -> None:
    # A JPEG stream cut short keeps its headers (size, colours): kept as it is, Pillow refused the file
    # ("image file is truncated") though MuPDF draws the part there is. Decoded, it is a PNG of that part.
    whole = photo()
    cut = whole[: len(whole) - 400]
    with pytest.raises(OSError, match="truncated"):  # the premise: a reader refuses the cut file
        Image.open(io.BytesIO(cut)).load()
    node = the_image(pdf_with(tmp_path, cut))
    assert node.image_data is not None and node.image_data.startswith(PNG_MAGIC)
    with Image.open(io.BytesIO(node.image_data)) as picture:
        picture.load()
        assert picture.size == (240, 160)

    # The same file whole, followed by the end-of-line a PDF writer may leave before `endstream`, is kept.
    for padding in (b"\r\n", b"\x00" * 100, b"\xff" * 3):  # or padding, or fill bytes after its end
        node = the_image(pdf_with(tmp_path, whole + padding))
        assert node.image_data == whole + padding  # the stream as the PDF holds it
