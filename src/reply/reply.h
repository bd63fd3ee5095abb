/* reply.h — internals shared by the reply parsers (reply.c and one file per
 * format). See the @@REPLIES@@ section of chatfmt.h for the contract.
 *
 * Design: one byte-level state machine per format, fed valid UTF-8 spans
 * (reply.c repairs the input first and holds partial sequences). Every
 * decision depends only on bytes already seen, never on how they were
 * chunked, so the whole parse is simply the stream parse fed everything at
 * once. The two differ only in when a tool call is *committed*: the stream
 * commits as soon as the header (name, id) is known and then streams the
 * arguments; the whole parse commits at the call's end, so a call that
 * breaks can still be put back into content verbatim. A stream also has a
 * fast path (FastFn) that takes plain bytes without the machine, doing
 * exactly what the machine would do with them.
 *
 * Held back, and why:
 *   tm_buf      a prefix of a markup tag (may still become the tag);
 *   Chan.ws     whitespace that may turn out to be trailing (chan_put says
 *               which of it is layout);
 *   Call.raw    bytes of the current call not yet represented by any output
 *               (the whole call before commit) — they go to content if the
 *               call breaks. */
#ifndef CF_REPLY_H
#define CF_REPLY_H

#include "chatfmt.h"
#include "engine/value.h"

typedef struct Parser Parser;

/* ---- markup tags ---- */

/* Markers of any bytes ("<tool_call>", "[TOOL_CALLS]", ">>>", "functools[",
 * a bare '{'), matched a byte at a time with the held prefix in
 * Parser.tm_buf: one matcher for every format. */
typedef struct TagSet {
    const char *const *tags;  /* no tag is a prefix of another, nor lies inside
                                 another (engine.c's set_problem states it); a tag
                                 may begin inside a failed partial match of another
                                 (tag_restart finds it); shorter than 32 bytes;
                                 fewer than 32.
                                 The stream's fast path takes in markup the sets
                                 whose tags all begin with '<' (tags_lt_only), in
                                 text any set */
    int n;
} TagSet;
bool tags_lt_only(const TagSet *set);

enum { TAG_MORE = -1, TAG_MISS = -2 };

/* ---- text fields (whitespace at their ends: reply.c chan_put) ---- */

enum { FIELD_CONTENT, FIELD_REASONING,
       FIELD_VALUE };   /* a typed-XML string value whose surrounding whitespace is layout */

typedef struct Chan {
    int field;
    bool started;        /* a non-space byte went out */
    bool count_cps;      /* track code points (citation offsets) */
    StrBuf ws;           /* whitespace held: trailing unless more text follows */
    uint64_t cps;        /* code points sent out */
} Chan;

/* ---- incremental JSON scanner (RFC 8259, strict) ---- */

enum { JE_NONE, JE_KEY, JE_VSTART, JE_VEND, JE_ERR };

typedef struct JScan {
    uint8_t st;              /* state (reply.c) */
    uint8_t aux;             /* literal position / hex digit count */
    bool in_key;
    bool key_long;           /* key longer than key[]: never one we look for */
    uint32_t depth;          /* open containers */
    uint32_t max_depth;
    uint8_t *is_obj;         /* is_obj[d]: container at depth d is an object */
    uint32_t report_depth;   /* JE_VSTART/JE_VEND for values whose parent depth <= this */
    uint32_t key_depth;      /* JE_KEY for keys of objects at this depth (0: none) */
    uint32_t hex;            /* \uXXXX being read */
    uint32_t high;           /* pending high surrogate, 0 if none */
    char key[64];
    uint8_t key_len;
    StrBuf *dec;             /* when set: the current string value, decoded, goes here */
    char vtype;              /* JE_VSTART: first byte of the value */
    uint32_t vdepth;         /* JE_VSTART/JE_VEND: parent depth of the value */
} JScan;

/* JScan.st: the scanner's states (jscan.c); the stream's fast path reads them too. */
enum {
    J_VAL, J_OBJ_FIRST, J_OBJ_KEY, J_COLON, J_OBJ_NEXT, J_ARR_FIRST, J_ARR_NEXT,
    J_STR, J_ESC, J_HEX, J_SURR_BS, J_SURR_U,
    J_NUM_MINUS, J_NUM_ZERO, J_NUM_INT, J_NUM_DOT, J_NUM_FRAC, J_NUM_E, J_NUM_ESIGN, J_NUM_EXP,
    J_LIT, J_DONE
};

