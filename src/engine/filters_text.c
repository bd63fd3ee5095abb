/* filters_text.c — the Jinja2 filters that format or rewrite text: center,
 * indent, title, truncate, wordcount, wordwrap (Python's textwrap),
 * pprint (Python's pprint.pformat), striptags (with html.unescape),
 * urlencode, urlize, xmlattr, filesizeformat. Each follows its Python source
 * line by line, as filters.c does; they live apart because each carries a
 * Python module's algorithm of its own and chat templates seldom call them.
 * The registry that names them is in filters.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filters_shared.h"
#include "html_entities.h"
#include "unicode.h"

static const Sig SIG_CENTER = {"do_center", 0, 0, 1, {"width"}};

Value filter_center(Rt *rt, Value self, const Args *args) {
    Value a[1];
    bind(rt, args, &SIG_CENTER, a);
    Value width = or_default(a[0], v_int(80));
    return str_method_call(rt, SM_CENTER, soft_str(rt, self), 1, &width);
}

static const Sig SIG_FILESIZE = {"do_filesizeformat", 0, 0, 1, {"binary"}};

Value filter_filesizeformat(Rt *rt, Value self, const Args *args) {
    Value a[1];
    bind(rt, args, &SIG_FILESIZE, a);
    bool binary = a[0].type != VT_MISSING && v_truthy(a[0]);
    double bytes = py_float(rt, self);
    static const char *const dec[] = {"kB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB"};
    static const char *const bin[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"};
    /* base ** (i + 2) for i = 0..7, as Python's exact ints rounded to float */
    static const double dec_units[] = {1e6, 1e9, 1e12, 1e15, 1e18, 1e21, 1e24, 1e27};
    double base = binary ? 1024 : 1000;
    StrBuf sb;
    sb_init(rt, &sb, 16);
    if (bytes == 1) {
        sb_puts(&sb, "1 Byte");
    } else if (bytes < base) {
        sb_puts(&sb, v_to_str(rt, py_int_from_float(rt, bytes)).u.s->data);
        sb_puts(&sb, " Bytes");
    } else {
        int i;
        double unit = 0;
        for (i = 0; i < 8; i++) {
            unit = binary ? ldexp(1.0, 10 * (i + 2)) : dec_units[i];
            if (bytes < unit) break;
        }
        if (i == 8) i = 7;
        sb_printf(&sb, "%.1f %s", base * bytes / unit, binary ? bin[i] : dec[i]);
    }
    return sb_to_value(&sb);
}

static const Sig SIG_INDENT = {"do_indent", 0, 0, 3, {"width", "first", "blank"}};

Value filter_indent(Rt *rt, Value self, const Args *args) {
    Value a[3];
    bind(rt, args, &SIG_INDENT, a);
    Value width = or_default(a[0], v_int(4));
    bool first = a[1].type != VT_MISSING && v_truthy(a[1]);
    bool blank = a[2].type != VT_MISSING && v_truthy(a[2]);
    Value indention;
    if (width.type == VT_STR) {
        indention = width;
    } else {
        if (!is_int(width))
            rt_throw(rt, CF_ERR_TYPE, "can't multiply sequence by non-int of type '%s'", v_type_name(width));
        int64_t w = small_int(width);
        StrBuf sb;
        sb_init(rt, &sb, w > 0 ? (size_t)w : 1);
        for (int64_t i = 0; i < w; i++) sb_putc(&sb, ' ');
        indention = sb_to_value(&sb);
    }
    Value newline = v_str(rt, "\n", 1);
    if (is_markup(self)) {
        indention = v_markup(indention);
        newline = v_markup(newline);
    }
    if (self.type == VT_UNDEFINED) v_undefined_fail(rt, self);
    if (v_is_list(self))  /* list += "\n" extends it; then no splitlines */
        rt_throw(rt, CF_ERR_ATTRIBUTE, "'list' object has no attribute 'splitlines'");
    if (self.type == VT_TUPLE) rt_throw(rt, CF_ERR_TYPE, "can only concatenate tuple (not \"str\") to tuple");
    if (self.type != VT_STR)
        rt_throw(rt, CF_ERR_TYPE, "unsupported operand type(s) for +=: '%s' and 'str'", v_type_name(self));
    Value s = markup_concat(rt, self, newline);  /* the quirk that makes splitlines keep a last empty line */
    List *lines = str_method_call(rt, SM_SPLITLINES, s, 0, NULL).u.list;
    Value rv;
    if (blank) {
        rv = markup_join(rt, markup_concat(rt, newline, indention), lines);
    } else {
        rv = lines->len ? lines->items[0] : empty_str(rt);
        if (lines->len > 1) {
            List *rest = new_list(rt, lines->len);
            for (size_t i = 1; i < lines->len; i++) {
                Value line = lines->items[i];
                list_push(rt, rest, line.u.s->len ? markup_concat(rt, indention, line) : line);
            }
            rv = markup_concat(rt, rv, markup_concat(rt, newline, markup_join(rt, newline, rest)));
        }
    }
    if (first) rv = markup_concat(rt, indention, rv);
    return rv;
}

/* ---- pprint.pformat(value) (width 80, indent 1, sorted dicts) ---- */

/* scratch: where pp_format writes the one-line repr it tries first, reused */
typedef struct Pretty { Rt *rt; StrBuf *sb; StrBuf scratch; } Pretty;

/* Dict items sorted by key as pprint's _safe_key does when keys compare. */
static Keyed *pp_sorted_items(Rt *rt, const Dict *d) {
    size_t n = dict_len(d);
    Keyed *k = rt_alloc(rt, (n + 1) * sizeof(Keyed));
    bool all_str = true, all_num = true;
    for (size_t i = 0; i < n; i++) {
        k[i].key = dict_key_at(d, i);
        k[i].val = dict_val_at(d, i);
        all_str = all_str && k[i].key.type == VT_STR;
        all_num = all_num && is_number(k[i].key);
    }
    if (all_str || all_num) sort_keyed(rt, k, n, false);
    return k;
}

/* pprint's _safe_repr: repr with every nested dict's keys sorted. It stops
 * early (false) once sb holds more than `bound` bytes: a caller that only
 * asks whether the repr fits in a line needs no more than that (pprint of a
 * 100000-item list would write the whole list's repr once per level). */
