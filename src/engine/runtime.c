/* runtime.c — arena allocator, error unwinding and limits. */
#if defined(__linux__) && !defined(_DEFAULT_SOURCE)
#define _DEFAULT_SOURCE   /* MAP_ANONYMOUS, MAP_POPULATE */
#endif
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "runtime.h"
#if defined(__linux__)
#include <sys/mman.h>
#endif

/* ---- arena ---- */

/* Freed standard chunks (ARENA_CHUNK_MIN, malloc'd) wait in a per-thread
 * cache for the thread's next arena, up to CHUNK_CACHE_MAX of them (2 MiB).
 * Without it, malloc handed the heap top these chunks made free back to the
 * system after each render that outgrew its first chunk, and the next one
 * faulted the pages in again, at ~15 us a page on a virtual machine:
 * Llama-3.2-Vision over a 40-turn conversation (which makes 7000 one-letter
 * strings) took 2.3 ms a render, of which 0.6 ms was its work. A cache per
 * thread takes no lock; a thread's cache is freed when the thread exits. */
enum { CHUNK_CACHE_MAX = 32 };
typedef struct OutputHead { size_t cap, pad; } OutputHead;   /* 16 bytes: the text stays 16-aligned */
/* What a thread keeps for its next render: freed chunks, and (below) the
 * last output buffer and context block it released. */
typedef struct ThreadCache {
    ArenaChunk *head;      /* freed chunks, `count` of them */
    unsigned count;
    bool registered;
    OutputHead *output;    /* see output_buffer_new */
    void *context;         /* see context_block_take */
} ThreadCache;
static _Thread_local ThreadCache thread_store;
static pthread_key_t thread_cache_key;
static pthread_once_t thread_cache_once = PTHREAD_ONCE_INIT;
static bool thread_cache_key_ok;

static void thread_cache_drain(void *cache) {
    ThreadCache *cc = cache;
    while (cc->head) {
        ArenaChunk *next = cc->head->next;
        free(cc->head);
        cc->head = next;
    }
    cc->count = 0;
    free(cc->output);
    cc->output = NULL;
    free(cc->context);
    cc->context = NULL;
}

static void thread_cache_key_init(void) {
    thread_cache_key_ok = pthread_key_create(&thread_cache_key, thread_cache_drain) == 0;
}

/* The thread's cache, its release at thread exit arranged; NULL when that
 * cannot be arranged (nothing may then wait in it). */
static ThreadCache *thread_cache(void) {
    ThreadCache *cc = &thread_store;
    if (!cc->registered) {
        pthread_once(&thread_cache_once, thread_cache_key_init);
        if (!thread_cache_key_ok || pthread_setspecific(thread_cache_key, cc) != 0) return NULL;
        cc->registered = true;
    }
    return cc;
}

/* Keep c for reuse; false (the caller frees it) when the cache is full or
 * cannot be emptied at this thread's exit. */
static bool chunk_cache_put(ArenaChunk *c) {
    ThreadCache *cc = &thread_store;
    if (cc->count >= CHUNK_CACHE_MAX || !thread_cache()) return false;
    c->next = cc->head;
    cc->head = c;
    cc->count++;
    return true;
}

static ArenaChunk *chunk_cache_take(void) {
    ThreadCache *cc = &thread_store;
    ArenaChunk *c = cc->head;
    if (c) {
        cc->head = c->next;
        cc->count--;
    }
    return c;
}


/* ---- output buffers and context blocks ----
 * A dataset job renders millions of rows, each of which took a malloc'd
 * output buffer (as long as the template's longest output so far: 16 KiB
 * and more) and a context block (16 KiB), and freed both: ~1000
 * instructions a row in malloc finding, splitting and merging such blocks,
 * a tenth of a short row. The thread's cache keeps the last one of each
 * that was released, for its next render. An output buffer records its
 * capacity in a header before the text (cf_result_free gets only the text). */
enum { OUTPUT_CACHE_MAX = 1 << 20 };

static OutputHead *output_head(char *text) { return (OutputHead *)(void *)(text - sizeof(OutputHead)); }

