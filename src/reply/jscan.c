/* jscan.c — the incremental JSON scanner the reply formats share (RFC 8259,
 * strict): fed any chunking, it reports keys and the start and end of
 * values at the depths a format asks for, decodes strings on request, and
 * never looks back at bytes already consumed (see JScan in reply.h). */
#include "reply.h"
#include <string.h>

static const char *const JSON_LITERALS[] = {"true", "false", "null"};

static uint8_t *js_stack(Parser *p, uint32_t *max_depth) {
    static const uint32_t cap = 4096;   /* nesting bound whatever the limits say */
    uint32_t d = p->rt.lim.max_json_depth < cap ? p->rt.lim.max_json_depth : cap;
    *max_depth = d;
    if (!p->js.is_obj) p->js.is_obj = rt_alloc0(&p->rt, d + 2);
    return p->js.is_obj;
}

void js_init(Parser *p, JScan *j, uint32_t report_depth, uint32_t key_depth) {
    uint32_t max_depth;
    uint8_t *stack = js_stack(p, &max_depth);
    memset(j, 0, sizeof *j);
    j->is_obj = stack;
    j->max_depth = max_depth;
    j->report_depth = report_depth;
    j->key_depth = key_depth;
    j->st = J_VAL;
}

static void js_out(JScan *j, const char *s, size_t n) {
    if (j->in_key) {
        if (j->depth != j->key_depth) return;
        if (j->key_len + n > sizeof j->key) {
            j->key_long = true;
            return;
        }
        memcpy(j->key + j->key_len, s, n);
        j->key_len += (uint8_t)n;
    } else if (j->dec) {
        sb_put(j->dec, s, n);
    }
}

static void js_out_cp(JScan *j, uint32_t cp) {
    char buf[4];
    int n;
    if (cp < 0x80) { buf[0] = (char)cp; n = 1; }
    else if (cp < 0x800) { buf[0] = (char)(0xC0 | cp >> 6); buf[1] = (char)(0x80 | (cp & 63)); n = 2; }
    else if (cp < 0x10000) {
        buf[0] = (char)(0xE0 | cp >> 12); buf[1] = (char)(0x80 | ((cp >> 6) & 63));
        buf[2] = (char)(0x80 | (cp & 63)); n = 3;
    } else {
        buf[0] = (char)(0xF0 | cp >> 18); buf[1] = (char)(0x80 | ((cp >> 12) & 63));
        buf[2] = (char)(0x80 | ((cp >> 6) & 63)); buf[3] = (char)(0x80 | (cp & 63)); n = 4;
    }
    js_out(j, buf, (size_t)n);
}

/* A value just ended at the current depth. */
static int js_value_end(JScan *j) {
    uint32_t parent = j->depth;
    j->st = parent == 0 ? J_DONE : j->is_obj[parent] ? J_OBJ_NEXT : J_ARR_NEXT;
    if (parent <= j->report_depth) {
        j->vdepth = parent;
        return JE_VEND;
    }
    return JE_NONE;
}

static int js_close(JScan *j) {
    j->depth--;
    return js_value_end(j);
}

static int js_value_start(JScan *j, unsigned char c) {
    uint32_t parent = j->depth;
    switch (c) {
    case '{':
    case '[':
        if (j->depth >= j->max_depth) return JE_ERR;
        j->depth++;
        j->is_obj[j->depth] = c == '{';
        j->st = c == '{' ? J_OBJ_FIRST : J_ARR_FIRST;
        break;
    case '"': j->st = J_STR; j->in_key = false; break;
    case '-': j->st = J_NUM_MINUS; break;
    case '0': j->st = J_NUM_ZERO; break;
    case 't': case 'f': case 'n':
        j->st = J_LIT;
        j->hex = c == 't' ? 0 : c == 'f' ? 1 : 2;
        j->aux = 1;
        break;
    default:
        if (c < '1' || c > '9') return JE_ERR;
        j->st = J_NUM_INT;
    }
    if (parent <= j->report_depth) {
        j->vtype = (char)c;
        j->vdepth = parent;
        return JE_VSTART;
    }
    return JE_NONE;
}

