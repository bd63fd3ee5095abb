/* test_threads.c — one compiled template and one context, rendered from 8
 * threads at once: every render must equal the single-thread render.
 *
 * The header promises that compiled templates and built contexts are
 * immutable and can be shared by any number of threads; `make test-tsan`
 * builds this under ThreadSanitizer, which also reports any write to shared
 * state (lazily cached hashes or lengths, symbol tables, interned names).
 * As a plain C test (tests/run_tests.sh) it checks the outputs only.
 *
 * Templates: the five built-in seeds and one that touches the lazily
 * computed parts on shared strings and dicts (lengths, hashes, case
 * mapping, sorting, tojson, namespace, macros, loop helpers, filters with
 * attributes, a recursive loop), and one whose renders outgrow their first
 * arena chunk (a string grown by concatenation, lookups that fail on each
 * character of a string): the chunks go to a cache of the rendering thread
 * and back, and are freed when the thread exits (LeakSanitizer, in
 * `make test-asan`, reports any a thread leaves behind). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "chatfmt.h"

#define THREADS 8
#define RENDERS 40

static const char CONTEXT[] =
    "{\"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"get_weather\","
    " \"description\": \"Get the current weather for a city.\", \"parameters\": {\"type\": \"object\","
    " \"properties\": {\"city\": {\"type\": \"string\", \"description\": \"City name, e.g. Paris\"},"
    " \"unit\": {\"type\": \"string\", \"enum\": [\"celsius\", \"fahrenheit\"]}}, \"required\": [\"city\"]}}}],"
    " \"messages\": ["
    "{\"role\": \"system\", \"content\": \"You are a concise assistant.\"},"
    "{\"role\": \"user\", \"content\": \"What's the weather in Paris? \\u00c9t\\u00e9 \\u4e2d\\u6587 \\ud83d\\ude00\"},"
    "{\"role\": \"assistant\", \"content\": \"\", \"reasoning_content\": \"Call the tool.\", \"tool_calls\":"
    " [{\"id\": \"call_1\", \"type\": \"function\", \"function\": {\"name\": \"get_weather\","
    " \"arguments\": {\"city\": \"Paris\", \"unit\": \"celsius\"}}}]},"
    "{\"role\": \"tool\", \"tool_call_id\": \"call_1\", \"content\": \"{\\\"temp\\\": 18, \\\"sky\\\": \\\"cloudy\\\"}\"},"
    "{\"role\": \"assistant\", \"content\": \"<think>Easy.</think>It is 18 \\u00b0C and cloudy in Paris.\"},"
    "{\"role\": \"user\", \"content\": \"Thanks. And in Tokyo?\"}],"
    " \"add_generation_prompt\": true, \"enable_thinking\": true, \"bos_token\": \"<s>\", \"eos_token\": \"</s>\"}";

/* Reads the shared context's strings and dicts in every way that might
 * cache something on them. */
static const char FEATURES[] =
    "{%- set ns = namespace(n=0, roles=[]) -%}\n"
    "{%- macro show(m, depth=0) -%}[{{ m.role|upper }}:{{ m.content|string|length }}:{{ depth }}]{%- endmacro -%}\n"
    "{%- for m in messages -%}\n"
    "  {%- set ns.n = ns.n + (m.content|string|length) -%}\n"
    "  {%- set ns.roles = ns.roles + [m.role] -%}\n"
    "  {{ loop.index }}{{ loop.cycle('a', 'b') }}{{ show(m, loop.depth) }}\n"
    "  {{- m.content|string|title|truncate(20) }}|{{ m.content|string|wordcount }}|"
    "{{ (m.content|string).split(' ')|reverse|join('_') }}|{{ m.get('tool_calls', [])|length }}\n"
    "  {%- if m.tool_calls %}{{ m.tool_calls|map(attribute='function')|map(attribute='name')|join(',') }}"
    "{{ m.tool_calls[0].function.arguments|tojson(sort_keys=true) }}{% endif %}\n"
    "  {%- if loop.changed(m.role) %}*{% endif %}\n"
    "{%- endfor %}\n"
    "{{ ns.n }} {{ ns.roles|unique|sort|join(' ') }} {{ messages|groupby('role')|map('first')|join(',') }}\n"
    "{{ messages|selectattr('role', 'equalto', 'user')|map(attribute='content')|join(' / ') }}\n"
    "{{ tools|tojson(indent=2) }} {{ tools[0]['function']['parameters']|dictsort|length }}\n"
    "{{ messages[1].content[::-1] }} {{ messages[1].content.encode is defined }} {{ '%-8s|' % 'x' }}"
    "{{ '{:>6}'.format(messages|length) }} {{ strftime_now('%Y-%m-%d') }}\n"
    "{%- for x in [[1, [2, [3]]], 4] recursive -%}{% if x is iterable %}({{ loop(x) }}){% else %}{{ x }}{% endif %}"
    "{%- endfor %}";

