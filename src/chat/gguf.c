/* gguf.c — the chat templates and special tokens of a GGUF model file.
 *
 * Layout (v2/v3, little endian): "GGUF", u32 version, u64 tensor_count,
 * u64 kv_count, then kv_count entries of (string key, u32 type, value);
 * strings are u64 length + bytes; arrays are u32 element type + u64 count +
 * elements (arrays of arrays nest). Tensor infos and data follow; we stop
 * before them, so a 40 GB file costs what its metadata costs.
 *
 * Everything a file claims is checked against the bytes it really has
 * before anything is allocated or looped over: a count or length that could
 * not fit in the rest of the file is a format error, not an allocation. */
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>
#include <sys/types.h>
#include "loader.h"
#include "engine/unicode.h"

enum GgufType {
    GT_UINT8, GT_INT8, GT_UINT16, GT_INT16, GT_UINT32, GT_INT32, GT_FLOAT32,
    GT_BOOL, GT_STRING, GT_ARRAY, GT_UINT64, GT_INT64, GT_FLOAT64, GT_COUNT
};

static const char *const TYPE_NAMES[GT_COUNT] = {
    "uint8", "int8", "uint16", "int16", "uint32", "int32", "float32",
    "bool", "string", "array", "uint64", "int64", "float64",
};
/* Bytes of a fixed-size value; 0 for string and array. */
static const uint8_t TYPE_SIZES[GT_COUNT] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};

enum {
    READ_BUF = 64 * 1024,
    MAX_KEY_LEN = 65535,       /* the GGUF spec's bound on key length */
    MAX_ARRAY_DEPTH = 16,      /* arrays of arrays; real files use none */
    MIN_KV_BYTES = 8 + 4 + 1,  /* empty key length + type + smallest value */
    MIN_ARRAY_BYTES = 4 + 8,   /* element type + count */
};

static const char KEY_TEMPLATE[] = "tokenizer.chat_template";
static const char KEY_TOKENS[] = "tokenizer.ggml.tokens";

/* The special tokens GGUF stores as ids into tokenizer.ggml.tokens — the
 * ones transformers' own GGUF import maps (bos, eos, unk, pad). */
enum { TOK_BOS, TOK_EOS, TOK_UNK, TOK_PAD, TOK_COUNT };
static const char *const TOKEN_ID_KEYS[TOK_COUNT] = {
    "tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id",
    "tokenizer.ggml.unknown_token_id", "tokenizer.ggml.padding_token_id",
};
static const char *const TOKEN_VARS[TOK_COUNT] = {"bos_token", "eos_token", "unk_token", "pad_token"};

typedef struct KeySet {
    const char **keys;
    uint32_t *hashes;
    size_t cap, count;
} KeySet;

typedef struct Reader {
    Rt *rt;
    FILE *f;
    GgufMeta *meta;
    uint64_t size;        /* file size */
    uint64_t pos;         /* offset of the next byte we consume */
    unsigned char *buf;   /* holds file bytes [buf_off, buf_off + buf_len) */
    uint64_t buf_off;
    size_t buf_len;
    uint64_t file_pos;    /* where the FILE's own position is */
    KeySet keys;
    uint64_t tokens_off, tokens_count;   /* tokenizer.ggml.tokens elements */
    bool has_tokens;
    int64_t token_ids[TOK_COUNT];        /* -1: absent */
    size_t templates_cap;
} Reader;

/* ---- failing ------------------------------------------------------------ */

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
_Noreturn static void fail_at(Reader *r, uint64_t off, const char *fmt, ...) {
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    r->meta->error_offset = off;
    rt_throw(r->rt, CF_ERR_FORMAT, "invalid GGUF file: %s (at byte offset %" PRIu64 ")", msg, off);
}

static uint64_t bytes_left(const Reader *r) { return r->size - r->pos; }

/* Fail unless n more bytes exist; `what` names what we were reading. */
static void need(Reader *r, uint64_t n, const char *what) {
    if (n > bytes_left(r)) {
        fail_at(r, r->pos, "truncated: %s needs %" PRIu64 " bytes but the file has %" PRIu64 " left",
                what, n, bytes_left(r));
    }
}

/* ---- buffered reading ----------------------------------------------------- */

static void refill(Reader *r) {
    if (r->file_pos != r->pos) {
        if (fseeko(r->f, (off_t)r->pos, SEEK_SET) != 0) {
            fail_at(r, r->pos, "cannot seek in the file");
        }
        r->file_pos = r->pos;
    }
    size_t got = fread(r->buf, 1, READ_BUF, r->f);
    if (got == 0) fail_at(r, r->pos, "read error or the file shrank while being read");
    r->buf_off = r->pos;
    r->buf_len = got;
    r->file_pos = r->pos + got;
}

