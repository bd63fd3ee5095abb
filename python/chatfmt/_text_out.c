/* _text_out.c — a rendered output turned into a Python str's form (see
 * _text_out.h): UTF-8 measured and widened 16 bytes a step over ASCII
 * stretches (gcc and clang vector types), the ASCII prefix found with
 * the processor's widest registers (AVX2 when it has them), and written
 * around the cache when a call's texts outgrow it. Runs on the rendering
 * threads of render_batch; no Python here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "_text_out.h"

/* 16 bytes as a vector (gcc and clang vector types: SSE2 on x86-64, plain
 * words elsewhere), and whether they are all ASCII. */
typedef unsigned char u8x16 __attribute__((vector_size(16)));

static inline bool ascii16(const unsigned char *p, u8x16 *v) {
    uint64_t h[2];
    memcpy(v, p, 16);
    memcpy(h, v, 16);
    return !((h[0] | h[1]) & 0x8080808080808080ULL);
}

/* Widening 16 ASCII bytes to 2- or 4-byte code units: one vector
 * conversion where the compiler has it (the unpack instructions), else a
 * loop. */
#if defined(__has_builtin)
#if __has_builtin(__builtin_convertvector)
#define HAVE_CONVERTVECTOR 1
#endif
#endif

static inline __attribute__((always_inline)) void widen16(const u8x16 *v, int kind, unsigned char *out) {
#ifdef HAVE_CONVERTVECTOR
    typedef uint16_t u16x16 __attribute__((vector_size(32)));
    typedef uint32_t u32x16 __attribute__((vector_size(64)));
    if (kind == 2) {
        u16x16 w = __builtin_convertvector(*v, u16x16);
        memcpy(out, &w, sizeof w);
    } else {
        u32x16 w = __builtin_convertvector(*v, u32x16);
        memcpy(out, &w, sizeof w);
    }
#else
    unsigned char b[16];
    memcpy(b, v, 16);
    for (int j = 0; j < 16; j++) {
        if (kind == 2) {
            uint16_t c = b[j];
            memcpy(out + 2 * j, &c, 2);
        } else {
            uint32_t c = b[j];
            memcpy(out + 4 * j, &c, 4);
        }
    }
#endif
}

/* One character of s[*i..n) decoded, checked as Python's UTF-8 decoder
 * checks it (false for bytes that are not valid UTF-8); *i moves past it. */
static inline __attribute__((always_inline)) bool decode_checked(const unsigned char *s, size_t n, size_t *i,
                                                                 uint32_t *cp) {
    size_t at = *i;
    unsigned char c = s[at];
    uint32_t u;
    if (c < 0x80) {
        u = c;
        at++;
    } else if (c >= 0xC2 && c < 0xE0) {
        if (at + 1 >= n || (s[at + 1] & 0xC0) != 0x80) return false;
        u = (uint32_t)(c & 0x1F) << 6 | (s[at + 1] & 0x3F);
        at += 2;
    } else if (c >= 0xE0 && c < 0xF0) {
        if (at + 2 >= n || (s[at + 1] & 0xC0) != 0x80 || (s[at + 2] & 0xC0) != 0x80) return false;
        u = (uint32_t)(c & 0x0F) << 12 | (uint32_t)(s[at + 1] & 0x3F) << 6 | (s[at + 2] & 0x3F);
        if (u < 0x800 || (u >= 0xD800 && u < 0xE000)) return false;   /* overlong, surrogate */
        at += 3;
    } else if (c >= 0xF0 && c < 0xF5) {
        if (at + 3 >= n || (s[at + 1] & 0xC0) != 0x80 || (s[at + 2] & 0xC0) != 0x80 || (s[at + 3] & 0xC0) != 0x80)
            return false;
        u = (uint32_t)(c & 0x07) << 18 | (uint32_t)(s[at + 1] & 0x3F) << 12 | (uint32_t)(s[at + 2] & 0x3F) << 6 |
            (s[at + 3] & 0x3F);
        if (u < 0x10000 || u > 0x10FFFF) return false;
        at += 4;
    } else {
        return false;
    }
    *cp = u;
    *i = at;
    return true;
}