static bool pp_repr(Rt *rt, StrBuf *sb, Value v, int depth, size_t bound) {
    if (depth > 200) rt_throw(rt, CF_ERR_RUNTIME, "maximum recursion depth exceeded");
    if (v.type == VT_DICT) {
        size_t n = dict_len(v.u.dict);
        Keyed *k = pp_sorted_items(rt, v.u.dict);
        sb_putc(sb, '{');
        for (size_t i = 0; i < n; i++) {
            if (i) sb_puts(sb, ", ");
            if (!pp_repr(rt, sb, k[i].key, depth + 1, bound)) return false;
            sb_puts(sb, ": ");
            if (!pp_repr(rt, sb, k[i].val, depth + 1, bound)) return false;
        }
        sb_putc(sb, '}');
        return sb->len <= bound;
    }
    if ((v.type == VT_LIST && !v.flags) || v.type == VT_TUPLE) {
        const List *l = v.u.list;
        sb_putc(sb, v.type == VT_LIST ? '[' : '(');
        for (size_t i = 0; i < l->len; i++) {
            if (i) sb_puts(sb, ", ");
            if (!pp_repr(rt, sb, l->items[i], depth + 1, bound)) return false;
        }
        if (v.type == VT_TUPLE && l->len == 1) sb_putc(sb, ',');
        sb_putc(sb, v.type == VT_LIST ? ']' : ')');
        return sb->len <= bound;
    }
    v_write_repr(rt, sb, v);
    return sb->len <= bound;
}

static Str *pp_repr_str(Rt *rt, Value v) {
    StrBuf sb;
    sb_init(rt, &sb, 32);
    pp_repr(rt, &sb, v, 0, SIZE_MAX);
    return sb_to_str(&sb);
}

static int64_t cps(const Str *s) { return (int64_t)utf8_count(s->data, s->len); }

static void pp_format(Pretty *pp, Value v, int64_t indent, int64_t allowance, int level);

static void pp_indent(StrBuf *sb, int64_t n) {
    for (int64_t i = 0; i < n; i++) sb_putc(sb, ' ');
}

/* PrettyPrinter._format_items */
static void pp_items(Pretty *pp, const List *l, int64_t indent, int64_t allowance, int level) {
    indent += 1;
    for (size_t i = 0; i < l->len; i++) {
        bool last = i + 1 == l->len;
        if (i) {
            sb_puts(pp->sb, ",\n");
            pp_indent(pp->sb, indent);
        }
        pp_format(pp, l->items[i], indent, last ? allowance : 1, level);
    }
}

static Str *repr_str(Rt *rt, Value v) {
    StrBuf sb;
    sb_init(rt, &sb, 32);
    v_write_repr(rt, &sb, v);
    return sb_to_str(&sb);
}

/* PrettyPrinter._pprint_str: a long str becomes adjacent literals, split
 * after whitespace (re.findall(r'\S*\s*')) to fit the width. */
static void pp_str(Pretty *pp, Value v, int64_t indent, int64_t allowance, int level) {
    Rt *rt = pp->rt;
    Value keepends = v_bool(true);
    List *lines = str_method_call(rt, SM_SPLITLINES, v, 1, &keepends).u.list;
    if (level == 1) {
        indent++;
        allowance++;
    }
    int64_t max_width = 80 - indent, max_width1 = max_width;
    List *chunks = new_list(rt, 4);
    Str *rep = NULL;
    for (size_t i = 0; i < lines->len; i++) {
        Value line = lines->items[i];
        bool last_line = i + 1 == lines->len;
        rep = repr_str(rt, line);
        if (last_line) max_width1 -= allowance;
        if (cps(rep) <= max_width1) {
            list_push(rt, chunks, v_str_of(rep));
            continue;
        }
        const char *s = line.u.s->data;
        size_t n = line.u.s->len, pos = 0, cur_start = 0;
        int64_t max_width2 = max_width;
        while (pos < n) {
            size_t end = pos;
            while (end < n) {               /* \S* */
                size_t k = end;
                if (uc_isspace(utf8_next(s, n, &k))) break;
                end = k;
            }
            while (end < n) {               /* \s* */
                size_t k = end;
                if (!uc_isspace(utf8_next(s, n, &k))) break;
                end = k;
            }
            if (end == n && last_line) max_width2 -= allowance;
            Str *cand = repr_str(rt, v_str(rt, s + cur_start, end - cur_start));
            if (cps(cand) > max_width2) {
                if (pos > cur_start) list_push(rt, chunks, v_str_of(repr_str(rt, v_str(rt, s + cur_start, pos - cur_start))));
                cur_start = pos;
            }
            pos = end;
        }
        if (n > cur_start) list_push(rt, chunks, v_str_of(repr_str(rt, v_str(rt, s + cur_start, n - cur_start))));
    }
    if (chunks->len == 1) {
        sb_put(pp->sb, rep->data, rep->len);
        return;
    }
    if (level == 1) sb_putc(pp->sb, '(');
    for (size_t i = 0; i < chunks->len; i++) {
        if (i) {
            sb_putc(pp->sb, '\n');
            pp_indent(pp->sb, indent);
        }
        sb_put(pp->sb, chunks->items[i].u.s->data, chunks->items[i].u.s->len);
    }
    if (level == 1) sb_putc(pp->sb, ')');
}

static void pp_format(Pretty *pp, Value v, int64_t indent, int64_t allowance, int level) {
    Rt *rt = pp->rt;
    rt_step(rt, 1);
    if (level > 200) rt_throw(rt, CF_ERR_RUNTIME, "maximum recursion depth exceeded");
    int64_t max_width = 80 - indent - allowance;
    bool is_plain = v.type == VT_STR && !is_markup(v);
    if (!(v.type == VT_DICT || v.type == VT_TUPLE || is_plain || (v.type == VT_LIST && !v.flags))) {
        pp_repr(rt, pp->sb, v, 0, SIZE_MAX);   /* printed whole, whatever its width */
        return;
    }
    /* a repr of more than 4 bytes a code point over the width cannot fit */
    StrBuf *line = &pp->scratch;
    line->len = 0;
    size_t bound = max_width > 0 ? (size_t)max_width * 4 : 0;
    if (pp_repr(rt, line, v, 0, bound) && (int64_t)utf8_count(line->p, line->len) <= max_width) {
        sb_put(pp->sb, line->p, line->len);
        return;
    }
    level++;
    if (v.type == VT_DICT) {
        size_t n = dict_len(v.u.dict);
        Keyed *k = pp_sorted_items(rt, v.u.dict);
        sb_putc(pp->sb, '{');
        int64_t ind = indent + 1;
        for (size_t i = 0; i < n; i++) {
            bool last = i + 1 == n;
            Str *krep = pp_repr_str(rt, k[i].key);
            sb_put(pp->sb, krep->data, krep->len);
            sb_puts(pp->sb, ": ");
            pp_format(pp, k[i].val, ind + cps(krep) + 2, last ? allowance + 1 : 1, level);
            if (!last) {
                sb_puts(pp->sb, ",\n");
                pp_indent(pp->sb, ind);
            }
        }
        sb_putc(pp->sb, '}');
    } else if (v.type == VT_LIST) {
        sb_putc(pp->sb, '[');
        pp_items(pp, v.u.list, indent, allowance + 1, level);
        sb_putc(pp->sb, ']');
    } else if (v.type == VT_TUPLE) {
        bool one = v.u.list->len == 1;
        sb_putc(pp->sb, '(');
        pp_items(pp, v.u.list, indent, allowance + (one ? 2 : 1), level);
        sb_puts(pp->sb, one ? ",)" : ")");
    } else {
        pp_str(pp, v, indent, allowance, level);
    }
}