static void read_bytes(Reader *r, void *dst, uint64_t n, const char *what) {
    need(r, n, what);
    unsigned char *out = dst;
    while (n > 0) {
        if (r->pos < r->buf_off || r->pos >= r->buf_off + r->buf_len) refill(r);
        size_t at = (size_t)(r->pos - r->buf_off);
        size_t chunk = r->buf_len - at;
        if (chunk > n) chunk = (size_t)n;
        memcpy(out, r->buf + at, chunk);
        out += chunk;
        r->pos += chunk;
        n -= chunk;
    }
}

/* Skipping only moves the position; the next read seeks if it must. */
static void skip(Reader *r, uint64_t n, const char *what) {
    need(r, n, what);
    r->pos += n;
}

static uint64_t read_le(Reader *r, unsigned width, const char *what) {
    unsigned char b[8];
    read_bytes(r, b, width, what);
    uint64_t v = 0;
    for (unsigned i = width; i-- > 0;) v = (v << 8) | b[i];
    return v;
}

static uint32_t read_u32(Reader *r, const char *what) { return (uint32_t)read_le(r, 4, what); }
static uint64_t read_u64(Reader *r, const char *what) { return read_le(r, 8, what); }

/* A string whose bytes we keep: checked against the file before allocating,
 * and validated as UTF-8. */
static const char *read_string(Reader *r, size_t *len_out, const char *what) {
    uint64_t at = r->pos;
    uint64_t len = read_u64(r, what);
    if (len > bytes_left(r)) {
        fail_at(r, at, "%s claims %" PRIu64 " bytes but the file has %" PRIu64 " left", what, len,
                bytes_left(r));
    }
    char *s = rt_alloc(r->rt, (size_t)len + 1);
    read_bytes(r, s, len, what);
    s[len] = '\0';
    size_t bad;
    if (!utf8_validate(s, (size_t)len, &bad)) {
        fail_at(r, at + 8 + bad, "%s is not valid UTF-8", what);
    }
    *len_out = (size_t)len;
    return s;
}

static void skip_string(Reader *r, const char *what) {
    uint64_t at = r->pos;
    uint64_t len = read_u64(r, what);
    if (len > bytes_left(r)) {
        fail_at(r, at, "%s claims %" PRIu64 " bytes but the file has %" PRIu64 " left", what, len,
                bytes_left(r));
    }
    r->pos += len;
}

/* ---- duplicate keys ----------------------------------------------------- */

static uint32_t hash_key(const char *s) {
    uint32_t h = 2166136261u;                 /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
    return h ? h : 1;
}

static void keyset_grow(Reader *r) {
    KeySet *ks = &r->keys;
    size_t cap = ks->cap ? ks->cap * 2 : 64;
    const char **keys = rt_alloc0(r->rt, cap * sizeof *keys);
    uint32_t *hashes = rt_alloc0(r->rt, cap * sizeof *hashes);
    for (size_t i = 0; i < ks->cap; i++) {
        if (!ks->keys[i]) continue;
        size_t j = ks->hashes[i] & (cap - 1);
        while (keys[j]) j = (j + 1) & (cap - 1);
        keys[j] = ks->keys[i];
        hashes[j] = ks->hashes[i];
    }
    ks->keys = keys;
    ks->hashes = hashes;
    ks->cap = cap;
}

/* Returns false when the key was already there. */
static bool keyset_add(Reader *r, const char *key) {
    KeySet *ks = &r->keys;
    if (2 * (ks->count + 1) > ks->cap) keyset_grow(r);
    uint32_t h = hash_key(key);
    size_t j = h & (ks->cap - 1);
    for (; ks->keys[j]; j = (j + 1) & (ks->cap - 1)) {
        if (ks->hashes[j] == h && strcmp(ks->keys[j], key) == 0) return false;
    }
    ks->keys[j] = key;
    ks->hashes[j] = h;
    ks->count++;
    return true;
}

/* ---- values ------------------------------------------------------------- */

static void check_type(Reader *r, uint32_t type, uint64_t at) {
    if (type >= GT_COUNT) fail_at(r, at, "unknown value type %" PRIu32, type);
}

static void expect_type(Reader *r, const char *key, uint32_t type, uint32_t want, uint64_t at) {
    if (type != want) {
        fail_at(r, at, "key '%s' has type %s, expected %s", key, TYPE_NAMES[type], TYPE_NAMES[want]);
    }
}

