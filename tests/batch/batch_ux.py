"""batch_ux.py — three rough edges of `imgpu batch` a new user hit (issue 30), on the CPU:

  - `-o a/b/c` where a/b is missing: the help says the folder is created when missing, so its
    parents are too (it failed: "No such file or directory");
  - `--name '{stem}_x.{ext}' --format png` over coffee.bmp, coffee.ppm and coffee.webp
    collides; `{inext}`, the input's extension, keeps the outputs apart, and the collision's
    message says so; an unknown placeholder is still a usage error naming the three;
  - a folder of stale outputs (made with other settings) prints one line for them all, not one
    per file; `--verbose` names each, as before;
  - a mistyped option gets the nearest one: '--equalise' (did you mean '--equalize'?).

usage: batch_ux.py IMGPU_BINARY TMP_ROOT ASSETS_DIR
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import cli_common as cc  # noqa: E402

binary, tmp, assets = cc.setup("batch_ux")
C = cc.Checker("batch_ux")
ENV = dict(os.environ, IMGPU_DEVICE="cpu")


def imgpu(*args):
    return cc.run(binary, [str(a) for a in args], env=ENV, timeout=120)


def main():
    coffee = os.path.join(assets, "coffee.png")

    # 1. -o with missing parents
    out = os.path.join(tmp, "a", "b", "c")
    r = imgpu("batch", "--equalize", "-o", out, coffee)
    C.check(r.rc == 0 and os.path.isfile(os.path.join(out, "coffee.png")),
            "-o a/b/c with a/b missing: the folders are made, the output written", str(r))
    blocker = os.path.join(tmp, "file")
    cc.write(blocker, b"not a folder")
    r = imgpu("batch", "--equalize", "-o", os.path.join(blocker, "x", "y"), coffee)
    C.check(r.rc == 1 and "cannot create output folder" in r.err and blocker in r.err,
            "-o under a file: exit 1, naming the folder", str(r))
    r = imgpu("batch", "--equalize", "-o", os.path.join(tmp, "dry", "run"), coffee, "--dry-run")
    C.check(r.rc == 0 and not os.path.exists(os.path.join(tmp, "dry")), "--dry-run makes no folder", str(r))

    # 2. {inext}
    src = os.path.join(tmp, "in")
    os.makedirs(src)
    for ext in ("bmp", "ppm", "webp"):
        r = imgpu("equalize", coffee, os.path.join(src, f"coffee.{ext}"), "--quiet")
        C.check(r.rc == 0, f"make coffee.{ext}", str(r))
    o1 = os.path.join(tmp, "o1")
    r = imgpu("batch", "--equalize", "-o", o1, "--format", "png", "--name", "{stem}_x.{ext}", src)
    C.check(r.rc == 1 and r.err.count("its output is also the output of") == 2 and "{inext}" in r.err,
            "{stem}_x.{ext} over coffee.bmp/.ppm/.webp collides, and the message offers {inext}", str(r))
    o2 = os.path.join(tmp, "o2")
    r = imgpu("batch", "--equalize", "-o", o2, "--format", "png", "--name", "{stem}_{inext}_x.{ext}", src)
    C.check(r.rc == 0 and sorted(cc.listdir_outputs(o2)) == ["coffee_bmp_x.png", "coffee_ppm_x.png",
                                                             "coffee_webp_x.png"],
            "{inext} names each output after its input's extension", f"{r}\n{os.listdir(o2) if os.path.isdir(o2) else ''}")
    r = imgpu("batch", "--equalize", "-o", o2, "--name", "{stem}.{bad}", src)
    C.check(r.rc == 2 and "{inext}" in r.err, "an unknown placeholder: usage error naming {stem}, {ext}, {inext}",
            str(r))
    r = imgpu("batch", "--help")
    C.check("{inext}" in r.out, "batch --help documents {inext}", r.out[:200])

    # 3. stale outputs: one line; --verbose names each
    r = imgpu("batch", "--clahe", "-o", o2, "--format", "png", "--name", "{stem}_{inext}_x.{ext}", src)
    lines = [l for l in r.err.splitlines() if l.startswith("imgpu: ")]
    C.check(r.rc == 1 and "3 stale" in r.err and len(lines) == 1 and "3 outputs in" in lines[0]
            and "--verbose" in lines[0] and "other settings" in lines[0],
            "3 stale outputs: one line sums them up (and says --verbose names them)", r.err)
    r = imgpu("batch", "--clahe", "-o", o2, "--format", "png", "--name", "{stem}_{inext}_x.{ext}", src, "--verbose")
    lines = [l for l in r.err.splitlines() if l.startswith("imgpu: '")]
    C.check(r.rc == 1 and len(lines) == 3 and all("was made with other settings" in l for l in lines),
            "--verbose: a line per stale output", r.err)
    # 4. a mistyped option gets the nearest one
    for typed, want in (("--equalise", "--equalize"), ("--overwirte", "--overwrite"), ("--verbse", "--verbose")):
        args = ["batch", "--equalize", "-o", os.path.join(tmp, "o4"), coffee, typed]
        if typed == "--equalise":
            args = ["batch", typed, "-o", os.path.join(tmp, "o4"), coffee]
        r = imgpu(*args)
        C.check(r.rc == 2 and f"(did you mean '{want}'?)" in r.err, f"batch {typed}: suggests {want}", str(r))
    r = imgpu("batch", "--equalize", "-o", os.path.join(tmp, "o4"), coffee, "--zzzzzz")
    C.check(r.rc == 2 and "did you mean" not in r.err, "batch --zzzzzz: no guess", str(r))
    cc.cleanup(tmp, C.failures)
    return C.end()


if __name__ == "__main__":
    sys.exit(main())
