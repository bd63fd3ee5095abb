/* test_loader.c — template sources: files, tokenizer_config.json, model
 * folders, GGUF (made by tests/make_gguf.py, hostile ones included),
 * built-ins, web-copy repair of the raw seeds, and no false repair or
 * tag-stripped flag on the corpus.
 *
 * Usage: test_loader [REPO_ROOT]   (default "."; ../shared beside it, or
 * $CHATFMT_SHARED). Expected values come from the files themselves (seeds,
 * corpus) and from make_gguf.py's expectation files. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "chatfmt.h"

static int passed, failed;
static char fixtures[256], root[1024], shared[1024];

#define CHECK(cond, ...) check((cond), __FILE__, __LINE__, __VA_ARGS__)

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static bool check(bool ok, const char *file, int line, const char *fmt, ...) {
    if (ok) {
        passed++;
        return true;
    }
    failed++;
    fprintf(stderr, "%s:%d: FAIL: ", file, line);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return false;
}

/* ---- files ---------------------------------------------------------------- */

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap + 1);
    size_t got;
    while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) buf = realloc(buf, (cap *= 2) + 1);
    }
    fclose(f);
    buf[n] = '\0';
    if (len) *len = n;
    return buf;
}

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    if (!f) {
        fprintf(stderr, "cannot write %s: %s\n", path, strerror(errno));
        exit(2);
    }
    fputs(text, f);
    fclose(f);
}

static const char *pathf(const char *fmt, ...) {
    static char bufs[8][1024];
    static int next;
    char *b = bufs[next++ % 8];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b, sizeof bufs[0], fmt, ap);
    va_end(ap);
    return b;
}

static bool same_bytes(const char *a, size_t alen, const char *b, size_t blen) {
    return alen == blen && memcmp(a, b, alen) == 0;
}

/* ---- rendering a token through the engine ------------------------------------- */

/* The value of variable `name` as the engine sees it ("{{ name }}"), or
 * NULL when it is not set. malloc'd. */
static char *token_value(const cf_context *ctx, const char *name) {
    if (!cf_context_has(ctx, name)) return NULL;
    char src[128];
    snprintf(src, sizeof src, "{{ %s }}", name);
    cf_error err;
    cf_template *t = cf_compile(src, strlen(src), NULL, &err);
    if (!t) return NULL;
    cf_result r;
    char *value = NULL;
    if (cf_render(t, ctx, NULL, &r, &err)) {
        value = strdup(r.text);
        cf_result_free(&r);
    }
    cf_template_free(t);
    return value;
}

static void expect_token(const cf_source *s, const char *name, const char *want, const char *what) {
    char *got = token_value(s->tokens, name);
    if (!want) {
        CHECK(got == NULL, "%s: %s should not be set (got '%s')", what, name, got ? got : "");
    } else {
        CHECK(got && strcmp(got, want) == 0, "%s: %s = '%s', want '%s'", what, name, got ? got : "(unset)", want);
    }
    free(got);
}

static bool load(const char *what, const cf_load_options *opt, cf_source *s, cf_error *err) {
    return cf_source_load(what, opt, s, err);
}

static void expect_error(const char *what, const cf_load_options *opt, cf_error_kind kind, const char *needle) {
    cf_source s;
    cf_error err;
    bool ok = load(what, opt, &s, &err);
    if (!CHECK(!ok, "%s: loaded, expected %s", what, cf_error_kind_name(kind))) {
        cf_source_free(&s);
        return;
    }
    CHECK(err.kind == kind, "%s: error kind %s, want %s (%s)", what, cf_error_kind_name(err.kind),
          cf_error_kind_name(kind), err.message);
    CHECK(strstr(err.message, needle) != NULL, "%s: message '%s' lacks '%s'", what, err.message, needle);
}

/* ---- built-ins -------------------------------------------------------------------- */

static const char *const SEEDS[] = {"glm45", "toolcall-qwen3", "nanbeige", "reasoning-qwen25", "command-a-reasoning"};