/* The code points of valid UTF-8 s[from..n) (s[0..from) is ASCII): count
 * (from included) and largest; false for bytes that are not valid UTF-8
 * (then decoded under the GIL, as before). ASCII stretches go 16 bytes a
 * step: prompts are mostly ASCII with a few other characters. */
bool utf8_measure(const unsigned char *s, size_t n, size_t from, size_t *nchars, uint32_t *maxchar) {
    size_t count = from;
    uint32_t top = 0;
    for (size_t i = from; i < n; count++) {
        u8x16 v;
        if (i + 16 <= n && ascii16(s + i, &v)) {
            i += 16;
            count += 15;
            continue;
        }
        uint32_t cp;
        if (!decode_checked(s, n, &i, &cp)) return false;
        if (cp > top) top = cp;
    }
    *nchars = count;
    *maxchar = top;
    return true;
}

/* One character of valid UTF-8 at s[*i] written as code unit k of out
 * (`kind` bytes a unit); *i moves past it. */
static inline __attribute__((always_inline)) void widen_one(const unsigned char *s, size_t *i, int kind, size_t k,
                                                            unsigned char *out) {
    size_t at = *i;
    unsigned char c = s[at];
    uint32_t cp;
    if (c < 0x80) {
        cp = c;
        at++;
    } else if (c < 0xE0) {
        cp = (uint32_t)(c & 0x1F) << 6 | (s[at + 1] & 0x3F);
        at += 2;
    } else if (c < 0xF0) {
        cp = (uint32_t)(c & 0x0F) << 12 | (uint32_t)(s[at + 1] & 0x3F) << 6 | (s[at + 2] & 0x3F);
        at += 3;
    } else {
        cp = (uint32_t)(c & 0x07) << 18 | (uint32_t)(s[at + 1] & 0x3F) << 12 | (uint32_t)(s[at + 2] & 0x3F) << 6 |
             (s[at + 3] & 0x3F);
        at += 4;
    }
    if (kind == 1) {
        out[k] = (unsigned char)cp;
    } else if (kind == 2) {
        uint16_t u = (uint16_t)cp;
        memcpy(out + 2 * k, &u, 2);
    } else {
        memcpy(out + 4 * k, &cp, 4);
    }
    *i = at;
}

/* The character at s[*i] checked and written as unit *k of out (room for
 * cap units), unless it is not valid UTF-8, there is no room, or it does
 * not fit a `kind`-byte unit; its bits or-ed into *bits. */
static inline __attribute__((always_inline)) bool put_checked(const unsigned char *s, size_t n, size_t *i, int kind,
                                                              unsigned char *out, size_t cap, size_t *k,
                                                              uint32_t *bits) {
    uint32_t cp;
    if (*k >= cap || !decode_checked(s, n, i, &cp)) return false;
    if (kind == 1) {
        if (cp > 0xFF) return false;
        out[*k] = (unsigned char)cp;
    } else if (kind == 2) {
        if (cp > 0xFFFF) return false;
        uint16_t u = (uint16_t)cp;
        memcpy(out + 2 * *k, &u, 2);
    } else {
        memcpy(out + 4 * *k, &cp, 4);
    }
    *bits |= cp;
    ++*k;
    return true;
}

/* widen_checked (see _text_out.h) for one kind, 16 bytes a step: a block
 * is written widened whole (when there is room for it), then counted up to
 * its first byte that is not ASCII, whose character goes on its own. */
static inline __attribute__((always_inline)) bool widen_checked_as(const unsigned char *s, size_t n, int kind,
                                                                   unsigned char *out, size_t cap, size_t *nchars,
                                                                   uint32_t *bits) {
    size_t k = 0;
    uint32_t seen = 0;
    for (size_t i = 0; i < n;) {
        if (i + 16 <= n && k + 16 <= cap) {
            u8x16 v;
            uint64_t h[2];
            memcpy(&v, s + i, 16);
            memcpy(h, &v, 16);
            if (kind == 1) memcpy(out + k, &v, 16);
            else widen16(&v, kind, out + k * (size_t)kind);
            uint64_t lo = h[0] & 0x8080808080808080ULL, hi = h[1] & 0x8080808080808080ULL;
            if (!(lo | hi)) {
                i += 16;
                k += 16;
                continue;
            }
            size_t run = lo ? (size_t)__builtin_ctzll(lo) / 8 : 8 + (size_t)__builtin_ctzll(hi) / 8;
            i += run;
            k += run;
        }
        if (!put_checked(s, n, &i, kind, out, cap, &k, &seen)) return false;
    }
    *nchars = k;
    *bits = seen;
    return true;
}

