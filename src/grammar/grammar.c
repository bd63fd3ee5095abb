/* grammar.c — the public entry points of the grammar stage: cf_tool_grammar
 * (a reply format + tools -> GBNF, Lark, triggers, structural tag) and
 * cf_schema_grammar (one JSON Schema -> GBNF or Lark). */
#include <stdlib.h>
#include "engine/json.h"
#include "calls.h"

typedef struct Session {
    Arena arena;
    Rt rt;
    jmp_buf jb;
} Session;

static void session_init(Session *s, const cf_limits *limits, cf_error *err) {
    cf_limits lim;
    if (limits) lim = *limits;
    else memset(&lim, 0, sizeof lim);
    limits_resolve(&lim);
    arena_init(&s->arena, lim.max_memory);
    memset(&s->rt, 0, sizeof s->rt);
    s->rt.arena = &s->arena;
    s->rt.lim = lim;
    s->rt.err = err;
    s->rt.jb = &s->jb;
}

/* The arena's text as a malloc'd string; NULL + MemoryError. */
static char *finish(const StrBuf *sb, size_t *out_len, cf_error *err) {
    char *out = malloc(sb->len + 1);
    if (!out) {
        error_set(err, CF_ERR_MEMORY, 0, 0, "out of memory (%zu bytes)", sb->len + 1);
        return NULL;
    }
    memcpy(out, sb->p, sb->len);
    out[sb->len] = 0;
    if (out_len) *out_len = sb->len;
    return out;
}

/* Room in the output block for the arena's chunk header before the text. */
enum { OUTPUT_BLOCK_SLACK = 256 };

/* The session's result: the text moved to the front of the block it was
 * written in (the arena released first: it reads the chunk header the
 * text then covers), or, when it outgrew the block, copied out. */
static char *finish_in_block(Session *s, const StrBuf *sb, char *block, size_t block_size, size_t *out_len, cf_error *err) {
    const char *text = sb->p;
    size_t len = sb->len;
    uintptr_t at = (uintptr_t)text, lo = (uintptr_t)block;   /* (pointers into other objects are not compared) */
    if (at < lo || at - lo > block_size || len + 1 > block_size - (at - lo)) {
        char *r = finish(sb, out_len, err);
        arena_release(&s->arena);
        free(block);
        return r;
    }
    arena_release(&s->arena);
    memmove(block, text, len);
    block[len] = 0;
    if (out_len) *out_len = len;
    return block;
}

/* Where the reply starts, from the end of the prompt. */
static int reasoning_state(const CallSyntax *syn, const cf_grammar_options *opt) {
    if (opt->reasoning_open) return REASON_OPEN;
    if (!opt->prompt_tail || !syn->reasoning_open || !syn->reasoning_close) return REASON_AUTO;
    const char *t = opt->prompt_tail;
    size_t n = strlen(t);
    while (n && (t[n - 1] == ' ' || t[n - 1] == '\n' || t[n - 1] == '\t' || t[n - 1] == '\r')) n--;
    size_t lo = strlen(syn->reasoning_open), lc = strlen(syn->reasoning_close);
    if (n >= lo && memcmp(t + n - lo, syn->reasoning_open, lo) == 0) return REASON_OPEN;
    if (n >= lc && memcmp(t + n - lc, syn->reasoning_close, lc) == 0) return REASON_CLOSED;
    return REASON_AUTO;
}

static void put_z_list(StrBuf *sb, const char *const *z, size_t max) {
    sb_putc(sb, '[');
    for (size_t i = 0; i < max && z[i]; i++) {
        if (i) sb_putc(sb, ',');
        json_write_string(sb, z[i], strlen(z[i]), false);
    }
    sb_putc(sb, ']');
}