static void test_builtins(void) {
    const char *const *names = cf_builtin_names();
    size_t n = 0;
    while (names[n]) n++;
    CHECK(n == 5, "5 built-ins, got %zu", n);
    for (size_t i = 0; i < 5 && i < n; i++) {
        CHECK(strcmp(names[i], SEEDS[i]) == 0, "built-in %zu is %s, want %s", i, names[i], SEEDS[i]);
        size_t len, flen;
        const char *text = cf_builtin_text(SEEDS[i], &len);
        char *file = read_file(pathf("%s/seeds/%s.jinja", shared, SEEDS[i]), &flen);
        CHECK(text && file && same_bytes(text, len, file, flen), "built-in %s equals its seed file", SEEDS[i]);
        cf_source s;
        cf_error err;
        if (CHECK(load(SEEDS[i], NULL, &s, &err), "load built-in %s: %s", SEEDS[i], err.message)) {
            CHECK(strcmp(s.kind, "builtin") == 0, "kind builtin, got %s", s.kind);
            CHECK(s.name && strcmp(s.name, SEEDS[i]) == 0, "built-in name");
            CHECK(file && same_bytes(s.text, s.len, file, flen), "built-in %s text", SEEDS[i]);
            CHECK(s.warnings == NULL && !s.looks_tag_stripped, "built-in %s has no warnings", SEEDS[i]);
            CHECK(s.tokens != NULL, "tokens never NULL");
            cf_source_free(&s);
        }
        free(file);
    }
    CHECK(cf_builtin_text("nope", NULL) == NULL, "unknown built-in -> NULL");
    expect_error("no-such-template", NULL, CF_ERR_IO, "glm45, toolcall-qwen3");
    cf_load_options named = {.template_name = "tool_use"};
    expect_error("glm45", &named, CF_ERR_USAGE, "no chat template named 'tool_use'");
}

/* ---- plain files ---------------------------------------------------------------------- */

static void test_files(void) {
    const char *p = pathf("%s/plain.jinja", fixtures);
    write_file(p, "{{ bos_token }}{% for m in messages %}{{ m.content }}\n{% endfor %}");
    cf_source s;
    cf_error err;
    if (CHECK(load(p, NULL, &s, &err), "plain file: %s", err.message)) {
        CHECK(strcmp(s.kind, "file") == 0, "kind file, got %s", s.kind);
        CHECK(strcmp(s.text, "{{ bos_token }}{% for m in messages %}{{ m.content }}\n{% endfor %}") == 0, "text");
        CHECK(s.name == NULL && s.warnings == NULL, "no name, no warnings");
        cf_source_free(&s);
    }
    /* Python reads text with universal newlines; so does the loader. */
    p = pathf("%s/crlf.jinja", fixtures);
    write_file(p, "a\r\nb\rc\n");
    if (CHECK(load(p, NULL, &s, &err), "crlf: %s", err.message)) {
        CHECK(strcmp(s.text, "a\nb\nc\n") == 0, "CRLF and CR become LF");
        cf_source_free(&s);
    }
    p = pathf("%s/bad.jinja", fixtures);
    write_file(p, "ok \xc3\x28 bad");
    expect_error(p, NULL, CF_ERR_UNICODE, "can't decode byte 0xc3 in position 3: invalid continuation byte");
    if (!load(p, NULL, &s, &err)) CHECK(err.offset == 3, "utf-8 error offset 3, got %zu", err.offset);
    /* A template that starts like JSON but is not JSON stays a template. */
    p = pathf("%s/jsonish.jinja", fixtures);
    write_file(p, "{\"role\": {{ role }} }");
    if (CHECK(load(p, NULL, &s, &err), "json-looking template: %s", err.message)) {
        CHECK(strcmp(s.kind, "file") == 0, "json-looking template is a file, got %s", s.kind);
        cf_source_free(&s);
    }
    p = pathf("%s/broken.json", fixtures);
    write_file(p, "{\"chat_template\": \"x\",}");
    expect_error(p, NULL, CF_ERR_JSON, "broken.json");
    p = pathf("%s/other.json", fixtures);
    write_file(p, "{\"name\": \"not a config\"}");
    expect_error(p, NULL, CF_ERR_FORMAT, "without a \"chat_template\"");
    cf_load_options named = {.template_name = "default"};
    p = pathf("%s/plain.jinja", fixtures);
    if (CHECK(load(p, &named, &s, &err), "template_name default on a single template: %s", err.message)) {
        cf_source_free(&s);
    }
    /* In-memory text. */
    const char *text = "{{ x }}";
    if (CHECK(cf_source_from_text(text, strlen(text), NULL, &s, &err), "from_text: %s", err.message)) {
        CHECK(strcmp(s.kind, "text") == 0 && strcmp(s.text, text) == 0 && s.tokens, "from_text source");
        cf_source_free(&s);
    }
}

