"""chatfmt inside Dask: format a bag partition by partition on the workers.

    import dask.bag as db
    import chatfmt.dask
    lines = db.read_text("in/*.jsonl", blocksize=None, linedelimiter="\\n", encoding="utf-8")
    out = chatfmt.dask.format_bag(lines, "tokenizer_config.json")
    out.to_textfiles("out/*.jsonl", last_endline=True, encoding="utf-8")

gives, shard by shard, the bytes `chatfmt render TEMPLATE --jsonl` writes.
The template travels to the workers pickled (by its text, name and
options: no file is needed there) and is compiled once per worker process;
each partition is one call that renders its rows on the worker's threads
without the GIL. A partition Dask runs again (a worker lost) gives the same
output: formatting is a pure function of the rows. See docs/pipelines.md.
"""
from . import dataset
from .template import Template

__all__ = ["format_bag", "format_partition"]


def format_bag(bag, template, **options):
    """A bag of output rows, partition for partition, in order.

    Items that are JSON lines (str or bytes, as ``read_text`` gives them)
    become dataset mode's output lines (str, without the newline: write
    them with ``to_textfiles(..., last_endline=True)``). Items that are
    contexts (dicts: messages, tools, ...) become ``{"text": ...}`` or
    ``{"error": {"type", "message"}}`` dicts. ``template``: a
    :class:`chatfmt.Template`, a path or built-in name, or template text;
    ``options``: those of :func:`chatfmt.format_jsonl` (threads, spans, raw,
    add_generation_prompt, define, ...; threads defaults to 1 per worker
    thread, as Dask runs one task per worker thread)."""
    if not isinstance(template, Template):
        load = {k: options.pop(k) for k in ("template_name", "repair", "limits", "now", "polyfill") if k in options}
        template = Template(template, **load)
    options.setdefault("threads", 1)
    return bag.map_partitions(format_partition, template, **options)


def format_partition(rows, template, **options):
    """One partition's rows formatted (see :func:`format_bag`)."""
    rows = list(rows)
    if not rows:
        return []
    if all(isinstance(r, (str, bytes)) for r in rows):
        return _format_lines(rows, template, options)
    threads = options.get("threads", 1)
    out = []
    for r in template.render_batch(rows, threads=threads):
        if isinstance(r, BaseException):
            out.append({"error": {"type": type(r).__name__, "message": str(r)}})
        else:
            out.append({"text": r})
    return out


def _format_lines(rows, template, options):
    import io
    block = b"".join((r if isinstance(r, bytes) else r.encode("utf-8")).rstrip(b"\n") + b"\n" for r in rows)
    src, dst = io.BytesIO(block), io.BytesIO()
    dataset.format_jsonl(template, src, dst, **options)
    return dst.getvalue().decode("utf-8").split("\n")[:-1]
