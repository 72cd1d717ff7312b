#!/usr/bin/python3
"""make_text_seeds.py — writes the seed corpora of the two text targets of issue 25:
    tests/fuzz/seeds/manifest/  inputs of fuzz_manifest: a switch byte, then an
        OUTDIR/.imgpu-batch file (batch_manifest.h's format, checksums computed here): records
        of the outputs the target asks about (a.png 10/20 and 11/20, "sub/b%.png" 0/0,
        "\\x01\\t" 5/-1, c.png 7/1700000000123456789) in each state (match, other settings,
        input changed, unknown "?"), later lines overriding earlier ones, escapes (%25, %09,
        %01), a torn last line, a bad checksum, empty lines, a line longer than the small line
        bound the switch byte sets, a second header, a line with a NUL, fields with spaces and
        signs, a tab inside the settings.
    tests/fuzz/seeds/utf8/      inputs of fuzz_utf8: RFC 3629's edges (U+007F/0080, U+07FF/0800,
        U+FFFF/10000, U+10FFFF, U+D7FF/E000), overlong forms, surrogates, F4 90 and F5..FF leads,
        truncated sequences, C0/C1 controls and terminal escapes (OSC, CSI, BEL, C2 9B), U+2028,
        quotes and backslashes, the file names of issue 25.
The outputs are committed; rerun after changing this script:
    /usr/bin/python3 tests/fuzz/make_text_seeds.py
Deterministic."""
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
HEADER = b"# imgpu batch manifest 1: what made each output (imgpu batch reads it; do not edit)\n"


