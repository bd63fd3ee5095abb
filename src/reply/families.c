/* families.c — the hand-written formats' names, detection signatures,
 * reasoning markers and entry points (the shared part of each format's
 * description: reply.c asks here for any format from FAMILY_FIRST on). */
#include <string.h>
#include "families.h"

typedef struct Family {
    const char *name;
    void (*init)(Parser *p);
    const char *reasoning_open, *reasoning_close;   /* as a prompt's tail ends with them */
} Family;

static const Family FAMILIES[FAMILY_COUNT] = {
    [CF_REPLY_HARMONY - FAMILY_FIRST] = {"harmony", harmony_init, "<|channel|>analysis<|message|>", NULL},
    [CF_REPLY_LLAMA3_JSON - FAMILY_FIRST] = {"llama3-json", llama3_init, NULL, NULL},
    [CF_REPLY_PYTHONIC - FAMILY_FIRST] = {"pythonic", pythonic_init, "<think>", "</think>"},
    [CF_REPLY_MISTRAL - FAMILY_FIRST] = {"mistral", mistral_init, "[THINK]", "[/THINK]"},
    [CF_REPLY_FUNCTIONARY_V31 - FAMILY_FIRST] = {"functionary-v31", functionary_v31_init, NULL, NULL},
    [CF_REPLY_FUNCTIONARY_V32 - FAMILY_FIRST] = {"functionary-v32", functionary_v32_init, NULL, NULL},
    [CF_REPLY_FUNCTOOLS - FAMILY_FIRST] = {"functools", functools_init, NULL, NULL},
    [CF_REPLY_GEMMA4 - FAMILY_FIRST] = {"gemma4", gemma4_init, "<|channel>thought", "<channel|>"},
    [CF_REPLY_XLAM - FAMILY_FIRST] = {"xlam", xlam_init, "<think>", "</think>"},
};

bool is_family(cf_reply_format f) { return f >= FAMILY_FIRST && f <= FAMILY_LAST; }

const char *family_name(cf_reply_format f) { return is_family(f) ? FAMILIES[f - FAMILY_FIRST].name : NULL; }

void family_reasoning_markers(cf_reply_format f, const char **open, const char **close) {
    *open = is_family(f) ? FAMILIES[f - FAMILY_FIRST].reasoning_open : NULL;
    *close = is_family(f) ? FAMILIES[f - FAMILY_FIRST].reasoning_close : NULL;
}

void families_init(Parser *p) { FAMILIES[p->format - FAMILY_FIRST].init(p); }

/* ---- detection ----
 * Each rule: every one of its strings occurs in the template's text. The
 * first rule that holds wins, so the more specific come first (Functionary
 * v3.1 is a Llama 3.1 template with <function=; DeepSeek V3.2's DSML has
 * "function_calls" after a fullwidth bar, never after '<'). */
typedef struct Signature {
    cf_reply_format format;
    const char *all[3];
} Signature;

static const Signature SIGNATURES[] = {
    {CF_REPLY_HARMONY, {"<|channel|>", "<|message|>"}},
    {CF_REPLY_FUNCTIONARY_V32, {">>>all"}},
    {CF_REPLY_FUNCTIONARY_V31, {"<function=", "<|start_header_id|>"}},
    {CF_REPLY_MISTRAL, {"[TOOL_CALLS]"}},
    {CF_REPLY_MISTRAL, {"[THINK]", "[/THINK]"}},
    {CF_REPLY_FUNCTOOLS, {"functools["}},
    {CF_REPLY_GEMMA4, {"<|tool_call>"}},
    {CF_REPLY_GEMMA4, {"<start_function_call>"}},
    {CF_REPLY_GEMMA4, {"<|channel>", "<channel|>"}},
    {CF_REPLY_PYTHONIC, {"<|tool_call_start|>"}},
    {CF_REPLY_PYTHONIC, {"List of tools: "}},
    {CF_REPLY_PYTHONIC, {"<function_calls>", "pythonic"}},
    {CF_REPLY_PYTHONIC, {"[func_name1("}},
    {CF_REPLY_XLAM, {"[{\"name\": \"tool_call_name\", \"arguments\""}},
    {CF_REPLY_XLAM, {"', \"id\": \"' + tool_call.id", "<|start_header_id|>"}},
    {CF_REPLY_LLAMA3_JSON, {"Environment: ipython"}},
    {CF_REPLY_LLAMA3_JSON, {"<|python_tag|>"}},
};

static bool has(const char *t, size_t n, const char *needle) {
    size_t k = strlen(needle);
    if (k > n) return false;
    for (const char *p = t, *last = t + (n - k); p <= last;) {
        const char *hit = memchr(p, needle[0], (size_t)(last - p) + 1);
        if (!hit) return false;
        if (memcmp(hit, needle, k) == 0) return true;
        p = hit + 1;
    }
    return false;
}

cf_reply_format families_detect(const char *text, size_t n) {
    for (size_t r = 0; r < sizeof SIGNATURES / sizeof SIGNATURES[0]; r++) {
        bool all = true;
        for (int k = 0; k < 3 && SIGNATURES[r].all[k] && all; k++) all = has(text, n, SIGNATURES[r].all[k]);
        if (all) return SIGNATURES[r].format;
    }
    return CF_REPLY_PLAIN;
}
