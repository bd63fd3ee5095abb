/* lexer.c — Jinja2's lexer, reproduced rule by rule (jinja2/lexer.py).
 *
 * Root state: text up to the first `{{`, `{%` or `{#`; the text before a
 * tag is right-stripped for `{%-`, and lstrip_blocks removes a run of pure
 * whitespace between a line start and a `{%`/`{#` tag (not `{{`, not `{%+`).
 * Tag state: tokens until the end delimiter, which only counts while
 * brackets are balanced (so `{{ {'a': 1}}}` works as in Jinja2). `-%}`
 * eats all following whitespace, `%}`/`#}` one newline (trim_blocks),
 * `+%}` nothing. */
#include "lexer.h"
#include "unicode.h"
#include "builtins.h"
#include <string.h>
#include <stdlib.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <setjmp.h>

typedef struct Lexer {
    Rt *rt;
    const char *s;
    size_t n, pos;
    size_t cur;            /* position cursor for line/column: moves forward only */
    int cur_line;
    size_t cur_ls;         /* offset of the cursor line's first byte */
    bool line_starting;    /* previous tag match ended with '\n' */
    TokenList *out;
} Lexer;

Str *lex_normalize_source(Rt *rt, const char *src, size_t len) {
    Str *s = str_alloc(rt, len);
    size_t j = 0;
    for (size_t i = 0; i < len; i++) {
        char c = src[i];
        if (c == '\r') {
            if (i + 1 < len && src[i + 1] == '\n') i++;
            c = '\n';
        }
        s->data[j++] = c;
    }
    if (j > 0 && s->data[j - 1] == '\n') j--;   /* keep_trailing_newline=False */
    s->data[j] = 0;
    s->len = j;
    return s;
}

/* Unicode-aware whitespace test at s[i]; returns its byte length or 0. */
static size_t ws_len(const char *s, size_t n, size_t i) {
    unsigned char c = (unsigned char)s[i];
    if (c < 0x80) return (c == ' ' || (c >= 9 && c <= 13) || (c >= 0x1c && c <= 0x1f)) ? 1 : 0;
    size_t j = i;
    uint32_t cp = utf8_next(s, n, &j);
    return uc_isspace(cp) ? j - i : 0;
}

/* Point runtime errors at offset `at` of the source. */
static void set_error_pos(Lexer *L, size_t at) {
    int line = 1;
    size_t ls = 0;
    for (size_t i = 0; i < at && i < L->n; i++)
        if (L->s[i] == '\n') { line++; ls = i + 1; }
    L->rt->line = line;
    L->rt->col = (int)(at - ls) + 1;
}

static _Noreturn void lex_error(Lexer *L, size_t at, const char *fmt, const char *arg) {
    set_error_pos(L, at);
    rt_throw(L->rt, CF_ERR_TEMPLATE_SYNTAX, fmt, arg);
}

/* Jinja2's f"unexpected char {source[pos]!r} at {pos}" (pos in code points). */
static _Noreturn void unexpected_char(Lexer *L, size_t at) {
    size_t j = at;
    utf8_next(L->s, L->n, &j);
    StrBuf sb;
    sb_init(L->rt, &sb, 48);
    sb_puts(&sb, "unexpected char ");
    v_write_repr(L->rt, &sb, v_str(L->rt, L->s + at, j - at));
    sb_printf(&sb, " at %zu", utf8_count(L->s, at));
    lex_error(L, at, "%s", sb_to_str(&sb)->data);
}

/* Line and column of offset `at` (>= every earlier query): linear overall. */
static void locate(Lexer *L, size_t at, int *line, int *col) {
    const char *nl;
    while (L->cur < at && (nl = memchr(L->s + L->cur, '\n', at - L->cur)) != NULL) {
        L->cur_line++;
        L->cur_ls = L->cur = (size_t)(nl - L->s) + 1;
    }
    if (L->cur < at) L->cur = at;
    *line = L->cur_line;
    *col = (int)(at - L->cur_ls) + 1;
}

