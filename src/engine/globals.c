/* globals.c — the global functions a template can call: Jinja2's defaults
 * (range, dict, namespace, cycler, joiner, lipsum) and transformers' own
 * (raise_exception, strftime_now). */
#include "interp.h"
#include <string.h>
#include <stdlib.h>
#include <time.h>
#include <stdio.h>

/* operator.index(): an Undefined too is a TypeError (its type has no __index__). */
static int64_t int_arg(Rt *rt, Value v) {
    if (v.type == VT_INT) return v.u.i;
    if (v.type == VT_BOOL) return v.u.b;
    rt_throw(rt, CF_ERR_TYPE, "'%s' object cannot be interpreted as an integer", v_type_name(v));
}

/* Jinja2's sandbox safe_range: a range, refused beyond max_range items. */
static Value g_range(Rt *rt, Obj *self, const Args *a) {
    if (a->nkw) rt_throw(rt, CF_ERR_TYPE, "range() takes no keyword arguments");
    if (a->npos < 1 || a->npos > 3)
        rt_throw(rt, CF_ERR_TYPE, a->npos < 1 ? "range expected at least 1 argument, got %d" : "range expected at most 3 arguments, got %d", a->npos);
    int64_t start = 0, stop, step = 1;
    if (a->npos == 1) stop = int_arg(rt, a->pos[0]);
    else {
        start = int_arg(rt, a->pos[0]);
        stop = int_arg(rt, a->pos[1]);
        if (a->npos == 3) step = int_arg(rt, a->pos[2]);
    }
    if (step == 0) rt_throw(rt, CF_ERR_VALUE, "range() arg 3 must not be zero");
    uint64_t n = range_length(start, stop, step);
    if (n > rt->lim.max_range)
        rt_throw(rt, CF_ERR_OVERFLOW, "Range too big. The sandbox blocks ranges larger than MAX_RANGE (%u).",
                 rt->lim.max_range);   /* (cf_limits.max_range raises it) */
    rt_step(rt, n / 8);
    return v_range(rt, start, stop, step);
}

static void dict_update_from(Rt *rt, Dict *d, Value src) {
    if (src.type == VT_DICT || src.type == VT_NAMESPACE) {
        rt_step(rt, 4 * dict_len(src.u.dict));  /* a hash insert per item: dict(d, k=v) in a loop copies d each time */
        if (dict_len(d) == 0) {
            dict_fill_copy(d, src.u.dict);
            return;
        }
        for (size_t i = 0; i < dict_len(src.u.dict); i++)
            dict_set(rt, d, dict_key_at(src.u.dict, i), dict_val_at(src.u.dict, i));
        return;
    }
    List *items = v_iterate(rt, src);
    rt_step(rt, 4 * items->len);
    for (size_t i = 0; i < items->len; i++) {
        Value pair = items->items[i];
        List *kv = v_iterate(rt, pair);
        if (kv->len != 2)
            rt_throw(rt, CF_ERR_VALUE, "dictionary update sequence element #%zu has length %zu; 2 is required", i, kv->len);
        if (!v_hashable(kv->items[0])) rt_throw(rt, CF_ERR_TYPE, "unhashable type: '%s'", v_unhashable_type(kv->items[0]));
        dict_set(rt, d, kv->items[0], kv->items[1]);
    }
}

static Dict *dict_from_args(Rt *rt, const Args *a, const char *fname) {
    if (a->npos > 1) rt_throw(rt, CF_ERR_TYPE, "%s expected at most 1 argument, got %d", fname, a->npos);
    /* sized to what it will hold: dict(d, k=v) in a loop copies d each time,
     * and a dict grown by doubling leaves its outgrown tables behind */
    size_t from = a->npos == 1 && (a->pos[0].type == VT_DICT || a->pos[0].type == VT_NAMESPACE)
                      ? dict_len(a->pos[0].u.dict) : 0;
    Dict *d = dict_new(rt, from + (size_t)a->nkw + 4);
    if (a->npos == 1) dict_update_from(rt, d, a->pos[0]);
    for (int i = 0; i < a->nkw; i++) dict_set(rt, d, v_str_of(a->kwnames[i]), a->kwvals[i]);
    return d;
}

