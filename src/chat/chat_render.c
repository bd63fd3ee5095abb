/* chat_render.c — chat mode: transformers' apply_chat_template around an
 * engine render (hf_render.py's render() step by step). Before the run the
 * chat variables are read from the context (continue_final_message popped,
 * its final message tagged so the output can be cut there; the opt-in
 * polyfills applied); after it the output is cut at the tag. */
#include "chat_render.h"
#include "caps.h"
#include "engine/render.h"
#include "engine/builtins.h"
#include "engine/unicode.h"
#include <string.h>

static const char TAG[] = "CONTINUE_FINAL_MESSAGE_TAG ";
enum { TAGLEN = sizeof TAG - 1 };

typedef struct ChatState {
    const cf_render_options *opt;
    bool cfm;              /* continue_final_message */
    Value final_text;      /* the text continued */
} ChatState;

static void chat_prepare(Rt *rt, RenderInput *in, void *state) {
    ChatState *st = state;
    Value messages, v;
    const Dict *vars = in->vars;
    Str *const *key = in->t->chat_key;
    if (!vars || !dict_get_key(vars, key[CHAT_MESSAGES], &messages)) rt_throw(rt, CF_ERR_KEY, "'messages'");
    in->chat_mode = true;
    in->chat[CHAT_TOOLS] = dict_get_key(vars, key[CHAT_TOOLS], &v) ? v : v_none();
    in->chat[CHAT_DOCUMENTS] = dict_get_key(vars, key[CHAT_DOCUMENTS], &v) ? v : v_none();
    in->chat[CHAT_AGP] = dict_get_key(vars, key[CHAT_AGP], &v) ? v : v_bool(false);
    in->chat[CHAT_CONTINUE] = v_missing();   /* popped: not a template variable */
    Value cont = v_bool(false);
    if (dict_get_key(vars, key[CHAT_CONTINUE], &v)) cont = v;
    st->final_text = v_missing();
    st->cfm = v_truthy(cont);
    if (st->cfm) {
        Value field = cont.type == VT_STR ? cont : v_strz(rt, "content");
        Value last = v_getitem(rt, messages, v_int(-1));
        if (last.type == VT_UNDEFINED) v_undefined_fail(rt, last);
        if (last.type != VT_DICT) rt_throw(rt, CF_ERR_ATTRIBUTE, "'%s' object has no attribute 'get'", v_type_name(last));
        Value final;
        if (!dict_get(last.u.dict, field, &final) || final.type == VT_NONE)
            rt_throw(rt, CF_ERR_VALUE, "continue_final_message is set but the final message has no \"%s\" to continue!", field.u.s->data);
        Str *src = in->t->source;
        bool in_source = field.u.s->len == 7 && memcmp(field.u.s->data, "content", 7) == 0
                             ? in->t->source_has_content
                             : cf_memmem(src->data, src->len, field.u.s->data, field.u.s->len) != NULL;
        if (!in_source)
            rt_throw(rt, CF_ERR_VALUE, "continue_final_message is set to \"%s\" but this is not an accepted field in the chat_template", field.u.s->data);
        Dict *new_last = dict_new(rt, dict_len(last.u.dict));
        for (size_t i = 0; i < dict_len(last.u.dict); i++) dict_set(rt, new_last, dict_key_at(last.u.dict, i), dict_val_at(last.u.dict, i));
        if (final.type == VT_LIST || final.type == VT_TUPLE) {
            List *blocks = list_new(rt, final.u.list->len);
            for (size_t i = 0; i < final.u.list->len; i++) list_push(rt, blocks, final.u.list->items[i]);
            bool found = false;
            for (size_t i = blocks->len; i-- > 0;) {
                Value b = blocks->items[i];
                Value text;
                if (b.type == VT_DICT && dict_get_str(b.u.dict, "text", 4, &text)) {
                    st->final_text = text;
                    Dict *nb = dict_new(rt, dict_len(b.u.dict));
                    for (size_t j = 0; j < dict_len(b.u.dict); j++) dict_set(rt, nb, dict_key_at(b.u.dict, j), dict_val_at(b.u.dict, j));
                    if (text.type != VT_STR) rt_throw(rt, CF_ERR_TYPE, "unsupported operand type(s) for +: '%s' and 'str'", v_type_name(text));
                    StrBuf sb;
                    sb_init(rt, &sb, text.u.s->len + TAGLEN);
                    sb_put(&sb, text.u.s->data, text.u.s->len);
                    sb_put(&sb, TAG, TAGLEN);
                    dict_set(rt, nb, v_strz(rt, "text"), sb_to_value(&sb));
                    blocks->items[i] = v_dict_of(nb);
                    found = true;
                    break;
                }
            }
            if (!found)
                rt_throw(rt, CF_ERR_VALUE, "continue_final_message is set but we could not find any text to continue in the final message!");
            Value nl = final;
            nl.u.list = blocks;
            dict_set(rt, new_last, field, nl);
        } else {
            if (final.type != VT_STR) rt_throw(rt, CF_ERR_TYPE, "unsupported operand type(s) for +: '%s' and 'str'", v_type_name(final));
            st->final_text = final;
            StrBuf sb;
            sb_init(rt, &sb, final.u.s->len + TAGLEN);
            sb_put(&sb, final.u.s->data, final.u.s->len);
            sb_put(&sb, TAG, TAGLEN);
            Value tagged = sb_to_value(&sb);
            if (str_known_ascii(final.u.s)) tagged.u.s->nchars = (int64_t)tagged.u.s->len;   /* (TAG is ASCII) */
            dict_set(rt, new_last, field, tagged);
        }
        List *msgs = list_new(rt, messages.u.list->len);
        for (size_t i = 0; i + 1 < messages.u.list->len; i++) list_push(rt, msgs, messages.u.list->items[i]);
        list_push(rt, msgs, v_dict_of(new_last));
        messages = v_list_of(msgs);
    }
    if (st->opt && st->opt->polyfill)
        messages = polyfill_messages(rt, in->t, st->opt->defaults, messages);
    in->chat[CHAT_MESSAGES] = messages;
}

