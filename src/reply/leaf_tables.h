/* leaf_tables.h — the byte tables of the reply stream's fast path
 * (reply.c, "the stream's fast path"): what each byte does in each state
 * (A_*, the LEAF_* tables) and what the one-byte hot path writes for it
 * (Hot, the HOT_* tables), all constant expressions. Included by reply.c
 * alone: the tables are its static data. */
#ifndef CF_REPLY_LEAF_TABLES_H
#define CF_REPLY_LEAF_TABLES_H

#include <stdint.h>

/* What a byte does in the fast path. */
enum {
    A_REST,      /* the machine takes it */
    A_COPY,      /* itself, on the open line */
    A_EMIT,      /* itself, after the whitespace the field holds */
    A_SPAN,      /* ... also into the cited span */
    A_ESC,       /* its escape (escape_of) */
    A_HOLD,      /* whitespace of a text field: held (it may be trailing) */
    A_LT,        /* may start a tag */
    A_TAG,       /* a tag prefix is held: extends it, or shows it is text */
    A_U8,        /* a byte of a UTF-8 sequence */
    A_JSON_BS,   /* JSON arguments: a backslash starts an escape ... */
    A_JSON_ESC,  /* ... which this byte ends */
    A_RAW,       /* markup: whitespace kept in the call's raw bytes */
    A_HELD,      /* markup: text kept in fast_held and the raw bytes */
    A_NAME,      /* markup: a name byte kept in the call's name and raw bytes */
    A_SOURCE,    /* citation sources kept in Parser.text */
    A_HELD_BS,   /* a held string: a backslash (A_HELD) starts an escape ... */
    A_HELD_ESC,  /* ... which this byte (A_HELD) ends */
    A_HELD_U8    /* ... a byte of a UTF-8 sequence, held until complete */
};

/* The tables: F(c) for every byte value, as constant expressions. */
#define LEAF_ROW(F, b)                                                                          \
    F((b) + 0), F((b) + 1), F((b) + 2), F((b) + 3), F((b) + 4), F((b) + 5), F((b) + 6),       \
    F((b) + 7), F((b) + 8), F((b) + 9), F((b) + 10), F((b) + 11), F((b) + 12), F((b) + 13),   \
    F((b) + 14), F((b) + 15)
#define LEAF_TABLE(F)                                                                           \
    {LEAF_ROW(F, 0x00), LEAF_ROW(F, 0x10), LEAF_ROW(F, 0x20), LEAF_ROW(F, 0x30),              \
     LEAF_ROW(F, 0x40), LEAF_ROW(F, 0x50), LEAF_ROW(F, 0x60), LEAF_ROW(F, 0x70),              \
     LEAF_ROW(F, 0x80), LEAF_ROW(F, 0x90), LEAF_ROW(F, 0xA0), LEAF_ROW(F, 0xB0),              \
     LEAF_ROW(F, 0xC0), LEAF_ROW(F, 0xD0), LEAF_ROW(F, 0xE0), LEAF_ROW(F, 0xF0)}

#define IS_GRAPHIC(c) ((c) > 0x20 && (c) < 0x7F)
#define IS_PRINTABLE(c) ((c) >= 0x20 && (c) < 0x7F)
#define IS_LEAD(c) ((c) >= 0xC2 && (c) <= 0xF4)   /* can start a valid sequence */
#define IS_QUOTE_OR_BS(c) ((c) == '"' || (c) == '\\')
#define IS_FIELD_SPACE(c) ((c) == ' ' || (c) == '\t' || (c) == '\n' || (c) == '\r')
/* plain in a text field, a JSON string and a glm45 string value alike */
#define IS_PLAIN(c) (IS_GRAPHIC(c) && (c) != '<' && !IS_QUOTE_OR_BS(c))

/* Text fields: whitespace is held (\v and \f are the machine's), '"' and
 * '\\' escaped, '<' may start a tag (with no tags: the machine's). `copy`:
 * what a graphic byte does (A_EMIT when whitespace is held before it). */
#define TEXT_ACTION(c, copy, lt)                                                                \
    (IS_FIELD_SPACE(c) ? A_HOLD : IS_QUOTE_OR_BS(c) ? A_ESC : (c) == '<' ? (lt)              \
     : IS_GRAPHIC(c) ? (copy) : IS_LEAD(c) ? A_U8 : A_REST)
