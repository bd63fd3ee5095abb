/* gram.c — grammar expressions, named rules, and their two spellings. */
#include <stdarg.h>
#include <stdio.h>
#include "engine/json.h"
#include "gram.h"

static void index_rule(Gram *g, uint32_t id);

void gram_init(Gram *g, Rt *rt) {
    memset(g, 0, sizeof *g);
    g->rt = rt;
    g->cap = 512;   /* a 60-tool request makes about a thousand rules */
    g->rules = rt_alloc(rt, g->cap * sizeof *g->rules);
    g->nslots = 1024;
    g->slots = rt_alloc0(rt, g->nslots * sizeof *g->slots);
    sb_init(rt, &g->warnings, 256);
}

void gram_expect_rules(Gram *g, uint32_t n) {
    if (n > GRAM_MAX_RULES) n = GRAM_MAX_RULES;
    if (n > g->cap) {
        g->rules = rt_realloc(g->rt, g->rules, g->nrules * sizeof *g->rules, n * sizeof *g->rules);
        g->cap = n;
    }
    uint32_t slots = g->nslots;
    while (slots < 2 * n) slots *= 2;
    if (slots != g->nslots) {
        g->nslots = slots;
        g->slots = rt_alloc0(g->rt, slots * sizeof *g->slots);
        for (uint32_t i = 0; i < g->nrules; i++)
            if (g->rules[i].indexed) index_rule(g, i);
    }
}

