"""cli_messages.py — what the CLI prints about a file is safe to print and says the right thing.

  - a path of ~1500 bytes: the message still ends with the reason, fits the message cap
    (IMGPU_MESSAGE_MAX - 1 = 1023 bytes after "imgpu: ") and keeps both ends of the path;
  - file names with escape sequences, a newline, a raw 0x9b (CSI to many terminals) and a
    C1 control in UTF-8: every message and every listing (info, histogram, batch reports
    and dry run, usage errors) shows them as \\xNN and no raw control byte reaches the
    output; printable UTF-8 (café, 日本) is shown as it is;
  - a decoder's reason belongs to the file's format: a PNG with a bad deflate block does not
    say "no SOI" (JPEG's), a JPEG that fails in decode does not say "bad png sig";
  - a PNG chunk type with control bytes is named escaped.

Usage: cli_messages.py IMGPU_BINARY TMP_ROOT ASSETS_DIR
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import cli_common as cc  # noqa: E402

REGRESS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fuzz", "regress", "decode")
MESSAGE_MAX = 1023  # error.h: IMGPU_MESSAGE_MAX - 1

# What must not reach a terminal raw: C0 controls (a newline only ends a line), DEL, the C1
# controls U+0080..U+009F in UTF-8, and bytes that are not UTF-8 (checked by decoding).
RAW_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]")


def run(binary, args, cwd):
    """imgpu with byte-string arguments; (rc, stdout bytes, stderr bytes)."""
    try:
        p = subprocess.run([os.fsencode(binary)] + [os.fsencode(a) for a in args], cwd=cwd,
                           capture_output=True, timeout=cc.TIMEOUT)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return None, b"", b"(timed out)"


def clean(ck, what, data):
    """data is valid UTF-8 without raw control bytes other than line ends."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        return ck.check(False, f"{what}: output is not UTF-8 ({e})", repr(data[:400]))
    m = RAW_CONTROL.search(text)
    return ck.check(m is None, f"{what}: a raw control byte reaches the output",
                    repr(data[:400]) if m is None else f"{m.group()!r} in {data[:400]!r}")


