/* test_json_cache.c — cf_context_from_json_cached (src/engine/json_reuse.c)
 * against cf_context_from_json_limits, its reference: on a sequence of
 * documents whose large members repeat, change, move, repeat twice in one
 * document, sit before syntax errors or at the nesting limit, every context
 * equals the uncached one value by value (types, bytes, JsonSource text,
 * steps and height, which decide what tojson copies and charges), and every
 * error equals it in kind, message and offset. It also checks that shared
 * values were taken (a test of the cache that never hits could not fail). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "chatfmt.h"
#include "engine/context.h"
#include "engine/json.h"
#include "check.h"
#include "same_json_value.h"

typedef struct Buf { char *p; size_t len, cap; } Buf;

static void put(Buf *b, const char *s) {
    size_t n = strlen(s);
    if (b->len + n + 1 > b->cap) {
        b->cap = (b->len + n + 1) * 2;
        b->p = realloc(b->p, b->cap);
        if (!b->p) { printf("out of memory\n"); exit(2); }
    }
    memcpy(b->p + b->len, s, n + 1);
    b->len += n;
}

/* A tools list of `n` functions as json.dumps writes it (verbatim), or with
 * other spacing; `variant` changes the last function's name. */
static char *tools_json(int n, bool verbatim, int variant) {
    Buf b = {0};
    put(&b, "[");
    for (int k = 0; k < n; k++) {
        char one[512];
        /* json.dumps writes "café —" and -300.0, not their escapes and -3e2 */
        snprintf(one, sizeof one,
                 "%s{\"type\": \"function\", \"function\": {\"name\": \"tool_%d_%d\", \"description\": "
                 "\"Does step %d; %s\", \"parameters\": {\"type\": \"object\", \"properties\": "
                 "{\"x\": {\"type\": \"integer\", \"enum\": [1, 2.5, %s, true, null]}}, \"required\": [\"x\"]}}}",
                 k ? (verbatim ? ", " : ",\n  ") : "", k, k == n - 1 ? variant : 0, k,
                 verbatim ? "caf\xc3\xa9 \xe2\x80\x94" : "caf\\u00e9 \\u2014", verbatim ? "-300.0" : "-3e2");
        put(&b, one);
    }
    put(&b, "]");
    return b.p;
}

/* Read doc both ways under lim and compare; returns how many shared values
 * the cached context holds. */
static int compare(cf_json_cache *cache, const char *doc, const cf_limits *lim, const char *what) {
    cf_error ea, eb;
    memset(&ea, 0, sizeof ea);
    memset(&eb, 0, sizeof eb);
    cf_context *a = cf_context_from_json_limits(doc, strlen(doc), lim, &ea);
    cf_context *b = cf_context_from_json_cached(doc, strlen(doc), lim, cache, &eb);
    int held = b ? b->nheld : 0;
    if (!a || !b) {
        check(!a && !b && ea.kind == eb.kind && ea.offset == eb.offset && !strcmp(ea.message, eb.message),
              "%s: uncached %s (%s at %zu), cached %s (%s at %zu)", what, a ? "read" : "failed", ea.message,
              (size_t)ea.offset, b ? "read" : "failed", eb.message, (size_t)eb.offset);
    } else {
        check(same_json_value(v_dict_of(a->vars), v_dict_of(b->vars), 0), "%s: the contexts differ", what);
    }
    cf_context_free(a);
    cf_context_free(b);
    return held;
}

/* cf_context_from_jsonl_cached on text (its line and what follows) against
 * reading the line alone, as dataset mode does without it (up to the first
 * '\n', trailing '\r's dropped): a context read in place has the line's end
 * right and equals the line's; else it must say to read the line
 * (SIZE_MAX). in_place: whether the row must be read in place (a usual
 * row), so that a reader that never is could not pass. Returns the in-place
 * context's shared values, or -1 when it was not read in place. */