/* A new zeroed token at the end of o. */
static Token *new_token(Rt *rt, TokenList *o) {
    if (o->n == o->cap) {
        size_t nc = o->cap ? o->cap * 2 : 256;
        o->t = rt_realloc(rt, o->t, o->cap * sizeof(Token), nc * sizeof(Token));
        o->cap = nc;
    }
    Token *t = &o->t[o->n++];
    memset(t, 0, sizeof *t);
    return t;
}

static Token *push_tok(Lexer *L, TokType type, size_t at, size_t n) {
    Token *t = new_token(L->rt, L->out);
    t->type = (uint8_t)type;
    t->p = L->s + at;
    t->n = n;
    locate(L, at, &t->line, &t->col);
    return t;
}

static void emit_data(Lexer *L, size_t at, size_t n) {
    if (n == 0) return;
    Token *t = push_tok(L, T_DATA, at, n);
    t->v = v_str(L->rt, L->s + at, n);
}

/* Python's text.rstrip(): length of text without trailing whitespace. */
static size_t rstrip_len(const char *s, size_t n) {
    while (n > 0) {
        size_t st = utf8_prev(s, n);
        if (!ws_len(s, n, st)) break;
        n = st;
    }
    return n;
}

/* Apply the OptionalLStrip rule to the text [at, at+n) that precedes a tag. */
static size_t strip_before_tag(Lexer *L, size_t at, size_t n, char sign, bool is_variable) {
    const char *t = L->s + at;
    if (sign == '-') return rstrip_len(t, n);
    if (sign == '+' || is_variable) return n;
    size_t l_pos = 0;
    for (size_t i = n; i > 0; i--)
        if (t[i - 1] == '\n') { l_pos = i; break; }
    if (l_pos > 0 || L->line_starting) {
        if (l_pos == n) return n;               /* \s+ needs at least one char */
        size_t i = l_pos;
        while (i < n) {
            size_t w = ws_len(t, n, i);
            if (!w) return n;
            i += w;
        }
        return l_pos;
    }
    return n;
}

static size_t skip_ws(Lexer *L, size_t i) {
    size_t w;
    while (i < L->n && (w = ws_len(L->s, L->n, i))) i += w;
    return i;
}

/* Try to match a block end at i: `+%}` | `-%}\s*` | `%}\n?` (trim_blocks).
 * Returns the end offset or 0. */
static size_t match_block_end(Lexer *L, size_t i, char close) {
    const char *s = L->s;
    size_t n = L->n;
    if (i + 3 <= n && (s[i] == '+' || s[i] == '-') && s[i + 1] == close && s[i + 2] == '}') {
        if (s[i] == '+') return i + 3;
        return skip_ws(L, i + 3);
    }
    if (i + 1 < n && s[i] == close && s[i + 1] == '}') {
        size_t e = i + 2;
        if (e < n && s[e] == '\n') e++;
        return e;
    }
    return 0;
}

static size_t match_var_end(Lexer *L, size_t i) {
    const char *s = L->s;
    size_t n = L->n;
    if (i + 2 < n && s[i] == '-' && s[i + 1] == '}' && s[i + 2] == '}') return skip_ws(L, i + 3);
    if (i + 1 < n && s[i] == '}' && s[i + 1] == '}') return i + 2;
    return 0;
}

static bool is_name_start(unsigned char c) { return c == '_' || ((c | 32) >= 'a' && (c | 32) <= 'z'); }
static bool is_name_char(unsigned char c) { return is_name_start(c) || (c >= '0' && c <= '9'); }

/* Jinja2's names are runs of \w and other identifier characters, so
 * Unicode too. The end of the non-ASCII name character at i, or i. */
static size_t name_char_end(Lexer *L, size_t i) {
    size_t j = i;
    uint32_t cp = utf8_next(L->s, L->n, &j);
    return uc_isnamechar(cp) ? j : i;
}

