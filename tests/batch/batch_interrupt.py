"""batch_interrupt.py — Ctrl-C (SIGINT) and SIGTERM during `imgpu batch` (issue 18): the batch
stops starting files, finishes the ones in flight (every output is whole: no temp file, each
written file decodes), prints a summary saying what was done and how to resume, and exits
128 + the signal. Running the same command again finishes the rest and skips what was done.

Usage: batch_interrupt.py IMGPU_BINARY TMP_ROOT ASSETS_DIR
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import cli_common as cc  # noqa: E402

N = 60


def main():
    binary, tmp, assets = cc.setup("batch_interrupt")
    ck = cc.Checker("batch_interrupt")
    src = os.path.join(tmp, "in")
    os.makedirs(src)
    for i in range(N):
        shutil.copy(os.path.join(assets, "coffee.png"), os.path.join(src, f"c{i:03d}.png"))

    for sig, name in ((signal.SIGINT, "Ctrl-C"), (signal.SIGTERM, "SIGTERM")):
        out = os.path.join(tmp, f"out_{sig}")
        cmd = [binary, "batch", "--equalize", "--device", "cpu", "--jobs", "1", "-o", out, src]
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        # wait for the first output, so the signal lands mid-batch
        t0 = time.monotonic()
        while time.monotonic() - t0 < 20 and not (os.path.isdir(out) and any(
                f.endswith(".png") and not f.startswith(".") for f in os.listdir(out))):
            time.sleep(0.01)
        p.send_signal(sig)
        try:
            _, err = p.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            _, err = p.communicate()
            ck.check(False, f"{name}: the batch stops after the signal")
            continue
        err = err.decode("utf-8", "replace")
        ck.check(p.returncode == 128 + sig, f"{name}: exit status 128 + {int(sig)}",
                 f"rc={p.returncode} stderr={err!r}")
        m = re.search(r"interrupted \((.*?)\).*?: (\d+) done, (\d+) skipped, (\d+) failed, "
                      r"(\d+) not started; run the same command again", err)
        ck.check(m is not None and m.group(1) == name, f"{name}: summary with counts and how to resume",
                 repr(err))
        files = sorted(cc.listdir_outputs(out)) if os.path.isdir(out) else []
        ck.check(not [f for f in files if f.startswith(".")], f"{name}: no temp file left", str(files))
        if m:
            done, not_started = int(m.group(2)), int(m.group(5))
            ck.check(done == len(files), f"{name}: 'done' counts the files written ({done})",
                     str(len(files)))
            ck.check(0 < not_started and done + not_started == N,
                     f"{name}: the rest is reported not started", repr(err))
        for f in files:   # every written output is whole
            r = cc.run(binary, ["info", os.path.join(out, f)])
            if not ck.check(r.rc == 0, f"{name}: {f} decodes", str(r)):
                break
        # resuming: the same command finishes the rest and skips what was written
        r = cc.run(binary, cmd[1:], timeout=120)
        m2 = re.search(r"(\d+) done, (\d+) skipped, 0 failed", r.err)
        ck.check(r.rc == 0 and m2 is not None and int(m2.group(2)) == len(files)
                 and int(m2.group(1)) == N - len(files), f"{name}: re-running finishes the rest", str(r))

    rc = ck.end()
    cc.cleanup(tmp, rc != 0)
    return rc


if __name__ == "__main__":
    sys.exit(main())
