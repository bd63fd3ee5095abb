/* loader.c — template sources: a template file, a tokenizer_config.json, a
 * model folder, a GGUF file or a built-in name, told apart by content.
 *
 * Each source yields a set of candidate templates (one unnamed template, or
 * named ones) plus special tokens; the request (template_name, has_tools)
 * then picks one as transformers' apply_chat_template does. Work happens in
 * an arena with errors unwinding by longjmp, like a render; only the final
 * cf_source is malloc'd. Files and folders opened along the way are kept in
 * the Loader so an unwind can close them. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "engine/json.h"
#include "loader.h"
#include "engine/unicode.h"

typedef struct Candidate {
    const char *name;     /* NULL for the single unnamed template */
    const char *text;
    size_t len;
} Candidate;

typedef struct Loader {
    Rt *rt;
    cf_load_options opt;
    const char *origin;       /* what the user named, for messages */
    const char *kind;
    Candidate *cands;
    size_t ncands, cap;       /* cands in the order added (see add_candidate) */
    bool repairable;          /* a plain text file: web-copy repair applies */
    const char *builtin_name;
    StrBuf notes;
    cf_context *tokens;       /* owned until handed to the cf_source */
    FILE *file;               /* open resources, closed on any exit */
    DIR *dir;
    GgufMeta gguf;
    bool in_gguf;             /* a throw now carries gguf.error_offset */
    bool has_error_offset;    /* the failure has a byte offset: error_offset */
    size_t error_offset;
} Loader;

typedef void (*LoadFn)(Loader *L, const void *arg);

/* transformers 5.x SPECIAL_TOKENS_ATTRIBUTES: the named special tokens. */
static const char *const NAMED_TOKENS[] = {
    "bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token",
};

static const char CHAT_TEMPLATE_FILE[] = "chat_template.jinja";
static const char CHAT_TEMPLATE_DIR[] = "additional_chat_templates";
static const char CONFIG_FILE[] = "tokenizer_config.json";
static const char SPECIAL_TOKENS_MAP_FILE[] = "special_tokens_map.json";

/* ---- small helpers -------------------------------------------------------- */

static bool ends_with(const char *s, size_t n, const char *suffix) {
    size_t k = strlen(suffix);
    return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

static char *path_join(Loader *L, const char *dir, const char *name) {
    StrBuf sb;
    sb_init(L->rt, &sb, 0);
    sb_puts(&sb, dir);
    if (sb.len && sb.p[sb.len - 1] != '/') sb_putc(&sb, '/');
    sb_puts(&sb, name);
    return sb_to_str(&sb)->data;
}

static void close_resources(Loader *L) {
    if (L->file) fclose(L->file);
    if (L->dir) closedir(L->dir);
    L->file = NULL;
    L->dir = NULL;
}

/* Python's UnicodeDecodeError wording for the bad sequence at s[at]. */
_Noreturn static void throw_bad_utf8(Loader *L, const char *s, size_t n, size_t at, const char *where) {
    unsigned char b = (unsigned char)s[at];
    int need = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : 2;
    const char *why = "invalid continuation byte";
    if (b < 0xC2 || b > 0xF4) {
        why = "invalid start byte";
    } else if (at + (size_t)need > n) {
        bool rest_ok = true;
        for (size_t i = at + 1; i < n; i++) rest_ok &= ((unsigned char)s[i] & 0xC0) == 0x80;
        if (rest_ok) why = "unexpected end of data";
    }
    L->has_error_offset = true;
    L->error_offset = at;
    rt_throw(L->rt, CF_ERR_UNICODE, "%s: 'utf-8' codec can't decode byte 0x%02x in position %zu: %s",
             where, b, at, why);
}

static void check_utf8(Loader *L, const char *s, size_t n, const char *where) {
    size_t bad;
    if (!utf8_validate(s, n, &bad)) throw_bad_utf8(L, s, n, bad, where);
}

/* Python reads text files with universal newlines: "\r\n" and a lone "\r"
 * become "\n" (transformers reads chat_template.jinja that way, and so does
 * the reference renderer). In place; returns the new length. */
static size_t universal_newlines(char *s, size_t n) {
    size_t w = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\r') {
            s[w++] = '\n';
            if (i + 1 < n && s[i + 1] == '\n') i++;
        } else {
            s[w++] = s[i];
        }
    }
    s[w] = '\0';
    return w;
}