/* A non-ASCII name must be str.isidentifier(), as Jinja2 checks. */
static void check_identifier(Lexer *L, size_t start, size_t end) {
    size_t j = start;
    bool ok = uc_isidstart(utf8_next(L->s, end, &j));
    while (ok && j < end) ok = uc_isidcontinue(utf8_next(L->s, end, &j));
    if (!ok) lex_error(L, start, "%s", "Invalid character in identifier");
}

/* Decode a Jinja2 string literal body with Python's unicode-escape rules.
 * A bad escape is Jinja2's message: the decoder's, after its last ':'. */
static Value decode_string(Lexer *L, size_t at, size_t n) {
    const char *s = L->s + at;
    StrBuf sb;
    sb_init(L->rt, &sb, n);
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c != '\\' || i + 1 >= n) { sb_putc(&sb, c); continue; }
        char e = s[++i];
        switch (e) {
        case '\n': break;                   /* line continuation */
        case '\\': sb_putc(&sb, '\\'); break;
        case '\'': sb_putc(&sb, '\''); break;
        case '"': sb_putc(&sb, '"'); break;
        case 'a': sb_putc(&sb, 7); break;
        case 'b': sb_putc(&sb, 8); break;
        case 'f': sb_putc(&sb, 12); break;
        case 'n': sb_putc(&sb, '\n'); break;
        case 'r': sb_putc(&sb, '\r'); break;
        case 't': sb_putc(&sb, '\t'); break;
        case 'v': sb_putc(&sb, 11); break;
        case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7': {
            uint32_t v = 0;
            int k = 0;
            while (k < 3 && i < n && s[i] >= '0' && s[i] <= '7') { v = v * 8 + (uint32_t)(s[i] - '0'); i++; k++; }
            i--;
            sb_put_cp(&sb, v);
            break;
        }
        case 'x': case 'u': case 'U': {
            int digits = e == 'x' ? 2 : e == 'u' ? 4 : 8;
            uint32_t v = 0;
            for (int k = 0; k < digits; k++) {
                size_t j = i + 1 + (size_t)k;
                char h = j < n ? s[j] : 0;
                int d = (h >= '0' && h <= '9') ? h - '0' : ((h | 32) >= 'a' && (h | 32) <= 'f') ? (h | 32) - 'a' + 10 : -1;
                if (d < 0) lex_error(L, at + i, "truncated %s escape", e == 'x' ? "\\xXX" : e == 'u' ? "\\uXXXX" : "\\UXXXXXXXX");
                v = v * 16 + (uint32_t)d;
            }
            i += (size_t)digits;
            if (v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
                lex_error(L, at + i, "%s", "illegal Unicode character");
            sb_put_cp(&sb, v);
            break;
        }
        default:
            if ((unsigned char)e >= 0x80) {
                /* non-ASCII after a backslash stays as "\\" + char */
                sb_putc(&sb, '\\');
                sb_putc(&sb, e);
            } else {
                sb_putc(&sb, '\\');
                sb_putc(&sb, e);
            }
        }
    }
    return sb_to_value(&sb);
}

/* Match Jinja2's float_re / integer_re at i; returns token end or 0. */
static size_t match_digits(const char *s, size_t n, size_t i, int base) {
    /* (\d+_)*\d+ style: digits with single underscores between */
    size_t j = i;
    bool any = false;
    while (j < n) {
        char c = s[j];
        int ok = base == 10 ? (c >= '0' && c <= '9') : base == 2 ? (c == '0' || c == '1') :
                 base == 8 ? (c >= '0' && c <= '7') :
                 ((c >= '0' && c <= '9') || ((c | 32) >= 'a' && (c | 32) <= 'f'));
        if (ok) { any = true; j++; continue; }
        if (c == '_' && any && j + 1 < n) {
            char d = s[j + 1];
            int ok2 = base == 10 ? (d >= '0' && d <= '9') : base == 2 ? (d == '0' || d == '1') :
                      base == 8 ? (d >= '0' && d <= '7') :
                      ((d >= '0' && d <= '9') || ((d | 32) >= 'a' && (d | 32) <= 'f'));
            if (ok2) { j++; continue; }
        }
        break;
    }
    return any ? j : 0;
}

