"""cli_io_messages.py — issue 30's small things about files in and out, through the CLI:
  - `info` on several files prints a blank line only between the blocks it printed: a file
    that fails adds none (it printed one per failed file);
  - an ICC description padded with spaces by its writer ("A98 ICC Profile ") is shown
    trimmed: "ICC profile: A98 ICC Profile (N bytes)", never two spaces before the size;
  - an output that is a folder ('o/', or an existing folder 'o') is called a folder, not an
    output whose format cannot be told; nothing is written into it;
  - an output named .gif (or another format imgpu knows but cannot write) says that the format
    is not supported for writing, not that its format cannot be told.
"""
import os
import sys
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import cli_common as cc  # noqa: E402


def main():
    binary, tmp, _assets = cc.setup("cli_io_messages")
    ck = cc.Checker("cli_io_messages")
    check = ck.check
    try:
        good = os.path.join(tmp, "good.png")
        cc.write(good, cc.png_bytes(3, 2, 3, bytes(range(18))))
        bad = os.path.join(tmp, "bad.png")
        cc.write(bad, b"not an image at all")

        # ---- info: blank lines only between printed blocks ----
        r = cc.run(binary, ["info", bad, bad, good])
        check(r.rc == 1 and r.out.startswith("file:"),
              "info BAD BAD GOOD: the first line is GOOD's block, no blank line per failure", str(r))
        check(r.err.count("cannot read") == 2, "info BAD BAD GOOD: both failures reported", str(r))
        r = cc.run(binary, ["info", good, bad, good])
        check(r.rc == 1 and r.out.count("\n\n") == 1 and "\n\n\n" not in r.out
              and not r.out.endswith("\n\n"),
              "info GOOD BAD GOOD: one blank line, between the two blocks", str(r))
        r = cc.run(binary, ["info", good, bad])
        check(r.rc == 1 and not r.out.endswith("\n\n"), "info GOOD BAD: no trailing blank line",
              str(r))
        r = cc.run(binary, ["info", bad])
        check(r.rc == 1 and r.out == "", "info BAD: nothing on stdout", str(r))

        # ---- the ICC description, trimmed ----
        icc = cc.icc_profile("A98 ICC Profile ")
        png = cc.png_bytes(2, 2, 3, bytes(12))
        # the iCCP chunk right after IHDR (8 + 25 bytes)
        with_icc = png[:33] + cc._chunk(b"iCCP", b"A98\0\0" + zlib.compress(icc)) + png[33:]
        p = os.path.join(tmp, "a98.png")
        cc.write(p, with_icc)
        r = cc.run(binary, ["info", p])
        line = [ln for ln in r.out.splitlines() if ln.startswith("ICC profile:")]
        check(r.rc == 0 and line == [f"ICC profile: A98 ICC Profile ({len(icc)} bytes)"],
              "info: the padded ICC description is shown trimmed, one space before the size",
              str(r))
        r = cc.run(binary, ["info", "--json", p])
        check(r.rc == 0 and '"description": "A98 ICC Profile"' in r.out,
              "info --json: the ICC description trimmed", str(r))

        # ---- an output that is a folder ----
        folder = os.path.join(tmp, "o")
        os.mkdir(folder)
        for out in (folder + "/", folder, os.path.join(tmp, "missing") + "/"):
            r = cc.run(binary, ["equalize", good, out])
            check(r.rc == 2 and f"output '{out}' is a folder" in r.err
                  and "cannot tell" not in r.err,
                  f"equalize GOOD {os.path.basename(out.rstrip('/'))}{'/' if out.endswith('/') else ''}: "
                  "called a folder (usage error)", str(r))
        check(os.listdir(folder) == [], "nothing written into the folder", str(os.listdir(folder)))
        check(not os.path.exists(os.path.join(tmp, "missing")), "no folder made for 'missing/'")

        # ---- an output in a format imgpu knows but cannot write ----
        for ext, name in (("gif", "GIF"), ("GIF", "GIF"), ("psd", "PSD"), ("jxl", "JPEG XL")):
            out = os.path.join(tmp, "out." + ext)
            r = cc.run(binary, ["equalize", good, out])
            check(r.rc == 2 and f"{name} output is not supported" in r.err
                  and "cannot tell" not in r.err and not os.path.exists(out),
                  f"equalize GOOD out.{ext}: '{name} output is not supported'", str(r))
        # an extension nobody knows keeps the old message
        r = cc.run(binary, ["equalize", good, os.path.join(tmp, "out.xyz")])
        check(r.rc == 2 and "cannot tell the output format" in r.err,
              "equalize GOOD out.xyz: still 'cannot tell the output format'", str(r))
        # --format names what to write: out.gif with --format png is a PNG named .gif
        out = os.path.join(tmp, "forced.gif")
        r = cc.run(binary, ["equalize", good, out, "--format", "png"])
        check(r.rc == 0 and cc.read(out)[:4] == b"\x89PNG", "--format png writes out.gif as PNG",
              str(r))
    finally:
        rc = ck.end()
        cc.cleanup(tmp, rc != 0)
    return rc


if __name__ == "__main__":
    sys.exit(main())