/* The tools that may be called: all, or the one named. */
static Value callable_tools(Rt *rt, Value tools, const cf_grammar_options *opt) {
    if (tools.type != VT_LIST) rt_throw(rt, CF_ERR_USAGE, "tools must be a JSON array");
    if (opt->tool_choice != CF_TOOL_CHOICE_NAMED) {
        if (tools.u.list->len == 0 && opt->tool_choice != CF_TOOL_CHOICE_NONE)
            rt_throw(rt, CF_ERR_USAGE, "no tools to call");
        return tools;
    }
    if (!opt->tool_name) rt_throw(rt, CF_ERR_USAGE, "tool_choice names no tool");
    List *one = list_new(rt, 1);
    for (size_t i = 0; i < tools.u.list->len; i++) {
        Str *name;
        if (tool_name(tools.u.list->items[i], &name) && str_eqz(name, opt->tool_name)) {
            list_push(rt, one, tools.u.list->items[i]);
            return v_list_of(one);
        }
    }
    rt_throw(rt, CF_ERR_USAGE, "tool_choice names \"%.200s\", which is not among the tools", opt->tool_name);
}

char *cf_tool_grammar(const cf_grammar_options *opt, size_t *out_len, cf_error *err) {
    if (!opt) {
        error_set(err, CF_ERR_USAGE, 0, 0, "no options");
        return NULL;
    }
    Session s;
    session_init(&s, opt->limits, err);
    Rt *rt = &s.rt;
    /* The JSON is written straight into the block the caller gets: the
     * arena's first chunk, malloc'd, with room for all of it at once (not
     * a dozen doublings each copying what was written). An arena chunk
     * that big would be mapped and populated by the kernel on every call
     * (on a virtual machine a third of a millisecond for half a megabyte)
     * and copied out at the end. The room is per part asked for, some 1.25
     * times the most the 60-tool bench's formats write: GBNF 2.9 times the
     * tools' text, the structural tag 5.2, Lark 8.3 (more grows the buffer
     * into the arena, and the result is copied out). */
    unsigned parts = opt->emit ? opt->emit : CF_EMIT_ALL;
    size_t per_byte = (parts & CF_EMIT_GBNF ? 4 : 0) + (parts & CF_EMIT_STRUCTURAL_TAG ? 6 : 0) + (parts & CF_EMIT_LARK ? 10 : 0);
    size_t tools_len = opt->tools_json ? strlen(opt->tools_json) : 0;
    size_t want = tools_len < ((size_t)1 << 18) ? per_byte * tools_len : (size_t)5 << 20;
    if (want > rt->lim.max_string) want = rt->lim.max_string;
    if (want > rt->lim.max_memory / 8) want = rt->lim.max_memory / 8;   /* a small memory limit still gets its error where it is reached */
    if (want < 4096) want = 4096;
    size_t block_size = want + OUTPUT_BLOCK_SLACK;
    char *block = malloc(block_size);
    if (!block) {
        error_set(err, CF_ERR_MEMORY, 0, 0, "out of memory (%zu bytes)", block_size);
        return NULL;
    }
    arena_init_borrowed(&s.arena, rt->lim.max_memory, block, block_size);
    s.arena.used_total = block_size;   /* the memory limit counts it */
    if (setjmp(s.jb)) {
        arena_release(&s.arena);
        free(block);
        return NULL;
    }
    StrBuf out;
    sb_init(rt, &out, want);   /* the arena's first allocation: in the block */
    CallSyntax syn_of;
    const CallSyntax *syn = call_syntax_of(opt->format, &syn_of) ? &syn_of : NULL;
    if (!syn && opt->tool_choice != CF_TOOL_CHOICE_NONE)
        rt_throw(rt, CF_ERR_USAGE, opt->format == CF_REPLY_PLAIN ? "the %s reply format has no tool calls"
                                                                 : "no grammar for the %s reply format",
                 cf_reply_format_name(opt->format));
    if (!opt->tools_json) rt_throw(rt, CF_ERR_USAGE, "no tools given");
    Value tools = callable_tools(rt, json_parse(rt, opt->tools_json, strlen(opt->tools_json)), opt);
    unsigned emit = opt->emit ? opt->emit : CF_EMIT_ALL;
    sb_puts(&out, "{\"format\":");
    const char *fname = cf_reply_format_name(opt->format);
    json_write_string(&out, fname, strlen(fname), false);
    if (opt->tool_choice == CF_TOOL_CHOICE_NONE || !syn) {
        sb_puts(&out, ",\"grammar\":null,\"grammar_lazy\":false,\"grammar_triggers\":[],\"preserved_tokens\":[],"
                      "\"additional_stops\":[],\"structural_tag\":null,\"lark\":null,\"warnings\":[]}");
        return finish_in_block(&s, &out, block, block_size, out_len, err);
    }
    CallRequest req = {
        .syn = syn,
        .tools = tools,
        .required = opt->tool_choice == CF_TOOL_CHOICE_REQUIRED || opt->tool_choice == CF_TOOL_CHOICE_NAMED,
        .parallel = !opt->single_call,
        .reasoning = reasoning_state(syn, opt),
    };
    Gram g;
    gram_init(&g, rt);
    /* a tool makes some 20 rules (a parameter 2-4, Lark's helpers more) */
    size_t ntools = tools.u.list->len;
    gram_expect_rules(&g, (uint32_t)(ntools < 2000 ? 64 + 24 * ntools : 48064));
    g.keep_text = (emit & CF_EMIT_STRUCTURAL_TAG) != 0;   /* its grammars repeat the calls' rules */
    CallGrammar cg;
    call_grammar(&g, &req, &cg);

    sb_puts(&out, ",\"grammar\":");
    if (emit & CF_EMIT_GBNF) gram_write_gbnf_json(&g, &out, cg.gbnf_root, "root");
    else sb_puts(&out, "null");
    sb_puts(&out, ",\"grammar_lazy\":");
    sb_puts(&out, req.required ? "false" : "true");
    sb_puts(&out, ",\"grammar_triggers\":");
    if (req.required) sb_puts(&out, "[]");
    else call_triggers(&req, &cg, &out);
    sb_puts(&out, ",\"preserved_tokens\":");
    put_z_list(&out, syn->preserved_tokens, CALL_MAX_TOKENS);
    sb_puts(&out, ",\"additional_stops\":");
    put_z_list(&out, syn->additional_stops, CALL_MAX_STOPS);
    sb_puts(&out, ",\"structural_tag\":");
    if (emit & CF_EMIT_STRUCTURAL_TAG) call_structural_tag(&g, &req, &cg, &out);
    else sb_puts(&out, "null");
    sb_puts(&out, ",\"lark\":");
    if (emit & CF_EMIT_LARK) gram_write_lark_json(&g, &out, cg.lark_root, "start");
    else sb_puts(&out, "null");
    sb_puts(&out, ",\"warnings\":[");
    sb_put(&out, g.warnings.p, g.warnings.len);
    sb_puts(&out, "]}");
    return finish_in_block(&s, &out, block, block_size, out_len, err);
}

