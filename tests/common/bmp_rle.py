"""bmp_rle.py — BMP run-length encodings (RLE8, RLE4) written and read from Microsoft's
description of the format, with no imgpu code: the encoder of tests/io/bmp_rle_check.py's
inputs and of tests/fuzz/make_bmp_seeds.py's seeds, and the reference decoder the test holds
imgpu's pixels to.

Codes (two bytes each; a "line" is a row in the order the stream draws them: the bottom row
first in a bottom-up file, the top row first in a top-down one):
  N V     N > 0: N pixels of index V (RLE4: V's high and low nibbles alternating)
  0 0     end of line: the rest of the line is skipped, drawing goes on at the next line's start
  0 1     end of bitmap
  0 2 DX DY  delta: DX pixels right and DY lines on
  0 N ... N >= 3: absolute run of N indices (RLE4: N nibbles, high first) in (N or (N+1)/2)
          bytes, padded with one byte to a 16-bit boundary
Pixels the stream skips keep index 0.
"""
import struct

EOL, EOB = b"\x00\x00", b"\x00\x01"


def delta(dx, dy):
    return bytes((0, 2, dx, dy))


def run(n, v, v2=None):
    """n pixels of index v (RLE4: v and v2 alternating; v2 defaults to v)."""
    return bytes((n, v))


def run4(n, v, v2=None):
    return bytes((n, (v << 4) | (v if v2 is None else v2)))


def absolute(values, rle4):
    n = len(values)
    assert 3 <= n <= 255
    if rle4:
        vals = list(values) + [0] * (n % 2)
        body = bytes((vals[i] << 4) | vals[i + 1] for i in range(0, n + n % 2, 2))
    else:
        body = bytes(values)
    return bytes((0, n)) + body + b"\x00" * (len(body) % 2)


def encode(rows, rle4, even_absolute=False):
    """A stream for rows (lists of indices, in the order the stream draws them): runs of 3 or
    more equal indices as encoded runs, other stretches of 3 or more as absolute runs (of even
    length only, with even_absolute: PIL 9.4 misreads odd RLE4 absolute runs), the rest as
    runs of 1 or 2; an end of line after each row and an end of bitmap at the end."""
    out = bytearray()
    for row in rows:
        x, w = 0, len(row)
        while x < w:
            n = 1
            while x + n < w and row[x + n] == row[x] and n < 255:
                n += 1
            if n >= 3:
                out += run4(n, row[x]) if rle4 else run(n, row[x])
                x += n
                continue
            # a literal stretch: up to the next run of 3
            e = x
            while e < w and e - x < 255 and not (e + 2 < w and row[e] == row[e + 1] == row[e + 2]):
                e += 1
            n = e - x
            if even_absolute and n % 2:
                n -= 1
            if n >= 3:
                out += absolute(row[x:x + n], rle4)
                x += n
            else:
                out += run4(1, row[x]) if rle4 else run(1, row[x])
                x += 1
        out += EOL
    out += EOB
    return bytes(out)


def bmp(w, h, rle4, stream, palette, top_down=False, clr_used=None, bpp=None):
    """A BMP (BITMAPINFOHEADER) of the stream; palette: (r, g, b) entries."""
    pal = b"".join(bytes((b_, g, r, 0)) for r, g, b_ in palette)
    offset = 14 + 40 + len(pal)
    info = struct.pack("<IiiHHIIiiII", 40, w, -h if top_down else h, 1,
                       bpp if bpp is not None else (4 if rle4 else 8), 2 if rle4 else 1,
                       len(stream), 2835, 2835,
                       len(palette) if clr_used is None else clr_used, 0)
    head = struct.pack("<2sIHHI", b"BM", offset + len(stream), 0, 0, offset)
    return head + info + pal + stream


def decode(data):
    """(w, h, rows of indices top to bottom) of an RLE BMP, strictly: ValueError for anything
    that leaves the image, an index past the palette, or a stream that ends with lines left."""
    off = struct.unpack_from("<I", data, 10)[0]
    hsz, w, h, _, bpp, comp = struct.unpack_from("<IiiHHI", data, 14)
    clr = struct.unpack_from("<I", data, 46)[0]
    rle4 = comp == 2
    top_down = h < 0
    h = abs(h)
    ncol = min(clr or (16 if rle4 else 256), (off - 14 - hsz) // 4, 16 if rle4 else 256)
    img = [[0] * w for _ in range(h)]
    p, x, line = off, 0, 0

    def put(v):
        nonlocal x
        if line >= h or x >= w:
            raise ValueError("outside the image")
        if v >= ncol:
            raise ValueError("index past the palette")
        img[line if top_down else h - 1 - line][x] = v
        x += 1

    while True:
        if len(data) - p < 2:
            if line >= h:
                break
            raise ValueError("ends early")
        n, c = data[p], data[p + 1]
        p += 2
        if n:
            for k in range(n):
                put((c >> 4 if k % 2 == 0 else c & 15) if rle4 else c)
        elif c == 0:
            x, line = 0, line + 1
        elif c == 1:
            break
        elif c == 2:
            if len(data) - p < 2:
                raise ValueError("ends early")
            nx, nl = x + data[p], line + data[p + 1]
            p += 2
            if nx > w or nl > h or (nl == h and nx != 0):
                raise ValueError("delta outside")
            x, line = nx, nl
        else:
            nbytes = (c + 1) // 2 if rle4 else c
            if len(data) - p < nbytes + nbytes % 2:
                raise ValueError("ends early")
            for k in range(c):
                put((data[p + k // 2] >> (0 if k % 2 else 4)) & 15 if rle4 else data[p + k])
            p += nbytes + nbytes % 2
    return w, h, img
