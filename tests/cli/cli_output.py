"""cli_output.py — writing results: successful equalize/rotate runs (quiet on stdout, a
decodable output of the right size), outputs that cannot be written (a path under a regular
file, a missing directory: exit 1, the path in the message, nothing left behind), output ==
input (refused without --force, allowed with it), and the --device choices (cuda without a
GPU fails with the reason; cpu works; auto falls back with one notice that --quiet silences).

We run as root in CI, so a read-only directory does not stop a write; these checks use
paths that fail for everyone.

Usage: cli_output.py IMGPU_BINARY TMP_ROOT ASSETS_DIR
"""
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import cli_common as cc  # noqa: E402


def have_gpu():
    return os.path.exists("/dev/nvidiactl") or os.path.exists("/dev/nvidia0")


def image_size(binary, path):
    """(width, height, channels) via cv2 when available, else via `imgpu info`."""
    cv2 = cc.try_cv2()
    if cv2 is not None:
        im = cv2.imread(path, cv2.IMREAD_UNCHANGED)
        if im is None:
            return None
        return im.shape[1], im.shape[0], (im.shape[2] if im.ndim == 3 else 1)
    r = cc.run(binary, ["info", path])
    m = re.search(r"dimensions:\s*(\d+) x (\d+)", r.out)
    c = re.search(r"channels:\s*(\d+)", r.out)
    return (int(m.group(1)), int(m.group(2)), int(c.group(1))) if m and c else None