void js_init(Parser *p, JScan *j, uint32_t report_depth, uint32_t key_depth);
/* Consume bytes until an event. *used = bytes consumed. JE_VSTART comes
 * after consuming the value's first byte; JE_VEND after its last (a number
 * ends at the byte after it, which is not consumed); JE_KEY after the key's
 * closing quote; JE_ERR at the offending byte (not consumed). A VEND with
 * vdepth 0 ends the document; feed nothing more after it. */
int js_feed(JScan *j, const char *s, size_t n, size_t *used);
bool is_json_space(unsigned char c);   /* space, \t, \n, \r (RFC 8259) */
/* Is s[0..n) exactly one JSON value (surrounding JSON whitespace allowed)? */
bool js_valid(Parser *p, const char *s, size_t n);

/* ---- the call being parsed ---- */

typedef struct Call {
    bool active;
    bool committed;          /* header sent (stream) / recorded (whole) */
    bool need_id;            /* command-a: wait for the model's id */
    bool has_name, has_id;
    StrBuf name, id;
    StrBuf args;             /* argument text before commit */
    StrBuf raw;              /* consumed bytes no output represents yet */
    bool in_reasoning;       /* opened inside reasoning: if it breaks, its text is reasoning
                                and the parser goes on in reasoning_state (set by the
                                format as the call opens) */
    int reasoning_state;
    /* ... up to the first of these markers in that text (NULL-terminated, at
     * most REASONING_CLOSERS; NULL: none): it ends the reasoning there as it
     * would have outside the call, and the rest is parsed again from
     * content_state */
    const char *const *reasoning_close;
    int content_state;
} Call;
enum { REASONING_CLOSERS = 8 };

/* ---- the parser ---- */

/* Incremental bracket tracking of a Python or Gemma literal: where a call's
 * arguments end (pyliteral.c; the stream's fast path reads and sets the
 * string state: families.h's FAST_PY_STR*, FAST_GEMMA_STR). */
typedef struct LitTrack {
    uint32_t depth;          /* open ( [ { */
    char quote;              /* LIT_PYTHON: the open string's quote, or 0 (a triple
                                quote reads as three strings, two of them empty) */
    bool esc;                /* after a backslash in a string */
    bool in_str;             /* LIT_GEMMA: inside <|"|>...<|"|> */
    uint8_t tok;             /* LIT_GEMMA: bytes of the string token matched */
} LitTrack;

typedef void (*StepFn)(Parser *p, const char *s, size_t n);
typedef void (*FinishFn)(Parser *p);
/* Where a plain byte (printable ASCII with no markup or JSON meaning:
 * not '<', '"', '\\', a control or whitespace) goes in the current state,
 * if straight to the output: lets a stream take such bytes without the
 * machinery (1-byte feeds would otherwise cost ten calls a byte). */
enum { FAST_NONE, FAST_CONTENT, FAST_REASONING,
       FAST_JSON_ARGS,   /* inside a JSON string of verbatim (committed) arguments */
       FAST_GLM_ARGS,    /* a string-typed XML value of a committed call */
       FAST_TRIM_ARGS,   /* ... whose surrounding whitespace is layout (Parser.value holds it) */
       /* markup inside a call (no output): */
       FAST_TAG,         /* whitespace (kept raw), then one of the tags (expect_tag) */
       FAST_HELD,        /* text kept in Parser.text and raw until a tag (glm45 key, held value) */
       FAST_NAME,        /* glm45: ASCII name bytes kept in the call's name and raw */
       FAST_SOURCES,     /* command-a: printable ASCII but '<' '>' kept in Parser.text */
       /* a string in the arguments of a call not yet committed (its text is
        * held until the call's end; no output): plain bytes, escapes and
        * UTF-8 kept in Parser.text (call.args for JSON) and raw */
       FAST_PY_STR1,     /* a Python string in '...' (pythonic; LitTrack.esc after a backslash) */
       FAST_PY_STR2,     /* ... in "..." */
       FAST_GEMMA_STR,   /* a Gemma string between string tokens (LitTrack.tok 1 after a '<') */
       FAST_JSON_HELD }; /* a JSON string of verbatim arguments (J_ESC after a backslash) */
