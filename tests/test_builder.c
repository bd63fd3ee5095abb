/* test_builder.c — cf_builder_* (src/engine/builder.c): a context pushed value by
 * value renders exactly as the same data read from JSON (every seed template
 * x every shared conversation), and each kind of error is kept and reported.
 * Run from the repository root; CHATFMT_SHARED names the reference material
 * (default ../shared). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "chatfmt.h"
#include "engine/context.h"
#include "engine/json.h"

static int passed, failed;

#define CHECK(cond, ...)                          \
    do {                                          \
        if (cond) passed++;                       \
        else {                                    \
            failed++;                             \
            printf("FAIL %s:%d: ", __FILE__, __LINE__); \
            printf(__VA_ARGS__);                  \
            printf("\n");                         \
        }                                         \
    } while (0)

/* Render src (raw mode) with c and check the output is want; c stays. */
static void check_render(const cf_context *c, const char *src, const char *want, const char *what) {
    cf_error err;
    cf_result r;
    cf_template *t = cf_compile(src, strlen(src), NULL, &err);
    bool ok = t && cf_render(t, c, NULL, &r, &err);
    CHECK(ok && strcmp(r.text, want) == 0, "%s: %s", what, ok ? r.text : err.message);
    if (ok) cf_result_free(&r);
    cf_template_free(t);
}

static char *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)len + 1);
    if (b && fread(b, 1, (size_t)len, f) != (size_t)len) { free(b); b = NULL; }
    fclose(f);
    if (b) b[len] = 0;
    *n = (size_t)len;
    return b;
}

/* The host side: walk a value (here, one the JSON reader made) into b. */
static void push(cf_builder *b, Value v) {
    switch (v.type) {
    case VT_NONE: cf_builder_null(b); break;
    case VT_BOOL: cf_builder_bool(b, v.u.b); break;
    case VT_INT: cf_builder_int(b, v.u.i); break;
    case VT_FLOAT: cf_builder_float(b, v.u.f); break;
    case VT_STR: cf_builder_str(b, v.u.s->data, v.u.s->len); break;
    case VT_LIST:
        cf_builder_list(b, v.u.list->len);
        for (size_t i = 0; i < v.u.list->len; i++) push(b, v.u.list->items[i]);
        break;
    case VT_DICT:
        cf_builder_dict(b, dict_len(v.u.dict));
        for (size_t i = 0; i < dict_len(v.u.dict); i++) {
            push(b, dict_key_at(v.u.dict, i));
            push(b, dict_val_at(v.u.dict, i));
        }
        break;
    default: cf_builder_null(b); printf("unexpected value type %d\n", v.type); failed++;
    }
}

/* The same walk through cf_builder_feed: items collected in a small array
 * and fed whenever it fills (so chunks end at every kind of position). */
enum { FEED_CHUNK = 7 };
typedef struct Feeder {
    cf_builder *b;
    cf_builder_item items[FEED_CHUNK];
    size_t n;
    bool ascii;   /* ASCII strings go as CF_ITEM_ASCII (keys repeat by address) */
    bool keys;    /* and ASCII dict keys as CF_ITEM_KEY (a dict's keys are distinct) */
    bool utf8;    /* the other strings as CF_ITEM_UTF8 (valid: the JSON reader's) */
} Feeder;

static bool all_ascii(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] >= 0x80) return false;
    return true;
}

static cf_builder_item *feeder_next(Feeder *fd, cf_builder_item_kind kind) {
    if (fd->n == FEED_CHUNK) {
        cf_builder_feed(fd->b, fd->items, fd->n);
        fd->n = 0;
    }
    cf_builder_item *it = &fd->items[fd->n++];
    memset(it, 0, sizeof *it);
    it->kind = kind;
    return it;
}

static void push_fed(Feeder *fd, Value v) {
    cf_builder_item *it;
    switch (v.type) {
    case VT_NONE: feeder_next(fd, CF_ITEM_NULL); break;
    case VT_BOOL: feeder_next(fd, CF_ITEM_BOOL)->n = v.u.b; break;
    case VT_INT: feeder_next(fd, CF_ITEM_INT)->u.i = v.u.i; break;
    case VT_FLOAT: feeder_next(fd, CF_ITEM_FLOAT)->u.f = v.u.f; break;
    case VT_STR:
        it = feeder_next(fd, fd->ascii && all_ascii(v.u.s->data, v.u.s->len) ? CF_ITEM_ASCII
                             : fd->utf8                                      ? CF_ITEM_UTF8
                                                                             : CF_ITEM_STR);
        it->u.s = v.u.s->data;
        it->n = v.u.s->len;
        break;
    case VT_LIST:
        feeder_next(fd, CF_ITEM_LIST)->n = v.u.list->len;
        for (size_t i = 0; i < v.u.list->len; i++) push_fed(fd, v.u.list->items[i]);
        break;
    case VT_DICT:
        feeder_next(fd, CF_ITEM_DICT)->n = dict_len(v.u.dict);
        for (size_t i = 0; i < dict_len(v.u.dict); i++) {
            Value k = dict_key_at(v.u.dict, i);
            if (fd->keys && k.type == VT_STR && all_ascii(k.u.s->data, k.u.s->len)) {
                it = feeder_next(fd, CF_ITEM_KEY);
                it->u.s = k.u.s->data;
                it->n = k.u.s->len;
            } else {
                push_fed(fd, k);
            }
            push_fed(fd, dict_val_at(v.u.dict, i));
        }
        break;
    default: feeder_next(fd, CF_ITEM_NULL); printf("unexpected value type %d\n", v.type); failed++;
    }
}