static const Sig SIG_PPRINT = {"do_pprint", 0, 0, 0, {0}};

Value filter_pprint(Rt *rt, Value self, const Args *args) {
    bind(rt, args, &SIG_PPRINT, NULL);
    StrBuf sb;
    sb_init(rt, &sb, 64);
    Pretty pp = {rt, &sb, {0}};
    sb_init(rt, &pp.scratch, 512);
    pp_format(&pp, self, 0, 0, 0);
    rt_step(rt, sb.len / 8);   /* the text written, besides the operand's items */
    return sb_to_value(&sb);
}

/* ---- striptags: remove comments and tags, collapse whitespace, unescape ---- */

static bool is_hex_digit(char c) {
    return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
}

static int hex_value(char c) { return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10; }

/* html.unescape: numeric references, and HTML5's named ones (all 2231). */
static void html_unescape(StrBuf *out, const char *s, size_t n) {
    /* cp1252 meanings html.unescape gives to &#128; .. &#159; */
    static const uint16_t cp1252[32] = {
        0x20AC, 0x81, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039,
        0x0152, 0x8D, 0x017D, 0x8F, 0x90, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
        0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x9D, 0x017E, 0x0178,
    };
    size_t i = 0;
    while (i < n) {
        if (s[i] != '&') {
            sb_putc(out, s[i++]);
            continue;
        }
        size_t j = i + 1;
        if (j < n && s[j] == '#') {
            bool hex = j + 1 < n && (s[j + 1] == 'x' || s[j + 1] == 'X');
            size_t k = j + 1 + hex, start = k;
            uint64_t num = 0;
            while (k < n && (hex ? is_hex_digit(s[k]) : (s[k] >= '0' && s[k] <= '9'))) {
                if (num < 0x7fffffff) num = num * (hex ? 16 : 10) + (uint64_t)hex_value(s[k]);
                k++;
            }
            if (k > start) {
                if (k < n && s[k] == ';') k++;
                if (num >= 0x80 && num <= 0x9f) sb_put_cp(out, cp1252[num - 0x80]);
                else if (num == 0) sb_put_cp(out, 0xFFFD);
                else if (num == 0x0d) sb_putc(out, '\r');
                else if ((num >= 0xD800 && num <= 0xDFFF) || num > 0x10FFFF) sb_put_cp(out, 0xFFFD);
                else if ((num >= 1 && num <= 8) || (num >= 0x0e && num <= 0x1f) || num == 0x7f || num == 0x0b ||
                         (num >= 0xFDD0 && num <= 0xFDEF) || (num & 0xFFFE) == 0xFFFE) {
                    /* invalid code points vanish */
                } else sb_put_cp(out, (uint32_t)num);
                i = k;
                continue;
            }
        }
        /* Python takes up to 32 bytes that are not \t\n\f <&#; (and a ';'),
         * then the longest name among them and their prefixes of 2 and more */
        size_t run = 0;
        while (run < 32 && j + run < n && !strchr("\t\n\f <&#;", s[j + run]) && s[j + run]) run++;
        if (run && j + run < n && s[j + run] == ';') run++;
        const char *rep = NULL;
        size_t len = run;
        for (; len >= 2 && !(rep = html_entity(s + j, len)); len--) {}
        if (rep) {
            sb_puts(out, rep);
            i = j + len;
        } else {
            sb_putc(out, '&');
            i = j;
        }
    }
}

/* Remove every `open ... close` span the way markupsafe's loop does:
 * first occurrence, cut, search again (from where a new one could start). */
static size_t cut_spans(char *s, size_t n, const char *open, const char *close, Rt *rt) {
    size_t from = 0, olen = strlen(open), clen = strlen(close);
    for (;;) {
        char *start = NULL;
        for (size_t i = from; i + olen <= n; i++)
            if (memcmp(s + i, open, olen) == 0) {
                start = s + i;
                break;
            }
        if (!start) return n;
        char *end = NULL;
        for (char *p = start; p + clen <= s + n; p++)
            if (memcmp(p, close, clen) == 0) {
                end = p;
                break;
            }
        if (!end) return n;
        size_t a = (size_t)(start - s), b = (size_t)(end - s) + clen;
        memmove(s + a, s + b, n - b);
        n -= b - a;
        from = a >= olen - 1 ? a - (olen - 1) : 0;
        rt_step(rt, n / 1024 + 1);
    }
}

static const Sig SIG_STRIPTAGS = {"do_striptags", 0, 0, 0, {0}};

Value filter_striptags(Rt *rt, Value self, const Args *args) {
    bind(rt, args, &SIG_STRIPTAGS, NULL);
    Value v = plain_str(rt, self);
    rt_step(rt, v.u.s->len);     /* tags, words and entities: ~50 ns a byte */
    char *s = rt_alloc(rt, v.u.s->len + 1);
    memcpy(s, v.u.s->data, v.u.s->len);
    size_t n = cut_spans(s, v.u.s->len, "<!--", "-->", rt);
    n = cut_spans(s, n, "<", ">", rt);
    /* " ".join(value.split()) */
    StrBuf words;
    sb_init(rt, &words, n + 1);
    size_t i = 0;
    while (i < n) {
        size_t k = i;
        uint32_t cp = utf8_next(s, n, &k);
        if (uc_isspace(cp)) {
            i = k;
            continue;
        }
        if (words.len) sb_putc(&words, ' ');
        while (i < n) {
            k = i;
            if (uc_isspace(utf8_next(s, n, &k))) break;
            sb_put(&words, s + i, k - i);
            i = k;
        }
    }
    StrBuf out;
    sb_init(rt, &out, words.len + 1);
    html_unescape(&out, words.p, words.len);
    return sb_to_value(&out);
}

/* `-`, whitespace, and ( { [ < start a word for title (Jinja2's regex). */
static bool title_separator(uint32_t cp) {
    return cp == '-' || cp == '(' || cp == '{' || cp == '[' || cp == '<' || uc_isspace(cp);
}

/* Is the character at s[*i] a title_separator? Advances *i past it; ASCII
 * (Python's whitespace there: \t..\r, \x1c..\x1f and space) without a decode. */
