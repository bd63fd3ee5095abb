/* runtime.h — the per-operation runtime state every stage shares: an arena
 * that owns all memory of one render (or one JSON parse), the error sink and
 * the limits. Errors unwind with longjmp to the entry point that set
 * `jb`, which turns them into a cf_error value; all memory is in the arena,
 * so unwinding leaks nothing. */
#ifndef CF_RUNTIME_H
#define CF_RUNTIME_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "chatfmt.h"

/* Keep rare paths out of hot functions, so those stay small leaves. */
#if defined(__GNUC__) || defined(__clang__)
#define NOINLINE __attribute__((noinline))
#define COLD __attribute__((noinline, cold))
#define ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define NOINLINE
#define COLD
#define ALWAYS_INLINE inline
#endif

/* Arena: bump allocator over malloc'd chunks; freed all at once. */
#define ARENA_ALIGN 16
#define ARENA_CHUNK_MIN (64u * 1024u)
typedef struct ArenaChunk ArenaChunk;
/* Chunks of ARENA_MAP_MIN bytes and more are mapped, where the system
 * allows, with their pages populated at once: on virtual machines a page
 * fault can cost ~10 us, so touching 128 MiB page by page took 0.4 s of
 * system time, and malloc hands freed big blocks back to the system, so
 * each 1 MB reply parsed faulted its memory in anew (~100 MB/s, not 340).
 * Past ARENA_BIG_AFTER bytes an arena is a heavy one (a huge prompt, or a
 * hostile template filling memory): its chunks are then ARENA_BIG_CHUNK. */
#define ARENA_MAP_MIN ((size_t)256 << 10)
#define ARENA_BIG_AFTER ((size_t)4 << 20)
#define ARENA_BIG_CHUNK ((size_t)4 << 20)
struct ArenaChunk {
    ArenaChunk *next;
    size_t size;       /* usable bytes in data[] */
    size_t used;       /* bytes handed out from data[] */
    size_t mapped;     /* bytes mapped (munmap'd on release), or 0: malloc'd */
    _Alignas(ARENA_ALIGN) unsigned char data[];
};
typedef struct Arena {
    ArenaChunk *head;
    size_t used_total;     /* bytes handed out + chunk overhead, spare chunks whole */
    size_t limit;          /* 0 = unlimited */
    ArenaChunk *borrowed;  /* the caller's first chunk (never freed here), or NULL */
    ArenaChunk *spare;     /* chunks given back by arena_free, kept for reuse */
} Arena;

void arena_init(Arena *a, size_t limit);
/* As arena_init, with `buf` (size bytes, 16-byte aligned, owned by the
 * caller and outliving the arena) as the first chunk: most renders need a
 * few KiB, which then cost no malloc/free. */
void arena_init_borrowed(Arena *a, size_t limit, void *buf, size_t size);
void arena_release(Arena *a);              /* frees every chunk but the borrowed one */

/* A render's output buffer (>= want bytes + a NUL; its capacity in *cap),
 * grown, and released: the thread keeps the last one released for its next
 * render (runtime.c). Only these three may allocate or free one. NULL: out
 * of memory. */
char *output_buffer_new(size_t want, size_t *cap);
char *output_buffer_grow(char *text, size_t cap);
void output_buffer_free(char *text);
/* A context's block (context_alloc's size, always the same), kept likewise:
 * take gives the one kept or NULL; put keeps p, or returns false (free it). */
void *context_block_take(void);
bool context_block_put(void *p);
/* Returns NULL when malloc fails or the limit is hit (never longjmps). */
void *arena_try_alloc(Arena *a, size_t n);
/* Give back the block p of n bytes (as allocated) that nothing refers to
 * any more: the most recent block of the head chunk is rolled back, a block
 * with a chunk to itself becomes a spare chunk the arena's next big blocks
 * reuse (its pages already faulted in); any other block stays until the
 * arena is released. */
void arena_free(Arena *a, void *p, size_t n);