static cf_context *build_fed(Value v, bool ascii, cf_error *err) {
    Feeder fd;
    fd.b = cf_builder_new(NULL);
    fd.n = 0;
    fd.ascii = ascii;
    fd.keys = fd.utf8 = false;
    push_fed(&fd, v);
    cf_builder_feed(fd.b, fd.items, fd.n);
    return cf_builder_finish(fd.b, err);
}

/* The same with keys as CF_ITEM_KEY and the strings that are not ASCII as
 * CF_ITEM_UTF8 (as the Python binding feeds them), on a builder kept
 * between values (cf_builder_take). */
static cf_context *build_fed_keys(cf_builder *kept, Value v, cf_error *err) {
    Feeder fd;
    fd.b = kept;
    fd.n = 0;
    fd.ascii = fd.keys = fd.utf8 = true;
    push_fed(&fd, v);
    cf_builder_feed(fd.b, fd.items, fd.n);
    return cf_builder_take(fd.b, err);
}

/* Are a (the JSON reader's) and b (the builder's) the same values, down
 * to what the engine caches in them: a string's character count, a dict
 * entry's hash, a known key stored as its known Str? */
static bool same_value(Value a, Value b, int depth) {
    if (a.type != b.type || depth > 200) return false;
    switch (a.type) {
    case VT_NONE: return true;
    case VT_BOOL: return a.u.b == b.u.b;
    case VT_INT: return a.u.i == b.u.i;
    case VT_FLOAT: return memcmp(&a.u.f, &b.u.f, sizeof a.u.f) == 0;
    case VT_STR:
        return a.u.s->len == b.u.s->len && memcmp(a.u.s->data, b.u.s->data, a.u.s->len) == 0 &&
               b.u.s->data[b.u.s->len] == 0 && str_nchars(a.u.s) == str_nchars(b.u.s);
    case VT_LIST:
    case VT_TUPLE:
        if (a.u.list->len != b.u.list->len) return false;
        for (size_t i = 0; i < a.u.list->len; i++)
            if (!same_value(a.u.list->items[i], b.u.list->items[i], depth + 1)) return false;
        return true;
    case VT_DICT:
        if (dict_len(a.u.dict) != dict_len(b.u.dict)) return false;
        for (size_t i = 0; i < dict_len(a.u.dict); i++) {
            Value ka = dict_key_at(a.u.dict, i), kb = dict_key_at(b.u.dict, i);
            const DictEntry *e = &b.u.dict->entries[i];
            if (!same_value(ka, kb, depth + 1) || !same_value(dict_val_at(a.u.dict, i), dict_val_at(b.u.dict, i), depth + 1))
                return false;
            Str *known = known_key(kb.u.s, str_hash(kb.u.s));
            if (e->hash != str_hash(kb.u.s) || (known && known != kb.u.s)) return false;
            Value got;   /* found again by its own bytes: this very entry's value */
            if (!dict_get_str(b.u.dict, kb.u.s->data, kb.u.s->len, &got) || got.type != e->val.type ||
                memcmp(&got.u, &e->val.u, sizeof got.u) != 0)
                return false;
        }
        return true;
    default: return false;
    }
}

static bool same_result(const cf_template *t, const cf_context *a, const cf_context *b, const cf_render_options *ro) {
    cf_result r1, r2;
    cf_error e1, e2;
    bool ok1 = cf_render_chat(t, a, ro, &r1, &e1);
    bool ok2 = cf_render_chat(t, b, ro, &r2, &e2);
    bool same = ok1 == ok2 && (ok1 ? r1.len == r2.len && memcmp(r1.text, r2.text, r1.len) == 0
                                   : e1.kind == e2.kind && strcmp(e1.message, e2.message) == 0);
    if (ok1) cf_result_free(&r1);
    if (ok2) cf_result_free(&r2);
    return same;
}

