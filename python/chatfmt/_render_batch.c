/* _render_batch.c — Template.render_batch: a list of rows rendered on N
 * threads (see "batches on threads" below), the rows read on those threads
 * where the GIL build allows it, rows that repeat rendered from one
 * context, and the figures batch_stats reports. The walk and the library
 * it shares with _speedups.c are in _speedups.h. */
#include "_speedups.h"
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include "_batch_pool.h"
#include "_text_out.h"
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define NOINLINE __attribute__((noinline))
#define ALWAYS_INLINE inline __attribute__((always_inline))

/* ---- batches on threads (Template.render_batch, format_jsonl) ----
 * The rows of a batch are rendered on N threads: the calling thread
 * (holding the GIL) sets up a window of rows, hands it to N - 1 workers
 * and renders beside them. While they render one window it sets up the
 * next and hands it over at once (a thread that finds no row left to
 * claim goes on to it), then makes the str objects of the rows finished,
 * following the rendering threads row by row; the threads rendering the
 * next window fill those str objects with the texts already in their form
 * (see copy_texts), so only the making of Python objects is serial and no
 * thread waits for a window's last rows. A window is set up again only
 * when no worker holds it. */
typedef struct Held { PyObject **o; size_t n, cap; } Held;

bool hold(Walk *w, PyObject *o) {
    Held *h = w->held;
    if (h->n == h->cap) {
        size_t cap = h->cap ? 2 * h->cap : 1024;
        PyObject **p = realloc(h->o, cap * sizeof *p);
        if (!p) {
            w->failed = true;
            return false;
        }
        h->o = p;
        h->cap = cap;
    }
    Py_INCREF(o);
    h->o[h->n++] = o;
    return true;
}

static void release_held(Held *h) {
    for (size_t i = 0; i < h->n; i++) Py_DECREF(h->o[i]);
    h->n = 0;
}

cf_builder_item *grow_items(Walk *w) {
    static cf_builder_item scratch;   /* written after a failure, never read */
    size_t cap = w->cap ? 2 * w->cap : 4096;
    cf_builder_item *p = w->failed ? NULL : realloc(w->items, cap * sizeof *p);
    if (!p) {
        w->failed = true;
        return &scratch;
    }
    w->items = p;
    w->cap = cap;
    return &w->items[w->n++];
}

/* -- render_batch -- */

/* The figures of the last render_batch call made while batch_stats was on
 * (touched only with the GIL held). */
enum { FIGURE_THREADS = 16 };
static struct {
    bool on;
    bool have;                 /* a call was measured */
    unsigned threads;          /* threads the call asked for */
    ThreadFigures thread[FIGURE_THREADS];   /* [0]: the calling thread (its CPU: the whole call) */
    long long wall_ns;         /* the whole call */
    /* the calling thread's CPU time in the work only it does (a loaded
     * machine changes these little, where it changes wall time a lot): */
    long long fill_ns;         /* rows looked up or walked into windows */
    long long drain_ns;        /* the str objects and results of finished windows made (not its waits) */
    long long complete_ns;     /* after the pass: results deferred, rows walked under the GIL */
    unsigned long windows;
    unsigned long placed;      /* texts written into the str made for them before their rows rendered */
} figures;

static inline long long phase_begin(void) { return figures.on ? thread_cpu_ns() : 0; }
static inline void phase_end(long long *total, long long since) {
    if (figures.on) *total += thread_cpu_ns() - since;
}

/* The phases of batch_pass's windows follow one another on the calling
 * thread: each runs from the clock reading that ended the one before
 * (*mark) to now, less the CPU time the thread spent waiting meanwhile
 * (counted as waiting: *waited is the thread's wait_cpu_ns at the last
 * boundary). One reading a boundary: the clock is a system call, near a
 * microsecond on a virtual machine, and two readings a phase were most of
 * what the figures cost, counted themselves as serial work. */
typedef struct PhaseMark { long long at, waited; } PhaseMark;

static inline void phase_lap(long long *total, PhaseMark *m, const Pool *pool) {
    if (!figures.on) return;
    long long now = thread_cpu_ns(), waited = pool->fig ? pool->fig[0].wait_cpu_ns : 0;
    *total += now - m->at - (waited - m->waited);
    m->at = now;
    m->waited = waited;
}

enum { ROW_PENDING, ROW_DECLINED, ROW_TOOLS_ERROR, ROW_OK, ROW_ERROR,
       ROW_UNREAD };   /* read on a worker: outside what it reads, walked under the GIL later */
/* A window holds up to WINDOW_ROWS rows, fewer when their outputs would
 * pass WINDOW_TEXT bytes (as long as the last window's were): the texts
 * are read back under the GIL a window later, from the cache when the
 * window's texts fit in it (about a third of a long row's time went to
 * memory with 512 rows of 6.6 KB). */
enum { WINDOW_ROWS = 512, WINDOW_MIN_ROWS = 16, WINDOW_TEXT = 256 << 10, WINDOW_ITEMS = 1 << 16 };

/* A window's rows are claimed one by one by whichever thread comes, so
 * neighbours are written by different threads: each row has cache lines
 * of its own. A row rendered on a worker passes between two cores twice
 * (filled by the calling thread, rendered by the worker, drained by the
 * calling thread), a few hundred nanoseconds a line that moves: what
 * each side writes is packed into a line of its own, and the error (a
 * KiB) is written only for a row that fails. */
typedef struct BatchRow {
    /* -- written when the window is filled (the calling thread) -- */
    _Alignas(64) size_t first;   /* its items in the window's array (an _Alignas applies to each declarator) */
    size_t count;
    /* the row object (borrowed: the list holds it) */
    PyObject *row;
    const cf_template *t;
    /* The row's context: another row's, shared (a repeated row object), or
     * its own kept for the rows that repeat it (`keep`); NULL otherwise. */
    cf_context *ctx;
    /* A str made before the row renders (see premake_strs), for the
     * length and largest character its row object's last output had: the
     * rendering thread writes an output of that form straight into it
     * while the text is still in its cache, and gives the render buffer
     * back at once (`placed`); another output leaves it unused. */
    PyObject *premade;
    size_t premade_nchars;
    uint32_t premade_maxchar;
    bool premade_stream;      /* written around the cache (see stream_texts_above) */
    bool shared, keep;
    /* -- written by the rendering thread (the state first by the fill) -- */
    _Alignas(64) cf_result res;   /* ROW_OK: the output as rendered */
    /* ROW_OK and `converted`: the output measured for its str (nchars
     * characters, the largest maxchar: `kind` bytes a character), which is
     * written once, straight from res (see copy_text). Otherwise the output
     * is decoded under the GIL. (Converted outputs are at most
     * SLOT_TEXT_MAX bytes.) */
    uint32_t nchars;
    uint32_t ascii_prefix;    /* bytes before the first that is not ASCII */
    uint32_t placed_len;
    uint32_t maxchar;
    unsigned char state;
    unsigned char kind;       /* bytes a character: 1, 2, 4 */
    bool converted;
    bool placed;              /* the output is in premade (res freed; len kept in placed_len) */
    bool ascii_unchecked;     /* an output of premade's length, to be ASCII: tested as it is copied */
    bool widen_unchecked;     /* premade is not ASCII: the output measured and checked as it is written */
    atomic_bool finished;     /* rendered (release): the drain may read it */
    unsigned char renderer;   /* the pool_thread_index of the thread that rendered it */
    /* -- read at every render, written now and then -- */
    /* The render buffer of the slot's last output: its text is in its str
     * before the slot renders again, which gives the buffer back to that
     * thread's cache for the render to take (no buffer allocated a row). */
    _Alignas(64) cf_result spent;
    /* spent's text is in its str: its copy is queued for the threads of the
     * next window; all of that window's copies are taken before the window
     * after it (this slot's next row) is handed over (see batch_pass), but
     * one may still be in the making on another thread */
    atomic_bool spent_copied;
    unsigned char spent_by;   /* the thread that rendered it (see give_back) */
    /* rows read on the rendering threads: a buffer for the row's strings
     * that are not ASCII */
    unsigned char *utf8;
    size_t utf8_cap;
    /* -- ROW_ERROR: the error, copied from the render's -- */
    _Alignas(64) cf_error err;
} BatchRow;

_Static_assert(offsetof(BatchRow, res) == 64 && offsetof(BatchRow, spent) == 128 && offsetof(BatchRow, err) == 192,
               "a BatchRow's parts each in a cache line of its own");

/* Outputs up to this size are measured and copied into their str by the
 * rendering threads (a window's rows then hold at most WINDOW_ROWS times
 * it); a bigger one is decoded under the GIL. */
enum { SLOT_TEXT_MAX = 32 << 10 };

/* Measure a row's fresh output for its str (on the rendering thread,
 * without the GIL): ASCII (most prompts: known from the render without a
 * look, else found by a scan) or the count and the largest of its code
 * points. The text stays in the render's buffer, from which the
 * rendering threads write it into its str in the str's form (copy_text).
 * Output too big or not valid UTF-8 stays unconverted. */
static void convert_output(BatchRow *r) {
    const unsigned char *s = (const unsigned char *)r->res.text;
    size_t n = r->res.len;
    r->converted = false;
    if (n > SLOT_TEXT_MAX) return;
    r->ascii_prefix = result_known_ascii(&r->res) ? n : ascii_prefix_len(s, n);
    if (r->ascii_prefix == n) {
        r->kind = 1;
        r->maxchar = 127;
        r->nchars = n;
    } else {
        size_t nchars;
        uint32_t maxchar;
        if (!utf8_measure(s, n, r->ascii_prefix, &nchars, &maxchar)) return;
        r->kind = maxchar < 0x100 ? 1 : maxchar < 0x10000 ? 2 : 4;
        r->maxchar = maxchar;
        r->nchars = nchars;
    }
    r->converted = true;
}

/* Do two largest characters make str objects of one form (ASCII, other
 * 1-byte, 2-byte, 4-byte: the header and the code units)? */
static inline int str_form(uint32_t maxchar) { return maxchar < 0x80 ? 0 : maxchar < 0x100 ? 1 : maxchar < 0x10000 ? 2 : 4; }
static inline bool same_str_form(uint32_t a, uint32_t b) { return str_form(a) == str_form(b); }
/* The bytes a character of a str whose largest is maxchar. */
static inline int str_kind(uint32_t maxchar) { return maxchar < 0x100 ? 1 : maxchar < 0x10000 ? 2 : 4; }

static TextCopy text_copy_of(const BatchRow *r, PyObject *str, bool stream) {
    return (TextCopy){(const unsigned char *)r->res.text, r->res.len, r->ascii_prefix, PyUnicode_DATA(str), r->kind,
                      stream, NULL};
}

/* The converted output as a str: one allocation and one write. */
static PyObject *converted_to_str(const BatchRow *r, bool stream) {
    PyObject *u = PyUnicode_New((Py_ssize_t)r->nchars, (Py_UCS4)r->maxchar);
    if (u) {
        TextCopy c = text_copy_of(r, u, stream);
        copy_text(&c);
    }
    return u;
}