/* Array header: element type and a count that must fit in the file. */
static uint64_t read_array_header(Reader *r, uint32_t *elem_type) {
    uint64_t at = r->pos;
    *elem_type = read_u32(r, "array element type");
    check_type(r, *elem_type, at);
    uint64_t count_at = r->pos;
    uint64_t count = read_u64(r, "array length");
    uint64_t min_elem = TYPE_SIZES[*elem_type];
    if (*elem_type == GT_STRING) min_elem = 8;
    if (*elem_type == GT_ARRAY) min_elem = MIN_ARRAY_BYTES;
    if (count > bytes_left(r) / min_elem) {
        fail_at(r, count_at, "array of %" PRIu64 " %s elements cannot fit in the %" PRIu64
                             " bytes left in the file", count, TYPE_NAMES[*elem_type], bytes_left(r));
    }
    return count;
}

static void skip_value(Reader *r, uint32_t type, int depth) {
    if (TYPE_SIZES[type]) {
        skip(r, TYPE_SIZES[type], TYPE_NAMES[type]);
    } else if (type == GT_STRING) {
        skip_string(r, "string value");
    } else {
        if (depth >= MAX_ARRAY_DEPTH) fail_at(r, r->pos, "arrays nested more than %d deep", MAX_ARRAY_DEPTH);
        uint32_t elem;
        uint64_t count = read_array_header(r, &elem);
        if (TYPE_SIZES[elem]) {
            skip(r, count * TYPE_SIZES[elem], "array data");   /* count fits: checked above */
        } else {
            for (uint64_t i = 0; i < count; i++) skip_value(r, elem, depth + 1);
        }
    }
}

/* Integer of any width and signedness; negative or huge means "no token". */
static int64_t read_token_id(Reader *r, const char *key, uint32_t type, uint64_t at) {
    bool is_signed = type == GT_INT8 || type == GT_INT16 || type == GT_INT32 || type == GT_INT64;
    bool is_unsigned = type == GT_UINT8 || type == GT_UINT16 || type == GT_UINT32 || type == GT_UINT64;
    if (!is_signed && !is_unsigned) fail_at(r, at, "key '%s' has type %s, expected an integer", key, TYPE_NAMES[type]);
    unsigned width = TYPE_SIZES[type];
    uint64_t raw = read_le(r, width, key);
    if (is_signed && width < 8 && (raw >> (width * 8 - 1)) & 1) return -1;
    if (raw > (uint64_t)INT64_MAX) return -1;
    return (int64_t)raw;
}

static void add_template(Reader *r, const char *name) {
    GgufMeta *m = r->meta;
    if (m->ntemplates == r->templates_cap) {
        size_t cap = r->templates_cap ? r->templates_cap * 2 : 4;
        m->templates = rt_realloc(r->rt, m->templates, m->ntemplates * sizeof *m->templates,
                                  cap * sizeof *m->templates);
        r->templates_cap = cap;
    }
    GgufTemplate *t = &m->templates[m->ntemplates++];
    t->name = name;
    t->text = read_string(r, &t->len, name ? "named chat template" : "chat template");
}

static void read_kv(Reader *r) {
    uint64_t key_at = r->pos;
    uint64_t klen = read_u64(r, "key length");
    if (klen == 0) fail_at(r, key_at, "empty key");
    if (klen > MAX_KEY_LEN) fail_at(r, key_at, "key length %" PRIu64 " exceeds %d", klen, MAX_KEY_LEN);
    r->pos = key_at;
    size_t key_len;
    const char *key = read_string(r, &key_len, "key");
    if (memchr(key, '\0', key_len)) fail_at(r, key_at, "key contains a NUL byte");
    if (!keyset_add(r, key)) fail_at(r, key_at, "duplicate key '%s'", key);
    uint64_t type_at = r->pos;
    uint32_t type = read_u32(r, "value type");
    check_type(r, type, type_at);

    size_t tlen = sizeof KEY_TEMPLATE - 1;
    if (strcmp(key, KEY_TEMPLATE) == 0) {
        expect_type(r, key, type, GT_STRING, type_at);
        add_template(r, NULL);
        return;
    }
    if (key_len > tlen + 1 && memcmp(key, KEY_TEMPLATE, tlen) == 0 && key[tlen] == '.') {
        expect_type(r, key, type, GT_STRING, type_at);
        add_template(r, key + tlen + 1);
        return;
    }
    if (strcmp(key, KEY_TOKENS) == 0) {
        expect_type(r, key, type, GT_ARRAY, type_at);
        uint32_t elem;
        uint64_t count = read_array_header(r, &elem);
        if (elem != GT_STRING) {
            fail_at(r, type_at, "key '%s' is an array of %s, expected an array of string", key, TYPE_NAMES[elem]);
        }
        r->has_tokens = true;
        r->tokens_off = r->pos;
        r->tokens_count = count;
        for (uint64_t i = 0; i < count; i++) skip_string(r, "token");
        return;
    }
    for (int t = 0; t < TOK_COUNT; t++) {
        if (strcmp(key, TOKEN_ID_KEYS[t]) == 0) {
            r->token_ids[t] = read_token_id(r, key, type, type_at);
            return;
        }
    }
    skip_value(r, type, 0);
}