static size_t match_float(const char *s, size_t n, size_t i) {
    if (i > 0 && s[i - 1] == '.') return 0;
    size_t j = match_digits(s, n, i, 10);
    if (!j) return 0;
    size_t frac_end = 0;
    if (j < n && s[j] == '.') {
        size_t k = match_digits(s, n, j + 1, 10);
        if (k) frac_end = k;
    }
    size_t after = frac_end ? frac_end : j;
    if (after < n && (s[after] | 32) == 'e') {
        size_t k = after + 1;
        if (k < n && (s[k] == '+' || s[k] == '-')) k++;
        size_t e = match_digits(s, n, k, 10);
        if (e) return e;
    }
    return frac_end;
}

static void lex_number(Lexer *L, size_t *pi) {
    const char *s = L->s;
    size_t i = *pi, n = L->n;
    size_t fe = match_float(s, n, i);
    char buf[64];
    if (fe) {
        size_t k = 0;
        for (size_t j = i; j < fe && k < sizeof buf - 1; j++) if (s[j] != '_') buf[k++] = s[j];
        buf[k] = 0;
        Token *t = push_tok(L, T_FLOAT, i, fe - i);
        t->v = v_float(strtod(buf, NULL));
        *pi = fe;
        return;
    }
    int base = 10;
    size_t start = i, end;
    if (s[i] == '0' && i + 1 < n && ((s[i + 1] | 32) == 'b' || (s[i + 1] | 32) == 'o' || (s[i + 1] | 32) == 'x')) {
        base = (s[i + 1] | 32) == 'b' ? 2 : (s[i + 1] | 32) == 'o' ? 8 : 16;
        /* (_?digit)+ */
        size_t j = i + 2;
        if (j < n && s[j] == '_') j++;
        end = match_digits(s, n, j, base);
        if (!end) { base = 10; end = 0; }
        else start = j;
    } else end = 0;
    if (base == 10) {
        if (s[i] == '0') {             /* 0(_?0)* */
            size_t j = i + 1;
            while (j < n && (s[j] == '0' || (s[j] == '_' && j + 1 < n && s[j + 1] == '0'))) j++;
            end = j;
        } else {
            end = match_digits(s, n, i, 10);
        }
        start = i;
    }
    /* Python's int(text, 0): bigints in every base. A decimal literal of
     * more than 4300 digits is Python's ValueError; one in another base is
     * bounded as bigint arithmetic is (max_string / 4 decimal digits) and
     * its conversion, quadratic in its length, is charged as steps first. */
    size_t digits = 0;
    for (size_t j = start; j < end; j++) digits += s[j] != '_';
    if (base == 10 && digits > INT_MAX_STR_DIGITS) {
        set_error_pos(L, i);
        rt_throw(L->rt, CF_ERR_VALUE, "Exceeds the limit (%d digits) for integer string conversion: value has %zu "
                 "digits; use sys.set_int_max_str_digits() to increase the limit", INT_MAX_STR_DIGITS, digits);
    }
    double bits = (double)digits * (base == 10 ? 3.3219280948873623 : base == 16 ? 4 : base == 8 ? 3 : 1);
    size_t max_digits = L->rt->lim.max_string / 4;
    if (bits / 3.3219280948873623 > (double)max_digits) {
        set_error_pos(L, i);
        rt_throw(L->rt, CF_ERR_LIMIT, "integer literal of about %.3g digits exceeds max_string / 4 (%zu digits; raise it "
                 "with --max-string / cf_limits.max_string)", bits / 3.3219280948873623, max_digits);
    }
    if (bits > 64) {
        double limb_ops = (double)digits * (bits / 32 + 1) * 2;   /* reading the digits, then writing decimal */
        rt_step(L->rt, (uint64_t)(limb_ops / 32));
    }
    Token *t = push_tok(L, T_INT, i, end - i);
    if (!py_parse_int(L->rt, s + i, end - i, 0, &t->v)) lex_error(L, i, "%s", "invalid integer literal");
    *pi = end;
}

