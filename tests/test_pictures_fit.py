"""Slide-ready pictures (issue 27): the pictures of a 35-word sentence, of a GPT-2
folder and of the demo have no side over 3,000 px, and with --slide every one is
exactly 1920 x 1080 (read from the PNG headers); the lines view's colours stay
apart for colour-blind readers (Machado et al. 2009 simulation)."""
import json, os, re
from helpers import ROOT, run_ok
import hf_fixtures as hf

S35 = ("the animal didn't cross the street because it was too tired and the old man who "
       "lived in the small house near the river said that the dog was very happy today "
       "because it rained .")


def png_sizes(d):
    """{relative path: (width, height)} of every PNG under d, from the IHDR chunk."""
    out = {}
    for root, _, names in os.walk(d):
        for n in names:
            if not n.endswith(".png"):
                continue
            p = os.path.join(root, n)
            with open(p, "rb") as f:
                head = f.read(24)
            assert head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR", p
            out[os.path.relpath(p, d)] = (int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big"))
    return out


def check_fit(sizes, what):
    assert sizes, f"{what}: no pictures"
    big = {k: v for k, v in sizes.items() if max(v) > 3000}
    assert not big, f"{what}: pictures over 3000 px: {big}"


def check_slide(sizes, what):
    assert sizes, f"{what}: no pictures"
    off = {k: v for k, v in sizes.items() if v != (1920, 1080)}
    assert not off, f"{what} --slide: pictures not 1920x1080: {off}"


def test_35_word_sentence_fits_and_slides(tmp):
    assert len(S35.split()) == 36   # 35 words and the full stop
    out, slide = os.path.join(tmp, "o"), os.path.join(tmp, "s")
    run_ok("run", "--out", out, S35)
    sizes = png_sizes(out)
    check_fit(sizes, "run (35 words)")
    # the folds that keep it so: the step strip in rows, not one 4,000-px row
    w, h = sizes["steps.encoder.2.self.h0.png"]
    assert w <= 2600 and h > 1000, (w, h)
    run_ok("run", "--slide", "--out", slide, S35)
    s = png_sizes(slide)
    assert set(s) == set(sizes)
    check_slide(s, "run (35 words)")


def test_gpt2_folder_fits_and_slides(tmp):
    d = os.path.join(tmp, "gpt2")
    hf.write_gpt2_dir(d)
    out, slide = os.path.join(tmp, "o"), os.path.join(tmp, "s")
    text = "The animal didn't cross the street because it was too tired"
    run_ok("run", "--model", d, "--out", out, text)
    check_fit(png_sizes(out), "GPT-2 folder")
    run_ok("run", "--model", d, "--slide", "--out", slide, text)
    check_slide(png_sizes(slide), "GPT-2 folder")


def test_demo_fits_and_slides(tmp):
    out, slide = os.path.join(tmp, "o"), os.path.join(tmp, "s")
    run_ok("demo", "--out", out)
    sizes = png_sizes(out)
    check_fit(sizes, "demo")
    run_ok("demo", "--slide", "--out", slide)
    s = png_sizes(slide)
    assert set(s) == set(sizes)
    check_slide(s, "demo")


def check_slide_width(sizes, what):
    """The done-when of issue 27: by default no picture wider than a 1920-px slide
    (folded, not scaled: fit.c only scales beyond 3,000 px) nor over 3,000 px high."""
    assert sizes, f"{what}: no pictures"
    off = {k: v for k, v in sizes.items() if v[0] > 1920 or v[1] > 3000}
    assert not off, f"{what}: pictures wider than a slide: {off}"


def thumbnail_blocks(px):
    """(display columns, display rows) of a model-view grid read from its pixels:
    runs of columns and rows holding many coloured pixels (viridis: the
    thumbnails; text and hatching are grey), gaps of up to 6 px (the white lines
    between cells) bridged; the last column run is the colour bar, left out."""
    import numpy as np
    px = px.astype(int)
    coloured = px.max(axis=2) - px.min(axis=2) > 40

    def runs(hit):
        idx = np.flatnonzero(hit)
        if idx.size == 0:
            return []
        out, start = [], idx[0]
        for a, c in zip(idx[:-1], idx[1:]):
            if c - a > 6:
                out.append((start, a))
                start = c
        return out + [(start, idx[-1])]

    cols = runs(coloured.sum(axis=0) > 20)
    bar = cols[-1]
    rows = runs(coloured[:, :bar[0]].sum(axis=1) > 20)
    return len(cols) - 1, len(rows)


def test_three_cases_fit_a_slide_without_scaling(tmp):
    """A 35-word sentence, a GPT-2 folder of 12 heads and the demo, default options:
    every PNG at most 1920 px wide; the folded model view still has all 24 heads."""
    out = os.path.join(tmp, "s35")
    run_ok("run", "--out", out, S35)
    check_slide_width(png_sizes(out), "run (35 words)")
    w, h = png_sizes(out)["steps.encoder.2.self.h0.png"]
    assert w <= 1920 and h > 1000, (w, h)                  # folded into rows, not shrunk
    g = os.path.join(tmp, "gpt2")
    hf.write_gpt2_dir(g, C=48, H=12, L=2)
    for name, text in (("g12", "The animal didn't cross the street because it was too tired"), ("g35", S35)):
        o = os.path.join(tmp, name)
        run_ok("run", "--model", g, "--out", o, text)
        sizes = png_sizes(o)
        check_slide_width(sizes, f"GPT-2 folder, {name}")
        t = json.load(open(os.path.join(o, "trace.json")))
        assert [len(m["heads"]) for m in t["maps"]] == [12, 12], name
    # 12 tokens: one row of 12 labelled heads was ~3,300 px; folded, 2 rows of 6 per layer
    px = read_rgb(os.path.join(tmp, "g12", "grid.decoder.masked_self.png"))
    assert thumbnail_blocks(px) == (6, 4), thumbnail_blocks(px)
    # GPT-2 small's 12 layers x 12 heads: labelled thumbnails folded into rows made a
    # 1915 x 16845 picture (refused); labels on the outer edges, 12 x 12 thumbnails
    g = os.path.join(tmp, "gpt2-12x12")
    hf.write_gpt2_dir(g, C=48, H=12, L=12)
    o = os.path.join(tmp, "g144")
    run_ok("run", "--model", g, "--out", o, "--max-pictures", "144",
           "The animal didn't cross the street because it was too tired, so the farmer carried it home")
    check_slide_width(png_sizes(o), "GPT-2 folder, 12 x 12 heads")
    px = read_rgb(os.path.join(o, "grid.decoder.masked_self.png"))
    assert thumbnail_blocks(px) == (12, 12), thumbnail_blocks(px)
    d = os.path.join(tmp, "demo")
    run_ok("demo", "--out", d)
    check_slide_width(png_sizes(d), "demo")


def test_thumbnail_count_reads_an_unfolded_grid(tmp):
    """The pixel count of thumbnails can fail: a 4-head folder is one row per layer."""
    g = os.path.join(tmp, "gpt2")
    hf.write_gpt2_dir(g)
    o = os.path.join(tmp, "o")
    run_ok("run", "--model", g, "--out", o, "The animal didn't cross the street")
    px = read_rgb(os.path.join(o, "grid.decoder.masked_self.png"))
    assert thumbnail_blocks(px) == (4, 2), thumbnail_blocks(px)


def test_slide_is_the_picture_scaled_on_white(tmp):
    """A slide holds the picture, not a crop: the border is white, the middle is not."""
    out = os.path.join(tmp, "s")
    run_ok("run", "--slide", "--out", out, "the cat sat on the mat .")
    px = read_rgb(os.path.join(out, "encoder.0.self.h0.png"))
    assert px.shape == (1080, 1920, 3)
    assert (px[:3] == 255).all() and (px[-3:] == 255).all()          # white page above and below
    assert (px[400:700, 600:1300] < 200).any()                        # the map itself


def read_rgb(path):
    """8-bit RGB PNG without filters (as attnviz writes it) → (h, w, 3) array."""
    import numpy as np
    import zlib
    data = open(path, "rb").read()
    pos, idat, w, h = 8, b"", 0, 0
    while pos < len(data):
        n = int.from_bytes(data[pos:pos + 4], "big")
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h = int.from_bytes(body[:4], "big"), int.from_bytes(body[4:8], "big")
            assert body[8] == 8 and body[9] == 2
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = np.frombuffer(zlib.decompress(idat), dtype=np.uint8).reshape(h, 1 + 3 * w)
    assert (raw[:, 0] == 0).all()      # filter NONE on every row
    return raw[:, 1:].reshape(h, w, 3)


# ---------------------------------------------------------------- colour-blind check

# Machado, Oliveira & Fernandes (2009), severity 1.0, on linear RGB.
MACHADO = {
    "deuteranopia": [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.011820, 0.042940, 0.968881]],
    "protanopia": [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]],
}