/* ---- tokenizer_config.json -------------------------------------------------------------- */

static const char CONFIG_STRING[] =
    "{\"add_bos_token\": true, \"bos_token\": \"<s>\",\n"
    " \"eos_token\": {\"__type\": \"AddedToken\", \"content\": \"</s>\", \"lstrip\": false},\n"
    " \"pad_token\": null, \"unk_token\": {\"content\": \"<unk>\"},\n"
    " \"image_token\": \"<image>\", \"legacy_token\": 5,\n"
    " \"additional_special_tokens\": [\"<extra_0>\", {\"content\": \"<extra_1>\"}],\n"
    " \"added_tokens_decoder\": {},\n"
    " \"chat_template\": \"{{ bos_token }}\\u00e9{% for m in messages %}{{ m.content }}{% endfor %}\"}\n";

static const char CONFIG_LIST[] =
    "{\"bos_token\": \"<|begin|>\", \"extra_special_tokens\": {\"audio_token\": \"<audio>\"},\n"
    " \"chat_template\": [{\"name\": \"default\", \"template\": \"D{{ bos_token }}\"},\n"
    "                   {\"name\": \"tool_use\", \"template\": \"U\"},\n"
    "                   {\"name\": \"rag\", \"template\": \"R\"}]}";

static void expect_template(const char *what, const cf_load_options *opt, const char *kind, const char *text,
                            const char *name) {
    cf_source s;
    cf_error err;
    if (!CHECK(load(what, opt, &s, &err), "%s: %s", what, err.message)) return;
    CHECK(strcmp(s.kind, kind) == 0, "%s: kind %s, want %s", what, s.kind, kind);
    CHECK(strcmp(s.text, text) == 0, "%s: text '%s', want '%s'", what, s.text, text);
    CHECK((name == NULL && s.name == NULL) || (name && s.name && strcmp(s.name, name) == 0),
          "%s: name '%s', want '%s'", what, s.name ? s.name : "(null)", name ? name : "(null)");
    cf_source_free(&s);
}