static const struct { const char *s; uint8_t op; } OPS2[] = {
    {"//", OP_FLOORDIV}, {"**", OP_POW}, {"==", OP_EQ}, {"!=", OP_NE}, {">=", OP_GE}, {"<=", OP_LE},
};

static uint8_t op1(char c) {
    switch (c) {
    case '+': return OP_ADD; case '-': return OP_SUB; case '/': return OP_DIV; case '*': return OP_MUL;
    case '%': return OP_MOD; case '~': return OP_TILDE; case '[': return OP_LBRACKET;
    case ']': return OP_RBRACKET; case '(': return OP_LPAREN; case ')': return OP_RPAREN;
    case '{': return OP_LBRACE; case '}': return OP_RBRACE; case '>': return OP_GT; case '<': return OP_LT;
    case '=': return OP_ASSIGN; case '.': return OP_DOT; case ':': return OP_COLON; case '|': return OP_PIPE;
    case ',': return OP_COMMA; case ';': return OP_SEMICOLON;
    default: return OP_NONE;
    }
}

/* Brackets nest as deep as max_parse_depth allows (the parser counts each
 * level again); the stack outgrows its inline array only on odd input. */
static char *grow_bracket_stack(Lexer *L, size_t at, char *stack, size_t *cap) {
    uint32_t max = L->rt->lim.max_parse_depth;
    if (*cap >= max) {
        set_error_pos(L, at);
        rt_throw(L->rt, CF_ERR_LIMIT, "template nesting deeper than %u (raise it with --max-parse-depth / cf_limits.max_parse_depth)", max);
    }
    size_t ncap = *cap * 2 < max ? *cap * 2 : max;
    char *grown = rt_alloc(L->rt, ncap);
    memcpy(grown, stack, *cap);
    *cap = ncap;
    return grown;
}

/* Lex the inside of a {{ }} or {% %} tag starting at i; returns the offset
 * after the end delimiter (including trimmed whitespace). */
