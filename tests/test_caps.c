/* test_caps.c — capabilities (cf_caps_json) and polyfills.
 *
 *  1. The caps of the five built-in seeds equal objects written by reading
 *     each template (the reasoning is in the comments; surprising values
 *     are explained).
 *  2. caps runs on every corpus template without error and prints a JSON
 *     object with every key.
 *  3. Polyfilled renders of one template from several threads at once (the
 *     first render probes and caches): all equal, and equal to rendering the
 *     request rewritten by hand; without the flag, transformers' behaviour.
 *
 * Usage: test_caps [REPO_ROOT]  (default "."; ../shared beside it, or
 * $CHATFMT_SHARED). Renders against the reference are in tests/caps_test.sh. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "chatfmt.h"
#include "check.h"

/* JSON text without the whitespace outside strings. */
static char *compact(const char *json) {
    char *out = malloc(strlen(json) + 1), *w = out;
    bool in_string = false;
    for (const char *p = json; *p; p++) {
        if (in_string) {
            *w++ = *p;
            if (*p == '\\' && p[1]) *w++ = *++p;
            else if (*p == '"') in_string = false;
        } else if (*p == '"') {
            in_string = true;
            *w++ = *p;
        } else if (*p != ' ' && *p != '\n') {
            *w++ = *p;
        }
    }
    *w = 0;
    return out;
}

static cf_template *compile_text(const char *text, size_t len, const char *name) {
    cf_error err;
    cf_compile_options co = {NULL, name};
    cf_template *t = cf_compile(text, len, &co, &err);
    check(t != NULL, "%s does not compile: %s", name, err.message);
    return t;
}

/* ---- 1. the seeds ---- */

typedef struct SeedCaps { const char *name, *expected; } SeedCaps;