char *output_buffer_new(size_t want, size_t *cap) {
    ThreadCache *cc = &thread_store;
    OutputHead *h = cc->output;
    if (h && h->cap >= want) {
        cc->output = NULL;
    } else {
        if (want > SIZE_MAX - sizeof(OutputHead) - 1) return NULL;
        h = malloc(sizeof(OutputHead) + want + 1);
        if (!h) return NULL;
        h->cap = want;
    }
    *cap = h->cap;
    return (char *)(h + 1);
}

char *output_buffer_grow(char *text, size_t cap) {
    if (cap > SIZE_MAX - sizeof(OutputHead) - 1) return NULL;
    OutputHead *h = realloc(output_head(text), sizeof(OutputHead) + cap + 1);
    if (!h) return NULL;
    h->cap = cap;
    return (char *)(h + 1);
}

void output_buffer_free(char *text) {
    if (!text) return;
    OutputHead *h = output_head(text);
    ThreadCache *cc = &thread_store;
    if (h->cap <= OUTPUT_CACHE_MAX && (!cc->output || cc->output->cap < h->cap) && thread_cache()) {
        free(cc->output);   /* the bigger one serves more renders */
        cc->output = h;
        return;
    }
    free(h);
}

void *context_block_take(void) {
    ThreadCache *cc = &thread_store;
    void *p = cc->context;
    cc->context = NULL;
    return p;
}

bool context_block_put(void *p) {
    ThreadCache *cc = &thread_store;
    if (cc->context || !thread_cache()) return false;
    cc->context = p;
    return true;
}

static size_t align_up(size_t n) { return (n + (ARENA_ALIGN - 1)) & ~(size_t)(ARENA_ALIGN - 1); }

void arena_init(Arena *a, size_t limit) {
    a->head = a->borrowed = a->spare = NULL;
    a->used_total = 0;
    a->limit = limit;
}

void arena_init_borrowed(Arena *a, size_t limit, void *buf, size_t size) {
    arena_init(a, limit);
    if (size <= sizeof(ArenaChunk)) return;
    ArenaChunk *c = buf;
    c->next = NULL;
    c->size = size - sizeof(ArenaChunk);
    c->used = 0;
    c->mapped = 0;
    a->head = a->borrowed = c;
}

static void chunk_free(ArenaChunk *c) {
#if defined(MAP_POPULATE)
    if (c->mapped) {
        munmap(c, c->mapped);
        return;
    }
#endif
    if (c->size == ARENA_CHUNK_MIN && chunk_cache_put(c)) return;
    free(c);
}

static void chunks_free(ArenaChunk *c, const ArenaChunk *borrowed) {
    while (c) {
        ArenaChunk *next = c->next;
        if (c != borrowed) chunk_free(c);
        c = next;
    }
}

void arena_release(Arena *a) {
    chunks_free(a->head, a->borrowed);
    chunks_free(a->spare, NULL);
    a->head = a->borrowed = a->spare = NULL;
    a->used_total = 0;
}

/* Would charging `n` more bytes pass the limit? (overflow safe) */
static bool arena_over_limit(const Arena *a, size_t n) {
    return a->limit && (n > a->limit || a->used_total > a->limit - n);
}

/* ---- spare chunks ----
 * A chunk given back (arena_free) waits for the arena's next chunk of about
 * its size: a filter's scratch table or a list that outgrew its chunk,
 * made again on each turn of a loop, then reuses pages that are already
 * faulted in rather than mapping new ones (on a virtual machine the fault
 * costs more than the work). A spare chunk stays charged to the limit in
 * full, so memory held stays within max_memory; the spares are dropped
 * before an allocation would fail for them. A few are kept, so looking
 * them up stays cheap. */
enum { SPARE_MAX = 8 };

/* Keep c (out of the lists and charged nothing) as a spare, or free it
 * when it does not fit the limit or enough are kept. */
