/* format_desc.h — reply formats as data. A ReplyFormatDesc says where a
 * model puts its reasoning, its content and its tool calls; engine.c reads
 * replies by walking it, and a grammar generator can walk the same
 * description to constrain what a model writes (the pieces come in the
 * order a reply writes them):
 *
 *   [think_open] REASONING think_close       (or left open/closed by the prompt)
 *   CONTENT (drop markers removed)
 *   section_open                             (optional: calls may stand alone)
 *     call_open HEADER... BODY call_close     (repeated)
 *   section_close
 *   or bare_call_open BODY call_close        (a call alone in text, without a header)
 *
 * HEADER is text fields each ending at a marker (the name; an id; a prefix
 * to skip; Kimi's "functions.NAME:N" which is both), or a name token. BODY is one of
 *   BODY_JSON_CALL  a JSON object {"name": N, "arguments": {...}} (keys from
 *                   name_keys/args_keys; or {"N": {...}} with name_is_key),
 *                   alone, in a JSON array, or several in a row (list);
 *   BODY_JSON_ARGS  the arguments object itself, then args_after (a fence);
 * Either JSON body may stand inside a wrapper (body_wrap_open ... body_wrap_close,
 * the tags of the format's own calls: Hermes' ```xml fence around <tool_call>{...}</tool_call>);
 *   BODY_XML        parameters: param_open KEY key_close [value_open] VALUE
 *                   value_close (verbatim sections inside it read as is), typed by the tool's JSON schema (a string
 *                   parameter is the raw text, anything else JSON when it
 *                   parses), or by an explicit flag (key_flag FLAG flag_close:
 *                   flag_string means a string, flag_json JSON: '|'-separated
 *                   alternatives, "number|boolean|..." for Kimi K3's types);
 *                   params_close ends the list;
 *   BODY_XML_TREE   parameters as elements named by their keys, every tag
 *                   after element_prefix: PREFIX<key>VALUE PREFIX</key>, a
 *                   VALUE itself text or such elements (a list's named
 *                   element_item), typed by the tool's JSON schema
 *                   (xmltree.c); PREFIX</element_end> ends the list.
 *
 * Every marker list is NULL-terminated. Markers are arbitrary byte strings
 * (not only "<...>") under one rule a test checks for every description:
 * within each set the engine matches at once, no marker is a prefix of
 * another or lies inside another. Markers may share a leading token
 * (Kimi K3's "<|open|>tools<|sep|>" and "<|open|>response<|sep|>") and one
 * may begin inside a partial match of another that fails: the matcher
 * then lets out only the bytes before it (reply.c's tag_restart). */
#ifndef CF_FORMAT_DESC_H
#define CF_FORMAT_DESC_H

#include "chatfmt.h"
#include <stdbool.h>
#include <stdint.h>

enum { DESC_MARKERS = 8 };          /* room in each marker list (NULL-terminated when shorter) */

/* HF_LITERAL: the field must be `text` (surrounding whitespace aside); a
 * field that is not is not this format's call (the bytes stay content).
 * HF_NUMBER: digits, read and dropped (Kimi K3's call number, index="1").
 * HF_SAME_NAME: the name again, as an earlier field gave it (Glimmer's
 * <atem:invoke name="N"> repeats its header's to=N); another name is no call. */
typedef enum { HF_NAME, HF_ID, HF_KIMI_ID, HF_LITERAL, HF_SAME_NAME, HF_NUMBER } HeaderFieldKind;
typedef enum { BODY_JSON_CALL, BODY_JSON_ARGS, BODY_XML, BODY_XML_TREE } BodyKind;
typedef enum { LIST_ONE, LIST_ARRAY, LIST_SEQUENCE } ListKind;

typedef struct HeaderField {
    HeaderFieldKind kind;
    const char *end[DESC_MARKERS];  /* markers that end the field */
    const char *text;               /* HF_LITERAL: what it must say ("" : only whitespace;
                                       "a|b|": a, b or nothing) */
    bool token;                     /* HF_NAME without end markers: a run of name bytes (letters,
                                       digits, _ - . : and non-ASCII) after optional whitespace,
                                       ended by whitespace or by a '<' read again by the body
                                       (GLM's "NAME\n<arg_key>" and 4.7's "NAME<arg_key>") */
} HeaderField;

enum { MAX_HEADER_FIELDS = 5, MAX_ALTS = 2 };

