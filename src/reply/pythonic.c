/* pythonic.c — tool calls written as Python: a list of calls
 *   [get_weather(city='Paris', days=3), get_time()]
 * (Llama 3.2 / 4 pythonic, ToolACE), the same list between
 * <|tool_call_start|> and <|tool_call_end|> (LFM2, which may also write a
 * JSON list of {"name", "arguments"} there), or calls one per line between
 * <function_calls> and </function_calls> (Olmo 3) or in a ```python fence
 * between <|tool_call_start|> and <|tool_call_end|> (MiniCPM 3). Values are Python
 * literals (True/None, tuples, nested lists and dicts, escapes; also
 * true/null); the arguments are rebuilt as JSON the way json.dumps writes
 * them. A '[' in prose that does not go on as a call is text. Each call
 * goes out whole when its ')' arrives. Reasoning may come first in
 * <think>...</think> (LFM2.5, Olmo 3). */
#include <string.h>
#include "families.h"

/* ---- one call (shared with llama3.c's builtin tools) ---- */

enum { PC_NAME, PC_SUFFIX, PC_ARGS };
static const char BUILTIN_SUFFIX[] = ".call(";

LitTrack *fam_lit(Parser *p) {
    if (!p->fam_lit) p->fam_lit = rt_alloc0(&p->rt, sizeof *p->fam_lit);
    return p->fam_lit;
}

void pycall_begin(Parser *p, const char *markup, bool keep_raw, bool builtin) {
    call_begin(p, markup, keep_raw, false);
    p->cur_key = PC_NAME;
    p->val_mode = builtin;     /* NAME.call( */
    p->nargs = 0;              /* PC_SUFFIX: bytes of it matched */
    p->text.len = 0;
    memset(fam_lit(p), 0, sizeof *p->fam_lit);
}

static bool python_name_byte(const Parser *p, unsigned char c) {
    if (p->val_mode) return is_name_byte(c) && c != '.' && c != ':';
    return is_name_byte(c) && c != ':';
}

/* The arguments are complete: convert them, end the call. */
static int pycall_done(Parser *p, int resume) {
    p->esc.len = 0;
    if (!literal_args_to_json(p, LIT_PYTHON, p->text.p, p->text.len, &p->esc)) {
        call_break(p, resume, NULL, 0);
        return -1;
    }
    p->call.has_name = true;
    StrBuf args = p->esc;
    call_try_commit(p);
    call_args(p, args.p, args.len);
    call_end(p);
    return 1;
}

int pycall_step(Parser *p, const char *s, size_t n, size_t *pi, int resume) {
    size_t i = *pi;
    Call *c = &p->call;
    uint32_t max_depth = p->rt.lim.max_json_depth < 512 ? p->rt.lim.max_json_depth : 512;
    while (i < n) {
        unsigned char ch = (unsigned char)s[i];
        if (p->cur_key == PC_NAME) {
            size_t k = i;
            while (k < n && k - i < MAX_CALL_NAME - c->name.len && python_name_byte(p, (unsigned char)s[k])) k++;
            if (k > i) {
                sb_put(&c->name, s + i, k - i);
                call_raw(p, s + i, k - i);
                i = k;
                continue;
            }
            if (!c->name.len || (p->val_mode ? ch != '.' : ch != '(')) break;
            p->cur_key = p->val_mode ? PC_SUFFIX : PC_ARGS;
            if (!p->val_mode) {
                call_raw(p, s + i, 1);
                lit_track(fam_lit(p), LIT_PYTHON, ch, max_depth);
                i++;
            }
            continue;
        }
        if (p->cur_key == PC_SUFFIX) {
            if (ch != (unsigned char)BUILTIN_SUFFIX[p->nargs]) break;
            call_raw(p, s + i, 1);
            i++;
            if (BUILTIN_SUFFIX[++p->nargs] == 0) {
                lit_track(fam_lit(p), LIT_PYTHON, '(', max_depth);
                p->cur_key = PC_ARGS;
            }
            continue;
        }
        /* PC_ARGS: up to the matching ')' */
        int r;
        size_t k = i + lit_scan(p->fam_lit, LIT_PYTHON, s + i, n - i, max_depth, &r);
        sb_put(&p->text, s + i, k - i);
        call_raw(p, s + i, k - i);
        i = k;
        if (r == 0) continue;
        if (r < 0) break;
        call_raw(p, s + i, 1);   /* the ')' */
        *pi = i + 1;
        return pycall_done(p, resume);
    }
    *pi = i;
    if (i < n) {   /* s[i] cannot go on: not a call (s[i] is looked at again) */
        call_break(p, resume, NULL, 0);
        return -1;
    }
    return 0;
}

