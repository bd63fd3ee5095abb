/* polyfill.c — opt-in rewrites (cf_render_options.polyfill) that make an
 * OpenAI-style request fit a template lacking a capability, as a server
 * must before rendering:
 *   - string tool-call `arguments` parsed into objects, for templates that
 *     fail on strings or print them unlike objects (requires_object_arguments);
 *   - typed content parts joined into one string, for templates that only
 *     render strings; plain strings wrapped as [{"type": "text"}] parts, for
 *     templates that only render parts (requires_typed_content);
 *   - a leading system message merged into the first user turn, for
 *     templates without a system role.
 * What a template needs is found by probing it (caps.c), once: the answer
 * is cached in the template as a bit set. Renders share templates across
 * threads, so the cache is an atomic word: a race only makes two threads
 * probe (deterministically, to the same answer) and store the same bits. */
#include "caps.h"
#include "engine/ast.h"
#include "engine/json.h"
#include <stdatomic.h>
#include <string.h>

enum {
    NEED_PROBED = 1,          /* the template has been probed */
    NEED_MERGE_SYSTEM = 2,
    NEED_JOIN_PARTS = 4,
    NEED_WRAP_STRINGS = 8,
    NEED_PARSE_ARGUMENTS = 16,
};

static unsigned needs_of(Rt *rt, const cf_template *t, const cf_context *defaults) {
    unsigned needs = atomic_load_explicit(&((cf_template *)t)->polyfill_needs, memory_order_acquire);
    if (needs & NEED_PROBED) return needs;
    Caps c;
    caps_probe(rt, t, defaults, false, &c);
    needs = NEED_PROBED;
    if (!c.system_role) needs |= NEED_MERGE_SYSTEM;
    if (c.string_content && !c.typed_content) needs |= NEED_JOIN_PARTS;
    if (c.typed_content && !c.string_content) needs |= NEED_WRAP_STRINGS;
    if (c.tool_calls && c.object_arguments) needs |= NEED_PARSE_ARGUMENTS;
    /* the cache lives in a template the caller holds as const: the one
     * field renders may write, atomically */
    atomic_store_explicit(&((cf_template *)t)->polyfill_needs, needs, memory_order_release);
    return needs;
}

/* ---- value helpers (values are immutable: edits make copies) ---- */

static Value get(Value d, const char *key) {
    Value v;
    if (d.type == VT_DICT && dict_get_str(d.u.dict, key, strlen(key), &v)) return v;
    return v_missing();
}

/* A copy of dict d with key set to v. */
static Value with_key(Rt *rt, Value d, const char *key, Value v) {
    Dict *out = dict_new(rt, dict_len(d.u.dict) + 1);
    for (size_t i = 0; i < dict_len(d.u.dict); i++)
        dict_set(rt, out, dict_key_at(d.u.dict, i), dict_val_at(d.u.dict, i));
    dict_set(rt, out, v_strz(rt, key), v);
    return v_dict_of(out);
}

static bool is_role(Value msg, const char *role) {
    Value r = get(msg, "role");
    return r.type == VT_STR && str_eqz(r.u.s, role);
}

static bool is_list(Value v) { return v.type == VT_LIST || v.type == VT_TUPLE; }

static Value text_part(Rt *rt, Value text) {
    Dict *d = dict_new(rt, 2);
    dict_set(rt, d, v_strz(rt, "type"), v_strz(rt, "text"));
    dict_set(rt, d, v_strz(rt, "text"), text);
    return v_dict_of(d);
}

/* The text of content: a string as is; the text parts of a list joined
 * without separator (each part carries its own spacing, as the templates
 * that read parts print them); other parts (images...) are dropped. */
static Value joined_text(Rt *rt, Value content) {
    if (!is_list(content)) return content;
    StrBuf sb;
    sb_init(rt, &sb, 64);
    for (size_t i = 0; i < content.u.list->len; i++) {
        rt_step(rt, 1);
        Value part = content.u.list->items[i], text = get(part, "text");
        if (part.type == VT_STR) text = part;
        else if (!(get(part, "type").type == VT_STR && str_eqz(get(part, "type").u.s, "text"))) continue;
        if (text.type == VT_STR) sb_put(&sb, text.u.s->data, text.u.s->len);
    }
    return sb_to_value(&sb);
}

/* ---- the rewrites ---- */

/* messages without the leading system message, whose text goes in front of
 * the first user turn ("SYSTEM\n\nUSER"); with no user turn the system
 * message becomes one. */