static void same_renders(const char *shared) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/conversations", shared);
    DIR *d = opendir(dir);
    if (!d) { printf("FAIL no %s\n", dir); failed++; return; }
    static const char *const seeds[] = {"glm45", "toolcall-qwen3", "command-a-reasoning", "nanbeige",
                                        "reasoning-qwen25"};
    int compared = 0;
    cf_builder *kept = cf_builder_new(NULL);   /* every conversation's KEY build, one after another */
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t nl = strlen(e->d_name);
        if (nl < 6 || strcmp(e->d_name + nl - 5, ".json")) continue;
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        size_t n = 0;
        char *json = slurp(path, &n);
        cf_error err;
        cf_context *from_json = cf_context_from_json(json, n, &err);
        CHECK(from_json != NULL, "%s: %s", e->d_name, err.message);
        if (!from_json) { free(json); continue; }
        cf_builder *b = cf_builder_new(NULL);
        push(b, v_dict_of(from_json->vars));
        cf_context *built = cf_builder_finish(b, &err);
        CHECK(built != NULL, "%s: builder: %s", e->d_name, err.message);
        cf_context *fed = build_fed(v_dict_of(from_json->vars), false, &err);
        CHECK(fed != NULL, "%s: builder feed: %s", e->d_name, err.message);
        cf_context *fed_ascii = build_fed(v_dict_of(from_json->vars), true, &err);
        CHECK(fed_ascii != NULL, "%s: builder feed (ASCII items): %s", e->d_name, err.message);
        cf_context *fed_keys = build_fed_keys(kept, v_dict_of(from_json->vars), &err);
        CHECK(fed_keys != NULL, "%s: builder feed (KEY items, kept builder): %s", e->d_name, err.message);
        for (size_t k = 0; built && k < sizeof seeds / sizeof *seeds; k++) {
            cf_source src;
            cf_template *t = NULL;
            if (cf_source_load(seeds[k], NULL, &src, &err)) {
                t = cf_compile(src.text, src.len, NULL, &err);
                cf_render_options ro;
                memset(&ro, 0, sizeof ro);
                ro.now = "2026-03-14T15:09:26";
                ro.defaults = src.tokens;
                cf_result r1, r2;
                cf_error e1, e2;
                bool ok1 = t && cf_render_chat(t, from_json, &ro, &r1, &e1);
                bool ok2 = t && cf_render_chat(t, built, &ro, &r2, &e2);
                CHECK(ok1 == ok2, "%s x %s: one render failed", seeds[k], e->d_name);
                if (ok1 && ok2)
                    CHECK(r1.len == r2.len && memcmp(r1.text, r2.text, r1.len) == 0, "%s x %s: outputs differ",
                          seeds[k], e->d_name);
                if (!ok1 && !ok2)
                    CHECK(e1.kind == e2.kind && strcmp(e1.message, e2.message) == 0, "%s x %s: errors differ",
                          seeds[k], e->d_name);
                if (ok1) cf_result_free(&r1);
                if (ok2) cf_result_free(&r2);
                if (t && fed) CHECK(same_result(t, from_json, fed, &ro), "%s x %s: fed context renders differently",
                                    seeds[k], e->d_name);
                if (t && fed_ascii)
                    CHECK(same_result(t, from_json, fed_ascii, &ro), "%s x %s: ASCII-fed context renders differently",
                          seeds[k], e->d_name);
                if (t && fed_keys)
                    CHECK(same_result(t, from_json, fed_keys, &ro), "%s x %s: KEY-fed context renders differently",
                          seeds[k], e->d_name);
                compared++;
                cf_template_free(t);
                cf_source_free(&src);
            } else {
                CHECK(0, "built-in %s: %s", seeds[k], err.message);
            }
        }
        /* (after the renders: a UTF8 item's character count is counted by
         * the first that needs it, which same_value would do first) */
        if (fed && fed_ascii && fed_keys)
            CHECK(same_value(v_dict_of(from_json->vars), v_dict_of(fed->vars), 0) &&
                      same_value(v_dict_of(from_json->vars), v_dict_of(fed_ascii->vars), 0) &&
                      same_value(v_dict_of(from_json->vars), v_dict_of(fed_keys->vars), 0),
                  "%s: fed values differ from the JSON reader's", e->d_name);
        cf_context_free(built);
        cf_context_free(fed);
        cf_context_free(fed_ascii);
        cf_context_free(fed_keys);
        cf_context_free(from_json);
        free(json);
    }
    closedir(d);
    cf_builder_free(kept);
    CHECK(compared >= 50, "only %d renders compared", compared);
    printf("seeds x conversations: %d renders compared\n", compared);
}

static cf_error_kind finish_kind(cf_builder *b, const char *want_in_message) {
    cf_error err;
    cf_context *c = cf_builder_finish(b, &err);
    if (c) { cf_context_free(c); return CF_OK; }
    if (want_in_message && !strstr(err.message, want_in_message)) {
        printf("  message was: %s\n", err.message);
        return (cf_error_kind)-1;
    }
    return err.kind;
}