/* ---- the rows read on the rendering threads ----
 * In a build with the GIL, render_batch's workers read the row objects
 * themselves (the walk was a third of a row's time, all of it serial under
 * the GIL): the calling thread holds the GIL while they read and only
 * waits, reads rows itself, or makes str objects, running no Python code,
 * so no other thread can run Python code and change the rows, and no
 * object is freed (the list holds every row). It lets the GIL go only
 * between two windows, when no worker reads (see PAUSE_NS). The walk
 * here only READS: exact dict/list/tuple/str/int/float/bool/None, through
 * macros and calls that read fields (PyDict_Next, PyLong_AsLongLongAndOverflow
 * on an exact int); no reference count changes, no error indicator, no
 * allocation by Python's allocators, and strings that are not ASCII are
 * turned into UTF-8 here (PyUnicode_AsUTF8AndSize would write a cache into
 * the object). Anything else (a subclass, a non-str key, an int beyond
 * int64, a lone surrogate, a string not in the compact form, data nested
 * deeper than MAX_DEPTH) makes the row go back to the walk under the GIL
 * after the fast pass, which decides as before. This stops being safe in
 * a free-threaded build (Py_GIL_DISABLED: holding no GIL stops nothing
 * there), which keeps the walk under the GIL; and for code that would run
 * Python while workers read: error objects and outputs that need decoding
 * are made after the last window is rendered. */