void gram_warn(Gram *g, const char *fmt, ...) {
    /* a warning said for each of 60 tools: one without arguments is known by its format */
    bool constant = !strchr(fmt, '%');
    if (constant) {
        for (uint32_t i = 0; i < g->nwarned; i++)
            if (g->warned[i] == fmt) return;
        if (g->nwarned < GRAM_WARNED_SEEN) g->warned[g->nwarned++] = fmt;
    }
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    size_t len = (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1;
    StrBuf one;
    sb_init(g->rt, &one, len + 8);
    json_write_string(&one, buf, len, false);
    /* the same warning for 60 tools is said once */
    if (g->warnings.len && cf_memmem(g->warnings.p, g->warnings.len, one.p, one.len)) return;
    if (g->nwarnings >= 64) return;
    if (g->nwarnings++) sb_putc(&g->warnings, ',');
    sb_put(&g->warnings, one.p, one.len);
}

/* Rule names and memo keys are made by the thousand: %s, %.Ns, %zu, %u
 * and %p by hand (snprintf's general machinery was a fifth of the time). */
size_t gram_fmt(char *buf, size_t cap, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    size_t n = 0;
    if (!cap) return 0;
    for (const char *f = fmt; *f; f++) {
        if (*f != '%') {
            if (n + 1 < cap) buf[n++] = *f;
            continue;
        }
        f++;
        size_t prec = SIZE_MAX;
        if (*f == '.') {
            prec = 0;
            for (f++; *f >= '0' && *f <= '9'; f++) prec = prec * 10 + (size_t)(*f - '0');
        }
        char digits[24], *d = digits + sizeof digits;
        const char *text = d;
        size_t len = 0;
        if (*f == 's') {
            text = va_arg(ap, const char *);
            while (len < prec && text[len]) len++;
        } else {
            uint64_t v;
            unsigned base = 10;
            if (*f == 'z' && f[1] == 'u') {
                v = va_arg(ap, size_t);
                f++;
            } else if (*f == 'p') {
                v = (uint64_t)(uintptr_t)va_arg(ap, void *);
                base = 16;
            } else {
                v = va_arg(ap, unsigned);
            }
            do *--d = "0123456789abcdef"[v % base]; while ((v /= base) != 0);
            text = d;
            len = (size_t)(digits + sizeof digits - d);
        }
        if (len > cap - 1 - n) len = cap - 1 - n;
        memcpy(buf + n, text, len);
        n += len;
    }
    buf[n] = 0;
    va_end(ap);
    return n;
}

/* ---- expressions ---- */

static GExpr *node(Gram *g, int kind) {
    rt_step(g->rt, 1);
    GExpr *e = rt_alloc(g->rt, sizeof *e);
    *e = (GExpr){.kind = (uint8_t)kind};   /* (a few stores, not a memset call per node) */
    return e;
}

GExpr *gx_lit(Gram *g, const char *s, size_t n) {
    GExpr *e = node(g, GX_LIT);
    char *c = rt_alloc(g->rt, n + 1);
    memcpy(c, s, n);
    c[n] = 0;
    e->u.lit = c;
    e->n = (uint32_t)n;
    return e;
}

GExpr *gx_litz(Gram *g, const char *z) { return gx_lit(g, z, strlen(z)); }

GExpr *gx_class(Gram *g, bool negated, const GRange *r, size_t n) {
    GExpr *e = node(g, GX_CLASS);
    GRange *c = rt_alloc(g->rt, (n ? n : 1) * sizeof *c);
    memcpy(c, r, n * sizeof *c);
    e->u.ranges = c;
    e->n = (uint32_t)n;
    e->negated = negated;
    return e;
}

GExpr *gx_chars(Gram *g, bool negated, const char *set) {
    GRange r[64];
    size_t n = 0;
    for (const char *p = set; *p && n < 64; p++) {
        if (p[1] == '-' && p[2]) {
            r[n].lo = (unsigned char)p[0];
            r[n++].hi = (unsigned char)p[2];
            p += 2;
        } else {
            r[n].lo = r[n].hi = (unsigned char)*p;
            n++;
        }
    }
    return gx_class(g, negated, r, n);
}

GExpr *gx_ref(Gram *g, uint32_t rule) {
    GExpr *e = node(g, GX_REF);
    e->u.rule = rule;
    return e;
}

GExpr *gx_rep(Gram *g, GExpr *e, uint32_t min, uint32_t max) {
    if (min == 1 && max == 1) return e;
    GExpr *r = node(g, GX_REP);
    r->u.kid = e;
    r->min = min;
    r->max = max;
    return r;
}

GExpr *gx_greedy(Gram *g, GExpr *class_expr, uint32_t min, uint32_t max) {
    GExpr *r = gx_rep(g, class_expr, min, max);
    if (r->kind == GX_REP) r->greedy = true;
    return r;
}

void gl_push(Gram *g, GList *l, GExpr *e) {
    if (!e) return;
    if (l->n == l->cap) {
        uint32_t cap = l->cap ? l->cap * 2 : 8;
        l->v = rt_realloc(g->rt, l->v, l->n * sizeof *l->v, cap * sizeof *l->v);
        l->cap = cap;
    }
    l->v[l->n++] = e;
}

static GExpr *from_list(Gram *g, GList *l, int kind) {
    if (l->n == 0) return NULL;
    if (l->n == 1) return l->v[0];
    GExpr *e = node(g, kind);
    e->u.kids = l->v;
    e->n = l->n;
    return e;
}

GExpr *gl_seq(Gram *g, GList *l) { return from_list(g, l, GX_SEQ); }
GExpr *gl_alt(Gram *g, GList *l) { return from_list(g, l, GX_ALT); }

GExpr gx_end;

/* The arguments (up to &gx_end, NULL ones skipped) as one node of `kind`:
 * gathered on the stack, then the children array made at its size (these
 * are made by the ten thousand). */
static GExpr *from_args(Gram *g, int kind, va_list ap) {
    GExpr *held[16];
    uint32_t n = 0;
    GList more = {0};   /* (past 16 arguments) */
    for (GExpr *e; (e = va_arg(ap, GExpr *)) != &gx_end;) {
        if (!e) continue;
        if (n < 16) held[n++] = e;
        else gl_push(g, &more, e);
    }
    if (more.n) {
        GList all = {0};
        for (uint32_t i = 0; i < n; i++) gl_push(g, &all, held[i]);
        for (uint32_t i = 0; i < more.n; i++) gl_push(g, &all, more.v[i]);
        return from_list(g, &all, kind);
    }
    if (n == 0) return NULL;
    if (n == 1) return held[0];
    GExpr *e = node(g, kind);
    e->u.kids = rt_alloc(g->rt, n * sizeof *e->u.kids);
    memcpy(e->u.kids, held, n * sizeof *held);
    e->n = n;
    return e;
}

GExpr *gx_seq_(Gram *g, ...) {
    va_list ap;
    va_start(ap, g);
    GExpr *e = from_args(g, GX_SEQ, ap);
    va_end(ap);
    return e;
}

GExpr *gx_alt_(Gram *g, ...) {
    va_list ap;
    va_start(ap, g);
    GExpr *e = from_args(g, GX_ALT, ap);
    va_end(ap);
    return e;
}

GExpr *gram_node_of(Gram *g, const void *key, GExpr *(*make)(Gram *g, const void *key)) {
    for (uint32_t i = 0; i < g->nnodes_seen; i++)
        if (g->nodes_seen[i].key == key) return g->nodes_seen[i].e;
    GExpr *e = make(g, key);
    if (g->nnodes_seen < GRAM_NODES_SEEN) {
        g->nodes_seen[g->nnodes_seen].key = key;
        g->nodes_seen[g->nnodes_seen++].e = e;
    }
    return e;
}

/* ---- rules ---- */

/* Names and memo keys, hashed eight bytes at a time. */
static uint32_t bytes_hash(const char *s, size_t n) {
    uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
    for (; n >= 8; s += 8, n -= 8) {
        uint64_t w;
        memcpy(&w, s, 8);
        h = (h ^ w) * 0xFF51AFD7ED558CCDull;
        h ^= h >> 32;
    }
    uint64_t w = 0;
    memcpy(&w, s, n);
    h = (h ^ w) * 0xC4CEB9FE1A85EC53ull;
    h ^= h >> 29;
    return (uint32_t)h;
}

static uint32_t name_hash(const char *s) { return bytes_hash(s, strlen(s)); }

static uint32_t find_named(const Gram *g, const char *name, size_t n, uint32_t hash) {
    uint32_t mask = g->nslots - 1;
    for (uint32_t i = hash & mask;; i = (i + 1) & mask) {
        uint32_t s = g->slots[i];
        if (!s) return UINT32_MAX;
        const GRule *r = &g->rules[s - 1];
        if (r->hash == hash && r->name_len == n && memcmp(r->name, name, n) == 0) return s - 1;
    }
}

uint32_t gram_rule_find(const Gram *g, const char *name) {
    size_t n = strlen(name);
    return find_named(g, name, n, bytes_hash(name, n));
}

/* (rules keep their name's hash: the index grows without hashing again) */
static void index_rule(Gram *g, uint32_t id) {
    uint32_t mask = g->nslots - 1;
    uint32_t i = g->rules[id].hash & mask;
    while (g->slots[i]) i = (i + 1) & mask;
    g->slots[i] = id + 1;
}

/* A name byte as a rule name keeps it: lower-case letters and digits; 0: a separator. */
static const char NAME_BYTE[256] = {
    ['0'] = '0', ['1'] = '1', ['2'] = '2', ['3'] = '3', ['4'] = '4', ['5'] = '5', ['6'] = '6', ['7'] = '7',
    ['8'] = '8', ['9'] = '9', ['A'] = 'a', ['B'] = 'b', ['C'] = 'c', ['D'] = 'd', ['E'] = 'e', ['F'] = 'f',
    ['G'] = 'g', ['H'] = 'h', ['I'] = 'i', ['J'] = 'j', ['K'] = 'k', ['L'] = 'l', ['M'] = 'm', ['N'] = 'n',
    ['O'] = 'o', ['P'] = 'p', ['Q'] = 'q', ['R'] = 'r', ['S'] = 's', ['T'] = 't', ['U'] = 'u', ['V'] = 'v',
    ['W'] = 'w', ['X'] = 'x', ['Y'] = 'y', ['Z'] = 'z', ['a'] = 'a', ['b'] = 'b', ['c'] = 'c', ['d'] = 'd',
    ['e'] = 'e', ['f'] = 'f', ['g'] = 'g', ['h'] = 'h', ['i'] = 'i', ['j'] = 'j', ['k'] = 'k', ['l'] = 'l',
    ['m'] = 'm', ['n'] = 'n', ['o'] = 'o', ['p'] = 'p', ['q'] = 'q', ['r'] = 'r', ['s'] = 's', ['t'] = 't',
    ['u'] = 'u', ['v'] = 'v', ['w'] = 'w', ['x'] = 'x', ['y'] = 'y', ['z'] = 'z',
};

uint32_t gram_rule_new(Gram *g, const char *base, size_t n) {
    if (g->nrules >= GRAM_MAX_RULES)
        rt_throw(g->rt, CF_ERR_LIMIT, "the grammar needs more than %d rules", GRAM_MAX_RULES);
    /* [a-z0-9-], starting with a letter, at most 48 bytes before a suffix */
    char name[72];
    size_t k = 0;
    /* (without a branch a byte: a thousand names a request; `dash`: the
     * last byte kept is a '-', or none is, and a separator is then dropped) */
    bool dash = true;
    for (size_t i = 0; i < n && k < 48; i++) {
        char c = NAME_BYTE[(unsigned char)base[i]];
        bool sep = !c;
        name[k] = sep ? '-' : c;
        k += !(sep & dash);
        dash = sep;
    }
    while (k && name[k - 1] == '-') k--;
    if (!k || !(name[0] >= 'a' && name[0] <= 'z')) {
        memmove(name + 2, name, k);
        name[0] = 'r';
        name[1] = '-';
        k += 2;
        if (k == 2) k = 1;
    }
    name[k] = 0;
    size_t len = k;
    uint32_t hash = bytes_hash(name, len);
    /* "root" and "start" are the printers' names for the entry rule */
    bool taken = (len == 4 && memcmp(name, "root", 4) == 0) || (len == 5 && memcmp(name, "start", 5) == 0) ||
                 find_named(g, name, len, hash) != UINT32_MAX;
    /* the rule count is a suffix no earlier rule of this base took (the
     * rules made after it get larger counts): no probing 1, 2, 3... */
    for (uint32_t suffix = g->nrules; taken; suffix++) {
        char digits[12], *d = digits + sizeof digits;
        uint32_t v = suffix;
        do *--d = (char)('0' + v % 10); while ((v /= 10) != 0);
        name[k] = '-';
        memcpy(name + k + 1, d, (size_t)(digits + sizeof digits - d));
        len = k + 1 + (size_t)(digits + sizeof digits - d);
        name[len] = 0;
        hash = bytes_hash(name, len);
        taken = find_named(g, name, len, hash) != UINT32_MAX;
    }
    if (g->nrules == g->cap) {
        g->rules = rt_realloc(g->rt, g->rules, g->cap * sizeof *g->rules, 2 * g->cap * sizeof *g->rules);
        g->cap *= 2;
    }
    if ((g->nrules + 1) * 2 > g->nslots) {
        uint32_t old = g->nslots;
        g->nslots = old * 2;
        g->slots = rt_alloc0(g->rt, g->nslots * sizeof *g->slots);
        for (uint32_t i = 0; i < g->nrules; i++)
            if (g->rules[i].indexed) index_rule(g, i);
    }
    uint32_t id = g->nrules++;
    char *copy = rt_alloc(g->rt, len + 1);
    memcpy(copy, name, len + 1);
    g->rules[id] = (GRule){.name = copy, .name_len = (uint32_t)len, .hash = hash, .indexed = true};
    index_rule(g, id);
    return id;
}

void gram_rule_set(Gram *g, uint32_t id, GExpr *body) { g->rules[id].body = body; }

struct GMemo { struct GMemo *next; const char *key; uint32_t hash, rule; };

/* A hash table (a 60-tool request memoises hundreds of schemas and pieces:
 * a list searched from the front would cost a scan per lookup). */
uint32_t gram_memo_get(const Gram *g, const char *key) {
    if (!g->memo) return UINT32_MAX;
    uint32_t h = name_hash(key);
    for (const struct GMemo *m = g->memo[h & (g->memo_buckets - 1)]; m; m = m->next)
        if (m->hash == h && strcmp(m->key, key) == 0) return m->rule;
    return UINT32_MAX;
}

void gram_memo_put(Gram *g, const char *key, uint32_t rule) {
    if (!g->memo || g->nmemo >= g->memo_buckets) {   /* load <= 1: double the buckets */
        uint32_t nb = g->memo ? g->memo_buckets * 2 : 256;
        struct GMemo **t = rt_alloc0(g->rt, nb * sizeof *t);
        for (uint32_t b = 0; g->memo && b < g->memo_buckets; b++)
            for (struct GMemo *m = g->memo[b], *next; m; m = next) {
                next = m->next;
                m->next = t[m->hash & (nb - 1)];
                t[m->hash & (nb - 1)] = m;
            }
        g->memo = t;
        g->memo_buckets = nb;
    }
    struct GMemo *m = rt_alloc(g->rt, sizeof *m);
    size_t n = strlen(key);
    char *k = rt_alloc(g->rt, n + 1);
    memcpy(k, key, n + 1);
    m->key = k;
    m->hash = name_hash(key);
    m->rule = rule;
    struct GMemo **slot = &g->memo[m->hash & (g->memo_buckets - 1)];
    m->next = *slot;
    *slot = m;
    g->nmemo++;
}

uint32_t gram_shared(Gram *g, const char *name, GExpr *(*make)(Gram *g)) {
    for (uint32_t i = 0; i < g->nshared; i++)
        if (g->shared[i].name == name) return g->shared[i].rule;
    uint32_t id = gram_rule_find(g, name);
    if (id == UINT32_MAX) {
        id = gram_rule_new(g, name, strlen(name));
        gram_rule_set(g, id, make(g));
    }
    if (g->nshared < GRAM_SHARED_SEEN) {
        g->shared[g->nshared].name = name;
        g->shared[g->nshared++].rule = id;
    }
    return id;
}

/* ---- printing ----
 * Every caller puts the grammar in a JSON document, so the printer
 * writes the JSON string's text itself: each '"' and '\\' it
 * prints then takes a backslash and each rule's newline is "\\n", in the
 * same pass, instead of a second pass quoting the printed text. Rules are
 * printed breadth first from the root; the references a rule's body makes
 * queue their rules as they are printed. */

typedef struct Printer {
    Gram *g;
    StrBuf *sb;
    bool lark;
    bool record;             /* the rule being printed keeps its text: note its references */
    bool saw_root;           /* it refers to the root (printed under root_name) */
    uint32_t root;
    const char *root_name;
    uint8_t *seen;           /* rule id -> queued */
    uint32_t *order;         /* the print queue */
    uint32_t n, cap;
} Printer;

/* Room in the queue for helper rules (Lark) made since it was sized. */
static void queue_grow(Printer *p) {
    Gram *g = p->g;
    uint32_t cap = g->nrules + 64 > 2 * p->cap ? g->nrules + 64 : 2 * p->cap;   /* geometric: thousands of helpers */
    p->seen = rt_realloc(g->rt, p->seen, p->cap, cap);
    memset(p->seen + p->cap, 0, cap - p->cap);
    p->order = rt_realloc(g->rt, p->order, p->cap * sizeof *p->order, cap * sizeof *p->order);
    p->cap = cap;
}

static inline void enqueue(Printer *p, uint32_t id) {
    if (id >= p->cap) queue_grow(p);
    if (!p->seen[id]) {
        p->seen[id] = 1;
        p->order[p->n++] = id;
    }
}

/* a backslash and a double quote of the grammar's text */
static void put_bs(Printer *p) { sb_put(p->sb, "\\\\", 2); }
static void put_dq(Printer *p) { sb_put(p->sb, "\\\"", 2); }

/* A rule's name as Lark spells it ('_' for '-'), eight bytes at a time:
 * a byte equal to '-' has its high bit set in `dash`, exactly, and
 * '-' ^ ('-' ^ '_') is '_'. */
static const char *lark_spelling(Gram *g, const GRule *r) {
    size_t n = r->name_len;
    char *l = rt_alloc(g->rt, n + 8);
    memcpy(l, r->name, n);
    memset(l + n, 0, 8);
    const uint64_t ones = 0x0101010101010101ull, low7 = 0x7F7F7F7F7F7F7F7Full;
    for (size_t i = 0; i < n; i += 8) {
        uint64_t w;
        memcpy(&w, l + i, 8);   /* (the block has 8 zero bytes past the name) */
        uint64_t t = w ^ (ones * '-');
        uint64_t nonzero = ((t & low7) + low7) | t;
        uint64_t dash = ~nonzero & (ones << 7);
        w ^= (dash >> 7) * ('-' ^ '_');
        memcpy(l + i, &w, 8);
    }
    return l;
}

static void put_name(Printer *p, uint32_t id) {
    enqueue(p, id);
    if (id == p->root) p->saw_root = true;
    if (p->record) {
        Gram *g = p->g;
        if (g->nrefs == g->refs_cap) {
            uint32_t cap = g->refs_cap ? 2 * g->refs_cap : 1024;
            g->refs = rt_realloc(g->rt, g->refs, g->nrefs * sizeof *g->refs, cap * sizeof *g->refs);
            g->refs_cap = cap;
        }
        g->refs[g->nrefs++] = id;
    }
    if (id == p->root) {
        sb_puts(p->sb, p->root_name);
        return;
    }
    GRule *r = &p->g->rules[id];
    if (!p->lark) {
        sb_put(p->sb, r->name, r->name_len);
        return;
    }
    if (!r->lark_name) r->lark_name = lark_spelling(p->g, r);
    sb_put(p->sb, r->lark_name, r->name_len);
}

static void put_hex(Printer *p, uint32_t cp) {
    static const char HEX[] = "0123456789ABCDEF";
    char buf[12];
    int digits = cp < 0x100 ? 2 : cp < 0x10000 ? 4 : 8;
    buf[0] = digits == 2 ? 'x' : digits == 4 ? 'u' : 'U';
    for (int i = 0; i < digits; i++) buf[1 + i] = HEX[(cp >> (4 * (digits - 1 - i))) & 0xF];
    put_bs(p);
    sb_put(p->sb, buf, (size_t)digits + 1);
}

/* bytes a literal spells with an escape: controls, DEL, '"' and '\\' */
static const uint8_t LIT_SPECIAL[256] = {
    [0x00] = 1, [0x01] = 1, [0x02] = 1, [0x03] = 1, [0x04] = 1, [0x05] = 1, [0x06] = 1, [0x07] = 1,
    [0x08] = 1, [0x09] = 1, [0x0A] = 1, [0x0B] = 1, [0x0C] = 1, [0x0D] = 1, [0x0E] = 1, [0x0F] = 1,
    [0x10] = 1, [0x11] = 1, [0x12] = 1, [0x13] = 1, [0x14] = 1, [0x15] = 1, [0x16] = 1, [0x17] = 1,
    [0x18] = 1, [0x19] = 1, [0x1A] = 1, [0x1B] = 1, [0x1C] = 1, [0x1D] = 1, [0x1E] = 1, [0x1F] = 1,
    ['"'] = 1, ['\\'] = 1, [0x7F] = 1,
};
static inline bool lit_special(unsigned char c) { return LIT_SPECIAL[c] != 0; }

static void put_lit(Printer *p, const char *s, size_t n) {
    StrBuf *sb = p->sb;
    put_dq(p);
    for (size_t i = 0; i < n;) {
        size_t run = i;
        while (run < n && !lit_special((unsigned char)s[run])) run++;
        sb_put(sb, s + i, run - i);
        if (run == n) break;
        unsigned char c = (unsigned char)s[run];
        i = run + 1;
        if (c == '"') {
            put_bs(p);
            put_dq(p);
        } else if (c == '\\') {
            put_bs(p);
            put_bs(p);
        } else if (c == '\n' || c == '\r' || c == '\t') {
            put_bs(p);
            sb_putc(sb, c == '\n' ? 'n' : c == '\r' ? 'r' : 't');
        } else put_hex(p, c);
    }
    put_dq(p);
}

static void put_class_cp(Printer *p, uint32_t cp) {
    StrBuf *sb = p->sb;
    /* GBNF escapes only \\ \" [ ] and control letters: '-' and '^' go as hex */
    if (cp < 0x20 || cp == 0x7F || (!p->lark && (cp == '-' || cp == '^'))) put_hex(p, cp);
    else if (cp == '\\' || cp == ']' || cp == '[' || cp == '^' || cp == '-' ||
             (!p->lark && cp == '"') || (p->lark && cp == '/')) {
        put_bs(p);
        if (cp == '\\') put_bs(p);
        else if (cp == '"') put_dq(p);
        else sb_putc(sb, (char)cp);
    } else if (cp >= 0xD800 && cp <= 0xDFFF) put_hex(p, cp);
    else if (cp == '"') put_dq(p);   /* Lark: a quote in a regex class */
    else if (cp < 0x80) sb_putc(sb, (char)cp);
    else sb_put_cp(sb, cp);
}

static bool atomic(const GExpr *e) { return e->kind == GX_LIT || e->kind == GX_CLASS || e->kind == GX_REF; }

static void put_expr(Printer *p, const GExpr *e, bool in_seq);

static void put_group(Printer *p, const GExpr *e) {
    if (atomic(e)) {
        put_expr(p, e, true);
        return;
    }
    sb_putc(p->sb, '(');
    put_expr(p, e, false);
    sb_putc(p->sb, ')');
}

static void put_count(StrBuf *sb, uint32_t v) { sb_put_int(sb, (int64_t)v); }

static void put_class(Printer *p, const GExpr *e, bool lark_slashes);

static void put_rep(Printer *p, const GExpr *e) {
    StrBuf *sb = p->sb;
    uint32_t min = e->min, max = e->max;
    const GExpr *k = e->u.kid;
    if (p->lark && e->greedy && k->kind == GX_CLASS) {
        /* one terminal: python-lark's dynamic lexer takes its longest match */
        sb_putc(sb, '/');
        put_class(p, k, false);
        sb_putc(sb, '{');
        put_count(sb, min ? min : 1);   /* no zero-width terminals: {1,n} and '?' */
        sb_putc(sb, ',');
        if (max != GREP_INF) put_count(sb, max);
        sb_puts(sb, min ? "}/" : "}/?");
        return;
    }
    if (max == GREP_INF && min <= 1) {
        put_group(p, k);
        sb_putc(sb, min ? '+' : '*');
        return;
    }
    if (min == 0 && max == 1) {
        put_group(p, k);
        sb_putc(sb, '?');
        return;
    }
    if (!p->lark) {
        put_group(p, k);
        sb_putc(sb, '{');
        put_count(sb, min);
        sb_putc(sb, ',');
        if (max != GREP_INF) put_count(sb, max);
        sb_putc(sb, '}');
        return;
    }
    /* Lark: `item ~ m` for the required part, then the optional ones nested,
     * (x (x (x)?)?)?: linear in the count, where python-lark expands
     * `item ~ m..n` into every length (a 32-character whitespace rule took
     * it minutes to compile). llguidance reads both. */
    sb_putc(sb, '(');
    if (min == 1) put_group(p, k);
    else if (min > 1) {
        sb_putc(sb, '(');
        put_group(p, k);
        sb_puts(sb, " ~ ");
        put_count(sb, min);
        sb_putc(sb, ')');
    }
    if (max == GREP_INF) {
        if (min) sb_putc(sb, ' ');
        put_group(p, k);
        sb_putc(sb, '*');
    } else {
        uint32_t opt = max - min;
        for (uint32_t i = 0; i < opt; i++) {
            sb_puts(sb, i || min ? " (" : "(");
            put_group(p, k);
        }
        for (uint32_t i = 0; i < opt; i++) sb_puts(sb, ")?");
    }
    sb_putc(sb, ')');
}

static void put_class(Printer *p, const GExpr *e, bool lark_slashes) {
    StrBuf *sb = p->sb;
    sb_puts(sb, lark_slashes ? "/[" : "[");
    if (e->negated) sb_putc(sb, '^');
    for (uint32_t i = 0; i < e->n; i++) {
        put_class_cp(p, e->u.ranges[i].lo);
        if (e->u.ranges[i].hi != e->u.ranges[i].lo) {
            sb_putc(sb, '-');
            put_class_cp(p, e->u.ranges[i].hi);
        }
    }
    sb_puts(sb, lark_slashes ? "]/" : "]");
}

static void put_expr(Printer *p, const GExpr *e, bool in_seq) {
    StrBuf *sb = p->sb;
    rt_step(p->g->rt, 1);
    switch (e->kind) {
    case GX_LIT:
        put_lit(p, e->u.lit, e->n);
        break;
    case GX_CLASS:
        put_class(p, e, p->lark);
        break;
    case GX_REF:
        put_name(p, e->u.rule);
        break;
    case GX_SEQ:
        for (uint32_t i = 0; i < e->n; i++) {
            const GExpr *k = e->u.kids[i];
            if (i) sb_putc(sb, ' ');
            if (k->kind == GX_REF) {   /* most parts: a name, without a call here */
                rt_step(p->g->rt, 1);
                put_name(p, k->u.rule);
            } else if (k->kind == GX_ALT) put_group(p, k);
            else put_expr(p, k, true);
        }
        break;
    case GX_ALT:
        if (in_seq) sb_putc(sb, '(');
        for (uint32_t i = 0; i < e->n; i++) {
            const GExpr *k = e->u.kids[i];
            if (i) sb_put(sb, " | ", 3);
            if (k->kind == GX_REF) {
                rt_step(p->g->rt, 1);
                put_name(p, k->u.rule);
            } else put_expr(p, k, false);
        }
        if (in_seq) sb_putc(sb, ')');
        break;
    case GX_REP:
        put_rep(p, e);
        break;
    }
}

/* ---- Lark: no products of alternatives ----
 * python-lark (and any Earley front end that expands EBNF) turns a rule's
 * inline groups and optional parts into the cross product of their choices
 * (a number's sign, digits, fraction and exponent made 14,000 alternatives
 * and minutes of compiling). So for Lark, a group or a counted repetition
 * inside a sequence becomes a rule of its own: a sequence then holds atoms,
 * references and `x?` `x*` `x+` of atoms only. The helper rules are made
 * while printing; the GBNF view of the grammar is unchanged. */

static bool simple_rep(const GExpr *e) {
    return e->kind == GX_REP && atomic(e->u.kid) && (e->greedy ||
           ((e->min == 0 && e->max == 1) || (e->min <= 1 && e->max == GREP_INF)));
}

typedef struct Flat {
    Gram *g;
    const char *base;   /* the rule being printed: helper rules are named after it */
    size_t base_len;
} Flat;

static GExpr *flatten(Flat *f, const GExpr *e, bool top);

/* A flattened body's structure, for finding a helper rule of the same body. */
static uint32_t expr_hash(const GExpr *e) {
    uint64_t h = (uint64_t)e->kind * 0x9E3779B97F4A7C15ull;
    switch (e->kind) {
    case GX_LIT: return (uint32_t)(h ^ bytes_hash(e->u.lit, e->n));
    case GX_CLASS: return (uint32_t)(h ^ e->negated ^ bytes_hash((const char *)e->u.ranges, e->n * sizeof *e->u.ranges));
    case GX_REF: return (uint32_t)((h ^ e->u.rule) * 0xFF51AFD7ED558CCDull >> 32);
    case GX_REP:
        h ^= ((uint64_t)e->min << 40) ^ ((uint64_t)e->max << 8) ^ e->greedy ^ expr_hash(e->u.kid);
        return (uint32_t)((h * 0xC4CEB9FE1A85EC53ull) >> 32);
    default:
        for (uint32_t i = 0; i < e->n; i++) h = (h ^ expr_hash(e->u.kids[i])) * 0xFF51AFD7ED558CCDull;
        return (uint32_t)(h ^ (h >> 32));
    }
}

static bool expr_same(const GExpr *a, const GExpr *b) {
    if (a == b) return true;
    if (a->kind != b->kind || a->n != b->n) return false;
    switch (a->kind) {
    case GX_LIT: return memcmp(a->u.lit, b->u.lit, a->n) == 0;
    case GX_CLASS: return a->negated == b->negated && memcmp(a->u.ranges, b->u.ranges, a->n * sizeof *a->u.ranges) == 0;
    case GX_REF: return a->u.rule == b->u.rule;
    case GX_REP: return a->min == b->min && a->max == b->max && a->greedy == b->greedy && expr_same(a->u.kid, b->u.kid);
    default:
        for (uint32_t i = 0; i < a->n; i++)
            if (!expr_same(a->u.kids[i], b->u.kids[i])) return false;
        return true;
    }
}

/* The slot of the helper whose body is `e`, or of the empty slot where it goes. */
static uint32_t *helper_slot(Gram *g, const GExpr *e, uint32_t hash) {
    uint32_t mask = g->nhelper_slots - 1;
    for (uint32_t i = hash & mask;; i = (i + 1) & mask) {
        uint32_t *s = &g->helpers[i];
        if (!*s || expr_same(g->rules[*s - 1].body, e)) return s;
    }
}

/* A helper rule, named after the rule being printed, "--g" and its id: no
 * sanitised name holds "--", so the name is new without a look in the index.
 * A helper of the same body made before is used instead. */
static GExpr *hoist(Flat *f, GExpr *e) {
    Gram *g = f->g;
    if ((g->nhelpers + 1) * 2 > g->nhelper_slots) {   /* load <= 1/2 */
        uint32_t old = g->nhelper_slots, *was = g->helpers;
        g->nhelper_slots = old ? 2 * old : 1024;
        g->helpers = rt_alloc0(g->rt, g->nhelper_slots * sizeof *g->helpers);
        for (uint32_t i = 0; i < old; i++)
            if (was[i]) *helper_slot(g, g->rules[was[i] - 1].body, g->rules[was[i] - 1].hash) = was[i];
    }
    uint32_t hash = expr_hash(e);
    uint32_t *slot = helper_slot(g, e, hash);
    if (*slot) return gx_ref(g, *slot - 1);
    if (g->nrules >= GRAM_MAX_RULES)
        rt_throw(g->rt, CF_ERR_LIMIT, "the grammar needs more than %d rules", GRAM_MAX_RULES);
    if (g->nrules == g->cap) {
        g->rules = rt_realloc(g->rt, g->rules, g->cap * sizeof *g->rules, 2 * g->cap * sizeof *g->rules);
        g->cap *= 2;
    }
    uint32_t id = g->nrules++;
    size_t n = f->base_len > 60 ? 60 : f->base_len;
    char *name = rt_alloc(g->rt, n + 16);
    memcpy(name, f->base, n);
    memcpy(name + n, "--g", 3);
    char digits[12], *d = digits + sizeof digits;
    uint32_t v = id;
    do *--d = (char)('0' + v % 10); while ((v /= 10) != 0);
    size_t nd = (size_t)(digits + sizeof digits - d);
    memcpy(name + n + 3, d, nd);
    name[n + 3 + nd] = 0;
    /* (a helper is never in the name index: its hash is its body's) */
    g->rules[id] = (GRule){.name = name, .name_len = (uint32_t)(n + 3 + nd), .hash = hash, .body = e, .flat = true};
    *slot = id + 1;
    g->nhelpers++;
    return gx_ref(g, id);
}

static GExpr *flat_part(Flat *f, const GExpr *e) {
    GExpr *c = flatten(f, e, false);
    if (c->kind == GX_ALT || c->kind == GX_SEQ || (c->kind == GX_REP && !simple_rep(c))) return hoist(f, c);
    return c;
}

/* Copy on write: a part that needs no helper rule is the tree's own node
 * (most rules are flat already; copying each made Lark cost twice GBNF). */
static GExpr *flatten_node(Flat *f, const GExpr *e, bool top);

static GExpr *flatten(Flat *f, const GExpr *e, bool top) {
    if (top || atomic(e)) return flatten_node(f, e, top);
    if (!e->flat) ((GExpr *)e)->flat = flatten_node(f, e, false);   /* (the printer owns the tree now) */
    return e->flat;
}

static GExpr *flatten_node(Flat *f, const GExpr *e, bool top) {
    Gram *g = f->g;
    rt_step(g->rt, 1);
    switch (e->kind) {
    case GX_SEQ:
    case GX_ALT: {
        GExpr **kids = NULL;
        for (uint32_t i = 0; i < e->n; i++) {
            GExpr *c = e->u.kids[i];
            /* the alternatives of a rule may be sequences (and alternatives: they print
             * as more of them); a sequence's parts may not be groups, but a sequence in
             * a sequence is more of its parts, printed in place without a helper rule */
            bool in_place = e->kind == GX_ALT ? top && (c->kind == GX_SEQ || c->kind == GX_ALT) : c->kind == GX_SEQ;
            GExpr *nc = in_place ? flatten(f, c, top && e->kind == GX_ALT && c->kind == GX_ALT) : flat_part(f, c);
            if (nc != c && !kids) {
                kids = rt_alloc(g->rt, e->n * sizeof *kids);
                memcpy(kids, e->u.kids, i * sizeof *kids);
            }
            if (kids) kids[i] = nc;
        }
        if (!kids) return (GExpr *)e;
        GExpr *copy = node(g, e->kind);
        copy->u.kids = kids;
        copy->n = e->n;
        return copy;
    }
    case GX_REP: {
        GExpr *k = flatten(f, e->u.kid, false);
        if (!atomic(k)) k = hoist(f, k);
        if (k == e->u.kid) return (GExpr *)e;
        GExpr *r = gx_rep(g, k, e->min, e->max);
        if (r->kind == GX_REP) r->greedy = e->greedy;
        return r;
    }
    default:
        return (GExpr *)e;
    }
}

/* A rule's kept line, and its references queued; false when it has none
 * or it names this print's root (which goes by root_name here). */
static bool put_kept(Printer *p, uint32_t id) {
    Gram *g = p->g;
    const GRule *r = &g->rules[id];
    if (p->lark || !r->text_len || id == p->root) return false;
    for (uint32_t k = 0; k < r->nrefs; k++)
        if (g->refs[r->refs_at + k] == p->root) return false;
    sb_put(p->sb, g->text.p + r->text_at, r->text_len);
    for (uint32_t k = 0; k < r->nrefs; k++) enqueue(p, g->refs[r->refs_at + k]);
    return true;
}

static void print_all(Printer *p) {
    Gram *g = p->g;
    p->cap = g->nrules + 64;
    p->seen = rt_alloc0(g->rt, p->cap);
    p->order = rt_alloc(g->rt, p->cap * sizeof *p->order);
    p->n = 0;
    bool keep = g->keep_text && !p->lark;
    if (keep && !g->text.p) sb_init(g->rt, &g->text, 16384);
    sb_putc(p->sb, '"');
    enqueue(p, p->root);
    for (uint32_t i = 0; i < p->n; i++) {   /* breadth first: rules in the order they are used */
        uint32_t id = p->order[i];
        if (keep && put_kept(p, id)) continue;
        GExpr *body = g->rules[id].body;
        if (!body) body = gx_litz(g, "");
        if (p->lark && !g->rules[id].flat) {
            Flat f = {g, g->rules[id].name, g->rules[id].name_len};
            body = flatten(&f, body, true);
        }
        size_t start = p->sb->len;
        uint32_t refs_at = g->nrefs;
        p->record = keep && id != p->root;
        p->saw_root = false;
        put_name(p, id);
        if (p->lark) sb_put(p->sb, ": ", 2);
        else sb_put(p->sb, " ::= ", 5);
        put_expr(p, body, false);
        sb_put(p->sb, "\\n", 2);
        if (p->record && !p->saw_root) {
            GRule *r = &g->rules[id];
            r->text_at = (uint32_t)g->text.len;
            r->text_len = (uint32_t)(p->sb->len - start);
            r->refs_at = refs_at;
            r->nrefs = g->nrefs - refs_at;
            sb_put(&g->text, p->sb->p + start, p->sb->len - start);
        } else g->nrefs = refs_at;
        p->record = false;
    }
    sb_putc(p->sb, '"');
}

void gram_write_gbnf_json(Gram *g, StrBuf *sb, uint32_t root, const char *root_name) {
    Printer p = {.g = g, .sb = sb, .root = root, .root_name = root_name};
    print_all(&p);
}

void gram_write_lark_json(Gram *g, StrBuf *sb, uint32_t root, const char *root_name) {
    Printer p = {.g = g, .sb = sb, .lark = true, .root = root, .root_name = root_name};
    print_all(&p);
}