static size_t lex_tag(Lexer *L, size_t i, bool is_block) {
    const char *s = L->s;
    size_t n = L->n;
    char stack_inline[256], *stack = stack_inline;   /* closers expected, innermost last */
    size_t depth = 0, cap = sizeof stack_inline;
    for (;;) {
        rt_step(L->rt, 1);
        if (i >= n) return n;   /* as Jinja2's lexer: the parser says what it expected */
        if (depth == 0) {
            size_t e = is_block ? match_block_end(L, i, '%') : match_var_end(L, i);
            if (e) {
                push_tok(L, is_block ? T_BLOCK_END : T_VAR_END, i, e - i);
                L->line_starting = s[e - 1] == '\n';
                return e;
            }
        }
        size_t w = ws_len(s, n, i);
        if (w) { i += w; while (i < n && (w = ws_len(s, n, i))) i += w; continue; }
        unsigned char c = (unsigned char)s[i];
        if (c >= '0' && c <= '9') { lex_number(L, &i); continue; }
        size_t name_end = is_name_start(c) ? i + 1 : c >= 0x80 ? name_char_end(L, i) : i;
        if (name_end > i) {
            size_t j = name_end;
            bool ascii = c < 0x80;
            for (;;) {
                if (j < n && is_name_char((unsigned char)s[j])) { j++; continue; }
                size_t k = j < n && (unsigned char)s[j] >= 0x80 ? name_char_end(L, j) : j;
                if (k == j) break;
                ascii = false;
                j = k;
            }
            if (!ascii) check_identifier(L, i, j);
            Token *t = push_tok(L, T_NAME, i, j - i);
            t->v = v_str(L->rt, s + i, j - i);
            i = j;
            continue;
        }
        if (c == '\'' || c == '"') {
            size_t j = i + 1;
            while (j < n && s[j] != (char)c) {
                if (s[j] == '\\' && j + 1 < n) j++;
                j++;
            }
            if (j >= n) unexpected_char(L, i);   /* an unterminated string matches no rule */
            Token *t = push_tok(L, T_STRING, i, j + 1 - i);
            t->v = decode_string(L, i + 1, j - i - 1);
            i = j + 1;
            continue;
        }
        uint8_t op = OP_NONE;
        size_t olen = 1;
        for (size_t k = 0; k < sizeof OPS2 / sizeof OPS2[0]; k++)
            if (i + 1 < n && s[i] == OPS2[k].s[0] && s[i + 1] == OPS2[k].s[1]) { op = OPS2[k].op; olen = 2; break; }
        if (op == OP_NONE) op = op1((char)c);
        if (op == OP_NONE) unexpected_char(L, i);
        if (op == OP_LBRACE || op == OP_LPAREN || op == OP_LBRACKET) {
            if (depth == cap) stack = grow_bracket_stack(L, i, stack, &cap);
            stack[depth++] = op == OP_LBRACE ? '}' : op == OP_LPAREN ? ')' : ']';
        } else if (op == OP_RBRACE || op == OP_RPAREN || op == OP_RBRACKET) {
            char want[2] = {(char)c, 0};
            if (depth == 0) lex_error(L, i, "unexpected '%s'", want);
            if (stack[depth - 1] != (char)c) {
                char msg[64];
                snprintf(msg, sizeof msg, "unexpected '%c', expected '%c'", c, stack[depth - 1]);
                lex_error(L, i, "%s", msg);
            }
            depth--;
        }
        Token *t = push_tok(L, T_OP, i, olen);
        t->op = op;
        i += olen;
    }
}

/* Match `{%[-+]?\s*raw\s*(-%}\s*|%})` at i (the `{%` position). */
static size_t match_raw_begin(Lexer *L, size_t i) {
    const char *s = L->s;
    size_t n = L->n, j = i + 2;
    if (j < n && (s[j] == '-' || s[j] == '+')) j++;
    j = skip_ws(L, j);
    if (j + 3 > n || memcmp(s + j, "raw", 3) != 0) return 0;
    j = skip_ws(L, j + 3);
    if (j + 3 <= n && s[j] == '-' && s[j + 1] == '%' && s[j + 2] == '}') return skip_ws(L, j + 3);
    if (j + 2 <= n && s[j] == '%' && s[j + 1] == '}') return j + 2;
    return 0;
}

/* Find `{%[-+]?\s*endraw\s*(+%}|-%}\s*|%}\n?)` from i; sets *tag_at, *sign. */
static size_t find_raw_end(Lexer *L, size_t i, size_t *tag_at, char *sign) {
    const char *s = L->s;
    size_t n = L->n;
    for (; i + 1 < n; i++) {
        if (s[i] != '{' || s[i + 1] != '%') continue;
        size_t j = i + 2;
        char sg = 0;
        if (j < n && (s[j] == '-' || s[j] == '+')) sg = s[j++];
        j = skip_ws(L, j);
        if (j + 6 > n || memcmp(s + j, "endraw", 6) != 0) continue;
        j = skip_ws(L, j + 6);
        size_t e = match_block_end(L, j, '%');
        if (!e) continue;
        *tag_at = i;
        *sign = sg;
        return e;
    }
    return 0;
}

static void lex_all(Rt *rt, const Str *src, TokenList *out);

