/* jsoncall.c — tool calls written as JSON objects, alone or in a list:
 * {"name": N, "arguments": {...}} and its spellings ("parameters", a
 * model's "id", "type": "function"), or a bare arguments object. Built on
 * reply.c's incremental scanner: the arguments stream verbatim. */
#include <string.h>
#include "families.h"

enum { K_NONE, K_NAME, K_ARGS, K_ID, K_TYPE };
enum { FAM_TYPE_SEEN = 0x100 };   /* (fam_flags) the call's "type" came */
enum { LS_FIRST, LS_ITEM, LS_OBJ, LS_NEXT };

void jcall_begin(Parser *p, const char *markup, bool keep_raw, unsigned flags, int done, int resume) {
    call_begin(p, markup, keep_raw, false);
    bool args_only = flags & FAM_ARGS_ONLY;
    js_init(p, &p->js, args_only ? 0 : 1, args_only ? 0 : 1);
    p->cur_key = K_NONE;
    p->val_mode = V_SKIP;
    p->nargs = 0;
    p->fam_flags = flags;
    p->fam_after = done;
    p->fam_resume = resume;
}

void jcall_args(Parser *p, int done, int resume) {
    js_init(p, &p->js, 0, 0);
    p->cur_key = K_NONE;
    p->val_mode = V_SKIP;
    p->nargs = 0;
    p->fam_flags = FAM_ARGS_ONLY;
    p->fam_after = done;
    p->fam_resume = resume;
}

/* The stream commits once the name is known and the arguments begin (a
 * bare JSON object is a call only with both), unless the model's id may
 * still come. */
static void maybe_commit(Parser *p) {
    if (p->call.has_name && p->nargs && !(p->fam_flags & FAM_WANT_ID)) call_try_commit(p);
}

static bool on_key(Parser *p) {
    const JScan *j = &p->js;
    Call *c = &p->call;
    if (json_key_is(j, "name") && !c->has_name && !c->name.len) p->cur_key = K_NAME;
    else if ((json_key_is(j, "arguments") || json_key_is(j, "parameters")) && !p->nargs) p->cur_key = K_ARGS;
    else if (json_key_is(j, "id") && (p->fam_flags & FAM_WANT_ID) && !c->has_id && !c->id.len) p->cur_key = K_ID;
    else if (json_key_is(j, "type") && !(p->fam_flags & FAM_TYPE_SEEN)) p->cur_key = K_TYPE;
    else return false;
    if (p->cur_key == K_TYPE) p->fam_flags |= FAM_TYPE_SEEN;
    return true;
}

static bool on_vstart(Parser *p) {
    JScan *j = &p->js;
    if (j->vdepth == 0) {
        if (j->vtype != '{') return false;
        if (p->fam_flags & FAM_ARGS_ONLY) {
            p->val_mode = V_ARGS_RAW;
            p->nargs = 1;
            maybe_commit(p);
        }
        return true;
    }
    switch (p->cur_key) {
    case K_NAME: return json_name_start(p);
    case K_ARGS:
        if (j->vtype != '{' && j->vtype != '"') return false;
        p->nargs = 1;
        maybe_commit(p);
        return json_args_start(p, j->vtype);
    case K_ID:
        if (j->vtype == '"') j->dec = &p->call.id;
        else if (j->vtype < '0' || j->vtype > '9') return false;   /* (a number: its text) */
        p->val_mode = V_ID;
        return true;
    default:   /* K_TYPE: "function", a label of the call (checked at its end) */
        if (j->vtype != '"') return false;
        p->text.len = 0;
        j->dec = &p->text;
        p->val_mode = V_SKIP;
        return true;
    }
}

static bool on_vend(Parser *p) {
    Call *c = &p->call;
    if (p->js.vdepth == 0) {   /* the whole object */
        if (!c->has_name) return false;
        if (!p->nargs) {
            if (p->fam_flags & FAM_NEED_ARGS) return false;
            call_args(p, "{}", 2);
        }
        call_end(p);
        p->state = p->fam_after;
        p->fam_sub = LS_NEXT;
        return true;
    }
    if (p->val_mode == V_NAME) {
        if (!c->name.len) return false;
        c->has_name = true;
        maybe_commit(p);
    } else if (p->cur_key == K_TYPE) {
        if (p->text.len != 8 || memcmp(p->text.p, "function", 8) != 0) return false;
    } else if (p->val_mode == V_ID) {
        if (!c->id.len) return false;
        c->has_id = true;
        if (c->has_name && p->nargs) call_try_commit(p);
    }
    p->val_mode = V_SKIP;
    p->cur_key = K_NONE;
    return true;
}

size_t jcall_step(Parser *p, const char *s, size_t n) {
    JsonHooks h = {on_key, on_vstart, on_vend, p->fam_resume};
    return json_call_step(p, s, n, &h);
}

int jcall_fast(const Parser *p) { return json_args_fast(p); }

void jlist_begin(Parser *p, unsigned flags, int done, int resume) {
    p->fam_sub = LS_FIRST;
    p->fam_flags = flags;
    p->fam_done = done;
    p->fam_resume = resume;
}

void jlist_step(Parser *p, const char *s, size_t n, size_t *pi) {
    size_t i = *pi;
    int list_state = p->state;
    while (i < n && p->state == list_state) {
        unsigned char c = (unsigned char)s[i];
        if (p->fam_sub == LS_OBJ) {
            i += jcall_step(p, s + i, n - i);
            continue;
        }
        if (is_json_space(c)) {
            call_raw(p, s + i, 1);
            i++;
            continue;
        }
        if ((p->fam_sub == LS_FIRST || p->fam_sub == LS_ITEM) && c == '{') {
            jcall_begin(p, NULL, true, p->fam_flags, list_state, p->fam_resume);
            p->fam_sub = LS_OBJ;
            continue;
        }
        if ((p->fam_sub == LS_FIRST || p->fam_sub == LS_NEXT) && c == ']') {
            i++;
            p->call.raw.len = 0;
            p->state = p->fam_done;
            break;
        }
        if (p->fam_sub == LS_NEXT && c == ',') {
            call_raw(p, s + i, 1);
            i++;
            p->fam_sub = LS_ITEM;
            continue;
        }
        call_break(p, p->fam_resume, NULL, 0);   /* s[i] goes on in the resume state */
        break;
    }
    *pi = i;
}