static Value merge_system(Rt *rt, Value messages) {
    List *in = messages.u.list;
    if (!in->len || !is_role(in->items[0], "system")) return messages;
    Value system = joined_text(rt, get(in->items[0], "content"));
    if (system.type != VT_STR) return messages;
    List *out = list_new(rt, in->len);
    bool merged = false;
    for (size_t i = 1; i < in->len; i++) {
        Value m = in->items[i];
        if (!merged && is_role(m, "user")) {
            Value content = get(m, "content");
            StrBuf sb;
            sb_init(rt, &sb, system.u.s->len + 2);
            sb_put(&sb, system.u.s->data, system.u.s->len);
            sb_puts(&sb, "\n\n");
            if (content.type == VT_STR) {
                sb_put(&sb, content.u.s->data, content.u.s->len);
                m = with_key(rt, m, "content", sb_to_value(&sb));
            } else if (is_list(content)) {
                List *parts = list_new(rt, content.u.list->len + 1);
                list_push(rt, parts, text_part(rt, sb_to_value(&sb)));
                for (size_t k = 0; k < content.u.list->len; k++) list_push(rt, parts, content.u.list->items[k]);
                m = with_key(rt, m, "content", v_list_of(parts));
            } else {
                continue;   /* no text to put the system prompt in front of */
            }
            merged = true;
        }
        list_push(rt, out, m);
    }
    if (!merged) {
        List *again = list_new(rt, in->len);
        list_push(rt, again, with_key(rt, in->items[0], "role", v_strz(rt, "user")));
        for (size_t i = 1; i < in->len; i++) list_push(rt, again, in->items[i]);
        return v_list_of(again);
    }
    return v_list_of(out);
}

/* Parse JSON text without letting a syntax error end the render: false
 * when text is not JSON. Memory and limit errors still propagate. */
static bool try_json(Rt *rt, Str *text, Value *out) {
    /* in the arena, not on this frame: longjmp leaves locals indeterminate */
    Rt *sub = rt_alloc(rt, sizeof *sub);
    cf_error *err = rt_alloc(rt, sizeof *err);
    jmp_buf *jb = rt_alloc(rt, sizeof *jb);
    *sub = *rt;
    sub->err = err;
    sub->jb = jb;
    if (setjmp(*jb)) {
        if (err->kind == CF_ERR_MEMORY || err->kind == CF_ERR_LIMIT) rt_throw(rt, err->kind, "%s", err->message);
        return false;
    }
    *out = json_parse(sub, text->data, text->len);
    rt->steps = sub->steps;
    return true;
}

/* A tool call whose arguments (call.function.arguments, or flat
 * call.arguments) are JSON object text, with them as the object. */
static Value call_with_object_arguments(Rt *rt, Value call) {
    Value fn = get(call, "function");
    Value holder = fn.type == VT_DICT ? fn : call;
    Value args = get(holder, "arguments"), parsed;
    if (args.type != VT_STR || !try_json(rt, args.u.s, &parsed) || parsed.type != VT_DICT) return call;
    holder = with_key(rt, holder, "arguments", parsed);
    return fn.type == VT_DICT ? with_key(rt, call, "function", holder) : holder;
}

static Value fix_message(Rt *rt, Value m, unsigned needs) {
    if (m.type != VT_DICT) return m;
    Value content = get(m, "content");
    bool text_role = is_role(m, "user") || is_role(m, "system") || is_role(m, "assistant");
    if ((needs & NEED_JOIN_PARTS) && is_list(content)) {
        m = with_key(rt, m, "content", joined_text(rt, content));
    } else if ((needs & NEED_WRAP_STRINGS) && text_role && content.type == VT_STR && content.u.s->len) {
        List *parts = list_new(rt, 1);
        list_push(rt, parts, text_part(rt, content));
        m = with_key(rt, m, "content", v_list_of(parts));
    }
    Value calls = get(m, "tool_calls");
    if ((needs & NEED_PARSE_ARGUMENTS) && is_list(calls)) {
        List *out = list_new(rt, calls.u.list->len);
        for (size_t i = 0; i < calls.u.list->len; i++) {
            rt_step(rt, 1);
            list_push(rt, out, call_with_object_arguments(rt, calls.u.list->items[i]));
        }
        m = with_key(rt, m, "tool_calls", v_list_of(out));
    }
    return m;
}

Value polyfill_messages(Rt *rt, const cf_template *t, const cf_context *defaults, Value messages) {
    if (!is_list(messages)) return messages;
    unsigned needs = needs_of(rt, t, defaults);
    if (needs == NEED_PROBED) return messages;
    if (needs & NEED_MERGE_SYSTEM) messages = merge_system(rt, messages);
    List *out = list_new(rt, messages.u.list->len);
    for (size_t i = 0; i < messages.u.list->len; i++) {
        rt_step(rt, 1);
        list_push(rt, out, fix_message(rt, messages.u.list->items[i], needs));
    }
    return v_list_of(out);
}