/* Limits the formats and the fast path share. */
enum { MAX_CALL_NAME = 256,   /* glm45: a longer name is not one */
       MAX_SOURCES = 256 };   /* command-a: longer citation sources are text */
typedef int (*FastFn)(const Parser *p, const TagSet **tags);  /* *tags: the state's tags */
typedef void (*TextSink)(Parser *p, const char *s, size_t n);

enum { REASONING_AUTO, REASONING_OPEN, REASONING_CLOSED };
enum { ANSWER_OFF, ANSWER_LEAD, ANSWER_FENCED };

struct Parser {
    Arena arena;
    Rt rt;
    cf_reply_format format;
    bool whole;              /* whole parse: commit calls at their end */
    bool failed;             /* an error unwound: refuse further use */
    bool finished;
    int reasoning_mode;      /* REASONING_* from the options */
    /* json_response: a code fence around the answer (answer.c) */
    uint8_t answer;          /* ANSWER_* */
    bool answer_line_start;  /* ANSWER_FENCED: the next content byte starts a line */
    uint8_t answer_len;
    char answer_hold[24];    /* bytes that may be the fence's opening or closing line */
    StepFn step;
    FinishFn finish;
    FastFn fast;
    bool fast_ok;            /* stream: plain bytes may take the fast path */
    bool fast_quiet;         /* ... but write nothing out (the field's line is not open) */
    bool fast_stale;         /* the machine ran since fast_ok and the rest were set */
    int fast_kind;           /* FAST_* for them */
    Chan *fast_chan;         /* ... into this field (NULL: into arguments) */
    const TagSet *fast_tags; /* ... watching for these tags (text states) */
    StrBuf *fast_held;       /* ... keeping the text here (markup kinds, besides call.raw) */
    /* the leaf: single bytes taken by cf_reply_stream_feed and feed_leaf (reply.c) */
    const uint8_t *leaf_tab; /* what each byte does now (A_*) */
    const uint8_t *leaf_base, *leaf_held;   /* ... when nothing / whitespace is held (a held
                                               string: in an escape) */
    const struct Hot *leaf_hot;             /* what the hot path takes now */
    const struct Hot *leaf_hot_base;        /* ... when nothing is held */
    unsigned leaf_hold;      /* what the hot path holds (HS_*) */
    const TagSet *mark_leaf_set;            /* marks_leaf's last set, */
    uint8_t mark_leaf[2][256];              /* ... and its tables (nothing / whitespace held) */
    struct Hot *mark_hot;                   /* ... and its hot table (arena; families only) */
    const TagSet *lt_checked;               /* hot_lt_ok's last set, */
    bool lt_ok;                             /* ... and its answer */
    size_t leaf_end;         /* the hot path goes on while out.len < this */
    size_t leaf_from;        /* out.len when the hot path's bytes were last charged */
    uint64_t *leaf_cps;      /* code points of the field (or leaf_cps_sink) */
    uint64_t leaf_cps_sink;
    uint32_t leaf_budget;    /* bytes the leaf may take, as of leaf_from */
    uint32_t leaf_granted;   /* leaf_budget when last charged to step_bytes */
    size_t step_bytes;       /* bytes not yet charged to rt_step */

    /* UTF-8 repair: a valid but incomplete sequence from the last chunk */
    unsigned char u8_hold[4];
    uint8_t u8_len;

    /* format machine */
    int state;
    int ret_state;           /* command-a: text state to return to after </co:...> */
    char tm_buf[32];         /* tag prefix matched so far */
    uint8_t tm_len;
    uint32_t tm_mask;        /* tags of the current set it may still become */
    Chan content, reasoning;
    Chan value;              /* FIELD_VALUE: started / whitespace held of a trimmed XML value */
    Call call;
    uint32_t ncalls;         /* committed calls = next index */
    JScan js;
    int cur_key;             /* format-specific: which key's value is being read */
    int val_mode;            /* format-specific: what to do with the value's bytes */
    bool string_value;       /* glm45: the current value is typed string */
    uint32_t nargs;          /* glm45: arguments written so far; JSON calls: 1 once
                                "arguments"/"parameters" was seen */
    StrBuf text;             /* format scratch: glm45 key / held value, citation sources */
    StrBuf esc;              /* scratch for escaping */
    StrBuf dec;              /* scratch for decoded JSON strings */
    StrBuf replay;           /* a broken call's text being parsed again (call_break) */
    bool replaying;          /* ... while it is: a call broken inside it replays verbatim */
    bool replayed;           /* call_break parsed text again: a finish goes round once more */
    Value tools;             /* parsed tools_json, or None */
    Value props;             /* glm45, typed XML: the called tool's "properties", or None */
    struct Engine *eng;      /* engine.c: the described format's state */