static void test_tokenizer_config(void) {
    const char *p = pathf("%s/tokenizer_config.json", fixtures);
    write_file(p, CONFIG_STRING);
    cf_source s;
    cf_error err;
    if (CHECK(load(p, NULL, &s, &err), "tokenizer_config (string): %s", err.message)) {
        CHECK(strcmp(s.kind, "tokenizer_config") == 0, "kind tokenizer_config, got %s", s.kind);
        CHECK(strcmp(s.text, "{{ bos_token }}\xc3\xa9{% for m in messages %}{{ m.content }}{% endfor %}") == 0,
              "config template text");
        CHECK(s.name == NULL, "single template has no name");
        expect_token(&s, "bos_token", "<s>", "config");
        expect_token(&s, "eos_token", "</s>", "config");          /* AddedToken object */
        expect_token(&s, "unk_token", "<unk>", "config");
        expect_token(&s, "image_token", "<image>", "config");     /* model-specific *_token */
        expect_token(&s, "pad_token", NULL, "config");            /* null */
        expect_token(&s, "legacy_token", NULL, "config");         /* not a token */
        expect_token(&s, "add_bos_token", NULL, "config");        /* bool, not a token */
        /* a list of strings, as transformers 4.x's special_tokens_map (the issue asks for it) */
        expect_token(&s, "additional_special_tokens", "['<extra_0>', '<extra_1>']", "config");
        cf_source_free(&s);
    }
    /* Detected by content, whatever the name. */
    p = pathf("%s/config-copy.txt", fixtures);
    write_file(p, CONFIG_STRING);
    if (CHECK(load(p, NULL, &s, &err), "config named .txt: %s", err.message)) {
        CHECK(strcmp(s.kind, "tokenizer_config") == 0, "config detected by content");
        cf_source_free(&s);
    }

    p = pathf("%s/list_config.json", fixtures);
    write_file(p, CONFIG_LIST);
    expect_template(p, NULL, "tokenizer_config", "D{{ bos_token }}", "default");
    cf_load_options tools = {.has_tools = true};
    expect_template(p, &tools, "tokenizer_config", "U", "tool_use");
    cf_load_options rag = {.template_name = "rag", .has_tools = true};
    expect_template(p, &rag, "tokenizer_config", "R", "rag");
    cf_load_options nope = {.template_name = "nope"};
    expect_error(p, &nope, CF_ERR_USAGE, "no chat template named 'nope' in");
    expect_error(p, &nope, CF_ERR_USAGE, "(available: default, rag, tool_use)");
    if (CHECK(load(p, NULL, &s, &err), "list config: %s", err.message)) {
        expect_token(&s, "bos_token", "<|begin|>", "list config");
        expect_token(&s, "audio_token", "<audio>", "list config (extra_special_tokens object)");
        cf_source_free(&s);
    }

    p = pathf("%s/nodefault_config.json", fixtures);
    write_file(p, "{\"chat_template\": [{\"name\": \"b\", \"template\": \"B\"}, {\"name\": \"a\", \"template\": \"A\"}]}");
    expect_error(p, NULL, CF_ERR_VALUE,
                 "This model has multiple chat templates with no default specified! Please either pass a chat "
                 "template or the name of the template you wish to use to the `chat_template` argument. "
                 "Available template names are ['a', 'b'].");
    p = pathf("%s/bad_list_config.json", fixtures);
    write_file(p, "{\"chat_template\": [{\"name\": \"a\"}]}");
    expect_error(p, NULL, CF_ERR_FORMAT, "chat_template[0] must be an object");
    p = pathf("%s/bad_type_config.json", fixtures);
    write_file(p, "{\"chat_template\": 3}");
    expect_error(p, NULL, CF_ERR_FORMAT, "must be a string or a list");
}

/* ---- model folders ------------------------------------------------------------------------- */

static const char *make_dir(const char *name) {
    const char *d = pathf("%s/%s", fixtures, name);
    mkdir(d, 0777);
    return d;
}

