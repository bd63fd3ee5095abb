/* gemma4.c — Gemma 4 replies (and FunctionGemma's calls):
 *   [<|channel>thought\nREASONING<channel|>] CONTENT
 *   <|tool_call>call:NAME{key:<|"|>text<|"|>,n:3,list:[...],obj:{...}}<tool_call|>
 *   <start_function_call>call:NAME{key:<escape>text<escape>}<end_function_call>
 * Keys are bare, strings sit between string tokens, other values are
 * JSON-like; the arguments are rebuilt as JSON (json.dumps' style) when the
 * call's braces close. <|tool_response> and <turn|> end the turn and a
 * stray <channel|> closes nothing: markup, not content. A call inside the
 * reasoning ends it. */
#include <string.h>
#include "families.h"

enum { G_TEXT, G_LABEL, G_THINK, G_HEAD, G_NAME, G_ARGS, G_CLOSE, G_LABEL_END };

static const char *const TEXT_TAGS[] = {"<|tool_call>", "<start_function_call>", "<|channel>", "<channel|>",
                                        "<|tool_response>", "<turn|>"};
static const TagSet TEXT_SET = {TEXT_TAGS, 6};
enum { T_CALL, T_FCALL, T_CHANNEL };
static const char *const THINK_TAGS[] = {"<channel|>", "<|tool_call>", "<start_function_call>", "<|channel>"};
static const TagSet THINK_SET = {THINK_TAGS, 4};
enum { TT_CLOSE, TT_CALL, TT_FCALL, TT_CHANNEL };
static const char *const LABEL_MARKS[] = {"thought"};
static const TagSet LABEL_SET = {LABEL_MARKS, 1};
static const char *const CLOSE_MARKS[] = {"<tool_call|>", "<end_function_call>"};
static const TagSet CLOSE_SET = {CLOSE_MARKS, 2};
static const char CALL_PREFIX[] = "call:";

static void call_open(Parser *p, const char *tag) {
    call_begin(p, tag, false, false);
    p->fam_mode = strcmp(tag, TEXT_TAGS[T_FCALL]) == 0 ? LIT_FUNCTIONGEMMA : LIT_GEMMA;
    p->nargs = 0;   /* bytes of "call:" matched */
    p->text.len = 0;
    memset(fam_lit(p), 0, sizeof *p->fam_lit);
    p->state = G_HEAD;
}

static void args_done(Parser *p) {
    p->esc.len = 0;
    if (!literal_args_to_json(p, p->fam_mode, p->text.p, p->text.len, &p->esc)) {
        call_break(p, G_TEXT, NULL, 0);
        return;
    }
    p->call.has_name = true;
    call_try_commit(p);
    call_args(p, p->esc.p, p->esc.len);
    call_end(p);
    p->state = G_CLOSE;
}

static void gemma4_step(Parser *p, const char *s, size_t n) {
    size_t i = 0;
    uint32_t max_depth = p->rt.lim.max_json_depth < 512 ? p->rt.lim.max_json_depth : 512;
    while (i < n) {
        int r;
        unsigned char c = (unsigned char)s[i];
        switch (p->state) {
        case G_TEXT:
            r = scan_text(p, s, n, &i, &TEXT_SET, put_content);
            if (r == T_CALL || r == T_FCALL) call_open(p, TEXT_TAGS[r]);
            else if (r == T_CHANNEL) p->state = G_LABEL;
            break;
        case G_LABEL:   /* "thought" then a newline or a tag names the channel; anything else is reasoning */
            r = tag_step(p, &LABEL_SET, c);
            if (r == TAG_MORE || r == 0) {
                i++;
                if (r == 0) p->state = G_LABEL_END;
            } else {
                p->state = G_THINK;
                flush_tag_prefix(p, put_reasoning);
            }
            break;
        case G_LABEL_END:
            p->state = G_THINK;
            if (c == '\n') i++;
            else if (c != '<') put_reasoning(p, LABEL_MARKS[0], strlen(LABEL_MARKS[0]));   /* "thoughts...": text */
            break;
        case G_THINK:
            r = scan_text(p, s, n, &i, &THINK_SET, put_reasoning);
            if (r == TT_CLOSE) p->state = G_TEXT;
            else if (r == TT_CHANNEL) p->state = G_LABEL;   /* (a repeated opener: markup) */
            else if (r >= 0) call_open(p, THINK_TAGS[r]);
            break;
        case G_HEAD:   /* "call:" */
            if (c != (unsigned char)CALL_PREFIX[p->nargs]) {
                call_break(p, G_TEXT, NULL, 0);
                break;
            }
            call_raw(p, s + i, 1);
            i++;
            if (CALL_PREFIX[++p->nargs] == 0) p->state = G_NAME;
            break;
        case G_NAME: {
            Call *call = &p->call;
            size_t k = i;
            while (k < n && k - i < MAX_CALL_NAME - call->name.len && is_name_byte((unsigned char)s[k]) &&
                   s[k] != ':')
                k++;
            sb_put(&call->name, s + i, k - i);
            call_raw(p, s + i, k - i);
            i = k;
            if (i == n) break;
            if (s[i] != '{' || !call->name.len) {
                call_break(p, G_TEXT, NULL, 0);
                break;
            }
            lit_track(p->fam_lit, p->fam_mode, '{', max_depth);
            call_raw(p, s + i, 1);
            i++;
            p->state = G_ARGS;
            break;
        }
        case G_ARGS: {   /* up to the matching '}' */
            size_t k = i + lit_scan(p->fam_lit, p->fam_mode, s + i, n - i, max_depth, &r);
            sb_put(&p->text, s + i, k - i);
            call_raw(p, s + i, k - i);
            i = k;
            if (r < 0) {
                call_break(p, G_TEXT, NULL, 0);
            } else if (r > 0) {
                call_raw(p, s + i, 1);
                i++;
                args_done(p);
            }
            break;
        }
        default:   /* G_CLOSE: the call is complete; its closing token may follow */
            r = expect_marks(p, s, n, &i, &CLOSE_SET);
            if (r >= 0) p->state = G_TEXT;
            else if (r == -2) marks_accept(p, G_TEXT);
        }
    }
}

static void gemma4_finish(Parser *p) {
    switch (p->state) {
    case G_TEXT: flush_tag_prefix(p, put_content); break;
    case G_LABEL:
    case G_THINK: flush_tag_prefix(p, put_reasoning); break;
    case G_LABEL_END: break;   /* "<|channel>thought" and nothing more */
    case G_CLOSE: call_accept_eof(p); break;
    default: call_break_eof(p, G_TEXT);
    }
}

static int gemma4_fast(const Parser *p, const TagSet **tags) {
    switch (p->state) {
    case G_TEXT:
        *tags = &TEXT_SET;
        return FAST_CONTENT;
    case G_THINK:
        *tags = &THINK_SET;
        return FAST_REASONING;
    case G_ARGS:   /* inside a string, unless a string token goes on (its '<' alone may be text) */
        return p->fam_lit->in_str && p->fam_lit->tok <= 1 ? FAST_GEMMA_STR : FAST_NONE;
    default: return FAST_NONE;
    }
}

void gemma4_init(Parser *p) {
    p->step = gemma4_step;
    p->finish = gemma4_finish;
    p->fast = gemma4_fast;
    p->state = p->reasoning_mode == REASONING_OPEN ? G_THINK : G_TEXT;
}
