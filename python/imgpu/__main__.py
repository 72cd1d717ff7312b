"""python3 -m imgpu batch ARGS... [--scheduler ADDRESS] [--workers N]

`imgpu batch` on a Dask cluster (imgpu.dask), for people who do not write Python: ARGS are
`imgpu batch`'s own (ops, -o DIR, options, inputs), with the same outputs, manifest and resume.
--scheduler ADDRESS: a running cluster's scheduler (tcp://host:8786, or a scheduler file's path
ending in .json, as dask-scheduler --scheduler-file writes it). Without it, a local cluster of
--workers N worker processes (default: one per GPU, else 1), each one thread, sharing the
machine's cores (--jobs cores / N unless --jobs is given).
Exit status: 0, 1 when a file failed (each on stderr as "imgpu: PATH: REASON") or an output
was kept stale, 2 for a usage error.
"""
import os
import sys


USAGE = ("usage: python3 -m imgpu batch [imgpu batch's arguments] [--scheduler ADDRESS] [--workers N]\n"
         "  imgpu batch on a Dask cluster (imgpu.dask); without --scheduler, a local cluster\n")


def _take(argv, name):
    """Remove `--name V` / `--name=V` (before "--") from argv; the value or None."""
    end = argv.index("--") if "--" in argv else len(argv)
    for i in range(end):
        a = argv[i]
        if a == name:
            if i + 1 >= end:
                raise SystemExit("imgpu: %s needs a value\n%s" % (name, USAGE))
            v = argv[i + 1]
            del argv[i:i + 2]
            return v
        if a.startswith(name + "="):
            del argv[i]
            return a[len(name) + 1:]
    return None


def main(argv):
    if not argv or argv[0] != "batch" or argv[1:2] in (["-h"], ["--help"]):
        sys.stdout.write(USAGE) if argv[1:2] in (["-h"], ["--help"]) else sys.stderr.write(USAGE)
        return 0 if argv[1:2] in (["-h"], ["--help"]) else 2
    args = list(argv[1:])
    scheduler = _take(args, "--scheduler")
    workers = _take(args, "--workers")
    if workers is not None and (not workers.isdigit() or int(workers) < 1):
        sys.stderr.write("imgpu: invalid --workers '%s' (a count of worker processes, 1 or more)\n" % workers)
        return 2
    try:
        import imgpu.dask
        from dask.distributed import Client, LocalCluster
    except ImportError as e:
        sys.stderr.write("imgpu: python3 -m imgpu batch runs on Dask, which does not import here (%s; Debian: "
                         "python3-distributed)\n" % e)
        return 2
    cluster = client = None
    dry = "--dry-run" in (args[:args.index("--")] if "--" in args else args)
    try:
        if dry:   # the plan alone: no cluster
            pass
        elif scheduler:
            if scheduler.endswith(".json") and os.path.exists(scheduler):
                client = Client(scheduler_file=scheduler)
            else:
                client = Client(scheduler)
        else:
            n = int(workers) if workers else max(1, imgpu.dask._visible_gpus())
            if imgpu.dask._value(args, "--jobs") is None:   # the workers share this machine's cores
                args = ["--jobs", str(max(1, len(os.sched_getaffinity(0)) // n))] + args
            cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=":0")
            client = Client(cluster)
        try:
            s = imgpu.dask.batch_argv(client, args)
        finally:
            if client is not None:
                client.close()
    except ValueError as e:
        msg = str(e)
        sys.stderr.write("imgpu: %s\ntry 'imgpu batch --help'\n" % (msg[len("batch: "):] if msg.startswith("batch: ") else msg))
        return 2
    except imgpu.Error as e:
        sys.stderr.write("imgpu: %s\n" % e)
        return 1
    finally:
        if cluster is not None:
            cluster.close()
    for f in s["failed"]:
        sys.stderr.write("imgpu: %s: %s\n" % (f["path"], f["reason"]))
    stale = ", %d stale (made otherwise; --overwrite replaces them)" % s["stale"] if s["stale"] else ""
    sys.stderr.write("imgpu batch (dask): %s%d %s, %d skipped, %d failed%s\n"
                     % ("dry run: " if dry else "", s["done"], "to write" if dry else "done", s["skipped"],
                        len(s["failed"]), stale))
    return 1 if s["failed"] or s["stale"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
