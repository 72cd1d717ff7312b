#!/usr/bin/python3
"""robust_special.py BINARY SCRATCH ASSETS — FIFOs, pipes, devices and sockets as inputs and
outputs (label robust; issue 14, defects 5 and 7; docs/reliability.md).

Every command runs under a timeout, so a hang is a failed check, not a stuck CI job:
  - a FIFO with no writer as the input of info, equalize, histogram and batch fails with
    "no data within 1 s" after --max-decode-time 1 (IMGPU_MAX_DECODE_TIME=1 for batch), not
    much later; equalize writes nothing;
  - a FIFO whose writer sends a PNG and closes: info prints PNG and the true size (it must not
    open the path a second time); a writer that stalls halfway, or a pipe that trickles on
    and never ends: refused near the limit;
  - /dev/zero: refused as no image after its first bytes, fast and with little memory; a
    pipe of endless data after a PNG signature: refused by --max-file-size, fast;
  - `cat a.png | imgpu info /dev/stdin`: format PNG and the real size; /dev/null: empty;
  - a socket: refused by name;
  - an output FIFO with no reader: exit 1 at once, "no process is reading the FIFO", nothing
    else written; with a reader: it receives exactly the bytes a file would; a link to
    /dev/null as output still works;
  - batch over a folder holding a FIFO with an image name: finishes, the other files are
    done, the FIFO is reported as skipped and counted.
"""
import os, select, shutil, socket, stat, subprocess, sys, tempfile, threading, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import cli_common as cc  # noqa: E402

binary, scratch, assets = os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3]
if not hasattr(os, "mkfifo"):
    print("skip: no FIFOs on this system")
    sys.exit(77)
t = cc.Checker("robust_special")
os.makedirs(scratch, exist_ok=True)
tmp = tempfile.mkdtemp(prefix="robust_special.", dir=scratch)

LIMIT = 1.0          # --max-decode-time in these runs, seconds
SLACK = 4.0          # a bounded failure must come within LIMIT + SLACK (sanitizer builds too)
TIMEOUT = 15         # past this a run counts as hung and is killed


def run(args, env=None, stdin_data=None, timeout=TIMEOUT):
    """(status or None when it hung, stdout, stderr, seconds, peak RSS in KiB). stdin_data:
    a list of byte chunks fed through a pipe, or None for no input."""
    e = dict(os.environ)
    e.update(env or {})
    with tempfile.TemporaryFile() as fo, tempfile.TemporaryFile() as fe:
        t0 = time.monotonic()
        p = subprocess.Popen([binary] + args, stdout=fo, stderr=fe, env=e,
                             stdin=subprocess.PIPE if stdin_data is not None else subprocess.DEVNULL)
        if stdin_data is not None:
            def feed():
                try:
                    for chunk in stdin_data:   # chunks, so the test holds little memory
                        p.stdin.write(chunk)
                    p.stdin.close()
                except (BrokenPipeError, OSError):
                    pass
            threading.Thread(target=feed, daemon=True).start()
        hung = False
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() - t0 > timeout:
                hung = True
                p.kill()
            time.sleep(0.005)
        el = time.monotonic() - t0
        rc = None if hung else os.waitstatus_to_exitcode(status)
        fo.seek(0)
        fe.seek(0)
        return (rc, fo.read().decode(errors="replace"), fe.read().decode(errors="replace"), el,
                ru.ru_maxrss)


def desc(r):
    rc, out, err, el, rss = r
    return f"rc={rc} ({'hung' if rc is None else 'ended'}) after {el:.2f} s, {rss} KiB\n" \
           f"stdout: {out[:400]!r}\nstderr: {err[:400]!r}"