void lex_tokens(Rt *rt, const Str *src, TokenList *out) {
    jmp_buf jb, *outer = rt->jb;
    if (setjmp(jb)) {
        rt->jb = outer;
        /* (a literal's ValueError is raised when the parser reaches it too) */
        if (rt->err->kind != CF_ERR_TEMPLATE_SYNTAX && rt->err->kind != CF_ERR_VALUE) longjmp(*outer, 1);
        Token *t = new_token(rt, out);
        t->type = T_ERROR;
        t->op = (uint8_t)rt->err->kind;
        t->line = rt->err->line;
        t->col = rt->err->column;
        t->p = src->data + src->len;
        t->v = v_strz(rt, rt->err->message);
        return;
    }
    rt->jb = &jb;
    lex_all(rt, src, out);
    rt->jb = outer;
}

static void lex_all(Rt *rt, const Str *src, TokenList *out) {
    Lexer L = {0};
    L.rt = rt;
    L.s = src->data;
    L.n = src->len;
    L.cur_line = 1;
    L.line_starting = true;
    L.out = out;
    const char *s = L.s;
    size_t n = L.n, pos = 0;
    while (pos < n) {
        /* find the earliest tag opener */
        size_t t = pos;
        const char *hit = NULL;
        while (t + 1 < n) {
            hit = memchr(s + t, '{', n - 1 - t);
            if (!hit) break;
            t = (size_t)(hit - s);
            char c2 = s[t + 1];
            if (c2 == '{' || c2 == '%' || c2 == '#') break;
            t++;
            hit = NULL;
        }
        if (!hit) { emit_data(&L, pos, n - pos); break; }
        char kind = s[t + 1];
        char sign = (t + 2 < n && (s[t + 2] == '-' || s[t + 2] == '+')) ? s[t + 2] : 0;
        size_t raw_end = kind == '%' ? match_raw_begin(&L, t) : 0;
        size_t keep = strip_before_tag(&L, pos, t - pos, sign, kind == '{');
        emit_data(&L, pos, keep);
        size_t body = t + 2 + (sign ? 1 : 0);
        if (raw_end) {
            size_t tag_at = 0;
            char esign = 0;
            size_t e = find_raw_end(&L, raw_end, &tag_at, &esign);
            /* a raw tag that ends the source leaves nothing for Jinja2's
             * failure rule (it needs one character): the lexer just stops */
            if (!e && raw_end >= n) break;
            if (!e) lex_error(&L, t, "%s", "Missing end of raw directive");
            L.line_starting = s[raw_end - 1] == '\n';
            size_t k = strip_before_tag(&L, raw_end, tag_at - raw_end, esign, false);
            emit_data(&L, raw_end, k);
            L.line_starting = s[e - 1] == '\n';
            pos = e;
        } else if (kind == '#') {
            /* comment: minimal text up to `+#}` | `-#}\s*` | `#}\n?` */
            size_t j = body, e = 0;
            for (; j + 1 < n; j++) {
                if ((s[j] == '+' || s[j] == '-') && j + 2 < n && s[j + 1] == '#' && s[j + 2] == '}') {
                    e = s[j] == '+' ? j + 3 : skip_ws(&L, j + 3);
                    break;
                }
                if (s[j] == '#' && s[j + 1] == '}') {
                    e = j + 2;
                    if (e < n && s[e] == '\n') e++;
                    break;
                }
            }
            /* Jinja2's lexer stops without error when `{#` (and its sign)
             * ends the source: nothing is left for its failure rule */
            if (!e && body >= n) e = n;
            if (!e) lex_error(&L, t, "%s", "Missing end of comment tag");
            L.line_starting = s[e - 1] == '\n';
            pos = e;
        } else {
            push_tok(&L, kind == '%' ? T_BLOCK_BEGIN : T_VAR_BEGIN, t, body - t);
            pos = lex_tag(&L, body, kind == '%');
        }
    }
    Token *e = push_tok(&L, T_EOF, n, 0);
    (void)e;
}
