/* caps.c — what a chat template can do, found by PROBING: rendering small
 * synthetic conversations through it in chat mode and looking for unique
 * marker strings in the output. Reading the template text would guess;
 * rendering answers. A probe that raises (raise_exception, TypeError, ...)
 * means "not supported" for what it probed.
 *
 * Every probe renders with the caller's defaults (special tokens) and a
 * pinned clock, so two renders of the same input are comparable. */
#include "caps.h"
#include "engine/context.h"
#include "engine/json.h"
#include "chat_render.h"
#include "reply/format_desc.h"
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Markers: strings no template writes on its own. */
#define M_SYSTEM    "CFPROBE_SYS_7f3a"
#define M_USER      "CFPROBE_USER_1c9e"
#define M_USER2     "CFPROBE_USER_2b4d"
#define M_USER3     "CFPROBE_USER_3e70"
#define M_ASSISTANT "CFPROBE_ASSISTANT_5e21"
#define M_ANSWER    "CFPROBE_ANSWER_68ba"
#define M_REASON    "CFPROBE_REASONING_93d0"
#define M_REASON2   "CFPROBE_REASONING_a41c"
#define M_RESULT    "CFPROBE_TOOL_RESULT_0f7b"
#define M_DOC_TITLE "CFPROBE_DOC_TITLE_6c3f"
#define M_DOC_TEXT  "CFPROBE_DOC_TEXT_d815"
#define FN_ALPHA    "cfprobe_fn_alpha"
#define FN_BETA     "cfprobe_fn_beta"
#define ARG_KEY     "cfprobe_arg"
#define ARG_VALUE   "CFPROBE_ARGVAL_4a61"
#define ARG_VALUE2  "CFPROBE_ARGVAL_7c02"
#define CALL_ID     "call_cfprobe_8d2e"
#define CALL_ID2    "call_cfprobe_b3f9"
#define CALL_ID_BAD "call_cfprobe_nomatch"
/* The arguments object as Python's json.dumps writes it: what a template
 * that accepts string arguments prints for the object too. */
#define ARGS_TEXT   "{\"" ARG_KEY "\": \"" ARG_VALUE "\"}"
#define PROBE_NOW   "2026-01-01T12:00:00"

static const char TOOLS_JSON[] =
    "[{\"type\": \"function\", \"function\": {\"name\": \"" FN_ALPHA "\", "
    "\"description\": \"Probe tool alpha.\", \"parameters\": {\"type\": \"object\", "
    "\"properties\": {\"" ARG_KEY "\": {\"type\": \"string\", \"description\": \"A value.\"}}, "
    "\"required\": [\"" ARG_KEY "\"]}}},"
    " {\"type\": \"function\", \"function\": {\"name\": \"" FN_BETA "\", "
    "\"description\": \"Probe tool beta.\", \"parameters\": {\"type\": \"object\", "
    "\"properties\": {\"" ARG_KEY "\": {\"type\": \"string\", \"description\": \"A value.\"}}, "
    "\"required\": [\"" ARG_KEY "\"]}}}]";

/* Message fields templates read reasoning from, most common first. */
static const char *const REASONING_FIELDS[] = {"reasoning_content", "reasoning", "thinking"};
/* Variables templates turn thinking on and off with. */
static const char *const THINKING_SWITCHES[] = {
    "enable_thinking", "reasoning", "thinking", "enable_reasoning", "think", "reasoning_enabled",
};

/* Special tokens templates concatenate ('...' + eos_token raises when it is
 * undefined): probes use these where the source gave none (a bare .jinja). */
static const char *const PLACEHOLDER_TOKENS[][2] = {
    {"bos_token", "<s>"}, {"eos_token", "</s>"}, {"unk_token", "<unk>"}, {"pad_token", "<pad>"},
};

typedef struct Prober {
    Rt *rt;
    const struct cf_template *t;
    const cf_context *defaults;  /* the caller's (may be NULL) */
    cf_context probe_defaults;   /* the caller's plus placeholder tokens */
    bool typed;              /* write message text as [{type: text}] parts */
    bool calls_with_results; /* tool-call probes need the results after the calls */
    Value tools;             /* the probe tools (schemas alpha and beta) */
    Value required_tools;    /* tools every render passes: a tool-use-only
                                template fails without them; else VT_MISSING */
} Prober;

/* ---- building probe conversations ---- */

static Value str(Prober *P, const char *z) { return v_strz(P->rt, z); }

/* Ends obj()'s key list (a plain NULL may be an int in varargs). */
#define END ((const char *)NULL)

/* {k1: v1, k2: v2, ...}; the key list ends with END. */
static Value obj(Prober *P, const char *key, ...) {
    Dict *d = dict_new(P->rt, 6);
    va_list ap;
    va_start(ap, key);
    for (const char *k = key; k; k = va_arg(ap, const char *)) {
        Value v = va_arg(ap, Value);
        dict_set(P->rt, d, str(P, k), v);
    }
    va_end(ap);
    return v_dict_of(d);
}

static Value list(Prober *P, int n, ...) {
    List *l = list_new(P->rt, (size_t)n);
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++) list_push(P->rt, l, va_arg(ap, Value));
    va_end(ap);
    return v_list_of(l);
}