static void js_key_begin(JScan *j) {
    j->in_key = true;
    j->key_len = 0;
    j->key_long = false;
    j->st = J_STR;
}

static int js_string_end(JScan *j) {
    if (j->in_key) {
        j->in_key = false;
        j->st = J_COLON;
        if (j->depth == j->key_depth) {
            j->vdepth = j->depth;
            return JE_KEY;
        }
        return JE_NONE;
    }
    j->dec = NULL;
    return js_value_end(j);
}

/* A complete \uXXXX (surrogate pairs joined; lone halves become U+FFFD,
 * as they cannot be UTF-8). */
static void js_hex_done(JScan *j) {
    uint32_t cp = j->hex;
    j->st = J_STR;
    if (j->high) {
        uint32_t high = j->high;
        j->high = 0;
        if (cp >= 0xDC00 && cp <= 0xDFFF) {
            js_out_cp(j, 0x10000 + ((high - 0xD800) << 10) + (cp - 0xDC00));
            return;
        }
        js_out_cp(j, 0xFFFD);
    }
    if (cp >= 0xD800 && cp <= 0xDBFF) {
        j->high = cp;
        j->st = J_SURR_BS;
    } else {
        js_out_cp(j, cp >= 0xDC00 && cp <= 0xDFFF ? 0xFFFD : cp);
    }
}

