"""exif_blob.py — EXIF blobs in TIFF structure, built with struct for the tests
(tests/opencv/opencv_exif_orient.py) and the fuzz seeds (tests/fuzz/make_exif_seeds.py).

    tiff(ifd0, exif=None, gps=None, ifd1=None, big_endian=False) -> bytes

Each IFD is a list of (tag, type, value): ASCII takes a str (a NUL is added) or bytes (as
they are), SHORT/LONG an int or a list of ints, RATIONAL a list of (numerator, denominator),
SRATIONAL a list of signed (numerator, denominator), BYTE/UNDEFINED bytes. The pointers to the Exif and GPS IFDs (0x8769, 0x8825) are added to
IFD0 when those IFDs are given; IFD1 (the thumbnail's) follows IFD0 through its next link.
Entries are written sorted by tag, as TIFF asks. Offsets count from the byte-order mark;
app1(blob) puts "Exif\\0\\0" in front, as a JPEG's APP1 segment holds it."""
import struct

BYTE, ASCII, SHORT, LONG, RATIONAL, UNDEFINED, SRATIONAL = 1, 2, 3, 4, 5, 7, 10
SIZE = {BYTE: 1, ASCII: 1, SHORT: 2, LONG: 4, RATIONAL: 8, UNDEFINED: 1, SRATIONAL: 8}
EXIF_IFD, GPS_IFD = 0x8769, 0x8825


def _value_bytes(e, typ, value):
    if typ == ASCII:
        return value.encode() + b"\0" if isinstance(value, str) else bytes(value)
    if typ in (BYTE, UNDEFINED):
        return bytes(value)
    if typ in (RATIONAL, SRATIONAL):
        f = e + ("II" if typ == RATIONAL else "ii")
        return b"".join(struct.pack(f, n, d) for n, d in value)
    vals = value if isinstance(value, (list, tuple)) else [value]
    return b"".join(struct.pack(e + ("H" if typ == SHORT else "I"), v) for v in vals)


def tiff(ifd0, exif=None, gps=None, ifd1=None, big_endian=False):
    e = ">" if big_endian else "<"
    ifd0 = list(ifd0)
    if exif is not None:
        ifd0.append((EXIF_IFD, LONG, 0))
    if gps is not None:
        ifd0.append((GPS_IFD, LONG, 0))
    ifds = [("ifd0", ifd0)] + [(name, ents) for name, ents in
                               (("ifd1", ifd1), ("exif", exif), ("gps", gps)) if ents is not None]
    where, at = {}, 8
    for name, ents in ifds:
        where[name] = at
        at += 2 + 12 * len(ents) + 4
    data_at = at
    out, data = bytearray(), bytearray()
    out += (b"MM\0*" if big_endian else b"II*\0") + struct.pack(e + "I", 8)
    for name, ents in ifds:
        out += struct.pack(e + "H", len(ents))
        for tag, typ, value in sorted(ents, key=lambda t: t[0]):
            if tag == EXIF_IFD and name == "ifd0" and "exif" in where:
                value = where["exif"]
            elif tag == GPS_IFD and name == "ifd0" and "gps" in where:
                value = where["gps"]
            raw = _value_bytes(e, typ, value)
            count = len(raw) // SIZE[typ]
            if len(raw) <= 4:
                field = raw + b"\0" * (4 - len(raw))
            else:
                field = struct.pack(e + "I", data_at + len(data))
                data += raw + b"\0" * (len(raw) & 1)   # word-aligned, as TIFF asks
            out += struct.pack(e + "HHI", tag, typ, count) + field
        nxt = where["ifd1"] if name == "ifd0" and "ifd1" in where else 0
        out += struct.pack(e + "I", nxt)
    return bytes(out + data)


def app1(blob):
    return b"Exif\0\0" + blob


def camera(orientation, big_endian=False, make="Canon", model="Canon EOS 5D Mark IV",
           width=4032, height=3024, gps=True):
    """A typical camera's blob: Make, Model, Orientation, resolution, DateTime; an Exif IFD
    with DateTimeOriginal and the pixel size (SHORT width, LONG height); a GPS IFD."""
    ifd0 = [(0x010F, ASCII, make), (0x0110, ASCII, model), (0x0112, SHORT, orientation),
            (0x011A, RATIONAL, [(72, 1)]), (0x011B, RATIONAL, [(72, 1)]), (0x0128, SHORT, 2),
            (0x0132, ASCII, "2021:02:03 04:05:06")]
    exif = [(0x9000, UNDEFINED, b"0230"), (0x9003, ASCII, "2020:01:02 03:04:05"),
            (0xA002, SHORT, width), (0xA003, LONG, height)]
    g = [(0x0000, BYTE, b"\2\3\0\0"), (0x0001, ASCII, "N"),
         (0x0002, RATIONAL, [(48, 1), (51, 1), (2900, 100)])] if gps else None
    return tiff(ifd0, exif, g, big_endian=big_endian)
