"""viewer_test.py — tests of imgpu-view (`imgpu view`), run by tests/viewer/viewer.cmake.

usage: viewer_test.py IMGPU IMGPU_VIEW TMP_ROOT ASSETS KIND
KIND:
  snapshot-glfw   snapshots through a hidden GLFW window (an X server: $DISPLAY, else this script
                  re-runs itself under `xvfb-run -a`; Mesa in CI: the glTexSubImage2D upload path)
  snapshot-egl    the same through EGL (no X server; NVIDIA's device platform on a GPU machine,
                  where the display path is CUDA-GL interop)
  interop-egl     (GPU) EGL with --device cuda: the display path must be CUDA-GL interop (a
                  subset of the cases, INTEROP_SUBSET: where the default device shows through
                  interop, snapshot-egl and snapshot-glfw assert it for every case), then events
  interop-window  (GPU) a GLFW window under X with __GLX_VENDOR_LIBRARY_NAME=nvidia: interop,
                  snapshots and the scripted interaction in a real window
  events          the scripted interaction (--events): settings from keys and mouse drags, the
                  printed command line run as a shell command, S saves; headless, then in a
                  window when an X server (or xvfb-run) is there
  usage           option errors (exit 2), missing files (exit 1), `imgpu view --help`
Every snapshot without --size is compared with the CLI's output for the same settings with
`imgpu compare --max-abs 0`'s rule: pixel for pixel (in Python with cv2 + numpy where this python3
has them, else by `imgpu compare`). The CLI's references run on the CPU (--device cpu: the
reference backend, and no CUDA start-up per reference on a GPU machine), each (input, steps)
once, cached under TMP_ROOT for the other viewer tests of the same imgpu binary. Exit 77 (skipped) where the needed display or GPU
is missing; /usr/bin/python3 only (no modules beyond the standard library).
"""
import hashlib
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import cli_common as cc  # noqa: E402

NO_GPU = ("no NVIDIA GPU or driver was found", "no NVIDIA driver is loaded", "no CUDA-capable device",
          "built without CUDA", "older than this imgpu's runtime")
TIMEOUT = 120


def run(args, env=None, cwd=None):
    try:
        p = subprocess.run(args, capture_output=True, timeout=TIMEOUT, env=env, cwd=cwd)
        return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        return None, "", "timed out"


def ensure_display():
    """Re-run this script under xvfb-run when there is no X server; 77 when neither."""
    if os.environ.get("DISPLAY"):
        return
    xvfb = shutil.which("xvfb-run")
    if not xvfb or os.environ.get("IMGPU_VIEWER_TEST_XVFB"):
        print("SKIP: no X server ($DISPLAY unset) and no xvfb-run")
        sys.exit(77)
    env = dict(os.environ, IMGPU_VIEWER_TEST_XVFB="1")
    p = subprocess.run([xvfb, "-a", "-s", "-screen 0 1280x1024x24", sys.executable] + sys.argv, env=env)
    sys.exit(p.returncode)


def lcg_bytes(n, seed):
    out = bytearray(n)
    x = seed
    for i in range(n):
        x = (x * 1103515245 + 12345) & 0x7FFFFFFF
        out[i] = (x >> 16) & 0xFF
    return bytes(out)