#ifdef Py_GIL_DISABLED
enum { READ_ON_WORKERS = 0 };
#else
enum { READ_ON_WORKERS = 1 };
#endif
/* One character as UTF-8 at o (the end returned); NULL for a lone surrogate. */
static inline unsigned char *char_to_utf8(uint32_t c, unsigned char *o) {
    if (c < 0x80) {
        *o++ = (unsigned char)c;
    } else if (c < 0x800) {
        *o++ = (unsigned char)(0xC0 | (c >> 6));
        *o++ = (unsigned char)(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
        if (c >= 0xD800 && c <= 0xDFFF) return NULL;
        *o++ = (unsigned char)(0xE0 | (c >> 12));
        *o++ = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
        *o++ = (unsigned char)(0x80 | (c & 0x3F));
    } else {
        *o++ = (unsigned char)(0xF0 | (c >> 18));
        *o++ = (unsigned char)(0x80 | ((c >> 12) & 0x3F));
        *o++ = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
        *o++ = (unsigned char)(0x80 | (c & 0x3F));
    }
    return o;
}

/* The characters of a word of UCS-2 (four, little-endian) as four bytes:
 * each one's low byte. */
static inline uint32_t ucs2_low_bytes(uint64_t x) {
    return (uint32_t)((x & 0xFF) | (x >> 8 & 0xFF00) | (x >> 16 & 0xFF0000) | (x >> 24 & 0xFF000000));
}

/* The room ucs_to_utf8 needs for n characters of a kind. */
static inline size_t utf8_room(int kind, size_t n) {
    return kind == PyUnicode_1BYTE_KIND ? 2 * n + 16 : kind == PyUnicode_2BYTE_KIND ? 3 * n + 8 : 4 * n;
}

/* A compact str's characters as UTF-8 in buf (utf8_room(kind, n) bytes);
 * false for a lone surrogate (no UTF-8). A text that is not ASCII is
 * mostly ASCII still: it goes a block at a time (16 characters of one
 * byte, 8 of two, with SSE2), then a word at a time (8 of one byte, 4 of
 * two): a block or word all ASCII is copied whole; one that is not has its
 * ASCII characters before the first other one copied at once (it is
 * stored whole, the bytes past them written again after), then that one
 * alone; and the last characters (fewer than a word) are the text's last
 * word shifted down, copied at once when all ASCII. A store may pass the
 * text's UTF-8 by up to its size, within the room (a character written so
 * far is at most 2 bytes of one-byte text, 3 of two-byte). */
static bool ucs_to_utf8(int kind, const void *data, size_t n, unsigned char *buf, size_t *len) {
    unsigned char *o = buf;
    size_t i = 0;
    if (kind == PyUnicode_1BYTE_KIND) {
        const Py_UCS1 *s = data;
        const uint64_t high = 0x8080808080808080u;
#if defined(__SSE2__)
        for (; n - i >= 16; i++) {
            __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
            _mm_storeu_si128((__m128i *)(void *)o, v);
            unsigned other = (unsigned)_mm_movemask_epi8(v);
            if (!other) {
                o += 16;
                i += 15;   /* (and the loop's 1) */
                continue;
            }
            size_t ascii = (size_t)__builtin_ctz(other);
            o += ascii;
            i += ascii;
            o = char_to_utf8(s[i], o);
        }
#endif
        for (uint64_t x; n - i >= 8; i++) {
            memcpy(&x, s + i, 8);
            memcpy(o, &x, 8);
            if (!(x & high)) {
                o += 8;
                i += 7;   /* (and the loop's 1) */
                continue;
            }
            size_t ascii = (size_t)__builtin_ctzll(x & high) / 8;
            o += ascii;
            i += ascii;
            o = char_to_utf8(s[i], o);   /* (never NULL: below 0x100) */
        }
        if (i < n && n >= 8) {   /* the last n - i (< 8): the top bytes of the last word */
            uint64_t x;
            memcpy(&x, s + n - 8, 8);
            x >>= 8 * (8 - (n - i));
            if (!(x & high)) {
                memcpy(o, &x, 8);
                o += n - i;
                i = n;
            }
        }
        for (; i < n; i++) o = char_to_utf8(s[i], o);
    } else if (kind == PyUnicode_2BYTE_KIND) {
        const Py_UCS2 *s = data;
        const uint64_t high = 0xFF80FF80FF80FF80u;
#if defined(__SSE2__)
        for (; n - i >= 8; i++) {
            __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
            _mm_storel_epi64((__m128i *)(void *)o, _mm_packus_epi16(v, v));   /* (an ASCII one's byte) */
            /* a byte of each character at or above 0x80 */
            unsigned other = (unsigned)_mm_movemask_epi8(
                _mm_xor_si128(_mm_cmpeq_epi16(_mm_and_si128(v, _mm_set1_epi16((short)0xFF80)), _mm_setzero_si128()),
                              _mm_set1_epi16(-1)));
            if (!other) {
                o += 8;
                i += 7;   /* (and the loop's 1) */
                continue;
            }
            size_t ascii = (size_t)__builtin_ctz(other) / 2;
            o += ascii;
            i += ascii;
            if (!(o = char_to_utf8(s[i], o))) return false;
        }
#endif
        for (uint64_t x; n - i >= 4; i++) {
            memcpy(&x, s + i, 8);
            uint32_t four = ucs2_low_bytes(x);
            memcpy(o, &four, 4);
            if (!(x & high)) {
                o += 4;
                i += 3;   /* (and the loop's 1) */
                continue;
            }
            size_t ascii = (size_t)__builtin_ctzll(x & high) / 16;
            o += ascii;
            i += ascii;
            if (!(o = char_to_utf8(s[i], o))) return false;
        }
        if (i < n && n >= 4) {   /* the last n - i (< 4): the top characters of the last word */
            uint64_t x;
            memcpy(&x, s + n - 4, 8);
            x >>= 16 * (4 - (n - i));
            if (!(x & high)) {
                uint32_t four = ucs2_low_bytes(x);
                memcpy(o, &four, 4);
                o += n - i;
                i = n;
            }
        }
        for (; i < n; i++)
            if (!(o = char_to_utf8(s[i], o))) return false;
    } else {
        const Py_UCS4 *s = data;
        for (; i < n; i++)
            if (!(o = char_to_utf8(s[i], o))) return false;
    }
    *len = (size_t)(o - buf);
    return true;
}

/* A row's read: its items written through a cursor (each function takes
 * it and returns it moved on, NULL when the row is not read here) into a
 * chunk fed to the builder whenever it fills; and the row slot's UTF-8
 * buffer for strings that are not ASCII, filled up to utf8_used since the
 * last feed. */
typedef struct RowRead {
    cf_builder *b;
    cf_builder_item *end;     /* chunk + CHUNK */
    unsigned char **utf8;
    size_t *utf8_cap;
    size_t utf8_used;
    cf_builder_item chunk[CHUNK];
} RowRead;

/* Feed the items before at (the chunk's) to the builder: the chunk is
 * empty again. */
static NOINLINE cf_builder_item *read_flush(RowRead *rr, cf_builder_item *at) {
    if (at != rr->chunk) lib.feed(rr->b, rr->chunk, (size_t)(at - rr->chunk));
    return rr->chunk;
}

/* Room for one more item at *at (a full chunk fed first). */
static ALWAYS_INLINE cf_builder_item *read_room(RowRead *rr, cf_builder_item *at) {
    return at == rr->end ? read_flush(rr, at) : at;
}

enum { UTF8_BUFFER_MIN = 1024 };

/* A str that is not ASCII, converted into the slot's buffer after those
 * before it (a text of strings that are not ASCII costs no feed each); when
 * the buffer is full, the items pointing into it are fed first (the builder
 * copies them) and it starts again. NULL when it is not a compact str,
 * holds a lone surrogate, or no memory is left. */
static NOINLINE cf_builder_item *read_other_str(RowRead *rr, cf_builder_item *at, PyObject *o) {
    size_t n = (size_t)PyUnicode_GET_LENGTH(o);
    if (!PyUnicode_IS_COMPACT(o) || n > ((size_t)-1) / 4 - 16) return NULL;
    int kind = PyUnicode_KIND(o);
    size_t room = utf8_room(kind, n);
    if (room > *rr->utf8_cap - rr->utf8_used) {
        at = read_flush(rr, at);
        rr->utf8_used = 0;
        if (room > *rr->utf8_cap) {
            size_t cap = room < UTF8_BUFFER_MIN ? UTF8_BUFFER_MIN : room;
            unsigned char *p = malloc(cap);   /* (no copy: nothing points in now) */
            if (!p) return NULL;
            free(*rr->utf8);
            *rr->utf8 = p;
            *rr->utf8_cap = cap;
        }
    }
    unsigned char *text = *rr->utf8 + rr->utf8_used;
    size_t len;
    if (!ucs_to_utf8(kind, PyUnicode_DATA(o), n, text, &len)) return NULL;
    rr->utf8_used += len;
    at = read_room(rr, at);
    *at = (cf_builder_item){utf8_kind, len, {.s = (const char *)text}};
    return at + 1;
}

/* PyUnicode_IS_COMPACT_ASCII as one test of the word the flags are in (a
 * test of each bit field costs shifts): the flags' bits found by setting
 * them in a cleared state, which the compiler folds to a constant. */
static inline bool compact_ascii(const PyASCIIObject *a) {
    PyASCIIObject flags;
    memset(&flags.state, 0, sizeof flags.state);
    flags.state.compact = 1;
    flags.state.ascii = 1;
    uint32_t mask, state;
    _Static_assert(sizeof flags.state == sizeof mask, "the str flags are one 32-bit word");
    memcpy(&mask, &flags.state, sizeof mask);
    memcpy(&state, &a->state, sizeof state);
    return (state & mask) == mask;
}

/* A str (its exact type checked) as an item of kind ascii (an ASCII one,
 * the commonest value and every key of chat data, points into the
 * object), else converted (read_other_str). */
static ALWAYS_INLINE cf_builder_item *read_str(RowRead *rr, cf_builder_item *at, PyObject *o,
                                               cf_builder_item_kind ascii) {
    const PyASCIIObject *a = (const PyASCIIObject *)o;
    /* (the characters of a compact ASCII str follow its header) */
    if (!compact_ascii(a)) return read_other_str(rr, at, o);
    at = read_room(rr, at);
    at->kind = ascii;
    at->n = (size_t)a->length;
    at->u.s = (const char *)(a + 1);
    return at + 1;
}

/* None, a bool, an exact int within int64 or a finite float; NULL for
 * anything else (nothing raised: an exact int's digits are only read). */
static NOINLINE cf_builder_item *read_scalar(RowRead *rr, cf_builder_item *at, PyObject *o, PyTypeObject *t) {
    cf_builder_item item = {CF_ITEM_NULL, 0, {0}};
    if (o == Py_None) {
    } else if (t == &PyBool_Type) {
        item = (cf_builder_item){CF_ITEM_BOOL, o == Py_True, {0}};
    } else if (t == &PyLong_Type) {
        long long v;
#if PY_VERSION_HEX < 0x030C0000 && !defined(Py_GIL_DISABLED)
        /* (an int of at most one digit, most of them, read in place: its
         * size is its sign and digit count, as PyLong_AsLongLong reads it) */
        Py_ssize_t size = Py_SIZE(o);
        if (size >= -1 && size <= 1) {
            v = (long long)size * (long long)((PyLongObject *)o)->ob_digit[0];
        } else
#endif
        {
            int overflow;
            v = PyLong_AsLongLongAndOverflow(o, &overflow);
            if (overflow) return NULL;
        }
        item = (cf_builder_item){CF_ITEM_INT, 0, {.i = (int64_t)v}};
    } else if (t == &PyFloat_Type) {
        double d = PyFloat_AS_DOUBLE(o);
        if (!isfinite(d)) return NULL;
        item = (cf_builder_item){CF_ITEM_FLOAT, 0, {.f = d}};
    } else {
        return NULL;
    }
    at = read_room(rr, at);
    *at = item;
    return at + 1;
}

static NOINLINE cf_builder_item *read_dict(RowRead *rr, cf_builder_item *at, PyObject *o, int depth);
static NOINLINE cf_builder_item *read_seq(RowRead *rr, cf_builder_item *at, PyObject *o, PyTypeObject *t, int depth);

/* A str in place (most values: no call), a container by the call that
 * reads its kind, anything else as a scalar. */
static ALWAYS_INLINE cf_builder_item *read_item(RowRead *rr, cf_builder_item *at, PyObject *o, int depth) {
    PyTypeObject *t = Py_TYPE(o);
    if (t == &PyUnicode_Type) return read_str(rr, at, o, ascii_kind);
    if (t == &PyDict_Type) return read_dict(rr, at, o, depth);
    if (t == &PyList_Type || t == &PyTuple_Type) return read_seq(rr, at, o, t, depth);
    return read_scalar(rr, at, o, t);
}

/* A dict's pairs without a header, their keys as items of kind `key` (a
 * compact ASCII one); *tools, when not NULL, set to the value of a "tools"
 * key when one is there. */
static ALWAYS_INLINE cf_builder_item *read_pairs(RowRead *rr, cf_builder_item *at, PyObject *d, int depth,
                                                 cf_builder_item_kind key, PyObject **tools) {
#if READ_DICT_TABLE
    /* (a table of str keys: its entries read in order, as pairs_next; its
     * keys are all exact str, which such a table only holds) */
    PyDictKeysObject *keys = ((PyDictObject *)d)->ma_keys;
    if (!((PyDictObject *)d)->ma_values && keys->dk_kind == DICT_KEYS_UNICODE) {
        const PyDictUnicodeEntry *e = DK_UNICODE_ENTRIES(keys), *end = e + keys->dk_nentries;
        for (; e < end; e++) {
            PyObject *k = e->me_key, *v = e->me_value;
            if (!v) continue;   /* (a deleted entry) */
            if (!(at = read_str(rr, at, k, key)) || !(at = read_item(rr, at, v, depth))) return NULL;
            if (tools && PyUnicode_GET_LENGTH(k) == 5 && PyUnicode_IS_COMPACT_ASCII(k) &&
                memcmp(PyUnicode_DATA(k), "tools", 5) == 0)
                *tools = v;
        }
        return at;
    }
#endif
    Py_ssize_t pos = 0;
    PyObject *k, *v;
    while (PyDict_Next(d, &pos, &k, &v)) {
        if (Py_TYPE(k) != &PyUnicode_Type || !(at = read_str(rr, at, k, key)) || !(at = read_item(rr, at, v, depth)))
            return NULL;
        if (tools && PyUnicode_GET_LENGTH(k) == 5 && PyUnicode_IS_COMPACT_ASCII(k) &&
            memcmp(PyUnicode_DATA(k), "tools", 5) == 0)
            *tools = v;
    }
    return at;
}

/* An exact dict (o) at depth. */
static NOINLINE cf_builder_item *read_dict(RowRead *rr, cf_builder_item *at, PyObject *o, int depth) {
    if (depth >= MAX_DEPTH) return NULL;
    at = read_room(rr, at);
    *at = (cf_builder_item){CF_ITEM_DICT, (size_t)PyDict_GET_SIZE(o), {0}};
    return read_pairs(rr, at + 1, o, depth + 1, key_kind, NULL);
}

/* An exact list or tuple (o, of type t) at depth. */
static NOINLINE cf_builder_item *read_seq(RowRead *rr, cf_builder_item *at, PyObject *o, PyTypeObject *t, int depth) {
    if (depth >= MAX_DEPTH) return NULL;
    Py_ssize_t n = Py_SIZE(o);   /* (a list's or a tuple's length) */
    PyObject **items = t == &PyList_Type ? ((PyListObject *)o)->ob_item : ((PyTupleObject *)o)->ob_item;
    at = read_room(rr, at);
    *at++ = (cf_builder_item){t == &PyTuple_Type ? CF_ITEM_TUPLE : CF_ITEM_LIST, (size_t)n, {0}};
    for (Py_ssize_t i = 0; i < n && at; i++) at = read_item(rr, at, items[i], depth + 1);
    return at;
}

/* A thread's render buffers given back to it by the others (see
 * give_back): a stack linked through the buffers (each link in the first
 * bytes of the text it replaces), pushed by any thread, taken whole by
 * its own. */
typedef struct ReturnStack { _Alignas(64) _Atomic(char *) head; } ReturnStack;

typedef struct BatchWindow {
    Window win;
    ReturnStack *returns;     /* the call's, a thread each (by pool_thread_index); or NULL */
    unsigned nreturns;
    ThreadFigures *fig;       /* the pool's (by pool_thread_index), or NULL */
    /* The window before's texts, copied into the str objects the calling
     * thread makes for them (copies[0..copies_ready) are made) by the
     * threads rendering this window: see batch_drain. */
    TextCopy copies[WINDOW_ROWS];
    _Alignas(64) atomic_size_t copies_ready, copies_claimed;
    Walk walk;                /* items (a growing array) and the strings they point into */
    Held held;
    BatchRow rows[WINDOW_ROWS];
    size_t start;             /* index of its first row in the batch */
    unsigned long gen;        /* which fill of the batch this is */
    const cf_render_options *opt;
    bool chat;
    /* contexts dropped from the repeat cache while rows of this window
     * may render them: freed once the window is finished */
    cf_context **retired;
    size_t nretired, retired_cap;
    const struct BatchArgs *args;   /* rows read on the workers: what the row reads need */
} BatchWindow;

static void render_built(BatchWindow *bw, BatchRow *r, cf_builder *b);
static bool read_row(BatchWindow *bw, BatchRow *r, cf_builder *b);

/* ---- a rendering thread's builder ----
 * With cf_builder_take, a thread builds its rows' contexts with one
 * builder, left empty by each take for the next row (no builder made and
 * freed a row). It is made for one set of limits, and freed when its
 * thread ends (the pool's workers end with each call) or, the calling
 * thread's, at the end of the call (thread_builder_drop). */
typedef struct ThreadBuilder {
    cf_builder *b;
    bool defaults;            /* made for the default limits (lim unused) */
    cf_limits lim;
} ThreadBuilder;

static pthread_key_t thread_builder_key;
static bool thread_builder_keyed;   /* the key exists (made once, at init) */

static void thread_builder_free(void *p) {
    ThreadBuilder *tb = p;
    lib.builder_free(tb->b);
    free(tb);
}

/* (at init, under the GIL; without the key each row makes its builder) */
void thread_builder_setup(void) {
    if (!thread_builder_keyed) thread_builder_keyed = pthread_key_create(&thread_builder_key, thread_builder_free) == 0;
}

static bool limits_same(const cf_limits *a, const cf_limits *b) {
    return a->max_steps == b->max_steps && a->max_recursion == b->max_recursion &&
           a->max_parse_depth == b->max_parse_depth && a->max_output == b->max_output &&
           a->max_string == b->max_string && a->max_items == b->max_items && a->max_memory == b->max_memory &&
           a->max_range == b->max_range && a->max_json_depth == b->max_json_depth &&
           a->max_json_bytes == b->max_json_bytes;
}

/* A builder for a row under these limits (NULL: the defaults): this
 * thread's, or a new one when the library has no take (NULL: no memory). */
static cf_builder *row_builder(const cf_limits *lim) {
    if (!lib.take || !thread_builder_keyed) return lib.builder_new(lim);
    ThreadBuilder *tb = pthread_getspecific(thread_builder_key);
    if (tb && (lim ? !tb->defaults && limits_same(&tb->lim, lim) : tb->defaults)) return tb->b;
    if (tb) {   /* other limits: this call's builder replaces the last one's */
        pthread_setspecific(thread_builder_key, NULL);
        thread_builder_free(tb);
    }
    if (!(tb = malloc(sizeof *tb))) return NULL;
    if (!(tb->b = lib.builder_new(lim))) {
        free(tb);
        return NULL;
    }
    tb->defaults = !lim;
    if (lim) tb->lim = *lim;
    if (pthread_setspecific(thread_builder_key, tb) != 0) {
        thread_builder_free(tb);
        return lib.builder_new(lim);
    }
    return tb->b;
}

/* Is b this thread's kept builder (else the row's own, to free)? */
static bool is_thread_builder(cf_builder *b) {
    if (!lib.take || !thread_builder_keyed) return false;
    ThreadBuilder *tb = pthread_getspecific(thread_builder_key);
    return tb && tb->b == b;
}

/* A row's builder after a read that is not rendered: emptied for the next
 * row, or freed. */
static void row_builder_drop(cf_builder *b) {
    if (is_thread_builder(b)) {
        cf_error ignored;
        lib.take(b, &ignored);
    } else {
        lib.builder_free(b);
    }
}

/* At the end of a call, the calling thread's builder (the workers' go with
 * their threads). */
static void thread_builder_drop(void) {
    if (!thread_builder_keyed) return;
    ThreadBuilder *tb = pthread_getspecific(thread_builder_key);
    if (!tb) return;
    pthread_setspecific(thread_builder_key, NULL);
    thread_builder_free(tb);
}

/* Copy the texts ready so far (any thread; the caller also after the
 * window is finished, for those no worker took): the copy into a fresh
 * str faults its pages in, at microseconds a page on a virtual machine,
 * which on the calling thread alone was serial work of every row. */
static size_t copy_texts(Window *win) {
    BatchWindow *bw = (BatchWindow *)win;
    size_t done = 0, j = atomic_load_explicit(&bw->copies_claimed, memory_order_relaxed);
    while (j < atomic_load_explicit(&bw->copies_ready, memory_order_acquire)) {
        if (!atomic_compare_exchange_weak(&bw->copies_claimed, &j, j + 1)) continue;   /* (j reloaded) */
        copy_text(&bw->copies[j]);
        atomic_store_explicit(bw->copies[j].copied, true, memory_order_release);
        done++;
        j = atomic_load_explicit(&bw->copies_claimed, memory_order_relaxed);
    }
    return done;
}

static bool spent_copied(void *arg) {
    return atomic_load_explicit(&((BatchRow *)arg)->spent_copied, memory_order_acquire);
}

/* A failed render's error kept in its row. */
static void error_keep(cf_error *to, const cf_error *from) {
    to->kind = from->kind;
    to->line = from->line;
    to->column = from->column;
    to->offset = from->offset;
    size_t n = strnlen(from->message, sizeof from->message - 1);
    memcpy(to->message, from->message, n);
    to->message[n] = '\0';
}

/* ---- render buffers kept by the thread that wrote them ----
 * A row slot's spent buffer is given back before the slot renders again,
 * into the library's cache of the thread that gives it back, where the
 * render takes it. The slot's last row was rendered by either thread, so
 * half the time that was a buffer the other core had written: every line
 * of the new output then came from the other core's cache (a hundred
 * lines for 6 KiB). A buffer another thread rendered goes back to that
 * thread instead, which gives it back into its own cache before its next
 * render. */
static void give_back(ReturnStack *to, char *text) {
    char *head = atomic_load_explicit(&to->head, memory_order_relaxed);
    do {
        memcpy(text, &head, sizeof head);
    } while (!atomic_compare_exchange_weak_explicit(&to->head, &head, text, memory_order_release,
                                                    memory_order_relaxed));
}

/* The buffers given back to this thread, into its cache (the library
 * keeps the biggest; the others are freed into this thread's heap). */
static void take_returns(ReturnStack *mine) {
    if (!atomic_load_explicit(&mine->head, memory_order_relaxed)) return;
    char *text = atomic_exchange_explicit(&mine->head, NULL, memory_order_acquire);
    while (text) {
        char *next;
        memcpy(&next, text, sizeof next);
        cf_result r;
        memset(&r, 0, sizeof r);
        r.text = text;
        lib.result_free(&r);
        text = next;
    }
}

/* How spent buffers go back (the module's give_back_mode, set under the
 * GIL between calls): GIVE_BACK_HERE, into the cache of the thread that
 * renders the slot's next row, whichever rendered it (a way to measure
 * what the others save); GIVE_BACK_TO_RENDERER, the usual way;
 * GIVE_BACK_EVERY, every one through its thread's stack, this thread's
 * own too (a test mode; in a call of more than one thread). */
atomic_int give_back_mode = GIVE_BACK_TO_RENDERER;

/* The slot's spent buffer given back, once its copy is made: to the
 * thread that rendered it, or into this thread's cache. */
static void spent_give_back(BatchWindow *bw, BatchRow *r) {
    while (!spin_until(spent_copied, r, NULL)) {
    }
    unsigned me = pool_thread_index;
    int mode = atomic_load_explicit(&give_back_mode, memory_order_relaxed);
    bool back = mode == GIVE_BACK_EVERY || (mode == GIVE_BACK_TO_RENDERER && r->spent_by != me);
    if (back && r->spent_by < bw->nreturns && r->spent.len >= sizeof(char *)) {
        if (bw->fig) bw->fig[me].given_back++;
        if (r->spent.spans) {   /* (freed here: only the text is given back) */
            cf_result spans;
            memset(&spans, 0, sizeof spans);
            spans.spans = r->spent.spans;
            lib.result_free(&spans);
        }
        give_back(&bw->returns[r->spent_by], r->spent.text);
        memset(&r->spent, 0, sizeof r->spent);
    } else {
        lib.result_free(&r->spent);
    }
    if (me < bw->nreturns) take_returns(&bw->returns[me]);
}

/* At the end of a call (no worker left): what no thread took. */
static void returns_free(ReturnStack *returns, unsigned n) {
    for (unsigned k = 0; returns && k < n; k++) take_returns(&returns[k]);
}

/* Render row r from ctx and turn its output into its str's form. */
static void render_row(BatchWindow *bw, BatchRow *r, const cf_context *ctx) {
    if (r->spent.text) spent_give_back(bw, r);
    r->renderer = (unsigned char)pool_thread_index;
    r->res.nchars = 0;   /* (a library without the field leaves it: nothing known) */
    cf_error err;   /* (the render writes its head each time: kept off the row's lines unless it fails) */
    bool ok = (bw->chat ? lib.render_chat : lib.render)(r->t, ctx, bw->opt, &r->res, &err);
    r->state = ok ? ROW_OK : ROW_ERROR;
    r->ascii_unchecked = r->widen_unchecked = false;
    if (!ok) {
        error_keep(&r->err, &err);
        return;
    }
    if (r->premade && r->premade_maxchar < 0x80 && r->res.len == r->premade_nchars && !result_known_ascii(&r->res)) {
        r->ascii_unchecked = true;   /* (see batch_settle) */
        r->converted = false;
        return;
    }
    if (r->premade && r->premade_maxchar >= 0x80 && !r->premade_stream && r->res.len >= r->premade_nchars &&
        r->res.len <= SLOT_TEXT_MAX && !result_known_ascii(&r->res)) {
        r->widen_unchecked = true;   /* (see batch_settle) */
        r->converted = false;
        return;
    }
    convert_output(r);
}

static void batch_row_body(BatchWindow *bw, BatchRow *r) {
    if (r->state != ROW_PENDING) return;
    if (r->shared) {   /* a row object seen before: its context is built */
        render_row(bw, r, r->ctx);
        return;
    }
    cf_builder *b = row_builder(bw->opt ? bw->opt->limits : NULL);
    if (!b) {
        r->state = ROW_DECLINED;   /* out of memory: the general path reports it */
        return;
    }
    if (bw->args) {
        if (!read_row(bw, r, b)) {
            row_builder_drop(b);
            if (r->state == ROW_PENDING) r->state = ROW_UNREAD;
            return;
        }
    } else {
        lib.feed(b, bw->walk.items + r->first, r->count);
    }
    render_built(bw, r, b);
}

static void batch_row(Window *win, size_t i) {
    BatchWindow *bw = (BatchWindow *)win;
    batch_row_body(bw, &bw->rows[i]);
}

/* r's output, written into its premade str as it was checked, said so:
 * the str's form and length, and its render buffer given back at once. */
static inline void place_written(BatchRow *r, int kind, uint32_t maxchar, size_t nchars, size_t ascii_prefix) {
    r->converted = true;
    r->kind = (unsigned char)kind;
    r->maxchar = maxchar;
    r->nchars = (uint32_t)nchars;
    r->ascii_prefix = (uint32_t)ascii_prefix;
    r->placed_len = (uint32_t)r->res.len;
    r->placed = true;
    lib.result_free(&r->res);
}

/* A rendered row's output written into the str made for it when it has
 * that str's form (see premake_strs), its render buffer given back at once
 * (still in this thread's cache: the next render takes it); the streamed
 * writes drain while the thread renders its next row (see Window.settle). */
static void batch_settle(Window *win, size_t i) {
    BatchRow *r = &((BatchWindow *)win)->rows[i];
    if (r->ascii_unchecked) {   /* copied and tested in one pass (not scanned first) */
        r->ascii_unchecked = false;
        TextCopy c = {(const unsigned char *)r->res.text, r->res.len, r->res.len, PyUnicode_DATA(r->premade), 1,
                      r->premade_stream, NULL};
        if (!copy_ascii_checked(&c)) {   /* (another form: premade is left unused) */
            convert_output(r);
            return;
        }
        place_written(r, 1, 127, r->res.len, r->res.len);
        return;
    }
    if (r->widen_unchecked) {   /* written, measured and checked in one pass (no scan, no measure first) */
        r->widen_unchecked = false;
        int kind = str_kind(r->premade_maxchar);
        size_t nchars;
        uint32_t bits;
        if (!widen_checked((const unsigned char *)r->res.text, r->res.len, kind, PyUnicode_DATA(r->premade),
                           (size_t)PyUnicode_GET_LENGTH(r->premade), &nchars, &bits) ||
            nchars != r->premade_nchars || !same_str_form(bits, r->premade_maxchar)) {
            convert_output(r);   /* (another form: premade is left unused) */
            return;
        }
        place_written(r, kind, r->premade_maxchar, nchars, 0);   /* (the str's maxchar: bits has its form only) */
        return;
    }
    if (r->state != ROW_OK || !r->premade || !r->converted || r->nchars != r->premade_nchars ||
        !same_str_form(r->maxchar, r->premade_maxchar))
        return;
    TextCopy c = text_copy_of(r, r->premade, r->premade_stream);
    copy_text_unfenced(&c);
    r->placed_len = r->res.len;
    r->placed = true;
    lib.result_free(&r->res);
}

static void batch_publish(Window *win, size_t i) {
    text_fence();   /* (the row's streamed writes, if any, before it is said finished) */
    atomic_store_explicit(&((BatchWindow *)win)->rows[i].finished, true, memory_order_release);
}

/* Finish the row's builder and render it. */
static void render_built(BatchWindow *bw, BatchRow *r, cf_builder *b) {
    if (lib.failed(b)) {
        row_builder_drop(b);
        r->state = ROW_DECLINED;
        return;
    }
    cf_error err;   /* (a context that is not made declines the row: the general path says why) */
    cf_context *ctx = is_thread_builder(b) ? lib.take(b, &err) : lib.finish(b, &err);
    if (!ctx) {
        r->state = ROW_DECLINED;
        return;
    }
    render_row(bw, r, ctx);
    if (r->keep) r->ctx = ctx;   /* (the drain caches it) */
    else lib.context_free(ctx);
}

/* ---- rows that repeat ----
 * A batch often holds the same row object many times (a list built as
 * [conversation] * n, or rows cycled from a few): its variables are the
 * same, so its context is built once and shared by the later rows (a
 * context renders from many threads at once). Keyed by object identity
 * within one call: a row is read once, where it first repeats, and the
 * rows are not expected to change while the call reads them (as any
 * reader of them on other threads). The cache holds each row object it
 * keys (its address is then not reused). Only a row seen a second time
 * keeps its context, so a batch of distinct rows builds and frees each
 * context on its rendering thread as before. */
typedef struct RepeatEntry {
    PyObject *row;            /* held; NULL: empty */
    cf_context *ctx;          /* built, or NULL */
    const cf_template *t;
    unsigned long used;       /* the last window that renders ctx */
    bool pending;             /* a row in flight is to bring ctx */
    /* the row's last output made into a str from the rendering threads'
     * form (converted): its characters and largest one, the form its next
     * output is expected in (see premake_strs) */
    bool out_known;
    uint32_t out_maxchar;
    size_t out_nchars, out_len;   /* (and its UTF-8 bytes) */
} RepeatEntry;

typedef struct RepeatCache {
    RepeatEntry *e;
    size_t mask;              /* entries - 1 (a power of two) */
    unsigned long gen;        /* fills so far */
} RepeatCache;

enum { REPEAT_MAX = 4096 };

static bool repeat_init(RepeatCache *c, size_t nrows) {
    size_t n = 16;
    while (n < nrows && n < REPEAT_MAX) n *= 2;
    c->e = calloc(n, sizeof *c->e);
    c->mask = n - 1;
    c->gen = 0;
    return c->e != NULL;
}

static RepeatEntry *repeat_slot(RepeatCache *c, PyObject *row) {
    uint64_t h = (uint64_t)(uintptr_t)row * 0x9E3779B97F4A7C15ull;
    return &c->e[(h >> 32) & c->mask];
}

static bool retire(BatchWindow *bw, cf_context *ctx) {
    if (bw->nretired == bw->retired_cap) {
        size_t cap = bw->retired_cap ? 2 * bw->retired_cap : 64;
        cf_context **p = realloc(bw->retired, cap * sizeof *p);
        if (!p) return false;
        bw->retired = p;
        bw->retired_cap = cap;
    }
    bw->retired[bw->nretired++] = ctx;
    return true;
}

static void free_retired(BatchWindow *bw) {
    for (size_t i = 0; i < bw->nretired; i++) lib.context_free(bw->retired[i]);
    bw->nretired = 0;
}

/* Set row r of the window being filled (bw) from the cache: true when its
 * context is there (shared: nothing to walk). Otherwise r->keep says
 * whether to keep the context it builds. False + r->shared false when
 * memory for the bookkeeping runs out (the row is then built as usual). */
static bool repeat_lookup(RepeatCache *c, BatchWindow *bw, BatchRow *r, PyObject *row) {
    RepeatEntry *e = repeat_slot(c, row);
    r->shared = r->keep = false;
    r->ctx = NULL;
    if (e->row == row) {
        if (e->ctx) {
            r->ctx = e->ctx;
            r->t = e->t;
            r->shared = true;
            e->used = bw->gen;
            return true;
        }
        if (!e->pending) r->keep = e->pending = true;   /* seen twice: keep this one's context */
        return false;
    }
    /* another object's entry, or none: this row takes it; a context rows in
     * flight may render (this window's or the one before) waits for the
     * end of this window, which finishes last */
    if (e->ctx) {
        if (e->used + 1 >= bw->gen) {
            if (!retire(bw, e->ctx)) return false;   /* (the entry stays as it was) */
        } else {
            lib.context_free(e->ctx);
        }
    }
    Py_XDECREF(e->row);
    e->row = new_ref(row);
    e->ctx = NULL;
    e->pending = false;
    e->out_known = false;
    return false;
}

/* A drained row's kept context into the cache, or freed when its entry
 * went to another row meanwhile. */
static void repeat_store(RepeatCache *c, BatchRow *r, PyObject *row) {
    if (!r->keep) return;
    RepeatEntry *e = repeat_slot(c, row);
    bool mine = e->row == row && e->pending && !e->ctx;
    if (mine) e->pending = false;
    if (r->ctx) {
        if (mine) {
            e->ctx = r->ctx;
            e->t = r->t;
            e->used = 0;   /* (no window renders it yet) */
        } else {
            lib.context_free(r->ctx);
        }
    }
    r->ctx = NULL;
    r->keep = false;
}

/* After the last window: every context and row the cache holds. */
static void repeat_free(RepeatCache *c) {
    if (!c->e) return;
    for (size_t i = 0; i <= c->mask; i++) {
        if (c->e[i].ctx) lib.context_free(c->e[i].ctx);
        Py_XDECREF(c->e[i].row);
    }
    free(c->e);
    c->e = NULL;
}

/* A row whose result is made after the last window (making it could run
 * Python code while workers read rows): an output to decode, an error, or
 * a row to walk under the GIL (ROW_UNREAD). */
typedef struct Deferred {
    size_t index;
    int state;
    cf_result res;            /* ROW_OK */
    cf_error_kind kind;       /* ROW_ERROR: the error, its message copied */
    int line, column;
    size_t offset;
    char *message;
} Deferred;

/* A failed row's exception object: make_error(kind, message, line,
 * column, offset), its arguments passed as they are (no tuple). */
static PyObject *error_object(PyObject *make_error, int kind, const char *message, int line, int column,
                              size_t offset) {
    PyObject *args[6] = {NULL, PyLong_FromLong(kind), PyUnicode_DecodeUTF8(message, (Py_ssize_t)strlen(message), "replace"),
                         PyLong_FromLong(line), PyLong_FromLong(column), PyLong_FromSize_t(offset)};
    PyObject *o = NULL;
    if (args[1] && args[2] && args[3] && args[4] && args[5])
        o = PyObject_Vectorcall(make_error, args + 1, 5 | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
    for (int k = 1; k < 6; k++) Py_XDECREF(args[k]);
    return o;
}

/* The error object made last, and what it was made of: rows that fail
 * alike (a row object that comes again fails again) get copies of it, the
 * exception made by make_error once. A copy is a new object of its type
 * with its args and a copy of its attributes: what make_error's class
 * __init__ leaves (ChatfmtError's sets args and five attributes), without
 * running it again (a Python call, most of a failing row's cost). Only an
 * exception made by BaseException's own constructor, with no fields but
 * BaseException's, is copied; others are made by make_error each. */
typedef struct LastError {
    PyObject *made;           /* or NULL */
    int kind, line, column;
    size_t offset;
    char *message;
} LastError;

static void last_error_clear(LastError *e) {
    Py_CLEAR(e->made);
    free(e->message);
    e->message = NULL;
}

static PyObject *error_copy(PyObject *made) {
    PyTypeObject *t = Py_TYPE(made), *solid = t;
    while (solid->tp_base && (solid->tp_flags & Py_TPFLAGS_HEAPTYPE)) solid = solid->tp_base;
    /* (a builtin base with fields of its own, AttributeError's name and
     * obj, OSError's errno, keeps attributes out of the dict) */
    if (t->tp_new != ((PyTypeObject *)PyExc_Exception)->tp_new ||
        solid->tp_basicsize != ((PyTypeObject *)PyExc_Exception)->tp_basicsize)
        return NULL;
    PyObject *args = PyObject_GetAttrString(made, "args"), *attrs = PyObject_GenericGetDict(made, NULL);
    PyObject *o = args && attrs && PyTuple_CheckExact(args) && PyDict_CheckExact(attrs) ? t->tp_new(t, args, NULL) : NULL;
    PyObject *copy = o ? PyDict_Copy(attrs) : NULL;
    if (copy && PyObject_GenericSetDict(o, copy, NULL) < 0) Py_CLEAR(o);
    Py_XDECREF(copy);
    Py_XDECREF(args);
    Py_XDECREF(attrs);
    if (!o) PyErr_Clear();   /* (made by make_error after all) */
    return o;
}

/* The error object of a failing row: a copy of the last one when it failed
 * alike, else make_error's (kept as the last one). */
static PyObject *error_object_alike(LastError *last, PyObject *make_error, int kind, const char *message, int line,
                                    int column, size_t offset) {
    if (last->made && last->kind == kind && last->line == line && last->column == column && last->offset == offset &&
        strcmp(last->message, message) == 0) {
        PyObject *o = error_copy(last->made);
        if (o) return o;
    }
    PyObject *o = error_object(make_error, kind, message, line, column, offset);
    if (!o) return NULL;
    last_error_clear(last);
    if ((last->message = strdup(message))) {
        last->made = new_ref(o);
        last->kind = kind;
        last->line = line;
        last->column = column;
        last->offset = offset;
    }
    return o;
}

typedef struct BatchArgs {
    PyObject *rows, *common, *tools_key, *messages_key, *tools_error, *make_error;
    const cf_template *plain, *with_tools;
    RepeatCache repeat;
    size_t window_rows;       /* rows a window takes (see WINDOW_TEXT) */
    bool read_on_workers;     /* this pass's rows are read by the rendering threads */
    Deferred *deferred;
    size_t ndeferred, deferred_cap;
    size_t texts_made, text_bytes_made;   /* the converted texts made into str so far, and their bytes */
    LastError last_error;
} BatchArgs;

/* Texts smaller than this are written as usual whatever the call's size:
 * their str objects come from Python's small-object pools (up to 512
 * bytes), which reuse memory that is still in the cache, or are a few
 * lines of which the partial ones at either end are a large share. */
enum { STREAM_TEXT_MIN = 1024 };

/* Is a text of `bytes` to be written around the cache: one of the bigger
 * ones of a call whose texts, at the size of those made so far, come to
 * more than the cache holds (see stream_texts_above)? */
static bool stream_bytes(const BatchArgs *a, size_t bytes) {
    size_t mean = a->texts_made ? a->text_bytes_made / a->texts_made : bytes;
    return (bytes >= STREAM_TEXT_MIN || !stream_texts_above) &&   /* (0: every text, a test setting) */
           mean * (size_t)PyList_GET_SIZE(a->rows) > stream_texts_above;
}

/* ... r's text, counted among those made. */
static bool stream_text(BatchArgs *a, const BatchRow *r) {
    size_t bytes = r->nchars * r->kind;
    a->texts_made++;
    a->text_bytes_made += bytes;
    return stream_bytes(a, bytes);
}

/* Read row r into b on a rendering thread (see READ_ON_WORKERS): false
 * when the row is outside what is read here (or memory ran out), or for a
 * tools error (r->state set). */
static bool read_row(BatchWindow *bw, BatchRow *r, cf_builder *b) {
    const BatchArgs *a = bw->args;
    RowRead rr;   /* (fields one by one: an initializer would clear the chunk, 6 KiB a row) */
    rr.b = b;
    rr.end = rr.chunk + CHUNK;
    rr.utf8 = &r->utf8;
    rr.utf8_cap = &r->utf8_cap;
    rr.utf8_used = 0;
    PyObject *row = r->row, *tools = NULL;
    PyTypeObject *t = Py_TYPE(row);
    cf_builder_item *at = rr.chunk;
    /* (a row's keys may repeat the common variables', and win: placed
     * after a look at those before them; without any, each is new) */
    cf_builder_item_kind after_common = PyDict_GET_SIZE(a->common) ? ascii_kind : key_kind;
    if (t == &PyDict_Type) {
        *at++ = (cf_builder_item){CF_ITEM_DICT, (size_t)(PyDict_GET_SIZE(a->common) + PyDict_GET_SIZE(row)), {0}};
        if ((at = read_pairs(&rr, at, a->common, 1, key_kind, &tools))) at = read_pairs(&rr, at, row, 1, after_common, &tools);
    } else if (t == &PyList_Type || t == &PyTuple_Type) {   /* a conversation */
        *at++ = (cf_builder_item){CF_ITEM_DICT, (size_t)PyDict_GET_SIZE(a->common) + 1, {0}};
        if ((at = read_pairs(&rr, at, a->common, 1, key_kind, &tools)) && (at = read_str(&rr, at, a->messages_key, after_common)))
            at = read_seq(&rr, at, row, t, 1);
    } else {
        at = NULL;
    }
    if (!at) return false;
    bool with_tools = tools && tools != Py_None;
    if (with_tools && a->tools_error != Py_None) {
        r->state = ROW_TOOLS_ERROR;
        return false;
    }
    r->t = with_tools && a->with_tools ? a->with_tools : a->plain;
    read_flush(&rr, at);
    return true;
}

/* The value `tools` has for this row (borrowed; NULL when absent). */
static PyObject *row_tools(const BatchArgs *a, PyObject *row) {
    PyObject *v = PyDict_CheckExact(row) ? PyDict_GetItemWithError(row, a->tools_key) : NULL;
    if (!v && !PyErr_Occurred()) v = PyDict_GetItemWithError(a->common, a->tools_key);
    return v;
}

/* A dict's pairs, without a header (the caller counted them). */
static bool walk_pairs(Walk *w, PyObject *d) {
    Pairs pairs;
    pairs_start(&pairs, d);
    PyObject *k, *v;
    while (pairs_next(&pairs, &k, &v))
        if (Py_TYPE(k) != &PyUnicode_Type || !push_unicode(w, k) || !walk(w, v, 1)) return false;
    return true;
}

/* Walk rows [start, end) of the batch into bw, as many as fit; returns the
 * end of what was walked, or (size_t)-1 with an exception set. */
static size_t batch_fill(BatchWindow *bw, BatchArgs *a, size_t start, size_t end) {
    Walk *w = &bw->walk;
    w->n = 0;
    w->failed = false;
    bw->start = start;
    bw->gen = ++a->repeat.gen;
    bw->args = a->read_on_workers ? a : NULL;
    atomic_store(&bw->copies_ready, 0);   /* (the last fill's were copied when it was finished) */
    atomic_store(&bw->copies_claimed, 0);
    size_t k = 0;
    for (; start + k < end && k < a->window_rows && w->n < WINDOW_ITEMS; k++) {
        PyObject *row = PyList_GET_ITEM(a->rows, (Py_ssize_t)(start + k));
        BatchRow *r = &bw->rows[k];
        r->first = w->n;
        r->state = ROW_PENDING;
        atomic_store_explicit(&r->finished, false, memory_order_relaxed);   /* (published with the window) */
        r->row = row;
        if (repeat_lookup(&a->repeat, bw, r, row) || a->read_on_workers) {   /* (no Python code runs here) */
            r->count = 0;
            continue;
        }
        PyObject *tools = row_tools(a, row);
        if (PyErr_Occurred()) return (size_t)-1;
        bool with_tools = tools && tools != Py_None;
        r->t = with_tools && a->with_tools ? a->with_tools : a->plain;
        bool walked;
        if (with_tools && a->tools_error != Py_None) {
            r->state = ROW_TOOLS_ERROR;
            walked = true;
        } else if (PyDict_CheckExact(row)) {
            next_item(w, CF_ITEM_DICT)->n = (size_t)(PyDict_GET_SIZE(a->common) + PyDict_GET_SIZE(row));
            walked = walk_pairs(w, a->common) && walk_pairs(w, row);
        } else if (PyList_CheckExact(row) || PyTuple_CheckExact(row)) {   /* a conversation */
            next_item(w, CF_ITEM_DICT)->n = (size_t)PyDict_GET_SIZE(a->common) + 1;
            walked = walk_pairs(w, a->common) && push_unicode(w, a->messages_key) && walk(w, row, 1);
        } else {
            walked = false;
        }
        if (w->failed) {
            PyErr_NoMemory();
            return (size_t)-1;
        }
        if (!walked) r->state = ROW_DECLINED;
        r->count = w->n - r->first;
    }
    bw->win.nrows = k;
    return start + k;
}

/* The window's results into out[start...], as str, error objects (made by
 * make_error(kind, message, line, column, offset)), the tools error, or
 * DECLINED; frees the outputs. False with an exception set. */
static bool defer_row(BatchArgs *a, BatchRow *r, size_t index) {
    if (a->ndeferred == a->deferred_cap) {
        size_t cap = a->deferred_cap ? 2 * a->deferred_cap : 64;
        Deferred *p = realloc(a->deferred, cap * sizeof *p);
        if (!p) return false;
        a->deferred = p;
        a->deferred_cap = cap;
    }
    Deferred *d = &a->deferred[a->ndeferred];
    memset(d, 0, sizeof *d);
    d->index = index;
    d->state = r->state;
    if (r->state == ROW_ERROR) {
        if (!(d->message = strdup(r->err.message))) return false;
        d->kind = r->err.kind;
        d->line = r->err.line;
        d->column = r->err.column;
        d->offset = r->err.offset;
    } else if (r->state == ROW_OK) {
        d->res = r->res;   /* (taken over) */
        memset(&r->res, 0, sizeof r->res);
    }
    a->ndeferred++;
    return true;
}

/* What a drained row's output says of its row object's next one (see
 * premake_strs): a converted output's form, or nothing. */
static void remember_output(RepeatCache *c, const BatchRow *r, PyObject *row) {
    RepeatEntry *e = repeat_slot(c, row);
    if (e->row != row) return;
    e->out_known = r->state == ROW_OK && r->converted;
    e->out_nchars = r->nchars;
    e->out_maxchar = r->maxchar;
    e->out_len = r->placed ? r->placed_len : r->res.len;
    if (premade_missed == 2) {
        e->out_nchars = e->out_len;
        e->out_maxchar = 127;
    }
    if (premade_missed == 3)   /* the next form up, the same length (astral: Latin-1) */
        e->out_maxchar = e->out_maxchar < 0x80      ? 0xFF
                         : e->out_maxchar < 0x100   ? 0xFFFF
                         : e->out_maxchar < 0x10000 ? 0x10FFFF
                                                    : 0xFF;
    if (premade_missed == 4 && e->out_nchars) e->out_nchars--;
}

static bool row_finished(void *arg) {
    return atomic_load_explicit(&((BatchRow *)arg)->finished, memory_order_acquire);
}

/* pool_wait with the GIL let go when the workers do not read rows. */
static void caller_wait(Pool *p, BatchWindow *bw, bool (*ready)(void *), const BatchArgs *a) {
    if (a->read_on_workers) {
        pool_wait(p, &bw->win, ready);
    } else {
        Py_BEGIN_ALLOW_THREADS
        pool_wait(p, &bw->win, ready);
        Py_END_ALLOW_THREADS
    }
}

/* Wait until row r of bw is rendered: the drain follows the rendering
 * threads row by row, so that none waits for a window's last rows (the
 * threads go on to the next window meanwhile). A long row is waited for
 * asleep, until the window is finished, with the GIL let go when the
 * workers do not read rows. */
static void wait_row(Pool *p, BatchWindow *bw, BatchRow *r, const BatchArgs *a) {
    if (row_finished(r)) return;
    ThreadFigures *f = p->fig;
    long long since = wait_begin(f);
    bool seen = spin_until(row_finished, r, f);
    wait_end(f, since, false, 0);
    if (!seen) caller_wait(p, bw, window_finished, a);
}

/* Where malloc will write next, prefetched for writing while the str
 * objects before it are made. A str of more than 512 bytes comes from
 * malloc, which (glibc's, from memory freed by the last batch or from the
 * top) carves each next to the one before and writes the header of what
 * is left right after it: a line no one has touched since the last batch,
 * whose miss the next allocation waited for (most of malloc's time in a
 * batch of long texts). A guess, harmless when wrong: the chunks ahead are
 * taken to be the sizes of the next rows' str objects, each rounded as
 * glibc rounds them; rows that fail make small objects only. */
enum { PREFETCH_ROWS = 4, PREFETCH_SCAN = 16, SMALL_OBJECT_MAX = 512 };

static size_t str_chunk(size_t nchars, uint32_t maxchar) {
    size_t header = maxchar < 128 ? sizeof(PyASCIIObject) : sizeof(PyCompactUnicodeObject);
    size_t request = header + (nchars + 1) * (size_t)(maxchar < 0x100 ? 1 : maxchar < 0x10000 ? 2 : 4);
    if (request <= SMALL_OBJECT_MAX) return 0;   /* (Python's small-object pools) */
    return (request + sizeof(size_t) + 15) & ~(size_t)15;
}

static size_t str_malloc_chunk(const BatchRow *r) { return str_chunk(r->nchars, r->maxchar); }

/* Prefetch for writing malloc's header of the chunk at `at` (its size, fd
 * and bk). */
static inline void prefetch_chunk_header(uintptr_t at) {
    uintptr_t first = at + sizeof(size_t), last = at + 4 * sizeof(size_t) - 1;
    __builtin_prefetch((const void *)first, 1, 3);
    if ((first ^ last) >> 6) __builtin_prefetch((const void *)last, 1, 3);   /* (across a line) */
}

static void prefetch_str_chunks(const BatchWindow *bw, size_t i, const PyObject *made) {
    size_t chunk = str_malloc_chunk(&bw->rows[i]);
    if (!chunk) return;
    uintptr_t at = (uintptr_t)made - 2 * sizeof(size_t) + chunk;   /* (the chunk's header is before the object) */
    size_t ahead = 0;
    for (size_t j = i + 1; j < bw->win.nrows && j <= i + PREFETCH_SCAN && ahead < PREFETCH_ROWS; j++) {
        const BatchRow *r = &bw->rows[j];
        if (!row_finished((void *)r) || (r->state == ROW_OK && !r->converted)) return;   /* (size unknown) */
        if (r->state != ROW_OK) continue;
        size_t c = str_malloc_chunk(r);
        if (c) {
            at += c;
            ahead++;
        }
    }
    if (ahead < PREFETCH_ROWS) return;
    prefetch_chunk_header(at);
}

/* A test mode (the module's premade_miss), touched under the GIL: 1,
 * every str made before its row is taken for the wrong form, and left
 * unused; 2, every one is made ASCII, as long as its row's last output in
 * UTF-8 (an output that is not ASCII is then found so as it is copied);
 * 3, every one made in the next form up as long as the last output (found
 * wrong as it is written); 4, every one a character short (the write stops
 * at its end). */
int premade_missed;

/* ---- str objects made before their rows render ----
 * A row object that comes again in a call renders the same text again
 * (its context is the same; only what a template reads of the clock may
 * differ). Its str is made before the row renders, when the window is
 * filled, in the form of its last output; the rendering thread writes an
 * output of that form into it at once, from the render buffer it just
 * wrote (in its first-level cache), and gives that buffer back for its
 * next render. Otherwise the text waits in its buffer for the drain to
 * make its str and for a thread of the next window to copy it (see
 * copy_texts), a window later: by then the buffers of two windows'
 * rows had gone out of the first-level cache, and each render wrote
 * into one that had. An output of another form leaves the str unused
 * (freed by the drain) and takes that way. */
static void premake_strs(BatchWindow *bw, BatchArgs *a) {
    size_t chunk[WINDOW_ROWS];   /* each row's str as malloc will carve it (0: a small object) */
    bool known[WINDOW_ROWS];     /* its output's form is expected */
    for (size_t k = 0; k < bw->win.nrows; k++) {
        BatchRow *r = &bw->rows[k];
        r->placed = false;
        r->premade = NULL;
        chunk[k] = 0;
        known[k] = false;
        if (r->state != ROW_PENDING) continue;
        const RepeatEntry *e = repeat_slot(&a->repeat, r->row);
        if (e->row != r->row || !e->out_known) continue;
        r->premade_nchars = e->out_nchars;
        r->premade_maxchar = e->out_maxchar;
        chunk[k] = str_chunk(e->out_nchars, e->out_maxchar);
        known[k] = true;
    }
    /* made one after the other, malloc writing each next chunk's header a
     * few rows ahead of the line prefetched for it (see prefetch_str_chunks) */
    for (size_t k = 0; k < bw->win.nrows; k++) {
        BatchRow *r = &bw->rows[k];
        if (!known[k]) continue;
        r->premade = PyUnicode_New((Py_ssize_t)r->premade_nchars, (Py_UCS4)r->premade_maxchar);
        if (!r->premade) {   /* (no memory: the rows left go the usual way, which reports it) */
            PyErr_Clear();
            return;
        }
        r->premade_stream = stream_bytes(a, r->premade_nchars * (size_t)PyUnicode_KIND(r->premade));
        if (premade_missed == 1) r->premade_nchars = SIZE_MAX;
        if (!chunk[k]) continue;
        uintptr_t at = (uintptr_t)r->premade - 2 * sizeof(size_t) + chunk[k];
        size_t ahead = 0;
        for (size_t j = k + 1; j < bw->win.nrows && ahead < PREFETCH_ROWS; j++) {
            at += chunk[j];
            ahead += chunk[j] != 0;
        }
        if (ahead == PREFETCH_ROWS) prefetch_chunk_header(at);
    }
}

/* copier: the window the threads render meanwhile, or NULL: they copy the
 * converted texts into the str objects made here (see copy_texts). The
 * rows are taken as they finish (see wait_row). */
static bool batch_drain(Pool *pool, BatchWindow *bw, BatchArgs *a, PyObject *out, BatchWindow *copier) {
    bool ok = true;
    size_t text_bytes = 0, ncopies = 0;
    for (size_t i = 0; i < bw->win.nrows; i++) {
        BatchRow *r = &bw->rows[i];
        wait_row(pool, bw, r, a);
        PyObject *row = PyList_GET_ITEM(a->rows, (Py_ssize_t)(bw->start + i));
        repeat_store(&a->repeat, r, row);
        remember_output(&a->repeat, r, row);
        PyObject *o = NULL;
        if (r->placed) {   /* its text is in the str made for it */
            r->placed = false;
            o = r->premade;
            r->premade = NULL;
            text_bytes += r->placed_len;
            if (figures.on) figures.placed++;
            a->texts_made++;
            a->text_bytes_made += r->nchars * r->kind;
            if (ok) PyList_SET_ITEM(out, (Py_ssize_t)(bw->start + i), o);
            else Py_DECREF(o);
            continue;
        }
        Py_CLEAR(r->premade);   /* (another output, or none: made as usual) */
        if (a->read_on_workers && (r->state == ROW_UNREAD || r->state == ROW_ERROR ||
                                   (r->state == ROW_OK && !r->converted))) {
            /* workers may be reading the next window's rows: made after the pass */
            if (r->state == ROW_OK) text_bytes += r->res.len;
            if (ok && !defer_row(a, r, bw->start + i)) {
                PyErr_NoMemory();
                ok = false;
            }
            if (r->state == ROW_OK) lib.result_free(&r->res);   /* (NULL once taken over) */
            continue;
        }
        if (r->state == ROW_OK) {
            text_bytes += r->res.len;
            bool stream = ok && r->converted && stream_text(a, r);
            if (ok && r->converted && copier) {
                o = PyUnicode_New((Py_ssize_t)r->nchars, (Py_UCS4)r->maxchar);
                if (o) {
                    prefetch_str_chunks(bw, i, o);
                    copier->copies[ncopies] = text_copy_of(r, o, stream);
                    copier->copies[ncopies].copied = &r->spent_copied;
                    atomic_store_explicit(&r->spent_copied, false, memory_order_relaxed);   /* (published below) */
                    atomic_store_explicit(&copier->copies_ready, ++ncopies, memory_order_release);
                }
            } else if (ok) {
                o = r->converted ? converted_to_str(r, stream) : text_to_str(r->res.text, r->res.len, result_known_ascii(&r->res));
            }
            if (r->converted) {   /* (read by its copy, if one was queued, until spent_copied) */
                if (!o || !copier) atomic_store_explicit(&r->spent_copied, true, memory_order_relaxed);
                r->spent = r->res;
                r->spent_by = r->renderer;
                memset(&r->res, 0, sizeof r->res);
            } else {
                lib.result_free(&r->res);
            }
        } else if (!ok) {
            continue;
        } else if (r->state == ROW_ERROR) {
            o = error_object_alike(&a->last_error, a->make_error, (int)r->err.kind, r->err.message, r->err.line,
                                   r->err.column, r->err.offset);
        } else {
            o = new_ref(r->state == ROW_TOOLS_ERROR ? a->tools_error : declined);
        }
        if (!o) {
            ok = false;
            continue;
        }
        PyList_SET_ITEM(out, (Py_ssize_t)(bw->start + i), o);
    }
    release_held(&bw->held);
    free_retired(bw);
    size_t per_row = text_bytes / (bw->win.nrows ? bw->win.nrows : 1) + 1;
    size_t rows = WINDOW_TEXT / per_row;
    a->window_rows = rows < WINDOW_MIN_ROWS ? WINDOW_MIN_ROWS : rows > WINDOW_ROWS ? WINDOW_ROWS : rows;
    return ok;
}

static void batch_window_free(BatchWindow *bw) {
    if (!bw) return;
    release_held(&bw->held);
    free(bw->held.o);
    free_retired(bw);
    free(bw->retired);
    free(bw->walk.items);
    for (size_t i = 0; i < WINDOW_ROWS; i++) {
        free(bw->rows[i].utf8);
        lib.result_free(&bw->rows[i].spent);
    }
    free(bw);
}

/* Windows kept between calls (touched only with the GIL held): a window
 * with its item array is a few MiB, which malloc maps and unmaps on every
 * call otherwise; fresh pages cost several microseconds each on a loaded
 * machine, which made a call of 1000 rows pay more for its windows than
 * for its renders. A call made while another holds them allocates its own. */
enum { SPARE_WINDOWS = 2 };
static BatchWindow *spare_windows[SPARE_WINDOWS];

static BatchWindow *batch_window_take(void) {
    for (int k = 0; k < SPARE_WINDOWS; k++) {
        BatchWindow *bw = spare_windows[k];
        if (bw) {
            spare_windows[k] = NULL;
            return bw;
        }
    }
    BatchWindow *bw = aligned_alloc(_Alignof(BatchWindow), sizeof(BatchWindow));   /* (its rows: cache lines of their own) */
    if (bw) memset(bw, 0, sizeof *bw);
    return bw;
}

static void batch_window_give_back(BatchWindow *bw) {
    if (!bw) return;
    release_held(&bw->held);
    free_retired(bw);
    if (bw->walk.cap > 4 * WINDOW_ITEMS) {   /* grown by one huge row: not kept at that size */
        free(bw->walk.items);
        bw->walk.items = NULL;
        bw->walk.cap = 0;
    }
    for (size_t i = 0; i < WINDOW_ROWS; i++) {   /* likewise a buffer grown by one huge string */
        if (bw->rows[i].utf8_cap > SLOT_TEXT_MAX) {
            free(bw->rows[i].utf8);
            bw->rows[i].utf8 = NULL;
            bw->rows[i].utf8_cap = 0;
        }
    }
    for (int k = 0; k < SPARE_WINDOWS; k++) {
        if (!spare_windows[k]) {
            spare_windows[k] = bw;
            return;
        }
    }
    batch_window_free(bw);
}

/* While the workers read rows the calling thread holds the GIL; every
 * PAUSE_NS it lets other Python threads run (as the interpreter's own
 * switch interval would), at a moment when no worker reads a row. */
enum { PAUSE_NS = 5000000 };

static bool pause_due(const struct timespec *since) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - since->tv_sec) * 1000000000LL + (now.tv_nsec - since->tv_nsec) >= PAUSE_NS;
}

