#!/usr/bin/env python3
"""dask_check.py SHARED BIN LIB WORKDIR — chatfmt on a Dask distributed
cluster (examples/dask_format.py), checked against the CLI's dataset mode:

1. 24 JSON Lines shards (seed conversations, requests with tools, a row
   that is not JSON, a row the template rejects) formatted on a
   LocalCluster of 2 worker processes are byte-identical, shard by shard,
   to `chatfmt render TEMPLATE --jsonl SHARD`;
2. the same when a worker process is killed while it formats a partition
   (Dask runs that partition again elsewhere);
3. the bad rows give their error rows in place.
Prints `ok: ...` lines; exits non-zero on any difference.
"""
import glob
import json
import os
import signal
import subprocess
import sys
import time

SHARED, BIN, LIB, WORK = sys.argv[1:5]
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
os.environ["CHATFMT_LIBRARY"] = LIB
os.environ["PYTHONPATH"] = os.path.join(REPO, "python") + os.pathsep + os.environ.get("PYTHONPATH", "")
sys.path.insert(0, os.path.join(REPO, "python"))
sys.path.insert(0, os.path.join(REPO, "examples"))

import dask.bag as db  # noqa: E402
from dask.distributed import Client, LocalCluster  # noqa: E402

import chatfmt  # noqa: E402
import chatfmt.dask  # noqa: E402
import dask_format  # noqa: E402

SHARDS, ROWS = 24, 120
TEMPLATE = os.path.join(SHARED, "seeds", "toolcall-qwen3.jinja")
failures = 0


def check(ok, what):
    global failures
    print(("ok: " if ok else "FAIL: ") + what, flush=True)
    failures += not ok


def make_shards(in_dir):
    convs = []
    for path in sorted(glob.glob(os.path.join(SHARED, "conversations", "*.json"))):
        with open(path, encoding="utf-8") as f:
            convs.append(json.load(f))
    os.makedirs(in_dir, exist_ok=True)
    bad = {}   # shard -> row indices of the bad rows
    for s in range(SHARDS):
        lines = []
        for r in range(ROWS):
            ctx = dict(convs[(s * ROWS + r) % len(convs)])
            ctx["row"] = f"{s}-{r}"
            lines.append(json.dumps(ctx, ensure_ascii=s % 2 == 0))
        if s % 5 == 3:
            lines[7] = '{"messages": [ not json'
            lines[11] = "[1, 2]"   # JSON, but not a context
            bad[s] = (7, 11)
        with open(os.path.join(in_dir, f"shard-{s:03d}.jsonl"), "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
    return bad


def cli_outputs(in_dir, want_dir):
    os.makedirs(want_dir, exist_ok=True)
    for path in sorted(glob.glob(os.path.join(in_dir, "*.jsonl"))):
        subprocess.run([BIN, "render", TEMPLATE, "--jsonl", path, "-o",
                        os.path.join(want_dir, os.path.basename(path)), "--threads", "1"],
                       check=True, stderr=subprocess.DEVNULL)


def same_dirs(got_dir, want_dir):
    names = sorted(os.listdir(want_dir))
    if sorted(os.listdir(got_dir)) != names:
        return False, f"files differ: {sorted(os.listdir(got_dir))[:3]}..."
    for n in names:
        with open(os.path.join(got_dir, n), "rb") as a, open(os.path.join(want_dir, n), "rb") as b:
            if a.read() != b.read():
                return False, f"{n} differs"
    return True, f"{len(names)} shards"


def die_once(rows, marker):
    """Kill this worker process the first time any partition gets here (the
    marker file says it happened): Dask must run the partition again."""
    try:
        fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return rows
    os.write(fd, str(os.getpid()).encode())
    os.close(fd)
    os.kill(os.getpid(), signal.SIGKILL)
    return rows


def main():
    in_dir, want_dir = os.path.join(WORK, "in"), os.path.join(WORK, "want")
    bad = make_shards(in_dir)
    cli_outputs(in_dir, want_dir)
    template = chatfmt.compile(TEMPLATE)
    t0 = time.time()
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        pids = list(client.run(os.getpid).values())
        check(len(set(pids)) == 2 and os.getpid() not in pids, f"LocalCluster with 2 worker processes {pids}")

        got_dir = os.path.join(WORK, "got")
        dask_format.format_shards(client, template, in_dir, got_dir)
        ok, what = same_dirs(got_dir, want_dir)
        check(ok, f"dask_format.py output is byte-identical to chatfmt render --jsonl ({what})")

        # a worker killed while it formats a partition
        marker = os.path.join(WORK, "killed")
        names = sorted(os.listdir(in_dir))
        lines = db.read_text([os.path.join(in_dir, n) for n in names], blocksize=None, linedelimiter="\n",
                             encoding="utf-8").map_partitions(die_once, marker)
        killed_dir = os.path.join(WORK, "killed-out")
        os.makedirs(killed_dir)
        chatfmt.dask.format_bag(lines, template).to_textfiles([os.path.join(killed_dir, n) for n in names],
                                                              last_endline=True, encoding="utf-8")
        with open(marker) as f:
            victim = int(f.read())
        check(victim in pids, f"worker process {victim} was killed mid-job")
        ok, what = same_dirs(killed_dir, want_dir)
        check(ok, f"with a worker killed, the output is still complete and identical ({what})")

        # the bad rows' error rows, in place
        rows_ok = True
        for s, idx in bad.items():
            with open(os.path.join(got_dir, f"shard-{s:03d}.jsonl"), encoding="utf-8") as f:
                out = [json.loads(x) for x in f]
            rows_ok &= len(out) == ROWS and out[idx[0]]["error"]["type"] == "JSONDecodeError" and \
                out[idx[1]]["error"]["type"] == "TypeError"
        check(rows_ok and bad, f"bad rows give their error rows in place ({sum(map(len, bad.values()))} rows, "
                               f"{len(bad)} shards)")

        # contexts (dicts) through format_bag give the same rows as dicts
        first = os.path.join(in_dir, names[3])
        with open(first, encoding="utf-8") as f:
            ctxs = [json.loads(x) for x in f if x.startswith("{") and not x.startswith('{"messages": [ not')]
        got = chatfmt.dask.format_bag(db.from_sequence(ctxs, npartitions=4), template).compute()
        want = [t if isinstance(t, str) else None for t in template.render_batch(ctxs, threads=1)]
        check([g.get("text") for g in got] == want and len(got) == len(ctxs),
              f"format_bag of {len(ctxs)} contexts in 4 partitions equals render_batch, in order")
    print(f"dask: {SHARDS} shards x {ROWS} rows, 3 jobs in {time.time() - t0:.1f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