static void test_model_dirs(void) {
    cf_source s;
    cf_error err;
    /* Config only. */
    const char *d = make_dir("model_config_only");
    write_file(pathf("%s/tokenizer_config.json", d), CONFIG_LIST);
    expect_template(d, NULL, "model_dir", "D{{ bos_token }}", "default");

    /* chat_template.jinja wins over the config's templates, even its named ones. */
    d = make_dir("model_with_jinja");
    write_file(pathf("%s/tokenizer_config.json", d), CONFIG_LIST);
    write_file(pathf("%s/chat_template.jinja", d), "FILE{{ bos_token }}\r\n");
    expect_template(d, NULL, "model_dir", "FILE{{ bos_token }}\n", NULL);
    cf_load_options tools = {.has_tools = true};
    expect_template(d, &tools, "model_dir", "FILE{{ bos_token }}\n", NULL);
    if (CHECK(load(d, NULL, &s, &err), "model dir: %s", err.message)) {
        expect_token(&s, "bos_token", "<|begin|>", "model dir");
        cf_source_free(&s);
    }

    /* Additional templates are named; chat_template.jinja is then "default". */
    d = make_dir("model_with_additional");
    write_file(pathf("%s/tokenizer_config.json", d), CONFIG_STRING);
    write_file(pathf("%s/chat_template.jinja", d), "MAIN");
    make_dir("model_with_additional/additional_chat_templates");
    write_file(pathf("%s/additional_chat_templates/tool_use.jinja", d), "TOOLS");
    write_file(pathf("%s/additional_chat_templates/rag.jinja", d), "RAG");
    write_file(pathf("%s/additional_chat_templates/notes.txt", d), "ignored");
    expect_template(d, NULL, "model_dir", "MAIN", "default");
    expect_template(d, &tools, "model_dir", "TOOLS", "tool_use");
    cf_load_options rag = {.template_name = "rag"};
    expect_template(d, &rag, "model_dir", "RAG", "rag");
    cf_load_options notes = {.template_name = "notes"};
    expect_error(d, &notes, CF_ERR_USAGE, "(available: default, rag, tool_use)");

    /* Only additional templates: no default (transformers' rule). */
    d = make_dir("model_additional_only");
    make_dir("model_additional_only/additional_chat_templates");
    write_file(pathf("%s/additional_chat_templates/x.jinja", d), "X");
    expect_error(d, NULL, CF_ERR_VALUE, "Available template names are ['x'].");
    cf_load_options x = {.template_name = "x"};
    expect_template(d, &x, "model_dir", "X", "x");

    /* Legacy special_tokens_map.json: merged when the config has no
     * added_tokens_decoder; its named tokens override the config's. */
    d = make_dir("model_legacy_map");
    write_file(pathf("%s/tokenizer_config.json", d), "{\"bos_token\": \"<old>\", \"chat_template\": \"T\"}");
    write_file(pathf("%s/special_tokens_map.json", d),
               "{\"bos_token\": {\"content\": \"<new>\", \"lstrip\": false}, \"eos_token\": \"</e>\"}");
    if (CHECK(load(d, NULL, &s, &err), "legacy map: %s", err.message)) {
        expect_token(&s, "bos_token", "<new>", "legacy map");
        expect_token(&s, "eos_token", "</e>", "legacy map");
        cf_source_free(&s);
    }
    d = make_dir("model_modern_map");
    write_file(pathf("%s/tokenizer_config.json", d),
               "{\"bos_token\": \"<old>\", \"added_tokens_decoder\": {}, \"chat_template\": \"T\"}");
    write_file(pathf("%s/special_tokens_map.json", d), "{\"bos_token\": \"<new>\", \"eos_token\": \"</e>\"}");
    if (CHECK(load(d, NULL, &s, &err), "modern map: %s", err.message)) {
        expect_token(&s, "bos_token", "<old>", "modern config ignores special_tokens_map.json");
        expect_token(&s, "eos_token", NULL, "modern config ignores special_tokens_map.json");
        cf_source_free(&s);
    }

    d = make_dir("model_empty");
    expect_error(d, NULL, CF_ERR_FORMAT, "no chat template in");
    d = make_dir("model_bad_config");
    write_file(pathf("%s/tokenizer_config.json", d), "{nope");
    expect_error(d, NULL, CF_ERR_JSON, "tokenizer_config.json");
}

/* ---- GGUF ------------------------------------------------------------------------------------ */

static void gguf_expectations(const char *name) {
    char p[1024];   /* pathf's buffers rotate; keep our own */
    snprintf(p, sizeof p, "%s/%s", fixtures, name);
    char *want_error = read_file(pathf("%s.error", p), NULL);
    char *want_offset = read_file(pathf("%s.offset", p), NULL);
    cf_source s;
    cf_error err;
    if (want_error) {
        expect_error(p, NULL, CF_ERR_FORMAT, want_error);
        if (want_offset && !load(p, NULL, &s, &err)) {
            CHECK(err.offset == strtoull(want_offset, NULL, 10), "%s: offset %zu, want %s", name, err.offset,
                  want_offset);
            char needle[64];
            snprintf(needle, sizeof needle, "at byte offset %s)", want_offset);
            CHECK(strstr(err.message, needle) != NULL, "%s: message '%s' names the offset", name, err.message);
        }
        free(want_error);
        free(want_offset);
        return;
    }
    /* Every template the file has, each picked by name. */
    static const char *const names[] = {"default", "tool_use", "rag"};
    bool any = false;
    for (size_t i = 0; i < 3; i++) {
        size_t wlen;
        char *want = read_file(pathf("%s.%s.tmpl", p, names[i]), &wlen);
        if (!want) continue;
        any = true;
        cf_load_options opt = {.template_name = names[i]};
        if (CHECK(load(p, &opt, &s, &err), "%s [%s]: %s", name, names[i], err.message)) {
            CHECK(strcmp(s.kind, "gguf") == 0, "%s: kind gguf", name);
            CHECK(same_bytes(s.text, s.len, want, wlen), "%s [%s]: template text", name, names[i]);
            cf_source_free(&s);
        }
        free(want);
    }
    CHECK(any, "%s: fixture has templates", name);
    if (!load(p, NULL, &s, &err)) {
        CHECK(strstr(err.message, "no default specified") != NULL, "%s: %s", name, err.message);
        return;
    }
    static const char *const vars[] = {"bos_token", "eos_token", "unk_token", "pad_token"};
    for (size_t i = 0; i < 4; i++) {
        char *want = read_file(pathf("%s.%s.tok", p, vars[i]), NULL);
        if (want) expect_token(&s, vars[i], want, name);
        free(want);
    }
    char *notok = read_file(pathf("%s.notok", p), NULL);
    for (char *line = notok ? strtok(notok, "\n") : NULL; line; line = strtok(NULL, "\n")) {
        expect_token(&s, line, NULL, name);
    }
    free(notok);
    char *warn = read_file(pathf("%s.warn", p), NULL);
    if (warn) CHECK(s.warnings && strstr(s.warnings, warn), "%s: warnings '%s' lack '%s'", name,
                    s.warnings ? s.warnings : "", warn);
    else CHECK(s.warnings == NULL, "%s: no warnings (got '%s')", name, s.warnings);
    free(warn);
    cf_source_free(&s);
}

