/* json.h — strict RFC 8259 reader into Values, and a writer identical to
 * Python's json.dumps for every option transformers' tojson accepts. */
#ifndef CF_JSON_H
#define CF_JSON_H

#include "value.h"
#include "json_reuse.h"

/* Parse exactly one JSON document (surrounding whitespace allowed).
 * Objects become VT_DICT (duplicate keys: last wins, position of the first,
 * as Python's dict), arrays VT_LIST, integers VT_INT (VT_BIGINT beyond
 * int64), numbers with fraction/exponent VT_FLOAT, strings VT_STR.
 * Rejects invalid UTF-8 and unpaired surrogate escapes ("\ud800" alone:
 * Python would accept it but could never print it as UTF-8). Nesting beyond
 * rt->lim.max_json_depth or size beyond rt->lim.max_json_bytes -> CF_ERR_LIMIT.
 * On error: rt_throw(CF_ERR_JSON, "...: line L column C (char N)") with
 * rt->err->offset = byte offset. Throws (longjmp) — callers set rt->jb. */
Value json_parse(Rt *rt, const char *s, size_t n);

/* json_parse, telling how the document's top value reads (for a value
 * spliced into other documents: json_reuse.h): the values inside it at any
 * depth, the depth of the deepest (0: an empty container or a scalar), and
 * whether json.dumps(ensure_ascii=False) writes exactly its bytes. */
typedef struct JsonMeasure { size_t items, deepest; bool verbatim; } JsonMeasure;
Value json_parse_measured(Rt *rt, const char *s, size_t n, JsonMeasure *m);
/* json_parse, taking the large array and object members of the top-level
 * object that repeat the cache's bytes from it: each one taken adds a
 * reference to held[*nheld] (room for JSON_REUSE_SLOTS). s is read in place
 * (not copied): it must stay unchanged while the values live. Call
 * json_reuse_begin before and json_reuse_finish after. */
Value json_parse_reusing(Rt *rt, const char *s, size_t n, cf_json_cache *cache, ReusedValue **held,
                         int *nheld);

/* json_parse_reusing of the JSON Lines row at s, whose end is not yet
 * known: the document, then optional spaces, tabs and carriage returns, then
 * a '\n' within the first avail bytes, whose offset goes to *line_end. A
 * '\n' is no whitespace here. Anything else (a line that is not one such
 * document, or is longer than max_json_bytes or JSON_SOURCE_MAX) throws
 * CF_ERR_JSON without a useful message: the caller finds the line's end and
 * reads it with json_parse_reusing, which reports it as Python would. */
Value json_parse_line_reusing(Rt *rt, const char *s, size_t avail, size_t *line_end, cf_json_cache *cache,
                              ReusedValue **held, int *nheld);

/* A copy of p[0..len) as a Str (nchars and hash not computed). Readers make
 * dozens of short strings per document: they are carved from arena blocks
 * instead of allocated one by one (long ones still are; max_string applies). */
typedef struct StrCarver { char *at, *end; } StrCarver;
enum { CARVE_BLOCK = 4096 };
/* A new block, or a long string allocated alone. */
Str *json_str_carve_slow(Rt *rt, StrCarver *c, const char *p, size_t len);
static inline Str *json_str_carve(Rt *rt, StrCarver *c, const char *p, size_t len) {
    size_t need = (sizeof(Str) + len + 1 + 7) & ~(size_t)7;   /* Str needs 8-byte alignment */
    if (len > CARVE_BLOCK / 8 || len > rt->lim.max_string || need > (size_t)(c->end - c->at))
        return json_str_carve_slow(rt, c, p, len);
    Str *str = (Str *)(void *)c->at;
    c->at += need;
    str->len = len;
    str->nchars = -1;
    str->hash = 0;
    copy_bytes(str->data, p, len);
    str->data[len] = '\0';
    return str;
}

typedef struct JsonDumpOpts {
    bool ensure_ascii;       /* \uXXXX for non-ASCII (surrogate pairs above BMP) */
    bool sort_keys;
    int indent;              /* -1 = None (single line); >= 0 spaces */
    const char *indent_str;  /* non-NULL: indent is this string (Python indent="\t") */
    const char *item_sep;    /* NULL = default: ", " or "," when indenting */
    const char *key_sep;     /* NULL = default ": " */
} JsonDumpOpts;

void json_opts_default(JsonDumpOpts *o);   /* Python json.dumps defaults */

/* Append json.dumps(v) to sb. Floats as Python repr (NaN/Infinity spelled as
 * Python does); VT_BIGINT digits verbatim; tuples as arrays; Markup as str.
 * Dict keys: str as is; int/float/bool/None converted like Python
 * (True -> "true", 1.5 -> "1.5"); others TypeError "keys must be str, int,
 * float, bool or None, not tuple". Undefined/callables/objects:
 * TypeError "Object of type Undefined is not JSON serializable".
 * sort_keys with mixed key types: TypeError as Python
 * ("'<' not supported between instances of 'int' and 'str'").
 * Depth is bounded by rt->lim.max_json_depth (Python would raise
 * RecursionError only for cycles, which immutable values cannot form). */
void json_dump(Rt *rt, StrBuf *sb, Value v, const JsonDumpOpts *o);

/* Write s as a JSON string literal (with quotes). */
void json_write_string(StrBuf *sb, const char *s, size_t n, bool ensure_ascii);
/* The pieces of it, for writers with their own buffers: the length of the
 * prefix of s that json.dumps copies as is (eight bytes at a time), and the
 * escape of an ASCII byte that ends such a run ('"', '\\', a control byte,
 * and with ensure_ascii DEL) into out; returns its length, 2 or 6. */
size_t json_plain_run(const char *s, size_t n, bool ensure_ascii);
size_t json_escape_byte(unsigned char c, char out[6]);
/* The literal in one pass (ensure_ascii=False): its length, and writing it
 * to out, which has room for that many bytes (6 * n + 2 always suffice). */
size_t json_quoted_len(const char *s, size_t n);
size_t json_quote_to(char *out, const char *s, size_t n);
/* The literal's text between the quotes, written at o (room as above: its
 * length, or 6 * n); returns its end. */
char *json_quote_body(char *o, const char *s, size_t n);

#endif
