#!/usr/bin/python3
"""make_exif_seeds.py — writes the seed corpus of fuzz_exif, tests/fuzz/seeds/exif/: EXIF
blobs built with tests/common/exif_blob.py (Python's struct only): a camera's blob in both byte
orders, as a bare TIFF blob and as a JPEG APP1 payload ("Exif\\0\\0" first); the smallest
blob with an orientation; one with IFD1 (a thumbnail's IFD) and LONG pixel sizes; and a few
broken ones (truncated, an Exif pointer back to IFD0, an entry count past the end, text at an
offset out of range); and one whose text fields hold terminal escapes and bytes that are not
UTF-8 (issue 25). fuzz_exif_write (the EXIF writers) starts from the same files and a few
of its own in tests/fuzz/seeds/exif_write/: every pointer TIFF and EXIF know in every IFD (a
nested Exif pointer in the Exif IFD, Interoperability, SubIFDs, strip offsets), duplicate tags,
orientations out of range, an odd-length value. The outputs are committed; rerun after
changing this script:
    /usr/bin/python3 tests/fuzz/make_exif_seeds.py
Deterministic. tests/fuzz/make_seeds.py writes the other corpora and leaves this one alone."""
import os
import shutil
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "common"))
sys.dont_write_bytecode = True
from exif_blob import (ASCII, BYTE, LONG, SHORT, RATIONAL, UNDEFINED, app1, camera,  # noqa: E402
                       tiff)

OUT = os.path.join(HERE, "seeds", "exif")
OUT_WRITE = os.path.join(HERE, "seeds", "exif_write")


def writer_seeds():
    """fuzz_exif_write's own: what the rebuild must drop, dedupe or mend."""
    seeds = {}
    # pointers everywhere: a nested Exif pointer (at IFD0), Interoperability, GPS inside Exif,
    # SubIFDs and StripOffsets in IFD0; a maker note of odd length
    seeds["pointers_le.bin"] = app1(tiff(
        [(0x010F, ASCII, "Canon"), (0x0111, LONG, [8, 8]), (0x0112, SHORT, 6),
         (0x014A, LONG, 8)],
        exif=[(0x8769, LONG, 8), (0x8825, LONG, 8), (0x9000, UNDEFINED, b"0230"),
              (0x927C, UNDEFINED, b"maker-note"), (0xA002, SHORT, 640), (0xA003, SHORT, 480),
              (0xA005, LONG, 8)],
        gps=[(0x0000, BYTE, b"\2\3\0\0"), (0x0001, ASCII, "N")]))
    # duplicate tags (the first one the parse takes wins), Orientation 9 then 6
    seeds["duplicates_be.bin"] = app1(tiff(
        [(0x010F, SHORT, 7), (0x010F, ASCII, "First"), (0x010F, ASCII, "Second"),
         (0x0112, SHORT, 9), (0x0112, SHORT, 6)],
        exif=[(0xA002, ASCII, "x"), (0xA002, LONG, 100000), (0xA002, LONG, 5)],
        big_endian=True))
    seeds["orientation_65535_le.bin"] = app1(tiff([(0x0112, SHORT, 65535)]))
    seeds["orientation_long_9_be.tif"] = tiff([(0x0112, LONG, 9)], big_endian=True)
    seeds["header_only_le.bin"] = app1(b"II*\0")
    return seeds


def main():
    seeds = {}
    seeds["camera_le_o6.bin"] = app1(camera(6))
    seeds["camera_be_o8.bin"] = app1(camera(8, big_endian=True, make="NIKON CORPORATION ",
                                            model="NIKON D850"))
    seeds["camera_le_o3_bare.tif"] = camera(3, gps=False)
    seeds["camera_be_o5_bare.tif"] = camera(5, big_endian=True)
    seeds["minimal_o7.bin"] = app1(tiff([(0x0112, SHORT, 7)]))
    seeds["ifd1_long_pixels_be.bin"] = app1(tiff(
        [(0x010F, ASCII, "FUJIFILM"), (0x0112, SHORT, 2)],
        exif=[(0xA002, LONG, 6000), (0xA003, LONG, 4000)],
        ifd1=[(0x0103, SHORT, 6), (0x011A, RATIONAL, [(72, 1)]), (0x0201, LONG, 0),
              (0x0202, LONG, 0)],
        big_endian=True))
    full = camera(6)
    seeds["truncated_le.bin"] = app1(full[:len(full) * 2 // 3])
    # the Exif pointer aimed back at IFD0 (offset 8), and IFD0's next link at itself
    loop = bytearray(tiff([(0x0112, SHORT, 4), (0x8769, LONG, 8), (0xA002, SHORT, 9)]))
    struct.pack_into("<I", loop, 8 + 2 + 12 * 3, 8)
    seeds["loop_le.bin"] = app1(bytes(loop))
    # IFD0's entry count says 65535; Make's text at an offset far past the end
    big = bytearray(tiff([(0x010F, ASCII, "Canon EOS"), (0x0112, SHORT, 6)], big_endian=True))
    struct.pack_into(">H", big, 8, 0xFFFF)
    struct.pack_into(">I", big, 8 + 2 + 8, 0xFFFFFFF0)
    seeds["count_past_end_be.bin"] = app1(bytes(big))
    # issue 25: text fields with terminal escapes (OSC, CSI, BEL, C1 CSI) and bytes that are not
    # UTF-8 (F8, a surrogate, F4 90, an overlong form), which `imgpu info` must escape
    seeds["hostile_text_le.bin"] = app1(tiff(
        [(0x010F, ASCII, b"Cam\xf8\x80\x80 \xed\xa0\x80\xf4\x90\x80\x80\xc0\xaf\xff\0"),
         (0x0110, ASCII, b"\x1b]0;pwned\x07\x1b[31mRED\x1b[0m\xc2\x9b31m\x9b\x07\0"),
         (0x0112, SHORT, 1)],
        exif=[(0x9003, ASCII, b"2024:\x1b[2J01:02 03:04:05\0")]))

    write(OUT, seeds)
    write(OUT_WRITE, {**seeds, **writer_seeds()})


def write(out, seeds):
    if os.path.isdir(out):
        shutil.rmtree(out)
    os.makedirs(out)
    for name, data in sorted(seeds.items()):
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
    print(f"make_exif_seeds: {len(seeds)} files -> {out}")


if __name__ == "__main__":
    main()