class Writer(threading.Thread):
    """Opens a FIFO for writing once a reader has it open (never blocking on open, so the test
    cannot hang here), writes `data`, then optionally stalls `stall` seconds before closing."""

    def __init__(self, path, data, stall=0.0, wait=TIMEOUT):
        super().__init__(daemon=True)
        self.path, self.data, self.stall, self.wait = path, data, stall, wait
        self.stop = threading.Event()
        self.opened = False

    def run(self):
        end = time.monotonic() + self.wait
        fd = -1
        while fd < 0 and time.monotonic() < end and not self.stop.is_set():
            try:
                fd = os.open(self.path, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:   # ENXIO: no reader yet
                time.sleep(0.01)
        if fd < 0:
            return
        self.opened = True
        os.set_blocking(fd, True)
        try:
            view, done = memoryview(self.data), 0
            while done < len(self.data):   # os.write may write less than asked on a pipe
                done += os.write(fd, view[done:])
            if self.stall:
                self.stop.wait(self.stall)
        except OSError:   # the reader gave up (EPIPE): expected for the stalled case
            pass
        finally:
            os.close(fd)


src = os.path.join(assets, "camera.png")
png = cc.read(src)

# ---- a FIFO with no writer, as the input of every reading command ------------------------
fifo = os.path.join(tmp, "nowriter.png")
os.mkfifo(fifo)
outdir = os.path.join(tmp, "out_nowriter")
os.mkdir(outdir)
for cmd in (["info", fifo], ["equalize", fifo, os.path.join(outdir, "e.png"), "--device", "cpu"],
            ["histogram", fifo, "--device", "cpu"]):
    r = run(cmd + ["--max-decode-time", "1"])
    rc, out, err, el, _ = r
    t.check(rc == 1 and f"cannot read '{fifo}': no data within 1 s" in err
            and "--max-decode-time" in err and LIMIT * 0.9 <= el < LIMIT + SLACK,
            f"{cmd[0]}: a FIFO with no writer fails after the decode-time limit", desc(r))
t.check(os.listdir(outdir) == [], "equalize from a FIFO with no writer writes nothing",
        str(os.listdir(outdir)))

# batch: a FIFO named on the command line goes through the bounded read; the other file is done
bout = os.path.join(tmp, "out_batch_named")
r = run(["batch", "--equalize", "-o", bout, "--device", "cpu", "--jobs", "2", fifo, src],
        env={"IMGPU_MAX_DECODE_TIME": str(LIMIT)})
rc, out, err, el, _ = r
t.check(rc == 1 and "no data within 1 s" in err and "1 done, 0 skipped, 1 failed" in err
        and el < LIMIT + SLACK and os.path.isfile(os.path.join(bout, "camera.png")),
        "batch: a named FIFO with no writer fails within the limit, the other file is done",
        desc(r))

# ---- a FIFO with a writer ----------------------------------------------------------------
fifo2 = os.path.join(tmp, "writer.png")
os.mkfifo(fifo2)
w = Writer(fifo2, png)
w.start()
r = run(["info", fifo2, "--max-decode-time", "10"])
w.stop.set()
w.join(5)
rc, out, err, el, _ = r
t.check(rc == 0 and "format:      PNG\n" in out and f"file size:   {len(png)} bytes" in out
        and "dimensions:  512 x 512" in out,
        "info on a FIFO with a writer: PNG, the size of the bytes sent, no second open", desc(r))

# a writer that sends half the file and stalls: refused near the limit, not when it wakes
fifo3 = os.path.join(tmp, "stalled.png")
os.mkfifo(fifo3)
w = Writer(fifo3, png[:30000], stall=TIMEOUT + 5)
w.start()
r = run(["info", fifo3, "--max-decode-time", str(LIMIT)])
w.stop.set()
w.join(5)
rc, out, err, el, _ = r
t.check(rc == 1 and f"cannot read '{fifo3}'" in err and "30000 bytes" in err
        and "--max-decode-time" in err and LIMIT * 0.9 <= el < LIMIT + SLACK,
        "a stalled writer is refused at the decode-time limit", desc(r))

# ---- pipes and character devices ---------------------------------------------------------
for extra in ([], ["--max-file-size", "1G"]):
    r = run(["info", "/dev/zero"] + extra)
    rc, out, err, el, rss = r
    t.check(rc == 1 and "cannot read '/dev/zero': unknown image format" in err and el < 3.0
            and rss < 64 * 1024,
            f"/dev/zero {' '.join(extra)}: refused as no image, fast, with little memory", desc(r))

# endless data after a PNG signature: only the size limit can stop it
r = run(["info", "/dev/stdin", "--max-file-size", "1M"],
        stdin_data=[png[:8]] + [bytes(1 << 16)] * 1024)   # 64 MiB in all
rc, out, err, el, rss = r
t.check(rc == 1 and "too large" in err and "1048576" in err and el < 5.0 and rss < 64 * 1024,
        "a pipe longer than --max-file-size: refused once past the limit", desc(r))

# a trickle that never pauses long but never ends: the limit bounds the whole wait, not the gaps
def trickle(seconds=TIMEOUT):
    yield png[:30000]
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        time.sleep(0.02)
        yield bytes(512)


r = run(["info", "/dev/stdin", "--max-decode-time", str(LIMIT)], stdin_data=trickle())
rc, out, err, el, _ = r
t.check(rc == 1 and "did not end within 1 s" in err and LIMIT * 0.9 <= el < LIMIT + SLACK,
        "a pipe that trickles on: refused at the decode-time limit", desc(r))

r = run(["info", "/dev/stdin"], stdin_data=[png])
rc, out, err, el, _ = r
t.check(rc == 0 and "format:      PNG\n" in out and f"file size:   {len(png)} bytes" in out,
        "cat a.png | imgpu info /dev/stdin: PNG and the real size", desc(r))

r = run(["info", "/dev/null"])
t.check(r[0] == 1 and "cannot read '/dev/null': file is empty" in r[2], "/dev/null: empty",
        desc(r))

sock_path = os.path.join(tmp, "sock.png")
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.bind(sock_path)
    r = run(["info", sock_path])
    t.check(r[0] == 1 and f"cannot read '{sock_path}': is a socket" in r[2],
            "a socket: refused by name", desc(r))
finally:
    s.close()

# ---- outputs -----------------------------------------------------------------------------
odir = os.path.join(tmp, "out_fifo")
os.mkdir(odir)
ofifo = os.path.join(odir, "o.png")
os.mkfifo(ofifo)
r = run(["equalize", src, ofifo, "--device", "cpu"])
rc, out, err, el, _ = r
t.check(rc == 1 and f"cannot write '{ofifo}': no process is reading the FIFO" in err
        and el < 3.0, "output FIFO with no reader: exit 1 at once", desc(r))
t.check(sorted(os.listdir(odir)) == ["o.png"] and stat.S_ISFIFO(os.lstat(ofifo).st_mode),
        "output FIFO with no reader: nothing else written, the FIFO left as it was",
        str(os.listdir(odir)))

# with a reader, the FIFO gets exactly what a regular file gets
ref = os.path.join(tmp, "ref.png")
r = run(["equalize", src, ref, "--device", "cpu"])
t.check(r[0] == 0, "reference equalize", desc(r))
rfd = os.open(ofifo, os.O_RDONLY | os.O_NONBLOCK)
got = bytearray()


def reader():
    end = time.monotonic() + TIMEOUT
    seen = False
    while time.monotonic() < end:
        rl, _, _ = select.select([rfd], [], [], 0.1)
        if not rl:
            continue
        try:
            b = os.read(rfd, 1 << 16)
        except BlockingIOError:
            continue
        if not b:
            if seen:
                return
            time.sleep(0.01)   # no writer yet
            continue
        seen = True
        got.extend(b)


th = threading.Thread(target=reader, daemon=True)
th.start()
r = run(["equalize", src, ofifo, "--device", "cpu"])
th.join(TIMEOUT)
os.close(rfd)
t.check(r[0] == 0 and os.path.exists(ref) and bytes(got) == cc.read(ref),
        "output FIFO with a reader: it receives the image's bytes", desc(r) + f"\ngot {len(got)} bytes")

devnull_png = os.path.join(tmp, "null.png")
os.symlink("/dev/null", devnull_png)
r = run(["equalize", src, devnull_png, "--device", "cpu"])
t.check(r[0] == 0 and os.path.islink(devnull_png), "a link to /dev/null as the output still works",
        desc(r))

# ---- batch over a folder holding a FIFO ----------------------------------------------------
bin_ = os.path.join(tmp, "batch_in")
os.mkdir(bin_)
shutil.copy(src, os.path.join(bin_, "a.png"))
shutil.copy(src, os.path.join(bin_, "b.png"))
os.mkfifo(os.path.join(bin_, "p.png"))
bout2 = os.path.join(tmp, "batch_out")
r = run(["batch", "--equalize", "-o", bout2, "--device", "cpu", "--jobs", "2", bin_])
rc, out, err, el, _ = r
t.check(rc == 0 and "2 done, 1 skipped, 0 failed" in err
        and "p.png" in err and "not a regular file (a FIFO)" in err
        and sorted(cc.listdir_outputs(bout2)) == ["a.png", "b.png"],
        "batch over a folder with a FIFO: the others done, the FIFO skipped and reported", desc(r))

rc = t.end()
cc.cleanup(tmp, rc != 0)
sys.exit(rc)