static int hex_value(unsigned char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

bool is_json_space(unsigned char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

int js_feed(JScan *j, const char *s, size_t n, size_t *used) {
    size_t i = 0;
    int ev = JE_NONE;
    while (i < n) {
        unsigned char c = (unsigned char)s[i];
        switch (j->st) {
        case J_VAL:
            if (is_json_space(c)) { i++; break; }
            ev = js_value_start(j, c);
            if (ev == JE_ERR) goto out;
            i++;
            if (ev) goto out;
            break;
        case J_OBJ_FIRST:
            if (is_json_space(c)) { i++; break; }
            if (c == '}') { i++; if ((ev = js_close(j))) goto out; break; }
            if (c != '"') { ev = JE_ERR; goto out; }
            i++;
            js_key_begin(j);
            break;
        case J_OBJ_KEY:
            if (is_json_space(c)) { i++; break; }
            if (c != '"') { ev = JE_ERR; goto out; }
            i++;
            js_key_begin(j);
            break;
        case J_COLON:
            if (is_json_space(c)) { i++; break; }
            if (c != ':') { ev = JE_ERR; goto out; }
            i++;
            j->st = J_VAL;
            break;
        case J_OBJ_NEXT:
        case J_ARR_NEXT:
            if (is_json_space(c)) { i++; break; }
            if (c == ',') {
                i++;
                j->st = j->st == J_OBJ_NEXT ? J_OBJ_KEY : J_VAL;
                break;
            }
            if (c != (j->st == J_OBJ_NEXT ? '}' : ']')) { ev = JE_ERR; goto out; }
            i++;
            if ((ev = js_close(j))) goto out;
            break;
        case J_ARR_FIRST:
            if (is_json_space(c)) { i++; break; }
            if (c == ']') { i++; if ((ev = js_close(j))) goto out; break; }
            j->st = J_VAL;
            break;
        case J_STR: {
            size_t k = i;
            while (k < n) {
                unsigned char d = (unsigned char)s[k];
                if (d == '"' || d == '\\' || d < 0x20) break;
                k++;
            }
            if (k > i) js_out(j, s + i, k - i);
            i = k;
            if (i == n) break;
            c = (unsigned char)s[i];
            if (c < 0x20) { ev = JE_ERR; goto out; }
            i++;
            if (c == '\\') { j->st = J_ESC; break; }
            if ((ev = js_string_end(j))) goto out;
            break;
        }
        case J_ESC: {
            char e;
            switch (c) {
            case '"': case '\\': case '/': e = (char)c; break;
            case 'b': e = '\b'; break;
            case 'f': e = '\f'; break;
            case 'n': e = '\n'; break;
            case 'r': e = '\r'; break;
            case 't': e = '\t'; break;
            case 'u': e = 0; break;
            default: ev = JE_ERR; goto out;
            }
            i++;
            if (c == 'u') {
                j->st = J_HEX;
                j->aux = 0;
                j->hex = 0;
            } else {
                js_out(j, &e, 1);
                j->st = J_STR;
            }
            break;
        }
        case J_HEX: {
            int v = hex_value(c);
            if (v < 0) { ev = JE_ERR; goto out; }
            i++;
            j->hex = j->hex * 16 + (uint32_t)v;
            if (++j->aux == 4) js_hex_done(j);
            break;
        }
        case J_SURR_BS:      /* after a high surrogate: hoping for \u + low half */
            if (c == '\\') { i++; j->st = J_SURR_U; break; }
            j->high = 0;
            js_out_cp(j, 0xFFFD);
            j->st = J_STR;
            break;
        case J_SURR_U:
            if (c == 'u') { i++; j->st = J_HEX; j->aux = 0; j->hex = 0; break; }
            j->high = 0;
            js_out_cp(j, 0xFFFD);
            j->st = J_ESC;   /* the backslash already read starts another escape */
            break;
        case J_NUM_MINUS:
            if (c == '0') j->st = J_NUM_ZERO;
            else if (is_digit(c)) j->st = J_NUM_INT;
            else { ev = JE_ERR; goto out; }
            i++;
            break;
        case J_NUM_INT:
            while (i < n && is_digit((unsigned char)s[i])) i++;
            if (i == n) break;
            c = (unsigned char)s[i];
            /* fall through */
        case J_NUM_ZERO:
            if (c == '.') { i++; j->st = J_NUM_DOT; break; }
            if (c == 'e' || c == 'E') { i++; j->st = J_NUM_E; break; }
            if ((ev = js_value_end(j))) goto out;
            break;
        case J_NUM_DOT:
            if (!is_digit(c)) { ev = JE_ERR; goto out; }
            i++;
            j->st = J_NUM_FRAC;
            break;
        case J_NUM_FRAC:
            if (is_digit(c)) { i++; break; }
            if (c == 'e' || c == 'E') { i++; j->st = J_NUM_E; break; }
            if ((ev = js_value_end(j))) goto out;
            break;
        case J_NUM_E:
            if (c == '+' || c == '-') { i++; j->st = J_NUM_ESIGN; break; }
            /* fall through */
        case J_NUM_ESIGN:
            if (!is_digit(c)) { ev = JE_ERR; goto out; }
            i++;
            j->st = J_NUM_EXP;
            break;
        case J_NUM_EXP:
            if (is_digit(c)) { i++; break; }
            if ((ev = js_value_end(j))) goto out;
            break;
        case J_LIT: {
            const char *lit = JSON_LITERALS[j->hex];
            if (c != (unsigned char)lit[j->aux]) { ev = JE_ERR; goto out; }
            i++;
            if (lit[++j->aux] == 0 && (ev = js_value_end(j))) goto out;
            break;
        }
        default:  /* J_DONE: the document is complete; nothing more is ours */
            goto out;
        }
    }
out:
    *used = i;
    return ev;
}

bool js_valid(Parser *p, const char *s, size_t n) {
    JScan j;
    js_init(p, &j, 0, 0);
    size_t i = 0;
    while (i < n) {
        size_t used;
        int ev = js_feed(&j, s + i, n - i, &used);
        i += used;
        if (ev == JE_ERR) return false;
        if (ev == JE_VEND) {
            while (i < n && is_json_space((unsigned char)s[i])) i++;
            return i == n;
        }
    }
    /* a number at the very end is complete only now */
    return j.depth == 0 && (j.st == J_NUM_ZERO || j.st == J_NUM_INT || j.st == J_NUM_FRAC ||
                            j.st == J_NUM_EXP);
}