def fnv1a(b):
    h = 1469598103934665603
    for c in b:
        h ^= c
        h = (h * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return h


def esc(b):
    return b"".join(b"%%%02x" % c if c < 0x20 or c == 0x7F or c == 0x25 else bytes([c]) for c in b)


def rec(rel, out_size, out_mtime, in_size, in_mtime, settings, raw_fields=None):
    """One line; raw_fields replaces the four numbers' text (for odd spellings)."""
    nums = raw_fields or [str(v).encode() for v in (out_size, out_mtime, in_size, in_mtime)]
    body = esc(rel) + b"\t" + b"\t".join(nums) + b"\t" + esc(settings)
    return b"R %016x\t" % fnv1a(body) + body + b"\n"


def switch(fix_sums, bound_step):
    """fuzz_manifest's byte 0: bit 0 fixes checksums, bits 1-7 set the bound 16 + 8 * step."""
    return bytes([(bound_step << 1) | (1 if fix_sums else 0)])


BIG = 127   # the largest bound the switch byte gives: 16 + 8 * 127 = 1032 bytes


def manifest_seeds():
    s = {}
    good = (HEADER + rec(b"a.png", 10, 20, 1, 2, b"S") + rec(b"a.png", 11, 20, 1, 3, b"S")
            + rec(b"sub/b%.png", 0, 0, 1, 2, b"equalize mode=luminance formula=opencv ; format=png")
            + rec(b"\x01\t", 5, -1, 1, 2, b"?")
            + rec(b"c.png", 7, 1700000000123456789, 1, 2, b"S"))
    s["states"] = switch(False, BIG) + good
    s["states_fixsums"] = switch(True, BIG) + good
    # later lines win, for one output and not another
    s["override"] = switch(False, BIG) + HEADER + rec(b"a.png", 10, 20, 1, 2, b"S") + \
        rec(b"a.png", 10, 20, 1, 2, b"clahe clip=2") + rec(b"a.png", 11, 20, 1, 2, b"X") + \
        rec(b"a.png", 11, 20, 1, 2, b"S")
    # a torn last line (no '\n'), then an append
    s["torn"] = switch(False, BIG) + HEADER + rec(b"a.png", 10, 20, 1, 2, b"S") + \
        rec(b"c.png", 7, 1700000000123456789, 1, 2, b"S")[:30]
    # a bad checksum, empty lines, a NUL in a line, a second header (two shards)
    bad = bytearray(rec(b"a.png", 10, 20, 1, 2, b"S"))
    bad[5] ^= 1
    s["damaged"] = switch(False, BIG) + HEADER + bytes(bad) + b"\n\n\n" + \
        rec(b"a.png", 11, 20, 1, 2, b"S").replace(b"a.png", b"a\0png") + HEADER + \
        rec(b"sub/b%.png", 0, 0, 9, 2, b"S")
    # lines longer than a small bound (16 + 8 * 4 = 48 bytes) between short ones, and at the end
    s["long_lines"] = switch(False, 4) + rec(b"a.png", 10, 20, 1, 2, b"S") + \
        rec(b"c.png", 7, 1700000000123456789, 1, 2, b"S" * 40) + b"x" * 200 + b"\n" + \
        rec(b"a.png", 11, 20, 1, 2, b"") + b"y" * 100
    # a line exactly at a bound of 48 and one byte over
    at = rec(b"a.png", 10, 20, 1, 2, b"S")
    pad = 48 - (len(at) - 1)
    s["at_bound"] = switch(False, 4) + rec(b"a.png", 10, 20, 1, 2, b"S" * (1 + pad)) + \
        rec(b"a.png", 10, 20, 1, 2, b"S" * (2 + pad))
    # numbers spelled oddly (strtoll's leading spaces and signs), a tab inside the settings
    s["fields"] = switch(False, BIG) + rec(b"a.png", 0, 0, 0, 0, b"S\tmore",
                                           raw_fields=[b"+10", b" 20", b"1", b"2"]) + \
        rec(b"a.png", 11, 20, 1, 2, b"S", raw_fields=[b"11", b"20", b"1x", b"2"]) + \
        rec(b"c.png", 7, 1700000000123456789, 1, 2, b"S", raw_fields=[b"7", b"1700000000123456789",
                                                                      b"-1", b"99999999999999999999"])
    # a malformed escape in the name
    s["escapes"] = switch(True, BIG) + b"R 0000000000000000\tsub/b%2.png\t0\t0\t1\t2\tS\n" + \
        b"R 0000000000000000\tsub/b%25.png\t0\t0\t1\t2\tS%0a\n" + \
        b"R 0000000000000000\t%01%09\t5\t-1\t1\t2\tS\n"
    s["empty"] = switch(False, BIG)
    return s


def utf8_seeds():
    s = {}
    s["edges"] = ("\x7f\u0080\u07ff\u0800\uffff\U00010000\U0010ffff\ud7ff\ue000"
                  "é日本😀").encode("utf-8")
    s["overlong"] = b"\xc0\x80\xc1\xbf\xe0\x80\x80\xe0\x9f\xbf\xf0\x80\x80\x80\xf0\x8f\xbf\xbf"
    s["surrogates"] = b"\xed\xa0\x80\xed\xbf\xbf\xed\xa0\xbd\xed\xb8\x80\xed\x9f\xbf"
    s["past_max"] = b"\xf4\x90\x80\x80\xf5\x80\x80\x80\xf8\x80\x80\x80\x80\xfc\x80\x80\x80\x80\x80\xfe\xff"
    s["truncated"] = b"\xc2\xe2\x82\xf0\x9f\x98" + b"a\xe2\x28\xa1\xc3\x28\xf0\x90\x28\xbc\x80\xbf"
    s["controls"] = b"\x1b]0;pwned\x07\x1b[31mRED\x1b[0m\xc2\x9b31m\x9b\x07\x00\x01\x1f\x7f\xc2\x80\xc2\x9f\xc2\xa0"
    s["json"] = "q\"b\\s/\u2028\u2029\t\n".encode()
    s["names"] = b"bad\xf8\x80\x80.png\0sur\xed\xa0\x80.png\0big\xf4\x90\x80\x80.png\0ok_\xc3\xa9.png"
    return s


def write(target, seeds):
    out = os.path.join(HERE, "seeds", target)
    if os.path.isdir(out):
        shutil.rmtree(out)
    os.makedirs(out)
    for name, data in sorted(seeds.items()):
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
    print(f"make_text_seeds: {len(seeds)} files -> {out}")


def main():
    write("manifest", manifest_seeds())
    write("utf8", utf8_seeds())


if __name__ == "__main__":
    main()