def make_inputs(tmp, assets):
    """Every channel layout, odd sizes; plus two assets (gray and RGB photos)."""
    files = []
    for c, (w, h) in ((1, (37, 23)), (2, (61, 47)), (3, (50, 31)), (4, (53, 40))):
        px = bytearray(lcg_bytes(w * h * c, 7 + c))
        for y in range(h):  # a gradient under the noise, so equalization has work to do
            for x in range(w):
                for k in range(c):
                    i = (y * w + x) * c + k
                    px[i] = (px[i] // 4 + (x * 255 // w) * 3 // 4) & 0xFF
                if c in (2, 4):
                    px[(y * w + x) * c + c - 1] = (y * 255) // (h - 1)  # alpha ramp
        p = os.path.join(tmp, f"in{c}.png")
        cc.write(p, cc.png_bytes(w, h, c, bytes(px)))
        files.append(p)
    files += [os.path.join(assets, "camera.png"), os.path.join(assets, "coffee.png")]
    return files


# (viewer options, CLI steps: lists of args after IN OUT; several steps chain through OUT)
CASES = [
    ([], [["rotate", "--angle", "0"]]),
    (["--equalize"], [["equalize", "--mode", "luminance"]]),
    (["--equalize", "--mode", "per-channel"], [["equalize", "--mode", "per-channel"]]),
    (["--rotate", "30"], [["rotate", "--angle", "30"]]),
    (["--rotate", "90"], [["rotate", "--angle", "90"]]),
    (["--rotate", "-12.5", "--filter", "bicubic", "--crop"],
     [["rotate", "--angle", "-12.5", "--filter", "bicubic", "--crop"]]),
    (["--rotate", "45", "--filter", "nearest"], [["rotate", "--angle", "45", "--filter", "nearest"]]),
    (["--equalize", "--rotate", "17.5"], [["equalize"], ["rotate", "--angle", "17.5", "--force"]]),
    # CLAHE (from index 7 on, the assets run these too: gray camera, RGB coffee)
    (["--clahe"], [["clahe", "--clip", "40", "--tiles", "8x8", "--mode", "luminance"]]),
    (["--clahe", "--clip", "2.5", "--tiles", "5x3", "--mode", "per-channel"],
     [["clahe", "--clip", "2.5", "--tiles", "5x3", "--mode", "per-channel"]]),
    (["--clahe", "--clip", "0", "--tiles", "1x1"], [["clahe", "--clip", "0", "--tiles", "1x1"]]),
    (["--clahe", "--clip=3", "--rotate", "30"], [["clahe", "--clip", "3"], ["rotate", "--angle", "30", "--force"]]),
    # --clockwise (issue 30): ImageMagick's and vips' sense, the CLI's --angle -30
    (["--rotate", "30", "--clockwise"], [["rotate", "--angle", "-30"]]),
    # op-norm (issue 28): normalize's --mode is the viewer's one mode; autolevel's own
    # linked|per-channel is not a viewer option, the one mode reaches it (luminance = linked)
    (["--normalize", "--black-clip", "1", "--white-clip", "0.5", "--mode", "per-channel"],
     [["normalize", "--black-clip", "1", "--white-clip", "0.5", "--mode", "per-channel"]]),
    (["--autolevel", "--mode", "per-channel"], [["autolevel", "--mode", "per-channel"]]),
]


REF_CACHE = None  # set by main(): a folder of CLI references shared by the viewer tests


def ref_cache_dir(imgpu, tmp_root):
    """The reference cache of this imgpu binary (its size and mtime name the folder, so a rebuilt
    imgpu never reuses an old binary's references; other binaries' folders are removed)."""
    st = os.stat(imgpu)
    name = f"ref_cache.{st.st_size}_{st.st_mtime_ns}"
    for old in os.listdir(tmp_root):
        if old.startswith("ref_cache.") and old != name:
            shutil.rmtree(os.path.join(tmp_root, old), ignore_errors=True)
    d = os.path.join(tmp_root, name)
    os.makedirs(d, exist_ok=True)
    return d


def cli_output(ck, imgpu, inp, steps, out, device="cpu"):
    """The CLI's result of STEPS on INP, in OUT, computed on DEVICE: the backend the viewer's
    display path ran the ops on (its --stats line), so the check is the display path itself.
    The CPU is the reference; CUDA equals it bit for bit except 8-bit bilinear and bicubic
    rotation, which the texture unit filters (docs/gpu.md: within 1 level; test_gpu_ops checks
    that bound), so a CUDA viewer is compared with the CUDA CLI. Taken from REF_CACHE when
    another case or viewer test already computed it."""
    key = None
    if REF_CACHE:
        h = hashlib.sha256(repr((steps, device)).encode())
        h.update(cc.read(inp))
        key = os.path.join(REF_CACHE, h.hexdigest() + os.path.splitext(out)[1])
        if os.path.isfile(key):
            shutil.copyfile(key, out)
            return True
    src = inp
    for s in steps:
        rc, o, e = run([imgpu, s[0], src, out] + s[1:] + ["--device", device, "--quiet"])
        if not ck.check(rc == 0, f"CLI {s} on {inp}", e):
            return False
        src = out
    if key:
        part = f"{key}.{os.getpid()}.part"  # viewer tests run in parallel: publish atomically
        shutil.copyfile(out, part)
        os.replace(part, key)
    return True


def png_layout(path):
    """(bit depth, color type) from a PNG's IHDR, None for anything else."""
    try:
        with open(path, "rb") as f:
            head = f.read(29)
    except OSError:
        return None
    if len(head) < 29 or head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        return None
    return head[24], head[25]


def equal_images(imgpu, a, b):
    """`imgpu compare A B --max-abs 0` (same size, same channels, every sample equal, 8-bit
    samples scaled by 257 against 16-bit ones): in Python with cv2 + numpy when this python3
    has them and both files are PNGs of one color type (cv2 would turn gray+alpha into BGRA
    and hide a layout difference), else one `imgpu compare` process. Returns (equal, detail)."""
    cv2 = cc.try_cv2()
    la, lb = png_layout(a), png_layout(b)
    if cv2 is not None and la and lb and la[1] == lb[1]:
        import numpy as np
        pa, pb = cv2.imread(a, cv2.IMREAD_UNCHANGED), cv2.imread(b, cv2.IMREAD_UNCHANGED)
        if pa is not None and pb is not None:
            if pa.shape != pb.shape:
                return False, f"{a} is {pa.shape}, {b} is {pb.shape}"
            va, vb = pa.astype(np.int64), pb.astype(np.int64)
            if pa.dtype != pb.dtype:  # 8 vs 16 bits: compare in 16-bit levels, as imgpu compare
                va, vb = (va * 257 if pa.dtype == np.uint8 else va), (vb * 257 if pb.dtype == np.uint8 else vb)
            d = np.abs(va - vb)
            return bool(d.max() == 0), f"cv2: {int(np.count_nonzero(d))} samples differ, max |diff| {int(d.max())}"
    rc, o, e = run([imgpu, "compare", a, b, "--max-abs", "0"])
    return rc == 0, o + e


def same(ck, imgpu, a, b, what):
    ok, detail = equal_images(imgpu, a, b)
    return ck.check(ok, f"{what}: snapshot equals the CLI's output pixel for pixel", detail)


def gpu_or_skip(view, inp, tmp, extra, env=None):
    rc, o, e = run([view, inp, "--snapshot", os.path.join(tmp, "probe.png"), "--device", "cuda", "--stats"] + extra,
                   env=env)
    if rc != 0 and any(r in e for r in NO_GPU):
        print("SKIP: no usable GPU: " + e.strip())
        sys.exit(77)
    return rc, o, e


def interop_probe(view, tmp, assets, ctx, env=None):
    """'CUDA-GL interop' when imgpu-view with the default device shows through interop in this
    context (a GPU machine with NVIDIA's GL), else None."""
    rc, o, e = run([view, os.path.join(assets, "camera.png"), "--snapshot", os.path.join(tmp, "probe.png"),
                    "--context", ctx, "--stats"], env=env)
    return "CUDA-GL interop" if rc == 0 and "display: CUDA-GL interop" in o else None


# The interop-* kinds run these few cases (RGB synthetic + a photo; equalize, CLAHE, a rotation):
# on the GPU machine the snapshot-* kinds already run every case through CUDA-GL interop and
# assert it (interop_probe), so repeating all 58 there only doubled the GPU suite's viewer time.
INTEROP_SUBSET = (1, 3, 8)


def snapshots(ck, imgpu, view, tmp, assets, ctx, device_args, env=None, want_path=None, subset=None):
    inputs = make_inputs(tmp, assets)
    if subset:
        inputs = [p for p in inputs if os.path.basename(p) in ("in3.png", "coffee.png")]
    for inp in inputs:
        cases = CASES if os.path.dirname(inp) == tmp else CASES[1:2] + CASES[7:]  # assets: a few
        if subset:
            cases = [CASES[i] for i in subset]
        for k, (vopts, steps) in enumerate(cases):
            snap = os.path.join(tmp, f"snap_{k}_{os.path.basename(inp)}")
            ref = os.path.join(tmp, f"ref_{k}_{os.path.basename(inp)}")
            args = [view, inp, "--snapshot", snap, "--context", ctx, "--stats"] + device_args + vopts
            rc, o, e = run(args, env=env)
            what = f"{os.path.basename(inp)} {' '.join(vopts) or '(no ops)'} [{ctx}]"
            if not ck.check(rc == 0, f"{what}: imgpu-view exits 0", f"{' '.join(args)}\n{o}{e}"):
                continue
            if want_path:
                ck.check(f"display: {want_path}" in o, f"{what}: display path is {want_path}", o + e)
            # the ops ran on CUDA for the interop and CUDA-upload paths, on the CPU otherwise
            dev = "cuda" if re.search(r"^display: CUDA", o, re.M) else "cpu"
            if cli_output(ck, imgpu, inp, steps, ref, dev):
                same(ck, imgpu, snap, ref, what + ("" if dev == "cpu" else " (ops on CUDA)"))
    # a view snapshot: the size asked for, and it is not the raw image
    snap = os.path.join(tmp, "view.png")
    rc, o, e = run([view, inputs[-1], "--snapshot", snap, "--size", "320x200", "--context", ctx, "--histogram",
                    "--equalize", "--rotate", "20"] + device_args, env=env)
    if ck.check(rc == 0, f"--size snapshot [{ctx}]", o + e):
        rc, o, e = run([imgpu, "info", snap])
        ck.check("320 x 200" in o, "--size 320x200 gives a 320x200 image", o + e)


def view_glfw_vs_egl(ck, imgpu, view, tmp, assets):
    """#18 item 1: a --size snapshot through the hidden GLFW window is the view of a WxH window
    (it drew into the hidden window's 64x64 instead: a thumbnail in the corner); the same view
    through EGL is the reference, pixel for pixel (both Mesa here)."""
    coffee = os.path.join(assets, "coffee.png")
    for size, extra in (("1280x800", ["--histogram"]), ("320x200", ["--equalize", "--rotate", "20"]),
                        ("200x333", ["--clahe"])):
        outs = {}
        for ctx in ("glfw", "egl"):
            outs[ctx] = os.path.join(tmp, f"view_{ctx}_{size}.png")
            rc, o, e = run([view, coffee, "--snapshot", outs[ctx], "--size", size, "--context", ctx] + extra)
            ck.check(rc == 0, f"--size {size} {' '.join(extra)} [{ctx}] exits 0", o + e)
        ok, detail = equal_images(imgpu, outs["glfw"], outs["egl"])
        ck.check(ok, f"--size {size} {' '.join(extra)}: the GLFW view equals the EGL view pixel for pixel", detail)


EVENTS = """# the scripted interaction: settings from keys and a right-button drag
resize 960 720
key e
key m
key left
key left
key left
key shift+right
key 0
key f
key x
# fit view, image centred at (480, 360): a quarter turn counterclockwise about it
drag right 580 360 480 260
# view only: none of this may change the processed image
scroll 2 100 100
drag left 300 300 350 320
key v
key space
key h
key ?
key ctrl+c
key s
key s
"""
EXPECT_OPS = "imgpu equalize {i} {o} --mode per-channel && imgpu rotate {o} {o} --angle -177.1 --filter bicubic " \
             "--crop --force"

# CLAHE: C on (E then C: the two exclude each other), M, clip 40 +1 +10 +10 -1 -10 = 50, tiles
# 8 +1 +1 +1 -1 = 10 (Shift changes nothing there), a quarter turn; Space, V and H change the view only
EVENTS_CLAHE = """resize 960 720
key e
key c
key m
key ]
key shift+]
key shift+period
key shift+]
key [
key shift+[
key .
key .
key ,
key 0
key space
key v
key h
key ctrl+c
key s
key s
"""
EXPECT_CLAHE = "imgpu clahe {i} {o} --clip 50 --tiles 10x10 --mode per-channel && imgpu rotate {o} {o} --angle 90 " \
               "--filter bilinear --expand --force"

# the limits: clip stops at 0, tiles at 1x1 and 64x64; C off and on keeps them; E then C again
EVENTS_CLAHE_LIMITS = """key c
key shift+[
key shift+[
key shift+[
key shift+[
key shift+[
key [
""" + "key ,\n" * 10 + """key c
key ]
key c
key e
key c
key ctrl+c
key s
key s
"""
EXPECT_CLAHE_LIMITS = "imgpu clahe {i} {o} --clip 0 --tiles 1x1 --mode luminance"
# op-norm (issue 28): Z normalize on, its black clip 0.15 + 2 x 0.05 and +1 (Shift), the white
# clip 0.05 + 0.05, M per channel; then U switches to autolevel and M back to linked
EVENTS_NORMALIZE = "key z\nkey ]\nkey ]\nkey shift+]\nkey period\nkey m\nkey ctrl+c\nkey s\nkey s\n"
EXPECT_NORMALIZE = "imgpu normalize {i} {o} --black-clip 1.25 --white-clip 0.1 --mode per-channel"
EVENTS_AUTOLEVEL = "key z\nkey m\nkey u\nkey ctrl+c\nkey s\nkey s\n"
EXPECT_AUTOLEVEL = "imgpu autolevel {i} {o} --mode per-channel"
EVENTS_CLAHE_MAX = "key c\n" + "key period\n" * 70 + "key ctrl+c\nkey s\nkey s\n"
EXPECT_CLAHE_MAX = "imgpu clahe {i} {o} --clip 40 --tiles 64x64 --mode luminance"


def check_interaction(ck, imgpu, tmp, inp, out_line, save_dir, snap, what, expect=EXPECT_OPS):
    base = os.path.splitext(os.path.basename(inp))[0]
    out = os.path.join(save_dir, base + ".view.png")
    lines = [l for l in out_line.splitlines() if l.startswith("imgpu ")]
    want = expect.format(i=inp, o=out)
    if not ck.check(lines == [want], f"{what}: Ctrl+C prints the command line", f"got {lines}\nwant {want}"):
        return
    saved = [os.path.join(save_dir, base + ".view.png"), os.path.join(save_dir, base + ".view-2.png")]
    for s in saved:
        ck.check(os.path.isfile(s), f"{what}: S saved {s}")
    # run the printed command line (imgpu from the build tree); its output must be what was shown
    moved = os.path.join(tmp, "saved_first.png")
    if os.path.isfile(saved[0]):
        os.rename(saved[0], moved)
    env = dict(os.environ, PATH=os.path.dirname(imgpu) + os.pathsep + os.environ.get("PATH", ""))
    rc, o, e = run(["sh", "-c", lines[0]], env=env)
    if ck.check(rc == 0, f"{what}: the printed command line runs", o + e):
        if snap:
            same(ck, imgpu, snap, out, f"{what}: events snapshot vs printed command")
        if os.path.isfile(moved):
            same(ck, imgpu, moved, out, f"{what}: S's file vs printed command")
        if os.path.isfile(saved[1]):
            same(ck, imgpu, saved[1], out, f"{what}: second S (.view-2) vs printed command")
    for f in saved + [moved]:
        if os.path.exists(f):
            os.remove(f)


def events(ck, imgpu, view, tmp, assets, ctx_args, env=None, window=False):
    ev = os.path.join(tmp, "events.txt")
    scripts = [("coffee.png", EVENTS, EXPECT_OPS, ""), ("coffee.png", EVENTS_CLAHE, EXPECT_CLAHE, " (CLAHE)"),
               ("camera.png", EVENTS_CLAHE, EXPECT_CLAHE, " (CLAHE, gray)"),
               ("coffee.png", EVENTS_CLAHE_LIMITS, EXPECT_CLAHE_LIMITS, " (CLAHE limits)"),
               ("camera.png", EVENTS_CLAHE_MAX, EXPECT_CLAHE_MAX, " (CLAHE 64x64)"),
               ("coffee.png", EVENTS_NORMALIZE, EXPECT_NORMALIZE, " (normalize)"),
               ("chelsea.png", EVENTS_AUTOLEVEL, EXPECT_AUTOLEVEL, " (autolevel)")]
    for name, script, expect, tag in scripts:
        inp = os.path.join(tmp, name)
        shutil.copy(os.path.join(assets, name), inp)
        cc.write(ev, (script + ("key q\n" if window else "")).encode())
        if window:
            args = [view, inp, "--events", ev, "--window", "960x720", "--stats"] + ctx_args
            snap = None
            what = "events in a window" + tag
        else:
            snap = os.path.join(tmp, "events_snap.png")
            args = [view, inp, "--events", ev, "--snapshot", snap] + ctx_args
            what = "events headless" + tag
        rc, o, e = run(args, env=env)
        if ck.check(rc == 0, f"{what}: imgpu-view exits 0", f"{' '.join(args)}\n{o}{e}"):
            check_interaction(ck, imgpu, tmp, inp, o, tmp, snap, what, expect)
    if window:
        return
    # N / P walk the files given; a dropped file opens; Ctrl+C names the current one
    a, b, c = (os.path.join(assets, n) for n in ("camera.png", "horse.png", "brick.png"))
    cc.write(ev, f"key ctrl+c\nkey n\nkey ctrl+c\nkey n\nkey ctrl+c\nkey p\nkey p\nkey ctrl+c\n"
                 f"drop {c}\nkey ctrl+c\nkey 9\n".encode())
    snap = os.path.join(tmp, "nav.png")
    rc, o, e = run([view, a, b, "--events", ev, "--snapshot", snap, "--save-dir", tmp] + ctx_args, env=env)
    names = [l.split()[2] for l in o.splitlines() if l.startswith("imgpu ")]
    ck.check(rc == 0 and names == [a, b, a, a, c], "N / P / drop: the current file", f"{names}\n{e}")
    ref = os.path.join(tmp, "nav_ref.png")
    if cli_output(ck, imgpu, c, [["rotate", "--angle", "-90"]], ref):
        same(ck, imgpu, snap, ref, "dropped file, key 9")
    skip_unreadable(ck, imgpu, view, tmp, assets, ctx_args, env)
    # a bad events line is an error naming the line
    cc.write(ev, b"key e\nfrobnicate 3\n")
    rc, o, e = run([view, a, "--events", ev, "--snapshot", snap] + ctx_args, env=env)
    ck.check(rc == 1 and "events.txt:2" in e, "bad events line: exit 1 naming file:line", e)


def skip_unreadable(ck, imgpu, view, tmp, assets, ctx_args, env=None):
    """#18 item 2: N / P skip what cannot be shown (it retried the same corrupt file on every
    press: the files after it were unreachable) and say so on stderr and in the view."""
    d = os.path.join(tmp, "walk")
    os.makedirs(d, exist_ok=True)
    a, b, c, e, f = (os.path.join(d, n) for n in ("a.png", "b.jpg", "c.png", "e.png", "f.png"))
    shutil.copy(os.path.join(assets, "camera.png"), a)
    cc.write(b, b"\xff\xd8\xff\xe0 this is not a JPEG after all" + bytes(range(256)) * 4)  # corrupt JPEG
    png = cc.read(os.path.join(assets, "horse.png"))
    cc.write(c, png[:len(png) // 3])  # a truncated PNG
    shutil.copy(os.path.join(assets, "horse.png"), e)
    shutil.copy(os.path.join(assets, "brick.png"), f)
    ev = os.path.join(tmp, "walk_events.txt")
    # a -N-> e (skips b, c) -N-> f -P-> e -P-> a (skips c, b)
    cc.write(ev, b"key ctrl+c\nkey n\nkey ctrl+c\nkey n\nkey ctrl+c\nkey p\nkey ctrl+c\nkey p\nkey ctrl+c\n")
    snap = os.path.join(tmp, "walk.png")
    rc, o, err = run([view, d, "--events", ev, "--snapshot", snap, "--size", "640x480"] + ctx_args, env=env)
    names = [os.path.basename(l.split()[2]) for l in o.splitlines() if l.startswith("imgpu ")]
    ck.check(rc == 0 and names == ["a.png", "e.png", "f.png", "e.png", "a.png"],
             "N / P skip a corrupt JPEG and a truncated PNG, both ways", f"rc={rc} {names}\n{err}")
    said = [l for l in err.splitlines() if l.startswith("imgpu: skipped: ")]
    ck.check(len(said) == 4 and sum("b.jpg" in l for l in said) == 2 and sum("c.png" in l for l in said) == 2,
             "each skipped file is named on stderr", err)
    # the note is drawn in the view (bottom-left): the same view of a.png without it differs
    plain = os.path.join(tmp, "walk_plain.png")
    rc2, o2, e2 = run([view, a, "--snapshot", plain, "--size", "640x480"] + ctx_args, env=env)
    if ck.check(rc == 0 and rc2 == 0, "view snapshots of a.png with and without the note", o2 + e2):
        diff = os.path.join(tmp, "walk_diff.png")
        rc3, o3, e3 = run([imgpu, "compare", snap, plain, "--diff", diff])
        line = [l for l in o3.splitlines() if l.startswith("differing pixels:")]
        n = int(line[0].split()[2]) if line else 0
        ck.check(rc3 == 0 and 500 < n < 640 * 480 // 4, "the skip note shows in the view", o3 + e3)


def usage(ck, imgpu, view, tmp, assets):
    a = os.path.join(assets, "camera.png")
    for args in (["--frobnicate"], [a, "--rotate", "x"], [a, "--mode", "foo"], [a, "--size", "3"],
                 [a, "--snapshot", os.path.join(tmp, "x.xyz")], [a, "--frames", "3"], [],
                 [a, "--clahe", "--equalize"], [a, "--clip", "3"], [a, "--tiles", "4x4"], [a, "--clahe", "--clip", "-1"],
                 [a, "--clahe", "--clip", "x"], [a, "--clahe", "--tiles", "0x4"], [a, "--clahe", "--tiles", "257x4"],
                 [a, "--clahe", "--tiles", "8"], [a, "--clahe=1"]):
        rc, o, e = run([view] + args)
        ck.check(rc == 2 and "try 'imgpu view --help'" in e, f"usage error {args}: exit 2", f"rc={rc} {e}")
    rc, o, e = run([view, os.path.join(tmp, "missing.png"), "--snapshot", os.path.join(tmp, "m.png"),
                    "--context", "egl"])
    ck.check(rc == 1 and e.startswith("imgpu: ") and not os.path.exists(os.path.join(tmp, "m.png")),
             "missing input: exit 1, nothing written", e)
    rc, o, e = run([imgpu, "view", "--help"])
    ck.check(rc == 0 and "--snapshot" in o, "imgpu view --help runs imgpu-view", o + e)
    rc, o, e = run([imgpu, "--help"])
    ck.check(rc == 0 and "view FILE" in o, "imgpu --help lists view", o + e)


def main():
    if len(sys.argv) != 6:
        print(__doc__, file=sys.stderr)
        return 2
    imgpu, view, tmp_root, assets, kind = sys.argv[1:6]
    imgpu, view, assets = (os.path.abspath(p) for p in (imgpu, view, assets))
    os.makedirs(tmp_root, exist_ok=True)
    import tempfile
    if kind == "interop-window" and not os.environ.get("DISPLAY"):
        # Without a GPU there is nothing to start an X server for: skip before xvfb-run, whose
        # own exit status (it can fail cleaning up its temp dir) would otherwise replace the 77.
        probe_dir = tempfile.mkdtemp(prefix="viewer_probe.", dir=tmp_root)
        gpu_or_skip(view, os.path.join(assets, "camera.png"), probe_dir, ["--context", "egl"])
        shutil.rmtree(probe_dir, ignore_errors=True)
    if kind in ("snapshot-glfw", "interop-window"):
        ensure_display()
    tmp = tempfile.mkdtemp(prefix=f"viewer_{kind}.", dir=tmp_root)
    if kind in ("snapshot-glfw", "snapshot-egl", "interop-egl", "interop-window"):
        global REF_CACHE
        REF_CACHE = ref_cache_dir(imgpu, tmp_root)
    ck = cc.Checker(f"viewer_test {kind}")
    if kind == "snapshot-glfw":
        # where the default device shows through interop (the GPU machine), every case must
        snapshots(ck, imgpu, view, tmp, assets, "glfw", [],
                  want_path=interop_probe(view, tmp, assets, "glfw"))
        view_glfw_vs_egl(ck, imgpu, view, tmp, assets)
    elif kind == "snapshot-egl":
        snapshots(ck, imgpu, view, tmp, assets, "egl", [],
                  want_path=interop_probe(view, tmp, assets, "egl"))
    elif kind == "interop-egl":
        gpu_or_skip(view, os.path.join(assets, "camera.png"), tmp, ["--context", "egl"])
        snapshots(ck, imgpu, view, tmp, assets, "egl", ["--device", "cuda"], want_path="CUDA-GL interop",
                  subset=INTEROP_SUBSET)
        events(ck, imgpu, view, tmp, assets, ["--context", "egl", "--device", "cuda"])
    elif kind == "interop-window":
        env = dict(os.environ, __GLX_VENDOR_LIBRARY_NAME="nvidia")
        gpu_or_skip(view, os.path.join(assets, "camera.png"), tmp, ["--context", "glfw"], env)
        snapshots(ck, imgpu, view, tmp, assets, "glfw", ["--device", "cuda"], env, want_path="CUDA-GL interop",
                  subset=INTEROP_SUBSET)
        events(ck, imgpu, view, tmp, assets, ["--device", "cuda"], env, window=True)
    elif kind == "events":
        events(ck, imgpu, view, tmp, assets, ["--context", "egl"])
        if os.environ.get("DISPLAY") or shutil.which("xvfb-run"):
            if not os.environ.get("DISPLAY"):
                # the window part under xvfb-run: run this kind again there, window only
                rc = subprocess.run(["xvfb-run", "-a", "-s", "-screen 0 1280x1024x24", sys.executable, __file__,
                                     imgpu, view, tmp_root, assets, "events-window"]).returncode
                ck.check(rc == 0, "events in a window (under xvfb-run)")
            else:
                events(ck, imgpu, view, tmp, assets, [], window=True)
    elif kind == "events-window":
        events(ck, imgpu, view, tmp, assets, [], window=True)
    elif kind == "usage":
        usage(ck, imgpu, view, tmp, assets)
    else:
        print(__doc__, file=sys.stderr)
        return 2
    rc = ck.end()
    cc.cleanup(tmp, rc != 0)
    return rc


if __name__ == "__main__":
    sys.exit(main())