def main():
    binary, tmp, assets = cc.setup("cli_output")
    t = cc.Checker("cli_output")
    camera = os.path.join(assets, "camera.png")
    chelsea = os.path.join(assets, "chelsea.png")  # 451x300 RGB
    horse = os.path.join(assets, "horse.png")      # 400x328 RGBA

    # ---- successful runs ------------------------------------------------------------------
    cases = [
        (["equalize", camera, "eq.png", "--device", "cpu"], "eq.png", (512, 512, 1)),
        (["equalize", chelsea, "eq_pc.png", "--mode", "per-channel", "--device=cpu"], "eq_pc.png", (451, 300, 3)),
        (["equalize", horse, "eq_horse.png", "--device", "cpu"], "eq_horse.png", (400, 328, 4)),
        (["equalize", camera, "eq.jpg", "--quality", "60", "--device", "cpu"], "eq.jpg", (512, 512, None)),
        (["equalize", camera, "eq.bmp", "--device", "cpu"], "eq.bmp", (512, 512, None)),
        (["rotate", chelsea, "r90.png", "--angle", "90", "--device", "cpu"], "r90.png", (300, 451, 3)),
        (["rotate", "--angle=-90", chelsea, "r-90.png", "--filter", "nearest", "--device", "cpu"], "r-90.png", (300, 451, 3)),
        (["rotate", chelsea, "r30c.png", "--angle", "30", "--crop", "--device", "cpu"], "r30c.png", (451, 300, 3)),
        (["rotate", horse, "r45.png", "--angle", "45", "--background", "#ff000080", "--device", "cpu",
          "--png-level", "9"], "r45.png", (515, 515, 4)),
        (["rotate", camera, "r10.png", "--angle", "10", "--background", "white", "--filter", "bicubic",
          "--device", "cpu"], "r10.png", (594, 594, 1)),
    ]
    for args, out, (w, h, c) in cases:
        r = cc.run(binary, args, cwd=tmp)
        what = "imgpu " + " ".join(args)
        t.check(r.rc == 0, f"{what}: exit 0", str(r))
        t.check(r.out == "", f"{what}: nothing on stdout", str(r))
        size = image_size(binary, os.path.join(tmp, out))
        ok = size is not None and size[0] == w and size[1] == h and (c is None or size[2] == c)
        t.check(ok, f"{what}: output {out} is {w}x{h}x{c}", f"got {size}")

    # Rotating four times by 90 degrees through the CLI gives the input back.
    cur = camera
    for k in range(4):
        nxt = os.path.join(tmp, f"quarter{k}.png")
        cc.run(binary, ["rotate", cur, nxt, "--angle", "90", "--device", "cpu"])
        cur = nxt
    r = cc.run(binary, ["compare", camera, cur])
    t.check(r.rc == 0 and re.search(r"max abs difference:\s*0\b", r.out) is not None,
            "four 90-degree turns are the identity", str(r))

    # ---- unwritable outputs -------------------------------------------------------------------
    regular = os.path.join(tmp, "regular_file")
    cc.write(regular, b"I am a file, not a directory\n")
    bad_outputs = [
        ("path under a regular file", os.path.join(regular, "out.png")),
        ("missing directory", os.path.join(tmp, "no", "such", "dir", "out.png")),
    ]
    for label, out in bad_outputs:
        for args in (["equalize", camera, out, "--device", "cpu"],
                     ["rotate", camera, out, "--angle", "90", "--device", "cpu"],
                     ["histogram", camera, "--plot", out, "--device", "cpu"],
                     ["compare", camera, camera, "--diff", out]):
            before = cc.snapshot(tmp)
            r = cc.run(binary, args)
            what = f"{label}: imgpu {args[0]}"
            t.check(r.rc == 1, f"{what}: exit 1", str(r))
            t.check(r.err.startswith("imgpu: ") and out in r.err,
                    f"{what}: message names {out}", str(r))
            t.check(cc.snapshot(tmp) == before, f"{what}: nothing written", str(r))
    t.check(cc.read(regular) == b"I am a file, not a directory\n", "regular file untouched")

    # ---- output == input ----------------------------------------------------------------------
    same = os.path.join(tmp, "same.png")
    shutil.copyfile(camera, same)
    original = cc.read(same)
    r = cc.run(binary, ["equalize", "same.png", "./same.png", "--device", "cpu"], cwd=tmp)
    t.check(r.rc == 2 and "--force" in r.err, "equalize in==out without --force: exit 2", str(r))
    t.check(cc.read(same) == original, "in==out refused: input intact")
    r = cc.run(binary, ["equalize", "same.png", "same.png", "--device", "cpu", "--force"], cwd=tmp)
    t.check(r.rc == 0, "equalize in==out with --force: exit 0", str(r))
    t.check(cc.read(same) != original, "equalize in==out with --force: the file was replaced")
    t.check(image_size(binary, same) == (512, 512, 1), "in==out with --force: still a 512x512 image")
    r = cc.run(binary, ["rotate", same, same, "--angle", "90", "--force", "--device", "cpu"])
    t.check(r.rc == 0, "rotate in==out with --force: exit 0", str(r))
    leftovers = sorted(f for f in os.listdir(tmp) if f.startswith("same") and f != "same.png")
    t.check(not leftovers, "no temp files next to an overwritten input", str(leftovers))

    # ---- devices -------------------------------------------------------------------------------
    out = os.path.join(tmp, "dev.png")
    r = cc.run(binary, ["equalize", camera, out, "--device", "cuda"])
    if have_gpu():
        t.check(r.rc == 0, "--device cuda with a GPU: exit 0", str(r))
    else:
        t.check(r.rc == 1, "--device cuda without a GPU: exit 1", str(r))
        t.check(r.err.startswith("imgpu: ") and re.search(r"(?i)cuda|gpu|driver|device", r.err) is not None
                and len(r.err.strip()) > len("imgpu: cuda"),
                "--device cuda without a GPU: says why", str(r))
        t.check(not os.path.exists(out), "--device cuda without a GPU: no output", str(r))
        r = cc.run(binary, ["histogram", camera, "--device", "cuda"])
        t.check(r.rc == 1 and r.out == "", "histogram --device cuda without a GPU: exit 1, no report", str(r))
    r = cc.run(binary, ["equalize", camera, out, "--device", "cpu"])
    t.check(r.rc == 0 and r.err == "" and os.path.isfile(out), "--device cpu: exit 0, silent", str(r))
    os.unlink(out)
    r = cc.run(binary, ["equalize", camera, out])
    t.check(r.rc == 0 and os.path.isfile(out), "--device auto (default): exit 0", str(r))
    cuda_built = "CUDA support: yes" in cc.run(binary, ["--version"]).out
    if cuda_built and not have_gpu():
        # a 512x512 equalize is done on the CPU before CUDA could start: nothing to say
        t.check(r.err == "", "--device auto, small job without a GPU: silent (the CPU wins)", str(r))
        # a job big enough for the GPU (a 3000x3000 image rotated bicubic: ~17 Mpixels out)
        # says once that there is none, and runs on the CPU
        big = os.path.join(os.path.dirname(out), "big.png")
        cc.write(big, cc.png_bytes(3000, 3000, 1, bytes(3000 * 3000)))
        # (one CPU thread, so the job is the GPU's whatever the probe's progress: ~440 ms on one
        # core against at most ~320 ms for CUDA by auto's rule)
        r = cc.run(binary, ["rotate", big, out, "--angle", "30", "--filter", "bicubic", "--force",
                            "--png-level", "0"], timeout=120, env=dict(os.environ, IMGPU_CPU_THREADS="1"))
        lines = r.err.strip().splitlines()
        t.check(r.rc == 0 and len(lines) == 1 and lines[0].startswith("imgpu: ")
                and "GPU" in lines[0], "--device auto, big job without a GPU: one notice line", str(r))
        r = cc.run(binary, ["rotate", big, out, "--angle", "30", "--filter", "bicubic", "--force",
                            "--png-level", "0"], timeout=120, env=dict(os.environ, IMGPU_DEVICE="cpu"))
        t.check(r.rc == 0 and r.err == "", "IMGPU_DEVICE=cpu: nothing about GPUs", str(r))
        os.unlink(big)
        r = cc.run(binary, ["equalize", camera, out, "--quiet", "--force"])
        t.check(r.rc == 0 and r.err == "", "--device auto --quiet: no notice", str(r))
    elif not cuda_built:
        t.check(r.err == "", "--device auto in a CPU-only build: silent", str(r))

    # #16: output options the output format does not use are named, once, not dropped silently
    opt_out = os.path.join(tmp, "opts.png")
    r = cc.run(binary, ["equalize", camera, opt_out, "--quality", "80", "--compression", "lzw",
                        "--device", "cpu"])
    t.check(r.rc == 0 and r.err.count("imgpu: --quality, --compression do not apply to PNG output: ignored") == 1,
            "--quality and --compression on a PNG output: named once", str(r))
    r = cc.run(binary, ["equalize", camera, opt_out, "--quality", "80", "--device", "cpu", "--quiet", "--force"])
    t.check(r.rc == 0 and r.err == "", "... and silent with --quiet", str(r))
    r = cc.run(binary, ["equalize", camera, os.path.join(tmp, "opts.jpg"), "--quality", "80", "--subsampling",
                        "444", "--device", "cpu"])
    t.check(r.rc == 0 and "not apply" not in r.err, "JPEG options on a JPEG output: no notice", str(r))
    r = cc.run(binary, ["batch", "--equalize", "-o", os.path.join(tmp, "opts_batch"), camera, "--format", "png",
                        "--png-level", "3", "--lossless", "--device", "cpu"])
    t.check(r.rc == 0 and "imgpu: --lossless does not apply to PNG output: ignored" in r.err
            and "--png-level" not in r.err, "batch --format png --lossless: named", str(r))

    rc = t.end()
    cc.cleanup(tmp, rc != 0)
    return rc


if __name__ == "__main__":
    sys.exit(main())