#define F_TEXT(c) TEXT_ACTION(c, A_COPY, A_LT)
#define F_TEXT_HELD(c) TEXT_ACTION(c, A_EMIT, A_LT)
#define F_PLAIN(c) TEXT_ACTION(c, A_COPY, A_REST)
#define F_PLAIN_HELD(c) TEXT_ACTION(c, A_EMIT, A_REST)
/* A cited span that has started: ASCII text only, as it comes; a tag
 * prefix may grow, but what it turns out to be, a UTF-8 sequence or a
 * control is the machine's, which holds a prefix until a sequence after it
 * resolves (the fast path would let the prefix out first, splitting the
 * deltas differently from how the machine always has here). */
#define F_SPAN(c) (IS_FIELD_SPACE(c) ? A_HOLD : (c) == '<' ? A_LT : IS_GRAPHIC(c) ? A_SPAN : A_REST)
/* A text field whose line is not open (the fast path writes nothing):
 * whitespace held, a tag prefix held; all else is the machine's. */
#define F_QUIET(c) (IS_FIELD_SPACE(c) ? A_HOLD : (c) == '<' ? A_LT : A_REST)
#define F_QUIET_PLAIN(c) (IS_FIELD_SPACE(c) ? A_HOLD : A_REST)
/* A JSON string of verbatim arguments: '"' ends it, controls are errors. */
#define F_JSON(c)                                                                              \
    ((c) == '\\' ? A_JSON_BS : (c) == '"' ? A_REST : IS_PRINTABLE(c) ? A_COPY                 \
     : IS_LEAD(c) ? A_U8 : A_REST)
#define F_JSON_ESC(c)                                                                          \
    (IS_QUOTE_OR_BS(c) || (c) == '/' || (c) == 'b' || (c) == 'f' || (c) == 'n' || (c) == 'r' || \
     (c) == 't' ? A_JSON_ESC : A_REST)
/* A glm45 string value: escaped twice (a JSON string inside the arguments string). */
#define F_GLM(c)                                                                               \
    (IS_QUOTE_OR_BS(c) || (c) == '\n' || (c) == '\t' || (c) == '\r' ? A_ESC                   \
     : (c) == '<' ? A_LT : IS_PRINTABLE(c) ? A_COPY : IS_LEAD(c) ? A_U8 : A_REST)
/* A string value whose surrounding whitespace is layout: whitespace is
 * held (FAST_TRIM_ARGS, in Parser.value) until text follows it. */
#define TRIM_ACTION(c, copy)                                                                    \
    (IS_FIELD_SPACE(c) ? A_HOLD : IS_QUOTE_OR_BS(c) ? A_ESC : (c) == '<' ? A_LT                \
     : IS_GRAPHIC(c) ? (copy) : IS_LEAD(c) ? A_U8 : A_REST)
#define F_TRIM(c) TRIM_ACTION(c, A_COPY)
#define F_TRIM_HELD(c) TRIM_ACTION(c, A_EMIT)
/* Markup in a call (FAST_TAG, FAST_HELD), ASCII only. */
#define F_MARKUP_SPACE(c) ((c) == ' ' || ((c) >= '\t' && (c) <= '\r') ? A_RAW : (c) == '<' ? A_LT : A_REST)
#define F_MARKUP_TEXT(c) ((c) == '<' ? A_LT : (c) < 0x80 ? A_HELD : A_REST)
#define F_NAME(c)                                                                              \
    (((c) >= 'a' && (c) <= 'z') || ((c) >= 'A' && (c) <= 'Z') || ((c) >= '0' && (c) <= '9') ||   \
     (c) == '_' || (c) == '-' || (c) == '.' || (c) == ':' ? A_NAME : A_REST)
#define F_SOURCES(c) (IS_PRINTABLE(c) && (c) != '<' && (c) != '>' ? A_SOURCE : A_REST)
/* A held string (FAST_PY_STR*, FAST_GEMMA_STR, FAST_JSON_HELD): all but
 * what ends it or opens an escape (a backslash; Gemma: a '<' that may
 * start the string token) is kept as it is; then the escape's table. */
#define HELD_ACTION(c, end, esc)                                                                \
    ((c) == (end) ? A_REST : (c) == (esc) ? A_HELD_BS : (c) < 0x80 ? A_HELD : IS_LEAD(c) ? A_HELD_U8 : A_REST)