/* A copy of list `l` with `v` appended (values are immutable). */
static Value append(Prober *P, Value l, Value v) {
    List *out = list_new(P->rt, l.u.list->len + 1);
    for (size_t i = 0; i < l.u.list->len; i++) list_push(P->rt, out, l.u.list->items[i]);
    list_push(P->rt, out, v);
    return v_list_of(out);
}

/* Message text in the form the template reads. */
static Value text(Prober *P, const char *marker) {
    if (!P->typed) return str(P, marker);
    return list(P, 1, obj(P, "type", str(P, "text"), "text", str(P, marker), END));
}

static Value message(Prober *P, const char *role, const char *marker) {
    return obj(P, "role", str(P, role), "content", text(P, marker), END);
}

static Value reasoned_answer(Prober *P, const char *field, const char *reasoning, const char *marker) {
    return obj(P, "role", str(P, "assistant"), field, str(P, reasoning), "content", text(P, marker), END);
}

static Value tool_call(Prober *P, const char *id, const char *name, Value arguments) {
    return obj(P, "id", str(P, id), "type", str(P, "function"),
               "function", obj(P, "name", str(P, name), "arguments", arguments, END), END);
}

static Value arguments(Prober *P, const char *value) {
    return obj(P, ARG_KEY, str(P, value), END);
}

/* An assistant turn that only calls tools (content "" rather than null:
 * many templates concatenate content unconditionally). */
static Value calling_turn(Prober *P, Value calls, const char *reasoning_field) {
    if (reasoning_field)
        return obj(P, "role", str(P, "assistant"), "content", str(P, ""), reasoning_field, str(P, M_REASON2),
                   "tool_calls", calls, END);
    return obj(P, "role", str(P, "assistant"), "content", str(P, ""), "tool_calls", calls, END);
}

static Value tool_result(Prober *P, const char *id) {
    return obj(P, "role", str(P, "tool"), "tool_call_id", str(P, id), "content", str(P, M_RESULT), END);
}

/* Render variables: messages, add_generation_prompt (and the tools for a
 * template that needs them to render at all). */
static Dict *chat(Prober *P, Value messages, bool agp) {
    Dict *d = dict_new(P->rt, 6);
    dict_set(P->rt, d, str(P, "messages"), messages);
    dict_set(P->rt, d, str(P, "add_generation_prompt"), v_bool(agp));
    if (P->required_tools.type != VT_MISSING) dict_set(P->rt, d, str(P, "tools"), P->required_tools);
    return d;
}

static Dict *with(Prober *P, Dict *vars, const char *name, Value v) {
    dict_set(P->rt, vars, str(P, name), v);
    return vars;
}

/* ---- rendering and inspecting ---- */

/* One chat-mode render: the output, or NULL when it failed. Running out of
 * memory says nothing about the template, so that one propagates. */
static Str *render(Prober *P, Dict *vars) {
    rt_step(P->rt, 1);
    cf_context ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.vars = vars;
    cf_render_options ro;
    memset(&ro, 0, sizeof ro);
    ro.now = PROBE_NOW;
    ro.defaults = &P->probe_defaults;
    cf_result res;
    cf_error err;
    if (!chat_render(P->t, &ctx, &ro, &res, &err)) {
        if (err.kind == CF_ERR_MEMORY) rt_throw(P->rt, CF_ERR_MEMORY, "%s", err.message);
        return NULL;
    }
    /* copy into the arena without throwing before res is freed */
    size_t len = res.len;
    Str *s = arena_try_alloc(P->rt->arena, sizeof(Str) + len + 1);
    if (s) {
        s->len = len;
        s->nchars = -1;
        s->hash = 0;
        memcpy(s->data, res.text, len + 1);
    }
    cf_result_free(&res);
    if (!s) rt_oom(P->rt, sizeof(Str) + len + 1);
    return s;
}

static bool has(const Str *s, const char *needle) {
    return s && cf_memmem(s->data, s->len, needle, strlen(needle)) != NULL;
}

static bool same(const Str *a, const Str *b) { return a && b && str_eq(a, b); }

static bool is_prefix(const Str *a, const Str *b) {
    return a->len <= b->len && memcmp(a->data, b->data, a->len) == 0;
}

/* ---- the probes ---- */

/* A user turn renders its text as a string and/or as typed parts. Typed
 * parts printed as Python/JSON data ([{'type': 'text', 'text': ...}]) do
 * not count: the template did not read them. */
static void probe_content(Prober *P, Caps *c) {
    Str *plain = render(P, chat(P, list(P, 1, message(P, "user", M_USER)), true));
    /* Tool-use-only templates iterate `tools` unconditionally; some read
     * their own tool schema (Command-R's parameter_definitions): [] then. */
    Value fallbacks[2] = {P->tools, v_list_of(list_new(P->rt, 0))};
    for (int i = 0; i < 2 && !plain; i++) {
        P->required_tools = fallbacks[i];
        plain = render(P, chat(P, list(P, 1, message(P, "user", M_USER)), true));
    }
    if (!plain) P->required_tools = v_missing();
    P->typed = true;
    Str *typed = render(P, chat(P, list(P, 1, message(P, "user", M_USER)), true));
    P->typed = false;
    c->string_content = has(plain, M_USER);
    c->typed_content = has(typed, M_USER) && !has(typed, "'text': '" M_USER) &&
                       !has(typed, "\"text\": \"" M_USER);
    P->typed = c->typed_content && !c->string_content;
}