static int compare_line(cf_json_cache *cache, const char *text, size_t avail, const cf_limits *lim, bool in_place,
                        const char *what) {
    const char *nl = memchr(text, '\n', avail);
    size_t len = nl ? (size_t)(nl - text) : avail;
    while (len > 0 && text[len - 1] == '\r') len--;
    cf_error e;
    memset(&e, 0, sizeof e);
    cf_context *ref = cf_context_from_json_limits(text, len, lim, &e);
    size_t line_len = 0;
    cf_context *got = cf_context_from_jsonl_cached(text, avail, &line_len, lim, cache);
    int held = -1;
    if (got) {
        held = got->nheld;
        check(nl && line_len == (size_t)(nl - text), "%s: the line's end at %zu, not %zu", what, line_len,
              nl ? (size_t)(nl - text) : avail);
        check(ref && same_json_value(v_dict_of(ref->vars), v_dict_of(got->vars), 0), "%s: the contexts differ", what);
    } else {
        check(line_len == SIZE_MAX, "%s: not read in place, yet a line length %zu", what, line_len);
    }
    check(!in_place || got, "%s: not read in place (%s)", what, ref ? "a good row" : e.message);
    cf_context_free(ref);
    cf_context_free(got);
    return held;
}

static void compare_lines(const cf_limits *lim, const char *tools) {
    cf_json_cache *cache = cf_json_cache_new();
    static const struct { const char *text; bool in_place; const char *what; } rows[] = {
        {"{\"a\": 1}\n{\"b\": 2}\n", true, "a row, another after it"},
        {"{\"a\": [1, {\"b\": \"x\\ny\"}]}\r\n{}", true, "CRLF"},
        {"  {\"a\": 1} \t \r \n", true, "spaces around the document"},
        {"\xEF\xBB\xBF{\"a\": \"\xC3\xA9\"}\n", true, "a BOM and non-ASCII"},
        {"\n{\"a\": 1}\n", false, "an empty line"},
        {"\r\n", false, "a CR alone"},
        {"{\"a\":\n 1}\n", false, "a document over two lines"},
        {"{\"a\": [1,\n2]}\n", false, "an array over two lines"},
        {"{\"a\": 1} {\"b\": 2}\n", false, "two documents on a line"},
        {"{\"a\": 1}\r{\"b\": 2}\n", false, "a CR inside the line"},
        {"{\"a\": \"x\ny\"}\n", false, "a newline inside a string"},
        {"[1, 2]\n", false, "an array"},
        {"{\"a\": \"\\ud800\"}\n", false, "a lone surrogate"},
        {"{\"a\": 1}", false, "no newline"},
        {"{\"a\": 1", false, "cut short"},
        {"{\"a\": \"\xFF\"}\n", false, "bad UTF-8"},
    };
    for (size_t k = 0; k < sizeof rows / sizeof *rows; k++)
        compare_line(cache, rows[k].text, strlen(rows[k].text), lim, rows[k].in_place, rows[k].what);
    /* the line's end beyond what may be read: the line is read as a document */
    compare_line(cache, "{\"a\": 1}\n", 8, lim, false, "the newline past avail");
    cf_limits small = *lim;
    small.max_json_bytes = 12;
    compare_line(cache, "{\"a\": \"0123456789\"}\n", 22, &small, false, "a line over max_json_bytes");
    /* a request's tools, repeated: read in place and shared from the cache */
    Buf b = {0};
    put(&b, "{\"tools\": ");
    put(&b, tools);
    put(&b, ", \"messages\": []}\n{\"next\": 1}\n");
    int held = 0;
    for (int r = 0; r < 4; r++) held = compare_line(cache, b.p, b.len, lim, true, "repeated tools");
    check(held == 1, "repeated tools read in place share the cache's value (%d)", held);
    /* a value spread over lines, read as a document: never matched past a
     * row's end (the text here as JSON Lines: its first line is cut short) */
    Buf ml = {0};
    put(&ml, "{\"tools\": [");
    for (int k = 0; k < 40; k++) put(&ml, k ? ",\n\"a longer item to pass the cache's minimum\"" : "\"first\"");
    put(&ml, "]}\n");
    for (int r = 0; r < 4; r++) compare(cache, ml.p, lim, "tools over lines, as documents");
    compare_line(cache, ml.p, ml.len, lim, false, "tools over lines, as JSON Lines");
    free(ml.p);
    free(b.p);
    cf_json_cache_free(cache);
}

/* The reader guesses each key from the key before it (json.c, "guessing
 * keys"), comparing the guess's bytes with the text. Each case follows a
 * row that teaches the guesses ("role" then "content", the long known keys)
 * with a key that starts like the guess but is another string: longer,
 * shorter, escaped, with a quote or a control byte where the guess ends, or
 * at the end of the text. Its keys, spelled in JSON and decoded, are given
 * side by side, so the expected keys come from the case, not from a reader:
 * the context read with the cache (three times) and without it must hold
 * exactly those keys, in order, each mapping to its index. */