static bool widen_checked_base(const unsigned char *s, size_t n, int kind, unsigned char *out, size_t cap,
                               size_t *nchars, uint32_t *bits) {
    if (kind == 1) return widen_checked_as(s, n, 1, out, cap, nchars, bits);
    if (kind == 2) return widen_checked_as(s, n, 2, out, cap, nchars, bits);
    return widen_checked_as(s, n, 4, out, cap, nchars, bits);
}

static bool (*widen_checked_kernel)(const unsigned char *s, size_t n, int kind, unsigned char *out, size_t cap,
                                    size_t *nchars, uint32_t *bits) = widen_checked_base;

bool widen_checked(const unsigned char *s, size_t n, int kind, void *out, size_t cap, size_t *nchars,
                   uint32_t *bits) {
    return widen_checked_kernel(s, n, kind, out, cap, nchars, bits);
}

/* Valid UTF-8 s[from..n) into `kind`-byte code units at out, from code
 * unit `from` on (s[0..from) is ASCII, already written when kind is 1;
 * kind a constant at each call below: the compiler makes one loop per
 * kind). */
static inline __attribute__((always_inline)) size_t widen_as(const unsigned char *s, size_t n, size_t from, int kind,
                                                             unsigned char *out) {
    size_t k = from;
    for (size_t i = from; i < n; k++) {
        u8x16 v;
        if (i + 16 <= n && ascii16(s + i, &v)) {   /* an ASCII stretch */
            if (kind == 1) memcpy(out + k, &v, 16);
            else widen16(&v, kind, out + k * (size_t)kind);
            i += 16;
            k += 15;
            continue;
        }
        widen_one(s, &i, kind, k, out);
    }
    return k;
}

/* (each returns the code units written) */
static size_t utf8_widen_base(const unsigned char *s, size_t n, size_t from, int kind, unsigned char *out) {
    if (kind == 1) return widen_as(s, n, from, 1, out);
    if (kind == 2) return widen_as(s, n, 0, 2, out);   /* (the ASCII prefix widens too) */
    return widen_as(s, n, 0, 4, out);
}

/* The kernel for this processor (pick_text_kernels): the one above, or on
 * x86-64 with AVX2 utf8_widen_avx2 (below). */
static size_t (*utf8_widen)(const unsigned char *s, size_t n, size_t from, int kind, unsigned char *out) =
    utf8_widen_base;

/* Where the first byte that is not ASCII is in s[0..n), or n. The render
 * just wrote s (it is in the cache): 128 bytes a step, or-ed in vector
 * registers and tested once a step. */
typedef unsigned char u8x32 __attribute__((vector_size(32)));

static inline __attribute__((always_inline)) size_t ascii_prefix_as(const unsigned char *s, size_t n) {
    size_t i = 0;
    for (; i + 128 <= n; i += 128) {
        u8x32 a, b, c, d;
        memcpy(&a, s + i, 32);
        memcpy(&b, s + i + 32, 32);
        memcpy(&c, s + i + 64, 32);
        memcpy(&d, s + i + 96, 32);
        u8x32 all = (a | b) | (c | d);
        uint64_t w[4];
        memcpy(w, &all, 32);
        if ((w[0] | w[1] | w[2] | w[3]) & 0x8080808080808080ULL) break;
    }
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        if (w & 0x8080808080808080ULL) break;
    }
    while (i < n && s[i] < 0x80) i++;
    return i;
}

/* As compiled for the baseline instruction set, and on x86-64 also for
 * AVX2 (32-byte registers: half the instructions a byte), taken when the
 * processor has it (pick_text_kernels, from sp_init in _speedups.c). */