int pycall_fast(const Parser *p) {
    if (p->cur_key != PC_ARGS || !p->fam_lit) return FAST_NONE;
    char quote = p->fam_lit->quote;
    return quote == '\'' ? FAST_PY_STR1 : quote == '"' ? FAST_PY_STR2 : FAST_NONE;
}

/* ---- the format ---- */

enum { P_TEXT, P_LIST, P_WRAP_OPEN, P_WRAP_CLOSE, P_OLMO, P_JSON_LIST, P_PRE, P_THINK };
enum { L_FIRST, L_ITEM, L_CALL, L_NEXT };   /* fam_sub in P_LIST and P_OLMO */
enum { W_NONE, W_LFM2, W_FENCE };           /* fam_mode: the list's wrapper */
static const char FENCE_OPEN[] = "```python";   /* MiniCPM 3: <|tool_call_start|>```python\ncalls\n``` */

static const char *const TEXT_MARKS[] = {"[", "<|tool_call_start|>", "<function_calls>", "<|python_start|>",
                                         "<|python_end|>", "<|eot|>", "<|eot_id|>", "<|eom_id|>"};
static const TagSet TEXT_SET = {TEXT_MARKS, 8};
static const TagSet TEXT_TAGS = {TEXT_MARKS, 8};   /* (the fast path's view) */
static const char *const PRE_MARKS[] = {"<think>"};
static const TagSet PRE_SET = {PRE_MARKS, 1};
static const char *const THINK_TAGS[] = {"</think>"};
static const TagSet THINK_SET = {THINK_TAGS, 1};
enum { M_BRACKET, M_LFM2, M_OLMO, M_PY_START, M_PY_END };
static const char *const LFM2_END[] = {"<|tool_call_end|>"};
static const TagSet LFM2_END_SET = {LFM2_END, 1};
static const char *const OLMO_END[] = {"</function_calls>"};
static const TagSet OLMO_END_SET = {OLMO_END, 1};
static const char *const FENCE_END[] = {"```"};
static const TagSet FENCE_END_SET = {FENCE_END, 1};