def main():
    binary, tmp, assets = cc.setup("cli_messages")
    ck = cc.Checker("cli_messages")
    bad_png = cc.read(os.path.join(REGRESS, "stb-png-reserved-deflate-block-no-reason.png"))
    bad_jpg = cc.read(os.path.join(REGRESS, "stb-jpeg-scan-names-missing-component-no-reason.jpg"))
    chunk_png = cc.read(os.path.join(REGRESS, "png-critical-chunk-type-with-escape-bytes.png"))
    good_png = cc.png_bytes(4, 3, 1, bytes(range(0, 240, 20)))

    # ---- a long path: the reason survives, the path loses its middle --------------------
    deep = "/".join(f"d{i:02d}" + "x" * 96 for i in range(15))     # 1514 bytes
    os.makedirs(os.path.join(tmp, deep))
    cc.write(os.path.join(tmp, deep, "bad.png"), bad_png)
    for label, name, reason in (
            ("missing", deep + "/missing.png", "': No such file or directory"),
            ("corrupt", deep + "/bad.png", "': corrupt PNG data (")):
        # --decode: info reads headers only, and this file's fault is in its pixel data
        rc, out, err = run(binary, ["info", "--decode", name], tmp)
        text = err.decode("utf-8", "replace")
        lines = text.split("\n")
        ck.check(rc == 1 and len(lines) == 2 and lines[1] == "", f"long path, {label}: one "
                 "line, exit 1", f"rc={rc} {text[:200]!r}")
        msg = lines[0]
        ck.check(msg.startswith("imgpu: cannot read '" + deep[:300]),
                 f"long path, {label}: the path's beginning is kept", msg[:400])
        end = name[-150:] + reason
        ck.check(end in msg and msg.index(end) + len(end) > len(msg) - 40,
                 f"long path, {label}: the path's end and the reason are kept", msg[-300:])
        ck.check("..." in msg and len(msg.encode()) <= len("imgpu: ") + MESSAGE_MAX,
                 f"long path, {label}: shortened to the cap", f"{len(msg)} bytes")
    # the same through a write: the output's folder does not exist
    cc.write(os.path.join(tmp, "good.png"), good_png)
    rc, out, err = run(binary, ["equalize", "good.png", deep + "/none/out.png", "--device", "cpu"],
                       tmp)
    msg = err.decode("utf-8", "replace").rstrip("\n")
    ck.check(rc == 1 and msg.startswith("imgpu: cannot write '" + deep[:300])
             and "/none/out.png': " in msg[-120:] and len(msg.encode()) <= 7 + MESSAGE_MAX,
             "long output path: the reason is kept", f"rc={rc} {msg[-300:]!r}")

    # ---- file names with terminal escapes ------------------------------------------------
    hostile_bad = b"e\x1b[31mred\nx\x9b.png"           # corrupt PNG data
    hostile_ok = b"ok\x1b]0;title\x07\xc2\x9b.png"     # a good PNG; OSC, BEL, C1 CSI
    utf8_ok = "café-日本.png".encode()
    shown_bad = b"e\\x1b[31mred\\x0ax\\x9b.png"
    shown_ok = b"ok\\x1b]0;title\\x07\\xc2\\x9b.png"
    names = os.path.join(tmp, "names")
    os.makedirs(names)
    for n, data in ((hostile_bad, bad_png), (hostile_ok, good_png), (utf8_ok, good_png)):
        cc.write(os.path.join(os.fsencode(names), n), data)

    rc, out, err = run(binary, ["info", "--decode", hostile_bad], names)
    ck.check(rc == 1 and err.startswith(b"imgpu: cannot read '" + shown_bad + b"': corrupt PNG data")
             and err.count(b"\n") == 1, "failed load of a hostile name: escaped, one line", repr(err))
    clean(ck, "failed load of a hostile name", err)

    rc, out, err = run(binary, ["info", hostile_ok], names)
    ck.check(rc == 0 and out.startswith(b"file:        " + shown_ok + b"\n"),
             "info of a hostile name: escaped", repr(out[:200]))
    clean(ck, "info of a hostile name", out + err)

    rc, out, err = run(binary, ["info", utf8_ok], names)
    ck.check(rc == 0 and out.startswith(b"file:        " + utf8_ok + b"\n"),
             "info of a UTF-8 name: shown as it is", repr(out[:200]))

    rc, out, err = run(binary, ["histogram", hostile_ok], names)
    ck.check(rc == 0 and out.startswith(shown_ok + b": 4x3 "), "histogram of a hostile name: "
             "escaped", repr(out[:200]))
    clean(ck, "histogram of a hostile name", out + err)

    rc, out, err = run(binary, ["equalize", hostile_ok, "out.png", "--mode", "\x1b[2J"], names)
    ck.check(rc == 2 and b"'\\x1b[2J'" in err, "usage error quoting a hostile argument: escaped",
             repr(err))
    clean(ck, "usage error", out + err)

    rc, out, err = run(binary, ["batch", "--equalize", "-o", "outdir", hostile_bad, hostile_ok], names)
    ck.check(rc == 1 and b"imgpu: failed '" + shown_bad + b"': cannot read '" + shown_bad + b"'" in err,
             "batch report of a hostile name: escaped", repr(err))
    clean(ck, "batch", out + err)

    rc, out, err = run(binary, ["batch", "--dry-run", "--equalize", "-o", "dry", hostile_ok], names)
    ck.check(rc == 0 and out == shown_ok + b" -> dry/" + shown_ok + b"\n",
             "batch dry run of a hostile name: escaped", repr(out))
    clean(ck, "batch dry run", out + err)

    # ---- the reason belongs to the file's format ----------------------------------------
    for label, name, data, fmt, foreign in (
            ("PNG with a reserved deflate block", "deflate.png", bad_png, "PNG",
             ("SOI", "JPEG", "BMP")),
            ("JPEG whose scan names a missing component", "scan.jpg", bad_jpg, "JPEG",
             ("png", "PNG", "BMP"))):
        cc.write(os.path.join(tmp, name), data)
        for cmd in (["info", "--decode", name], ["equalize", name, "o_" + name]):
            rc, out, err = run(binary, cmd, tmp)
            text = err.decode("utf-8", "replace")
            ck.check(rc == 1 and text.startswith(f"imgpu: cannot read '{name}': corrupt {fmt} data")
                     and not any(f in text for f in foreign),
                     f"{label} ({cmd[0]}): a {fmt} reason, no other format's", text)

    # ---- bytes from the file: a PNG chunk type -------------------------------------------
    cc.write(os.path.join(tmp, "chunk.png"), chunk_png)
    rc, out, err = run(binary, ["info", "chunk.png"], tmp)
    ck.check(rc == 1 and err == b"imgpu: cannot read 'chunk.png': unsupported PNG chunk "
             b"'A\\x1b\\x9b1'\n", "chunk type with control bytes: escaped", repr(err))
    clean(ck, "chunk type", err)

    rc = ck.end()
    cc.cleanup(tmp, rc != 0)
    return rc


if __name__ == "__main__":
    sys.exit(main())