static size_t ascii_prefix_base(const unsigned char *s, size_t n) { return ascii_prefix_as(s, n); }
size_t (*ascii_prefix_len)(const unsigned char *s, size_t n) = ascii_prefix_base;

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HAVE_AVX2_PATH 1
#include <immintrin.h>
__attribute__((target("avx2"))) static size_t ascii_prefix_avx2(const unsigned char *s, size_t n) {
    return ascii_prefix_as(s, n);
}

/* widen_as for 2- and 4-byte units with AVX2: 32 bytes tested a step and,
 * when all ASCII, widened 16 a vpmovzxbw (8 a vpmovzxbd) into 32-byte
 * stores; other characters one by one as in the baseline. The ASCII
 * stretches of a prompt are long: the widening was most of its time. */
__attribute__((target("avx2"))) static inline size_t widen_wide_avx2(const unsigned char *s, size_t n, int kind,
                                                                    unsigned char *out) {
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        if (i + 32 <= n) {
            __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(s + i));
            if (!_mm256_movemask_epi8(v)) {
                __m128i lo = _mm256_castsi256_si128(v), hi = _mm256_extracti128_si256(v, 1);
                if (kind == 2) {
                    __m256i *o = (__m256i *)(void *)(out + 2 * k);
                    _mm256_storeu_si256(o, _mm256_cvtepu8_epi16(lo));
                    _mm256_storeu_si256(o + 1, _mm256_cvtepu8_epi16(hi));
                } else {
                    __m256i *o = (__m256i *)(void *)(out + 4 * k);
                    _mm256_storeu_si256(o, _mm256_cvtepu8_epi32(lo));
                    _mm256_storeu_si256(o + 1, _mm256_cvtepu8_epi32(_mm_srli_si128(lo, 8)));
                    _mm256_storeu_si256(o + 2, _mm256_cvtepu8_epi32(hi));
                    _mm256_storeu_si256(o + 3, _mm256_cvtepu8_epi32(_mm_srli_si128(hi, 8)));
                }
                i += 32;
                k += 32;
                continue;
            }
        }
        widen_one(s, &i, kind, k, out);
        k++;
    }
    return k;
}

__attribute__((target("avx2"))) static size_t utf8_widen_avx2(const unsigned char *s, size_t n, size_t from, int kind,
                                                              unsigned char *out) {
    if (kind == 1) return widen_as(s, n, from, 1, out);   /* (bytes to bytes: copies, no widening) */
    if (kind == 2) return widen_wide_avx2(s, n, 2, out);
    return widen_wide_avx2(s, n, 4, out);
}

/* 32 ASCII bytes as `kind`-byte units at out (vpmovzx: 16 a 2-byte
 * store, 8 a 4-byte one). */
__attribute__((target("avx2"))) static inline __attribute__((always_inline)) void put32_avx2(__m256i v, int kind,
                                                                                           unsigned char *out) {
    __m256i *o = (__m256i *)(void *)out;
    if (kind == 1) {
        _mm256_storeu_si256(o, v);
        return;
    }
    __m128i lo = _mm256_castsi256_si128(v), hi = _mm256_extracti128_si256(v, 1);
    if (kind == 2) {
        _mm256_storeu_si256(o, _mm256_cvtepu8_epi16(lo));
        _mm256_storeu_si256(o + 1, _mm256_cvtepu8_epi16(hi));
    } else {
        _mm256_storeu_si256(o, _mm256_cvtepu8_epi32(lo));
        _mm256_storeu_si256(o + 1, _mm256_cvtepu8_epi32(_mm_srli_si128(lo, 8)));
        _mm256_storeu_si256(o + 2, _mm256_cvtepu8_epi32(hi));
        _mm256_storeu_si256(o + 3, _mm256_cvtepu8_epi32(_mm_srli_si128(hi, 8)));
    }
}

/* widen_checked_as with AVX2: 128 bytes tested a step while they are all
 * ASCII (as ascii_prefix_len tests them); else 32 written and counted up
 * to their first byte that is not ASCII (the movemask's lowest bit). */