static void errors(void) {
    cf_builder *b = cf_builder_new(NULL);
    cf_builder_dict(b, 1);
    cf_builder_str(b, "x", 1);
    cf_builder_str(b, "\xff", 1);
    CHECK(cf_builder_failed(b), "invalid UTF-8 kept");
    CHECK(finish_kind(b, "can't decode byte 0xff") == CF_ERR_UNICODE, "invalid UTF-8");

    b = cf_builder_new(NULL);
    cf_builder_dict(b, 1);
    cf_builder_str(b, "x", 1);
    cf_builder_float(b, 1.0 / 0.0);
    CHECK(finish_kind(b, "Out of range float") == CF_ERR_VALUE, "infinity");

    b = cf_builder_new(NULL);
    cf_builder_dict(b, 1);
    cf_builder_int(b, 1);
    CHECK(finish_kind(b, "key must be a string") == CF_ERR_TYPE, "int key");

    b = cf_builder_new(NULL);
    cf_builder_list(b, 0);
    CHECK(finish_kind(b, "must be a JSON object, not list") == CF_ERR_TYPE, "list at the top");

    b = cf_builder_new(NULL);
    cf_builder_dict(b, 2);
    cf_builder_str(b, "a", 1);
    CHECK(finish_kind(b, "still open") == CF_ERR_USAGE, "unfinished dict");

    b = cf_builder_new(NULL);
    CHECK(finish_kind(b, "no value") == CF_ERR_USAGE, "nothing built");

    cf_limits lim;
    memset(&lim, 0, sizeof lim);
    lim.max_json_depth = 3;
    b = cf_builder_new(&lim);
    cf_builder_dict(b, 1);
    cf_builder_str(b, "a", 1);
    for (int i = 0; i < 5; i++) cf_builder_list(b, 1);
    CHECK(finish_kind(b, "max_json_depth") == CF_ERR_LIMIT, "depth limit");

    memset(&lim, 0, sizeof lim);
    lim.max_json_bytes = 10;
    b = cf_builder_new(&lim);
    cf_builder_dict(b, 1);
    cf_builder_str(b, "a", 1);
    cf_builder_str(b, "0123456789abc", 13);
    CHECK(finish_kind(b, "max_json_bytes") == CF_ERR_LIMIT, "bytes limit");

    /* a repeated key: first position, last value (as json.loads) */
    b = cf_builder_new(NULL);
    cf_builder_dict(b, 3);
    cf_builder_str(b, "a", 1); cf_builder_int(b, 1);
    cf_builder_str(b, "b", 1); cf_builder_int(b, 2);
    cf_builder_str(b, "a", 1); cf_builder_int(b, 3);
    cf_error err;
    cf_context *c = cf_builder_finish(b, &err);
    CHECK(c != NULL, "repeated key: %s", err.message);
    if (c) {
        check_render(c, "{{ a }},{{ b }}", "3,2", "repeated key value");
        cf_context_free(c);
    }

    /* known keys (found by two words) repeat like any key, and "role\0",
     * whose padded words are those of "role", stays a key of its own */
    b = cf_builder_new(NULL);
    cf_builder_dict(b, 1);
    cf_builder_str(b, "d", 1);
    cf_builder_dict(b, 4);
    cf_builder_str(b, "role", 4); cf_builder_int(b, 1);
    cf_builder_str(b, "role\0", 5); cf_builder_int(b, 2);
    cf_builder_str(b, "content", 7); cf_builder_int(b, 3);
    cf_builder_str(b, "role", 4); cf_builder_int(b, 4);
    c = cf_builder_finish(b, &err);
    CHECK(c != NULL, "known keys: %s", err.message);
    if (c) {
        check_render(c, "{{ d|length }} {{ d.role }} {{ d|tojson }}",
                     "3 4 {\"role\": 4, \"role\\u0000\": 2, \"content\": 3}", "known keys render");
        cf_context_free(c);
    }

    /* nested containers close by themselves; non-ASCII counted in code points */
    b = cf_builder_new(NULL);
    cf_builder_dict(b, 2);
    cf_builder_str(b, "l", 1);
    cf_builder_list(b, 2);
    cf_builder_list(b, 0);
    cf_builder_dict(b, 1);
    cf_builder_str(b, "k", 1); cf_builder_null(b);
    cf_builder_str(b, "s", 1);
    cf_builder_str(b, "h\xc3\xa9\xe4\xb8\xad", 6);
    c = cf_builder_finish(b, &err);
    CHECK(c != NULL, "nested: %s", err.message);
    if (c) {
        check_render(c, "{{ l|tojson }} {{ s|length }} {{ s[1] }}", "[[], {\"k\": null}] 3 \xc3\xa9", "nested render");
        cf_context_free(c);
    }

    /* feed: the same errors, kept; the items after an error are ignored */
    b = cf_builder_new(NULL);
    cf_builder_item bad[] = {{CF_ITEM_DICT, 2, {0}}, {CF_ITEM_STR, 1, {.s = "x"}}, {CF_ITEM_STR, 1, {.s = "\xff"}},
                             {CF_ITEM_STR, 1, {.s = "y"}}, {CF_ITEM_INT, 0, {.i = 1}}};
    cf_builder_feed(b, bad, 5);
    CHECK(finish_kind(b, "can't decode byte 0xff") == CF_ERR_UNICODE, "feed: invalid UTF-8");
    b = cf_builder_new(NULL);
    cf_builder_item odd[] = {{CF_ITEM_DICT, 1, {0}}, {(cf_builder_item_kind)99, 0, {0}}};
    cf_builder_feed(b, odd, 2);
    CHECK(finish_kind(b, "unknown item kind 99") == CF_ERR_USAGE, "feed: unknown kind");
    b = cf_builder_new(NULL);
    cf_builder_feed(b, NULL, 3);
    CHECK(finish_kind(b, "NULL items") == CF_ERR_USAGE, "feed: NULL items");
    b = cf_builder_new(NULL);
    cf_builder_item nan_item[] = {{CF_ITEM_DICT, 1, {0}}, {CF_ITEM_STR, 1, {.s = "f"}}, {CF_ITEM_FLOAT, 0, {.f = 0.0 / 0.0}}};
    cf_builder_feed(b, nan_item, 3);
    CHECK(finish_kind(b, "Out of range float") == CF_ERR_VALUE, "feed: NaN");
    b = cf_builder_new(NULL);
    cf_builder_item ok_items[] = {{CF_ITEM_DICT, 2, {0}}, {CF_ITEM_STR, 1, {.s = "t"}}, {CF_ITEM_BOOL, 7, {0}},
                                  {CF_ITEM_STR, 1, {.s = "n"}}};
    cf_builder_feed(b, ok_items, 4);
    cf_builder_feed(b, NULL, 0);   /* nothing: allowed */
    cf_builder_int(b, -5);         /* feed and single calls mix */
    c = cf_builder_finish(b, &err);
    CHECK(c != NULL, "feed mixed: %s", err.message);
    if (c) {
        check_render(c, "{{ t }} {{ n }}", "True -5", "feed render");
        cf_context_free(c);
    }

    /* tuples stay tuples (what a binding's Python tuple is to Jinja2), by call and by feed */
    b = cf_builder_new(NULL);
    cf_builder_dict(b, 3);
    cf_builder_str(b, "t", 1);
    cf_builder_tuple(b, 2);
    cf_builder_int(b, 1);
    cf_builder_tuple(b, 1);
    cf_builder_str(b, "x", 1);
    cf_builder_str(b, "e", 1);
    cf_builder_tuple(b, 0);
    cf_builder_item tuple_items[] = {{CF_ITEM_STR, 1, {.s = "f"}}, {CF_ITEM_TUPLE, 2, {0}}, {CF_ITEM_NULL, 0, {0}},
                                     {CF_ITEM_LIST, 0, {0}}};
    cf_builder_feed(b, tuple_items, 4);
    c = cf_builder_finish(b, &err);
    CHECK(c != NULL, "tuples: %s", err.message);
    if (c) {
        check_render(c, "{{ t }} {{ e }} {{ f }} {{ t + (2,) }} {{ t|tojson }} {{ t is sequence }}",
                     "(1, ('x',)) () (None, []) (1, ('x',), 2) [1, [\"x\"]] True", "tuples render");
        cf_result r;
        const char *bad_src = "{{ t + [2] }}";
        cf_template *t2 = cf_compile(bad_src, strlen(bad_src), NULL, &err);
        CHECK(t2 && !cf_render(t2, c, NULL, &r, &err) && err.kind == CF_ERR_TYPE &&
                  strstr(err.message, "can only concatenate tuple (not \"list\") to tuple"),
              "tuple + list refused: %s", err.message);
        cf_template_free(t2);
        cf_context_free(c);
    }

    /* NULL builder (allocation failed) is safe everywhere */
    cf_builder_null(NULL);
    cf_builder_dict(NULL, 1);
    cf_builder_feed(NULL, ok_items, 4);
    CHECK(cf_builder_failed(NULL), "NULL builder counts as failed");
    CHECK(cf_builder_finish(NULL, &err) == NULL && err.kind == CF_ERR_MEMORY, "NULL builder finish");
}