/* Read the rest of L->file into the arena (bounded by max_json_bytes). */
static char *slurp(Loader *L, const char *path, size_t *len_out) {
    size_t cap = 1 << 16, len = 0, limit = L->rt->lim.max_json_bytes;
    char *buf = rt_alloc(L->rt, cap + 1);
    for (;;) {
        if (len == cap) {
            if (cap >= limit) rt_throw(L->rt, CF_ERR_LIMIT, "%s: file larger than %zu bytes", path, limit);
            size_t ncap = cap * 2 > limit ? limit : cap * 2;
            buf = rt_realloc(L->rt, buf, len, ncap + 1);
            cap = ncap;
        }
        size_t got = fread(buf + len, 1, cap - len, L->file);
        len += got;
        if (got == 0) break;
    }
    if (ferror(L->file)) rt_throw(L->rt, CF_ERR_IO, "%s: read error", path);
    buf[len] = '\0';
    *len_out = len;
    return buf;
}

/* Open a file for reading; NULL when it does not exist and `optional`. */
static FILE *open_file(Loader *L, const char *path, bool optional) {
    FILE *f = fopen(path, "rb");
    if (!f && !(optional && errno == ENOENT)) {
        rt_throw(L->rt, CF_ERR_IO, "[Errno %d] %s: '%s'", errno, strerror(errno), path);
    }
    return f;
}

/* A whole text file, checked as UTF-8, newlines as Python reads them.
 * NULL if optional and missing. */
static char *read_text_file(Loader *L, const char *path, bool optional, size_t *len) {
    L->file = open_file(L, path, optional);
    if (!L->file) return NULL;
    char *text = slurp(L, path, len);
    close_resources(L);
    check_utf8(L, text, *len, path);
    *len = universal_newlines(text, *len);
    return text;
}

/* ---- candidates -------------------------------------------------------------- */

/* Add a template. Names may repeat: the last one added under a name is the
 * one that counts (a Python dict built from the list keeps the last). A
 * config may list 300k templates, so nothing here looks names up: only the
 * two or three names a request asks for are ever searched. */
static void add_candidate(Loader *L, const char *name, const char *text, size_t len) {
    if (L->ncands == L->cap) {
        size_t cap = L->cap ? L->cap * 2 : 4;
        L->cands = rt_realloc(L->rt, L->cands, L->ncands * sizeof *L->cands, cap * sizeof *L->cands);
        L->cap = cap;
    }
    L->cands[L->ncands++] = (Candidate){name, text, len};
}

/* Room for n more candidates: a config's list of 300k templates fills an
 * array sized once instead of doubled 17 times. */
static void reserve_candidates(Loader *L, size_t n) {
    if (L->cap - L->ncands < n) {
        size_t cap = L->ncands + n;
        L->cands = rt_realloc(L->rt, L->cands, L->ncands * sizeof *L->cands, cap * sizeof *L->cands);
        L->cap = cap;
    }
}

/* The last candidate named `name`, or NULL. */
static const Candidate *find_candidate(const Loader *L, const char *name) {
    for (size_t i = L->ncands; i-- > 0;) {
        if (L->cands[i].name && strcmp(L->cands[i].name, name) == 0) return &L->cands[i];
    }
    return NULL;
}

