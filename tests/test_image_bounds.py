"""Memory bombs from small inputs, and pictures PNG cannot hold: every decode and render is bounded.

Each bad input is made for real in ``tmp_path``: a 1 x 59,000,000 PNG of a few hundred KB, a 128 KB PDF
holding a 32,000 px picture, an 800-byte PDF with a 7,200 pt page, pictures in CMYK, Lab, indexed,
separation and DeviceN colours, stencil masks and broken ones. The heavy inputs run in a fresh Python
process whose peak resident memory is measured (memory, not time, is what these tests bound); the model
is the local HTTP server of ``llm_server.py``.
"""

from __future__ import annotations

import base64
import io
import json
import os
import struct
import subprocess
import sys
import textwrap
import zlib
from pathlib import Path
from typing import Any

import pymupdf
import pytest
from hypothesis import given
from hypothesis import strategies as st
from PIL import Image

from extract_thinker_pageindex import (
    DocumentLoaderPageIndex,
    DocumentLoaderPyMuPDF,
    DocumentLoadError,
    ImageNode,
    PageIndexWarning,
    ParagraphNode,
    build_index,
)
from extract_thinker_pageindex.pdf.images import (
    MAX_PICTURE_DPI,
    MAX_PICTURE_PIXELS,
    MAX_PICTURE_SIDE,
    MAX_RENDER_PIXELS,
    MAX_RENDER_SIDE,
    encode_png,
    fit_scale,
    pixmap_png,
    render_page_png,
)
from extract_thinker_pageindex.pdf.opening import PYMUPDF_LOCK, open_pdf
from extract_thinker_pageindex.strategies.vision import (
    MAX_IMAGE_DIMENSION,
    MAX_IMAGE_SIDE,
    image_page,
    pdf_renderer,
)
from llm_server import Reply, completion_body

# What a process may reach on any of these inputs: the interpreter with litellm and PyMuPDF loaded takes
# about 330 MB, so this leaves some 270 MB for the work. Before the bounds they took 2.2 to 3 GB.
PEAK_LIMIT_MB = 600
STRUCTURE_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "eval" / "structure" / "pdfs"


# -- making bad inputs -------------------------------------------------------------------------------------


def deflated_zeros(size: int) -> bytes:
    """``size`` zero bytes, Flate-compressed a piece at a time (the raw bytes are never all in memory)."""
    compressor = zlib.compressobj(9)
    piece = b"\0" * min(size, 8 << 20)
    out = [compressor.compress(piece[: size - start]) for start in range(0, size, len(piece))]
    out.append(compressor.flush())
    return b"".join(out)