__attribute__((target("avx2"))) static inline __attribute__((always_inline)) bool widen_checked_avx2_as(
    const unsigned char *s, size_t n, int kind, unsigned char *out, size_t cap, size_t *nchars, uint32_t *bits) {
    size_t k = 0;
    uint32_t seen = 0;
    for (size_t i = 0; i < n;) {
        if (i + 128 <= n && k + 128 <= cap) {
            const __m256i *p = (const __m256i *)(const void *)(s + i);
            __m256i a = _mm256_loadu_si256(p), b = _mm256_loadu_si256(p + 1);
            __m256i c = _mm256_loadu_si256(p + 2), d = _mm256_loadu_si256(p + 3);
            if (!_mm256_movemask_epi8(_mm256_or_si256(_mm256_or_si256(a, b), _mm256_or_si256(c, d)))) {
                unsigned char *o = out + k * (size_t)kind;
                put32_avx2(a, kind, o);
                put32_avx2(b, kind, o + 32 * (size_t)kind);
                put32_avx2(c, kind, o + 64 * (size_t)kind);
                put32_avx2(d, kind, o + 96 * (size_t)kind);
                i += 128;
                k += 128;
                continue;
            }
        }
        if (i + 32 <= n && k + 32 <= cap) {
            __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(s + i));
            put32_avx2(v, kind, out + k * (size_t)kind);
            unsigned mask = (unsigned)_mm256_movemask_epi8(v);
            if (!mask) {
                i += 32;
                k += 32;
                continue;
            }
            size_t run = (size_t)__builtin_ctz(mask);
            i += run;
            k += run;
        }
        if (!put_checked(s, n, &i, kind, out, cap, &k, &seen)) return false;
    }
    *nchars = k;
    *bits = seen;
    return true;
}

__attribute__((target("avx2"))) static bool widen_checked_avx2(const unsigned char *s, size_t n, int kind,
                                                               unsigned char *out, size_t cap, size_t *nchars,
                                                               uint32_t *bits) {
    if (kind == 1) return widen_checked_avx2_as(s, n, 1, out, cap, nchars, bits);
    if (kind == 2) return widen_checked_avx2_as(s, n, 2, out, cap, nchars, bits);
    return widen_checked_avx2_as(s, n, 4, out, cap, nchars, bits);
}
#endif

/* ---- streaming stores ----
 * A batch whose texts outgrow the last-level cache has them written
 * around it (non-temporal stores): a store that misses the cache first
 * reads the line it fills, and every line written evicts another dirty
 * one, for texts that will have left the cache before they are read.
 * Whole 64-byte lines only; the partial lines at either end are written as
 * usual (the str's header and terminator share them). */
#if defined(__x86_64__)
#include <emmintrin.h>
#define HAVE_STREAM_STORES 1
#endif

/* s[0..n) into d: its whole lines streamed, the partial ones at either
 * end stored as usual (the baseline: SSE2 stores; AVX2 below). */
static void stream_copy_base(unsigned char *d, const unsigned char *s, size_t n) {
#ifdef HAVE_STREAM_STORES
    size_t head = (size_t)(-(uintptr_t)d & 63);
    if (head > n) head = n;
    memcpy(d, s, head);
    d += head, s += head, n -= head;
    for (; n >= 64; n -= 64, d += 64, s += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)(const void *)s);
        __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(s + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(const void *)(s + 32));
        __m128i e = _mm_loadu_si128((const __m128i *)(const void *)(s + 48));
        __m128i *o = (__m128i *)(void *)d;
        _mm_stream_si128(o, a);
        _mm_stream_si128(o + 1, b);
        _mm_stream_si128(o + 2, c);
        _mm_stream_si128(o + 3, e);
    }
#endif
    memcpy(d, s, n);
}

static void (*stream_copy)(unsigned char *d, const unsigned char *s, size_t n) = stream_copy_base;

#ifdef HAVE_AVX2_PATH
__attribute__((target("avx2"))) static void stream_copy_avx2(unsigned char *d, const unsigned char *s, size_t n) {
    size_t head = (size_t)(-(uintptr_t)d & 63);
    if (head > n) head = n;
    memcpy(d, s, head);
    d += head, s += head, n -= head;
    for (; n >= 64; n -= 64, d += 64, s += 64) {
        __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)s);
        __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(s + 32));
        __m256i *o = (__m256i *)(void *)d;
        _mm256_stream_si256(o, a);
        _mm256_stream_si256(o + 1, b);
    }
    memcpy(d, s, n);
}
#endif