/* CF_ITEM_ASCII keys repeated from one address, within a dict (the first
 * position stays, the last value wins) and across dicts, known and not,
 * short and long, and a shorter key at an address seen before: the values
 * are the JSON reader's. */
static void ascii_keys(void) {
    static const char role[] = "role", mine[] = "my_key", agp[] = "add_generation_prompt", txt[] = "h\xc3\xa9";
    const cf_builder_item items[] = {
        {CF_ITEM_DICT, 4, {0}},
        {CF_ITEM_ASCII, 6, {.s = mine}}, {CF_ITEM_LIST, 2, {0}},
        {CF_ITEM_DICT, 4, {0}},
        {CF_ITEM_ASCII, 4, {.s = role}}, {CF_ITEM_ASCII, 4, {.s = "user"}},
        {CF_ITEM_ASCII, 6, {.s = mine}}, {CF_ITEM_INT, 0, {.i = 1}},
        {CF_ITEM_ASCII, 4, {.s = role}}, {CF_ITEM_ASCII, 2, {.s = "me"}},
        {CF_ITEM_ASCII, 2, {.s = mine}}, {CF_ITEM_STR, 3, {.s = txt}},
        {CF_ITEM_DICT, 3, {0}},
        {CF_ITEM_ASCII, 6, {.s = mine}}, {CF_ITEM_ASCII, 0, {.s = NULL}},
        {CF_ITEM_ASCII, 4, {.s = role}}, {CF_ITEM_NULL, 0, {0}},
        {CF_ITEM_ASCII, 21, {.s = agp}}, {CF_ITEM_BOOL, 1, {0}},
        {CF_ITEM_ASCII, 21, {.s = agp}}, {CF_ITEM_BOOL, 0, {0}},
        {CF_ITEM_ASCII, 4, {.s = role}}, {CF_ITEM_ASCII, 4, {.s = role}},
        {CF_ITEM_ASCII, 0, {.s = mine}}, {CF_ITEM_TUPLE, 1, {0}}, {CF_ITEM_ASCII, 3, {.s = "a\tb"}},
    };
    static const char want[] = "{\"my_key\": [{\"role\": \"me\", \"my_key\": 1, \"my\": \"h\xc3\xa9\"}, "
                               "{\"my_key\": \"\", \"role\": null, \"add_generation_prompt\": true}], "
                               "\"add_generation_prompt\": false, \"role\": \"role\", \"\": [\"a\\tb\"]}";
    cf_error err;
    cf_context *from_json = cf_context_from_json(want, strlen(want), &err);
    CHECK(from_json != NULL, "ASCII keys: JSON: %s", err.message);
    cf_builder *b = cf_builder_new(NULL);
    cf_builder_feed(b, items, sizeof items / sizeof *items);
    cf_context *built = cf_builder_finish(b, &err);
    CHECK(built != NULL, "ASCII keys: builder: %s", err.message);
    if (from_json && built) {
        /* (the tuple prints as a list in JSON: compare it as one) */
        Value t;
        CHECK(dict_get_str(built->vars, "", 0, &t) && t.type == VT_TUPLE, "ASCII keys: the tuple");
        if (t.type == VT_TUPLE) built->vars->entries[3].val.type = VT_LIST;
        CHECK(same_value(v_dict_of(from_json->vars), v_dict_of(built->vars), 0), "ASCII keys: values differ");
        check_render(built, "{{ my_key[0].role }}{{ my_key[0].my }}{{ my_key[0].my|length }}{{ role|length }}", "meh\xc3\xa9" "24",
                     "ASCII keys render");
    }
    cf_context_free(built);
    cf_context_free(from_json);
}