static void spare_keep(Arena *a, ArenaChunk *c) {
    unsigned kept = 0;
    for (const ArenaChunk *s = a->spare; s; s = s->next) kept++;
    if (kept >= SPARE_MAX || arena_over_limit(a, sizeof(ArenaChunk) + c->size)) {
        chunk_free(c);
        return;
    }
    a->used_total += sizeof(ArenaChunk) + c->size;
    c->used = 0;
    c->next = a->spare;
    a->spare = c;
}

/* A spare chunk of at least `size` bytes and not much more (its slack
 * uncharged while in use: at most as much as it holds), taken out and
 * charged nothing; NULL when none fits. */
static ArenaChunk *spare_take(Arena *a, size_t size) {
    for (ArenaChunk **link = &a->spare; *link; link = &(*link)->next) {
        ArenaChunk *c = *link;
        if (c->size >= size && c->size - size <= size + ARENA_CHUNK_MIN) {
            *link = c->next;
            a->used_total -= sizeof(ArenaChunk) + c->size;
            return c;
        }
    }
    return NULL;
}

/* Free the spares (an allocation needs their room under the limit). */
static void spare_drop(Arena *a) {
    while (a->spare) {
        ArenaChunk *c = a->spare;
        a->spare = c->next;
        a->used_total -= sizeof(ArenaChunk) + c->size;
        chunk_free(c);
    }
}

/* A big chunk, its pages populated by the kernel in one go (NULL where that
 * is not available or fails: malloc then serves). */
static ArenaChunk *chunk_map(size_t size) {
#if defined(MAP_POPULATE)
    size_t page = 4096, bytes = sizeof(ArenaChunk) + size;
    if (bytes > SIZE_MAX - page) return NULL;
    bytes = (bytes + page - 1) & ~(page - 1);
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (p == MAP_FAILED) return NULL;
    ArenaChunk *c = p;
    c->mapped = bytes;
    c->size = bytes - sizeof(ArenaChunk);
    return c;
#else
    (void)size;
    return NULL;
#endif
}

static ArenaChunk *chunk_new(Arena *a, size_t size) {
    if (size > SIZE_MAX - sizeof(ArenaChunk)) return NULL;
    if (arena_over_limit(a, sizeof(ArenaChunk))) return NULL;
    ArenaChunk *c = spare_take(a, size);
    if (!c) c = size >= ARENA_MAP_MIN ? chunk_map(size) : size == ARENA_CHUNK_MIN ? chunk_cache_take() : NULL;
    if (!c) {
        c = malloc(sizeof(ArenaChunk) + size);
        if (!c) return NULL;
        c->mapped = 0;
        c->size = size;
    }
    c->used = 0;
    a->used_total += sizeof(ArenaChunk);
    return c;
}

void *arena_try_alloc(Arena *a, size_t n) {
    if (n > SIZE_MAX - ARENA_ALIGN) return NULL;
    n = align_up(n ? n : 1);
    if (arena_over_limit(a, n)) {
        if (!a->spare) return NULL;
        spare_drop(a);
        if (arena_over_limit(a, n)) return NULL;
    }
    ArenaChunk *c = a->head;
    bool heavy = a->used_total >= ARENA_BIG_AFTER;
    /* In a heavy arena a block of ARENA_CHUNK_MIN and more has a chunk to
     * itself whether or not the head has room: such blocks are what grows
     * (lists, tables), and one alone grows in place, or into a spare chunk,
     * where one in the head left its old copy behind at each doubling. */
    if (!c || c->size - c->used < n || (heavy && n >= ARENA_CHUNK_MIN)) {
        /* A big request gets its own chunk, linked behind the head so the
         * head's free tail stays usable for the small allocations. */
        size_t least = heavy ? ARENA_BIG_CHUNK : ARENA_CHUNK_MIN;
        bool dedicated = c && (n > least / 4 || (heavy && n >= ARENA_CHUNK_MIN));
        size_t size = n > least ? n : least;
        if (dedicated && n < size) size = n > ARENA_CHUNK_MIN ? n : ARENA_CHUNK_MIN;
        c = chunk_new(a, size);
        if (!c) return NULL;
        if (dedicated) {
            c->next = a->head->next;
            a->head->next = c;
        } else {
            c->next = a->head;
            a->head = c;
        }
    }
    void *p = c->data + c->used;
    c->used += n;
    a->used_total += n;
    return p;
}