/* Render win's rows beside the workers until none is left to claim: with
 * the GIL let go when the caller walked the rows, held when the workers
 * read them (see READ_ON_WORKERS: holding it is what keeps the rows as
 * they are). The texts queued for win's threads to copy were all queued
 * before (by the drain of the window before), so the copies no worker took
 * are made here. */
static void batch_join(Pool *pool, BatchWindow *bw, const BatchArgs *a, PhaseMark *m) {
    long long *mark = figures.on && m ? &m->at : NULL;   /* (see phase_lap: no wait in it) */
    if (a->read_on_workers) {
        run_rows_from(&bw->win, pool->fig, mark);
    } else {
        Py_BEGIN_ALLOW_THREADS
        run_rows_from(&bw->win, pool->fig, mark);
        Py_END_ALLOW_THREADS
    }
}

/* ... and until every row is rendered and no worker holds it. */
static void batch_finish(Pool *pool, BatchWindow *bw, const BatchArgs *a) {
    batch_join(pool, bw, a, NULL);
    caller_wait(pool, bw, window_finished, a);
}

/* Render a->rows into out (a list of their length) on `threads` threads:
 * false with an exception set. Results the pass defers (a->deferred) are
 * made by batch_complete. */
static bool batch_pass(BatchArgs *a, PyObject *out, const cf_render_options *opt, bool chat, long threads) {
    Py_ssize_t n = PyList_GET_SIZE(a->rows);
    BatchWindow *bw[2] = {batch_window_take(), batch_window_take()};
    ReturnStack *returns = NULL;   /* (none: each thread gives spent buffers back into its own cache) */
    unsigned nreturns = 0;
    if (!bw[0] || !bw[1] || !repeat_init(&a->repeat, (size_t)n)) {
        PyErr_NoMemory();
        goto fail_early;
    }
    for (int k = 0; k < 2; k++) {
        bw[k]->win.row = batch_row;
        bw[k]->win.settle = batch_settle;
        bw[k]->win.publish = batch_publish;
        bw[k]->win.side = copy_texts;
        bw[k]->walk.held = &bw[k]->held;
        bw[k]->opt = opt;
        bw[k]->chat = chat;
    }
    if ((size_t)n < (size_t)threads * 8) threads = n / 8 + 1;
    if (threads > 1 && (returns = aligned_alloc(_Alignof(ReturnStack), (size_t)threads * sizeof *returns))) {
        nreturns = (unsigned)threads;
        for (unsigned k = 0; k < nreturns; k++) atomic_init(&returns[k].head, NULL);
    }
    Pool pool;
    pool_start(&pool, (unsigned)threads, figures.on);
    for (int k = 0; k < 2; k++) {
        bw[k]->returns = returns;
        bw[k]->nreturns = nreturns;
        bw[k]->fig = pool.fig;
    }
    bool ok = true;
    BatchWindow *published = NULL;   /* handed to the workers, not yet finished */
    PhaseMark mark = {phase_begin(), pool.fig ? pool.fig[0].wait_cpu_ns : 0};
    size_t at = batch_fill(bw[0], a, 0, (size_t)n);
    if (at != (size_t)-1) premake_strs(bw[0], a);
    phase_lap(&figures.fill_ns, &mark, &pool);
    if (at == (size_t)-1) ok = false;
    else if (bw[0]->win.nrows) pool_publish(&pool, &(published = bw[0])->win);
    int c = 0;
    struct timespec last_pause;
    clock_gettime(CLOCK_MONOTONIC, &last_pause);
    while (ok && bw[c]->win.nrows) {
        BatchWindow *cur = bw[c], *nxt = bw[c ^ 1];
        /* the workers render cur meanwhile; nxt is handed to them once
         * filled, which they take when no row of cur is left to claim, so
         * that no thread waits at the end of a window */
        bool pause = a->read_on_workers && pause_due(&last_pause);
        pool_quiesce(&pool, &nxt->win);
        size_t next_at = at < (size_t)n && !pause ? batch_fill(nxt, a, at, (size_t)n) : at;
        if (at >= (size_t)n || pause || next_at == (size_t)-1) nxt->win.nrows = 0;
        premake_strs(nxt, a);
        phase_lap(&figures.fill_ns, &mark, &pool);   /* (with the pause before it, if one was due) */
        /* the texts queued for cur's threads (all queued: by the drain of
         * the window before) are taken before nxt's rows render in their
         * slots: a worker that ran out of cur's rows left some */
        size_t copied = copy_texts(&cur->win);   /* (work beside the workers: counted as rendering, with run_rows) */
        if (pool.fig) pool.fig[0].copies += copied;
        if (nxt->win.nrows) pool_publish(&pool, &nxt->win);
        published = nxt->win.nrows ? nxt : NULL;
        batch_join(&pool, cur, a, &mark);
        if (!batch_drain(&pool, cur, a, out, published) || next_at == (size_t)-1) ok = false;   /* (the workers render nxt) */
        phase_lap(&figures.drain_ns, &mark, &pool);
        if (figures.on) figures.windows++;
        if (pause && ok) {   /* no worker reads a row: other Python threads run a moment */
            pool_wait(&pool, &cur->win, window_finished);   /* (a worker may still be leaving it) */
            Py_BEGIN_ALLOW_THREADS
            Py_END_ALLOW_THREADS
            clock_gettime(CLOCK_MONOTONIC, &last_pause);
            if (PyList_GET_SIZE(a->rows) != n) {
                PyErr_SetString(PyExc_RuntimeError, "render_batch: the list of rows changed size during the call");
                ok = false;
            } else if (at < (size_t)n) {
                next_at = batch_fill(nxt, a, at, (size_t)n);
                if (next_at == (size_t)-1) ok = false;
                else if (nxt->win.nrows) premake_strs(nxt, a), pool_publish(&pool, &(published = nxt)->win);
            }
        }
        at = next_at;
        c ^= 1;
    }
    if (published) {   /* stopped by an exception: let the workers finish, drop the outputs */
        batch_finish(&pool, published, a);
        for (size_t i = 0; i < published->win.nrows; i++) {
            BatchRow *r = &published->rows[i];
            if (r->state == ROW_OK) lib.result_free(&r->res);   /* (freed already when placed) */
            Py_CLEAR(r->premade);
            r->placed = false;
            repeat_store(&a->repeat, r, PyList_GET_ITEM(a->rows, (Py_ssize_t)(published->start + i)));
        }
    }
    pool_stop(&pool, figures.on ? figures.thread : NULL, FIGURE_THREADS);
fail_early:
    returns_free(returns, nreturns);
    free(returns);
    for (int k = 0; k < 2; k++) {
        if (bw[k]) bw[k]->returns = NULL, bw[k]->nreturns = 0, bw[k]->fig = NULL;
    }
    repeat_free(&a->repeat);
    batch_window_give_back(bw[0]);
    batch_window_give_back(bw[1]);
    return !PyErr_Occurred();
}