static inline bool title_separator_at(const char *s, size_t n, size_t *i) {
    unsigned char c = (unsigned char)s[*i];
    if (c < 0x80) {
        (*i)++;
        return c == ' ' || c == '-' || c == '(' || c == '{' || c == '[' || c == '<' || (c >= 9 && c <= 13) ||
               (c >= 0x1c && c <= 0x1f);
    }
    return title_separator(utf8_next(s, n, i));
}

static const Sig SIG_TITLE = {"do_title", 0, 0, 0, {0}};

Value filter_title(Rt *rt, Value self, const Args *args) {
    bind(rt, args, &SIG_TITLE, NULL);
    Value v = soft_str(rt, self);
    const char *s = v.u.s->data;
    size_t n = v.u.s->len, i = 0;
    StrBuf sb;
    sb_init(rt, &sb, n + 8);
    /* a word is cased as two pieces (item[0].upper() + item[1:].lower()):
     * text of short words costs about a step a few bytes, charged up front */
    rt_step(rt, n / 4 + 1);
    size_t high = 0;
    while (high < n && (unsigned char)s[high] < 0x80) high++;
    if (high == n) {   /* ASCII: separators have no case; a letter after one (or first) is upper */
        char buf[512];
        bool after_sep = true;
        for (size_t j = 0; j < n;) {
            size_t m = 0;
            for (; j < n && m < sizeof buf; j++, m++) {
                char c = s[j];
                bool sep = title_separator((unsigned char)c);
                buf[m] = sep ? c : after_sep ? (c >= 'a' && c <= 'z' ? (char)(c - 32) : c)
                                             : (c >= 'A' && c <= 'Z' ? (char)(c + 32) : c);
                after_sep = sep;
            }
            sb_put(&sb, buf, m);
        }
        return sb_to_value(&sb);
    }
    while (i < n) {
        size_t k = i;
        bool sep = title_separator_at(s, n, &k);
        bool ascii = (unsigned char)s[i] < 0x80;
        size_t end = k;
        while (end < n) {
            size_t j = end;
            if (title_separator_at(s, n, &j) != sep) break;
            ascii = ascii && j == end + 1;
            end = j;
        }
        /* item[0].upper() + item[1:].lower(): in place for ASCII (no
         * strings a word: a big text of short words took the memory limit) */
        if (ascii) {
            char buf[256];
            for (size_t j = i; j < end;) {
                size_t m = 0;
                for (; j < end && m < sizeof buf; j++, m++)
                    buf[m] = j == i ? (s[j] >= 'a' && s[j] <= 'z' ? (char)(s[j] - 32) : s[j])
                                    : (s[j] >= 'A' && s[j] <= 'Z' ? (char)(s[j] + 32) : s[j]);
                sb_put(&sb, buf, m);
            }
            i = end;
            continue;
        }
        str_case_into(&sb, s + i, k - i, true);
        str_case_into(&sb, s + k, end - k, false);
        i = end;
    }
    return sb_to_value(&sb);
}

static const Sig SIG_TRUNCATE = {"do_truncate", 1, 0, 4, {"length", "killwords", "end", "leeway"}};

Value filter_truncate(Rt *rt, Value self, const Args *args) {
    Value a[4];
    bind(rt, args, &SIG_TRUNCATE, a);
    Value length = or_default(a[0], v_int(255));
    bool killwords = a[1].type != VT_MISSING && v_truthy(a[1]);
    Value end = a[2].type == VT_MISSING ? v_strz(rt, "...") : a[2];
    Value leeway = is_none(a[3]) ? v_int(5) : a[3];
    Value end_len = v_int(v_len(rt, end));
    StrBuf m;
    sb_init(rt, &m, 64);
    if (v_compare(rt, length, end_len, ">=") < 0) {
        sb_printf(&m, "expected length >= %lld, got ", (long long)end_len.u.i);
        v_write_str(rt, &m, length);
        rt_throw(rt, CF_ERR_ASSERTION, "%s", sb_to_str(&m)->data);
    }
    if (v_compare(rt, leeway, v_int(0), ">=") < 0) {
        sb_puts(&m, "expected leeway >= 0, got ");
        v_write_str(rt, &m, leeway);
        rt_throw(rt, CF_ERR_ASSERTION, "%s", sb_to_str(&m)->data);
    }
    if (!is_number(length) || !is_number(leeway))
        rt_throw(rt, CF_ERR_TYPE, "unsupported operand type(s) for +: '%s' and '%s'", v_type_name(length),
                 v_type_name(leeway));
    if ((double)v_len(rt, self) <= py_float(rt, length) + py_float(rt, leeway)) return self;
    if (!is_int(length))
        rt_throw(rt, CF_ERR_TYPE, "slice indices must be integers or None or have an __index__ method");
    if (self.type != VT_STR)
        rt_throw(rt, CF_ERR_ATTRIBUTE, "'%s' object has no attribute 'rsplit'", v_type_name(self));
    if (end.type != VT_STR)
        rt_throw(rt, CF_ERR_TYPE, "can only concatenate str (not \"%s\") to str", v_type_name(end));
    Value head = str_slice_chars(rt, self, 0, (size_t)(as_index(rt, length) - end_len.u.i));
    if (!killwords) {
        Value argv[2] = {v_str(rt, " ", 1), v_int(1)};
        head = str_method_call(rt, SM_RSPLIT, head, 2, argv).u.list->items[0];
    }
    return markup_concat(rt, head, end);
}

/* ---- urlencode ---- */

/* jinja2.utils.url_quote: UTF-8 percent-encoding; "/" kept unless for_qs,
 * where spaces become "+". */
static void url_quote(Rt *rt, StrBuf *sb, Value v, bool for_qs) {
    Value s = plain_str(rt, v);
    const unsigned char *p = (const unsigned char *)s.u.s->data;
    for (size_t i = 0; i < s.u.s->len; i++) {
        unsigned c = p[i];
        bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == '-' || c == '~' || (c == '/' && !for_qs);
        if (safe) sb_putc(sb, (char)c);
        else if (c == ' ' && for_qs) sb_putc(sb, '+');
        else sb_printf(sb, "%%%02X", c);
    }
}

static const Sig SIG_URLENCODE = {"do_urlencode", 0, 0, 0, {0}};