/* Walk tokenizer.ggml.tokens once, up to the largest id wanted, keeping the
 * strings of the ids that name special tokens. */
static void resolve_tokens(Reader *r) {
    GgufMeta *m = r->meta;
    const char **slots[TOK_COUNT] = {&m->bos_token, &m->eos_token, &m->unk_token, &m->pad_token};
    int64_t last = -1;
    for (int t = 0; t < TOK_COUNT; t++) {
        int64_t id = r->token_ids[t];
        if (id < 0) continue;
        if (!r->has_tokens) {
            sb_printf(&m->notes, "GGUF: %s is set but %s is missing; %s not set\n", TOKEN_ID_KEYS[t],
                      KEY_TOKENS, TOKEN_VARS[t]);
            r->token_ids[t] = -1;
        } else if ((uint64_t)id >= r->tokens_count) {
            sb_printf(&m->notes, "GGUF: %s %" PRId64 " is out of range (%" PRIu64 " tokens); %s not set\n",
                      TOKEN_ID_KEYS[t], id, r->tokens_count, TOKEN_VARS[t]);
            r->token_ids[t] = -1;
        } else if (id > last) {
            last = id;
        }
    }
    if (last < 0) return;
    r->pos = r->tokens_off;
    for (int64_t i = 0; i <= last; i++) {
        bool wanted = false;
        for (int t = 0; t < TOK_COUNT; t++) wanted |= r->token_ids[t] == i;
        if (!wanted) {
            skip_string(r, "token");
            continue;
        }
        size_t len;
        const char *s = read_string(r, &len, "special token");
        for (int t = 0; t < TOK_COUNT; t++) {
            if (r->token_ids[t] == i) *slots[t] = s;
        }
    }
}

/* ---- entry points ----------------------------------------------------------- */

bool gguf_has_magic(const unsigned char *head, size_t n) {
    return n >= 4 && memcmp(head, "GGUF", 4) == 0;
}

static uint32_t byte_swap32(uint32_t v) {
    return (v >> 24) | ((v >> 8) & 0xff00u) | ((v << 8) & 0xff0000u) | (v << 24);
}

void gguf_read_meta(Rt *rt, FILE *f, uint64_t file_size, GgufMeta *meta) {
    memset(meta, 0, sizeof *meta);
    sb_init(rt, &meta->notes, 0);
    Reader *r = rt_alloc0(rt, sizeof *r);
    r->rt = rt;
    r->f = f;
    r->meta = meta;
    r->size = file_size;
    r->buf = rt_alloc(rt, READ_BUF);
    r->buf_off = UINT64_MAX;
    r->file_pos = UINT64_MAX;           /* unknown: seek before the first read */
    for (int t = 0; t < TOK_COUNT; t++) r->token_ids[t] = -1;

    unsigned char magic[4];
    read_bytes(r, magic, 4, "magic");
    if (!gguf_has_magic(magic, 4)) fail_at(r, 0, "no GGUF magic");
    uint32_t version = read_u32(r, "version");
    if (version == 1) fail_at(r, 4, "GGUF version 1 is not supported (only versions 2 and 3)");
    if (version != 2 && version != 3) {
        uint32_t swapped = byte_swap32(version);
        if (swapped >= 1 && swapped <= 3) fail_at(r, 4, "big-endian GGUF files are not supported");
        fail_at(r, 4, "unsupported GGUF version %" PRIu32 " (only versions 2 and 3)", version);
    }
    meta->version = version;
    read_u64(r, "tensor count");         /* tensors are not our business */
    uint64_t count_at = r->pos;
    uint64_t kv_count = read_u64(r, "metadata count");
    if (kv_count > bytes_left(r) / MIN_KV_BYTES) {
        fail_at(r, count_at, "%" PRIu64 " metadata entries cannot fit in the %" PRIu64
                             " bytes left in the file", kv_count, bytes_left(r));
    }
    for (uint64_t i = 0; i < kv_count; i++) read_kv(r);
    resolve_tokens(r);
}