/* CF_ITEM_KEY: keys placed without a look at those before them, in a
 * small dict and in one past DICT_LINEAR_MAX (hash index), known and not,
 * one repeated from an address within another dict; a KEY where no key is
 * due is a usage error; a kept builder reports its failed value at the
 * take and then builds the next one. */
static void unique_keys(void) {
    static const char role[] = "role", mine[] = "my_key";
    static const char *const many[] = {"a", "b", "content", "d", "e", "name", "g", "h", "i", "type", "k", "l"};
    enum { MANY = sizeof many / sizeof *many };
    cf_builder_item items[64];
    size_t n = 0;
    items[n++] = (cf_builder_item){CF_ITEM_DICT, 3, {0}};
    items[n++] = (cf_builder_item){CF_ITEM_KEY, 6, {.s = mine}};
    items[n++] = (cf_builder_item){CF_ITEM_DICT, 2, {0}};
    items[n++] = (cf_builder_item){CF_ITEM_KEY, 4, {.s = role}};
    items[n++] = (cf_builder_item){CF_ITEM_ASCII, 4, {.s = "user"}};
    items[n++] = (cf_builder_item){CF_ITEM_KEY, 6, {.s = mine}};
    items[n++] = (cf_builder_item){CF_ITEM_INT, 0, {.i = 7}};
    items[n++] = (cf_builder_item){CF_ITEM_KEY, 4, {.s = role}};
    items[n++] = (cf_builder_item){CF_ITEM_NULL, 0, {0}};
    items[n++] = (cf_builder_item){CF_ITEM_KEY, 4, {.s = "many"}};
    items[n++] = (cf_builder_item){CF_ITEM_DICT, MANY, {0}};
    for (size_t i = 0; i < MANY; i++) {
        items[n++] = (cf_builder_item){CF_ITEM_KEY, strlen(many[i]), {.s = many[i]}};
        items[n++] = (cf_builder_item){CF_ITEM_INT, 0, {.i = (int64_t)i}};
    }
    static const char want[] = "{\"my_key\": {\"role\": \"user\", \"my_key\": 7}, \"role\": null, \"many\": "
                               "{\"a\": 0, \"b\": 1, \"content\": 2, \"d\": 3, \"e\": 4, \"name\": 5, \"g\": 6, "
                               "\"h\": 7, \"i\": 8, \"type\": 9, \"k\": 10, \"l\": 11}}";
    cf_error err;
    cf_context *from_json = cf_context_from_json(want, strlen(want), &err);
    CHECK(from_json != NULL, "KEY items: JSON: %s", err.message);
    cf_builder *b = cf_builder_new(NULL);
    for (int round = 0; round < 2; round++) {   /* the second on the kept builder */
        cf_builder_feed(b, items, n);
        cf_context *built = cf_builder_take(b, &err);
        CHECK(built != NULL, "KEY items (round %d): %s", round, err.message);
        if (from_json && built) {
            CHECK(same_value(v_dict_of(from_json->vars), v_dict_of(built->vars), 0), "KEY items: values differ");
            check_render(built, "{{ my_key.role }}{{ my_key.my_key }}{{ many.type }}{{ many['l'] }}{{ many|length }}",
                         "user791112", "KEY items render");
        }
        cf_context_free(built);
    }
    /* a KEY as a value, and as a list item: the take reports it */
    const cf_builder_item misplaced[][3] = {{{CF_ITEM_DICT, 1, {0}}, {CF_ITEM_KEY, 1, {.s = "a"}}, {CF_ITEM_KEY, 1, {.s = "b"}}},
                                           {{CF_ITEM_LIST, 1, {0}}, {CF_ITEM_KEY, 1, {.s = "a"}}, {CF_ITEM_NULL, 0, {0}}}};
    for (int k = 0; k < 2; k++) {
        cf_builder_feed(b, misplaced[k], 3);
        CHECK(cf_builder_failed(b), "misplaced KEY %d: failed", k);
        cf_context *c = cf_builder_take(b, &err);
        CHECK(!c && err.kind == CF_ERR_USAGE && strstr(err.message, "KEY item"), "misplaced KEY %d: %s", k,
              c ? "built" : err.message);
        cf_context_free(c);
    }
    CHECK(!cf_builder_failed(b), "the kept builder is empty again after a failed value");
    CHECK(!cf_builder_take(b, &err) && err.kind == CF_ERR_USAGE && strstr(err.message, "cf_builder_take: no value was built"),
          "a take with nothing built: %s", err.message);
    cf_builder_feed(b, items, n);
    cf_context *again = cf_builder_take(b, &err);
    CHECK(again && from_json && same_value(v_dict_of(from_json->vars), v_dict_of(again->vars), 0),
          "KEY items after a failed value: %s", again ? "values differ" : err.message);
    cf_context_free(again);
    cf_builder_free(b);
    cf_context_free(from_json);
}