Value filter_urlencode(Rt *rt, Value self, const Args *args) {
    bind(rt, args, &SIG_URLENCODE, NULL);
    StrBuf sb;
    sb_init(rt, &sb, 32);
    bool iterable = self.type == VT_LIST || self.type == VT_TUPLE || self.type == VT_DICT || self.type == VT_UNDEFINED;
    if (self.type == VT_STR || !iterable) {
        url_quote(rt, &sb, self, false);
        return sb_to_value(&sb);
    }
    List *items;
    if (self.type == VT_DICT) {
        items = new_list(rt, dict_len(self.u.dict));
        for (size_t i = 0; i < dict_len(self.u.dict); i++)
            list_push(rt, items, tuple2(rt, dict_key_at(self.u.dict, i), dict_val_at(self.u.dict, i)));
    } else {
        items = v_iterate(rt, self);
    }
    for (size_t i = 0; i < items->len; i++) {
        Value pair = items->items[i];
        bool seq = pair.type == VT_LIST || pair.type == VT_TUPLE || pair.type == VT_STR || pair.type == VT_DICT;
        if (!seq) rt_throw(rt, CF_ERR_TYPE, "cannot unpack non-iterable %s object", v_type_name(pair));
        List *kv = v_iterate(rt, pair);
        if (kv->len > 2) rt_throw(rt, CF_ERR_VALUE, "too many values to unpack (expected 2)");
        if (kv->len < 2) rt_throw(rt, CF_ERR_VALUE, "not enough values to unpack (expected 2, got %zu)", kv->len);
        if (i) sb_putc(&sb, '&');
        url_quote(rt, &sb, kv->items[0], true);
        sb_putc(&sb, '=');
        url_quote(rt, &sb, kv->items[1], true);
    }
    return sb_to_value(&sb);
}

/* ---- wordcount / wordwrap ---- */

static bool is_word_char(uint32_t cp) { return cp == '_' || uc_isalnum(cp); }   /* re's \w */

static const Sig SIG_WORDCOUNT = {"do_wordcount", 0, 0, 0, {0}};

Value filter_wordcount(Rt *rt, Value self, const Args *args) {
    bind(rt, args, &SIG_WORDCOUNT, NULL);
    Value v = soft_str(rt, self);
    const char *s = v.u.s->data;
    size_t n = v.u.s->len, i = 0;
    int64_t count = 0;
    bool in_word = false;
    rt_step(rt, n / 1024 + 1);
    while (i < n) {
        bool w = is_word_char(utf8_next(s, n, &i));
        if (w && !in_word) count++;
        in_word = w;
    }
    return v_int(count);
}

/* textwrap works on code points; a chunk is a [start, end) range of them. */
typedef struct Chunk { size_t start, end; } Chunk;

typedef struct Wrap {
    const uint32_t *cp;  /* the line's code points */
    size_t n;
    int64_t width;
    bool break_long_words, break_on_hyphens;
} Wrap;

static bool tw_space(uint32_t c) { return c == '\t' || c == '\n' || c == 0x0b || c == 0x0c || c == '\r' || c == ' '; }
static bool tw_letter(uint32_t c) { return is_word_char(c) && !uc_isdecimal(c); }     /* [^\d\W] */
static bool tw_word_punct(uint32_t c) {                                                 /* [\w!"'&.,?] */
    return is_word_char(c) || c == '!' || c == '"' || c == '\'' || c == '&' || c == '.' || c == ',' || c == '?';
}

/* Does "-{2,}\w" start at i? */
static bool tw_dashes_then_word(const Wrap *w, size_t i) {
    size_t j = i;
    while (j < w->n && w->cp[j] == '-') j++;
    return j - i >= 2 && j < w->n && is_word_char(w->cp[j]);
}

/* End of the wordsep_re match starting at i (textwrap.TextWrapper). */
static size_t tw_match(const Wrap *w, size_t i) {
    const uint32_t *c = w->cp;
    size_t n = w->n;
    if (tw_space(c[i])) {                                 /* whitespace run */
        while (i < n && tw_space(c[i])) i++;
        return i;
    }
    if (i > 0 && tw_word_punct(c[i - 1]) && tw_dashes_then_word(w, i)) {   /* em-dash */
        while (i < n && c[i] == '-') i++;
        return i;
    }
    for (size_t j = i + 1;; j++) {                        /* word, lazily extended */
        if (j < n && c[j] == '-') {                       /* hyphenated word */
            bool behind = (j >= 2 && tw_letter(c[j - 2]) && tw_letter(c[j - 1])) ||
                          (j >= 3 && tw_letter(c[j - 3]) && c[j - 2] == '-' && tw_letter(c[j - 1]));
            size_t k = j + 1;
            bool ahead = k < n && tw_letter(c[k]) &&
                         ((k + 1 < n && tw_letter(c[k + 1])) ||
                          (k + 2 < n && c[k + 1] == '-' && tw_letter(c[k + 2])));
            if (behind && ahead) return j + 1;
        }
        if (j >= n || tw_space(c[j])) return j;           /* end of word */
        if (c[j] == '-' && tw_dashes_then_word(w, j) && tw_word_punct(c[j - 1])) return j;   /* before an em-dash */
    }
}

/* Splits the line into chunks; with out NULL only counts them, so the
 * array is sized to the chunks rather than to the code points. */
static size_t tw_split(const Wrap *w, Chunk *out) {
    size_t k = 0;
    for (size_t i = 0; i < w->n;) {
        size_t end;
        if (w->break_on_hyphens) {
            end = tw_match(w, i);
        } else {                                          /* wordsep_simple_re */
            bool sp = tw_space(w->cp[i]);
            end = i;
            while (end < w->n && tw_space(w->cp[end]) == sp) end++;
        }
        if (out) out[k] = (Chunk){i, end};
        k++;
        i = end;
    }
    return k;
}

static bool tw_blank(const Wrap *w, Chunk c) {           /* chunk.strip() == '' */
    for (size_t i = c.start; i < c.end; i++)
        if (!uc_isspace(w->cp[i])) return false;
    return true;
}

static int64_t clen(Chunk c) { return (int64_t)(c.end - c.start); }

/* TextWrapper._wrap_chunks; appends the lines of one paragraph to `lines`
 * (as Values), joined by the caller. */
