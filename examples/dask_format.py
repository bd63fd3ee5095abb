#!/usr/bin/env python3
"""dask_format.py — format a directory of JSON Lines shards on a Dask
distributed cluster, as `chatfmt render TEMPLATE --jsonl` formats one file.

usage: dask_format.py TEMPLATE IN_DIR OUT_DIR [--scheduler ADDRESS] [--workers N]
                      [--add-generation-prompt] [-D KEY=JSON]...

Each IN_DIR/*.jsonl shard is one partition; OUT_DIR gets a shard of the
same name with one output line per input line, in order: {"text": ...} or,
for a row that fails, {"error": {"type", "message"}} (the job goes on).
Without --scheduler a LocalCluster of N worker processes (default 2) is
started. The workers need the chatfmt package and libchatfmt.so
(`pip install ./python` after `make`, or PYTHONPATH=python and
CHATFMT_LIBRARY=build/libchatfmt.so, as here from the repository).
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))   # run from the repository

import dask.bag as db  # noqa: E402
from dask.distributed import Client, LocalCluster  # noqa: E402

import chatfmt  # noqa: E402
import chatfmt.dask  # noqa: E402


def format_shards(client, template, in_dir, out_dir, **options):
    """Format every IN_DIR/*.jsonl into OUT_DIR; returns the output paths."""
    names = sorted(n for n in os.listdir(in_dir) if n.endswith(".jsonl"))
    lines = db.read_text([os.path.join(in_dir, n) for n in names], blocksize=None, linedelimiter="\n",
                         encoding="utf-8")
    out = chatfmt.dask.format_bag(lines, template, **options)
    os.makedirs(out_dir, exist_ok=True)
    targets = [os.path.join(out_dir, n) for n in names]
    out.to_textfiles(targets, last_endline=True, encoding="utf-8")
    return targets


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("template")
    ap.add_argument("in_dir")
    ap.add_argument("out_dir")
    ap.add_argument("--scheduler", help="address of a running scheduler (else a LocalCluster)")
    ap.add_argument("--workers", type=int, default=2, help="LocalCluster worker processes")
    ap.add_argument("--add-generation-prompt", action="store_true")
    ap.add_argument("-D", "--define", action="append", default=[], metavar="KEY=JSON")
    args = ap.parse_args(argv)
    define = {}
    for d in args.define:
        key, _, value = d.partition("=")
        define[key] = json.loads(value)
    template = chatfmt.compile(args.template)   # pickled to the workers by text: no file needed there
    if args.scheduler:
        client = Client(args.scheduler)
    else:
        client = Client(LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                                     dashboard_address=None))
    with client:
        paths = format_shards(client, template, args.in_dir, args.out_dir,
                              add_generation_prompt=args.add_generation_prompt, define=define)
    print(f"dask_format: {len(paths)} shards written to {args.out_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
