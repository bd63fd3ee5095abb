/* test_json.c — json.c against Python's json module.
 * Table cases: tests/data/json_cases.jsonl (from tests/gen_json_cases.py).
 * Run from the repository root: build/tests/test_json [cases.jsonl] */
#include "tagged_value.h"

typedef struct Job {
    const char *doc;
    size_t len;
    Value v;
    JsonDumpOpts opts;
    StrBuf *out;
} Job;

static void do_loads(Rt *rt, void *p) {
    Job *j = p;
    v_write_repr(rt, j->out, json_parse(rt, j->doc, j->len));
}

static void do_dumps(Rt *rt, void *p) {
    Job *j = p;
    json_dump(rt, j->out, j->v, &j->opts);
}

static char *hex_decode(Rt *rt, const Str *hex, size_t *len) {
    *len = hex->len / 2;
    char *out = rt_alloc(rt, *len + 1);
    for (size_t i = 0; i < *len; i++) {
        unsigned byte;
        sscanf(hex->data + 2 * i, "%2x", &byte);
        out[i] = (char)byte;
    }
    return out;
}

static void expected_text(StrBuf *sb, Value expect) {
    if (expect.type == VT_STR) {
        sb_put(sb, expect.u.s->data, expect.u.s->len);
        return;
    }
    tv_expected_error(sb, expect);
    Value off = tv_field(expect, "offset");
    if (off.type == VT_INT) sb_printf(sb, " @%lld", (long long)off.u.i);
}

static void read_opts(Value o, JsonDumpOpts *opts) {
    json_opts_default(opts);
    opts->ensure_ascii = tv_field(o, "ensure_ascii").u.b;
    opts->sort_keys = tv_field(o, "sort_keys").u.b;
    Value indent = tv_field(o, "indent");
    if (indent.type == VT_INT) opts->indent = (int)indent.u.i;
    if (indent.type == VT_STR) opts->indent_str = indent.u.s->data;
    Value seps = tv_field(o, "separators");
    if (seps.type == VT_LIST) {
        opts->item_sep = seps.u.list->items[0].u.s->data;
        opts->key_sep = seps.u.list->items[1].u.s->data;
    }
}

static void run_case(Rt *rt, Value c, const char *line) {
    StrBuf got, want;
    sb_init(rt, &got, 256);
    sb_init(rt, &want, 256);
    Job job = {NULL, 0, v_missing(), {0}, &got};
    bool loads = str_eqz(tv_field(c, "op").u.s, "loads");
    TvFn fn = do_dumps;
    if (loads) {
        job.doc = hex_decode(rt, tv_field(c, "hex").u.s, &job.len);
        fn = do_loads;
    } else {
        job.v = tv_decode(rt, tv_field(c, "v"));
        read_opts(tv_field(c, "opts"), &job.opts);
    }
    rt->err->offset = 0;
    if (!tv_guarded(rt, fn, &job)) {
        got.len = 0;
        tv_error_text(&got, rt->err);
        if (loads) sb_printf(&got, " @%zu", rt->err->offset);
    }
    expected_text(&want, tv_field(c, "expect"));
    tv_check_str(line, sb_to_str(&got)->data, sb_to_str(&want)->data);
}

static void test_direct(Rt *rt) {
    JsonDumpOpts o;
    json_opts_default(&o);
    tv_check(o.ensure_ascii && !o.sort_keys && o.indent == -1 && !o.indent_str && !o.item_sep && !o.key_sep,
             "json_opts_default", "", "");

    StrBuf sb;
    sb_init(rt, &sb, 0);
    json_write_string(&sb, "a\"\xc3\xa9\n", 5, true);
    json_write_string(&sb, "a\"\xc3\xa9\n", 5, false);
    tv_check_str("json_write_string", sb_to_str(&sb)->data, "\"a\\\"\\u00e9\\n\"\"a\\\"\xc3\xa9\\n\"");

    sb_init(rt, &sb, 0);
    json_dump(rt, &sb, v_int(1), NULL);
    tv_check_str("json_dump NULL opts", sb_to_str(&sb)->data, "1");

    Job job = {"[1, 2]", 6, v_missing(), {0}, &sb};
    Rt small = *rt;
    small.lim.max_json_bytes = 5;
    sb_init(rt, &sb, 0);
    bool ok = tv_guarded(&small, do_loads, &job);
    tv_check_str("max_json_bytes", ok ? "(no error)" : rt->err->message,
                 "JSON document of 6 bytes exceeds the limit of 5 bytes (raise it with --max-json-bytes / cf_limits.max_json_bytes)");

    /* parsed strings come with their code point count */
    const char *doc = "[\"h\\u00e9llo\", \"h\xc3\xa9llo\"]";
    Value v = json_parse(rt, doc, strlen(doc));
    tv_check(v.u.list->items[0].u.s->nchars == 5 && v.u.list->items[1].u.s->nchars == 5 &&
                 str_eq(v.u.list->items[0].u.s, v.u.list->items[1].u.s),
             "nchars cached", "", "");

    /* dump depth is bounded */
    Value deep = v_list_of(list_new(rt, 0));
    for (int i = 0; i < 600; i++) {
        List *l = list_new(rt, 1);
        list_push(rt, l, deep);
        deep = v_list_of(l);
    }
    job.v = deep;
    json_opts_default(&job.opts);
    sb_init(rt, &sb, 0);
    ok = tv_guarded(rt, do_dumps, &job);
    tv_check(!ok && rt->err->kind == CF_ERR_LIMIT, "dump depth limit", rt->err->message, "LimitError");
}

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "tests/data/json_cases.jsonl";
    int n = tv_run_file(path, run_case);
    tv_run_direct(test_direct);
    fprintf(stderr, "%d table cases\n", n);
    printf("%d passed, %d failed\n", tv_passed, tv_failed);
    return tv_failed ? 1 : 0;
}