static void tw_wrap(Rt *rt, const Wrap *w, Chunk *stack, size_t nst, List *lines) {
    /* stack holds the chunks reversed: the next chunk is stack[nst - 1] */
    const size_t nst0 = nst;
    Chunk *cur = rt_alloc(rt, (nst0 + 2) * sizeof(Chunk));
    bool any_line = false;
    while (nst) {
        /* each line is a new string pushed to a list: ~8 steps of allocation */
        rt_step(rt, 8);
        size_t ncur = 0;
        int64_t cur_len = 0, width = w->width;
        if (tw_blank(w, stack[nst - 1]) && any_line) nst--;
        while (nst) {
            int64_t l = clen(stack[nst - 1]);
            if (cur_len + l > width) break;
            cur[ncur++] = stack[--nst];
            cur_len += l;
        }
        if (nst && clen(stack[nst - 1]) > width) {        /* _handle_long_word */
            int64_t space_left = width < 1 ? 1 : width - cur_len;
            if (w->break_long_words) {
                Chunk ch = stack[nst - 1];
                int64_t end = space_left;
                if (w->break_on_hyphens && clen(ch) > space_left) {
                    int64_t hyphen = -1;
                    for (int64_t k = space_left - 1; k >= 0 && hyphen < 0; k--)
                        if (w->cp[ch.start + (size_t)k] == '-') hyphen = k;
                    bool non_dash = false;
                    for (int64_t k = 0; k < hyphen; k++) non_dash = non_dash || w->cp[ch.start + (size_t)k] != '-';
                    if (hyphen > 0 && non_dash) end = hyphen + 1;
                }
                if (end > clen(ch)) end = clen(ch);
                cur[ncur++] = (Chunk){ch.start, ch.start + (size_t)end};
                stack[nst - 1].start = ch.start + (size_t)end;
            } else if (ncur == 0) {
                cur[ncur++] = stack[--nst];
            }
            cur_len = 0;
            for (size_t k = 0; k < ncur; k++) cur_len += clen(cur[k]);
        }
        if (ncur && tw_blank(w, cur[ncur - 1])) ncur--;
        if (ncur) {
            StrBuf sb;
            sb_init(rt, &sb, (size_t)cur_len + 1);   /* one byte a code point, grown if wider */
            for (size_t k = 0; k < ncur; k++)
                for (size_t i = cur[k].start; i < cur[k].end; i++) sb_put_cp(&sb, w->cp[i]);
            list_push(rt, lines, sb_to_value(&sb));
            any_line = true;
        }
    }
    rt_free(rt, cur, (nst0 + 2) * sizeof(Chunk));
}

static const Sig SIG_WORDWRAP = {"do_wordwrap", 1, 0, 4, {"width", "break_long_words", "wrapstring", "break_on_hyphens"}};

Value filter_wordwrap(Rt *rt, Value self, const Args *args) {
    Value a[4];
    bind(rt, args, &SIG_WORDWRAP, a);
    Wrap w;
    w.width = a[0].type == VT_MISSING ? 79 : as_index(rt, a[0]);
    w.break_long_words = a[1].type == VT_MISSING || v_truthy(a[1]);
    Value wrapstring = is_none(a[2]) ? v_str(rt, "\n", 1) : a[2];
    /* `break_on_hyphens is True` picks the hyphen-aware splitter... */
    bool hyphen_split = a[3].type == VT_MISSING || (a[3].type == VT_BOOL && a[3].u.b);
    if (self.type == VT_UNDEFINED) v_undefined_fail(rt, self);
    if (self.type != VT_STR)
        rt_throw(rt, CF_ERR_ATTRIBUTE, "'%s' object has no attribute 'splitlines'", v_type_name(self));
    if (wrapstring.type != VT_STR)
        rt_throw(rt, CF_ERR_ATTRIBUTE, "'%s' object has no attribute 'join'", v_type_name(wrapstring));
    List *paragraphs = str_method_call(rt, SM_SPLITLINES, self, 0, NULL).u.list;
    List *joined = new_list(rt, paragraphs->len);
    for (size_t p = 0; p < paragraphs->len; p++) {
        const Str *line = paragraphs->items[p].u.s;
        size_t n = str_nchars((Str *)line);
        /* textwrap's work is a few passes over the characters (decode, split
         * into chunks, wrap, join): charged before it starts */
        rt_step(rt, n / 4);
        uint32_t *cp = rt_alloc(rt, (n + 1) * sizeof(uint32_t));
        for (size_t i = 0, k = 0; i < line->len; k++) cp[k] = utf8_next(line->data, line->len, &i);
        if (w.width <= 0) rt_throw(rt, CF_ERR_VALUE, "invalid width %lld (must be > 0)", (long long)w.width);
        w.cp = cp;
        w.n = n;
        w.break_on_hyphens = hyphen_split;
        size_t nch = tw_split(&w, NULL);
        rt_step(rt, nch / 4 + 1);
        Chunk *chunks = rt_alloc(rt, (nch + 1) * sizeof(Chunk));
        tw_split(&w, chunks);
        for (size_t i = 0, j = nch; i + 1 < j; i++, j--) {   /* chunks.reverse() */
            Chunk t = chunks[i];
            chunks[i] = chunks[j - 1];
            chunks[j - 1] = t;
        }
        /* ...while _handle_long_word only asks whether it is truthy */
        w.break_on_hyphens = a[3].type == VT_MISSING || v_truthy(a[3]);
        /* every code point that is not a space lands on a line of at most width
         * of them (when long words break): the lines list starts at that many,
         * so a wrap into more lines than max_items stops before building them */
        size_t min_lines = 4;
        if (w.break_long_words) {
            size_t solid = 0;
            for (size_t i = 0; i < n; i++) solid += !uc_isspace(cp[i]);
            if (solid / (uint64_t)w.width >= 4) min_lines = (size_t)(solid / (uint64_t)w.width);
        }
        List *lines = new_list(rt, min_lines);
        tw_wrap(rt, &w, chunks, nch, lines);
        rt_free(rt, chunks, (nch + 1) * sizeof(Chunk));   /* the lines no longer point into them */
        rt_free(rt, cp, (n + 1) * sizeof(uint32_t));
        list_push(rt, joined, markup_join(rt, wrapstring, lines));
    }
    return markup_join(rt, wrapstring, joined);
}

/* ---- xmlattr ---- */

static const Sig SIG_XMLATTR = {"do_xmlattr", 1, 0, 1, {"autospace"}};

Value filter_xmlattr(Rt *rt, Value self, const Args *args) {
    Value a[1];
    bind(rt, args, &SIG_XMLATTR, a);
    bool autospace = a[0].type == VT_MISSING || v_truthy(a[0]);
    if (self.type == VT_UNDEFINED) v_undefined_fail(rt, self);
    if (self.type != VT_DICT)
        rt_throw(rt, CF_ERR_ATTRIBUTE, "'%s' object has no attribute 'items'", v_type_name(self));
    StrBuf sb;
    sb_init(rt, &sb, 64);
    const Dict *d = self.u.dict;
    bool any = false;
    for (size_t i = 0; i < dict_len(d); i++) {
        Value key = dict_key_at(d, i), val = dict_val_at(d, i);
        if (val.type == VT_NONE || val.type == VT_UNDEFINED) continue;
        if (key.type != VT_STR)
            rt_throw(rt, CF_ERR_TYPE, "expected string or bytes-like object, got '%s'", v_type_name(key));
        for (size_t k = 0; k < key.u.s->len; k++) {
            char c = key.u.s->data[k];
            if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' || c == '/' || c == '>' || c == '=') {
                StrBuf m;
                sb_init(rt, &m, 64);
                v_write_repr(rt, &m, plain_str(rt, key));
                rt_throw(rt, CF_ERR_VALUE, "Invalid character in attribute name: %s", sb_to_str(&m)->data);
            }
        }
        if (any || autospace) sb_putc(&sb, ' ');
        Value ek = markup_escape(rt, key), ev = markup_escape(rt, val);
        sb_put(&sb, ek.u.s->data, ek.u.s->len);
        sb_puts(&sb, "=\"");
        sb_put(&sb, ev.u.s->data, ev.u.s->len);
        sb_putc(&sb, '"');
        any = true;
    }
    Value r = sb_to_value(&sb);
    return interp_autoescape(rt) ? v_markup(r) : r;   /* (keys and values are escaped already) */
}