static const SeedCaps SEEDS[] = {
    /* GLM-4.5: <|system|> turns; tools as JSON lines; calls as <arg_key>/
     * <arg_value> pairs, which iterate arguments.items(): string arguments
     * hit raise_exception("Invalid tool call arguments passed") — objects
     * required. Ids are never printed and results are not paired by id.
     * visible_text() reads typed parts. enable_thinking=false appends
     * <think></think> to the prompt. No end-of-turn token: a turn ends at the
     * next header, <|user|> or <|observation|>. Reasoning of turns before the
     * last user message is dropped, so renders are not prefix-stable. */
    {"glm45",
     "{\"supports_system_role\":true,\"supports_tools\":true,\"supports_tool_calls\":true,"
     "\"supports_parallel_tool_calls\":true,\"supports_tool_call_id\":false,"
     "\"supports_tool_responses\":true,\"supports_reasoning\":true,"
     "\"reasoning_field\":\"reasoning_content\",\"supports_documents\":false,"
     "\"supports_string_content\":true,\"supports_typed_content\":true,"
     "\"requires_object_arguments\":true,\"requires_typed_content\":false,"
     "\"thinking_switch\":\"enable_thinking\",\"generation_prompt\":\"<|assistant|>\","
     "\"reply_format\":\"glm45\",\"stop_strings\":[\"<|user|>\",\"<|observation|>\"],"
     "\"prefix_stable\":false}"},
    /* Qwen3 fine-tune: ChatML; `arguments is string` is printed as is, so
     * the json.dumps text renders exactly like the object (no objects
     * required). Non-string content becomes '' (typed parts unsupported).
     * `enable_thinking is false` closes <think> in the prompt. Old reasoning
     * is dropped after a new user query: not prefix-stable. */
    {"toolcall-qwen3",
     "{\"supports_system_role\":true,\"supports_tools\":true,\"supports_tool_calls\":true,"
     "\"supports_parallel_tool_calls\":true,\"supports_tool_call_id\":false,"
     "\"supports_tool_responses\":true,\"supports_reasoning\":true,"
     "\"reasoning_field\":\"reasoning_content\",\"supports_documents\":false,"
     "\"supports_string_content\":true,\"supports_typed_content\":false,"
     "\"requires_object_arguments\":false,\"requires_typed_content\":false,"
     "\"thinking_switch\":\"enable_thinking\",\"generation_prompt\":\"<|im_start|>assistant\\n\","
     "\"reply_format\":\"hermes\",\"stop_strings\":[\"<|im_end|>\"],\"prefix_stable\":false}"},
    /* Nanbeige: as toolcall-qwen3, but it has no enable_thinking (its knobs,
     * keep_all_think / extra_body.keep_all_think, keep old reasoning; they do
     * not switch thinking): thinking_switch is null, surprising for a
     * reasoning model. By default old reasoning is dropped: not stable. */
    {"nanbeige",
     "{\"supports_system_role\":true,\"supports_tools\":true,\"supports_tool_calls\":true,"
     "\"supports_parallel_tool_calls\":true,\"supports_tool_call_id\":false,"
     "\"supports_tool_responses\":true,\"supports_reasoning\":true,"
     "\"reasoning_field\":\"reasoning_content\",\"supports_documents\":false,"
     "\"supports_string_content\":true,\"supports_typed_content\":false,"
     "\"requires_object_arguments\":false,\"requires_typed_content\":false,"
     "\"thinking_switch\":null,\"generation_prompt\":\"<|im_start|>assistant\\n\","
     "\"reply_format\":\"hermes\",\"stop_strings\":[\"<|im_end|>\"],\"prefix_stable\":false}"},
    /* Qwen2.5 reasoning fine-tune: reasoning lives inside content (the
     * system prompt asks for <think>), the template never reads
     * reasoning_content and has no switch. `arguments | tojson` encodes a
     * string a second time ("{\"cfprobe_arg\"...}"): objects required.
     * `'...' + message.content` raises on typed parts. Nothing is ever
     * dropped, so it is prefix-stable. */
    {"reasoning-qwen25",
     "{\"supports_system_role\":true,\"supports_tools\":true,\"supports_tool_calls\":true,"
     "\"supports_parallel_tool_calls\":true,\"supports_tool_call_id\":false,"
     "\"supports_tool_responses\":true,\"supports_reasoning\":false,"
     "\"reasoning_field\":null,\"supports_documents\":false,"
     "\"supports_string_content\":true,\"supports_typed_content\":false,"
     "\"requires_object_arguments\":true,\"requires_typed_content\":false,"
     "\"thinking_switch\":null,\"generation_prompt\":\"<|im_start|>assistant\\n\","
     "\"reply_format\":\"hermes\",\"stop_strings\":[\"<|im_end|>\"],\"prefix_stable\":true}"},
    /* Command-A Reasoning (this seed's revision). SURPRISING: its first
     * `{% if documents %}` encloses the whole tool-aware half of the
     * template (and sets tools = []); without documents the other half
     * renders, which lists no tools, prints assistant turns as
     * <|START_RESPONSE|>content only and skips tool messages. So tools, tool
     * calls, ids and results are all unsupported in a request without
     * documents (with documents the tool list is emptied, so calls cannot be
     * meaningful either). Documents are rendered as a synthetic tool result.
     * Reasoning is read from `thinking`, not reasoning_content
     * (supports_reasoning false, reasoning_field "thinking"), and switched by
     * `reasoning` (default true), which changes the system preamble — not the
     * generation prompt. `{{ message.content }}` prints typed parts as Python
     * data: unsupported. Every turn is printed the same whatever follows it:
     * prefix-stable. */
    {"command-a-reasoning",
     "{\"supports_system_role\":true,\"supports_tools\":false,\"supports_tool_calls\":false,"
     "\"supports_parallel_tool_calls\":false,\"supports_tool_call_id\":false,"
     "\"supports_tool_responses\":false,\"supports_reasoning\":false,"
     "\"reasoning_field\":\"thinking\",\"supports_documents\":true,"
     "\"supports_string_content\":true,\"supports_typed_content\":false,"
     "\"requires_object_arguments\":false,\"requires_typed_content\":false,"
     "\"thinking_switch\":\"reasoning\","
     "\"generation_prompt\":\"<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>\","
     "\"reply_format\":\"command-a\",\"stop_strings\":[\"<|END_OF_TURN_TOKEN|>\"],"
     "\"prefix_stable\":true}"},
};

static void test_seeds(void) {
    for (size_t i = 0; i < sizeof SEEDS / sizeof *SEEDS; i++) {
        size_t len;
        const char *text = cf_builtin_text(SEEDS[i].name, &len);
        if (!check(text != NULL, "no built-in %s", SEEDS[i].name)) continue;
        cf_template *t = compile_text(text, len, SEEDS[i].name);
        if (!t) continue;
        cf_error err;
        char *json = cf_caps_json(t, NULL, &err);
        if (check(json != NULL, "caps %s: %s", SEEDS[i].name, err.message)) {
            char *got = compact(json);
            check(strcmp(got, SEEDS[i].expected) == 0, "caps %s\n  got:      %s\n  expected: %s",
                  SEEDS[i].name, got, SEEDS[i].expected);
            /* the CLI prints this exactly: indent 2 */
            check(strncmp(json, "{\n  \"supports_system_role\": ", 28) == 0, "caps %s: not indent 2", SEEDS[i].name);
            free(got);
        }
        free(json);
        cf_template_free(t);
    }
}