static void probe_system(Prober *P, Caps *c) {
    Str *out = render(P, chat(P, list(P, 2, message(P, "system", M_SYSTEM), message(P, "user", M_USER)), true));
    c->system_role = has(out, M_SYSTEM);
}

static void probe_tools(Prober *P, Caps *c) {
    Str *out = render(P, with(P, chat(P, list(P, 1, message(P, "user", M_USER)), true), "tools", P->tools));
    c->tools = has(out, FN_ALPHA);
}

/* A user turn, an assistant turn making `calls`, and — when the template
 * needs them (or `results` asks) — one tool result per call, answering
 * `result_id` instead of the call's own id when given. */
static Str *render_calls(Prober *P, Value calls, bool results, const char *result_id) {
    Value msgs = list(P, 2, message(P, "user", M_USER), calling_turn(P, calls, NULL));
    if (results) {
        for (size_t i = 0; i < calls.u.list->len; i++) {
            Value id;
            dict_get_str(calls.u.list->items[i].u.dict, "id", 2, &id);
            msgs = append(P, msgs, tool_result(P, result_id ? result_id : id.u.s->data));
        }
    }
    return render(P, with(P, chat(P, msgs, results), "tools", P->tools));
}

static void probe_tool_calls(Prober *P, Caps *c) {
    Value one = list(P, 1, tool_call(P, CALL_ID, FN_ALPHA, arguments(P, ARG_VALUE)));
    /* Alone first; some templates insist that results follow the calls. */
    Str *with_objects = render_calls(P, one, false, NULL);
    if (!has(with_objects, FN_ALPHA)) {
        with_objects = render_calls(P, one, true, NULL);
        P->calls_with_results = true;
    }
    c->tool_calls = has(with_objects, FN_ALPHA);

    Str *answered = render_calls(P, one, true, NULL);
    c->tool_responses = has(answered, M_RESULT);
    /* Ids count when printed, or when the template pairs results with calls
     * by id (a result answering no call then renders differently). */
    c->tool_call_id = has(answered, CALL_ID) || has(with_objects, CALL_ID) ||
                      (answered && !same(answered, render_calls(P, one, true, CALL_ID_BAD)));
    if (!c->tool_calls) {
        P->calls_with_results = false;
        return;
    }

    Value two = list(P, 2, tool_call(P, CALL_ID, FN_ALPHA, arguments(P, ARG_VALUE)),
                     tool_call(P, CALL_ID2, FN_BETA, arguments(P, ARG_VALUE2)));
    Str *parallel = render_calls(P, two, P->calls_with_results, NULL);
    c->parallel_tool_calls = has(parallel, FN_ALPHA) && has(parallel, FN_BETA);

    /* Objects printed as Python data ({'cfprobe_arg': ...}) mean the
     * template wants strings, not objects. */
    Value as_text = list(P, 1, tool_call(P, CALL_ID, FN_ALPHA, str(P, ARGS_TEXT)));
    Str *with_text = render_calls(P, as_text, P->calls_with_results, NULL);
    c->object_arguments = !has(with_objects, "{'" ARG_KEY "'") && !same(with_text, with_objects);
}

static void probe_reasoning(Prober *P, Caps *c) {
    for (size_t i = 0; i < sizeof REASONING_FIELDS / sizeof *REASONING_FIELDS; i++) {
        Value msgs = list(P, 2, message(P, "user", M_USER),
                          reasoned_answer(P, REASONING_FIELDS[i], M_REASON, M_ASSISTANT));
        if (has(render(P, chat(P, msgs, false)), M_REASON)) {
            c->reasoning_field = REASONING_FIELDS[i];
            return;
        }
    }
}

static void probe_documents(Prober *P, Caps *c) {
    Value docs = list(P, 1, obj(P, "title", str(P, M_DOC_TITLE), "text", str(P, M_DOC_TEXT), END));
    Str *out = render(P, with(P, chat(P, list(P, 1, message(P, "user", M_USER)), true), "documents", docs));
    c->documents = has(out, M_DOC_TITLE) || has(out, M_DOC_TEXT);
}

/* The first candidate variable whose true and false render differently. */
static void probe_thinking_switch(Prober *P, Caps *c) {
    Value msgs = list(P, 1, message(P, "user", M_USER));
    for (size_t i = 0; i < sizeof THINKING_SWITCHES / sizeof *THINKING_SWITCHES; i++) {
        const char *name = THINKING_SWITCHES[i];
        Str *on = render(P, with(P, chat(P, msgs, true), name, v_bool(true)));
        Str *off = render(P, with(P, chat(P, msgs, true), name, v_bool(false)));
        if (on && off && !same(on, off)) {
            c->thinking_switch = name;
            return;
        }
    }
}