/* ---- urlize (jinja2.utils.urlize with the default policies) ---- */

static bool has_prefix(const char *s, size_t n, const char *p) {
    size_t k = strlen(p);
    return n >= k && memcmp(s, p, k) == 0;
}

static bool has_prefix_ci(const char *s, size_t n, const char *p) {
    size_t k = strlen(p);
    if (n < k) return false;
    for (size_t i = 0; i < k; i++)
        if ((s[i] | 0x20) != p[i]) return false;
    return true;
}

static bool url_label_char(uint32_t c) { return is_word_char(c) || c == '%' || c == '-'; }   /* [\w%-] */
static bool ascii_alpha(char c) { return (c | 0x20) >= 'a' && (c | 0x20) <= 'z'; }

/* After the host: (?::\d{1,5})?(?:[/?#]\S*)?$ */
static bool url_tail_ok(const char *s, size_t n, size_t i) {
    if (i < n && s[i] == ':') {
        size_t d = i + 1;
        while (d < n && d - i <= 5 && s[d] >= '0' && s[d] <= '9') d++;
        if (d - i - 1 >= 1 && d - i - 1 <= 5) {
            size_t j = d;
            if (j == n || s[j] == '/' || s[j] == '?' || s[j] == '#') return true;
        }
    }
    return i == n || s[i] == '/' || s[i] == '?' || s[i] == '#';
}

/* jinja2.utils._http_re, alternative by alternative. */
static bool url_match(const char *s, size_t n) {
    bool scheme = has_prefix_ci(s, n, "https://") || has_prefix_ci(s, n, "http://");
    size_t start = scheme ? (has_prefix_ci(s, n, "https://") ? 8 : 7) : has_prefix_ci(s, n, "www.") ? 4 : 0;
    /* host: labels of [\w%-] separated by dots */
    size_t i = start, hend;
    while (i < n) {
        size_t k = i;
        uint32_t c = utf8_next(s, n, &k);
        if (!(url_label_char(c) || c == '.')) break;
        i = k;
    }
    hend = i;
    const char *h = s + start;
    size_t hn = hend - start;
    size_t last_dot = hn;
    for (size_t k = 0; k < hn; k++)
        if (h[k] == '.') last_dot = k;
    bool labels_ok = true;  /* every label before the last non-empty */
    for (size_t k = 0, ls = 0; k <= hn; k++) {
        if (k == hn || h[k] == '.') {
            if (k < hn && k == ls) labels_ok = false;
            ls = k + 1;
        }
    }
    if (start && labels_ok && url_tail_ok(s, n, hend)) {
        const char *tld = last_dot == hn ? h : h + last_dot + 1;
        size_t tn = last_dot == hn ? hn : hn - last_dot - 1;
        bool letters = tn >= 2 && tn <= 63;
        for (size_t k = 0; k < tn && letters; k++) letters = ascii_alpha(tld[k]);
        bool idna = tn >= 6 && tn <= 63 && has_prefix_ci(tld, tn, "xn--");
        if (letters || idna) return true;
    }
    if (!start && labels_ok && last_dot < hn && url_tail_ok(s, n, hend)) {
        static const char *const tlds[] = {"com", "net", "int", "edu", "gov", "org", "info", "mil"};
        const char *tld = h + last_dot + 1;
        size_t tn = hn - last_dot - 1;
        bool known = false;
        for (size_t k = 0; k < 8; k++)
            if (strlen(tlds[k]) == tn && has_prefix_ci(tld, tn, tlds[k])) known = true;
        bool long_enough = true;
        for (size_t k = 0, ls = 0; k < last_dot + 1; k++)
            if (h[k] == '.') {
                size_t len = utf8_count(h + ls, k - ls);
                if (len < 2 || len > 63) long_enough = false;
                ls = k + 1;
            }
        if (known && long_enough) return true;
    }
    if (scheme) {  /* IPv4 or [IPv6] */
        size_t k = start, groups = 0;
        bool ok = true;
        while (ok && groups < 4) {
            size_t d = k;
            while (d < n && d - k < 4 && s[d] >= '0' && s[d] <= '9') d++;
            if (d == k || d - k > 3) ok = false;
            k = d;
            groups++;
            if (ok && groups < 4) {
                if (k < n && s[k] == '.') k++;
                else ok = false;
            }
        }
        if (ok && url_tail_ok(s, n, k)) return true;
        if (start < n && s[start] == '[') {
            size_t e = start + 1, colons = 0;
            while (e < n && (is_hex_digit(s[e]) || s[e] == ':')) colons += s[e++] == ':';
            if (e < n && s[e] == ']' && colons >= 2 && url_tail_ok(s, n, e + 1)) return true;
        }
    }
    return false;
}

/* ^\S+@\w[\w.-]*\.\w+$ */
static bool email_match(const char *s, size_t n) {
    for (size_t at = 1; at < n; at++) {
        if (s[at] != '@') continue;
        const char *r = s + at + 1;
        size_t rn = n - at - 1, i = 0;
        if (!rn) continue;
        if (!is_word_char(utf8_next(r, rn, &i))) continue;
        bool ok = true;
        size_t last_dot = 0;
        while (i < rn && ok) {
            size_t k = i;
            uint32_t c = utf8_next(r, rn, &k);
            if (c == '.') last_dot = i;
            else if (!(is_word_char(c) || c == '-')) ok = false;
            i = k;
        }
        if (!ok || !last_dot || last_dot + 1 >= rn) continue;
        bool tail = true;
        for (size_t k = last_dot + 1; k < rn && tail;) tail = is_word_char(utf8_next(r, rn, &k));
        if (tail) return true;
    }
    return false;
}

static size_t count_of(const char *s, size_t n, const char *needle) {
    size_t k = strlen(needle), c = 0;
    for (size_t i = 0; i + k <= n;) {
        if (memcmp(s + i, needle, k) == 0) {
            c++;
            i += k;
        } else {
            i++;
        }
    }
    return c;
}