typedef struct ReplyFormatDesc {
    cf_reply_format id;
    const char *name;
    const char *example;            /* one line, for `chatfmt formats` */
    const char *signature[DESC_MARKERS];   /* strings that all occur in the format's templates: they
                                              name it where probing reads nothing back (a template
                                              that never prints a call); else its call markers do */
    /* reasoning */
    const char *think_open[DESC_MARKERS], *think_close[DESC_MARKERS];
    bool calls_in_reasoning;        /* a call may open inside reasoning (and ends it) */
    bool think_in_content;          /* a reasoning block may open again after text: reasoning
                                       goes on in it (GLM-4.5's interleaved thinking) */
    bool no_calls;                  /* reasoning and content only (plain): no call markers */
    /* content */
    const char *drop[DESC_MARKERS]; /* wrappers removed from content (<response>...) */
    /* calls */
    const char *section_open[DESC_MARKERS], *section_close[DESC_MARKERS];
    bool section_optional;          /* call_open outside a section also starts a call */
    bool section_ends_message;      /* the section opener is the text message's end token: at the
                                       reply's end with no call after it, it is dropped */
    const char *bare_call_open[DESC_MARKERS];   /* openers of a call standing alone in text, its
                                                   body right after (no header): GigaChat 3.1's
                                                   <|function_call|> beside GigaChat 3's turn */
    const char *call_open[DESC_MARKERS];    /* none: the section opener opens the (one) call */
    const char *call_close[DESC_MARKERS];   /* none: the call ends with its body */
    HeaderField header[MAX_HEADER_FIELDS];
    uint8_t nheader;
    BodyKind body;
    ListKind list;                  /* BODY_JSON_CALL: one object, an array, a row */
    const char *args_after;         /* BODY_JSON_ARGS: marker after the object */
    const char *name_keys[DESC_MARKERS], *args_keys[DESC_MARKERS];
    bool name_is_key;
    const char *body_wrap_open[DESC_MARKERS];    /* a tag the JSON body may stand inside; */
    const char *body_wrap_close[DESC_MARKERS];   /* ... and the tags that close it (any one) */
    /* BODY_XML */
    const char *param_open[DESC_MARKERS], *key_close[DESC_MARKERS];
    const char *key_flag;           /* after the key: a type flag follows (DSML ' string="') */
    const char *flag_close;
    const char *flag_string;        /* the flag's value that means "string" */
    const char *flag_json;          /* ... and "JSON", "a|b" for several (any other flag: not a call) */
    const char *value_open;         /* NULL: the value follows the key directly */
    const char *value_close[DESC_MARKERS];
    const char *verbatim_open, *verbatim_close;   /* a section of a value read as is, markers and
                                                     all, without its wrapper (XML CDATA:
                                                     <![CDATA[ ... ]]>, MiniCPM5's template
                                                     wraps values holding '<', '&' or a newline) */
    const char *params_close[DESC_MARKERS];  /* ends the parameter list */
    bool trim_value;                /* whitespace around a value is layout (Qwen3-Coder indents);
                                       the next parameter or the list's end also ends a value */
    /* BODY_XML_TREE (MiniMax M3: "]<]minimax[>[", "item", "invoke") */
    const char *element_prefix, *element_item, *element_end;
    /* turns addressed to a recipient (Functionary v2, Glimmer) */
    uint8_t opens_in_field;         /* 1 + the header field the reply begins in (the prompt wrote
                                       the first call's opener and the fields before); 0: none */
    const char *content_name;       /* a name that is no call: content follows ("all", "user") */
    const char *reasoning_name;     /* a name that is no call: reasoning follows ("self") */
    /* other call syntaxes models of this format drift into: their section and
     * call openers also start calls in content, and such a call is read
     * with that description (its reasoning and content markers unused) */
    const struct ReplyFormatDesc *alt[MAX_ALTS];
} ReplyFormatDesc;

/* The described formats (formats.c), in detection order. */
extern const ReplyFormatDesc REPLY_FORMATS[];
extern const size_t REPLY_FORMATS_COUNT;
/* Formats detection tries after the hand-written ones, in order: the
 * described ones and any format a reply file registers for detection
 * (REPLY_DETECT_EXTRA in formats.c). */
size_t reply_formats_described(void);
cf_reply_format reply_format_at(size_t k);
/* The first described format whose signature, or else whose call markers
 * (section and call openers, the call's closer, the header's last marker,
 * the parameter opener: at least three), all occur in a template's text;
 * CF_REPLY_PLAIN if none. The fallback when probing reads nothing back. */
cf_reply_format reply_format_by_signature(const char *text, size_t n);
/* How many of the markers of described format f occur in a template's
 * text (0 for a hand-written format): among formats that all read back a
 * template's call, the one whose other markers (reasoning, wrappers) the
 * template also names is its own. */
size_t reply_format_text_score(cf_reply_format f, const char *text, size_t n);
/* Does format f write the marker s[0..n), alone or as part of one of its
 * markers (a closer the template prints after a reply is then the
 * format's, not the end of the turn)? */
bool reply_format_uses(cf_reply_format f, const char *s, size_t n);
/* NULL when the engine can read d (the marker rules above, a name, an
 * opener, complete XML markers), else what is wrong (engine.c). */
const char *engine_check_desc(const ReplyFormatDesc *d);
/* The description of f (REPLY_FORMATS, or plain, hermes and glm45, which
 * detection reaches first by their own rules), or NULL for a hand-written
 * format. */
const ReplyFormatDesc *reply_format_desc(cf_reply_format f);

#endif