void arena_free(Arena *a, void *p, size_t n) {
    ArenaChunk *c = a->head;
    if (!c || !p) return;
    n = align_up(n ? n : 1);
    unsigned char *bp = p;
    if (bp >= c->data && bp < c->data + c->size && bp + n == c->data + c->used) {
        c->used -= n;
        a->used_total -= n;
        return;
    }
    /* A chunk that holds this block alone: big blocks get their own chunk,
     * linked behind the head, the newest first (arena_try_alloc). */
    ArenaChunk **link = &c->next;
    for (int k = 0; k < 8 && *link; k++, link = &(*link)->next) {
        ArenaChunk *d = *link;
        if (d->data != bp) continue;
        if (d->used != n || d == a->borrowed) return;
        *link = d->next;
        a->used_total -= sizeof(ArenaChunk) + d->used;
        spare_keep(a, d);
        return;
    }
}

/* Resize the most recent allocation of the head chunk in place, when `p` is
 * that allocation and the new size fits. Strings grow this way for free. */
static bool arena_try_resize_last(Arena *a, void *p, size_t old_n, size_t new_n) {
    ArenaChunk *c = a->head;
    if (!c || !p) return false;
    size_t old_sz = align_up(old_n ? old_n : 1), new_sz = align_up(new_n ? new_n : 1);
    unsigned char *bp = p;
    if (bp < c->data || bp + old_sz != c->data + c->used) return false;
    size_t start = (size_t)(bp - c->data);
    if (new_sz > c->size - start) return false;
    if (new_sz > old_sz) {
        if (arena_over_limit(a, new_sz - old_sz)) return false;
        a->used_total += new_sz - old_sz;
    } else {
        a->used_total -= old_sz - new_sz;
    }
    c->used = start + new_sz;
    return true;
}

/* A block that has a chunk to itself (big strings and lists) grows with
 * realloc(), so the old copy does not linger until the arena is released. */
static void *arena_try_grow_alone(Arena *a, void *p, size_t old_n, size_t new_n) {
    size_t old_sz = align_up(old_n ? old_n : 1), new_sz = align_up(new_n);
    if (new_sz <= old_sz || new_sz > SIZE_MAX - sizeof(ArenaChunk) || arena_over_limit(a, new_sz - old_sz))
        return NULL;
    ArenaChunk **link = &a->head;
    while (*link && (*link)->data != (unsigned char *)p) link = &(*link)->next;
    ArenaChunk *c = *link;
    if (!c || c == a->borrowed || c->used != old_sz) return NULL;
    if (c->mapped) {
        ArenaChunk *old = NULL;
        if (new_sz > c->size) {   /* beyond the mapping's page slack: a spare or a new mapping */
            ArenaChunk *grown = spare_take(a, new_sz);
            if (!grown) grown = chunk_map(new_sz);
            if (!grown) return NULL;
            memcpy(grown->data, c->data, old_sz);
            grown->next = c->next;
            old = c;
            c = grown;
        }
        c->used = new_sz;
        *link = c;
        a->used_total += new_sz - old_sz;
        if (old) spare_keep(a, old);   /* (its charge passed to the new chunk) */
        return c->data;
    } else {
        c = realloc(c, sizeof(ArenaChunk) + new_sz);
        if (!c) return NULL;
        c->size = c->used = new_sz;
    }
    *link = c;
    a->used_total += new_sz - old_sz;
    return c->data;
}

/* ---- errors ---- */

static void error_vset(cf_error *err, cf_error_kind kind, int line, int col, const char *fmt,
                       va_list ap) {
    err->kind = kind;
    err->line = line;
    err->column = col;
    vsnprintf(err->message, sizeof err->message, fmt, ap);
}

void error_set(cf_error *err, cf_error_kind kind, int line, int col, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    err->offset = 0;
    error_vset(err, kind, line, col, fmt, ap);
    va_end(ap);
}

/* The latest throw wins; err->offset is left alone so that the JSON reader
 * can set it just before throwing. */