/* The deferred results into out, Python code allowed again (no worker
 * runs): decoded outputs, error objects, and the rows the workers did not
 * read, walked under the GIL in a second pass. False with an exception set
 * (with ok false, as after a failed pass: only frees them). */
static bool batch_complete(BatchArgs *a, PyObject *out, const cf_render_options *opt, bool chat, long threads,
                           bool ok) {
    size_t unread = 0;
    for (size_t k = 0; k < a->ndeferred; k++) {
        Deferred *d = &a->deferred[k];
        PyObject *o = NULL;
        if (d->state == ROW_UNREAD) {
            a->deferred[unread++] = *d;   /* (kept, in order, for the second pass) */
            continue;
        }
        if (!ok) {
        } else if (d->state == ROW_OK) {
            o = text_to_str(d->res.text, d->res.len, result_known_ascii(&d->res));
        } else {
            o = error_object_alike(&a->last_error, a->make_error, (int)d->kind, d->message, d->line, d->column,
                                   d->offset);
        }
        if (d->state == ROW_OK) lib.result_free(&d->res);
        free(d->message);
        if (!o) {
            ok = false;
            continue;
        }
        PyList_SET_ITEM(out, (Py_ssize_t)d->index, o);
    }
    a->ndeferred = unread;
    if (!ok || !unread) return ok;
    /* the unread rows, walked under the GIL (which decides what they become) */
    PyObject *rows = PyList_New((Py_ssize_t)unread), *sub = PyList_New((Py_ssize_t)unread);
    if (!rows || !sub) {
        Py_XDECREF(rows);
        Py_XDECREF(sub);
        return false;
    }
    for (size_t k = 0; k < unread; k++)
        PyList_SET_ITEM(rows, (Py_ssize_t)k, new_ref(PyList_GET_ITEM(a->rows, (Py_ssize_t)a->deferred[k].index)));
    BatchArgs second = *a;
    second.rows = rows;
    second.read_on_workers = false;
    second.deferred = NULL;
    second.ndeferred = second.deferred_cap = 0;
    second.window_rows = WINDOW_MIN_ROWS;
    second.last_error = (LastError){NULL, 0, 0, 0, 0, NULL};
    ok = batch_pass(&second, sub, opt, chat, threads);
    last_error_clear(&second.last_error);
    for (size_t k = 0; ok && k < unread; k++)
        PyList_SET_ITEM(out, (Py_ssize_t)a->deferred[k].index, new_ref(PyList_GET_ITEM(sub, (Py_ssize_t)k)));
    Py_DECREF(rows);
    Py_DECREF(sub);
    return ok;
}