/* Length of the special-token-looking piece at p, or 0:
 *   <|anything without spaces|>, <｜...｜> (DeepSeek's fullwidth bars),
 *   <name>, </name>, <|name>, <name|> (Gemma 4), [NAME], [/NAME], [|name|]
 * where a name is ASCII letters, digits, '_' and (inside) '-', '.', ':'. */
enum { TOKEN_MAX = 64 };

static bool name_char(char ch, bool first) {
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_' ||
           (!first && ((ch >= '0' && ch <= '9') || ch == '-' || ch == '.' || ch == ':'));
}

static size_t token_at(const char *p, const char *end) {
    static const char FW_OPEN[] = "<\xEF\xBD\x9C", FW_CLOSE[] = "\xEF\xBD\x9C>";
    size_t avail = (size_t)(end - p) < TOKEN_MAX ? (size_t)(end - p) : TOKEN_MAX;
    struct { const char *open, *close; } bars[] = {{"<|", "|>"}, {FW_OPEN, FW_CLOSE}};
    for (size_t b = 0; b < 2; b++) {
        size_t on = strlen(bars[b].open), cn = strlen(bars[b].close);
        if (avail < on + cn || memcmp(p, bars[b].open, on) != 0) continue;
        for (size_t i = on; i + cn <= avail; i++) {
            unsigned char ch = (unsigned char)p[i];
            if (ch <= ' ' || ch == '<') break;
            if (memcmp(p + i, bars[b].close, cn) == 0) return i + cn;
        }
    }
    if (avail < 3 || (p[0] != '<' && p[0] != '[')) return 0;
    char close = p[0] == '<' ? '>' : ']';
    size_t i = 1;
    if (p[i] == '/' || p[i] == '|') i++;
    size_t name = i;
    while (i < avail && name_char(p[i], i == name)) i++;
    if (i == name || i >= avail) return 0;
    if (p[i] == '|' && i + 1 < avail) i++;
    return p[i] == close ? i + 1 : 0;
}

/* What add_generation_prompt appends: the tail of the render with it after
 * the longest prefix shared with the render without it (usually all of
 * the latter), cut on a character boundary. */
static void probe_generation_prompt(Prober *P, Caps *c) {
    Value msgs = list(P, 1, message(P, "user", M_USER));
    Str *without = render(P, chat(P, msgs, false));
    Str *with_prompt = render(P, chat(P, msgs, true));
    if (!without || !with_prompt) return;
    size_t n = 0, max = without->len < with_prompt->len ? without->len : with_prompt->len;
    while (n < max && without->data[n] == with_prompt->data[n]) n++;
    if (n < without->len) {
        /* they diverge: not inside a special token (eos_token "</s>" vs
         * "<|assistant|>" share the "<") nor inside a character */
        const char *end = with_prompt->data + with_prompt->len;
        for (size_t back = 1; back <= TOKEN_MAX && back <= n; back++) {
            size_t k = token_at(with_prompt->data + n - back, end);
            if (k > back) {
                n -= back;
                break;
            }
        }
        while (n > 0 && ((unsigned char)with_prompt->data[n] & 0xC0) == 0x80) n--;
    }
    if (n < with_prompt->len) c->generation_prompt = str_new(P->rt, with_prompt->data + n, with_prompt->len - n);
}

/* The special tokens in s[from, to), in order. */
static List *tokens_between(Prober *P, const Str *s, const char *from, const char *to) {
    List *out = list_new(P->rt, 4);
    const char *p = cf_memmem(s->data, s->len, from, strlen(from));
    const char *end = p ? cf_memmem(p, s->len - (size_t)(p - s->data), to, strlen(to)) : NULL;
    if (!end) return out;
    for (p += strlen(from); p < end;) {
        size_t n = token_at(p, end);
        if (n) {
            list_push(P->rt, out, v_str(P->rt, p, n));
            p += n;
        } else {
            p++;
        }
    }
    return out;
}

static bool list_has(const List *l, Value v) {
    for (size_t i = 0; i < l->len; i++)
        if (v_equal(l->items[i], v)) return true;
    return false;
}

static void add_unique(Prober *P, List *l, Value v) {
    if (v.type == VT_STR && v.u.s->len && !list_has(l, v)) list_push(P->rt, l, v);
}

/* Where a reply ends: the end-of-turn token observed after an assistant
 * turn (the first token closing it that also closes a user turn — e.g.
 * <|im_end|>, <|eot_id|>, <end_of_turn> — else the first token after it,
 * the next turn's header, as GLM's <|user|>) unless the reply format writes
 * it inside a reply, then what the reply format adds (GLM also ends at
 * <|observation|>, harmony at <|return|> and <|call|>), then the eos_token. */
