/* xmltree.c — an argument value written as XML elements named by their
 * keys (MiniMax M3's `]<]minimax[>[<city>Paris]<]minimax[>[</city>`, each
 * tag after a prefix token; a list as <item> elements), turned into JSON
 * typed by the parameter's JSON schema: elements named `item` are an
 * array, other elements an object, text a scalar (the raw text where the
 * schema admits a string, else JSON when it parses, else the text). */
#include <string.h>
#include "reply.h"

typedef struct Tree {
    Parser *p;
    const char *prefix, *item;
    size_t prefix_len;
    uint32_t max_depth;
} Tree;

static Value schema_key(Value schema, const char *key) {
    Value v = v_none();
    if (schema.type == VT_DICT) dict_get_str(schema.u.dict, key, strlen(key), &v);
    return v;
}

/* A tag at s[0..n) (after the prefix): '<' ['/'] NAME '>'. Returns its
 * length, 0 when it is none; *close and the name's span are set. */
static size_t tag_at(const char *s, size_t n, bool *close, const char **name, size_t *name_len) {
    if (!n || s[0] != '<') return 0;
    size_t k = 1;
    *close = k < n && s[k] == '/';
    if (*close) k++;
    size_t from = k;
    while (k < n && s[k] != '>' && s[k] != '<' && (unsigned char)s[k] >= 0x20) k++;
    if (k == n || s[k] != '>' || k == from) return 0;
    *name = s + from;
    *name_len = k - from;
    return k + 1;
}

static bool starts_element(const Tree *t, const char *s, size_t n) {
    while (n && is_space((unsigned char)*s)) s++, n--;
    return n > t->prefix_len && memcmp(s, t->prefix, t->prefix_len) == 0 && s[t->prefix_len] == '<' &&
           s[t->prefix_len + 1] != '/';
}

static bool value_json(Tree *t, const char *s, size_t n, Value schema, StrBuf *out, uint32_t depth);

/* Children s[0..n): PREFIX<name>...PREFIX</name> in a row (whitespace
 * between them is layout), as an object or, all named `item`, an array. */
static bool elements_json(Tree *t, const char *s, size_t n, Value schema, StrBuf *out, uint32_t depth) {
    size_t at = 0, count = 0;
    bool array = false;
    while (at < n) {
        while (at < n && is_space((unsigned char)s[at])) at++;
        if (at == n) break;
        bool close;
        const char *name;
        size_t name_len, len;
        if (n - at < t->prefix_len || memcmp(s + at, t->prefix, t->prefix_len) != 0) return false;
        len = tag_at(s + at + t->prefix_len, n - at - t->prefix_len, &close, &name, &name_len);
        if (!len || close) return false;
        bool item = name_len == strlen(t->item) && memcmp(name, t->item, name_len) == 0;
        if (count && item != array) return false;   /* items and keys mixed */
        array = item;
        size_t body = at + t->prefix_len + len, k = body, nested = 0, end = 0;
        /* its closer: the same name's, elements of that name inside counted */
        while (k < n && !end) {
            if (n - k > t->prefix_len && memcmp(s + k, t->prefix, t->prefix_len) == 0) {
                bool c;
                const char *nm;
                size_t nl, tl = tag_at(s + k + t->prefix_len, n - k - t->prefix_len, &c, &nm, &nl);
                if (tl && nl == name_len && memcmp(nm, name, nl) == 0) {
                    if (!c) nested++;
                    else if (nested) nested--;
                    else end = k;
                }
                k += t->prefix_len + (tl ? tl : 0);
                continue;
            }
            k++;
        }
        if (!end) return false;
        sb_putc(out, count++ ? ',' : array ? '[' : '{');
        Value child;
        if (array) {
            child = schema_key(schema, "items");
        } else {
            sb_putc(out, '"');
            json_escape_into(out, name, name_len);
            sb_puts(out, "\":");
            Value props = schema_key(schema, "properties");
            child = v_none();
            if (props.type == VT_DICT) dict_get_str(props.u.dict, name, name_len, &child);
        }
        if (!value_json(t, s + body, end - body, child, out, depth + 1)) return false;
        bool c;
        const char *nm;
        size_t nl;
        at = end + t->prefix_len + tag_at(s + end + t->prefix_len, n - end - t->prefix_len, &c, &nm, &nl);
    }
    if (!count) return false;
    sb_putc(out, array ? ']' : '}');
    return true;
}

static bool value_json(Tree *t, const char *s, size_t n, Value schema, StrBuf *out, uint32_t depth) {
    if (depth > t->max_depth) return false;
    size_t mark = out->len;
    if (starts_element(t, s, n)) {
        if (elements_json(t, s, n, schema, out, depth)) return true;
        out->len = mark;   /* not elements after all: the text */
    }
    Value type = schema_key(schema, "type");
    bool blank = true;
    for (size_t k = 0; k < n && blank; k++) blank = is_space((unsigned char)s[k]);
    if (blank && type.type == VT_STR && (str_eqz(type.u.s, "array") || str_eqz(type.u.s, "object"))) {
        sb_puts(out, str_eqz(type.u.s, "array") ? "[]" : "{}");   /* an empty list or object prints nothing */
        return true;
    }
    if (!schema_allows_string(schema)) {
        const char *v = s;
        size_t m = n;
        while (m && is_space((unsigned char)*v)) v++, m--;
        while (m && is_space((unsigned char)v[m - 1])) m--;
        if (m && js_valid(t->p, v, m)) {
            sb_put(out, v, m);
            return true;
        }
    }
    sb_putc(out, '"');
    json_escape_into(out, s, n);
    sb_putc(out, '"');
    return true;
}

bool xml_tree_to_json(Parser *p, const char *s, size_t n, const char *prefix, const char *item, Value schema,
                      StrBuf *out) {
    Tree t = {p, prefix, item, strlen(prefix), p->rt.lim.max_json_depth < 64 ? p->rt.lim.max_json_depth : 64};
    size_t mark = out->len;
    if (value_json(&t, s, n, schema, out, 0)) return true;
    out->len = mark;
    return false;
}