#define F_HELD_PY1(c) HELD_ACTION(c, '\'', '\\')
#define F_HELD_PY2(c) HELD_ACTION(c, '"', '\\')
#define F_HELD_GEMMA(c) HELD_ACTION(c, -1, '<')
#define F_HELD_JSON(c) ((c) < 0x20 ? A_REST : HELD_ACTION(c, '"', '\\'))
#define F_HELD_PY_ESC(c) ((c) < 0x80 ? A_HELD_ESC : A_REST)
#define F_HELD_JSON_ESC(c) (F_JSON_ESC(c) == A_JSON_ESC ? A_HELD_ESC : A_REST)   /* (\u: the machine's) */
/* after '<': a token's second byte (<|"|>, <escape>) is the machine's, '<' may start one again */
#define F_HELD_GEMMA_LT(c) ((c) == '|' || (c) == 'e' ? A_REST : (c) == '<' ? A_HELD_BS : (c) < 0x80 ? A_HELD_ESC : A_REST)
#define F_HELD_U8(c) A_HELD_U8
#define F_TAG(c) A_TAG
#define F_U8(c) A_U8
#define F_REST(c) A_REST

static const uint8_t LEAF_TEXT[256] = LEAF_TABLE(F_TEXT), LEAF_TEXT_HELD[256] = LEAF_TABLE(F_TEXT_HELD),
                     LEAF_PLAIN[256] = LEAF_TABLE(F_PLAIN), LEAF_PLAIN_HELD[256] = LEAF_TABLE(F_PLAIN_HELD),
                     LEAF_SPAN[256] = LEAF_TABLE(F_SPAN), LEAF_JSON[256] = LEAF_TABLE(F_JSON),
                     LEAF_JSON_ESC[256] = LEAF_TABLE(F_JSON_ESC), LEAF_GLM[256] = LEAF_TABLE(F_GLM),
                     LEAF_TRIM[256] = LEAF_TABLE(F_TRIM), LEAF_TRIM_HELD[256] = LEAF_TABLE(F_TRIM_HELD),
                     LEAF_MARKUP_SPACE[256] = LEAF_TABLE(F_MARKUP_SPACE),
                     LEAF_MARKUP_TEXT[256] = LEAF_TABLE(F_MARKUP_TEXT), LEAF_NAME[256] = LEAF_TABLE(F_NAME),
                     LEAF_SOURCES[256] = LEAF_TABLE(F_SOURCES), LEAF_QUIET[256] = LEAF_TABLE(F_QUIET),
                     LEAF_QUIET_PLAIN[256] = LEAF_TABLE(F_QUIET_PLAIN), LEAF_TAG[256] = LEAF_TABLE(F_TAG),
                     LEAF_U8[256] = LEAF_TABLE(F_U8), LEAF_REST[256] = LEAF_TABLE(F_REST),
                     LEAF_HELD_PY1[256] = LEAF_TABLE(F_HELD_PY1), LEAF_HELD_PY2[256] = LEAF_TABLE(F_HELD_PY2),
                     LEAF_HELD_GEMMA[256] = LEAF_TABLE(F_HELD_GEMMA), LEAF_HELD_GEMMA_LT[256] = LEAF_TABLE(F_HELD_GEMMA_LT),
                     LEAF_HELD_JSON[256] = LEAF_TABLE(F_HELD_JSON),
                     LEAF_HELD_PY_ESC[256] = LEAF_TABLE(F_HELD_PY_ESC),
                     LEAF_HELD_JSON_ESC[256] = LEAF_TABLE(F_HELD_JSON_ESC), LEAF_HELD_U8[256] = LEAF_TABLE(F_HELD_U8);

/* The hot tables: what cf_reply_stream_feed takes itself, a byte-by-byte
 * feed's commonest bytes: the state's A_COPY and A_ESC bytes; in text one
 * whitespace byte (held: the byte after it lets it out), '<' (held: a byte
 * no tag has second lets it out as text) and UTF-8 (held until complete).
 * Every byte's JSON text goes to out at once; what is held is only marked
 * (leaf_hold, HS_*) and taken back by leaf_fold. One table per kind,
 * indexed by the byte alone, and the state after a byte comes from its
 * entry alone (but after UTF-8 and '<'), so that a byte does not wait for
 * the one before. An entry, in bits: 0-31 the byte's JSON text, 32-34 its
 * length, 40-49 the HS_* bits it needs, 50-59 the HS_* bits after it,
 * 60-61 HOT_LEAD/HOT_CONT/HOT_LT (the bits after it depend on those before). */