def zero_png(path: Path, width: int, height: int, *, color_type: int = 0) -> Path:
    """A PNG of zeros (black; transparent black with ``color_type=6``, RGBA) written by hand, row by row."""
    channels = {0: 1, 2: 3, 6: 4}[color_type]
    row = b"\0" * (1 + width * channels)  # a filter byte (none), then the row's samples
    rows_at_once = max(1, (8 << 20) // len(row))
    compressor = zlib.compressobj(9)
    data = [
        compressor.compress(row * min(rows_at_once, height - top)) for top in range(0, height, rows_at_once)
    ]
    data.append(compressor.flush())

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    header = struct.pack(">IIBBBBB", width, height, 8, color_type, 0, 0, 0)
    path.write_bytes(
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", b"".join(data)) + chunk(b"IEND", b"")
    )
    return path


def add_picture(
    document: pymupdf.Document,
    page: pymupdf.Page,
    rect: pymupdf.Rect,
    *,
    width: int,
    height: int,
    colorspace: str,
    stream: bytes,
    bits: int = 8,
    **keys: str,
) -> int:
    """Place a picture whose dictionary and Flate stream are given as they are to be in the PDF.

    PyMuPDF inserts a placeholder, whose stream and keys are then replaced: that is how a tiny file can
    declare a 32,000 px picture, or colours PyMuPDF would never write.
    """
    buffer = io.BytesIO()
    # PyMuPDF shares one object between identical pictures: each placeholder is made unlike the others.
    Image.new("L", (4, 4), document.xref_length() % 256).save(buffer, "PNG")
    xref = page.insert_image(rect, stream=buffer.getvalue(), keep_proportion=False)
    document.update_stream(xref, stream, compress=False)
    fields = {
        "Filter": "/FlateDecode",
        "DecodeParms": "null",
        "SMask": "null",
        "Width": str(width),
        "Height": str(height),
        "BitsPerComponent": str(bits),
        "ColorSpace": colorspace,
        **keys,
    }
    for key, value in fields.items():
        document.xref_set_key(xref, key, value)
    return xref


def text_page(document: pymupdf.Document, text: str, **size: float) -> pymupdf.Page:
    page = document.new_page(**size)
    page.insert_text((72, 72), text, fontsize=11)
    return page


def huge_page_pdf(path: Path) -> Path:
    """One 7,200 pt square page with a line of text (about 800 bytes)."""
    document = pymupdf.open()
    text_page(document, "A poster of a page, a hundred inches square.", width=7200, height=7200)
    document.set_metadata({"title": "Poster"})
    document.save(path, garbage=4, deflate=True)
    return path


def huge_picture_pdf(path: Path, sizes: list[tuple[int, int]]) -> Path:
    """One page per size, each with text and a 1-bit picture of that many pixels (all black)."""
    document = pymupdf.open()
    for number, (width, height) in enumerate(sizes):
        # Words that differ from page to page: a line repeated on every page is a running header.
        page = text_page(document, f"Picture {'ABCDEFGH'[number]}, {width} by {height} pixels.")
        add_picture(
            document,
            page,
            pymupdf.Rect(72, 100, 540, 700),
            width=width,
            height=height,
            colorspace="/DeviceGray",
            bits=1,
            stream=deflated_zeros((width + 7) // 8 * height),
        )
    document.save(path)
    return path


def run_measured(code: str, *args: str) -> dict[str, Any]:
    """Run ``code`` in a fresh Python process; it fills a dict ``RESULT``, returned with the process's
    peak resident memory as ``peak_mb``."""
    resource = pytest.importorskip("resource")
    assert resource  # the child measures itself; this only skips where the module does not exist
    script = "import json, sys\nRESULT = {}\n" + textwrap.dedent(code)
    script += textwrap.dedent(
        """
        import resource
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        RESULT["peak_mb"] = peak / (1024 * 1024 if sys.platform == "darwin" else 1024)
        try:
            # Linux: ru_maxrss is inherited across exec from the forking parent (a large pytest process);
            # the kernel's high-water mark VmHWM starts afresh at exec.
            with open("/proc/self/status") as status:
                for line in status:
                    if line.startswith("VmHWM:"):
                        RESULT["peak_mb"] = int(line.split()[1]) / 1024
        except OSError:
            pass
        print(json.dumps(RESULT))
        """
    )
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    done = subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, text=True, env=env, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def png_size(data: bytes) -> tuple[int, int]:
    with Image.open(io.BytesIO(data)) as image:
        assert image.format == "PNG"
        return image.size


def assert_page_image(size: tuple[int, int]) -> None:
    width, height = size
    assert max(width, height) <= MAX_RENDER_SIDE and width * height <= MAX_RENDER_PIXELS, size


# -- the scale that fits ---------------------------------------------------------------------------------


@given(
    width=st.floats(0.5, 200_000),
    height=st.floats(0.5, 200_000),
    scale=st.floats(0.01, 20),
    rounding=st.sampled_from([0.0, 1.0, 2.0]),
)
def test_the_fitted_scale_keeps_both_limits_once_rounded_and_is_the_largest_that_does(
    width: float, height: float, scale: float, rounding: float
) -> None:
    fitted = fit_scale(width, height, scale, max_side=2048, max_pixels=4_000_000, rounding=rounding)
    assert 0 < fitted <= scale
    side = max(width, height) * fitted + rounding
    pixels = (width * fitted + rounding) * (height * fitted + rounding)
    assert side <= 2048 * (1 + 1e-9) and pixels <= 4_000_000 * (1 + 1e-9)
    # Never smaller than needed: the scale asked for, or one of the limits reached.
    assert fitted == scale or side >= 2048 * (1 - 1e-6) or pixels >= 4_000_000 * (1 - 1e-6)


# -- a 7,200 pt page -------------------------------------------------------------------------------------


def test_a_7200_pt_page_is_drawn_within_the_limits_by_every_renderer(tmp_path: Path) -> None:
    path = huge_page_pdf(tmp_path / "poster.pdf")
    assert path.stat().st_size < 1000
    with open_pdf(path) as document, PYMUPDF_LOCK:
        assert_page_image(png_size(render_page_png(document[0], 150)))
        rendered = pdf_renderer(document, 600)(0)
    assert_page_image((rendered.width_px, rendered.height_px))
    assert png_size(rendered.png) == (rendered.width_px, rendered.height_px)
    assert (rendered.width_pt, rendered.height_pt) == (7200.0, 7200.0)  # boxes map back through these

    loader = DocumentLoaderPyMuPDF()
    loader.set_vision_mode(True)
    (page,) = loader.load(str(path))
    assert_page_image(png_size(page["image"]))

    index_loader = DocumentLoaderPageIndex(cache_dir=False, strategy="text")
    index_loader.set_vision_mode(True)
    (page,) = index_loader.load(str(path))
    assert_page_image(png_size(page["image"]))


def test_a_page_a_strip_of_14400_by_10_pt_keeps_its_longer_side_within_the_limit(tmp_path: Path) -> None:
    document = pymupdf.open()
    text_page(document, "strip", width=14400, height=10)
    with open_pdf(document.tobytes()) as opened, PYMUPDF_LOCK:
        width, height = png_size(render_page_png(opened[0], 300))
    assert 2000 <= width <= MAX_RENDER_SIDE and 1 <= height <= 2


def test_the_model_sees_a_7200_pt_page_bounded_and_its_boxes_map_back_to_the_page(
    tmp_path: Path, llm_server
) -> None:
    def answer(body: dict[str, Any]) -> Reply:
        # The box of the middle half of whatever image arrived, in its pixels.
        (url,) = [
            part["image_url"]["url"]
            for message in body["messages"]
            if isinstance(message["content"], list)
            for part in message["content"]
            if part.get("type") == "image_url"
        ]
        width, height = png_size(base64.b64decode(url.split(",", 1)[1]))
        box = [width // 4, height // 4, 3 * width // 4, 3 * height // 4]
        nodes = [{"type": "image", "id": "i", "kind": "chart", "bbox": box, "description": "Middle"}]
        return Reply(200, completion_body(json.dumps({"nodes": nodes})))

    llm_server.default = answer
    path = huge_page_pdf(tmp_path / "poster.pdf")
    result = run_measured(
        """
        import io
        from PIL import Image
        from extract_thinker_pageindex import build_index
        from extract_thinker_pageindex.llm.client import ModelClient

        model = ModelClient("openai/test-bounds", sleep=lambda seconds: None)
        document = build_index(sys.argv[1], strategy="vision", model=model, abstract=False)
        (image,) = document.pages[0].nodes
        RESULT["bbox"] = list(image.bbox)
        RESULT["crop"] = list(Image.open(io.BytesIO(image.image_data)).size)
        """,
        str(path),
    )
    assert result["peak_mb"] < PEAK_LIMIT_MB, result
    (request,) = llm_server.requests
    (url,) = llm_server.image_urls(0)
    width, height = png_size(base64.b64decode(url.split(",", 1)[1]))
    assert_page_image((width, height))
    assert f"{width} x {height} pixels" in json.dumps(request["messages"])
    # The middle half of the page, padded by 1% of it (72 pt), in points: within a pixel (3.6 pt) or two.
    expected = (1728, 1728, 5472, 5472)
    assert all(abs(got - want) <= 8 for got, want in zip(result["bbox"], expected, strict=True))
    assert all(abs(got - 0.52 * side) <= 3 for got, side in zip(result["crop"], (width, height), strict=True))


# -- image files -----------------------------------------------------------------------------------------


def test_a_1_by_59_million_pixel_png_is_refused_before_it_is_decoded(tmp_path: Path) -> None:
    path = zero_png(tmp_path / "strip.png", 1, 59_000_000)
    assert path.stat().st_size < 1_000_000
    with pytest.raises(DocumentLoadError, match=f"a side over the limit of {MAX_IMAGE_DIMENSION:,}"):
        image_page(path.read_bytes(), "'strip.png'")
    result = run_measured(
        """
        from extract_thinker_pageindex import DocumentLoadError, build_index

        try:
            build_index(sys.argv[1], model="openai/never-called")
        except DocumentLoadError as exc:
            RESULT["error"] = str(exc)
        """,
        str(path),
    )
    assert "1 x 59000000 pixels, a side over the limit" in result["error"]
    assert result["peak_mb"] < PEAK_LIMIT_MB, result


def test_a_59_megapixel_transparent_png_is_reduced_on_white_within_bounded_memory(tmp_path: Path) -> None:
    path = zero_png(tmp_path / "clear.png", 7_680, 7_680, color_type=6)  # 59 MP of transparent black
    result = run_measured(
        """
        import io
        from PIL import Image
        from extract_thinker_pageindex.strategies.vision import image_page

        page = image_page(open(sys.argv[1], "rb").read(), "'clear.png'")
        image = Image.open(io.BytesIO(page.png))
        RESULT.update(size=list(image.size), mode=image.mode, pixel=list(image.getpixel((5, 5))))
        RESULT["points"] = [page.width_pt, page.height_pt]
        """,
        str(path),
    )
    assert result["peak_mb"] < PEAK_LIMIT_MB, result
    assert_page_image(tuple(result["size"]))
    assert result["size"][0] == result["size"][1] >= 1990
    assert result["mode"] == "RGB" and result["pixel"] == [255, 255, 255]  # transparency laid on white
    assert result["points"] == [7680.0, 7680.0]  # boxes are kept in the original's pixels


def test_a_large_turned_jpeg_is_decoded_reduced_and_turned(tmp_path: Path) -> None:
    image = Image.new("L", (6000, 2000), 40)
    image.paste(255, (0, 0, 600, 2000))  # a white band at the left: at the top once turned
    exif = image.getexif()
    exif[0x0112] = 6  # "rotate 90 clockwise to view"
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", exif=exif)
    page = image_page(buffer.getvalue(), "'photo.jpg'")
    assert (page.width_px, page.height_px) == (682, MAX_IMAGE_SIDE)
    assert (page.width_pt, page.height_pt) == (2000.0, 6000.0)
    with Image.open(io.BytesIO(page.png)) as shown:
        assert shown.mode == "RGB"
        assert shown.getpixel((340, 50))[0] > 200 and shown.getpixel((340, 1500))[0] < 80


def test_an_image_of_another_format_is_not_decoded(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    Image.new("RGB", (32, 32)).save(buffer, "ICO")
    with pytest.raises(DocumentLoadError, match="not a readable image"):
        image_page(buffer.getvalue(), "'icon.png'")


# -- pictures in PDFs ------------------------------------------------------------------------------------


def test_a_32000_px_picture_is_drawn_reduced_and_a_40000_px_one_no_longer_fails_the_pdf(
    tmp_path: Path,
) -> None:
    # 1-bit pictures: 32,000 x 32,000 decodes to 1 GB (it took 2.2 GB to extract); 40,000 x 28,000 is over
    # MuPDF's own limit (FzErrorLimit "Overly large image"), which made the whole PDF unreadable.
    path = huge_picture_pdf(tmp_path / "pictures.pdf", [(32_000, 32_000), (40_000, 28_000)])
    assert path.stat().st_size < 2_000_000
    result = run_measured(
        """
        import io
        from PIL import Image
        from extract_thinker_pageindex import ImageNode, build_index

        document = build_index(sys.argv[1], strategy="text")
        RESULT["pages"] = [
            [[node.type, list(node.bbox or []), list(Image.open(io.BytesIO(node.image_data)).size)]
             if isinstance(node, ImageNode) else [node.type] for node in page.nodes]
            for page in document.pages
        ]
        """,
        str(path),
    )
    assert result["peak_mb"] < PEAK_LIMIT_MB, result
    for page in result["pages"]:
        assert ["paragraph"] in page
        ((_, bbox, (width, height)),) = [node for node in page if node[0] == "image"]
        assert bbox == [72, 100, 540, 700]  # where the picture is on the page
        assert max(width, height) <= MAX_PICTURE_SIDE and width * height <= MAX_PICTURE_PIXELS
        # Reduced to MAX_PICTURE_DPI of its place (468 x 600 pt), not below: still worth looking at.
        assert (width, height) == (round(468 * MAX_PICTURE_DPI / 72), round(600 * MAX_PICTURE_DPI / 72) + 1)


TINT = "<< /FunctionType 2 /Domain [0 1] /C0 [0 0 0 0] /C1 [{}] /N 1 >>"  # tint 0-1 -> CMYK
COLOURS = {
    # name: (colour space, one pixel's samples, the RGB it shows, roughly)
    "cmyk": ("/DeviceCMYK", bytes([0, 255, 255, 0]), (237, 28, 36)),
    "indexed": ("[/Indexed /DeviceRGB 1 <ff00000000ff>]", bytes([1]), (0, 0, 255)),
    "separation": (f"[/Separation /Spot /DeviceCMYK {TINT.format('0 1 1 0')}]", bytes([255]), (237, 28, 36)),
    "devicen": (f"[/DeviceN [/Black] /DeviceCMYK {TINT.format('0 0 0 1')}]", bytes([255]), (35, 31, 32)),
    "lab": ("[/Lab << /WhitePoint [0.9505 1 1.089] >>]", bytes([255, 128, 128]), None),
}


def test_pictures_in_colours_png_cannot_hold_become_rgb_and_keep_their_pages(tmp_path: Path) -> None:
    document = pymupdf.open()
    for name, (colorspace, pixel, _) in COLOURS.items():
        page = text_page(document, f"A picture in {name} colours.")
        add_picture(
            document,
            page,
            pymupdf.Rect(72, 100, 372, 400),
            width=64,
            height=64,
            colorspace=colorspace,
            stream=zlib.compress(pixel * 64 * 64),
        )
    # A stencil mask (paints the fill colour, black, where its bits are 0): no colours of its own.
    page = text_page(document, "A picture that is a stencil mask.")
    add_picture(
        document,
        page,
        pymupdf.Rect(72, 100, 372, 400),
        width=64,
        height=64,
        colorspace="null",
        bits=1,
        stream=zlib.compress(bytes(8 * 64)),
        ImageMask="true",
    )
    # A picture with a soft mask (alpha), as PyMuPDF writes an RGBA PNG.
    page = text_page(document, "A picture with transparency.")
    buffer = io.BytesIO()
    Image.new("RGBA", (64, 64), (0, 128, 0, 100)).save(buffer, "PNG")
    page.insert_image(pymupdf.Rect(72, 100, 372, 400), stream=buffer.getvalue())
    path = tmp_path / "colours.pdf"
    document.save(path)

    built = build_index(path, strategy="text")  # a PageIndexWarning here fails the test
    assert len(built.pages) == len(COLOURS) + 2
    shown = []
    for page in built.pages:
        paragraph, image = page.nodes
        assert isinstance(paragraph, ParagraphNode) and isinstance(image, ImageNode)
        assert image.bbox == (72, 100, 372, 400) and image.image_data is not None
        with Image.open(io.BytesIO(image.image_data)) as picture:
            assert picture.format == "PNG" and picture.mode in ("L", "RGB", "RGBA")
            shown.append(picture.convert("RGB").getpixel((picture.width // 2, picture.height // 2)))
    for (name, (_, _, expected)), got in zip(COLOURS.items(), shown, strict=False):
        if expected is not None:
            assert all(abs(a - b) <= 40 for a, b in zip(got, expected, strict=True)), (name, got)
    assert max(shown[len(COLOURS)]) < 60  # the stencil, drawn from the page: black


@pytest.mark.parametrize(
    ("colorspace", "alpha"),
    [(pymupdf.csCMYK, 1), (pymupdf.csCMYK, 0), (pymupdf.csGRAY, 1), (pymupdf.csRGB, 1), (pymupdf.csRGB, 0)],
)
def test_any_decoded_pixmap_with_colours_becomes_a_png(colorspace: Any, alpha: int) -> None:
    pixmap = pymupdf.Pixmap(colorspace, pymupdf.IRect(0, 0, 16, 8), alpha)
    pixmap.clear_with(200)
    png = pixmap_png(pixmap)
    assert png is not None
    with Image.open(io.BytesIO(png)) as image:
        assert image.size == (16, 8) and image.mode in ("L", "LA", "RGB", "RGBA")


def test_a_picture_that_cannot_be_read_is_left_out_with_a_warning_and_its_page_kept(tmp_path: Path) -> None:
    document = pymupdf.open()
    page = text_page(document, "The words on this page are still wanted.")
    add_picture(  # three bits per sample: a combination MuPDF refuses to unpack
        document,
        page,
        pymupdf.Rect(72, 100, 372, 400),
        width=64,
        height=64,
        colorspace="/DeviceRGB",
        bits=3,
        stream=zlib.compress(bytes(64 * 72)),
    )
    text_page(document, "A second page.")
    path = tmp_path / "broken.pdf"
    document.save(path)

    with pytest.warns(PageIndexWarning, match=r"'broken.pdf': the picture on page 1 .* cannot be read"):
        built = build_index(path, strategy="text")
    assert [[node.type for node in page.nodes] for page in built.pages] == [["paragraph"], ["paragraph"]]
    assert built.pages[0].nodes[0].content == "The words on this page are still wanted."


def add_oversized_black_picture(document: pymupdf.Document, page: pymupdf.Page, rect: pymupdf.Rect) -> None:
    """A black 12,000 x 12,000 one-bit picture at ``rect``: over the limits of what is decoded whole."""
    add_picture(
        document,
        page,
        rect,
        width=12_000,
        height=12_000,
        colorspace="/DeviceGray",
        bits=1,
        stream=deflated_zeros(1500 * 12_000),
    )


def _two_small_pictures_and_an_oversized_one(tmp_path: Path, *, in_a_form: bool) -> Path:
    """A page with a red and a blue 64 x 64 picture side by side (drawn by the page, or by a form: another
    page shown on it), and a 12,000 x 12,000 picture below them."""
    document = pymupdf.open()
    page = text_page(document, "Two small pictures and a very large one.")
    drawn_by = page
    if in_a_form:
        source = pymupdf.open()
        drawn_by = source.new_page(width=page.rect.width, height=page.rect.height)
    for number, colour in enumerate(((255, 0, 0), (0, 0, 255))):
        buffer = io.BytesIO()
        Image.new("RGB", (64, 64), colour).save(buffer, "PNG")
        left = 72 + 200 * number
        drawn_by.insert_image(pymupdf.Rect(left, 100, left + 150, 250), stream=buffer.getvalue())
    if in_a_form:
        page.show_pdf_page(page.rect, source, 0)
    add_oversized_black_picture(document, page, pymupdf.Rect(72, 300, 540, 700))
    path = tmp_path / ("form.pdf" if in_a_form else "crowded.pdf")
    document.save(path)
    return path


@pytest.mark.parametrize("in_a_form", [False, True])
def test_same_sized_pictures_are_told_apart_without_decoding_the_oversized_one(
    tmp_path: Path, in_a_form: bool
) -> None:
    # Two 64 x 64 pictures cannot be told apart by size; hashing them would decode every picture on the
    # page, the oversized one whole. The picture objects MuPDF drew are found again by identity, whether
    # the page's own content draws them or a form does (another PDF page shown on this one).
    path = _two_small_pictures_and_an_oversized_one(tmp_path, in_a_form=in_a_form)
    with pymupdf.open(path) as saved:  # the premise: two objects of one size, drawn by the page or a form
        listed = saved[0].get_images(full=True)
        assert sorted((item[2], item[3]) for item in listed) == [(64, 64), (64, 64), (12_000, 12_000)]
        assert {item[-1] != 0 for item in listed if item[2] == 64} == {in_a_form}

    built = build_index(path, strategy="text")

    images = [node for node in built.pages[0].nodes if isinstance(node, ImageNode)]
    assert [node.bbox for node in images[:2]] == [(72, 100, 222, 250), (272, 100, 422, 250)]
    for node, colour in zip(images[:2], ((255, 0, 0), (0, 0, 255)), strict=True):
        assert node.image_data is not None
        with Image.open(io.BytesIO(node.image_data)) as picture:
            assert picture.convert("RGB").getpixel((32, 32)) == colour  # each picture at its own place
    assert images[2].bbox is not None and images[2].bbox[1] == 300 and images[2].image_data is not None
    width, height = png_size(images[2].image_data)
    assert max(width, height) <= MAX_PICTURE_SIDE and width * height <= MAX_PICTURE_PIXELS


def test_an_inline_picture_the_size_of_two_picture_objects_is_left_out_with_a_warning(tmp_path: Path) -> None:
    # An inline picture (BI ... EI in the content) has no object to be found by; sharing its size with two
    # different picture objects, it cannot be told from them.
    path = _two_small_pictures_and_an_oversized_one(tmp_path, in_a_form=False)
    document = pymupdf.open(path)
    page = document[0]
    inline = b"q 150 0 0 150 400 40 cm BI /W 64 /H 64 /CS /RGB /BPC 8 /F /AHx ID\n"
    inline += (b"00ff00" * 64 * 64) + b">\nEI Q\n"
    document.update_stream(page.get_contents()[-1], document.xref_stream(page.get_contents()[-1]) + inline)
    document.save(tmp_path / "inline.pdf")
    with pymupdf.open(tmp_path / "inline.pdf") as saved:  # the premise: MuPDF draws it, 64 x 64
        shown = [info["bbox"] for info in saved[0].get_image_info() if info["width"] == 64]
        assert len(shown) == 3 and pymupdf.Rect(shown[-1]).x0 == 400

    with pytest.warns(PageIndexWarning, match=r"1 picture\(s\) on page 1 could not be told from other"):
        built = build_index(tmp_path / "inline.pdf", strategy="text")
    boxes = [node.bbox for node in built.pages[0].nodes if isinstance(node, ImageNode)]
    assert boxes[:2] == [(72, 100, 222, 250), (272, 100, 422, 250)] and len(boxes) == 3


@pytest.mark.eval
def test_the_fedex_annual_report_keeps_its_devicen_pictures() -> None:
    # Pages 55 and 56 hold DeviceN (CMYK black) JPX pictures: "pixmap must be grayscale or rgb to write as
    # png" made the whole report unreadable by the text strategy.
    path = STRUCTURE_DIR / "FEDEX_2023_annualreport.pdf"
    if not path.is_file():
        pytest.skip(f"evaluation data not found at {path}")
    built = build_index(path, strategy="text", pages="55-56")
    sizes = []
    for page in built.pages:
        (image,) = [node for node in page.nodes if isinstance(node, ImageNode)]
        assert image.image_data is not None
        sizes.append(png_size(image.image_data))
        assert any(node.type == "paragraph" for node in page.nodes)
    assert sizes == [(1086, 1303), (1110, 1404)]


# -- what a picture is kept as ------------------------------------------------------------------------------


def noise_picture(width: int, height: int, mode: str = "RGB") -> bytes:
    """A PNG of random pixels (nothing to compress: the cost of encoding shows)."""
    buffer = io.BytesIO()
    Image.frombytes(mode, (width, height), os.urandom(width * height * len(mode))).save(buffer, "PNG")
    return buffer.getvalue()


def pictures_of(path: Path) -> list[tuple[tuple[int, ...] | None, tuple[int, int], str]]:
    built = build_index(path, strategy="text", ocr="never")
    found = []
    for page in built.pages:
        for node in page.nodes:
            if isinstance(node, ImageNode):
                assert node.image_data is not None
                with Image.open(io.BytesIO(node.image_data)) as picture:
                    found.append((node.bbox, picture.size, picture.mode))
    return found


def test_a_picture_finer_than_print_resolution_is_kept_at_it_and_a_black_and_white_one_whole(
    tmp_path: Path,
) -> None:
    document = pymupdf.open()
    page = text_page(document, "A photograph of 2,400 pixels shown two inches wide, and a line drawing.")
    page.insert_image(pymupdf.Rect(72, 100, 216, 244), stream=noise_picture(2400, 2400))
    page.insert_image(pymupdf.Rect(72, 300, 192, 360), stream=noise_picture(200, 100))  # 120 dpi: whole
    buffer = io.BytesIO()
    Image.frombytes("1", (1600, 1600), os.urandom(1600 * 1600 // 8)).save(buffer, "PNG")
    page.insert_image(pymupdf.Rect(300, 100, 444, 244), stream=buffer.getvalue())  # 1 bit, 800 dpi
    path = tmp_path / "fine.pdf"
    document.save(path)

    found = sorted(pictures_of(path))
    assert found == [
        ((72, 100, 216, 244), (2 * MAX_PICTURE_DPI, 2 * MAX_PICTURE_DPI), "RGB"),  # 1,200 dpi reduced
        ((72, 300, 192, 360), (200, 100), "RGB"),
        ((300, 100, 444, 244), (1600, 1600), "1"),  # reduced, it would turn grey at its edges
    ]


def test_a_black_and_white_picture_is_stored_at_one_bit_a_pixel_with_its_own_pixels(tmp_path: Path) -> None:
    document = pymupdf.open()
    page = text_page(document, "A scanned drawing, one bit a pixel.")
    drawing = Image.frombytes("1", (999, 700), os.urandom(125 * 700))  # rows not a whole number of bytes
    buffer = io.BytesIO()
    drawing.save(buffer, "PNG")
    page.insert_image(pymupdf.Rect(72, 100, 372, 310), stream=buffer.getvalue())
    path = tmp_path / "drawing.pdf"
    document.save(path)

    (node,) = [
        node for node in build_index(path, strategy="text").pages[0].nodes if isinstance(node, ImageNode)
    ]
    assert node.image_data is not None
    with Image.open(io.BytesIO(node.image_data)) as picture:
        assert picture.mode == "1" and picture.size == (999, 700)
        assert picture.convert("L").tobytes() == drawing.convert("L").tobytes()


def test_a_grey_picture_asked_as_black_and_white_keeps_its_greys() -> None:
    pixmap = pymupdf.Pixmap(pymupdf.csGRAY, pymupdf.IRect(0, 0, 10, 300), 0)
    pixmap.set_rect(pixmap.irect, (255,))
    pixmap.set_pixel(3, 299, (128,))  # one grey pixel, in the last band of rows
    with Image.open(io.BytesIO(encode_png(pixmap, bilevel=True))) as picture:
        assert picture.mode == "L" and picture.getpixel((3, 299)) == 128


def test_a_scan_under_its_invisible_ocr_text_is_the_page_and_not_a_picture_on_it(tmp_path: Path) -> None:
    document = pymupdf.open()
    # Invisible text (an OCR layer) over a page-size picture, then a visible word over one.
    for render_mode, text in ((3, "The minutes of the meeting held on the third of May."), (0, "Agenda.")):
        page = document.new_page()
        page.insert_image(page.rect, stream=noise_picture(612, 792, "L"))
        page.insert_text((72, 400), text, render_mode=render_mode)
    path = tmp_path / "scanned.pdf"
    document.save(path)

    built = build_index(path, strategy="text", ocr="never")
    kinds = [[node.type for node in page.nodes] for page in built.pages]
    assert kinds[0] == ["paragraph"]  # the text is the scan's reading; the scan is not a picture on the page
    assert sorted(kinds[1]) == ["image", "paragraph"]  # a visible word over a picture: both kept
    assert "third of May" in built.pages[0].nodes[0].content


@pytest.mark.parametrize("alpha", [0, 1])
@pytest.mark.parametrize("colorspace", [pymupdf.csGRAY, pymupdf.csRGB])
def test_encoded_pngs_hold_the_pixmaps_pixels_as_mupdfs_own_writer_does(colorspace: Any, alpha: int) -> None:
    pixmap = pymupdf.Pixmap(colorspace, pymupdf.IRect(0, 0, 97, 600), alpha)  # more rows than one band
    samples = bytearray(os.urandom(len(pixmap.samples)))
    if alpha:  # premultiplied, as MuPDF keeps colour with alpha: no colour above its alpha
        n = pixmap.n
        for at in range(n - 1, len(samples), n):
            for offset in range(1, n):
                samples[at - offset] = min(samples[at - offset], samples[at])
    pixmap.samples_mv[:] = samples
    with (
        Image.open(io.BytesIO(encode_png(pixmap))) as ours,
        Image.open(io.BytesIO(pixmap.tobytes("png"))) as own,
    ):
        assert ours.mode == own.mode and ours.size == own.size == (97, 600)
        difference = max(abs(a - b) for a, b in zip(ours.tobytes(), own.tobytes(), strict=True))
    assert difference <= (1 if alpha else 0)  # alpha undone with rounding; without alpha, exactly


def test_pngs_are_encoded_only_from_grey_or_rgb() -> None:
    with pytest.raises(ValueError, match="grey or RGB"):
        encode_png(pymupdf.Pixmap(pymupdf.csCMYK, pymupdf.IRect(0, 0, 4, 4), 0))


def test_one_picture_shown_small_and_large_is_kept_at_each_size(tmp_path: Path) -> None:
    document = pymupdf.open()
    picture = noise_picture(1500, 1500)
    for box in (pymupdf.Rect(72, 100, 172, 200), pymupdf.Rect(36, 100, 576, 640)):  # 100 pt, then 540 pt
        page = text_page(document, "The same photograph, shown at another size on each page.")
        page.insert_image(box, stream=picture)
    path = tmp_path / "twice.pdf"
    document.save(path)
    with pymupdf.open(path) as saved:  # the premise: one picture object for both
        assert len({item[0] for page in saved for item in page.get_images()}) == 1

    small, large = sorted(size for _, size, _ in pictures_of(path))
    assert abs(small[0] - 100 * MAX_PICTURE_DPI / 72) <= 10 and small[0] == small[1]  # 300 dpi of 100 pt
    assert large == (1500, 1500)  # 200 dpi of 540 pt: whole, not the thumbnail's size


def _coloured_png(colour: tuple[int, int, int], size: tuple[int, int] = (64, 64)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, colour).save(buffer, "PNG")
    return buffer.getvalue()


def _colour_at_each_box(path: Path) -> list[tuple[tuple[int, ...] | None, tuple[int, ...]]]:
    """Each image node's box with the colour of its picture, in page order."""
    found = []
    for node in build_index(path, strategy="text").pages[0].nodes:
        if isinstance(node, ImageNode) and node.image_data is not None:
            with Image.open(io.BytesIO(node.image_data)) as picture:
                found.append((node.bbox, picture.convert("RGB").getpixel((8, 8))))
    return found


def test_same_sized_pictures_on_a_page_turned_upside_down_keep_their_own_pixels(tmp_path: Path) -> None:
    # The places the page's content gives are in the turned page's coordinates: compared as they are, the
    # red picture at the top left and the blue one at the bottom right would swap.
    document = pymupdf.open()
    # (600 x 800 points: the two places are each other's turned about the page's centre.)
    page = text_page(document, "A page turned upside down with two photographs on it.", width=600, height=800)
    page.insert_image(pymupdf.Rect(50, 100, 250, 200), stream=_coloured_png((255, 0, 0), (200, 100)))
    page.insert_image(pymupdf.Rect(350, 600, 550, 700), stream=_coloured_png((0, 0, 255), (200, 100)))
    page.set_rotation(180)
    path = tmp_path / "turned.pdf"
    document.save(path)

    shown = dict(_colour_at_each_box(path))
    with pymupdf.open(path) as source:
        turned = source[0]
        for box, colour in shown.items():
            assert box is not None
            clip = pymupdf.Rect(box) * turned.rotation_matrix
            pixmap = turned.get_pixmap(clip=clip)
            assert pixmap.pixel(pixmap.width // 2, pixmap.height // 2) == colour  # what the page shows there
    assert sorted(shown.values()) == [(0, 0, 255), (255, 0, 0)]


def test_many_same_sized_pictures_are_each_kept_with_their_own_pixels(tmp_path: Path) -> None:
    # Twelve picture objects of one size on one page: each placement is matched to its own object.
    document = pymupdf.open()
    page = text_page(document, "A contact sheet of twelve small photographs.")
    colours = [(20 * number, 255 - 20 * number, 100) for number in range(12)]
    for number, colour in enumerate(colours):
        left, top = 60 + 120 * (number % 4), 100 + 120 * (number // 4)
        page.insert_image(pymupdf.Rect(left, top, left + 100, top + 100), stream=_coloured_png(colour))
    path = tmp_path / "sheet.pdf"
    document.save(path)

    shown = _colour_at_each_box(path)
    assert len(shown) == 12
    for box, colour in shown:
        assert box is not None
        number = (box[0] - 60) // 120 + 4 * ((box[1] - 100) // 120)
        assert colour == colours[number]


def test_pictures_on_a_turned_page_are_drawn_and_measured_where_the_page_shows_them(tmp_path: Path) -> None:
    # Boxes are kept in the page's own coordinates; the page is drawn as shown. An oversized picture is
    # drawn from its place, which must be turned first (it came out blank), and a page-size picture
    # covers the whole page (it covered 0.77 of a turned page: a scan with a stamp was not OCR'd).
    from extract_thinker_pageindex.ocr.detect import picture_cover

    document = pymupdf.open()
    page = text_page(document, "A turned page with a very large black picture on it.")
    add_oversized_black_picture(document, page, pymupdf.Rect(72, 300, 540, 700))
    page.set_rotation(90)
    path = tmp_path / "turned.pdf"
    document.save(path)
    scan = pymupdf.open()
    scanned = scan.new_page(width=600, height=800)
    scanned.insert_image(scanned.rect, stream=noise_picture(60, 80, "L"))
    scanned.set_rotation(90)

    (node,) = [
        node for node in build_index(path, strategy="text").pages[0].nodes if isinstance(node, ImageNode)
    ]
    assert node.bbox == (72, 300, 540, 700) and node.image_data is not None
    with Image.open(io.BytesIO(node.image_data)) as picture:
        assert max(picture.convert("L").getextrema()) < 16  # black, as the page shows it
    with PYMUPDF_LOCK:
        assert picture_cover(scanned) == pytest.approx(1.0)


# -- masks, stencils and pictures without an object ----------------------------------------------------------


def _half_clear_picture(width: int, height: int) -> bytes:
    """An RGBA PNG: its left half opaque red, its right half clear over black (the colour a reader that
    drops the alpha shows)."""
    picture = Image.new("RGBA", (width, height), (0, 0, 0, 0))
    picture.paste((255, 0, 0, 255), (0, 0, width // 2, height))
    buffer = io.BytesIO()
    picture.save(buffer, "PNG")
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("size", "box"),
    [
        ((200, 100), pymupdf.Rect(100, 200, 300, 300)),  # kept whole (72 dpi of its place)
        ((2000, 1000), pymupdf.Rect(100, 200, 300, 300)),  # 720 dpi of its place: decoded reduced
    ],
)
def test_a_picture_with_a_soft_mask_keeps_it_as_its_alpha(
    tmp_path: Path, size: tuple[int, int], box: pymupdf.Rect
) -> None:
    # A PNG with transparency is stored as the colours plus an /SMask picture; MuPDF decodes the two apart.
    # Kept without its mask, the clear half showed its hidden colour (black) where the page shows white.
    document = pymupdf.open()
    page = text_page(document, "A picture with a transparent half.")
    page.insert_image(box, stream=_half_clear_picture(*size))
    path = tmp_path / "smask.pdf"
    document.save(path)
    with pymupdf.open(path) as saved:  # the premise: a picture object with a soft mask
        (item,) = saved[0].get_images(full=True)
        assert item[1] > 0

    (node,) = [
        node for node in build_index(path, strategy="text").pages[0].nodes if isinstance(node, ImageNode)
    ]
    assert node.image_data is not None
    with Image.open(io.BytesIO(node.image_data)) as picture:
        assert picture.mode == "RGBA"
        width, height = picture.size
        assert picture.getpixel((width // 4, height // 2)) == (255, 0, 0, 255)  # opaque red
        assert picture.getpixel((3 * width // 4, height // 2))[3] == 0  # clear, as the page shows it


def _picture_under_mask(
    tmp_path: Path, *, size: tuple[int, int], colorspace: str, pixel: bytes, key: str, mask: str, bits: bytes
) -> Image.Image:
    """The one picture the text strategy keeps of a page showing a ``size`` picture of ``pixel`` colour
    whose ``key`` (``SMask`` or ``Mask``) is a mask object of dictionary ``mask`` and samples ``bits``."""
    width, height = size
    document = pymupdf.open()
    page = text_page(document, f"A picture under a /{key}.")
    xref = add_picture(
        document,
        page,
        pymupdf.Rect(100, 200, 100 + 2 * width, 200 + 2 * height),
        width=width,
        height=height,
        colorspace=colorspace,
        stream=zlib.compress(pixel * width * height),
    )
    masking = document.get_new_xref()
    document.update_object(masking, f"<</Type/XObject/Subtype/Image{mask}>>")
    document.update_stream(masking, bits)
    document.xref_set_key(xref, key, f"{masking} 0 R")
    path = tmp_path / "masked.pdf"
    document.save(path)
    nodes = build_index(path, strategy="text").pages[0].nodes
    (node,) = [node for node in nodes if isinstance(node, ImageNode)]
    with Image.open(io.BytesIO(node.image_data or b"")) as picture:
        picture.load()
        return picture


def test_a_picture_whose_soft_mask_is_smaller_keeps_it_scaled_to_its_size(tmp_path: Path) -> None:
    picture = _picture_under_mask(
        tmp_path,
        size=(200, 100),
        colorspace="/DeviceRGB",
        pixel=b"\x00\x00\xff",  # blue
        key="SMask",
        mask="/Width 100/Height 50/ColorSpace/DeviceGray/BitsPerComponent 8",
        bits=(b"\xff" * 50 + b"\x00" * 50) * 50,  # left half opaque
    )
    assert picture.size == (200, 100) and picture.mode == "RGBA"
    assert picture.getpixel((40, 50)) == (0, 0, 255, 255)
    assert picture.getpixel((160, 50))[3] == 0


def test_a_picture_with_a_stencil_mask_is_clear_where_the_mask_hides_it(tmp_path: Path) -> None:
    picture = _picture_under_mask(
        tmp_path,
        size=(100, 60),
        colorspace="/DeviceGray",
        pixel=b"\xb4",  # grey 180
        key="Mask",
        mask="/Width 100/Height 60/ImageMask true/BitsPerComponent 1",
        # A /Mask stencil hides where its bits are 1: the left 56 pixels of each 13-byte row.
        bits=(b"\xff" * 7 + b"\x00" * 6) * 60,
    )
    assert picture.mode == "LA"
    assert picture.getpixel((10, 30))[1] == 0  # hidden, as the page shows it
    assert picture.getpixel((90, 30)) == (180, 255)


def test_a_stencil_painted_in_two_colours_on_two_pages_keeps_each_pages_colour(tmp_path: Path) -> None:
    # A stencil mask has no colours of its own: it is drawn from its page, in that page's fill colour, so
    # the drawing of the first page is not the second's.
    document = pymupdf.open()
    stencil = document.get_new_xref()
    document.update_object(
        stencil, "<</Type/XObject/Subtype/Image/Width 160/Height 80/ImageMask true/BitsPerComponent 1>>"
    )
    document.update_stream(stencil, b"\x55" * 20 * 80)  # stripes
    for colour in ("1 0 0", "0 0 1"):
        page = document.new_page()
        document.xref_set_key(
            page.xref,
            "Resources",
            f"<</Font<</F1<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>>>/XObject<</St {stencil} 0 R>>>>",
        )
        contents = document.get_new_xref()
        document.update_object(contents, "<<>>")
        text = f"BT /F1 11 Tf 72 720 Td (A striped stencil painted {colour}.) Tj ET\n"
        document.update_stream(contents, f"{text}q {colour} rg 320 0 0 160 100 432 cm /St Do Q\n".encode())
        document.xref_set_key(page.xref, "Contents", f"{contents} 0 R")
    path = tmp_path / "stencils.pdf"
    document.save(path)

    colours = []
    for page in build_index(path, strategy="text").pages:
        (node,) = [node for node in page.nodes if isinstance(node, ImageNode)]
        with Image.open(io.BytesIO(node.image_data or b"")) as picture:
            colours.append({colour for _, colour in picture.convert("RGB").getcolors(1 << 20) or []})
    assert (255, 0, 0) in colours[0] and (0, 0, 255) not in colours[0]
    assert (0, 0, 255) in colours[1] and (255, 0, 0) not in colours[1]


def test_an_inline_picture_the_size_of_one_picture_object_does_not_take_its_bytes(tmp_path: Path) -> None:
    # The inline picture (blue) has no object; the page's one picture object (red) is of its size. Matched
    # by size alone, the inline picture became a second copy of the red one.
    document = pymupdf.open()
    page = text_page(document, "A picture object and an inline picture of the same size.")
    page.insert_image(pymupdf.Rect(100, 100, 300, 220), stream=_coloured_png((255, 0, 0), (100, 60)))
    inline = b"q 200 0 0 120 100 422 cm BI /W 100 /H 60 /CS /RGB /BPC 8 /F /AHx ID\n"
    inline += b"0000ff" * 100 * 60 + b">\nEI Q\n"
    contents = page.get_contents()[-1]
    document.update_stream(contents, document.xref_stream(contents) + inline)
    path = tmp_path / "inline.pdf"
    document.save(path)
    with pymupdf.open(path) as saved:  # the premise: both drawn, 100 x 60 pixels each
        assert [info["width"] for info in saved[0].get_image_info()] == [100, 100]

    assert _colour_at_each_box(path) == [((100, 100, 300, 220), (255, 0, 0))]


def test_a_page_of_two_units_a_point_keeps_its_pictures_where_mupdf_places_them(tmp_path: Path) -> None:
    # /UserUnit 2: MuPDF scales the page (1190 x 1684 points) and every box on it, but PyMuPDF's dict gives
    # the page's size unscaled (595 x 842). Clipped to that, the right picture was lost and the left one cut.
    document = pymupdf.open()
    page = text_page(document, "A page of two units a point.")
    page.insert_image(pymupdf.Rect(100, 300, 300, 420), stream=_coloured_png((255, 0, 0), (100, 60)))
    page.insert_image(pymupdf.Rect(330, 300, 500, 420), stream=_coloured_png((0, 0, 255), (100, 60)))
    document.xref_set_key(page.xref, "UserUnit", "2")
    path = tmp_path / "user_unit.pdf"
    document.save(path)
    with pymupdf.open(path) as saved:  # the premise: MuPDF's page and boxes are scaled
        assert saved[0].rect == pymupdf.Rect(0, 0, 1190, 1684)
        assert [info["bbox"][0] for info in saved[0].get_image_info()] == [200, 660]

    assert _colour_at_each_box(path) == [
        ((200, 600, 600, 840), (255, 0, 0)),
        ((660, 618, 1000, 822), (0, 0, 255)),
    ]


@pytest.mark.parametrize(
    ("unit", "crop", "expected"),
    [
        ("2", None, (240, 600, 640, 840)),  # two units a point: MuPDF scales the page
        ("0.5", None, (60, 150, 160, 210)),
        (None, "[-100 -100 800 900]", (120, 600, 320, 720)),  # a CropBox past the MediaBox: cut to it
    ],
)
def test_a_picture_on_a_turned_page_of_another_unit_or_crop_keeps_mupdfs_box(
    tmp_path: Path, unit: str | None, crop: str | None, expected: tuple[int, int, int, int]
) -> None:
    # PyMuPDF's derotation matrix measures the unscaled CropBox; MuPDF draws the page scaled by /UserUnit
    # and cut to its MediaBox. Unturned by the former, these boxes landed off the page and were lost.
    document = pymupdf.open()
    page = text_page(document, "A turned page with a picture on it, and a line of text for the index.")
    y = 600 if crop else 300
    page.insert_image(pymupdf.Rect(120, y, 320, y + 120), stream=_coloured_png((10, 200, 30), (100, 60)))
    if unit:
        document.xref_set_key(page.xref, "UserUnit", unit)
    if crop:
        document.xref_set_key(page.xref, "CropBox", crop)
    page.set_rotation(90)
    path = tmp_path / "turned.pdf"
    document.save(path)
    with pymupdf.open(path) as saved:  # the premise: MuPDF's own box, in the page's unturned points
        (info,) = saved[0].get_image_info()
        assert tuple(round(value) for value in info["bbox"]) == expected

    assert _colour_at_each_box(path) == [(expected, (10, 200, 30))]


def _left_half_mask(document: pymupdf.Document, width: int, height: int, keys: str = "") -> int:
    """A soft mask object (8-bit grey) whose left half is opaque and right half clear."""
    xref = document.get_new_xref()
    document.update_object(
        xref,
        f"<</Type/XObject/Subtype/Image/Width {width}/Height {height}/ColorSpace/DeviceGray"
        f"/BitsPerComponent 8{keys}>>",
    )
    document.update_stream(xref, bytes([255] * (width // 2) + [0] * (width // 2)) * height)
    return xref


def test_a_soft_mask_with_a_matte_colour_keeps_it_as_alpha(tmp_path: Path) -> None:
    # /Matte: the colours are stored multiplied by the mask (as many writers store PNGs with transparency);
    # MuPDF undoes that and hands the colours with an alpha of their own, all opaque. Only the mask is it.
    width, height = 120, 80
    colours = (b"\xc8\x1e\x1e" * (width // 2) + b"\x00\x00\x00" * (width // 2)) * height  # matte: black
    document = pymupdf.open()
    page = text_page(document, "A picture with a pre-multiplied soft mask (/Matte).")
    smask = _left_half_mask(document, width, height, "/Matte [0 0 0]")
    xref = add_picture(
        document,
        page,
        pymupdf.Rect(100, 200, 340, 360),
        width=width,
        height=height,
        colorspace="/DeviceRGB",
        stream=zlib.compress(colours),
    )
    document.xref_set_key(xref, "SMask", f"{smask} 0 R")
    path = tmp_path / "matte.pdf"
    document.save(path)

    (node,) = [
        node for node in build_index(path, strategy="text").pages[0].nodes if isinstance(node, ImageNode)
    ]
    with Image.open(io.BytesIO(node.image_data or b"")) as picture:
        assert picture.mode == "RGBA"
        assert picture.getpixel((20, 40)) == (200, 30, 30, 255)
        assert picture.getpixel((100, 40))[3] == 0  # clear, as the page shows it (it was opaque black)


def test_a_full_page_scan_on_a_page_of_two_units_a_point_covers_it(tmp_path: Path) -> None:
    from extract_thinker_pageindex.ocr.detect import picture_cover

    document = pymupdf.open()
    page = document.new_page(width=400, height=300)
    page.insert_image(page.rect, stream=_coloured_png((128, 128, 128), (80, 60)))
    document.xref_set_key(page.xref, "UserUnit", "2")
    path = tmp_path / "scan.pdf"
    document.save(path)
    with pymupdf.open(path) as saved, PYMUPDF_LOCK:
        assert saved[0].rect == pymupdf.Rect(0, 0, 800, 600)  # the premise: MuPDF's scaled page
        assert picture_cover(saved[0]) == pytest.approx(1.0)  # it was measured as a quarter of the page


def test_a_jpeg_2000_with_its_own_alpha_and_a_soft_mask_keeps_both(tmp_path: Path) -> None:
    # The page draws the picture through its own alpha and its soft mask: the kept alpha is the two in one.
    width, height = 120, 80
    rgba = Image.new("RGBA", (width, height), (200, 30, 30, 255))
    rgba.paste((200, 30, 30, 128), (0, height // 2, width, height))  # its own alpha: the lower half at half
    buffer = io.BytesIO()
    rgba.save(buffer, "JPEG2000", irreversible=False)
    document = pymupdf.open()
    page = text_page(document, "A JPEG 2000 picture with its own alpha and a soft mask.")
    smask = _left_half_mask(document, width, height)
    xref = page.insert_image(pymupdf.Rect(100, 200, 340, 360), stream=_coloured_png((0, 0, 0), (4, 4)))
    document.update_stream(xref, buffer.getvalue(), compress=False)
    for key, value in {
        "Filter": "/JPXDecode",
        "Width": str(width),
        "Height": str(height),
        "SMask": f"{smask} 0 R",
        "ColorSpace": "null",
        "BitsPerComponent": "null",
        "DecodeParms": "null",
    }.items():
        document.xref_set_key(xref, key, value)
    path = tmp_path / "jpx.pdf"
    document.save(path)

    (node,) = [
        node for node in build_index(path, strategy="text").pages[0].nodes if isinstance(node, ImageNode)
    ]
    with Image.open(io.BytesIO(node.image_data or b"")) as picture:
        assert picture.mode == "RGBA" and picture.size == (width, height)
        assert picture.getpixel((20, 20)) == (200, 30, 30, 255)
        left_lower = picture.getpixel((20, 60))
        assert (
            abs(left_lower[3] - 128) <= 1
            and max(abs(a - b) for a, b in zip(left_lower[:3], (200, 30, 30), strict=True)) <= 2
        )
        assert picture.getpixel((100, 20))[3] == 0 and picture.getpixel((100, 60))[3] == 0