static int compare_strings(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* An error message holds sizeof(cf_error.message) bytes and each name listed
 * in it takes at least 2 (", "): no more distinct names than that can show. */
enum { SHOWN_NAMES = sizeof(((cf_error *)0)->message) };
_Static_assert((SHOWN_NAMES & (SHOWN_NAMES - 1)) == 0, "NamePick's set has a power of two slots");

/* The distinct names kept so far: a max-heap (the largest at 0, the next to
 * go) and a set of the same names (linear probing, twice their number of
 * slots) that tells a repeat at once. */
typedef struct NamePick {
    const char **heap;
    size_t n, keep;
    const char **slots;
    size_t mask;
} NamePick;

static size_t name_hash(const char *s) {
    size_t h = 2166136261u;   /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

/* The slot holding name, or the empty slot where it would go. */
static size_t pick_slot(const NamePick *p, const char *name) {
    size_t i = name_hash(name) & p->mask;
    while (p->slots[i] && strcmp(p->slots[i], name) != 0) i = (i + 1) & p->mask;
    return i;
}

/* Empty slot i, moving back the names after it that probed past it. */
static void pick_unslot(NamePick *p, size_t i) {
    for (size_t j = (i + 1) & p->mask; p->slots[j]; j = (j + 1) & p->mask) {
        size_t home = name_hash(p->slots[j]) & p->mask;
        bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
        if (!stays) {
            p->slots[i] = p->slots[j];
            i = j;
        }
    }
    p->slots[i] = NULL;
}

static void heap_sift_down(const char **heap, size_t n, size_t i) {
    for (;;) {
        size_t big = i, l = 2 * i + 1, r = l + 1;
        if (l < n && strcmp(heap[l], heap[big]) > 0) big = l;
        if (r < n && strcmp(heap[r], heap[big]) > 0) big = r;
        if (big == i) return;
        const char *t = heap[i];
        heap[i] = heap[big];
        heap[big] = t;
        i = big;
    }
}

/* Offer a name: kept when it is new and among the `keep` smallest so far. */
static void pick_offer(NamePick *p, const char *name) {
    if (p->n == p->keep && strcmp(name, p->heap[0]) >= 0) return;
    size_t at = pick_slot(p, name);
    if (p->slots[at]) return;   /* a repeat */
    p->slots[at] = name;
    if (p->n < p->keep) {
        p->heap[p->n++] = name;
        if (p->n == p->keep) {
            for (size_t k = p->n / 2; k-- > 0;) heap_sift_down(p->heap, p->n, k);
        }
        return;
    }
    pick_unslot(p, pick_slot(p, p->heap[0]));
    p->heap[0] = name;
    heap_sift_down(p->heap, p->n, 0);
}

/* Names of the candidates for an error message: sorted and distinct as
 * Python prints sorted(dict), ['a', "it's"] (python_list) or a, it's. Only
 * the first bytes show: one pass keeps the smallest names, none is sorted
 * with the 300k others a config may list. */
static const char *candidate_names(Loader *L, bool python_list) {
    NamePick p = {.keep = SHOWN_NAMES};
    p.heap = rt_alloc(L->rt, p.keep * sizeof *p.heap);
    size_t slots = 2 * p.keep;
    p.slots = rt_alloc0(L->rt, slots * sizeof *p.slots);
    p.mask = slots - 1;
    for (size_t i = 0; i < L->ncands; i++) pick_offer(&p, L->cands[i].name);
    qsort(p.heap, p.n, sizeof *p.heap, compare_strings);
    StrBuf sb;
    sb_init(L->rt, &sb, 0);
    if (python_list) sb_putc(&sb, '[');
    for (size_t i = 0; i < p.n && sb.len <= SHOWN_NAMES; i++) {   /* (the rest would not show) */
        if (i) sb_puts(&sb, ", ");
        if (python_list) v_write_repr(L->rt, &sb, v_strz(L->rt, p.heap[i]));
        else sb_puts(&sb, p.heap[i]);
    }
    if (python_list) sb_putc(&sb, ']');
    return sb_to_str(&sb)->data;
}

/* transformers' choice: the name asked for; else "tool_use" when the request
 * has tools and the source has it; else "default". */
static const Candidate *pick_candidate(Loader *L) {
    const char *want = L->opt.template_name;
    bool single = L->ncands == 1 && L->cands[0].name == NULL;
    if (single) {
        if (want && strcmp(want, "default") != 0) {
            rt_throw(L->rt, CF_ERR_USAGE, "no chat template named '%s': '%s' holds a single unnamed template",
                     want, L->origin);
        }
        return &L->cands[0];
    }
    if (want) {
        const Candidate *c = find_candidate(L, want);
        if (!c) {
            rt_throw(L->rt, CF_ERR_USAGE, "no chat template named '%s' in '%s' (available: %s)", want,
                     L->origin, candidate_names(L, false));
        }
        return c;
    }
    const Candidate *c = L->opt.has_tools ? find_candidate(L, "tool_use") : NULL;
    if (!c) c = find_candidate(L, "default");
    if (!c) {
        rt_throw(L->rt, CF_ERR_VALUE,
                 "This model has multiple chat templates with no default specified! Please either pass a "
                 "chat template or the name of the template you wish to use to the `chat_template` "
                 "argument. Available template names are %s.", candidate_names(L, true));
    }
    return c;
}

/* ---- special tokens ------------------------------------------------------------ */

static void ensure_tokens(Loader *L) {
    if (!L->tokens && !(L->tokens = cf_context_new())) rt_throw(L->rt, CF_ERR_MEMORY, "out of memory");
}

static void set_token(Loader *L, const char *name, const char *value, size_t len) {
    ensure_tokens(L);
    if (!cf_context_set_string(L->tokens, name, value, len)) rt_throw(L->rt, CF_ERR_MEMORY, "out of memory");
}

static bool is_named_token(const char *key) {
    for (size_t i = 0; i < sizeof NAMED_TOKENS / sizeof *NAMED_TOKENS; i++) {
        if (strcmp(key, NAMED_TOKENS[i]) == 0) return true;
    }
    return false;
}

/* A token is a string or an AddedToken object ({"content": "<s>", ...}). */
static Str *token_text(Value v) {
    if (v.type == VT_STR) return v.u.s;
    Value content;
    if (v.type == VT_DICT && dict_get_str(v.u.dict, "content", 7, &content) && content.type == VT_STR) {
        return content.u.s;
    }
    return NULL;
}

/* The special tokens transformers 5.x puts in special_tokens_map: the named
 * ones, every other "*_token" key holding a token (bools such as
 * add_bos_token are not tokens), and the entries of an extra_special_tokens
 * object, which win over plain keys, and additional_special_tokens as a
 * list of strings (the issue asks for it; templates like GigaChat read it).
 * `legacy_map`: the dict is special_tokens_map.json, whose named tokens
 * override the config's while its other tokens only fill gaps. */
static void tokens_from(Loader *L, const Dict *d, bool legacy_map) {
    for (size_t i = 0; i < dict_len(d); i++) {
        Value k = dict_key_at(d, i);
        if (k.type != VT_STR || !ends_with(k.u.s->data, k.u.s->len, "_token")) continue;
        Str *tok = token_text(dict_val_at(d, i));
        if (!tok) continue;
        const char *name = k.u.s->data;
        if (legacy_map && !is_named_token(name) && L->tokens && cf_context_has(L->tokens, name)) continue;
        set_token(L, name, tok->data, tok->len);
    }
    /* additional_special_tokens: passed as a list of strings (transformers
     * 4.x special_tokens_map, which chat templates such as GigaChat use). */
    Value more;
    if (dict_get_str(d, "additional_special_tokens", 25, &more) && more.type == VT_LIST) {
        StrBuf sb;
        sb_init(L->rt, &sb, 64);
        sb_putc(&sb, '[');
        size_t kept = 0;
        for (size_t i = 0; i < more.u.list->len; i++) {
            Str *tok = token_text(more.u.list->items[i]);
            if (!tok) continue;
            if (kept++) sb_putc(&sb, ',');
            json_write_string(&sb, tok->data, tok->len, false);
        }
        sb_putc(&sb, ']');
        ensure_tokens(L);
        if (!cf_context_set_json(L->tokens, "additional_special_tokens", sb.p, sb.len, NULL))
            rt_throw(L->rt, CF_ERR_MEMORY, "out of memory");
    }
    Value extra;
    if (dict_get_str(d, "extra_special_tokens", 20, &extra) && extra.type == VT_DICT) {
        const Dict *e = extra.u.dict;
        for (size_t i = 0; i < dict_len(e); i++) {
            Value k = dict_key_at(e, i);
            Str *tok = token_text(dict_val_at(e, i));
            if (k.type == VT_STR && tok) set_token(L, k.u.s->data, tok->data, tok->len);
        }
    }
}

/* ---- JSON -------------------------------------------------------------------- */

/* Parse JSON; false (and no throw) when it is not JSON, if `may_fail`. */
static bool parse_json(Loader *L, const char *text, size_t len, const char *path, bool may_fail, Value *out) {
    jmp_buf jb, *outer = L->rt->jb;
    L->rt->jb = &jb;
    if (setjmp(jb)) {
        L->rt->jb = outer;
        if (may_fail) return false;
        char msg[sizeof L->rt->err->message];
        memcpy(msg, L->rt->err->message, sizeof msg);
        L->has_error_offset = true;
        L->error_offset = L->rt->err->offset;
        /* a limit stays a LimitError (its message says how to raise it) */
        rt_throw(L->rt, L->rt->err->kind == CF_ERR_LIMIT ? CF_ERR_LIMIT : CF_ERR_JSON, "%s: %s", path, msg);
    }
    *out = json_parse(L->rt, text, len);
    L->rt->jb = outer;
    return true;
}

/* A JSON object, or NULL when text is not one (and may_fail). */
static const Dict *parse_object(Loader *L, const char *text, size_t len, const char *path, bool may_fail) {
    Value v;
    if (!parse_json(L, text, len, path, may_fail, &v)) return NULL;
    if (v.type != VT_DICT) {
        if (may_fail) return NULL;
        rt_throw(L->rt, CF_ERR_FORMAT, "%s: expected a JSON object", path);
    }
    return v.u.dict;
}

/* Does the text start like a JSON object ('{' then a key or '}')? A template
 * starts with "{{", "{%", "{#" or text. */
static bool looks_like_json_object(const char *s, size_t n) {
    size_t i = 0;
    if (n >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0) i = 3;
    while (i < n && strchr(" \t\r\n", s[i])) i++;
    if (i >= n || s[i] != '{') return false;
    for (i++; i < n && strchr(" \t\r\n", s[i]); i++) {}
    return i < n && (s[i] == '"' || s[i] == '}');
}

/* "chat_template": a string, a list of {"name", "template"}, or null. */
static bool templates_from_config(Loader *L, const Dict *cfg, const char *path) {
    Value ct;
    if (!dict_get_str(cfg, "chat_template", 13, &ct) || ct.type == VT_NONE) return false;
    if (ct.type == VT_STR) {
        add_candidate(L, NULL, ct.u.s->data, ct.u.s->len);
        return true;
    }
    if (ct.type != VT_LIST) {
        rt_throw(L->rt, CF_ERR_FORMAT, "%s: \"chat_template\" must be a string or a list of "
                 "{\"name\", \"template\"} objects, not %s", path, v_type_name(ct));
    }
    List *list = ct.u.list;
    reserve_candidates(L, list->len);
    for (size_t i = 0; i < list->len; i++) {
        Value item = list->items[i], name, text;
        if (item.type != VT_DICT || !dict_get_str(item.u.dict, "name", 4, &name) ||
            !dict_get_str(item.u.dict, "template", 8, &text) || name.type != VT_STR || text.type != VT_STR) {
            rt_throw(L->rt, CF_ERR_FORMAT, "%s: chat_template[%zu] must be an object with string "
                     "\"name\" and \"template\"", path, i);
        }
        add_candidate(L, name.u.s->data, text.u.s->data, text.u.s->len);
    }
    return L->ncands > 0;
}

/* ---- source kinds ----------------------------------------------------------------- */

static void load_config_text(Loader *L, const Dict *cfg, const char *path) {
    L->kind = "tokenizer_config";
    tokens_from(L, cfg, false);
    if (!templates_from_config(L, cfg, path)) {
        rt_throw(L->rt, CF_ERR_FORMAT, "%s: a JSON object without a \"chat_template\" (expected a "
                 "tokenizer_config.json that has one)", path);
    }
}

static void load_gguf(Loader *L, const char *path, uint64_t size) {
    L->kind = "gguf";
    L->in_gguf = true;
    gguf_read_meta(L->rt, L->file, size, &L->gguf);
    L->in_gguf = false;
    close_resources(L);
    const GgufMeta *m = &L->gguf;
    for (size_t i = 0; i < m->ntemplates; i++) {
        const GgufTemplate *t = &m->templates[i];
        add_candidate(L, t->name ? t->name : "default", t->text, t->len);
    }
    if (L->ncands == 0) rt_throw(L->rt, CF_ERR_FORMAT, "%s: GGUF file has no tokenizer.chat_template", path);
    if (L->ncands == 1 && m->templates[0].name == NULL) L->cands[0].name = NULL;
    const char *values[] = {m->bos_token, m->eos_token, m->unk_token, m->pad_token};
    const char *names[] = {"bos_token", "eos_token", "unk_token", "pad_token"};
    for (int i = 0; i < 4; i++) {
        if (values[i]) set_token(L, names[i], values[i], strlen(values[i]));
    }
    if (m->notes.len) sb_put(&L->notes, m->notes.p, m->notes.len);
}

static void load_file(Loader *L, const char *path) {
    L->file = open_file(L, path, false);
    /* A regular file is peeked at, so a GGUF's tensors are never read; a
     * pipe (e.g. a shell's <(...)) cannot rewind, so it is read whole. */
    struct stat st;
    if (fstat(fileno(L->file), &st) == 0 && S_ISREG(st.st_mode)) {
        unsigned char head[4];
        size_t got = fread(head, 1, sizeof head, L->file);
        if (gguf_has_magic(head, got)) {
            load_gguf(L, path, (uint64_t)st.st_size);
            return;
        }
        if (fseek(L->file, 0, SEEK_SET) != 0) rt_throw(L->rt, CF_ERR_IO, "%s: %s", path, strerror(errno));
    }
    size_t len;
    char *text = slurp(L, path, &len);
    close_resources(L);
    if (gguf_has_magic((const unsigned char *)text, len)) {
        if (!(L->file = fmemopen(text, len, "rb"))) rt_throw(L->rt, CF_ERR_IO, "%s: %s", path, strerror(errno));
        load_gguf(L, path, len);
        return;
    }
    check_utf8(L, text, len, path);
    if (looks_like_json_object(text, len)) {
        bool is_json_name = ends_with(path, strlen(path), ".json");
        const Dict *cfg = parse_object(L, text, len, path, !is_json_name);
        if (cfg) {
            load_config_text(L, cfg, path);
            return;
        }
    }
    L->kind = "file";
    L->repairable = true;
    len = universal_newlines(text, len);
    add_candidate(L, NULL, text, len);
}

/* The *.jinja files of additional_chat_templates/, sorted by name. */
static void load_template_dir(Loader *L, const char *dir) {
    L->dir = opendir(dir);
    if (!L->dir) {
        if (errno == ENOENT || errno == ENOTDIR) return;
        rt_throw(L->rt, CF_ERR_IO, "[Errno %d] %s: '%s'", errno, strerror(errno), dir);
    }
    size_t count = 0, cap = 8;
    const char **names = rt_alloc(L->rt, cap * sizeof *names);
    struct dirent *e;
    while ((e = readdir(L->dir)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n <= 6 || !ends_with(e->d_name, n, ".jinja")) continue;
        if (count == cap) {
            names = rt_realloc(L->rt, names, cap * sizeof *names, 2 * cap * sizeof *names);
            cap *= 2;
        }
        names[count++] = str_new(L->rt, e->d_name, n)->data;
        rt_step(L->rt, 1);
    }
    close_resources(L);
    qsort(names, count, sizeof *names, compare_strings);
    for (size_t i = 0; i < count; i++) {
        size_t len;
        char *text = read_text_file(L, path_join(L, dir, names[i]), false, &len);
        add_candidate(L, str_new(L->rt, names[i], strlen(names[i]) - 6)->data, text, len);
    }
}

/* Is every candidate named "default" (one name, however often added)? */
static bool only_default(const Loader *L) {
    for (size_t i = 0; i < L->ncands; i++) {
        if (strcmp(L->cands[i].name, "default") != 0) return false;
    }
    return true;
}

/* A model folder as transformers 5.x reads it: chat_template.jinja and
 * additional_chat_templates/NAME.jinja, when any exist, replace the
 * tokenizer_config.json's templates (one file alone is the single template;
 * with others it is named "default"); special tokens come from
 * tokenizer_config.json, plus special_tokens_map.json only for configs
 * without "added_tokens_decoder" (the legacy format). */
static void load_model_dir(Loader *L, const char *dir) {
    L->kind = "model_dir";
    const char *config_path = path_join(L, dir, CONFIG_FILE);
    size_t len;
    const char *text = read_text_file(L, config_path, true, &len);
    const Dict *cfg = text ? parse_object(L, text, len, config_path, false) : NULL;
    if (cfg) tokens_from(L, cfg, false);
    Value ignored;
    if (!cfg || !dict_get_str(cfg, "added_tokens_decoder", 20, &ignored)) {
        const char *map_path = path_join(L, dir, SPECIAL_TOKENS_MAP_FILE);
        const char *map_text = read_text_file(L, map_path, true, &len);
        if (map_text) tokens_from(L, parse_object(L, map_text, len, map_path, false), true);
    }

    const char *main_text = read_text_file(L, path_join(L, dir, CHAT_TEMPLATE_FILE), true, &len);
    if (main_text) add_candidate(L, "default", main_text, len);
    load_template_dir(L, path_join(L, dir, CHAT_TEMPLATE_DIR));
    if (main_text && only_default(L)) {   /* one template (a default.jinja beside it replaced it) */
        L->cands[0] = L->cands[L->ncands - 1];
        L->cands[0].name = NULL;
        L->ncands = 1;
    } else if (L->ncands == 0 && !(cfg && templates_from_config(L, cfg, config_path))) {
        rt_throw(L->rt, CF_ERR_FORMAT, "no chat template in '%s' (looked for %s, %s/*.jinja and %s)", dir,
                 CHAT_TEMPLATE_FILE, CHAT_TEMPLATE_DIR, CONFIG_FILE);
    }
}

static const BuiltinTemplate *find_builtin(const char *name) {
    for (size_t i = 0; i < builtin_template_count; i++) {
        if (strcmp(builtin_templates[i].name, name) == 0) return &builtin_templates[i];
    }
    return NULL;
}

static void load_path(Loader *L, const void *arg) {
    const char *what = arg;
    if (!what || !*what) rt_throw(L->rt, CF_ERR_USAGE, "no template given");
    L->origin = what;
    struct stat st;
    if (stat(what, &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            load_model_dir(L, what);
        } else {
            load_file(L, what);
        }
        return;
    }
    int e = errno;
    const BuiltinTemplate *b = find_builtin(what);
    if (!b) {
        StrBuf names;
        sb_init(L->rt, &names, 0);
        for (size_t i = 0; i < builtin_template_count; i++) {
            sb_printf(&names, "%s%s", i ? ", " : "", builtin_templates[i].name);
        }
        rt_throw(L->rt, CF_ERR_IO, "[Errno %d] %s: '%s' (not a file, a model folder or a built-in "
                 "template: %s)", e, strerror(e), what, sb_to_str(&names)->data);
    }
    L->kind = "builtin";
    L->builtin_name = b->name;
    add_candidate(L, NULL, b->text, b->len);
}

typedef struct TextArg {
    const char *text;
    size_t len;
} TextArg;

static void load_text(Loader *L, const void *arg) {
    const TextArg *t = arg;
    if (!t->text && t->len) rt_throw(L->rt, CF_ERR_USAGE, "cf_source_from_text: text is NULL");
    L->origin = "<text>";
    L->kind = "text";
    L->repairable = true;
    check_utf8(L, t->text ? t->text : "", t->len, "<text>");
    add_candidate(L, NULL, t->text ? t->text : "", t->len);
}

/* ---- result ------------------------------------------------------------------ */

static char *malloc_copy(Loader *L, const char *s, size_t n) {
    char *p = malloc(n + 1);
    if (!p) rt_throw(L->rt, CF_ERR_MEMORY, "out of memory");
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

static void finish(Loader *L, cf_source *out) {
    const Candidate *c = pick_candidate(L);
    out->kind = L->kind;
    if (L->repairable && !L->opt.no_repair) {
        out->text = malloc(c->len + 1);
        if (!out->text) rt_throw(L->rt, CF_ERR_MEMORY, "out of memory");
        RepairNotes notes;
        out->len = repair_web_copy(c->text, c->len, out->text, &notes);
        sb_put(&L->notes, notes.text, notes.len);
    } else {
        out->text = malloc_copy(L, c->text, c->len);
        out->len = c->len;
    }
    out->looks_tag_stripped = looks_tag_stripped(out->text, out->len);
    if (out->looks_tag_stripped) {
        sb_puts(&L->notes, "the template looks tag-stripped: its <tags> seem to have been removed as "
                           "HTML when it was copied from a web page; this cannot be repaired\n");
    }
    const char *name = L->builtin_name ? L->builtin_name : c->name;
    if (name) out->name = malloc_copy(L, name, strlen(name));
    if (L->notes.len) {
        size_t n = L->notes.len;
        while (n > 0 && L->notes.p[n - 1] == '\n') n--;   /* no trailing newline */
        out->warnings = malloc_copy(L, L->notes.p, n);
    }
    ensure_tokens(L);
    out->tokens = L->tokens;
    L->tokens = NULL;
}

/* Run fn then finish under a jmp_buf. Kept apart from with_loader so the
 * caller's locals are never live across the longjmp. */
static bool guarded(Loader *L, LoadFn fn, const void *arg, cf_source *out) {
    jmp_buf jb;
    L->rt->jb = &jb;
    if (setjmp(jb)) return false;
    sb_init(L->rt, &L->notes, 0);
    fn(L, arg);
    finish(L, out);
    return true;
}

static bool with_loader(const cf_load_options *opt, cf_source *out, cf_error *err, LoadFn fn, const void *arg) {
    cf_error scratch;
    if (!err) err = &scratch;
    memset(err, 0, sizeof *err);
    if (!out) {
        error_set(err, CF_ERR_USAGE, 0, 0, "cf_source: out is NULL");
        return false;
    }
    memset(out, 0, sizeof *out);
    cf_limits lim = {0};
    if (opt && opt->limits) lim = *opt->limits;
    limits_resolve(&lim);
    Arena arena;
    arena_init(&arena, lim.max_memory);
    Rt rt = {0};
    rt.arena = &arena;
    rt.err = err;
    rt.lim = lim;
    Loader L = {0};
    L.rt = &rt;
    if (opt) L.opt = *opt;
    bool ok = guarded(&L, fn, arg, out);
    close_resources(&L);
    if (!ok) {
        if (L.in_gguf) err->offset = (size_t)L.gguf.error_offset;
        if (L.has_error_offset) err->offset = L.error_offset;
        if (L.tokens) cf_context_free(L.tokens);
        cf_source_free(out);
    }
    arena_release(&arena);
    return ok;
}

/* ---- public API ------------------------------------------------------------------ */

bool cf_source_load(const char *what, const cf_load_options *opt, cf_source *out, cf_error *err) {
    return with_loader(opt, out, err, load_path, what);
}

bool cf_source_from_text(const char *text, size_t len, const cf_load_options *opt, cf_source *out,
                         cf_error *err) {
    TextArg arg = {text, len};
    return with_loader(opt, out, err, load_text, &arg);
}

void cf_source_free(cf_source *s) {
    if (!s) return;
    free(s->text);
    free(s->name);
    free(s->warnings);
    if (s->tokens) cf_context_free(s->tokens);
    memset(s, 0, sizeof *s);
}

const char *const *cf_builtin_names(void) { return builtin_names; }

const char *cf_builtin_text(const char *name, size_t *len) {
    const BuiltinTemplate *b = name ? find_builtin(name) : NULL;
    if (len) *len = b ? b->len : 0;
    return b ? b->text : NULL;
}

char *cf_repair_text(const char *text, size_t len, size_t *out_len, char **notes) {
    if (notes) *notes = NULL;
    if (!text) len = 0;
    char *out = malloc(len + 1);
    if (!out) return NULL;
    RepairNotes rn;
    size_t n = repair_web_copy(text ? text : "", len, out, &rn);
    if (out_len) *out_len = n;
    if (notes && rn.len) {
        while (rn.len > 0 && rn.text[rn.len - 1] == '\n') rn.len--;
        *notes = malloc(rn.len + 1);
        if (!*notes) {
            free(out);
            return NULL;
        }
        memcpy(*notes, rn.text, rn.len);
        (*notes)[rn.len] = '\0';
    }
    return out;
}
