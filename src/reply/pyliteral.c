/* pyliteral.c — tool-call arguments written as code rather than JSON:
 * Python keyword arguments (`city='Paris', days=3, opts={'a': [1, None]}`,
 * pythonic replies and Llama's builtin `.call(...)`) and Gemma's dict body
 * (`city:<|"|>Paris<|"|>,days:3`), turned into the JSON object text
 * json.dumps would write ({"city": "Paris", "days": 3}). Also where such
 * arguments end, tracked a byte at a time as they stream in. */
#include <string.h>
#include "families.h"

typedef struct Lit {
    Parser *p;
    int style;
    const char *s;
    size_t n, i;
    StrBuf *out;
    uint32_t depth, max_depth;
} Lit;

static const char *string_token(int style) { return style == LIT_GEMMA ? "<|\"|>" : "<escape>"; }

static void skip_ws(Lit *l) {
    while (l->i < l->n && is_space((unsigned char)l->s[l->i])) l->i++;
}

static bool at(Lit *l, const char *z) {
    size_t k = strlen(z);
    return l->n - l->i >= k && memcmp(l->s + l->i, z, k) == 0;
}

static bool is_ident_start(unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static bool is_ident(unsigned char c) { return is_ident_start(c) || (c >= '0' && c <= '9'); }

static void put_cp(StrBuf *sb, uint32_t cp) {
    char b[4];
    size_t k;
    if (cp >= 0xD800 && cp <= 0xDFFF) cp = 0xFFFD;
    if (cp < 0x80) { b[0] = (char)cp; k = 1; }
    else if (cp < 0x800) { b[0] = (char)(0xC0 | cp >> 6); b[1] = (char)(0x80 | (cp & 63)); k = 2; }
    else if (cp < 0x10000) {
        b[0] = (char)(0xE0 | cp >> 12); b[1] = (char)(0x80 | (cp >> 6 & 63)); b[2] = (char)(0x80 | (cp & 63)); k = 3;
    } else {
        b[0] = (char)(0xF0 | cp >> 18); b[1] = (char)(0x80 | (cp >> 12 & 63));
        b[2] = (char)(0x80 | (cp >> 6 & 63)); b[3] = (char)(0x80 | (cp & 63)); k = 4;
    }
    sb_put(sb, b, k);
}

static int hexv(unsigned char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* A Python string literal (', ", or tripled) as a JSON string. */
static bool py_string(Lit *l) {
    char q = l->s[l->i];
    bool triple = l->n - l->i >= 3 && l->s[l->i + 1] == q && l->s[l->i + 2] == q;
    l->i += triple ? 3 : 1;
    StrBuf *dec = &l->p->dec;
    dec->len = 0;
    for (;;) {
        if (l->i >= l->n) return false;
        char c = l->s[l->i];
        if (c == q && (!triple || (l->n - l->i >= 3 && l->s[l->i + 1] == q && l->s[l->i + 2] == q))) {
            l->i += triple ? 3 : 1;
            break;
        }
        if (c != '\\') {   /* (a raw newline is kept, as templates write one) */
            size_t k = l->i + 1;   /* a run of plain bytes */
            while (k < l->n && l->s[k] != '\\' && l->s[k] != q) k++;
            sb_put(dec, l->s + l->i, k - l->i);
            l->i = k;
            continue;
        }
        if (l->i + 1 >= l->n) return false;
        char e = l->s[l->i + 1];
        l->i += 2;
        int digits = 0;
        switch (e) {
        case '\n': break;   /* a line continuation */
        case 'n': sb_putc(dec, '\n'); break;
        case 't': sb_putc(dec, '\t'); break;
        case 'r': sb_putc(dec, '\r'); break;
        case 'b': sb_putc(dec, '\b'); break;
        case 'f': sb_putc(dec, '\f'); break;
        case 'v': sb_putc(dec, '\v'); break;
        case 'a': sb_putc(dec, '\a'); break;
        case '0': sb_putc(dec, '\0'); break;
        case '\\': case '\'': case '"': sb_putc(dec, e); break;
        case 'x': digits = 2; break;
        case 'u': digits = 4; break;
        case 'U': digits = 8; break;
        default:   /* Python keeps an unknown escape as written */
            sb_putc(dec, '\\');
            sb_putc(dec, e);
        }
        if (digits) {
            uint32_t cp = 0;
            for (int d = 0; d < digits; d++) {
                int v = l->i < l->n ? hexv((unsigned char)l->s[l->i]) : -1;
                if (v < 0) return false;
                cp = cp * 16 + (uint32_t)v;
                l->i++;
            }
            if (cp > 0x10FFFF) return false;
            put_cp(dec, cp);
        }
    }
    sb_putc(l->out, '"');
    json_escape_into(l->out, dec->p, dec->len);
    sb_putc(l->out, '"');
    return true;
}

/* A Gemma string: raw text between two string tokens. */
static bool gemma_string(Lit *l) {
    const char *tok = string_token(l->style);
    size_t k = strlen(tok);
    l->i += k;
    const char *end = l->s + l->n;
    for (const char *at = l->s + l->i; (at = memchr(at, tok[0], (size_t)(end - at))) && (size_t)(end - at) >= k; at++) {
        if (memcmp(at, tok, k) == 0) {   /* (both tokens begin with '<': memchr finds where one may) */
            sb_putc(l->out, '"');
            json_escape_into(l->out, l->s + l->i, (size_t)(at - l->s) - l->i);
            sb_putc(l->out, '"');
            l->i = (size_t)(at - l->s) + k;
            return true;
        }
    }
    return false;
}

/* A number, kept as written when JSON allows it. */
static bool number(Lit *l) {
    size_t start = l->i, k = l->i;
    if (k < l->n && l->s[k] == '-') k++;
    if (k >= l->n || l->s[k] < '0' || l->s[k] > '9') return false;
    while (k < l->n && ((l->s[k] >= '0' && l->s[k] <= '9') || strchr(".eE+-", l->s[k]) != NULL)) k++;
    if (!js_valid(l->p, l->s + start, k - start)) return false;
    sb_put(l->out, l->s + start, k - start);
    l->i = k;
    return true;
}

static bool value(Lit *l);

/* Items up to `close`, comma-separated (a trailing comma allowed). */
static bool items(Lit *l, char close) {
    sb_putc(l->out, '[');
    for (bool first = true;; first = false) {
        skip_ws(l);
        if (l->i < l->n && l->s[l->i] == close) break;
        if (!first) sb_puts(l->out, ", ");
        if (!value(l)) return false;
        skip_ws(l);
        if (l->i < l->n && l->s[l->i] == ',') {
            l->i++;
            continue;
        }
        if (l->i >= l->n || l->s[l->i] != close) return false;
        break;
    }
    l->i++;
    sb_putc(l->out, ']');
    return true;
}

/* A dict key: a string (Python), a bare name or a string (Gemma). */
static bool key(Lit *l) {
    if (l->i >= l->n) return false;
    unsigned char c = (unsigned char)l->s[l->i];
    if (l->style == LIT_PYTHON) {
        if (c == '\'' || c == '"') return py_string(l);
        return false;
    }
    if (at(l, string_token(l->style))) return gemma_string(l);
    if (!is_ident_start(c)) return false;
    size_t k = l->i;
    while (k < l->n && is_ident(l->s[k])) k++;
    sb_putc(l->out, '"');
    sb_put(l->out, l->s + l->i, k - l->i);
    sb_putc(l->out, '"');
    l->i = k;
    return true;
}

/* `key: value` pairs up to '}'. */
static bool dict(Lit *l) {
    sb_putc(l->out, '{');
    for (bool first = true;; first = false) {
        skip_ws(l);
        if (l->i < l->n && l->s[l->i] == '}') break;
        if (!first) sb_puts(l->out, ", ");
        if (!key(l)) return false;
        skip_ws(l);
        if (l->i >= l->n || l->s[l->i] != ':') return false;
        l->i++;
        sb_puts(l->out, ": ");
        skip_ws(l);
        if (!value(l)) return false;
        skip_ws(l);
        if (l->i < l->n && l->s[l->i] == ',') {
            l->i++;
            continue;
        }
        if (l->i >= l->n || l->s[l->i] != '}') return false;
        break;
    }
    l->i++;
    sb_putc(l->out, '}');
    return true;
}

static bool word(Lit *l, const char *w, const char *json) {
    size_t k = strlen(w);
    if (!at(l, w) || (l->i + k < l->n && is_ident((unsigned char)l->s[l->i + k]))) return false;
    sb_puts(l->out, json);
    l->i += k;
    return true;
}

static bool value(Lit *l) {
    skip_ws(l);
    if (l->i >= l->n || ++l->depth > l->max_depth) return false;
    unsigned char c = (unsigned char)l->s[l->i];
    bool ok;
    if (l->style != LIT_PYTHON && at(l, string_token(l->style))) ok = gemma_string(l);
    else if (l->style == LIT_PYTHON && (c == '\'' || c == '"')) ok = py_string(l);
    else if (c == '[') { l->i++; ok = items(l, ']'); }
    else if (c == '(' && l->style == LIT_PYTHON) { l->i++; ok = items(l, ')'); }   /* a tuple */
    else if (c == '{') { l->i++; ok = dict(l); }
    else if (c == '-' || (c >= '0' && c <= '9')) ok = number(l);
    else ok = word(l, "true", "true") || word(l, "false", "false") || word(l, "null", "null") ||
              word(l, "True", "true") || word(l, "False", "false") || word(l, "None", "null");   /* (Gemma's templates write None too) */
    l->depth--;
    return ok;
}

static bool get(Value obj, const char *key, Value *out) {
    return obj.type == VT_DICT && dict_get_str(obj.u.dict, key, strlen(key), out);
}

/* The "properties" of the tool called `name` in the parser's tools, or None. */
static Value tool_props(Parser *p, const char *name, size_t n) {
    if (p->tools.type != VT_LIST) return v_none();
    for (size_t k = 0; k < p->tools.u.list->len; k++) {
        Value fn = p->tools.u.list->items[k], inner, nm, params, props;
        if (get(fn, "function", &inner)) fn = inner;
        if (get(fn, "name", &nm) && nm.type == VT_STR && nm.u.s->len == n && memcmp(nm.u.s->data, name, n) == 0)
            return get(fn, "parameters", &params) && get(params, "properties", &props) ? props : v_none();
    }
    return v_none();
}

/* A keyword argument written as a string whose schema wants a number or a
 * boolean (templates that print every value as a string, as vLLM's Llama 4
 * pythonic one does): its text, when it is such a JSON value. */
static bool typed_string(Lit *l, Value props, const char *key, size_t kn, size_t from) {
    Value schema, type;
    if (props.type != VT_DICT || !dict_get_str(props.u.dict, key, kn, &schema) || !get(schema, "type", &type) ||
        type.type != VT_STR)
        return false;
    bool number = str_eqz(type.u.s, "integer") || str_eqz(type.u.s, "number");
    if (!number && !str_eqz(type.u.s, "boolean")) return false;
    StrBuf *out = l->out;
    if (out->len - from < 2 || out->p[from] != '"') return false;
    const char *v = out->p + from + 1;
    size_t vn = out->len - from - 2;
    bool ok = number ? vn && (v[0] == '-' || (v[0] >= '0' && v[0] <= '9')) && js_valid(l->p, v, vn)
                     : (vn == 4 && memcmp(v, "true", 4) == 0) || (vn == 5 && memcmp(v, "false", 5) == 0);
    if (!ok || (str_eqz(type.u.s, "integer") && memchr(v, '.', vn))) return false;
    memmove(out->p + from, v, vn);
    out->len = from + vn;
    return true;
}

bool literal_args_to_json(Parser *p, int style, const char *s, size_t n, StrBuf *out) {
    Value props = style == LIT_PYTHON && p->call.name.len ? tool_props(p, p->call.name.p, p->call.name.len) : v_none();
    uint32_t max_depth = p->rt.lim.max_json_depth < 512 ? p->rt.lim.max_json_depth : 512;
    Lit l = {p, style, s, n, 0, out, 0, max_depth};
    sb_putc(out, '{');
    for (bool first = true;; first = false) {
        skip_ws(&l);
        if (l.i >= l.n) break;
        if (!first) sb_puts(out, ", ");
        const char *kname = l.s + l.i;
        size_t kn = 0;
        if (style == LIT_PYTHON) {
            unsigned char c = (unsigned char)l.s[l.i];
            if (!is_ident_start(c)) return false;
            size_t k = l.i;
            while (k < l.n && is_ident((unsigned char)l.s[k])) k++;
            sb_putc(out, '"');
            sb_put(out, l.s + l.i, k - l.i);
            sb_putc(out, '"');
            kn = k - l.i;
            l.i = k;
            skip_ws(&l);
            if (l.i >= l.n || l.s[l.i] != '=') return false;
        } else {
            if (!key(&l)) return false;
            skip_ws(&l);
            if (l.i >= l.n || l.s[l.i] != ':') return false;
        }
        l.i++;
        sb_puts(out, ": ");
        size_t from = out->len;
        if (!value(&l)) return false;
        if (kn) typed_string(&l, props, kname, kn, from);
        skip_ws(&l);
        if (l.i < l.n && l.s[l.i] == ',') {
            l.i++;
            continue;
        }
        if (l.i < l.n && !(style == LIT_PYTHON && is_ident_start((unsigned char)l.s[l.i]))) return false;
        if (l.i >= l.n) break;   /* (a missing comma before the next name=, as some templates write) */
    }
    sb_putc(out, '}');
    return true;
}

bool literal_value_to_json(Parser *p, const char *s, size_t n, StrBuf *out) {
    uint32_t max_depth = p->rt.lim.max_json_depth < 512 ? p->rt.lim.max_json_depth : 512;
    Lit l = {p, LIT_PYTHON, s, n, 0, out, 0, max_depth};
    size_t from = out->len;
    bool ok = value(&l);
    skip_ws(&l);
    if (ok && l.i == l.n) return true;
    out->len = from;
    return false;
}

size_t lit_scan(LitTrack *t, int style, const char *s, size_t n, uint32_t max_depth, int *r) {
    size_t i = 0;
    *r = 0;
    while (i < n) {
        if (style == LIT_PYTHON && t->quote && !t->esc) {   /* string text: to a quote or backslash */
            size_t k = i;
            while (k < n && s[k] != t->quote && s[k] != '\\') k++;
            i = k;
            if (i == n) break;
        } else if (style != LIT_PYTHON && t->in_str && !t->tok) {   /* to the next '<' */
            const char *lt = memchr(s + i, '<', n - i);
            i = lt ? (size_t)(lt - s) : n;
            if (i == n) break;
        }
        if ((*r = lit_track(t, style, (unsigned char)s[i], max_depth)) != 0) break;
        i++;
    }
    return i;
}

int lit_track(LitTrack *t, int style, unsigned char c, uint32_t max_depth) {
    if (style == LIT_PYTHON) {
        if (t->quote) {
            if (t->esc) t->esc = false;
            else if (c == '\\') t->esc = true;
            else if (c == (unsigned char)t->quote) t->quote = 0;
            return 0;
        }
        if (c == '\'' || c == '"') {
            t->quote = (char)c;
            return 0;
        }
    } else {
        const char *tok = string_token(style);
        if ((unsigned char)tok[t->tok] == c) {
            if (tok[++t->tok] == 0) {
                t->tok = 0;
                t->in_str = !t->in_str;
            }
            return 0;
        }
        t->tok = (unsigned char)tok[0] == c;
        if (t->in_str) return 0;
    }
    if (c == '(' || c == '[' || c == '{') {
        if (++t->depth > max_depth) return -1;
        return 0;
    }
    if (c == ')' || c == ']' || c == '}') {
        if (!t->depth) return -1;
        return --t->depth == 0 ? 1 : 0;
    }
    return 0;
}