enum {
    HS_READY = 1,                /* no UTF-8 sequence is open */
    HS_NO_SPACE = 2,             /* no whitespace is held just before (the sequence, '<') */
    HS_NO_LT = 4,                /* no '<' is held */
    HS_CONT_LOW = 8,             /* continuation bytes the sequence takes next: 80-8F, */
    HS_CONT_MID = 16,            /* 90-9F, */
    HS_CONT_HIGH = 32,           /* A0-BF (as u8_seq checks) */
    HS_CONT_ANY = 8 | 16 | 32,
    HS_NEED_SHIFT = 6,           /* bits 6-7: continuation bytes still needed */
    HS_LT_NO_SPACE = 256,        /* the held '<' has no whitespace held before it */
    HS_NEVER = 512,              /* never set: what the hot path does not take */
    HS_BASE = HS_READY | HS_NO_SPACE | HS_NO_LT
};
typedef struct Hot {
    uint32_t text;           /* the byte's JSON text, first byte lowest */
    uint8_t len;             /* its length */
    uint8_t flags;           /* HOT_*: the state after it depends on the one before */
    uint16_t needs, after;   /* the HS_* bits it needs, and after it */
} Hot;
enum { HOT_LEAD = 1, HOT_CONT = 2, HOT_LT = 3 };
/* Entries are written as one constant (HOT) and stored as a Hot (HOT_ENTRY). */
#define HOT(text, len, needs, after, flags)                                                     \
    ((uint64_t)(text) | (uint64_t)(len) << 32 | (uint64_t)(needs) << 40 |                       \
     (uint64_t)(after) << 50 | (uint64_t)(flags) << 60)
#define HOT_ENTRY(e)                                                                            \
    {(uint32_t)(e), (uint8_t)((e) >> 32 & 7), (uint8_t)((e) >> 60 & 3), (uint16_t)((e) >> 40 & 0x3FF), \
     (uint16_t)((e) >> 50 & 0x3FF)}
#define TEXT2(a, b) ((uint32_t)(a) | (uint32_t)(b) << 8)
#define TEXT3(a, b, c) (TEXT2(a, b) | (uint32_t)(c) << 16)
#define TEXT4(a, b, c, d) (TEXT3(a, b, c) | (uint32_t)(d) << 24)
enum { HOT_MAX_TEXT = 4 };
/* The second bytes of all tags (TagSet): after a held '<', these may make
 * a tag (the leaf decides); any other byte shows the '<' is text. */
#define IS_TAG_SECOND(c) ((c) == '/' || (c) == 't' || (c) == 'a' || (c) == '|' || (c) == 'c')

#define H_NOT HOT(0, 0, HS_NEVER, 0, 0)
#define H_DONE(text, len) HOT(text, len, HS_READY, HS_BASE, 0)
#define H_PLAIN(c) HOT(c, 1, IS_TAG_SECOND(c) ? HS_READY | HS_NO_LT : HS_READY, HS_BASE, 0)
#define H_LT HOT('<', 1, HS_READY | HS_NO_LT, HS_READY | HS_NO_SPACE, HOT_LT)
#define H_LEAD(c, conts, need)                                                                  \
    HOT(c, 1, HS_READY | HS_NO_LT, (conts) | (need) << HS_NEED_SHIFT | HS_NO_LT, HOT_LEAD)
#define H_UTF8(c)                                                                               \
    ((c) >= 0xC2 && (c) <= 0xDF ? H_LEAD(c, HS_CONT_ANY, 1)                                      \
     : (c) == 0xE0 ? H_LEAD(c, HS_CONT_HIGH, 2) : (c) == 0xED ? H_LEAD(c, HS_CONT_LOW | HS_CONT_MID, 2) \
     : (c) >= 0xE1 && (c) <= 0xEF ? H_LEAD(c, HS_CONT_ANY, 2)                                    \
     : (c) == 0xF0 ? H_LEAD(c, HS_CONT_MID | HS_CONT_HIGH, 3) : (c) == 0xF4 ? H_LEAD(c, HS_CONT_LOW, 3) \
     : (c) >= 0xF1 && (c) <= 0xF3 ? H_LEAD(c, HS_CONT_ANY, 3)                                    \
     : (c) >= 0x80 && (c) <= 0xBF                                                                \
         ? HOT(c, 1, (c) < 0x90 ? HS_CONT_LOW : (c) < 0xA0 ? HS_CONT_MID : HS_CONT_HIGH, 0, HOT_CONT) \
     : H_NOT)