_Noreturn void rt_throw(Rt *rt, cf_error_kind kind, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    error_vset(rt->err, kind, rt->line, rt->col, fmt, ap);
    va_end(ap);
    longjmp(*rt->jb, 1);
}

_Noreturn void rt_oom(Rt *rt, size_t n) {
    Arena *a = rt->arena;
    if (a && arena_over_limit(a, align_up(n))) {
        rt_throw(rt, CF_ERR_LIMIT,
                 "memory limit of %zu bytes exceeded (raise it with --max-memory / cf_limits.max_memory)",
                 a->limit);
    }
    rt_throw(rt, CF_ERR_MEMORY, "out of memory");
}

void *rt_alloc_slow(Rt *rt, size_t n) {
    void *p = arena_try_alloc(rt->arena, n);
    if (!p) rt_oom(rt, n);
    return p;
}

void *rt_alloc0(Rt *rt, size_t n) {
    void *p = rt_alloc(rt, n);
    memset(p, 0, n);
    return p;
}

void *rt_realloc(Rt *rt, void *old, size_t old_n, size_t new_n) {
    if (arena_try_resize_last(rt->arena, old, old_n, new_n)) return old;
    if (old && new_n <= old_n) return old;    /* shrinking never needs a move */
    if (old && old_n > ARENA_CHUNK_MIN / 4) {
        void *grown = arena_try_grow_alone(rt->arena, old, old_n, new_n);
        if (grown) return grown;
    }
    void *p = rt_alloc(rt, new_n);
    if (old) memcpy(p, old, old_n < new_n ? old_n : new_n);
    return p;
}

/* ---- limits ---- */

/* Out of line: rt_step is inlined into every loop. */
_Noreturn void rt_steps_exhausted(Rt *rt) {
    rt_throw(rt, CF_ERR_LIMIT, "step budget of %llu exhausted (raise it with --max-steps / cf_limits.max_steps)",
             (unsigned long long)rt->lim.max_steps);
}

/* Defaults: the corpus's heaviest render takes ~23k steps and a few MB, so
 * real templates stay far below these; hostile ones stop within a second
 * and well under 1 GiB (tests/hostile_test.sh checks both). */
void limits_resolve(cf_limits *l) {
    if (!l->max_steps) l->max_steps = 10000000ull;
    if (!l->max_recursion) l->max_recursion = 500;
    if (!l->max_parse_depth) l->max_parse_depth = 500;
    if (!l->max_output) l->max_output = (size_t)64 << 20;
    if (!l->max_string) l->max_string = (size_t)16 << 20;
    if (!l->max_items) l->max_items = 4000000;
    if (!l->max_memory) l->max_memory = (size_t)256 << 20;
    if (!l->max_range) l->max_range = 100000;
    if (!l->max_json_depth) l->max_json_depth = 512;
    if (!l->max_json_bytes) l->max_json_bytes = (size_t)256 << 20;
}

void cf_limits_default(cf_limits *out) {
    memset(out, 0, sizeof *out);
    limits_resolve(out);
}

const char *cf_error_kind_name(cf_error_kind kind) {
    static const char *const names[] = {
        [CF_OK] = "OK",
        [CF_ERR_TEMPLATE_SYNTAX] = "TemplateSyntaxError",
        [CF_ERR_UNDEFINED] = "UndefinedError",
        [CF_ERR_TEMPLATE] = "TemplateError",
        [CF_ERR_TYPE] = "TypeError",
        [CF_ERR_VALUE] = "ValueError",
        [CF_ERR_SECURITY] = "SecurityError",
        [CF_ERR_OVERFLOW] = "OverflowError",
        [CF_ERR_ZERO_DIVISION] = "ZeroDivisionError",
        [CF_ERR_INDEX] = "IndexError",
        [CF_ERR_KEY] = "KeyError",
        [CF_ERR_ATTRIBUTE] = "AttributeError",
        [CF_ERR_RUNTIME] = "RuntimeError",
        [CF_ERR_JSON] = "JSONDecodeError",
        [CF_ERR_LIMIT] = "LimitError",
        [CF_ERR_MEMORY] = "MemoryError",
        [CF_ERR_IO] = "IOError",
        [CF_ERR_UNICODE] = "UnicodeDecodeError",
        [CF_ERR_FORMAT] = "FormatError",
        [CF_ERR_USAGE] = "UsageError",
        [CF_ERR_TEMPLATE_RUNTIME] = "TemplateRuntimeError",
        [CF_ERR_TEMPLATE_ASSERTION] = "TemplateAssertionError",
        [CF_ERR_FILTER_ARGUMENT] = "FilterArgumentError",
        [CF_ERR_ASSERTION] = "AssertionError",
    };
    if ((unsigned)kind >= sizeof names / sizeof names[0] || !names[kind]) return "Error";
    return names[kind];
}

