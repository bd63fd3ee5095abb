/* pipeline.h — JSON Lines in, one output per input line out, in input
 * order, the rows rendered on worker threads with constant memory. Dataset
 * mode (render --jsonl) and the reference protocol (render --batch) are
 * each a row function on top of it. */
#ifndef CF_CLI_PIPELINE_H
#define CF_CLI_PIPELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { PIPELINE_MAX_THREADS = 256 };

/* A growable output buffer (malloc); a failed allocation is remembered and
 * every later put is dropped. */
typedef struct OutBuf { char *p; size_t len, cap; bool failed; } OutBuf;

bool ob_reserve(OutBuf *b, size_t n);   /* room for n more bytes (and a NUL) */
void ob_put(OutBuf *b, const char *s, size_t n);
void ob_puts(OutBuf *b, const char *s);
void ob_json_string(OutBuf *b, const char *s, size_t n);   /* json.dumps(s, ensure_ascii=False) */

/* One input line (its line ending stripped), on worker thread `worker`
 * (0..threads-1, for per-worker state): append its output — a line ending
 * in '\n', or nothing to skip it — to out. False when it is an error row
 * (they are counted). */
typedef bool (*PipelineRow)(void *job, unsigned worker, const char *line, size_t len, OutBuf *out);

/* Optionally, the same for a row whose end is not yet found: the input from
 * its start, avail bytes of it (its line and more). When it finds the row's
 * '\n' itself (reading the row), *line_len is its offset and the output is
 * as row() would give; else *line_len = SIZE_MAX, nothing is appended, and
 * row() gets the line. Spares the separate scan for the line's end. */
typedef bool (*PipelineRowInPlace)(void *job, unsigned worker, const char *text, size_t avail, OutBuf *out,
                                   size_t *line_len);

enum { PIPELINE_ERROR_TEXT = 240 };

/* Optionally, run on each worker's own thread before its first row: state
 * a worker writes on every row is best made there, where that thread's
 * allocator serves it (glibc: the thread's own heap), and not beside what
 * another thread reads (a cache line written by one core and read by the
 * other moves between them at every access). */
typedef void (*PipelineWorkerStart)(void *job, unsigned worker);

typedef struct Pipeline {
    PipelineRow row;
    PipelineRowInPlace row_in_place;   /* NULL: row() on every line */
    PipelineWorkerStart worker_start;  /* NULL: none */
    void *job;
    unsigned threads;       /* 1..PIPELINE_MAX_THREADS */
    const char *oom_row;    /* written for a row whose output ran out of memory (ends in '\n') */
    bool progress;          /* a progress line on stderr when it is a terminal */
    uint64_t rows, errors;  /* out: rows written, error rows among them */
    uint64_t first_error_line;   /* out: the first error row's line (1-based), or 0 */
    char first_error[PIPELINE_ERROR_TEXT];   /* out: its output line, cut short if long */
} Pipeline;

/* Read in_fd to its end (a regular file is mapped and its rows are read
 * in place; anything else with read(2), a pipe's buffer widened to a MiB
 * where the system allows) and write every row's output to
 * out_fd with write(2), on `threads` threads (the calling thread is
 * worker 0). Nothing else may use either descriptor meanwhile: flush a
 * stdio stream on out_fd first. Returns 0 when all was written; 1 after an
 * I/O error or when memory ran out for the input (a message is on stderr). */
int pipeline_run(Pipeline *p, int in_fd, int out_fd);

/* All online cores, within 1..PIPELINE_MAX_THREADS. */
unsigned pipeline_default_threads(void);

#endif