/* Are none of the call's keyword names keys of d? */
static bool keywords_are_new(const Dict *d, const Args *a) {
    for (int i = 0; i < a->nkw; i++) {
        if (dict_get(d, v_str_of(a->kwnames[i]), NULL)) return false;
    }
    return true;
}

/* dict(d, k=v): dicts are immutable to a template (the sandbox refuses
 * update and its kind), so where d is a dict() this render made with room
 * after its items and no k is in d, the new dict writes the k there and
 * takes that room over (dict_claim). Such a dict() that finds no room
 * copies d with room for half as much again, so `ns.d = dict(ns.d, **{k:
 * v})` in a loop is linear in time and memory where copying each time (as
 * Python does) is quadratic. A k that d has is copied as Python does. */
static Value g_dict(Rt *rt, Obj *self, const Args *a) {
    Dict *src = a->npos == 1 && a->pos[0].type == VT_DICT ? a->pos[0].u.dict : NULL;
    bool growing = src && src->tail_owner == rt->arena;
    if (growing) {
        rt_step(rt, 4 * (size_t)a->nkw);   /* (a lookup per keyword) */
        growing = keywords_are_new(src, a);
    }
    Dict *d;
    if (growing) {
        d = dict_claim(rt, src, (size_t)a->nkw);
        if (!d) {
            size_t n = dict_len(src) + (size_t)a->nkw, room = n > 4 ? n / 2 : 4;
            d = dict_new(rt, n + room <= rt->lim.max_items ? n + room : n);
            dict_update_from(rt, d, a->pos[0]);
        }
        for (int i = 0; i < a->nkw; i++) dict_set(rt, d, v_str_of(a->kwnames[i]), a->kwvals[i]);
    } else {
        d = dict_from_args(rt, a, "dict");
    }
    d->tail_owner = rt->arena;
    return v_dict_of(d);
}

static Value g_namespace(Rt *rt, Obj *self, const Args *a) {
    Value v = {0};
    v.type = VT_NAMESPACE;
    v.u.dict = dict_from_args(rt, a, "dict");
    return v;
}

/* cycler: .next(), .current, .reset() */
typedef struct Cycler { List *items; size_t pos; } Cycler;

static Value cycler_next(Rt *rt, Obj *self, const Args *a) {
    Cycler *c = self->data;
    Value v = c->items->items[c->pos];
    c->pos = (c->pos + 1) % c->items->len;
    return v;
}
static Value cycler_reset(Rt *rt, Obj *self, const Args *a) {
    ((Cycler *)self->data)->pos = 0;
    return v_none();
}
static const ObjType CYCLER_NEXT = {"method", NULL, cycler_next, NULL, NULL};
static const ObjType CYCLER_RESET = {"method", NULL, cycler_reset, NULL, NULL};

static bool cycler_getattr(Rt *rt, Obj *self, const char *name, size_t n, Value *out) {
    Cycler *c = self->data;
    if (n == 7 && memcmp(name, "current", 7) == 0) { *out = c->items->items[c->pos]; return true; }
    if (n == 4 && memcmp(name, "next", 4) == 0) { *out = v_object(rt, VT_CALLABLE, &CYCLER_NEXT, c); return true; }
    if (n == 5 && memcmp(name, "reset", 5) == 0) { *out = v_object(rt, VT_CALLABLE, &CYCLER_RESET, c); return true; }
    return false;
}
static const ObjType CYCLER_TYPE = {"Cycler", cycler_getattr, NULL, NULL, NULL};

