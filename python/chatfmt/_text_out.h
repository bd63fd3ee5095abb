/* _text_out.h — a rendered output turned into a Python str's form, for
 * render_batch in _speedups.c: the UTF-8 measured (ASCII prefix, character
 * count, largest code point) and written as 1-, 2- or 4-byte code units
 * straight into the str's memory, on the rendering threads. No Python
 * here: the caller makes the str and says where its characters go. */
#ifndef CHATFMT_TEXT_OUT_H
#define CHATFMT_TEXT_OUT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* (internal to the extension: not resolved through the process's symbols) */
#define TEXT_API __attribute__((visibility("hidden")))

/* Where the first byte that is not ASCII is in s[0..n), or n: the kernel
 * for this processor (pick_text_kernels). */
TEXT_API extern size_t (*ascii_prefix_len)(const unsigned char *s, size_t n);

/* Choose the kernels this processor runs best (once, at init). */
TEXT_API void pick_text_kernels(void);

/* A test mode (the module's known_ascii_check): an output the library
 * says is ASCII is scanned all the same; ascii_claim_holds counts the
 * claims and the wrong ones (then not believed: the output is scanned as
 * any other). */
TEXT_API extern atomic_bool check_ascii_claims;
TEXT_API extern atomic_size_t ascii_claims, ascii_claims_wrong;
TEXT_API bool ascii_claim_holds(const unsigned char *s, size_t n);

/* The code points of valid UTF-8 s[from..n) (s[0..from) is ASCII): count
 * (from included) and largest; false for bytes that are not valid UTF-8. */
TEXT_API bool utf8_measure(const unsigned char *s, size_t n, size_t from, size_t *nchars, uint32_t *maxchar);

/* A converted output's text into its str (made for r->nchars characters
 * up to r->maxchar): one write of the str's memory, from the UTF-8 as
 * rendered. */
typedef struct TextCopy {
    const unsigned char *from;
    size_t len, ascii_prefix;
    void *to;
    int kind;
    bool stream;              /* written around the cache (see stream_texts_above) */
    atomic_bool *copied;      /* set once copied (a queued copy: see BatchRow.spent_copied) */
} TextCopy;

/* A call whose texts come to more bytes than this (the last-level cache,
 * found at init) has them written around the cache: they will have left it
 * before they are read. Set once at init (and by the module's private
 * stream_texts_above, a test knob), read by render_batch under the GIL. */
TEXT_API extern size_t stream_texts_above;

/* Write c->from as c->kind-byte code units at c->to (see TextCopy). */
TEXT_API void copy_text(const TextCopy *c);

/* c->from's c->len bytes copied as they are (c->kind 1), streamed or not
 * as c->stream says, unfenced (as copy_text_unfenced), and whether they
 * were all ASCII, found in the same pass: an output expected to be ASCII
 * (its str made so before it rendered) is not scanned first. When they
 * were not, what was written is no text of any form. */
TEXT_API bool copy_ascii_checked(const TextCopy *c);

/* s[0..n) written as `kind`-byte code units at out (room for cap units)
 * in one pass, checked as it goes: false when it is not valid UTF-8, has
 * more than cap characters, or one that does not fit a unit (then what
 * was written is no text); else its characters and its code points or-ed
 * (their largest has the same highest bit: the str's form). An output
 * expected in the form of a str made before it rendered is not scanned
 * and measured first. */
TEXT_API bool widen_checked(const unsigned char *s, size_t n, int kind, void *out, size_t cap, size_t *nchars,
                            uint32_t *bits);

/* The same, streamed writes left to drain: the thread calls text_fence
 * before it says the text is written (render_batch's rows settled ahead
 * of their publishing: see Window.settle). */
TEXT_API void copy_text_unfenced(const TextCopy *c);
TEXT_API void text_fence(void);

#endif