static void probe_stop_strings(Prober *P, Caps *c, cf_reply_format format) {
    List *stops = list_new(P->rt, 4);
    Value msgs = list(P, 3, message(P, "user", M_USER), message(P, "assistant", M_ASSISTANT),
                      message(P, "user", M_USER2));
    Str *out = render(P, chat(P, msgs, false));
    if (out) {
        List *after_user = tokens_between(P, out, M_USER, M_ASSISTANT);
        List *after_assistant = tokens_between(P, out, M_ASSISTANT, M_USER2);
        /* a token the reply format writes inside a reply (HyperCLOVA X's
           <|im_end|> closes each part of a turn, harmony's <|end|> one
           message of several) ends no reply */
        List *ends = list_new(P->rt, after_assistant->len);
        for (size_t i = 0; i < after_assistant->len; i++) {
            const Str *tok = after_assistant->items[i].u.s;
            if (!reply_format_uses(format, tok->data, tok->len)) list_push(P->rt, ends, after_assistant->items[i]);
        }
        Value end_of_turn = v_missing();
        for (size_t i = 0; i < ends->len && end_of_turn.type == VT_MISSING; i++)
            if (list_has(after_user, ends->items[i])) end_of_turn = ends->items[i];
        if (end_of_turn.type == VT_MISSING && ends->len) end_of_turn = ends->items[0];
        add_unique(P, stops, end_of_turn);
        /* the token right after the reply (and a line break) closes it too (Nemotron's <SPECIAL_12>) */
        const char *m = cf_memmem(out->data, out->len, M_ASSISTANT, strlen(M_ASSISTANT));
        if (m && after_assistant->len) {
            const char *at = m + strlen(M_ASSISTANT), *end = out->data + out->len;
            while (at < end && (*at == ' ' || *at == '\n')) at++;
            const Str *first = after_assistant->items[0].u.s;
            if ((size_t)(end - at) >= first->len && memcmp(at, first->data, first->len) == 0 &&
                !reply_format_uses(format, first->data, first->len))
                add_unique(P, stops, after_assistant->items[0]);
        }
    }
    if (format == CF_REPLY_GLM45) {
        add_unique(P, stops, str(P, "<|user|>"));
        add_unique(P, stops, str(P, "<|observation|>"));
    } else if (format == CF_REPLY_COMMAND_A) {
        add_unique(P, stops, str(P, "<|END_OF_TURN_TOKEN|>"));
    } else if (format == CF_REPLY_HARMONY) {   /* the end of a final answer, or of a call */
        add_unique(P, stops, str(P, "<|return|>"));
        add_unique(P, stops, str(P, "<|call|>"));
    }
    Value eos;
    if (P->defaults && dict_get_str(P->defaults->vars, "eos_token", 9, &eos)) add_unique(P, stops, eos);
    c->stop_strings = stops;
}

/* prefix_stable, precisely: take the conversation
 *   [system?] user, assistant(reasoning, answer), user,
 *   [assistant(reasoning, tool call), tool result, assistant(reasoning, answer), user]
 * (system only when supported, the tool part only when tool calls are;
 * reasoning in the field the template reads, reasoning_content when none)
 * and render every prefix messages[:k], k = 1..n, with
 * add_generation_prompt=false (and the tools, when any). Stable means each
 * render that succeeds is a byte prefix of the next one that succeeds:
 * appending a turn never rewrites earlier text, so a server can keep its KV
 * cache across turns. Templates that drop the reasoning of turns before the
 * last user message are not stable. -1 when fewer than two prefixes render. */
static void probe_prefix_stable(Prober *P, Caps *c) {
    const char *field = c->reasoning_field ? c->reasoning_field : "reasoning_content";
    List *conv = list_new(P->rt, 9);
    if (c->system_role) list_push(P->rt, conv, message(P, "system", M_SYSTEM));
    list_push(P->rt, conv, message(P, "user", M_USER));
    list_push(P->rt, conv, reasoned_answer(P, field, M_REASON, M_ASSISTANT));
    list_push(P->rt, conv, message(P, "user", M_USER2));
    if (c->tool_calls) {
        Value call = list(P, 1, tool_call(P, CALL_ID, FN_ALPHA, arguments(P, ARG_VALUE)));
        list_push(P->rt, conv, calling_turn(P, call, field));
        list_push(P->rt, conv, tool_result(P, CALL_ID));
        list_push(P->rt, conv, reasoned_answer(P, field, M_REASON, M_ANSWER));
        list_push(P->rt, conv, message(P, "user", M_USER3));
    }
    Str *previous = NULL;
    int compared = 0;
    c->prefix_stable = 1;
    for (size_t k = 1; k <= conv->len; k++) {
        List *head = list_new(P->rt, k);
        for (size_t i = 0; i < k; i++) list_push(P->rt, head, conv->items[i]);
        Dict *vars = chat(P, v_list_of(head), false);
        if (c->tool_calls) with(P, vars, "tools", P->tools);
        Str *out = render(P, vars);
        if (!out) continue;
        if (previous && !is_prefix(previous, out)) c->prefix_stable = 0;
        compared += previous != NULL;
        previous = out;
    }
    if (!compared) c->prefix_stable = -1;
}

/* ---- the reply format ----
 * Render what a model would write (a turn calling the probe tool; a turn
 * with reasoning) as the text after the prompt, and read it back with each
 * format: the format is the one that recovers what was rendered. The
 * template decides, not its name, and caps and parse agree by
 * construction (parse uses this answer). */

/* What add_generation_prompt leaves for the model: the text of `full`
 * after its common part with `prompt`, cut back to the start of a special
 * token the common part ends inside. *tail: the common part's end. */