/* Nesting past the open containers kept inline (the stack grows), each
 * level a dict or a list in turn, pushed one call a value and fed. */
static void deep_nesting(void) {
    enum { LEVELS = 70 };
    char json[16 * LEVELS + 64];
    size_t n = 0;
    n += (size_t)sprintf(json + n, "{\"x\": ");
    for (int i = 0; i < LEVELS; i++) n += (size_t)sprintf(json + n, i % 2 ? "{\"k%d\": " : "[%d, ", i);
    n += (size_t)sprintf(json + n, "\"deep\"");
    for (int i = LEVELS - 1; i >= 0; i--) n += (size_t)sprintf(json + n, i % 2 ? "}" : "]");
    n += (size_t)sprintf(json + n, "}");
    cf_error err;
    cf_context *from_json = cf_context_from_json(json, n, &err);
    CHECK(from_json != NULL, "deep: JSON: %s", err.message);
    if (!from_json) return;
    cf_builder *b = cf_builder_new(NULL);
    push(b, v_dict_of(from_json->vars));
    cf_context *built = cf_builder_finish(b, &err);
    CHECK(built && same_value(v_dict_of(from_json->vars), v_dict_of(built->vars), 0), "deep: built values differ");
    cf_context *fed = build_fed(v_dict_of(from_json->vars), true, &err);
    CHECK(fed && same_value(v_dict_of(from_json->vars), v_dict_of(fed->vars), 0), "deep: fed values differ");
    cf_context_free(built);
    cf_context_free(fed);
    cf_context_free(from_json);
}

/* CF_ITEM_UTF8: strings taken as valid UTF-8 without a look, as values
 * and keys, their character counts found when a render needs them. */
static void utf8_items(void) {
    static const char cafe[] = "caf\xc3\xa9", key[] = "cl\xc3\xa9";
    const cf_builder_item items[] = {
        {CF_ITEM_DICT, 3, {0}},
        {CF_ITEM_KEY, 1, {.s = "s"}}, {CF_ITEM_UTF8, 5, {.s = cafe}},
        {CF_ITEM_KEY, 1, {.s = "d"}}, {CF_ITEM_DICT, 1, {0}},
        {CF_ITEM_UTF8, 4, {.s = key}}, {CF_ITEM_LIST, 2, {0}}, {CF_ITEM_UTF8, 5, {.s = cafe}}, {CF_ITEM_UTF8, 0, {.s = NULL}},
        {CF_ITEM_KEY, 1, {.s = "n"}}, {CF_ITEM_INT, 0, {.i = 2}},
    };
    enum { N = sizeof items / sizeof *items };
    for (size_t chunk = 1; chunk <= N; chunk++) {   /* (chunks end at every position) */
        cf_builder *b = cf_builder_new(NULL);
        for (size_t i = 0; i < N; i += chunk) cf_builder_feed(b, items + i, N - i < chunk ? N - i : chunk);
        cf_error err;
        cf_context *c = cf_builder_finish(b, &err);
        CHECK(c != NULL, "UTF8 items (chunks of %zu): %s", chunk, c ? "" : err.message);
        if (!c) continue;
        check_render(c,
                     "{{ s }} {{ s|length }} {{ s[3] }} {{ s[-2:] }} {{ s.upper() }} [{{ s|center(7) }}] "
                     "{{ d['cl\xc3\xa9']|length }} {{ (d|list)[0]|length }} {{ d['cl\xc3\xa9'][0][1:] }} "
                     "{{ d['cl\xc3\xa9'][1]|length }} {{ n }}",
                     "caf\xc3\xa9 4 \xc3\xa9 f\xc3\xa9 CAF\xc3\x89 [  caf\xc3\xa9 ] 2 3 af\xc3\xa9 0 2", "UTF8 items");
        cf_context_free(c);
    }
}

/* Short value strings fed as items, equal ones at other addresses (a
 * binding's rows: each message's role a str object of its own): equal
 * bytes give one shared Str (a render's memos, keyed by address, then
 * find the second), other bytes in the same slot of the builder's recent
 * strings (same length, first and last byte) and strings past 16 bytes
 * their own, all with their own bytes. */