/* Every prefix of a valid file that cuts its metadata is a clean format
 * error; prefixes that keep all metadata load (tensors are never read). */
static void gguf_truncations(const char *name) {
    size_t len;
    char p[1024];
    snprintf(p, sizeof p, "%s/%s", fixtures, name);
    char *data = read_file(p, &len);
    char *end_text = read_file(pathf("%s.kvend", p), NULL);
    if (!CHECK(data && end_text, "%s fixture", name)) return;
    size_t kv_end = strtoull(end_text, NULL, 10);
    const char *cut = pathf("%s/cut.gguf", fixtures);
    FILE *f = fopen(cut, "wb");
    fwrite(data, 1, len, f);
    fclose(f);
    int bad = 0;
    for (size_t n = len + 1; n-- > 0;) {   /* shrink the one file: cheaper than rewriting it */
        if (truncate(cut, (off_t)n) != 0) {
            CHECK(false, "truncate %s: %s", cut, strerror(errno));
            break;
        }
        cf_source s;
        cf_error err;
        cf_load_options opt = {.template_name = "default"};
        bool ok = load(cut, &opt, &s, &err);
        if (ok) cf_source_free(&s);
        bool want_ok = n >= kv_end;
        /* Shorter than the magic, the file is text, not GGUF. */
        if (n < 4) continue;
        if (ok != want_ok || (!ok && err.kind != CF_ERR_FORMAT)) {
            if (bad++ < 5) {
                fprintf(stderr, "  %s cut at %zu: ok=%d kind=%s %s\n", name, n, ok, cf_error_kind_name(err.kind),
                        ok ? "" : err.message);
            }
        }
    }
    CHECK(bad == 0, "%s: %d of %zu truncations misbehaved", name, bad, len + 1);
    free(data);
    free(end_text);
}

/* A 40 GB file (sparse: only the metadata is real) loads in milliseconds. */
static void gguf_huge_file(void) {
    size_t len;
    char *data = read_file(pathf("%s/ok_v3.gguf", fixtures), &len);
    const char *p = pathf("%s/huge.gguf", fixtures);
    FILE *f = fopen(p, "wb");
    fwrite(data, 1, len, f);
    fclose(f);
    free(data);
    if (truncate(p, (off_t)40 << 30) != 0) {
        fprintf(stderr, "  (skipped the 40 GB sparse file: %s)\n", strerror(errno));
        return;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    cf_source s;
    cf_error err;
    bool ok = load(p, NULL, &s, &err);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
    if (CHECK(ok, "40 GB GGUF: %s", err.message)) cf_source_free(&s);
    CHECK(ms < 200, "40 GB GGUF loaded in %.1f ms", ms);
    unlink(p);
}

static void test_gguf(void) {
    DIR *d = opendir(fixtures);
    struct dirent *e;
    int files = 0;
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n > 5 && strcmp(e->d_name + n - 5, ".gguf") == 0 && strcmp(e->d_name, "cut.gguf") != 0) {
            gguf_expectations(e->d_name);
            files++;
        }
    }
    closedir(d);
    CHECK(files >= 20, "GGUF fixtures found: %d", files);
    gguf_truncations("ok_v3.gguf");
    gguf_truncations("ok_v2.gguf");
    gguf_huge_file();
}

