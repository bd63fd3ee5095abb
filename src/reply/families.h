/* families.h — the reply formats written by hand on the reply.h framework
 * (one file each): harmony, llama3-json, pythonic, mistral, functionary
 * v3.1 / v3.2, functools, gemma4, xlam; and what they share: JSON call
 * objects and lists of them
 * (jsoncall.c), Python and Gemma literals turned into JSON (pyliteral.c),
 * and their detection signatures (families.c). */
#ifndef CF_REPLY_FAMILIES_H
#define CF_REPLY_FAMILIES_H

#include "reply.h"

/* ---- registry (families.c) ---- */

#define FAMILY_FIRST CF_REPLY_HARMONY
#define FAMILY_LAST CF_REPLY_XLAM
#define FAMILY_COUNT (FAMILY_LAST - FAMILY_FIRST + 1)

bool is_family(cf_reply_format f);
const char *family_name(cf_reply_format f);
/* The format a template's text signals, or CF_REPLY_PLAIN when none of ours. */
cf_reply_format families_detect(const char *text, size_t n);
/* The format's reasoning opener and closer, as a prompt's tail would end
 * with them (NULL when the format has none). */
void family_reasoning_markers(cf_reply_format f, const char **open, const char **close);
void families_init(Parser *p);

void harmony_init(Parser *p);
void llama3_init(Parser *p);
void pythonic_init(Parser *p);
void mistral_init(Parser *p);
void functionary_v31_init(Parser *p);
void functionary_v32_init(Parser *p);
void functools_init(Parser *p);
void gemma4_init(Parser *p);
void xlam_init(Parser *p);

/* ---- JSON call objects (jsoncall.c) ----
 * {"name": N, "arguments"|"parameters": {...} or "...", "id": "...",
 *  "type": "function"} (any order, each once). The arguments object
 * streams verbatim; a string there is decoded and its text is the
 * arguments. The stream commits the call when the name is known and the
 * arguments have begun (or the object ended), and with FAM_WANT_ID, when an
 * "id" came or the object ended (the model's id comes after the arguments). */
enum {
    FAM_NEED_ARGS = 1,    /* an object without arguments is not a call (bare JSON) */
    FAM_WANT_ID = 2,      /* an "id" key may come: keep the model's id */
    FAM_ARGS_ONLY = 4     /* the JSON is the arguments object itself */
};
/* Start a call object (the '{' not yet consumed) or a bare arguments object.
 * `done`: the state after it; `resume`: where a broken call's text goes on. */
void jcall_begin(Parser *p, const char *markup, bool keep_raw, unsigned flags, int done, int resume);
/* Feed the JSON; returns the bytes consumed. */
size_t jcall_step(Parser *p, const char *s, size_t n);
/* The stream's fast path inside the JSON (FAST_JSON_ARGS, FAST_JSON_HELD or FAST_NONE). */
int jcall_fast(const Parser *p);

/* The active call (name known) goes on with a bare JSON arguments object. */
void jcall_args(Parser *p, int done, int resume);

/* A list of call objects: [ {call}, {call} ... ]. jlist_begin after the '['
 * (its markup already in call.raw); jlist_step consumes up to the ']' and
 * then sets p->state = done (a break: resume). */
void jlist_begin(Parser *p, unsigned flags, int done, int resume);
void jlist_step(Parser *p, const char *s, size_t n, size_t *pi);

/* ---- Python and Gemma literals (pyliteral.c) ---- */
enum { LIT_PYTHON, LIT_GEMMA, LIT_FUNCTIONGEMMA };
/* Keyword arguments `a=1, b='x'` (LIT_PYTHON) or a Gemma dict body
 * `a:1,b:<|"|>x<|"|>` as a JSON object text in json.dumps' style
 * ({"a": 1, "b": "x"}) appended to out. False when it is not one. */
bool literal_args_to_json(Parser *p, int style, const char *s, size_t n, StrBuf *out);

/* Incremental bracket tracking of a literal (LitTrack, reply.h): where the arguments end. */
/* Feed one byte; returns 1 when it closed the outermost bracket, -1 when
 * it cannot belong (a closer without an opener, or too deep), else 0. */
int lit_track(LitTrack *t, int style, unsigned char c, uint32_t max_depth);
/* Feed s[0..n) up to the byte that returns non-zero; *r is that result (0
 * when none did); returns the bytes before it. String text is skipped a run
 * at a time. */
size_t lit_scan(LitTrack *t, int style, const char *s, size_t n, uint32_t max_depth, int *r);

/* ---- Python calls NAME(a=1, b='x') (pythonic.c) ----
 * pycall_begin before the name's first byte; pycall_step reads the name
 * (with `builtin`, Llama's NAME.call(...)), the arguments up to the
 * matching ')', and ends the call (1), or breaks it (-1: its text is
 * content, the parser goes on in `resume`), or needs more input (0). The
 * call commits when it is complete: arguments are converted whole. */
void pycall_begin(Parser *p, const char *markup, bool keep_raw, bool builtin);
int pycall_step(Parser *p, const char *s, size_t n, size_t *pi, int resume);
/* The stream's fast path in the call: FAST_PY_STR1/2 inside a string, else FAST_NONE. */
int pycall_fast(const Parser *p);
LitTrack *fam_lit(Parser *p);

#endif
