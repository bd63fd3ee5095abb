/* block_ref.c — `self` as Jinja2 binds it in a template with blocks: a
 * TemplateReference whose attributes are the template's blocks, each a
 * BlockReference that self.name() calls to render the block again (into a
 * string, interp.c: block_render); its `super` is an Undefined, as there
 * is no parent template. */
#include <string.h>

#include "interp_internal.h"

static Value block_ref_call(Rt *rt, Obj *self, const Args *a) {
    Interp *I = INTERP(rt);
    if (a->nkw) rt_throw(rt, CF_ERR_TYPE, "BlockReference.__call__() got an unexpected keyword argument '%s'", a->kwnames[0]->data);
    if (a->npos) rt_throw(rt, CF_ERR_TYPE, "BlockReference.__call__() takes 1 positional argument but %d were given", a->npos + 1);
    return block_render(I, self->data);
}

static bool block_ref_getattr(Rt *rt, Obj *self, const char *name, size_t n, Value *out) {
    if (n != 5 || memcmp(name, "super", 5) != 0) return false;
    *out = v_undef_msg(rt, "there is no parent block called '%s'.", ((const Node *)self->data)->name->data);
    return true;
}

static void block_ref_repr(Rt *rt, Obj *self, struct StrBuf *sb) {
    sb_puts(sb, "<jinja2.runtime.BlockReference object at 0x0>");   /* (CPython prints an address) */
}

static const ObjType BLOCK_REF_TYPE = {"BlockReference", block_ref_getattr, block_ref_call, block_ref_repr, NULL};

static bool template_ref_getattr(Rt *rt, Obj *self, const char *name, size_t n, Value *out) {
    const struct cf_template *t = INTERP(rt)->t;
    for (int i = 0; i < t->nblocks; i++) {
        const Str *bname = t->blocks[i]->name;
        if (bname->len == n && memcmp(bname->data, name, n) == 0) {
            *out = v_object(rt, VT_OBJECT, &BLOCK_REF_TYPE, (void *)t->blocks[i]);
            return true;
        }
    }
    return false;
}

static void template_ref_repr(Rt *rt, Obj *self, struct StrBuf *sb) {
    sb_puts(sb, "<TemplateReference None>");   /* (the name of a template made from a string) */
}

const ObjType TEMPLATE_REF_TYPE = {"TemplateReference", template_ref_getattr, NULL, template_ref_repr, NULL};