/* Needs ~1 MiB of arena a render: sixteen 64 KiB chunks. */
static const char HEAVY[] =
    "{%- set ns = namespace(s='', n=0) -%}\n"
    "{%- for i in range(300) %}{% set ns.s = ns.s ~ 'chunk ' ~ i ~ ';' %}{% endfor -%}\n"
    "{%- for m in messages %}{% for c in m.content|string %}"
    "{% if c['type'] is defined %}{% set ns.n = ns.n + 1 %}{% endif %}{% endfor %}{% endfor -%}\n"
    "{{ ns.s|length }} {{ ns.s[-12:] }} {{ ns.n }}";

typedef struct Job {
    const cf_template *t;
    const cf_context *ctx;
    const char *expected;
    size_t expected_len;
    int mismatches, errors;
} Job;

static cf_render_options render_options(void) {
    cf_render_options ro;
    memset(&ro, 0, sizeof ro);
    ro.now = "2026-03-14T15:09:26";
    return ro;
}

static bool same(const Job *job, const cf_result *r) {
    return r->len == job->expected_len && memcmp(r->text, job->expected, r->len) == 0;
}

/* Every other render also reads its own context and holds two results at
 * once: a thread keeps the output buffer and context block it released last
 * for its next render (runtime.c), and neither may be handed out while in
 * use. At thread exit they are freed (LeakSanitizer sees them otherwise). */
static void *render_many(void *arg) {
    Job *job = arg;
    cf_render_options ro = render_options();
    for (int i = 0; i < RENDERS; i++) {
        cf_result r, r2;
        cf_error err;
        if (!cf_render_chat(job->t, job->ctx, &ro, &r, &err)) {
            job->errors++;
            continue;
        }
        if (i % 2) {
            cf_context *own = cf_context_from_json(CONTEXT, sizeof CONTEXT - 1, &err);
            bool ok = own && cf_render_chat(job->t, own, &ro, &r2, &err);
            cf_context_free(own);
            if (!ok) {
                job->errors++;
            } else {
                if (!same(job, &r2)) job->mismatches++;
                cf_result_free(&r2);
            }
        }
        if (!same(job, &r)) job->mismatches++;
        cf_result_free(&r);
    }
    return NULL;
}

static int passed, failed;

static void check_template(const char *name, const char *src, size_t len, const cf_context *ctx) {
    cf_error err;
    cf_template *t = cf_compile(src, len, NULL, &err);
    if (!t) {
        printf("FAIL %s: does not compile: %s\n", name, err.message);
        failed++;
        return;
    }
    cf_render_options ro = render_options();
    cf_result ref;
    if (!cf_render_chat(t, ctx, &ro, &ref, &err)) {
        printf("FAIL %s: single-thread render: %s: %s\n", name, cf_error_kind_name(err.kind), err.message);
        failed++;
        cf_template_free(t);
        return;
    }
    Job jobs[THREADS];
    pthread_t threads[THREADS];
    int started = 0;
    for (int i = 0; i < THREADS; i++) {
        jobs[i] = (Job){t, ctx, ref.text, ref.len, 0, 0};
        if (pthread_create(&threads[i], NULL, render_many, &jobs[i]) != 0) break;
        started++;
    }
    int mismatches = 0, errors = 0;
    for (int i = 0; i < started; i++) {
        pthread_join(threads[i], NULL);
        mismatches += jobs[i].mismatches;
        errors += jobs[i].errors;
    }
    if (started < THREADS || mismatches || errors) {
        printf("FAIL %s: %d threads started, %d of %d renders differ, %d failed\n", name, started, mismatches,
               started * RENDERS, errors);
        failed++;
    } else {
        printf("ok %s: %d threads x %d renders of %zu bytes, all equal\n", name, THREADS, RENDERS, ref.len);
        passed++;
    }
    cf_result_free(&ref);
    cf_template_free(t);
}

int main(void) {
    cf_error err;
    cf_context *ctx = cf_context_from_json(CONTEXT, sizeof CONTEXT - 1, &err);
    if (!ctx) {
        printf("FAIL context: %s\n", err.message);
        return 1;
    }
    for (const char *const *name = cf_builtin_names(); *name; name++) {
        size_t len;
        const char *text = cf_builtin_text(*name, &len);
        check_template(*name, text, len, ctx);
    }
    check_template("features", FEATURES, sizeof FEATURES - 1, ctx);
    check_template("heavy", HEAVY, sizeof HEAVY - 1, ctx);
    cf_context_free(ctx);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