typedef struct Rt {
    Arena *arena;
    jmp_buf *jb;           /* where rt_throw unwinds to */
    cf_error *err;         /* filled by rt_throw */
    cf_limits lim;         /* resolved limits (no zeros) */
    uint64_t steps;        /* work counter, checked against lim.max_steps */
    int line, col;         /* current template position for runtime errors */
    void *interp;          /* interpreter state (opaque to other stages) */
} Rt;

/* Fill `err` and unwind to rt->jb. `fmt` is printf-style. */
_Noreturn void rt_throw(Rt *rt, cf_error_kind kind, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Throw MemoryError / LimitError as appropriate for a failed allocation. */
_Noreturn void rt_oom(Rt *rt, size_t n);

/* Allocate from the runtime arena; unwinds on failure. Memory is 16-aligned
 * and NOT zeroed (rt_alloc0 zeroes). */
void *rt_alloc_slow(Rt *rt, size_t n);
/* Inline: a bump of the head chunk, the commonest call of a render. */
static inline void *rt_alloc(Rt *rt, size_t n) {
    Arena *a = rt->arena;
    ArenaChunk *c = a->head;
    size_t an = (n + (ARENA_ALIGN - 1)) & ~(size_t)(ARENA_ALIGN - 1);
    if (c && n - 1 < ARENA_CHUNK_MIN / 4 && an <= c->size - c->used && (!a->limit || an <= a->limit - a->used_total)) {
        c->used += an;
        a->used_total += an;
        return c->data + (c->used - an);
    }
    return rt_alloc_slow(rt, n);
}
void *rt_alloc0(Rt *rt, size_t n);
/* Grow a block: allocate new, copy old_n bytes. The old block may be
 * freed or reused: only the block's owner grows it, while nothing else
 * refers to it. */
void *rt_realloc(Rt *rt, void *old, size_t old_n, size_t new_n);
/* Give back a block only its caller refers to (a filter's scratch table):
 * see arena_free. */
static inline void rt_free(Rt *rt, void *p, size_t n) { arena_free(rt->arena, p, n); }

/* Count one unit of work; unwinds with LimitError past lim.max_steps. */
_Noreturn void rt_steps_exhausted(Rt *rt);
static inline void rt_step(Rt *rt, uint64_t n) {
    rt->steps += n;
    if (rt->steps > rt->lim.max_steps) rt_steps_exhausted(rt);
}

/* memmem (not in C11/POSIX): first occurrence of needle in hay, or NULL. */
const char *cf_memmem(const char *hay, size_t hn, const char *needle, size_t nn);
/* The last occurrence, or NULL. */
const char *cf_memrmem(const char *hay, size_t hn, const char *needle, size_t nn);

/* Fill unset (zero) fields of `l` with defaults. */
void limits_resolve(cf_limits *l);

/* An entry point's runtime over `arena`: declares `rtvar` and its jmp_buf
 * `jb_<rtvar>`; the caller then writes `if (setjmp(jb_<rtvar>)) { ...undo...;
 * return failure; }`. Errors go to err_ptr (or a scratch cf_error). */
#define RT_PROTECTED(rtvar, arena_ptr, err_ptr, lim_ptr)                  \
    jmp_buf jb_##rtvar;                                                 \
    cf_error scratch_##rtvar;                                           \
    Rt rtvar;                                                           \
    memset(&rtvar, 0, sizeof rtvar);                                    \
    rtvar.arena = (arena_ptr);                                          \
    rtvar.jb = &jb_##rtvar;                                             \
    rtvar.err = (err_ptr) ? (err_ptr) : &scratch_##rtvar;               \
    rtvar.err->kind = CF_OK;        /* the 1 KiB message only on error */ \
    rtvar.err->line = rtvar.err->column = 0;                            \
    rtvar.err->offset = 0;                                              \
    rtvar.err->message[0] = '\0';                                       \
    if ((const cf_limits *)(lim_ptr)) rtvar.lim = *(const cf_limits *)(lim_ptr); \
    limits_resolve(&rtvar.lim);


/* Format into a cf_error without unwinding (for entry points). */
void error_set(cf_error *err, cf_error_kind kind, int line, int col, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

#endif