static void shared_short_values(void) {
    static const char *const texts[] = {"user", "user", "axb", "ayb", "axb", "0123456789abcdef", "0123456789abcdef",
                                        "0123456789abcdefg", "0123456789abcdefg", "caf\xc3\xa9", "caf\xc3\xa9", ""};
    enum { N = sizeof texts / sizeof *texts };
    char copies[N][24];
    cf_builder_item items[3 + N];
    items[0] = (cf_builder_item){CF_ITEM_DICT, 1, {0}};
    items[1] = (cf_builder_item){CF_ITEM_KEY, 1, {.s = "v"}};
    items[2] = (cf_builder_item){CF_ITEM_LIST, N, {0}};
    for (size_t i = 0; i < N; i++) {
        size_t n = strlen(texts[i]);
        memcpy(copies[i], texts[i], n + 1);
        bool ascii = i < N - 3;
        items[3 + i] = (cf_builder_item){ascii ? CF_ITEM_ASCII : CF_ITEM_STR, n, {.s = copies[i]}};
    }
    cf_builder *b = cf_builder_new(NULL);
    cf_builder_feed(b, items, 3 + N);
    cf_error err;
    cf_context *c = cf_builder_finish(b, &err);
    CHECK(c != NULL, "shared short values: %s", c ? "" : err.message);
    if (!c) return;
    Value list;
    CHECK(dict_get_str(c->vars, "v", 1, &list) && list.type == VT_LIST && list.u.list->len == N, "shared short values: the list");
    if (list.type == VT_LIST && list.u.list->len == N) {
        const Value *v = list.u.list->items;
        for (size_t i = 0; i < N; i++) {
            size_t n = strlen(texts[i]);
            CHECK(v[i].type == VT_STR && v[i].u.s->len == n && memcmp(v[i].u.s->data, texts[i], n) == 0,
                  "shared short values: value %zu", i);
        }
        CHECK(v[0].u.s == v[1].u.s && v[5].u.s == v[6].u.s && v[9].u.s == v[10].u.s,
              "shared short values: equal strings of up to 16 bytes are one Str");
        CHECK(v[2].u.s != v[3].u.s && v[7].u.s != v[8].u.s, "shared short values: others are their own");
    }
    check_render(c, "{% for x in v %}{{ x }}:{{ x|length }}:{{ x|upper }};{% endfor %}",
                 "user:4:USER;user:4:USER;axb:3:AXB;ayb:3:AYB;axb:3:AXB;0123456789abcdef:16:0123456789ABCDEF;"
                 "0123456789abcdef:16:0123456789ABCDEF;0123456789abcdefg:17:0123456789ABCDEFG;"
                 "0123456789abcdefg:17:0123456789ABCDEFG;caf\xc3\xa9:4:CAF\xc3\x89;caf\xc3\xa9:4:CAF\xc3\x89;:0:;",
                 "shared short values");
    cf_context_free(c);
}

/* Limits below the sizes a small container or string is made in place
 * for (DICT_LINEAR_MAX items; a carved string's length): those that pass
 * them go the checked way, fed as items or pushed one call each, at every
 * size around them. */
static void small_limits(void) {
    for (size_t max_items = 1; max_items <= DICT_LINEAR_MAX + 1; max_items++)
        for (size_t n = 1; n <= DICT_LINEAR_MAX + 2; n++)
            for (int fed = 0; fed < 2; fed++) {
                cf_limits lim;
                memset(&lim, 0, sizeof lim);
                lim.max_items = max_items;
                cf_builder *b = cf_builder_new(&lim);
                cf_builder_item items[2 * (DICT_LINEAR_MAX + 2) + 4];
                size_t k = 0;
                items[k++] = (cf_builder_item){CF_ITEM_DICT, 2, {0}};
                items[k++] = (cf_builder_item){CF_ITEM_KEY, 1, {.s = "l"}};
                items[k++] = (cf_builder_item){CF_ITEM_LIST, n, {0}};
                for (size_t i = 0; i < n; i++) items[k++] = (cf_builder_item){CF_ITEM_INT, 0, {.i = (int64_t)i}};
                items[k++] = (cf_builder_item){CF_ITEM_KEY, 1, {.s = "d"}};
                items[k++] = (cf_builder_item){CF_ITEM_DICT, 1, {0}};
                items[k++] = (cf_builder_item){CF_ITEM_KEY, 1, {.s = "k"}};
                items[k++] = (cf_builder_item){CF_ITEM_NULL, 0, {0}};
                if (fed) {
                    cf_builder_feed(b, items, k);
                } else {
                    cf_builder_dict(b, 2);
                    cf_builder_str(b, "l", 1);
                    cf_builder_list(b, n);
                    for (size_t i = 0; i < n; i++) cf_builder_int(b, (int64_t)i);
                    cf_builder_str(b, "d", 1);
                    cf_builder_dict(b, 1);
                    cf_builder_str(b, "k", 1);
                    cf_builder_null(b);
                }
                bool over = n > max_items || 2 > max_items;   /* (the top dict's 2 pairs too) */
                cf_error_kind kind = finish_kind(b, over ? "max-items" : NULL);
                CHECK(kind == (over ? CF_ERR_LIMIT : CF_OK), "max_items %zu, a list of %zu (%s): %d", max_items,
                      n, fed ? "fed" : "pushed", (int)kind);
            }
    static char text[CARVE_BLOCK];
    memset(text, 'a', sizeof text);
    for (size_t max_string = 1; max_string <= CARVE_BLOCK / 8 + 2; max_string += max_string < 20 ? 1 : 61)
        for (size_t n = max_string - 1; n <= max_string + 1; n++) {
            cf_limits lim;
            memset(&lim, 0, sizeof lim);
            lim.max_string = max_string;
            cf_builder *b = cf_builder_new(&lim);
            cf_builder_item items[] = {{CF_ITEM_DICT, 1, {0}}, {CF_ITEM_KEY, 1, {.s = "s"}}, {CF_ITEM_ASCII, n, {.s = text}}};
            cf_builder_feed(b, items, 3);
            cf_error_kind kind = finish_kind(b, NULL);
            CHECK(kind == (n > max_string ? CF_ERR_LIMIT : CF_OK), "max_string %zu, a string of %zu: %d", max_string, n,
                  (int)kind);
        }
}

int main(void) {
    const char *shared = getenv("CHATFMT_SHARED");
    errors();
    ascii_keys();
    unique_keys();
    utf8_items();
    shared_short_values();
    deep_nesting();
    small_limits();
    same_renders(shared && *shared ? shared : "../shared");
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