typedef struct KeyCase { const char *json, *decoded; } KeyCase;

static void key_guess_case(cf_json_cache *cache, const KeyCase *keys, size_t nkeys, const cf_limits *lim,
                           const char *what) {
    static const char teach[] =
        "{\"role\": 0, \"content\": 1, \"role\": 2, \"reasoning_content\": 3, "
        "\"add_generation_prompt\": 4, \"continue_final_message\": 5, \"tool_call_id\": 6}";
    Buf b = {0};
    put(&b, "{\"role\": -1");
    char item[96];
    for (size_t k = 0; k < nkeys; k++) {
        snprintf(item, sizeof item, ", \"%s\": %zu", keys[k].json, k);
        put(&b, item);
    }
    put(&b, "}");
    for (int r = 0; r < 4; r++) {
        cf_error e;
        cf_json_cache *use = r < 3 ? cache : NULL;
        if (use) {
            cf_context *t = cf_context_from_json_cached(teach, strlen(teach), lim, use, &e);
            cf_context_free(t);
        }
        cf_context *c = use ? cf_context_from_json_cached(b.p, b.len, lim, use, &e)
                            : cf_context_from_json_limits(b.p, b.len, lim, &e);
        if (!check(c != NULL, "%s (read %d): %s", what, r, c ? "" : e.message)) continue;
        Dict *d = c->vars;
        bool same = dict_len(d) == nkeys + 1;
        for (size_t k = 0; same && k < nkeys; k++) {
            Value key = dict_key_at(d, k + 1), val = dict_val_at(d, k + 1);
            size_t len = strlen(keys[k].decoded);
            same = key.type == VT_STR && key.u.s->len == len && !memcmp(key.u.s->data, keys[k].decoded, len) &&
                   val.type == VT_INT && val.u.i == (int64_t)k;
        }
        check(same, "%s (read %d): the keys are not the case's", what, r);
        cf_context_free(c);
    }
    free(b.p);
}

static void key_guesses(void) {
    cf_json_cache *cache = cf_json_cache_new();
    cf_limits lim = {0};
    static const KeyCase longer[] = {{"contents", "contents"}, {"roles", "roles"}, {"content_", "content_"}};
    static const KeyCase shorter[] = {{"conten", "conten"}, {"rol", "rol"}, {"c", "c"}, {"", ""}};
    static const KeyCase escaped[] = {{"con\\u0074ent", "content"}, {"role\\n", "role\n"},
                                      {"conte\\\"nt", "conte\"nt"}, {"reasoning_conten\\u0074", "reasoning_content"}};
    static const KeyCase long_keys[] = {{"reasoning_contentx", "reasoning_contentx"},
                                        {"add_generation_promp", "add_generation_promp"},
                                        {"add_generation_prompT", "add_generation_prompT"},
                                        {"continue_final_messag", "continue_final_messag"},
                                        {"continue_final_message", "continue_final_message"},
                                        {"tool_call_idx", "tool_call_idx"},
                                        {"Reasoning_content", "Reasoning_content"}};
    static const KeyCase unicode[] = {{"cont\xC3\xA9nt", "cont\xC3\xA9nt"}, {"r\xC3\xB4le", "r\xC3\xB4le"}};
    key_guess_case(cache, longer, 3, &lim, "keys longer than the guess");
    key_guess_case(cache, shorter, 4, &lim, "keys shorter than the guess");
    key_guess_case(cache, escaped, 4, &lim, "escaped keys");
    key_guess_case(cache, long_keys, 7, &lim, "keys near the long known keys");
    key_guess_case(cache, unicode, 2, &lim, "non-ASCII keys");
    /* a control byte or the text's end where the guess ends */
    static const char *bad[] = {"{\"role\": 1, \"content\x01\": 2}", "{\"role\": 1, \"content",
                                "{\"role\": 1, \"content\"", "{\"role\": 1, \"content\": 2, \"role\": 3, \"content\"}"};
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++)
        for (int r = 0; r < 3; r++) compare(cache, bad[k], &lim, "a guessed key cut short or broken");
    /* keys at the very end of a JSON Lines text (no room to compare a guess) */
    compare_line(cache, "{\"role\": 1, \"content\": 2}\n", 26, &lim, true, "guessed keys at the text's end");
    /* a string limit under a guessed key's length, with the same cache */
    cf_limits strict = {0};
    strict.max_string = 6;
    for (int r = 0; r < 3; r++) compare(cache, "{\"role\": 1, \"content\": 2}", &strict, "max_string 6");
    strict.max_string = 20;
    for (int r = 0; r < 3; r++)
        compare(cache, "{\"role\": 1, \"reasoning_content\": 2, \"add_generation_prompt\": 3}", &strict,
                "max_string 20");
    cf_json_cache_free(cache);
}