static Str *reply_delta(Prober *P, const Str *prompt, const Str *full, Str **tail) {
    size_t n = 0, max = prompt->len < full->len ? prompt->len : full->len;
    while (n < max && prompt->data[n] == full->data[n]) n++;
    if (n < prompt->len) {
        for (size_t back = 1; back <= TOKEN_MAX && back <= n; back++) {
            size_t k = token_at(full->data + n - back, full->data + full->len);
            if (k > back) {
                n -= back;
                break;
            }
        }
        while (n > 0 && ((unsigned char)full->data[n] & 0xC0) == 0x80) n--;
    }
    size_t t = n < 256 ? n : 256;
    *tail = str_new(P->rt, full->data + n - t, t);
    return str_new(P->rt, full->data + n, full->len - n);
}

/* The text without JSON whitespace (the probe's values have none). */
static bool same_json_text(const Str *s, const char *want) {
    size_t k = 0, wn = strlen(want);
    for (size_t i = 0; i < s->len; i++) {
        char ch = s->data[i];
        if (ch == ' ' || ch == '\n' || ch == '\t' || ch == '\r') continue;
        if (k >= wn || want[k++] != ch) return false;
    }
    return k == wn;
}

enum { RECOVERS_CALL = 1, RECOVERS_REASONING = 2 };

/* Parse `reply` as format f: does it give back the probe call (one call of
 * FN_ALPHA with the probe argument), or the probe reasoning? */
static int recovers(Prober *P, cf_reply_format f, const Str *reply, const Str *tail) {
    char tail_z[260];
    memcpy(tail_z, tail->data, tail->len);
    tail_z[tail->len] = 0;
    cf_reply_options opt;
    memset(&opt, 0, sizeof opt);
    opt.format = f;
    opt.tools_json = TOOLS_JSON;
    opt.prompt_tail = tail_z;
    cf_error err;
    size_t len;
    char *msg = cf_parse_reply(reply->data, reply->len, &opt, &len, &err);
    if (!msg) {
        if (err.kind == CF_ERR_MEMORY) rt_throw(P->rt, CF_ERR_MEMORY, "%s", err.message);
        return 0;
    }
    Value m = json_parse(P->rt, msg, len);
    free(msg);
    int got = 0;
    Value calls, reasoning;
    if (dict_get_str(m.u.dict, "reasoning_content", 17, &reasoning) && reasoning.type == VT_STR &&
        str_eqz(reasoning.u.s, M_REASON))
        got |= RECOVERS_REASONING;
    if (dict_get_str(m.u.dict, "tool_calls", 10, &calls) && calls.type == VT_LIST && calls.u.list->len == 1) {
        Value fn, name, args;
        Value call = calls.u.list->items[0];
        if (dict_get_str(call.u.dict, "function", 8, &fn) && dict_get_str(fn.u.dict, "name", 4, &name) &&
            dict_get_str(fn.u.dict, "arguments", 9, &args) && str_eqz(name.u.s, FN_ALPHA) &&
            same_json_text(args.u.s, "{\"" ARG_KEY "\":\"" ARG_VALUE "\"}"))
            got |= RECOVERS_CALL;
    }
    return got;
}

/* Formats in the order they are tried: the hand-written ones, then the
 * described ones (formats.c), more specific syntax first. */
static cf_reply_format candidate(size_t k) {
    static const cf_reply_format hand[] = {CF_REPLY_GLM45, CF_REPLY_COMMAND_A, CF_REPLY_HERMES};
    enum { NHAND = sizeof hand / sizeof hand[0] };
    return k < NHAND ? hand[k] : reply_format_at(k - NHAND);
}

static size_t candidates(void) { return 3 + reply_formats_described(); }