/* s[0..n) into d, and whether it was all ASCII: whole lines streamed
 * (when stream) and or-ed into one vector as they go, the rest copied and
 * tested as usual (the baseline: SSE2; AVX2 below). */
static bool bytes_ascii(const unsigned char *s, size_t n) { return ascii_prefix_len(s, n) == n; }

static bool copy_checked_base(unsigned char *d, const unsigned char *s, size_t n, bool stream) {
#ifdef HAVE_STREAM_STORES
    if (stream) {
        size_t head = (size_t)(-(uintptr_t)d & 63);
        if (head > n) head = n;
        memcpy(d, s, head);
        bool ascii = bytes_ascii(s, head);
        d += head, s += head, n -= head;
        __m128i any = _mm_setzero_si128();
        for (; n >= 64; n -= 64, d += 64, s += 64) {
            __m128i a = _mm_loadu_si128((const __m128i *)(const void *)s);
            __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(s + 16));
            __m128i c = _mm_loadu_si128((const __m128i *)(const void *)(s + 32));
            __m128i e = _mm_loadu_si128((const __m128i *)(const void *)(s + 48));
            any = _mm_or_si128(any, _mm_or_si128(_mm_or_si128(a, b), _mm_or_si128(c, e)));
            __m128i *o = (__m128i *)(void *)d;
            _mm_stream_si128(o, a);
            _mm_stream_si128(o + 1, b);
            _mm_stream_si128(o + 2, c);
            _mm_stream_si128(o + 3, e);
        }
        memcpy(d, s, n);
        return ascii && !_mm_movemask_epi8(any) && bytes_ascii(s, n);
    }
#endif
    (void)stream;
    memcpy(d, s, n);
    return bytes_ascii(s, n);   /* (the text just read: in the cache) */
}

static bool (*copy_checked)(unsigned char *d, const unsigned char *s, size_t n, bool stream) = copy_checked_base;

#ifdef HAVE_AVX2_PATH
__attribute__((target("avx2"))) static bool copy_checked_avx2(unsigned char *d, const unsigned char *s, size_t n,
                                                              bool stream) {
    if (!stream) {
        memcpy(d, s, n);
        return ascii_prefix_avx2(s, n) == n;
    }
    size_t head = (size_t)(-(uintptr_t)d & 63);
    if (head > n) head = n;
    memcpy(d, s, head);
    bool ascii = ascii_prefix_avx2(s, head) == head;
    d += head, s += head, n -= head;
    __m256i any = _mm256_setzero_si256();
    for (; n >= 64; n -= 64, d += 64, s += 64) {
        __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)s);
        __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(s + 32));
        any = _mm256_or_si256(any, _mm256_or_si256(a, b));
        __m256i *o = (__m256i *)(void *)d;
        _mm256_stream_si256(o, a);
        _mm256_stream_si256(o + 1, b);
    }
    memcpy(d, s, n);
    return ascii && !_mm256_movemask_epi8(any) && ascii_prefix_avx2(s, n) == n;
}
#endif

bool copy_ascii_checked(const TextCopy *c) { return copy_checked(c->to, c->from, c->len, c->stream); }

/* Widened text is staged a piece at a time in a buffer on the stack (in
 * the cache) and streamed out from it a whole number of lines at a time:
 * STAGE_IN bytes of UTF-8 a piece, at most 4 bytes out for each. */
enum { STAGE_IN = 1024, STAGE_OUT = 4 * STAGE_IN + 64 };

/* Valid UTF-8 s[from..n) as `kind`-byte units at out, from unit `from` on
 * (as utf8_widen), through the stage. */
