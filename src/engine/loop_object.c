/* loop_object.c — the `loop` variable as Python sees it: Jinja2's
 * LoopContext (attributes, loop.cycle, loop.changed, repr, iteration). The
 * interpreter reads loop.index0 and the like directly (loop_attr, below);
 * what comes here is the generic path: attributes by name, the object
 * printed, passed to a filter or iterated. */
#include <string.h>

#include "interp_internal.h"

static Value loop_cycle(Rt *rt, Obj *self, const Args *args) {
    Loop *l = self->data;
    if (args->npos == 0) rt_throw(rt, CF_ERR_TYPE, "no items for cycling given");
    return args->pos[l->index0 % args->npos];
}
static const ObjType LOOP_CYCLE = {"method", NULL, loop_cycle, NULL, NULL};

static Value loop_changed(Rt *rt, Obj *self, const Args *args) {
    Loop *l = self->data;
    List *now = list_new(rt, (size_t)args->npos);
    for (int i = 0; i < args->npos; i++) list_push(rt, now, args->pos[i]);
    Value nv = v_list_of(now);
    if (l->last_changed && v_equal(v_list_of(l->last_changed), nv)) return v_bool(false);
    l->last_changed = now;
    return v_bool(true);
}
static const ObjType LOOP_CHANGED = {"method", NULL, loop_changed, NULL, NULL};

/* loop.index0 and the like, as the interpreter reads them (getattr_of). */
/* loop.last, .length, .revindex and .revindex0: what they need looked ahead first. */
static NOINLINE Value loop_attr_ahead(Interp *I, Loop *l, uint8_t id) {
    loop_look_ahead(I, l, id != LA_LAST);
    int64_t len = (int64_t)l->items->len, i = l->index0;
    switch (id) {
    case LA_LAST: return v_bool(i == len - 1);
    case LA_LENGTH: return v_int(len);
    case LA_REVINDEX: return v_int(len - i);
    default: return v_int(len - i - 1);   /* LA_REVINDEX0 */
    }
}

Value loop_attr(Interp *I, Loop *l, uint8_t id) {
    int64_t i = l->index0;
    switch (id) {   /* the attributes that need no look-ahead answered here, with no call */
    case LA_INDEX0: return v_int(i);
    case LA_INDEX: return v_int(i + 1);
    case LA_FIRST: return v_bool(i == 0);
    case LA_DEPTH: return v_int(l->depth0 + 1);
    case LA_DEPTH0: return v_int(l->depth0);
    default: return loop_attr_ahead(I, l, id);
    }
}


uint8_t loop_attr_id(const Str *name) {
    static const char *const names[] = {NULL, "index0", "index", "first", "last", "length",
                                        "revindex", "revindex0", "depth", "depth0"};
    for (uint8_t i = 1; i < sizeof names / sizeof names[0]; i++)
        if (str_eqz(name, names[i])) return i;
    return LA_NONE;
}

static bool loop_getattr(Rt *rt, Obj *self, const char *name, size_t n, Value *out) {
    Loop *l = self->data;
#define IS(z) (n == sizeof(z) - 1 && memcmp(name, z, n) == 0)
    if (IS("last") || IS("nextitem")) loop_look_ahead(INTERP(rt), l, false);
    else if (IS("length") || IS("revindex") || IS("revindex0")) loop_look_ahead(INTERP(rt), l, true);
    int64_t len = (int64_t)l->items->len, i = l->index0;
    if (IS("index0")) *out = v_int(i);
    else if (IS("index")) *out = v_int(i + 1);
    else if (IS("first")) *out = v_bool(i == 0);
    else if (IS("last")) *out = v_bool(i == len - 1);
    else if (IS("length")) *out = v_int(len);
    else if (IS("revindex")) *out = v_int(len - i);
    else if (IS("revindex0")) *out = v_int(len - i - 1);
    else if (IS("depth")) *out = v_int(l->depth0 + 1);
    else if (IS("depth0")) *out = v_int(l->depth0);
    else if (IS("previtem")) *out = i > 0 ? l->items->items[i - 1] : v_undef_msg(rt, "there is no previous item");
    else if (IS("nextitem")) *out = i + 1 < len ? l->items->items[i + 1] : v_undef_msg(rt, "there is no next item");
    else if (IS("cycle")) *out = v_object(rt, VT_CALLABLE, &LOOP_CYCLE, l);
    else if (IS("changed")) *out = v_object(rt, VT_CALLABLE, &LOOP_CHANGED, l);
    else return false;
#undef IS
    return true;
}

static void loop_repr(Rt *rt, Obj *self, struct StrBuf *sb) {
    Loop *l = self->data;
    loop_look_ahead(INTERP(rt), l, true);   /* (its repr shows loop.length) */
    sb_printf(sb, "<LoopContext %lld/%zu>", (long long)l->index0 + 1, l->items->len);
}

/* Iterating a LoopContext (dict(loop), loop|list, for x in loop) is
 * Python's iter(loop): it advances the loop itself through the items left,
 * giving (item, loop) pairs, and the loop that runs it then ends. */
static List *loop_iterate(Rt *rt, Obj *self) {
    Loop *l = self->data;
    Value loopv = {0};
    loopv.type = VT_OBJECT;
    loopv.u.obj = self;
    loop_look_ahead(INTERP(rt), l, true);   /* (every item left: their tests run now) */
    size_t len = l->items->len, next = (size_t)l->index0 + 1;
    List *pairs = list_new(rt, next < len ? len - next : 0);
    for (; next < len; next++) {
        rt_step(rt, 1);
        List *pair = list_new(rt, 2);
        list_push(rt, pair, l->items->items[next]);
        list_push(rt, pair, loopv);
        list_push(rt, pairs, v_tuple_of(pair));
        l->index0 = (int64_t)next;
    }
    return pairs;
}

const ObjType LOOP_TYPE = {"LoopContext", loop_getattr, loop_call, loop_repr, loop_iterate};