static bool ident_start(unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static void list_begin(Parser *p, int wrapper) {
    p->state = P_LIST;
    p->fam_sub = L_FIRST;
    p->fam_mode = wrapper;
}

static void list_end(Parser *p) {
    p->call.raw.len = 0;
    p->state = p->fam_mode == W_LFM2 ? P_WRAP_CLOSE : P_TEXT;
}

/* [call, call, ...] */
static void step_list(Parser *p, const char *s, size_t n, size_t *pi) {
    size_t i = *pi;
    while (i < n && p->state == P_LIST) {
        unsigned char c = (unsigned char)s[i];
        if (p->fam_sub == L_CALL) {
            int r = pycall_step(p, s, n, &i, P_TEXT);
            if (r > 0) p->fam_sub = L_NEXT;
            continue;
        }
        if (is_space(c)) {
            call_raw(p, s + i, 1);
            i++;
        } else if ((p->fam_sub == L_FIRST || p->fam_sub == L_ITEM) && ident_start(c)) {
            pycall_begin(p, NULL, true, false);
            p->fam_sub = L_CALL;
        } else if (p->fam_sub == L_FIRST && c == '{' && p->fam_mode == W_LFM2) {
            jlist_begin(p, 0, P_WRAP_CLOSE, P_TEXT);   /* LFM2's JSON list */
            p->state = P_JSON_LIST;
        } else if ((p->fam_sub == L_FIRST || p->fam_sub == L_NEXT) && c == ']') {
            i++;
            list_end(p);
        } else if (p->fam_sub == L_NEXT && c == ',') {
            call_raw(p, s + i, 1);
            i++;
            p->fam_sub = L_ITEM;
        } else {
            call_break(p, P_TEXT, NULL, 0);
        }
    }
    *pi = i;
}

/* Olmo 3: calls separated by whitespace up to </function_calls>; MiniCPM 3
 * the same in a ```python fence inside the LFM2-style wrapper. */
static void step_olmo(Parser *p, const char *s, size_t n, size_t *pi) {
    size_t i = *pi;
    while (i < n && p->state == P_OLMO) {
        if (p->fam_sub == L_CALL) {
            if (pycall_step(p, s, n, &i, P_TEXT) > 0) p->fam_sub = L_NEXT;
            continue;
        }
        unsigned char c = (unsigned char)s[i];
        if (!p->tm_len && is_space(c)) {
            call_raw(p, s + i, 1);
            i++;
            continue;
        }
        if (!p->tm_len && ident_start(c)) {
            pycall_begin(p, NULL, true, false);
            p->fam_sub = L_CALL;
            continue;
        }
        int r = expect_marks(p, s, n, &i, p->fam_mode == W_FENCE ? &FENCE_END_SET : &OLMO_END_SET);
        if (r == 0) {
            p->call.raw.len = 0;
            p->state = p->fam_mode == W_FENCE ? P_WRAP_CLOSE : P_TEXT;
        } else if (r == -2) {
            marks_break(p, P_TEXT);
        }
    }
    *pi = i;
}

static void pythonic_step(Parser *p, const char *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        int r;
        switch (p->state) {
        case P_PRE:
            if (scan_lead(p, s, n, &i, &PRE_SET, P_TEXT) == 0) p->state = P_THINK;
            break;
        case P_THINK:   /* (calls written inside reasoning are reasoning) */
            if (scan_text(p, s, n, &i, &THINK_SET, put_reasoning) >= 0) p->state = P_TEXT;
            break;
        case P_TEXT:
            r = scan_text(p, s, n, &i, &TEXT_SET, put_content);
            p->call.raw.len = 0;
            if (r == M_BRACKET) {
                call_raw(p, "[", 1);
                list_begin(p, W_NONE);
            } else if (r == M_LFM2) {
                call_raw(p, TEXT_MARKS[r], strlen(TEXT_MARKS[r]));
                p->state = P_WRAP_OPEN;
                p->nargs = 0;   /* bytes of FENCE_OPEN matched */
            } else if (r == M_OLMO) {
                call_raw(p, TEXT_MARKS[r], strlen(TEXT_MARKS[r]));
                p->state = P_OLMO;
                p->fam_sub = L_FIRST;
                p->fam_mode = W_NONE;
            }   /* <|python_start|>, <|python_end|>: Llama 4's wrapper, markup */
            break;
        case P_WRAP_OPEN: {   /* whitespace, then the list or a ```python fence */
            unsigned char c = (unsigned char)s[i];
            if (p->nargs || c == '`') {
                if (c != (unsigned char)FENCE_OPEN[p->nargs]) {
                    call_break(p, P_TEXT, NULL, 0);
                    break;
                }
                call_raw(p, s + i, 1);
                i++;
                if (FENCE_OPEN[++p->nargs] == 0) {
                    p->state = P_OLMO;
                    p->fam_sub = L_FIRST;
                    p->fam_mode = W_FENCE;
                }
            } else if (is_space(c)) {
                call_raw(p, s + i, 1);
                i++;
            } else if (c == '[') {
                call_raw(p, s + i, 1);
                i++;
                list_begin(p, W_LFM2);
            } else {
                call_break(p, P_TEXT, NULL, 0);
            }
            break;
        }
        case P_LIST: step_list(p, s, n, &i); break;
        case P_JSON_LIST: jlist_step(p, s, n, &i); break;
        case P_OLMO: step_olmo(p, s, n, &i); break;
        default:   /* P_WRAP_CLOSE: the calls are done; the closing token may follow */
            r = expect_marks(p, s, n, &i, &LFM2_END_SET);
            if (r == 0) {
                p->call.raw.len = 0;
                p->state = P_TEXT;
            } else if (r == -2) {
                marks_accept(p, P_TEXT);
            }
        }
    }
}

static void pythonic_finish(Parser *p) {
    switch (p->state) {
    case P_PRE:
    case P_TEXT: flush_tag_prefix(p, put_content); break;
    case P_THINK: flush_tag_prefix(p, put_reasoning); break;
    case P_WRAP_CLOSE: call_accept_eof(p); break;
    default: call_break_eof(p, P_TEXT);
    }
}

static int pythonic_fast(const Parser *p, const TagSet **tags) {
    if (p->state == P_THINK) {
        *tags = &THINK_SET;
        return FAST_REASONING;
    }
    if (p->state == P_TEXT) {
        *tags = &TEXT_TAGS;
        return FAST_CONTENT;
    }
    if ((p->state == P_LIST || p->state == P_OLMO) && p->fam_sub == L_CALL) return pycall_fast(p);
    return p->state == P_JSON_LIST ? jcall_fast(p) : FAST_NONE;
}

void pythonic_init(Parser *p) {
    p->step = pythonic_step;
    p->finish = pythonic_finish;
    p->fast = pythonic_fast;
    p->state = p->reasoning_mode == REASONING_OPEN ? P_THINK
             : p->reasoning_mode == REASONING_CLOSED ? P_TEXT
             : P_PRE;
}
