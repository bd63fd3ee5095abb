/* json_reuse.h — large top-level member values that repeat across documents
 * (a dataset's "tools", sent with every request), parsed once and shared by
 * the contexts that repeat them byte for byte (public type cf_json_cache).
 *
 * Exact by construction: a JSON array or object is self-delimiting, so the
 * same bytes at a member's position parse to the same value whatever follows;
 * the shared value was parsed from exactly those bytes under the same limits
 * (one nesting level less: it sits one level down in a row). */
#ifndef CF_JSON_REUSE_H
#define CF_JSON_REUSE_H

#include "value.h"

enum {
    JSON_REUSE_SLOTS = 4,           /* member names watched at once */
    JSON_REUSE_WAYS = 4,            /* distinct values remembered for each */
    /* smaller values parse faster than they compare and copy (a byte read
     * costs about 10 instructions, a byte compared a tenth of one) */
    JSON_REUSE_MIN_BYTES = 256,
    /* the bytes a cache remembers at most (the values parsed from them take
     * a few times that): beyond, a new value is not remembered */
    JSON_REUSE_BUDGET = 4 << 20,
    JSON_REUSE_KEY_MAX = 64,
    /* the reader's table of which known keys follow which (json.c) */
    JSON_KEY_GUESS_BITS = 6,
    JSON_KEY_GUESS_WAYS = 3
};

/* A member value parsed once into its own arena; counted references (the
 * cache's and each context that holds it), released from any thread. */
typedef struct ReusedValue ReusedValue;

/* What the parser needs to splice a shared value into a document as if it
 * had read it there (json.c's bookkeeping for JsonSource). */
typedef struct ReuseHit {
    Value value;
    size_t len;        /* its bytes */
    size_t items;      /* values inside it, at any depth */
    size_t deepest;    /* the depth of its deepest value, parsed alone (0: empty) */
    bool verbatim;     /* json.dumps(ensure_ascii=False) writes exactly its bytes */
    ReusedValue *held; /* a new reference for the context */
} ReuseHit;

typedef struct ReuseSlot ReuseSlot;

/* At the start of `limits` documents: drop what was parsed under others. */
void json_reuse_begin(cf_json_cache *c, const cf_limits *limits);
/* The slot watching member `key` (claimed if free), or NULL. */
ReuseSlot *json_reuse_slot(cf_json_cache *c, const char *key, size_t key_len);
/* Do s[0..avail) start with one of the slot's values' bytes? With a parsed value: true and
 * *hit filled. Seen before but not parsed yet: marked to be parsed after this
 * document (json_reuse_finish), false. one_line: only values without a '\n'
 * (a JSON Lines row read before its end is known). */
bool json_reuse_match(ReuseSlot *slot, const char *s, size_t avail, bool one_line, ReuseHit *hit, bool *same_bytes);
/* The member's value (s, len) did not match: remember its bytes in place of
 * the least recently used value's (when large, and not on every row for a
 * member that never repeats). */
void json_reuse_remember(ReuseSlot *slot, const char *s, size_t len);
/* After a document: parse the values seen twice, each into its own arena. */
void json_reuse_finish(cf_json_cache *c);
void json_reused_release(ReusedValue *r);
/* The cache's table of key guesses (JSON_KEY_GUESS_WAYS <<
 * JSON_KEY_GUESS_BITS known-key Strs, or NULL), which the reader keeps across documents; cleared when the
 * limits change. */
Str **json_reuse_key_guesses(cf_json_cache *c);

#endif