/* render_batch(rows, common, plain_ptr, tools_ptr, tools_error, options_ptr, chat, threads,
 *              make_error) -> (list, indices of its DECLINED items or None)
 * rows: a list of dicts (variables) or conversations (lists of messages);
 * common: variables every row has (a row's own keys win). Each result is a
 * str, an error object, tools_error (a row with tools when the tool_use
 * template did not compile; None: no such error), or DECLINED (data
 * outside the subset: the caller renders that row the general way). */
PyObject *sp_render_batch(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 9 || !PyList_CheckExact(args[0]) || !PyDict_CheckExact(args[1])) {
        PyErr_SetString(PyExc_TypeError, "render_batch(rows: list, common: dict, plain, with_tools, tools_error, "
                                         "options, chat, threads, make_error)");
        return NULL;
    }
    BatchArgs a = {args[0], args[1], NULL, NULL, args[4], args[8], PyLong_AsVoidPtr(args[2]), NULL, {NULL, 0, 0},
                   WINDOW_MIN_ROWS, READ_ON_WORKERS, NULL, 0, 0, 0, 0, {NULL, 0, 0, 0, 0, NULL}};
    a.with_tools = args[3] == Py_None ? NULL : PyLong_AsVoidPtr(args[3]);
    const cf_render_options *opt = PyLong_AsVoidPtr(args[5]);
    int chat = PyObject_IsTrue(args[6]);
    long threads = PyLong_AsLong(args[7]);
    if (PyErr_Occurred()) return NULL;
    if (!a.plain || threads < 1 || threads > 256) {
        PyErr_SetString(PyExc_ValueError, "render_batch: no template, or threads outside 1..256");
        return NULL;
    }
    long long call_start = 0;
    if (figures.on) {
        bool on = figures.on;
        memset(&figures, 0, sizeof figures);
        figures.on = figures.have = on;
        figures.threads = (unsigned)threads;
        thread_usage(&figures.thread[0], -1);
        call_start = monotonic_ns();
    }
    a.tools_key = PyUnicode_InternFromString("tools");
    a.messages_key = PyUnicode_InternFromString("messages");
    PyObject *out = PyList_New(PyList_GET_SIZE(a.rows));
    bool ok = a.tools_key && a.messages_key && out && batch_pass(&a, out, opt, chat != 0, threads);
    long long t = phase_begin();
    ok = batch_complete(&a, out, opt, chat != 0, threads, ok);   /* (after a failed pass: frees what was deferred) */
    phase_end(&figures.complete_ns, t);
    if (figures.on) {
        thread_usage(&figures.thread[0], +1);
        figures.wall_ns = monotonic_ns() - call_start;
    }
    free(a.deferred);
    last_error_clear(&a.last_error);
    thread_builder_drop();
    Py_XDECREF(a.tools_key);
    Py_XDECREF(a.messages_key);
    if (!ok) {
        Py_XDECREF(out);
        return NULL;
    }
    /* The DECLINED rows' indices, found by address here: a loop over the
     * results in Python touches each str, which a big batch has long
     * evicted from the cache (a memory access a row). */
    PyObject *declined_at = NULL;
    for (Py_ssize_t i = 0, n = PyList_GET_SIZE(out); i < n; i++) {
        if (PyList_GET_ITEM(out, i) != declined) continue;
        PyObject *index = (declined_at || (declined_at = PyList_New(0))) ? PyLong_FromSsize_t(i) : NULL;
        if (!index || PyList_Append(declined_at, index) < 0) {
            Py_XDECREF(index);
            Py_XDECREF(declined_at);
            Py_DECREF(out);
            return NULL;
        }
        Py_DECREF(index);
    }
    PyObject *both = PyTuple_Pack(2, out, declined_at ? declined_at : Py_None);
    Py_DECREF(out);
    Py_XDECREF(declined_at);
    return both;
}