    /* command-a citations */
    bool span_open, span_started;
    uint64_t span_start;
    StrBuf span_text;

    /* output: whole parse */
    char *msg;               /* the message being built (malloc'd; content goes in as it comes) */
    size_t msg_len, msg_cap;
    StrBuf msg_reasoning, msg_calls, msg_citations;
    uint32_t msg_ncitations;
    /* output: stream */
    StrBuf out;
    int open_line;           /* LINE_* (reply.c) of the unfinished last line */
    uint32_t open_index;

    /* the hand-written families (families.h) */
    unsigned fam_flags;      /* FAM_*: the JSON call being read */
    int fam_sub;             /* jlist_step's own state */
    int fam_after;           /* state after a JSON call object */
    int fam_done;            /* state after a list of calls */
    int fam_resume;          /* state where a broken call's text goes on */
    int fam_mode;            /* format-specific: what the current text is */
    LitTrack *fam_lit;       /* pythonic, gemma4: where the arguments end (arena) */
};

/* reply.c: shared machinery for the format files */
/* ASCII whitespace: what content/reasoning trimming removes. */
static inline bool is_space(unsigned char c) {
    return c == ' ' || (c >= '\t' && c <= '\r');
}
/* A line break: where whitespace beside markup turns into layout (chan_put). */
static inline bool is_line_break(unsigned char c) { return c == '\n' || c == '\r'; }
/* A byte of a tool name as models write them (ASCII letters, digits, _ - . :). */
static inline bool is_name_byte(unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
           c == '.' || c == ':';
}
int tag_step(Parser *p, const TagSet *set, unsigned char c);
/* After a miss of the held buf[0..len): the offset after which a tag of
 * set may still begin (*mask: those tags), or len when none may. */
size_t tag_restart(const TagSet *set, const char *buf, size_t len, uint32_t *mask);
/* Scan text until a tag of `set` completes (returns its index and sets
 * *next past it) or input ends (returns -1). Text goes to `put`. */
int scan_text(Parser *p, const char *s, size_t n, size_t *i, const TagSet *set, TextSink put);
void put_content(Parser *p, const char *s, size_t n);
void content_send(Parser *p, const char *s, size_t n);   /* past answer.c's filter */
/* answer.c: content of a JSON answer, its code fence dropped */
void answer_put(Parser *p, const char *s, size_t n);
void answer_flush(Parser *p);
void answer_end(Parser *p);
void put_reasoning(Parser *p, const char *s, size_t n);
/* Before any text: skip whitespace and match one of `set` (returns its
 * index); anything else switches to `content_state` (returns -1, as when
 * input runs out), where the bytes held so far are scanned again (they
 * may begin one of its markers). */
int scan_lead(Parser *p, const char *s, size_t n, size_t *pi, const TagSet *set,
              int content_state);
/* Text states that end a reply: flush a held tag prefix as text. */
void flush_tag_prefix(Parser *p, TextSink put);
/* A JSON string body (no quotes), as Python's json.dumps(ensure_ascii=False). */
void json_escape_into(StrBuf *sb, const char *s, size_t n);

void call_begin(Parser *p, const char *tag, bool keep_raw, bool need_id);
void call_raw(Parser *p, const char *s, size_t n);         /* consumed, not represented */
void call_args(Parser *p, const char *s, size_t n);        /* argument text */
void call_represented(Parser *p);                          /* output now covers raw */
void call_try_commit(Parser *p);                           /* stream: commit if header known */
void call_end(Parser *p);                                  /* complete and well-formed */
/* The call is broken at this point: what it consumed but did not represent
 * goes to content (the whole call, when not committed), then `replay` (held
 * tag bytes not consumed) is re-scanned in `resume_state`. A call opened
 * inside reasoning (Call.in_reasoning) goes back to reasoning instead, up to
 * a reasoning closer in that text (Call.reasoning_close): the text after it
 * is parsed again in Call.content_state (Parser.replayed says so). */