static Value g_cycler(Rt *rt, Obj *self, const Args *a) {
    if (a->npos < 1) rt_throw(rt, CF_ERR_RUNTIME, "at least one item has to be provided");
    Cycler *c = rt_alloc(rt, sizeof(Cycler));
    c->items = list_new(rt, (size_t)a->npos);
    for (int i = 0; i < a->npos; i++) list_push(rt, c->items, a->pos[i]);
    c->pos = 0;
    return v_object(rt, VT_OBJECT, &CYCLER_TYPE, c);
}

typedef struct Joiner { Value sep; bool used; } Joiner;
static Value joiner_call(Rt *rt, Obj *self, const Args *a) {
    Joiner *j = self->data;
    if (!j->used) { j->used = true; return v_str(rt, "", 0); }
    return j->sep;
}
static const ObjType JOINER_TYPE = {"Joiner", NULL, joiner_call, NULL, NULL};

static Value g_joiner(Rt *rt, Obj *self, const Args *a) {
    static const char *const names[] = {"sep"};
    Value sep;
    args_bind(rt, a, "joiner", 1, names, &sep);
    Joiner *j = rt_alloc(rt, sizeof(Joiner));
    j->sep = sep.type == VT_MISSING ? v_str(rt, ", ", 2) : sep;
    j->used = false;
    return v_object(rt, VT_CALLABLE, &JOINER_TYPE, j);
}

/* lipsum is random in Jinja2; we emit a fixed text (it cannot be compared). */
static Value g_lipsum(Rt *rt, Obj *self, const Args *a) {
    static const char *const names[] = {"n", "html", "min", "max"};
    Value v[4];
    args_bind(rt, a, "generate_lorem_ipsum", 4, names, v);
    int64_t n = v[0].type == VT_MISSING ? 5 : int_arg(rt, v[0]);
    bool html = v[1].type == VT_MISSING ? true : v_truthy(v[1]);
    StrBuf sb;
    sb_init(rt, &sb, 256);
    for (int64_t i = 0; i < n; i++) {
        if (i) sb_puts(&sb, html ? "\n" : "\n\n");
        if (html) sb_puts(&sb, "<p>");
        sb_puts(&sb, "Lorem ipsum dolor sit amet, consectetur adipiscing elit.");
        if (html) sb_puts(&sb, "</p>");
        rt_step(rt, 1);
    }
    Value r = sb_to_value(&sb);
    if (html) r.flags |= VF_MARKUP;
    return r;
}

static Value g_raise_exception(Rt *rt, Obj *self, const Args *a) {
    static const char *const names[] = {"message"};
    Value msg;
    args_bind(rt, a, "raise_exception", 1, names, &msg);
    if (msg.type == VT_MISSING) rt_throw(rt, CF_ERR_TYPE, "_raise_exception() missing 1 required positional argument: 'message'");
    StrBuf sb;
    sb_init(rt, &sb, 64);
    v_write_str(rt, &sb, msg);
    Str *s = sb_to_str(&sb);
    rt_throw(rt, CF_ERR_TEMPLATE, "%s", s->data);
}

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
 * days_from_civil). */
static int64_t days_from_civil(int64_t y, int m, int d) {
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    return era * 146097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719468;
}

/* Fill tm_wday/tm_yday of a valid pinned date, as a naive Python datetime
 * would: no time zone, no DST shift, and no mktime/localtime, whose tzset
 * touches process-wide state. False when a field is out of range. */
static bool civil_weekday(struct tm *tm) {
    static const int mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int64_t y = (int64_t)tm->tm_year + 1900;
    int m = tm->tm_mon + 1;
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (m < 1 || m > 12 || tm->tm_mday < 1 || tm->tm_mday > mdays[m - 1] + (m == 2 && leap) ||
        tm->tm_hour < 0 || tm->tm_hour > 23 || tm->tm_min < 0 || tm->tm_min > 59 || tm->tm_sec < 0 || tm->tm_sec > 59)
        return false;
    int64_t days = days_from_civil(y, m, tm->tm_mday);
    tm->tm_wday = (int)(((days + 4) % 7 + 7) % 7);    /* 1970-01-01 was a Thursday */
    tm->tm_yday = (int)(days - days_from_civil(y, 1, 1));
    tm->tm_isdst = 0;
    return true;
}