static size_t chat_trim(Rt *rt, const StrBuf *out, void *state) {
    ChatState *st = state;
    size_t outlen = out->len;
    if (st->cfm) {
        Args noargs = {0};
        Value stripped;
        if (st->final_text.type != VT_STR || !method_call(rt, st->final_text, "strip", 5, &noargs, &stripped))
            rt_throw(rt, CF_ERR_ATTRIBUTE, "'%s' object has no attribute 'strip'", v_type_name(st->final_text));
        const char *tag = TAG;
        size_t tn = TAGLEN - 1;   /* the tag without its trailing space */
        /* (both are near the end: searched from there) */
        const char *tag_at = cf_memrmem(out->p, out->len, tag, tn);
        if (!cf_memrmem(out->p, out->len, stripped.u.s->data, stripped.u.s->len) || !tag_at)
            rt_throw(rt, CF_ERR_VALUE, "continue_final_message is set but the final message does not appear in the chat after applying the chat template!");
        size_t loc = (size_t)(tag_at - out->p);   /* rindex */
        if (loc + TAGLEN <= out->len && memcmp(out->p + loc, TAG, TAGLEN) == 0) {
            outlen = loc;
        } else {
            Value head = v_str(rt, out->p, loc), r;
            if (!method_call(rt, head, "rstrip", 6, &noargs, &r)) r = head;
            outlen = r.u.s->len;
        }
    }
    return outlen;
}

bool chat_render(const cf_template *t, const cf_context *ctx, const cf_render_options *opt,
                 cf_result *out, cf_error *err) {
    ChatState st = {opt, false, v_missing()};
    RenderHooks hooks = {chat_prepare, chat_trim, &st};
    return render_template(t, ctx, opt, &hooks, out, err);
}
