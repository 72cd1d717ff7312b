#!/usr/bin/python3
"""make_bmp_seeds.py — writes the seed corpus of fuzz_bmp, tests/fuzz/seeds/bmp/: small RLE8 and
RLE4 BMPs made with tests/common/bmp_rle.py (every code: runs, absolute runs with their
padding, end of line, delta, end of bitmap; bottom-up and top-down; a small palette), a few
broken ones (a run past its row, a delta past the last row, a stream cut short), and an
uncompressed 8-bit one for stb's path. Every file stays under 1 KiB. The outputs are
committed; rerun after changing this script:
    /usr/bin/python3 tests/fuzz/make_bmp_seeds.py
Deterministic."""
import os
import random
import shutil
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))
import bmp_rle as E  # noqa: E402

OUT = os.path.join(HERE, "seeds", "bmp")


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    r = random.Random(30)
    seeds = {}
    for rle4 in (False, True):
        k = "rle4" if rle4 else "rle8"
        ncol = 16 if rle4 else 256
        pal = [(r.randrange(256), r.randrange(256), r.randrange(256)) for _ in range(16)]
        rows = [[r.randrange(4) if r.random() < 0.5 else 7 for _ in range(13)] for _ in range(5)]
        seeds[f"{k}_natural.bmp"] = E.bmp(13, 5, rle4, E.encode(rows, rle4), pal)
        seeds[f"{k}_topdown.bmp"] = E.bmp(13, 5, rle4, E.encode(rows, rle4), pal, top_down=True)
        run = E.run4 if rle4 else E.run
        s = (run(3, 5) + E.delta(2, 1) + run(2, 7) + E.EOL + E.absolute([1, 2, 3], rle4)
             + E.delta(5, 0) + E.EOL + E.absolute([9, 8, 7, 6, 5], rle4) + E.EOL + E.EOB)
        seeds[f"{k}_escapes.bmp"] = E.bmp(8, 6, rle4, s, pal)
        seeds[f"{k}_small_palette.bmp"] = E.bmp(3, 2, rle4, run(3, 1) + E.EOL + E.EOB, pal[:2])
        seeds[f"{k}_bad_run.bmp"] = E.bmp(4, 2, rle4, run(5, 1) + E.EOB, pal)
        seeds[f"{k}_bad_delta.bmp"] = E.bmp(4, 2, rle4, E.delta(1, 2) + E.EOB, pal)
        seeds[f"{k}_cut.bmp"] = E.bmp(8, 3, rle4, run(8, 1) + E.EOL + E.absolute([1, 2, 3, 4], rle4)[:4], pal)
        del ncol
    # an uncompressed 8-bit palette BMP (stb's path), 4 x 2
    pal = b"".join(bytes((i * 60, 255 - i * 60, i * 30, 0)) for i in range(4))
    px = bytes([0, 1, 2, 3, 3, 2, 1, 0])
    info = struct.pack("<IiiHHIIiiII", 40, 4, 2, 1, 8, 0, len(px), 2835, 2835, 4, 0)
    seeds["plain_8bit.bmp"] = struct.pack("<2sIHHI", b"BM", 14 + 40 + 16 + 8, 0, 0, 70) + info + pal + px
    for name, data in sorted(seeds.items()):
        assert len(data) < 1024, name
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
    print(f"{len(seeds)} seeds in {OUT}")


if __name__ == "__main__":
    main()