static const Sig SIG_URLIZE = {"do_urlize", 1, 0, 5, {"trim_url_limit", "nofollow", "target", "rel", "extra_schemes"}};

static void put_link_text(StrBuf *sb, const char *s, size_t n, int64_t trim) {
    size_t len = utf8_count(s, n);
    if (trim >= 0 && (int64_t)len > trim) {
        sb_put(sb, s, utf8_offset(s, n, (size_t)trim));
        sb_puts(sb, "...");
    } else {
        sb_put(sb, s, n);
    }
}

Value filter_urlize(Rt *rt, Value self, const Args *args) {
    Value a[5];
    bind(rt, args, &SIG_URLIZE, a);
    int64_t trim = is_none(a[0]) ? -1 : as_index(rt, a[0]);
    /* rel: the given words, nofollow, and the policy's "noopener", sorted */
    bool nofollow = a[1].type != VT_MISSING && v_truthy(a[1]);
    Value relv = is_none(a[3]) ? empty_str(rt) : plain_str(rt, a[3]);
    List *given = str_method_call(rt, SM_SPLIT, relv, 0, NULL).u.list;
    StrBuf rel;
    sb_init(rt, &rel, 32);
    List *parts = new_list(rt, given->len + 2);
    for (size_t i = 0; i < given->len; i++) list_push(rt, parts, given->items[i]);
    if (nofollow) list_push(rt, parts, v_strz(rt, "nofollow"));
    list_push(rt, parts, v_strz(rt, "noopener"));
    List *sorted = sorted_list(rt, parts, NULL, false);
    for (size_t i = 0; i < sorted->len; i++) {
        bool dup = false;
        for (size_t k = 0; k < i; k++) dup = dup || v_equal(sorted->items[k], sorted->items[i]);
        if (dup) continue;
        if (rel.len) sb_putc(&rel, ' ');
        sb_put(&rel, sorted->items[i].u.s->data, sorted->items[i].u.s->len);
    }
    StrBuf ab;
    sb_init(rt, &ab, 64);
    Value erel = markup_escape(rt, sb_to_value(&rel));
    sb_printf(&ab, " rel=\"%s\"", erel.u.s->data);
    if (!is_none(a[2]) && v_truthy(a[2])) sb_printf(&ab, " target=\"%s\"", markup_escape(rt, a[2]).u.s->data);
    Str *attrs = sb_to_str(&ab);
    List *schemes = is_none(a[4]) ? NULL : v_iterate(rt, a[4]);

    Value text = markup_escape(rt, self);
    const char *s = text.u.s->data;
    size_t n = text.u.s->len, i = 0;
    StrBuf out;
    sb_init(rt, &out, n + 32);
    rt_step(rt, n + 1);          /* word by word, ~50 ns a byte */
    while (i < n) {
        size_t k = i;
        bool sp = uc_isspace(utf8_next(s, n, &k));
        size_t end = i;
        while (end < n) {
            size_t j = end;
            if (uc_isspace(utf8_next(s, n, &j)) != sp) break;
            end = j;
        }
        if (sp) {
            sb_put(&out, s + i, end - i);
            i = end;
            continue;
        }
        const char *w = s + i;
        size_t wn = end - i;
        i = end;
        /* head: ^([(<]|&lt;)+ */
        size_t h = 0;
        for (;;) {
            if (h < wn && (w[h] == '(' || w[h] == '<')) h++;
            else if (has_prefix(w + h, wn - h, "&lt;")) h += 4;
            else break;
        }
        const char *m = w + h;
        size_t mn = wn - h, tail = 0;
        /* tail: ([)>.,\n]|&gt;)+$ */
        for (;;) {
            if (tail < mn && strchr(")>.,\n", m[mn - tail - 1]) && m[mn - tail - 1]) tail++;
            else if (mn - tail >= 4 && memcmp(m + mn - tail - 4, "&gt;", 4) == 0) tail += 4;
            else break;
        }
        size_t core = mn - tail;
        /* move closing brackets back from the tail to balance the middle */
        static const char *const pairs[][2] = {{"(", ")"}, {"<", ">"}, {"&lt;", "&gt;"}};
        for (int p = 0; p < 3; p++) {
            size_t opens = count_of(m, core, pairs[p][0]);
            if (opens <= count_of(m, core, pairs[p][1])) continue;
            size_t moves = count_of(m + core, mn - core, pairs[p][1]);
            if (moves > opens) moves = opens;
            for (size_t t = 0; t < moves; t++) {
                const char *cl = pairs[p][1];
                size_t cn = strlen(cl), at = core;
                while (at + cn <= mn && memcmp(m + at, cl, cn) != 0) at++;
                core = at + cn;
            }
        }
        sb_put(&out, w, h);
        if (url_match(m, core)) {
            bool has_scheme = has_prefix(m, core, "https://") || has_prefix(m, core, "http://");
            sb_printf(&out, "<a href=\"%s", has_scheme ? "" : "https://");
            sb_put(&out, m, core);
            sb_printf(&out, "\"%s>", attrs->data);
            put_link_text(&out, m, core, trim);
            sb_puts(&out, "</a>");
        } else if (has_prefix(m, core, "mailto:") && email_match(m + 7, core - 7)) {
            sb_puts(&out, "<a href=\"");
            sb_put(&out, m, core);
            sb_puts(&out, "\">");
            sb_put(&out, m + 7, core - 7);
            sb_puts(&out, "</a>");
        } else if (memchr(m, '@', core) && !has_prefix(m, core, "www.") && !(core && m[0] == '@') &&
                   !memchr(m, ':', core) && email_match(m, core)) {
            sb_puts(&out, "<a href=\"mailto:");
            sb_put(&out, m, core);
            sb_puts(&out, "\">");
            sb_put(&out, m, core);
            sb_puts(&out, "</a>");
        } else {
            bool linked = false;
            for (size_t q = 0; schemes && q < schemes->len && !linked; q++) {
                Value sc = schemes->items[q];
                if (sc.type != VT_STR) continue;
                size_t sn = sc.u.s->len;
                if (core != sn && has_prefix(m, core, sc.u.s->data) && sn <= core) {
                    sb_puts(&out, "<a href=\"");
                    sb_put(&out, m, core);
                    sb_printf(&out, "\"%s>", attrs->data);
                    sb_put(&out, m, core);
                    sb_puts(&out, "</a>");
                    linked = true;
                }
            }
            if (!linked) sb_put(&out, m, core);
        }
        sb_put(&out, m + core, mn - core);
    }
    Value r = sb_to_value(&out);
    return interp_autoescape(rt) ? v_markup(r) : r;   /* (its words are escaped already) */
}