static void widen_streamed(const unsigned char *s, size_t n, size_t from, int kind, unsigned char *out) {
    _Alignas(64) unsigned char stage[STAGE_OUT];
    unsigned char *to = out + from * (size_t)kind;   /* where stage[0] goes */
    size_t staged = 0;
    for (size_t i = from; i < n;) {
        size_t end = n - i > STAGE_IN ? i + STAGE_IN : n;
        while (end < n && (s[end] & 0xC0) == 0x80) end--;   /* (at a character's first byte) */
        staged += utf8_widen(s + i, end - i, 0, kind, stage + staged) * (size_t)kind;
        i = end;
        /* what follows the last line boundary waits for the next piece */
        size_t keep = i < n ? (size_t)((uintptr_t)(to + staged) & 63) : 0;
        if (keep > staged) keep = staged;
        stream_copy(to, stage, staged - keep);
        memmove(stage, stage + staged - keep, keep);
        to += staged - keep;
        staged = keep;
    }
}

size_t stream_texts_above = SIZE_MAX;   /* (set by pick_text_kernels) */

/* The last-level cache's size as the system describes it (sysfs, then
 * sysconf), or 32 MiB. */
static size_t last_level_cache_size(void) {
    size_t best = 0;
    for (int index = 0; index < 8; index++) {
        char path[80];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", index);
        FILE *f = fopen(path, "r");
        if (!f) break;
        int level = 0;
        bool read = fscanf(f, "%d", &level) == 1;
        fclose(f);
        if (!read || level < 2) continue;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", index);
        if (!(f = fopen(path, "r"))) continue;
        unsigned long size = 0;
        char unit = 0;
        int got = fscanf(f, "%lu%c", &size, &unit);
        fclose(f);
        if (got < 1) continue;
        if (got == 2 && (unit == 'K' || unit == 'k')) size <<= 10;
        else if (got == 2 && unit == 'M') size <<= 20;
        if (size > best) best = size;
    }
#ifdef _SC_LEVEL3_CACHE_SIZE
    if (!best) {
        long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
        if (l3 > 0) best = (size_t)l3;
    }
#endif
    return best ? best : 32u << 20;
}

void pick_text_kernels(void) {
#ifdef HAVE_STREAM_STORES
    stream_texts_above = last_level_cache_size();
#else
    stream_texts_above = SIZE_MAX;   /* (no streaming stores: copied as usual) */
#endif
#ifdef HAVE_AVX2_PATH
    __builtin_cpu_init();
    /* ($CHATFMT_BASELINE_KERNELS: the baseline ones all the same, which
     * tests/python_test.sh checks on a processor with AVX2 too) */
    const char *baseline = getenv("CHATFMT_BASELINE_KERNELS");
    if (__builtin_cpu_supports("avx2") && !(baseline && *baseline)) {
        ascii_prefix_len = ascii_prefix_avx2;
        utf8_widen = utf8_widen_avx2;
        stream_copy = stream_copy_avx2;
        copy_checked = copy_checked_avx2;
        widen_checked_kernel = widen_checked_avx2;
    }
#endif
}

atomic_bool check_ascii_claims;
atomic_size_t ascii_claims, ascii_claims_wrong;

bool ascii_claim_holds(const unsigned char *s, size_t n) {
    bool holds = ascii_prefix_len(s, n) == n;
    atomic_fetch_add_explicit(&ascii_claims, 1, memory_order_relaxed);
    if (!holds) atomic_fetch_add_explicit(&ascii_claims_wrong, 1, memory_order_relaxed);
    return holds;
}

void text_fence(void) {
#ifdef HAVE_STREAM_STORES
    _mm_sfence();   /* (streamed stores are not ordered with the ones that publish the str) */
#endif
}

void copy_text(const TextCopy *c) {
    copy_text_unfenced(c);
    if (c->stream) text_fence();
}

void copy_text_unfenced(const TextCopy *c) {
    unsigned char *to = c->to;
    if (c->stream) {
        if (c->kind == 1) {
            stream_copy(to, c->from, c->ascii_prefix);
            if (c->ascii_prefix < c->len) widen_streamed(c->from, c->len, c->ascii_prefix, 1, to);
        } else {
            widen_streamed(c->from, c->len, 0, c->kind, to);
        }
    } else if (c->kind == 1) {
        memcpy(to, c->from, c->ascii_prefix);
        if (c->ascii_prefix < c->len) utf8_widen(c->from, c->len, c->ascii_prefix, 1, to);
    } else {
        utf8_widen(c->from, c->len, c->ascii_prefix, c->kind, to);
    }
}