/* text fields: whitespace held as its JSON text; `lt`: what '<' is */
#define H_SPACE(text, len) HOT(text, len, HS_READY | HS_NO_SPACE, HS_READY | HS_NO_LT, 0)
#define HOT_TEXT_ENTRY(c, lt)                                                                   \
    ((c) == ' ' ? H_SPACE(' ', 1) : (c) == '\n' ? H_SPACE(TEXT2('\\', 'n'), 2)                 \
     : (c) == '\t' ? H_SPACE(TEXT2('\\', 't'), 2) : (c) == '\r' ? H_SPACE(TEXT2('\\', 'r'), 2)  \
     : (c) == '<' ? (lt) : IS_PLAIN(c) ? H_PLAIN(c) : IS_QUOTE_OR_BS(c) ? H_DONE(TEXT2('\\', c), 2) \
     : H_UTF8(c))
#define F_HOT_TEXT(c) HOT_TEXT_ENTRY(c, H_LT)
#define F_HOT_PLAIN(c) HOT_TEXT_ENTRY(c, H_NOT)   /* no tags: '<' is the machine's */
/* JSON arguments: a backslash changes the scanner's state: the leaf's */
#define F_HOT_JSON(c) (IS_PRINTABLE(c) && !IS_QUOTE_OR_BS(c) ? H_DONE(c, 1) : H_UTF8(c))
/* a glm45 string value: escaped twice */
#define HOT_GLM_ENTRY(c, lt)                                                                    \
    (IS_QUOTE_OR_BS(c) ? H_DONE(TEXT4('\\', '\\', '\\', c), 4)                                  \
     : (c) == '\n' ? H_DONE(TEXT3('\\', '\\', 'n'), 3) : (c) == '\t' ? H_DONE(TEXT3('\\', '\\', 't'), 3) \
     : (c) == '\r' ? H_DONE(TEXT3('\\', '\\', 'r'), 3) : (c) == '<' ? (lt)                      \
     : IS_PRINTABLE(c) ? H_PLAIN(c) : H_UTF8(c))
#define F_HOT_GLM(c) HOT_GLM_ENTRY(c, H_LT)
#define F_HOT_GLM_NO_LT(c) HOT_GLM_ENTRY(c, H_NOT)
/* a string value whose surrounding whitespace is layout: whitespace held
 * as its text, escaped twice */
#define HOT_TRIM_ENTRY(c, lt)                                                                   \
    ((c) == ' ' ? H_SPACE(' ', 1) : (c) == '\n' ? H_SPACE(TEXT3('\\', '\\', 'n'), 3)                \
     : (c) == '\t' ? H_SPACE(TEXT3('\\', '\\', 't'), 3) : (c) == '\r' ? H_SPACE(TEXT3('\\', '\\', 'r'), 3) \
     : HOT_GLM_ENTRY(c, lt))
#define F_HOT_TRIM(c) HOT_TRIM_ENTRY(c, H_LT)
#define F_HOT_TRIM_NO_LT(c) HOT_TRIM_ENTRY(c, H_NOT)
#define F_HOT_NONE(c) H_NOT
#define E_HOT_TEXT(c) HOT_ENTRY(F_HOT_TEXT(c))
#define E_HOT_PLAIN(c) HOT_ENTRY(F_HOT_PLAIN(c))
#define E_HOT_JSON(c) HOT_ENTRY(F_HOT_JSON(c))
#define E_HOT_GLM(c) HOT_ENTRY(F_HOT_GLM(c))
#define E_HOT_GLM_NO_LT(c) HOT_ENTRY(F_HOT_GLM_NO_LT(c))
#define E_HOT_TRIM(c) HOT_ENTRY(F_HOT_TRIM(c))
#define E_HOT_TRIM_NO_LT(c) HOT_ENTRY(F_HOT_TRIM_NO_LT(c))
#define E_HOT_NONE(c) HOT_ENTRY(F_HOT_NONE(c))
static const Hot HOT_TEXT[256] = LEAF_TABLE(E_HOT_TEXT), HOT_PLAIN[256] = LEAF_TABLE(E_HOT_PLAIN),
                 HOT_JSON[256] = LEAF_TABLE(E_HOT_JSON), HOT_GLM[256] = LEAF_TABLE(E_HOT_GLM),
                 HOT_GLM_NO_LT[256] = LEAF_TABLE(E_HOT_GLM_NO_LT), HOT_TRIM[256] = LEAF_TABLE(E_HOT_TRIM),
                 HOT_TRIM_NO_LT[256] = LEAF_TABLE(E_HOT_TRIM_NO_LT), HOT_NONE[256] = LEAF_TABLE(E_HOT_NONE);

#endif