static char *doc_with(const char *before, const char *tools, const char *after) {
    Buf b = {0};
    put(&b, before);
    put(&b, tools);
    put(&b, after);
    return b.p;
}

int main(void) {
    char *t1 = tools_json(40, true, 0), *t1b = tools_json(40, true, 1), *t2 = tools_json(30, false, 0);
    /* under JSON_REUSE_MIN_BYTES: read each time */
    char *small = strdup("[{\"type\": \"function\", \"function\": {\"name\": \"f\", \"parameters\": {}}}]");
    check(strlen(small) < JSON_REUSE_MIN_BYTES, "the small member is under JSON_REUSE_MIN_BYTES");
    cf_json_cache *cache = cf_json_cache_new();
    check(cache != NULL, "cf_json_cache_new");
    cf_limits lim = {0};
    int hits = 0, small_hits = 0;
    char what[128];
    for (int row = 0; row < 40; row++) {
        const char *tools = row % 10 == 7 ? t1b : t1;   /* a different list now and then */
        char head[160];
        snprintf(head, sizeof head, "{\"messages\": [{\"role\": \"user\", \"content\": \"row %d\"}], \"tools\": ", row);
        char *doc = doc_with(head, tools, row % 5 == 4 ? ", \"documents\": " : "}");
        if (row % 5 == 4) {   /* a second large member, not verbatim, then the end */
            char *more = doc_with(doc, t2, "}");
            free(doc);
            doc = more;
        }
        snprintf(what, sizeof what, "row %d", row);
        hits += compare(cache, doc, &lim, what);
        free(doc);
        doc = doc_with("{\"tools\": ", small, ", \"x\": 1}");
        small_hits += compare(cache, doc, &lim, "small tools");
        free(doc);
    }
    check(hits >= 30, "shared values taken on %d rows of 40", hits);
    check(small_hits == 0, "a small member is never shared (%d)", small_hits);

    /* tool lists interleaved, each repeating a few rows later (agents of
     * several kinds): every list is remembered, and shared once seen twice */
    char *lists[3] = {tools_json(4, true, 2), tools_json(5, true, 3), tools_json(6, false, 4)};
    int interleaved_hits = 0;
    for (int row = 0; row < 30; row++) {
        char head[96];
        snprintf(head, sizeof head, "{\"messages\": [{\"role\": \"user\", \"content\": \"%d\"}], \"tools\": ", row);
        char *doc = doc_with(head, lists[(row / 2) % 3], "}");
        snprintf(what, sizeof what, "interleaved row %d", row);
        interleaved_hits += compare(cache, doc, &lim, what);
        free(doc);
    }
    /* (rows 0, 2, 4 meet each list first, 1, 3, 5 parse it: the other 24 share it) */
    check(interleaved_hits == 24, "interleaved lists shared on %d rows of 30", interleaved_hits);
    for (int k = 0; k < 3; k++) free(lists[k]);

    /* the cache's memory: values of 900 KB, six distinct ones (three under
     * each of two names, so that no slot forgets one for another) each read
     * three times in a row; JSON_REUSE_BUDGET holds four of them, so the
     * first four are remembered (parsed when seen twice, shared the third
     * time), the last two not */
    {
        cf_json_cache *big_cache = cf_json_cache_new();
        check(big_cache != NULL, "cf_json_cache_new");
        size_t big_len = 900 * 1000;
        check(6 * big_len > JSON_REUSE_BUDGET && 4 * big_len <= JSON_REUSE_BUDGET, "the sizes straddle the budget");
        char *big = malloc(big_len + 64);
        check(big != NULL, "malloc");
        for (int v = 0; v < 6 && big; v++) {
            int at = snprintf(big, 64, "{\"%s\": [\"%d", v < 3 ? "blob" : "file", v);
            memset(big + at, 'x', big_len - (size_t)at);
            strcpy(big + big_len, "\"]}");
            int held[3];
            for (int r = 0; r < 3; r++) {
                snprintf(what, sizeof what, "900 KB value %d, read %d", v, r);
                held[r] = compare(big_cache, big, &lim, what);
            }
            check(held[0] == 0 && held[1] == 0 && held[2] == (v < 4), "900 KB value %d: shared %d, %d, %d", v,
                  held[0], held[1], held[2]);
        }
        free(big);
        cf_json_cache_free(big_cache);
    }

    /* errors after, inside and around a repeated member: same messages, offsets */
    char *docs[] = {
        doc_with("{\"tools\": ", t1, ", \"a\": }"),            /* Expecting value after it */
        doc_with("{\"tools\": ", t1, " \"a\": 1}"),            /* Expecting ',' delimiter */
        doc_with("{\"tools\": ", t1, "} trailing"),            /* Extra data */
        doc_with("{\"tools\": ", t1, ", \"s\": \"\\ud800\"}"), /* a lone surrogate after it */
        doc_with("[", t1, "]"),                                /* not an object: at depth 2, never shared */
        doc_with("{\"tools\": ", t1, ", \"tools\": 1}"),       /* a repeated key: the last value */
        doc_with("{\"tools\": ", t1, ", \"tools\": "),         /* the same bytes twice (a repeated key), then cut */
        doc_with("{\"tools\": ", t1, ", \"more\": ["),
    };
    size_t ndocs = sizeof docs / sizeof docs[0];
    char *twice = doc_with(docs[6], t1, "}");
    for (size_t k = 0; k < ndocs; k++) {
        snprintf(what, sizeof what, "error document %zu", k);
        compare(cache, docs[k], &lim, what);
        free(docs[k]);
    }
    check(compare(cache, twice, &lim, "the same member value twice") == 2, "both copies shared");
    free(twice);
    char *cut = doc_with("{\"tools\": ", t1, "");
    cut[strlen(cut) - 10] = 0;   /* the repeated bytes cut short: read, and fail, as text */
    compare(cache, cut, &lim, "a member cut short");
    free(cut);

    /* the nesting limit: tools nest 6 deep in a row (object, list, tool,
     * function, parameters, properties, x, enum = 8 with the row) */
    char *doc = doc_with("{\"tools\": ", t1, "}");
    for (unsigned depth = 5; depth <= 10; depth++) {
        cf_limits l = {0};
        l.max_json_depth = depth;
        for (int r = 0; r < 4; r++) {
            snprintf(what, sizeof what, "max_json_depth %u, read %d", depth, r);
            compare(cache, doc, &l, what);
        }
    }
    /* limits change: values parsed under others are not taken */
    cf_limits strict = {0};
    strict.max_items = 20;   /* the 40-tool list is too long */
    for (int r = 0; r < 3; r++) compare(cache, doc, &strict, "max_items 20");
    strict.max_items = 0;
    strict.max_string = 16;
    for (int r = 0; r < 3; r++) compare(cache, doc, &strict, "max_string 16");
    int held_after = 0;
    for (int r = 0; r < 3; r++) held_after = compare(cache, doc, &lim, "default limits again");
    check(held_after == 1, "shared again under the first limits (%d)", held_after);

    /* a context outlives its cache, and the cache's value is replaced under it */
    cf_error err;
    cf_context *kept = cf_context_from_json_cached(doc, strlen(doc), &lim, cache, &err);
    check(kept && kept->nheld == 1, "a context holding a shared value");
    for (int r = 0; r < 8; r++) {   /* other bytes, until the cache lets the old value go */
        char *other = doc_with("{\"tools\": ", r % 2 ? t1b : t2, "}");
        compare(cache, other, &lim, "other tools");
        free(other);
    }
    cf_json_cache_free(cache);
    cf_context *ref = cf_context_from_json_limits(doc, strlen(doc), &lim, &err);
    check(kept && ref && same_json_value(v_dict_of(kept->vars), v_dict_of(ref->vars), 0), "the kept context intact");
    cf_context_free(kept);
    cf_context_free(ref);
    compare(NULL, "{\"a\": [1, {\"b\": 2}]}", &lim, "no cache: as uncached");
    compare_lines(&lim, t1);
    key_guesses();
    size_t no_cache_len = 0;
    check(!cf_context_from_jsonl_cached("{}\n", 3, &no_cache_len, &lim, NULL) && no_cache_len == SIZE_MAX,
          "no cache: the line is read as a document");
    free(doc);
    free(t1);
    free(t1b);
    free(t2);
    free(small);
    return check_summary();
}