/* ---- repair ---------------------------------------------------------------------------------- */

static const struct { const char *raw, *clean, *note; } REPAIRS[] = {
    {"000_da935e215c15b9d2.txt", "glm45", "repaired: removed line-number prefixes from 106 lines"},
    {"002_38e39df8a69631b3.txt", "nanbeige", "repaired: unwrapped 131 markdown table rows"},
    {"004_44a4f0d1f8988f4c.txt", "command-a-reasoning", "repaired: removed 4 model-hub page header lines"},
};

static void test_repair(void) {
    for (size_t i = 0; i < sizeof REPAIRS / sizeof *REPAIRS; i++) {
        size_t rlen, clen, olen;
        const char *raw_path = pathf("%s/seeds/raw/%s", shared, REPAIRS[i].raw);
        char *raw = read_file(raw_path, &rlen);
        char *clean = read_file(pathf("%s/seeds/%s.jinja", shared, REPAIRS[i].clean), &clen);
        if (!CHECK(raw && clean, "seed files for %s", REPAIRS[i].raw)) continue;
        char *notes;
        char *fixed = cf_repair_text(raw, rlen, &olen, &notes);
        CHECK(fixed && same_bytes(fixed, olen, clean, clen), "cf_repair_text(%s) == %s.jinja", REPAIRS[i].raw,
              REPAIRS[i].clean);
        CHECK(notes && strstr(notes, REPAIRS[i].note), "notes '%s' contain '%s'", notes ? notes : "",
              REPAIRS[i].note);
        free(fixed);
        free(notes);
        cf_source s;
        cf_error err;
        if (CHECK(load(raw_path, NULL, &s, &err), "load %s: %s", REPAIRS[i].raw, err.message)) {
            CHECK(same_bytes(s.text, s.len, clean, clen), "loaded %s is repaired", REPAIRS[i].raw);
            CHECK(s.warnings && strstr(s.warnings, REPAIRS[i].note), "load warnings name the repair");
            CHECK(!s.looks_tag_stripped, "%s is not tag-stripped", REPAIRS[i].raw);
            cf_source_free(&s);
        }
        cf_load_options keep = {.no_repair = true};
        if (CHECK(load(raw_path, &keep, &s, &err), "load %s: %s", REPAIRS[i].raw, err.message)) {
            CHECK(same_bytes(s.text, s.len, raw, rlen) && s.warnings == NULL, "no_repair keeps %s", REPAIRS[i].raw);
            cf_source_free(&s);
        }
        if (CHECK(cf_source_from_text(raw, rlen, NULL, &s, &err), "from_text %s", REPAIRS[i].raw)) {
            CHECK(same_bytes(s.text, s.len, clean, clen), "from_text repairs %s", REPAIRS[i].raw);
            cf_source_free(&s);
        }
        free(raw);
        free(clean);
    }
    static const char *const stripped[] = {"001_5fa5cb2e5202d1fe.txt", "003_45848dccb0b1c1c0.txt"};
    for (size_t i = 0; i < 2; i++) {
        size_t rlen;
        const char *raw_path = pathf("%s/seeds/raw/%s", shared, stripped[i]);
        char *raw = read_file(raw_path, &rlen);
        cf_source s;
        cf_error err;
        if (CHECK(raw && load(raw_path, NULL, &s, &err), "load %s", stripped[i])) {
            CHECK(s.looks_tag_stripped, "%s looks tag-stripped", stripped[i]);
            CHECK(same_bytes(s.text, s.len, raw, rlen), "%s is left as it is", stripped[i]);
            CHECK(s.warnings && strstr(s.warnings, "tag-stripped"), "%s warns", stripped[i]);
            cf_source_free(&s);
        }
        free(raw);
    }
    /* Near misses stay untouched. */
    static const char *const keep[] = {
        "1. {{ a }}\n2. {{ b }}\n3. {{ c }}\n",            /* a numbered list */
        "1{{ a }}\n2{{ b }}\n",                             /* too short to be sure */
        "1{{ a }}\n2{{ b }}\n4{{ c }}\n",                   /* not the sequence */
        "| {{ a }} | |\n{{ b }}\n",                         /* not every line a row */
        "| a | |\n| b | |\n",                               /* no template markup */
        "x / y.jinja\n{{ a }}\nabc1234 verified\n{{ b }}",  /* markup inside the header */
        "x / y.jinja\nsome text\n{{ a }}",                  /* no commit id */
    };
    for (size_t i = 0; i < sizeof keep / sizeof *keep; i++) {
        size_t olen;
        char *notes;
        char *out = cf_repair_text(keep[i], strlen(keep[i]), &olen, &notes);
        CHECK(out && strcmp(out, keep[i]) == 0 && notes == NULL, "no repair of near miss %zu", i);
        free(out);
        free(notes);
    }
    /* Each damage on a small text, with CRLF line ends kept as they are. */
    static const struct { const char *in, *out; } small[] = {
        {"1{% if x %}\r\n2\r\n3{{ x }}\r\n4{% endif %}", "{% if x %}\r\n\r\n{{ x }}\r\n{% endif %}"},
        {"| {{ a }} | |\n|  | |\n| | |\n| b | |\n", "{{ a }}\n\n\nb\n"},
        {"org/m / chat_template.jinja\nab12cd3\n{{ a }}\n", "{{ a }}\n"},
    };
    for (size_t i = 0; i < sizeof small / sizeof *small; i++) {
        size_t olen;
        char *out = cf_repair_text(small[i].in, strlen(small[i].in), &olen, NULL);
        CHECK(out && strcmp(out, small[i].out) == 0, "small repair %zu: got '%s'", i, out ? out : "");
        free(out);
    }
}

