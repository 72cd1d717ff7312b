"""robust_info_text.py — what `imgpu info` prints of text from a file (issue 25): EXIF Make,
Model and date, the ICC description and the file's name, hostile bytes in each.
  - `info`: no byte that drives a terminal (C0 controls but the line ends, DEL, C1 controls
    as UTF-8 C2 80..9F or raw 0x80..0x9f bytes, ESC sequences: OSC, CSI, BEL) and nothing but
    well-formed UTF-8 reaches stdout; Model is escaped like Make (it was printed raw);
  - `info --json`: every line is JSON that Python's strict json.loads takes, the output is
    well-formed UTF-8 (it printed F8 80 80, surrogates ED A0 80 and F4 90 80 80 raw), holds
    no raw control byte either, and the strings come back to the file's bytes exactly:
    bytes that are not UTF-8 are written as \\udcXX (PEP 383's surrogateescape), so
    os.fsencode(path) is the file's name and camera.encode("utf-8", "surrogateescape") is
    Make + " " + Model.
Python's own UTF-8 codec (RFC 3629, strict) is the judge of well-formed UTF-8 here.

Usage: robust_info_text.py IMGPU_BINARY TMP_ROOT ASSETS_DIR
"""
import json
import os
import re
import struct
import subprocess
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))
import cli_common as cc  # noqa: E402
import exif_blob  # noqa: E402

# Hostile text fields (each under 64 bytes, the EXIF reader's field size)
MAKE = b"Cam\xf8\x80\x80 \xed\xa0\x80\xf4\x90\x80\x80\xc0\xaf\xff"   # not UTF-8
MODEL = b"\x1b]0;pwned\x07\x1b[31mRED\x1b[0m\xc2\x9b31m\x9b\x07"        # OSC, CSI, BEL, C1 CSI
DATE = b"2024:\x1b[2J01:02 03:04:05"
VALID = "Caf\u00e9 \u65e5\u672c \U0001F600".encode()                      # stays as it is


def png_with(exif=None, icc=None):
    """A 4x3 gray PNG with an eXIf chunk and an iCCP chunk."""
    rows = b"".join(b"\0" + bytes(range(y * 4, y * 4 + 4)) for y in range(3))
    ch = cc._chunk
    out = b"\x89PNG\r\n\x1a\n" + ch(b"IHDR", struct.pack(">IIBBBBB", 4, 3, 8, 0, 0, 0, 0))
    if icc is not None:
        out += ch(b"iCCP", b"profile\0\0" + zlib.compress(icc))
    if exif is not None:
        out += ch(b"eXIf", exif)
    return out + ch(b"IDAT", zlib.compress(rows)) + ch(b"IEND", b"")


def exif(make, model, date):
    return exif_blob.tiff([(0x010F, exif_blob.ASCII, make + b"\0"),
                           (0x0110, exif_blob.ASCII, model + b"\0"),
                           (0x0112, exif_blob.SHORT, 1)],
                          exif=[(0x9003, exif_blob.ASCII, date + b"\0")])


def terminal_problems(out):
    """What in the bytes out could drive a terminal or is not well-formed UTF-8."""
    bad = []
    try:
        text = out.decode("utf-8")   # strict: overlongs, surrogates, > U+10FFFF all refused
    except UnicodeDecodeError as e:
        return [f"not UTF-8: {e}"]
    for i, c in enumerate(text):
        o = ord(c)
        if (o < 0x20 and c != "\n") or o == 0x7F or 0x80 <= o <= 0x9F:
            bad.append(f"U+{o:04X} at {i}: {text[max(0, i - 20):i + 20]!r}")
    return bad