void call_break(Parser *p, int resume_state, const char *replay, size_t replay_len);
/* The markup is complete although its closing tag is missing or cut: keep
 * the call (if one is open) and drop the leftover markup bytes. */
void call_accept(Parser *p);
/* In a call: whitespace (raw), then one of `set`. Returns the tag's index
 * once complete (*pi past it), -1 when input ran out, -2 when something
 * else came: the call then broke (or, with miss_ends_call, was accepted)
 * and the parser went on in `resume`, re-scanning the held bytes. */
int expect_tag(Parser *p, const char *s, size_t n, size_t *pi, const TagSet *set, int resume,
               bool miss_ends_call);
/* In markup: whitespace (kept raw), then one of `set`: its index once
 * complete, -1 when input ran out, -2 when something else came (the held
 * bytes, not consumed, are left in tm_buf: marks_break or marks_accept). */
int expect_marks(Parser *p, const char *s, size_t n, size_t *pi, const TagSet *set);
/* After expect_marks returned -2: break the call (its raw text and the held
 * bytes are content) and go on in `resume`. */
void marks_break(Parser *p, int resume);
/* After expect_marks returned -2 where the call is already complete: keep
 * it and re-scan the held bytes in `resume`. */
void marks_accept(Parser *p, int resume);
/* End of input inside a call: break, including held tag bytes. */
void call_break_eof(Parser *p, int resume_state);
/* End of input after a call's arguments, before its closing tag came
 * whole: keep the call; the held bytes (a cut tag, or text) are content. */
void call_accept_eof(Parser *p);
/* Citation spans (command-a) */
void span_open(Parser *p);
void span_close(Parser *p, const char *sources_json, size_t n);

/* Calls written as JSON (hermes, command-a): Parser.val_mode says what the
 * bytes of the current value are. */
enum { V_SKIP, V_ID, V_NAME, V_ARGS_RAW, V_ARGS_STR };
typedef struct JsonHooks {
    bool (*on_key)(Parser *p);       /* JE_KEY; false: a key the call may not have */
    bool (*on_vstart)(Parser *p);    /* false: the call is malformed here */
    bool (*on_vend)(Parser *p);
    int resume_state;                /* where a broken call's text goes on */
} JsonHooks;
/* One js_feed step over s; returns bytes consumed. */
size_t json_call_step(Parser *p, const char *s, size_t n, const JsonHooks *h);
bool json_key_is(const JScan *j, const char *z);
/* The value of "arguments"/"parameters" starts: an object streams verbatim,
 * a string's decoded text is the arguments; false for anything else. */
bool json_args_start(Parser *p, char vtype);
/* The value of the name key starts: a string decoded into the call's name;
 * false for anything else. */
bool json_name_start(Parser *p);

/* FAST_JSON_ARGS (committed), FAST_JSON_HELD (not yet) or FAST_NONE for a JSON call's current position. */
int json_args_fast(const Parser *p);

/* Tool schemas (schema.c): the called tool's "properties" (tools[i] is
 * {"type": "function", "function": {...}} or the function itself), or None;
 * whether a schema admits a string (no schema, or one that says nothing
 * about types, is "no": the value is then JSON when it parses, else a string). */
Value tool_properties(Parser *p, const char *name, size_t n);
bool schema_allows_string(Value schema);
bool property_allows_string(Value props, const char *key, size_t n);

/* One Python literal value (`[{'a': 1}, None]`, surrounding whitespace
 * allowed) as JSON text appended to out (pyliteral.c); false (out unchanged) when s[0..n)
 * is not exactly one. Templates print dict and list arguments with Python's
 * str(), so a model trained on them writes its XML parameter values so. */
bool literal_value_to_json(Parser *p, const char *s, size_t n, StrBuf *out);

/* An argument value written as XML elements named by their keys, each tag
 * after `prefix`, a list as `item` elements (xmltree.c), as JSON typed by
 * the parameter's schema, appended to out; false (out unchanged) when it
 * nests deeper than the JSON depth limit. */
bool xml_tree_to_json(Parser *p, const char *s, size_t n, const char *prefix, const char *item, Value schema,
                      StrBuf *out);

/* per-format entry points */
struct ReplyFormatDesc;
void engine_init(Parser *p, const struct ReplyFormatDesc *desc);   /* engine.c: described formats */
void command_a_init(Parser *p);

#endif