static void probe_reply_format(Prober *P, Caps *c) {
    c->reply_format = CF_REPLY_PLAIN;
    Value user = list(P, 1, message(P, "user", M_USER));
    Str *prompt = render(P, with(P, chat(P, user, true), "tools", P->tools));
    const char *field = c->reasoning_field ? c->reasoning_field : "reasoning_content";
    Str *reasoned = render(P, with(P, chat(P, append(P, user, reasoned_answer(P, field, M_REASON, M_ANSWER)),
                                            false), "tools", P->tools));
    /* the arguments as an object, else as JSON text (templates that
     * concatenate them) */
    Value one = list(P, 1, tool_call(P, CALL_ID, FN_ALPHA, arguments(P, ARG_VALUE)));
    Str *calling = render_calls(P, one, P->calls_with_results, NULL);
    if (!has(calling, FN_ALPHA) || has(calling, "{'" ARG_KEY "'")) {
        Value as_text = list(P, 1, tool_call(P, CALL_ID, FN_ALPHA, str(P, ARGS_TEXT)));
        calling = render_calls(P, as_text, P->calls_with_results, NULL);
        if (!has(calling, FN_ALPHA)) calling = render_calls(P, as_text, true, NULL);
    }
    if (!has(calling, FN_ALPHA)) calling = NULL;
    size_t len;
    const char *src = cf_template_source(P->t, &len);
    cf_reply_format by_text = cf_reply_format_detect(src, len);
    if (!prompt) {   /* nothing to probe: the text's signature */
        c->reply_format = by_text;
        return;
    }
    Str *tail = NULL, *reason_tail = NULL;
    Str *call_reply = calling ? reply_delta(P, prompt, calling, &tail) : NULL;
    Str *reason_reply = reasoned && has(reasoned, M_REASON) ? reply_delta(P, prompt, reasoned, &reason_tail) : NULL;
    cf_reply_format first_call = CF_REPLY_PLAIN, first_reason = CF_REPLY_PLAIN;
    bool found_call = false, found_reason = false;
    size_t call_score = 0;
    /* the format the template's text names goes first: looser syntaxes
     * (bare JSON) can read back what a stricter one printed */
    for (size_t k = 0; k <= candidates(); k++) {
        cf_reply_format f = k == 0 ? by_text : candidate(k - 1);
        if (k == 0 ? f == CF_REPLY_PLAIN : f == by_text) continue;
        bool calls_ok = call_reply && (recovers(P, f, call_reply, tail) & RECOVERS_CALL);
        bool reason_ok = reason_reply && (recovers(P, f, reason_reply, reason_tail) & RECOVERS_REASONING);
        if (calls_ok && reason_ok) {   /* both: this one */
            c->reply_format = f;
            return;
        }
        if (calls_ok && !found_call) {
            first_call = f, found_call = true;
            call_score = reply_format_text_score(f, src, len);
        } else if (calls_ok && first_call != by_text && reply_format_desc(first_call)) {
            /* several described formats read the call back (the same
             * <tool_calls> JSON list): the one whose reasoning markers and
             * wrappers the template names as well */
            size_t score = reply_format_text_score(f, src, len);
            if (score > call_score) first_call = f, call_score = score;
        }
        if (reason_ok && !found_reason) first_reason = f, found_reason = true;
    }
    /* nothing read back a call the template printed (or it printed none):
     * its text's signature, else what read back its reasoning */
    if (found_call) c->reply_format = first_call;
    else if (by_text != CF_REPLY_PLAIN) c->reply_format = by_text;
    else if (found_reason && !(recovers(P, CF_REPLY_PLAIN, reason_reply, reason_tail) & RECOVERS_REASONING))
        c->reply_format = first_reason;
}

static Dict *with_placeholder_tokens(Rt *rt, const cf_context *defaults) {
    Dict *d = dict_new(rt, 16);
    if (defaults) {
        for (size_t i = 0; i < dict_len(defaults->vars); i++)
            dict_set(rt, d, dict_key_at(defaults->vars, i), dict_val_at(defaults->vars, i));
    }
    for (size_t i = 0; i < sizeof PLACEHOLDER_TOKENS / sizeof *PLACEHOLDER_TOKENS; i++) {
        Value v;
        if (!dict_get_str(d, PLACEHOLDER_TOKENS[i][0], strlen(PLACEHOLDER_TOKENS[i][0]), &v))
            dict_set(rt, d, v_strz(rt, PLACEHOLDER_TOKENS[i][0]), v_strz(rt, PLACEHOLDER_TOKENS[i][1]));
    }
    return d;
}

/* A prober over template t, with the caller's defaults and placeholder special tokens. */
static void prober_init(Prober *P, Rt *rt, const struct cf_template *t, const cf_context *defaults) {
    memset(P, 0, sizeof *P);
    P->rt = rt;
    P->t = t;
    P->defaults = defaults;
    P->probe_defaults.vars = with_placeholder_tokens(rt, defaults);
    P->tools = json_parse(rt, TOOLS_JSON, sizeof TOOLS_JSON - 1);
}

/* What deciding the reply format needs, and no more. */
static void probe_up_to_reply_format(Prober *P, Caps *c) {
    probe_content(P, c);
    probe_tool_calls(P, c);
    probe_reasoning(P, c);
    probe_reply_format(P, c);
}

void caps_probe(Rt *rt, const struct cf_template *t, const cf_context *defaults, bool all, Caps *out) {
    memset(out, 0, sizeof *out);
    out->prefix_stable = -1;
    Prober P;
    prober_init(&P, rt, t, defaults);
    probe_content(&P, out);
    probe_system(&P, out);
    probe_tool_calls(&P, out);
    if (!all) return;
    probe_tools(&P, out);
    probe_reasoning(&P, out);
    probe_documents(&P, out);
    probe_thinking_switch(&P, out);
    probe_generation_prompt(&P, out);
    probe_reply_format(&P, out);
    probe_stop_strings(&P, out, out->reply_format);
    probe_prefix_stable(&P, out);
}

/* ---- the public JSON ---- */

/* A runtime of default limits on a fresh arena; the caller sets the jump point. */
static void scratch_rt(Rt *rt, Arena *arena, jmp_buf *jb, cf_error *err) {
    arena_init(arena, 0);
    memset(rt, 0, sizeof *rt);
    rt->arena = arena;
    rt->jb = jb;
    rt->err = err;
    limits_resolve(&rt->lim);
}

static void put(Rt *rt, Dict *d, const char *key, Value v) { dict_set(rt, d, v_strz(rt, key), v); }
static Value str_or_null(Rt *rt, const char *z) { return z ? v_strz(rt, z) : v_none(); }