/* Real templates: no repair, no tag-stripped flag. */
static void no_false_alarm(const char *path) {
    size_t len, olen;
    char *text = read_file(path, &len);
    if (!text) return;
    char *notes;
    char *out = cf_repair_text(text, len, &olen, &notes);
    CHECK(out && same_bytes(out, olen, text, len) && notes == NULL, "%s: repaired (%s)", path, notes ? notes : "");
    cf_source s;
    cf_error err;
    if (CHECK(cf_source_from_text(text, len, NULL, &s, &err), "%s: %s", path, err.message)) {
        CHECK(!s.looks_tag_stripped && s.warnings == NULL, "%s: flagged (%s)", path, s.warnings ? s.warnings : "");
        cf_source_free(&s);
    }
    free(out);
    free(notes);
    free(text);
}

static void test_corpus(void) {
    const char *dir = pathf("%s/corpus/templates", shared);
    DIR *d = opendir(dir);
    if (!CHECK(d != NULL, "corpus at %s", dir)) return;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t k = strlen(e->d_name);
        if (k > 6 && strcmp(e->d_name + k - 6, ".jinja") == 0) {
            no_false_alarm(pathf("%s/%s", dir, e->d_name));
            n++;
        }
    }
    closedir(d);
    CHECK(n > 100, "corpus templates checked: %d", n);
    for (size_t i = 0; i < 5; i++) no_false_alarm(pathf("%s/seeds/%s.jinja", shared, SEEDS[i]));
}

/* ---- main ------------------------------------------------------------------------------------ */

static void remove_tree(const char *path) {
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", path);
}

int main(int argc, char **argv) {
    snprintf(root, sizeof root, "%s", argc > 1 ? argv[1] : ".");
    const char *env = getenv("CHATFMT_SHARED");
    snprintf(shared, sizeof shared, "%s", env ? env : pathf("%s/../shared", root));
    snprintf(fixtures, sizeof fixtures, "/tmp/chatfmt-loader-XXXXXX");
    if (!mkdtemp(fixtures)) {
        perror("mkdtemp");
        return 2;
    }
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "python3 '%s/tests/make_gguf.py' '%s'", root, fixtures);
    if (system(cmd) != 0) {
        fprintf(stderr, "make_gguf.py failed\n");
        remove_tree(fixtures);
        return 2;
    }
    test_builtins();
    test_files();
    test_tokenizer_config();
    test_model_dirs();
    test_gguf();
    test_repair();
    test_corpus();
    remove_tree(fixtures);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