/* Special tokens of the source take part: eos_token joins stop_strings. */
static void test_defaults(void) {
    size_t len;
    const char *text = cf_builtin_text("toolcall-qwen3", &len);
    cf_template *t = compile_text(text, len, "toolcall-qwen3");
    cf_error err;
    cf_context *tokens = cf_context_from_json("{\"eos_token\": \"<|endoftext|>\"}", 30, &err);
    char *json = cf_caps_json(t, tokens, &err);
    char *got = json ? compact(json) : NULL;
    check(got && strstr(got, "\"stop_strings\":[\"<|im_end|>\",\"<|endoftext|>\"]"),
          "caps with eos_token: %s", got ? got : err.message);
    free(got);
    free(json);
    cf_context_free(tokens);
    cf_template_free(t);
}

/* ---- 2. the corpus ---- */

static const char *const KEYS[] = {
    "supports_system_role", "supports_tools", "supports_tool_calls", "supports_parallel_tool_calls",
    "supports_tool_call_id", "supports_tool_responses", "supports_reasoning", "supports_documents",
    "requires_object_arguments", "requires_typed_content", "thinking_switch", "generation_prompt",
    "reply_format", "stop_strings", "prefix_stable",
};

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0, got;
    char *buf = malloc(cap + 1);
    while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) buf = realloc(buf, (cap *= 2) + 1);
    }
    fclose(f);
    buf[n] = 0;
    *len = n;
    return buf;
}

static int compare_names(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_corpus(const char *shared) {
    char dir[1200];
    snprintf(dir, sizeof dir, "%s/corpus/templates", shared);
    DIR *d = opendir(dir);
    if (!check(d != NULL, "cannot open %s (set CHATFMT_SHARED)", dir)) return;
    char *names[1024];
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 1024) {
        size_t l = strlen(e->d_name);
        if (l > 6 && !strcmp(e->d_name + l - 6, ".jinja")) names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, compare_names);
    check(n >= 100, "only %zu corpus templates in %s", n, dir);
    for (size_t i = 0; i < n; i++) {
        char path[2400];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        size_t len;
        char *text = read_file(path, &len);
        cf_template *t = text ? compile_text(text, len, names[i]) : NULL;
        if (t) {
            cf_error err;
            char *json = cf_caps_json(t, NULL, &err);
            if (check(json != NULL, "caps %s: %s", names[i], err.message)) {
                cf_context *parsed = cf_context_from_json(json, strlen(json), &err);
                check(parsed != NULL, "caps %s: not a JSON object: %s", names[i], err.message);
                for (size_t k = 0; parsed && k < sizeof KEYS / sizeof *KEYS; k++)
                    check(cf_context_has(parsed, KEYS[k]), "caps %s: no key %s", names[i], KEYS[k]);
                cf_context_free(parsed);
            }
            free(json);
            cf_template_free(t);
        }
        free(text);
        free(names[i]);
    }
}

/* What some corpus templates' caps must say, and why:
 * - gpt-oss stops at <|return|> and <|call|> (OpenAI's harmony
 *   documentation), never at <|end|>, which closes one message of several;
 * - a template whose <tool_calls>[...] list several formats read back takes
 *   the format whose reasoning markers it also names (Hunyuan-A13B's
 *   <think>, not Apriel's <thinking>);
 * - GigaChat 3's and its stop strings: <|message_sep|> ends its text before
 *   a "function call" turn, so it is no stop string. */
static const struct {
    const char *path, *want;
} EXPECTED[] = {
    {"templates/openai__gpt-oss-120b.jinja", "\"stop_strings\":[\"<|return|>\",\"<|call|>\"]"},
    {"more/vllm__tool_chat_template_hunyuan_a13b.jinja", "\"reply_format\":\"hunyuan\""},
    /* templates that never print a call: their text's signature */
    {"templates/ibm-granite__granite-3.3-2B-Instruct.jinja", "\"reply_format\":\"granite\""},
    {"more/baidu__ERNIE-4.5-0.3B-PT.jinja", "\"reply_format\":\"ernie45\""},
    /* GigaChat 3's "function call" role turn, not the bare JSON functools also reads */
    {"templates/ai-sage__GigaChat3-10B-A1.8B.jinja", "\"reply_format\":\"gigachat3\",\"stop_strings\":[]"},
};