CF_API char *cf_caps_json(const cf_template *t, const cf_context *defaults, cf_error *err) {
    cf_error scratch;
    if (!err) err = &scratch;
    memset(err, 0, sizeof *err);
    if (!t) {
        error_set(err, CF_ERR_USAGE, 0, 0, "cf_caps_json: no template");
        return NULL;
    }
    Arena arena;
    jmp_buf jb;
    Rt rt;
    scratch_rt(&rt, &arena, &jb, err);
    if (setjmp(jb)) {
        arena_release(&arena);
        return NULL;
    }
    Caps c;
    caps_probe(&rt, t, defaults, true, &c);

    Dict *d = dict_new(&rt, 20);
    put(&rt, d, "supports_system_role", v_bool(c.system_role));
    put(&rt, d, "supports_tools", v_bool(c.tools));
    put(&rt, d, "supports_tool_calls", v_bool(c.tool_calls));
    put(&rt, d, "supports_parallel_tool_calls", v_bool(c.parallel_tool_calls));
    put(&rt, d, "supports_tool_call_id", v_bool(c.tool_call_id));
    put(&rt, d, "supports_tool_responses", v_bool(c.tool_responses));
    put(&rt, d, "supports_reasoning", v_bool(c.reasoning_field && !strcmp(c.reasoning_field, "reasoning_content")));
    put(&rt, d, "reasoning_field", str_or_null(&rt, c.reasoning_field));
    put(&rt, d, "supports_documents", v_bool(c.documents));
    put(&rt, d, "supports_string_content", v_bool(c.string_content));
    put(&rt, d, "supports_typed_content", v_bool(c.typed_content));
    put(&rt, d, "requires_object_arguments", v_bool(c.tool_calls && c.object_arguments));
    put(&rt, d, "requires_typed_content", v_bool(c.typed_content && !c.string_content));
    put(&rt, d, "thinking_switch", str_or_null(&rt, c.thinking_switch));
    put(&rt, d, "generation_prompt", c.generation_prompt ? v_str_of(c.generation_prompt) : v_none());
    put(&rt, d, "reply_format", v_strz(&rt, cf_reply_format_name(c.reply_format)));
    put(&rt, d, "stop_strings", v_list_of(c.stop_strings));
    put(&rt, d, "prefix_stable", c.prefix_stable < 0 ? v_none() : v_bool(c.prefix_stable == 1));

    StrBuf sb;
    sb_init(&rt, &sb, 1024);
    JsonDumpOpts o;
    json_opts_default(&o);
    o.ensure_ascii = false;
    o.indent = 2;
    json_dump(&rt, &sb, v_dict_of(d), &o);
    char *json = malloc(sb.len + 1);
    if (!json) rt_oom(&rt, sb.len + 1);
    memcpy(json, sb.p, sb.len);
    json[sb.len] = 0;
    arena_release(&arena);
    return json;
}

CF_API cf_reply_format cf_reply_format_of(const cf_template *t, const cf_context *defaults) {
    if (!t) return CF_REPLY_PLAIN;
    cf_error err;
    Arena arena;
    jmp_buf jb;
    Rt rt;
    scratch_rt(&rt, &arena, &jb, &err);
    cf_reply_format f = CF_REPLY_PLAIN;
    if (setjmp(jb)) {   /* out of memory: the template's signature */
        arena_release(&arena);
        size_t len;
        const char *src = cf_template_source(t, &len);
        return cf_reply_format_detect(src, len);
    }
    Prober P;
    prober_init(&P, &rt, t, defaults);
    Caps c;
    memset(&c, 0, sizeof c);
    probe_up_to_reply_format(&P, &c);
    f = c.reply_format;
    arena_release(&arena);
    return f;
}

CF_API char *cf_reply_stop_strings(const cf_template *t, const cf_context *defaults, cf_error *err) {
    cf_error scratch;
    if (!err) err = &scratch;
    memset(err, 0, sizeof *err);
    if (!t) {
        error_set(err, CF_ERR_USAGE, 0, 0, "cf_reply_stop_strings: no template");
        return NULL;
    }
    Arena arena;
    jmp_buf jb;
    Rt rt;
    scratch_rt(&rt, &arena, &jb, err);
    char *out = NULL;
    if (setjmp(jb)) {
        free(out);
        arena_release(&arena);
        return NULL;
    }
    Caps c;
    memset(&c, 0, sizeof c);
    Prober P;
    prober_init(&P, &rt, t, defaults);
    probe_up_to_reply_format(&P, &c);   /* only what the stop strings need */
    probe_stop_strings(&P, &c, c.reply_format);
    size_t total = 1;
    for (size_t i = 0; i < c.stop_strings->len; i++) total += c.stop_strings->items[i].u.s->len + 1;
    out = malloc(total);
    if (!out) rt_oom(&rt, total);
    char *w = out;
    for (size_t i = 0; i < c.stop_strings->len; i++) {
        const Str *s = c.stop_strings->items[i].u.s;
        memcpy(w, s->data, s->len);
        w += s->len;
        *w++ = 0;
    }
    *w = 0;
    arena_release(&arena);
    return out;
}