char *cf_schema_grammar(const char *schema_json, size_t len, cf_grammar_syntax syntax, const cf_limits *limits,
                        size_t *out_len, cf_error *err) {
    Session s;
    session_init(&s, limits, err);
    Rt *rt = &s.rt;
    if (setjmp(s.jb)) {
        arena_release(&s.arena);
        return NULL;
    }
    if (!schema_json) rt_throw(rt, CF_ERR_USAGE, "no schema given");
    Value schema = json_parse(rt, schema_json, len);
    Gram g;
    gram_init(&g, rt);
    SchemaCx *c = schema_cx_new(&g, schema);
    uint32_t value = schema_rule(c, schema, "value-of-schema");
    uint32_t root = gram_rule_new(&g, "document", 8);
    gram_rule_set(&g, root, gx_seq(&g, gx_ref(&g, gram_ws(&g)), gx_ref(&g, value), gx_ref(&g, gram_ws(&g))));
    StrBuf out;
    sb_init(rt, &out, 4096);
    sb_puts(&out, "{\"grammar\":");
    if (syntax == CF_GRAMMAR_LARK) gram_write_lark_json(&g, &out, root, "start");
    else gram_write_gbnf_json(&g, &out, root, "root");
    sb_puts(&out, ",\"warnings\":[");
    sb_put(&out, g.warnings.p, g.warnings.len);
    sb_puts(&out, "]}");
    char *r = finish(&out, out_len, err);
    arena_release(&s.arena);
    return r;
}