static Value g_strftime_now(Rt *rt, Obj *self, const Args *a) {
    /* the reference defines it as _strftime_now(fmt): its TypeErrors name that */
    static const char *const names[] = {"fmt"};
    Value fmt;
    if (a->npos > 1)
        rt_throw(rt, CF_ERR_TYPE, "_strftime_now() takes 1 positional argument but %d were given", a->npos);
    args_bind(rt, a, "_strftime_now", 1, names, &fmt);
    if (fmt.type == VT_MISSING) rt_throw(rt, CF_ERR_TYPE, "_strftime_now() missing 1 required positional argument: 'fmt'");
    if (fmt.type != VT_STR) rt_throw(rt, CF_ERR_TYPE, "strftime() argument 1 must be str, not %s", v_type_name(fmt));
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    const char *now = interp_now(rt);
    int Y, M, D, h = 0, m = 0, s = 0;
    if (now && sscanf(now, "%d-%d-%dT%d:%d:%d", &Y, &M, &D, &h, &m, &s) >= 3) {
        tm.tm_year = Y - 1900;
        tm.tm_mon = M - 1;
        tm.tm_mday = D;
        tm.tm_hour = h;
        tm.tm_min = m;
        tm.tm_sec = s;
        tm.tm_isdst = -1;
        if (!civil_weekday(&tm)) {
            time_t t = mktime(&tm);   /* out-of-range fields: let mktime normalise them */
            localtime_r(&t, &tm);
        }
    } else {
        time_t t = time(NULL);
        localtime_r(&t, &tm);
    }
    size_t cap = fmt.u.s->len * 8 + 64;
    if (cap > 1 << 20) rt_throw(rt, CF_ERR_LIMIT, "strftime format too long");
    char *buf = rt_alloc(rt, cap);
    size_t k = fmt.u.s->len ? strftime(buf, cap, fmt.u.s->data, &tm) : 0;
    return v_str(rt, buf, k);
}

#define GLOBAL(var, pyname, fn) \
    static const ObjType var##_T = {"function", NULL, fn, NULL, NULL}; \
    static Obj var##_O = {&var##_T, NULL};
GLOBAL(G_RANGE, "range", g_range)
GLOBAL(G_DICT, "dict", g_dict)
GLOBAL(G_NAMESPACE, "namespace", g_namespace)
GLOBAL(G_CYCLER, "cycler", g_cycler)
GLOBAL(G_JOINER, "joiner", g_joiner)
GLOBAL(G_LIPSUM, "lipsum", g_lipsum)
GLOBAL(G_RAISE, "raise_exception", g_raise_exception)
GLOBAL(G_STRFTIME, "strftime_now", g_strftime_now)

static const struct { const char *name; Obj *obj; } GLOBALS[] = {
    {"range", &G_RANGE_O}, {"dict", &G_DICT_O}, {"namespace", &G_NAMESPACE_O},
    {"cycler", &G_CYCLER_O}, {"joiner", &G_JOINER_O}, {"lipsum", &G_LIPSUM_O},
    {"raise_exception", &G_RAISE_O}, {"strftime_now", &G_STRFTIME_O},
};

bool global_lookup(const char *name, size_t n, Value *out) {
    for (size_t i = 0; i < sizeof GLOBALS / sizeof GLOBALS[0]; i++) {
        if (strlen(GLOBALS[i].name) == n && memcmp(GLOBALS[i].name, name, n) == 0) {
            Value v = {0};
            v.type = VT_CALLABLE;
            v.u.obj = GLOBALS[i].obj;
            *out = v;
            return true;
        }
    }
    return false;
}