static void test_expected(const char *shared) {
    for (size_t k = 0; k < sizeof EXPECTED / sizeof *EXPECTED; k++) {
        char path[1400];
        snprintf(path, sizeof path, "%s/corpus/%s", shared, EXPECTED[k].path);
        size_t len;
        char *text = read_file(path, &len);
        cf_template *t = text ? compile_text(text, len, EXPECTED[k].path) : NULL;
        cf_error err;
        char *json = t ? cf_caps_json(t, NULL, &err) : NULL;
        char *got = json ? compact(json) : NULL;
        check(got && strstr(got, EXPECTED[k].want), "caps %s: want %s in %s", EXPECTED[k].path, EXPECTED[k].want,
              got ? got : "(no caps)");
        free(got);
        free(json);
        cf_template_free(t);
        free(text);
    }
}

/* ---- 3. polyfills across threads ---- */

/* GLM-4.5 raises on string arguments; the polyfill parses them. */
static const char STRING_ARGS[] =
    "{\"messages\": [{\"role\": \"user\", \"content\": \"Weather in Oslo?\"},"
    " {\"role\": \"assistant\", \"content\": \"\", \"tool_calls\": [{\"id\": \"a\", \"type\": \"function\","
    " \"function\": {\"name\": \"get_weather\", \"arguments\": \"{\\\"city\\\": \\\"Oslo\\\", \\\"days\\\": 2}\"}}]},"
    " {\"role\": \"tool\", \"tool_call_id\": \"a\", \"content\": \"-3\"}], \"add_generation_prompt\": true}";
static const char OBJECT_ARGS[] =
    "{\"messages\": [{\"role\": \"user\", \"content\": \"Weather in Oslo?\"},"
    " {\"role\": \"assistant\", \"content\": \"\", \"tool_calls\": [{\"id\": \"a\", \"type\": \"function\","
    " \"function\": {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\", \"days\": 2}}}]},"
    " {\"role\": \"tool\", \"tool_call_id\": \"a\", \"content\": \"-3\"}], \"add_generation_prompt\": true}";

typedef struct Job {
    const cf_template *t;
    const cf_context *ctx;
    char *out;
} Job;

static void *render_polyfilled(void *arg) {
    Job *j = arg;
    cf_render_options ro;
    memset(&ro, 0, sizeof ro);
    ro.polyfill = true;
    cf_result r;
    cf_error err;
    if (cf_render_chat(j->t, j->ctx, &ro, &r, &err)) {
        j->out = strdup(r.text);
        cf_result_free(&r);
    }
    return NULL;
}

static void test_polyfill_threads(void) {
    size_t len;
    const char *text = cf_builtin_text("glm45", &len);
    cf_template *t = compile_text(text, len, "glm45");
    cf_error err;
    cf_context *with_strings = cf_context_from_json(STRING_ARGS, sizeof STRING_ARGS - 1, &err);
    cf_context *with_objects = cf_context_from_json(OBJECT_ARGS, sizeof OBJECT_ARGS - 1, &err);
    if (!check(t && with_strings && with_objects, "setup: %s", err.message)) return;

    cf_result plain;
    check(!cf_render_chat(t, with_strings, NULL, &plain, &err) && err.kind == CF_ERR_TEMPLATE &&
              strstr(err.message, "Invalid tool call arguments passed"),
          "without polyfill, glm45 must raise on string arguments (got: %s)", err.message);
    char *expected = NULL;
    if (check(cf_render_chat(t, with_objects, NULL, &plain, &err), "glm45 objects: %s", err.message)) {
        expected = strdup(plain.text);
        cf_result_free(&plain);
    }

    enum { N = 8 };
    pthread_t th[N];
    Job jobs[N];
    for (int i = 0; i < N; i++) {
        jobs[i] = (Job){t, with_strings, NULL};
        pthread_create(&th[i], NULL, render_polyfilled, &jobs[i]);
    }
    for (int i = 0; i < N; i++) {
        pthread_join(th[i], NULL);
        check(jobs[i].out && expected && !strcmp(jobs[i].out, expected),
              "polyfilled render %d differs from the object-arguments render", i);
        free(jobs[i].out);
    }
    /* the cached probe keeps the flag-less path exact */
    check(!cf_render_chat(t, with_strings, NULL, &plain, &err), "after polyfilled renders, plain still raises");
    free(expected);
    cf_context_free(with_strings);
    cf_context_free(with_objects);
    cf_template_free(t);
}

int main(int argc, char **argv) {
    const char *root = argc > 1 ? argv[1] : ".";
    char shared[1100];
    const char *env = getenv("CHATFMT_SHARED");
    if (env && *env) snprintf(shared, sizeof shared, "%s", env);
    else snprintf(shared, sizeof shared, "%s/../shared", root);

    test_seeds();
    test_defaults();
    test_polyfill_threads();
    test_corpus(shared);
    test_expected(shared);
    return check_summary();
}