/* memchr (libc's, vectorised) finds the needle's first byte; when that
 * byte turns out common ("content" in a template, "c"), the search goes on
 * by blocks: SSE2 tests sixteen positions at once for the needle's first
 * and last bytes, so a common byte costs no call per occurrence. */
#if defined(__SSE2__) && defined(__GNUC__) && !defined(CF_NO_SIMD)
#include <emmintrin.h>
#define MEMMEM_SSE2 1
#endif

const char *cf_memmem(const char *hay, size_t hn, const char *needle, size_t nn) {
    if (nn == 0) return hay;
    if (nn > hn) return NULL;
    if (nn == 1) return memchr(hay, needle[0], hn);
    const size_t last = hn - nn;   /* the last position it can start at */
    const char n0 = needle[0], n1 = needle[nn - 1];
    size_t i = 0;
    for (int misses = 0; misses < 4; misses++) {
        const char *p = memchr(hay + i, n0, last + 1 - i);
        if (!p) return NULL;
        i = (size_t)(p - hay);
        if (p[nn - 1] == n1 && memcmp(p + 1, needle + 1, nn - 2) == 0) return p;
        if (++i > last) return NULL;
    }
#ifdef MEMMEM_SSE2
    const __m128i first = _mm_set1_epi8(n0), final = _mm_set1_epi8(n1);
    for (; i <= last && last - i >= 15; i += 16) {   /* starts i .. i+15, all <= last */
        __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(hay + i));
        __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(hay + i + nn - 1));
        unsigned m = (unsigned)_mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(a, first), _mm_cmpeq_epi8(b, final)));
        for (; m; m &= m - 1) {
            size_t at = i + (size_t)__builtin_ctz(m);
            if (memcmp(hay + at + 1, needle + 1, nn - 2) == 0) return hay + at;
        }
    }
#endif
    for (; i <= last; i++)
        if (hay[i] == n0 && hay[i + nn - 1] == n1 && memcmp(hay + i + 1, needle + 1, nn - 2) == 0) return hay + i;
    return NULL;
}

/* The last occurrence of needle in hay, or NULL: where continue_final_message
 * looks for the final message, near the end of the output. */
const char *cf_memrmem(const char *hay, size_t hn, const char *needle, size_t nn) {
    if (nn > hn) return NULL;
    if (nn == 0) return hay + hn;
    const char n0 = needle[0], n1 = needle[nn - 1];
    size_t i = hn - nn + 1;   /* positions below i are left to try */
#ifdef MEMMEM_SSE2
    const __m128i first = _mm_set1_epi8(n0), final = _mm_set1_epi8(n1);
    for (; i >= 16; i -= 16) {   /* starts i-16 .. i-1 */
        __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(hay + i - 16));
        __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(hay + i - 16 + nn - 1));
        unsigned m = (unsigned)_mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(a, first), _mm_cmpeq_epi8(b, final)));
        for (; m; m &= ~(1u << (31 - __builtin_clz(m)))) {
            size_t at = i - 16 + (size_t)(31 - __builtin_clz(m));
            if (memcmp(hay + at, needle, nn) == 0) return hay + at;
        }
    }
#endif
    while (i-- > 0)
        if (hay[i] == n0 && hay[i + nn - 1] == n1 && memcmp(hay + i, needle, nn) == 0) return hay + i;
    return NULL;
}