def srgb_to_linear(c):
    c = c / 255.0
    return ((c + 0.055) / 1.055) ** 2.4 if c > 0.04045 else c / 12.92


def linear_to_lab(rgb):
    r, g, b = rgb
    x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
    y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883
    f = lambda t: t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116
    return (116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z)))


def simulate(hexcol, matrix):
    lin = [srgb_to_linear((hexcol >> s) & 0xFF) for s in (16, 8, 0)]
    if matrix is not None:
        lin = [min(1.0, max(0.0, sum(matrix[i][j] * lin[j] for j in range(3)))) for i in range(3)]
    return linear_to_lab(lin)


def delta_e(a, b):
    return sum((x - y) ** 2 for x, y in zip(a, b)) ** 0.5


def test_lines_colours_stay_apart_for_colour_blind_readers():
    src = open(os.path.join(ROOT, "src", "render", "lines.c"), encoding="utf-8").read()
    pal = {m.group(1): int(m.group(2), 16) for m in re.finditer(r"#define LINES_COL_(\w+) 0x([0-9A-Fa-f]{6})", src)}
    assert set(pal) >= {"ALL", "FOCUS", "MASKED", "FAINT", "TEXT"}, pal
    pal["BACKGROUND"] = 0xFFFFFF
    # the hand-checked numbers: Okabe–Ito blue and vermillion
    assert pal["ALL"] == 0x0072B2 and pal["FOCUS"] == 0xD55E00
    names = sorted(pal)
    for vision, matrix in [("normal", None)] + list(MACHADO.items()):
        lab = {n: simulate(pal[n], matrix) for n in names}
        pairs = [(delta_e(lab[a], lab[b]), a, b) for i, a in enumerate(names) for b in names[i + 1:]]
        worst = min(pairs)
        assert worst[0] >= 10, f"{vision}: {worst[1]} and {worst[2]} only ΔE {worst[0]:.1f} apart"
        # the two line colours themselves: clearly apart, and each clearly off white
        assert delta_e(lab["ALL"], lab["FOCUS"]) >= 30, (vision, delta_e(lab["ALL"], lab["FOCUS"]))
    # the check can fail: a red/green pair that is 120 apart for normal vision is 7 apart for deuteranopes
    red, green = simulate(0xD62728, MACHADO["deuteranopia"]), simulate(0x2CA02C, MACHADO["deuteranopia"])
    assert delta_e(red, green) < 30, "the simulation must be able to fail"


def test_generate_compare_worksheet_slide(tmp):
    """--slide on the commands added beside run and demo: every PNG is 1920 x 1080."""
    g = os.path.join(tmp, "gpt2")
    hf.write_gpt2_dir(g)
    for args in (["generate", "--model", g, "--steps", 3, "hello world"],
                 ["compare", "i am happy .", "i am tired ."],
                 ["worksheet", "--seed", 2]):
        out = os.path.join(tmp, args[0])
        run_ok(*args, "--slide", "--out", out)
        check_slide(png_sizes(out), args[0])