/* batch_stats(on) -> the figures of the last render_batch call made while
 * on (None if there is none), and gathers them from now on or not: a dict
 * of the call's figures with "per_thread", a dict a thread (the calling
 * thread first). */
PyObject *sp_batch_stats(PyObject *self, PyObject *arg) {
    int on = PyObject_IsTrue(arg);
    if (on < 0) return NULL;
    PyObject *result = NULL;
    if (figures.have) {
        unsigned n = figures.threads < FIGURE_THREADS ? figures.threads : FIGURE_THREADS;
        PyObject *per = PyList_New(0);
        for (unsigned k = 0; per && k < n; k++) {
            const ThreadFigures *f = &figures.thread[k];
            PyObject *d = Py_BuildValue("{sLsLsLsLsLslslsksksksksksk}", "cpu_ns", f->cpu_ns, "render_cpu_ns",
                                        f->render_cpu_ns, "wait_cpu_ns", f->wait_cpu_ns, "wait_ns", f->wait_ns,
                                        "sleep_ns", f->sleep_ns, "minor_faults", f->minor_faults, "switches",
                                        f->switches, "rows", f->rows, "copies", f->copies, "given_back",
                                        f->given_back, "waits", f->waits, "yields", f->yields, "sleeps", f->sleeps);
            if (!d || PyList_Append(per, d) < 0) Py_CLEAR(per);
            Py_XDECREF(d);
        }
        if (!per) return NULL;
        result = Py_BuildValue("{sIsLsLsLsLsksksN}", "threads", figures.threads, "wall_ns", figures.wall_ns,
                               "fill_ns", figures.fill_ns, "drain_ns", figures.drain_ns,
                               "complete_ns", figures.complete_ns, "windows", figures.windows,
                               "placed", figures.placed, "per_thread", per);
        if (!result) return NULL;
    } else {
        result = new_ref(Py_None);
    }
    figures.on = on != 0;
    return result;
}
