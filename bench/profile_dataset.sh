#!/usr/bin/env bash
# profile_dataset.sh [SEED...] — where a dataset-mode row's time goes, by
# perf (when installed and allowed): `chatfmt render SEED --jsonl` on the
# mixed rows (bench/gen_mixed_rows.py, 5000 rows) on one thread, its samples
# summed into
#   read     the kernel giving the input: mapping the file's pages (or
#            copying them into block buffers when the input is a pipe)
#   split    finding a row's end with memchr: only rows the reader does not
#            read before their end is known (errors, rows over 1 MiB); the
#            others' end is the '\n' after their document
#   json     reading each row's JSON into values (cf_context_from_jsonl_cached):
#            with a mapped file, the first touch of the input bytes, so the
#            memory traffic of reading is here and in compare
#   compare  the JSON cache's comparison of repeated member bytes (memcmp)
#   render   running the template (the interpreter, filters, tojson)
#   quote    writing each output as a JSON string ({"text": ...})
#   copy     memcpy/memmove anywhere (the row copy the reader keeps, tojson's
#            verbatim copies, output buffers)
#   write    the kernel taking the output (to /dev/null here)
#   other    the rest (malloc, the pipeline, process start)
# Environment: BUILD (default build), CHATFMT_SHARED (default ../shared).
set -u
cd "$(dirname "$0")/.." || exit 2
BUILD=${BUILD:-build}
SHARED=${CHATFMT_SHARED:-../shared}
OUT=$BUILD/bench
mkdir -p "$OUT"
export CHATFMT_NOW=2026-03-14T15:09:26 TZ=UTC
command -v perf > /dev/null 2>&1 || { echo "profile_dataset: SKIP (perf is not installed)"; exit 0; }
ROWS=$OUT/dataset-mixed-5000.jsonl
[ -s "$ROWS" ] || python3 bench/gen_mixed_rows.py "$SHARED" 5000 > "$ROWS" || exit 2
[ $# -gt 0 ] || set -- "$SHARED"/seeds/*.jinja
for seed in "$@"; do
    data=$OUT/perf-dataset.data
    if ! perf record -q -F 4000 -o "$data" "$BUILD/chatfmt" render "$seed" --jsonl "$ROWS" --threads 1 \
            > /dev/null 2> "$OUT/perf-dataset.err"; then
        echo "profile_dataset: SKIP (perf record failed: $(head -n 1 "$OUT/perf-dataset.err"))"
        exit 0
    fi
    perf report -i "$data" --no-children --sort sym --stdio 2> /dev/null | awk -v seed="$(basename "$seed")" '
        /^ +[0-9.]+%/ {
            pct = $1; sub("%", "", pct); sym = $NF
            if (sym ~ /copy_to_iter|copy_user|filemap|ext4_file_read|page_cache|vfs_read|ksys_read|next_uptodate_folio|do_read_fault|set_pte_range|folio_add_file_rmap/) c = "read"
            else if (sym ~ /memchr/) c = "split"
            else if (sym ~ /^(json_parse|parse_tree|parse_document|parse_string|parse_number|dict_from_resolved_pairs|known_key|known_short_key|known_long_key|key_learn|resolve_key|carve_block|json_str_carve|skip_ws|reuse_member|json_reuse|cf_context_from_json)/) c = "json"
            else if (sym ~ /memcmp/) c = "compare"
            else if (sym ~ /quote|cf_json_quote|ob_json_string/) c = "quote"
            else if (sym ~ /memmove|memcpy/) c = "copy"
            else if (sym ~ /write|pipe_|iov_iter|null/) c = "write"
            else if (sym ~ /malloc|free|arena|pipeline|futex|_start|ld-linux|page_fault|clear_page|do_anonymous|exc_page/) c = "other"
            else c = "render"
            sum[c] += pct
        }
        END {
            line = sprintf("profile %s:", seed)
            n = split("read split json compare render quote copy write other", order, " ")
            for (i = 1; i <= n; i++) line = line sprintf("  %s %.1f%%", order[i], sum[order[i]])
            print line
        }'
done
rm -f "$OUT/perf-dataset.data" "$OUT/perf-dataset.err"