def run(binary, args, cwd):
    p = subprocess.run([binary] + args, cwd=cwd, capture_output=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def main():
    binary, tmp, assets = cc.setup("robust_info_text")
    C = cc.Checker("robust_info_text")
    bin_dir = os.fsencode(tmp)

    # files: hostile EXIF and ICC under a plain name, and plain images under hostile names
    hostile = b"hostile.png"
    cc.write(os.path.join(bin_dir, hostile),
             png_with(exif(MAKE, MODEL, DATE), cc.icc_profile("sRGB\x1b]2;icc\x07 \u00e9")))
    valid = b"valid.png"
    cc.write(os.path.join(bin_dir, valid), png_with(exif(VALID, b"EOS", b"2024:01:02 03:04:05")))
    plain = png_with()
    names = [b"bad\xf8\x80\x80.png", b"sur\xed\xa0\x80.png", b"big\xf4\x90\x80\x80.png",
             b"ovl\xc0\xaf.png", b"esc\x1b[31m\x07.png", b"c1\xc2\x9b.png", b"raw\x9b.png",
             b"quote\"back\\slash.png", b"tab\tline.png", "ok_\u00e9\u65e5.png".encode()]
    for n in names:
        cc.write(os.path.join(bin_dir, n), plain)
    everything = [hostile, valid] + names

    # 1. info, text: nothing raw reaches the terminal, for each file alone and all together
    for n in everything:
        rc, out, err = run(binary, [b"info", n], bin_dir)
        C.check(rc == 0, f"info {n!r}: exit 0", err)
        probs = terminal_problems(out)
        C.check(not probs, f"info {n!r}: no terminal control, well-formed UTF-8 on stdout",
                f"{probs[:5]}\n{out!r}")
    rc, out, err = run(binary, [b"info", hostile], bin_dir)
    text = out.decode("utf-8", "replace")
    cam = [ln for ln in text.splitlines() if ln.startswith("camera:")]
    # the escaped forms, written from error.h's rule (\xNN for each byte to escape)
    C.check(len(cam) == 1 and "\\x1b]0;pwned\\x07\\x1b[31mRED\\x1b[0m\\xc2\\x9b31m\\x9b\\x07" in cam[0],
            "info: Model escaped as \\xNN (ESC, BEL, C2 9B, 9B)", cam)
    C.check(len(cam) == 1 and "Cam\\xf8\\x80\\x80 \\xed\\xa0\\x80\\xf4\\x90\\x80\\x80\\xc0\\xaf\\xff" in cam[0],
            "info: Make's bytes that are not UTF-8 escaped as \\xNN", cam)
    C.check("date:        2024:\\x1b[2J01:02 03:04:05" in text, "info: the date escaped", text)
    rc, out, err = run(binary, [b"info", valid], bin_dir)
    C.check(("camera:      " + VALID.decode() + " EOS") in out.decode("utf-8", "replace"),
            "info: well-formed UTF-8 in Make printed as it is", out)
    rc, out, err = run(binary, [b"info"] + everything, bin_dir)
    C.check(rc == 0 and not terminal_problems(out), "info on every file at once: clean", err)

    # 2. info --json: valid JSON on every line, well-formed UTF-8, nothing raw, round trips
    rc, out, err = run(binary, [b"info", b"--json"] + everything, bin_dir)
    C.check(rc == 0, "info --json: exit 0", err)
    C.check(not terminal_problems(out), "info --json: well-formed UTF-8, no raw control byte",
            terminal_problems(out)[:5])
    lines = out.split(b"\n")
    C.check(lines[-1] == b"" and len(lines) - 1 == len(everything),
            "info --json: one line per file", len(lines))
    objs = []
    for n, ln in zip(everything, lines):
        try:
            objs.append(json.loads(ln))   # bytes: decoded as strict UTF-8 first
        except ValueError as e:
            C.check(False, f"info --json {n!r}: json.loads takes the line", f"{e}: {ln!r}")
            objs.append(None)
    for n, o in zip(everything, objs):
        if o is None:
            continue
        C.check(os.fsencode(o.get("path", "")) == n,
                f"info --json {n!r}: the path comes back byte for byte (os.fsencode)",
                repr(o.get("path")))
    h = objs[0]
    if h is not None:
        C.check(h.get("camera", "").encode("utf-8", "surrogateescape") == MAKE + b" " + MODEL,
                "info --json: camera is Make + ' ' + Model, byte for byte", repr(h.get("camera")))
        C.check(h.get("date", "").encode("utf-8", "surrogateescape") == DATE,
                "info --json: the date byte for byte", repr(h.get("date")))
        C.check(isinstance(h.get("icc"), dict) and "\x1b" not in json.dumps(h["icc"]) and
                "\u00e9" not in h["icc"].get("description", ""),
                "info --json: the ICC description as the reader gives it (ASCII)", h.get("icc"))
    v = objs[1]
    if v is not None:
        C.check(v.get("camera") == VALID.decode() + " EOS", "info --json: UTF-8 Make as it is",
                repr(v.get("camera")))
    # the escapes chosen: \udcXX for bytes that are not UTF-8, \u00XX for C0/C1 controls
    C.check(b'"bad\\udcf8\\udc80\\udc80.png"' in out and b'"sur\\udced\\udca0\\udc80.png"' in out
            and b'"big\\udcf4\\udc90\\udc80\\udc80.png"' in out,
            "info --json: each byte that is not UTF-8 as \\udcXX", out[:400])
    C.check(b'"c1\\u009b.png"' in out and b'"esc\\u001b[31m\\u0007.png"' in out
            and b'"raw\\udc9b.png"' in out and b'"quote\\"back\\\\slash.png"' in out,
            "info --json: C1 and C0 controls as \\u00XX, a raw 9B byte as \\udc9b, quotes escaped",
            out[:400])
    # a file that fails: its object still valid JSON, its path still exact
    gone = b"gone\xf8\xed\xa0\x80.png"
    rc, out, err = run(binary, [b"info", b"--json", gone], bin_dir)
    try:
        o = json.loads(out)
        ok = os.fsencode(o["path"]) == gone and "error" in o
    except (ValueError, KeyError) as e:
        ok, o = False, f"{e}: {out!r}"
    C.check(rc == 1 and ok, "info --json on a missing file: a valid object with its exact path",
            repr(o))

    cc.cleanup(tmp, C.failures > 0)
    return C.end()


if __name__ == "__main__":
    sys.exit(main())
