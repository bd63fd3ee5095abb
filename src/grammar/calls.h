/* calls.h — a reply format's tool-call syntax, as data, and the grammar
 * walk over it (calls.c).
 *
 * A CallSyntax says where a format puts reasoning, the calls, the tool's
 * name, an id and the arguments, and how arguments are written (a JSON
 * object, or typed-XML parameters whose string values are raw text). The
 * reply parsers read the same markers; a format described here gets a GBNF
 * grammar (lazy, with triggers, for tool_choice auto), a Lark grammar of
 * the whole reply, and an xgrammar structural tag. */
#ifndef CF_GRAMMAR_CALLS_H
#define CF_GRAMMAR_CALLS_H

#include "json_schema.h"
#include "reply/format_desc.h"

typedef enum CallArgStyle {
    ARGS_JSON_OBJECT,    /* {"name": N, "arguments": {...}} */
    ARGS_XML_PARAMS      /* NAME <k>K</k><v>V</v>...: strings raw, other values JSON */
} CallArgStyle;

enum { CALL_MAX_TOKENS = 32, CALL_MAX_STOPS = 4, CALL_MAX_VARIANTS = 8 };

struct CallRequest;
struct CallBlock;
/* A format whose calls are written by code (a hand-written family, or a
 * described format through its description): fills the call block. */
typedef void (*CallWriter)(Gram *g, const struct CallRequest *r, struct CallBlock *b);

typedef struct CallSyntax {
    const char *format;                       /* cf_reply_format_name */
    /* Set: the calls come from this walk (the fields below up to the
     * tokens are then unused, except the reasoning markers). */
    CallWriter writer;
    const ReplyFormatDesc *desc;              /* described formats: the description the writer reads */
    const char *reasoning_open, *reasoning_close;
    /* One block around all of a turn's calls, or NULL. With calls_in_array
     * the calls are the elements of a JSON array inside it. */
    const char *section_open, *section_close;
    bool calls_in_array;
    /* Around each call, or NULL (array elements). */
    const char *call_open, *call_close;
    CallArgStyle style;
    /* ARGS_JSON_OBJECT: the keys, in the order the template writes them
     * (id_key may be NULL); name_args_any_order: either of name/arguments first. */
    const char *id_key, *name_key, *args_key;
    bool name_args_any_order;
    /* ARGS_XML_PARAMS: the name follows call_open; then each parameter */
    const char *key_open, *key_close, *value_open, *value_close;
    /* How the template spaces a call (the structural tag's begin/end strings):
     * after call_open / section_open ("[\n    " for arrays), before call_close. */
    const char *canon_after_open, *canon_before_close;
    const char *preserved_tokens[CALL_MAX_TOKENS];   /* NULL-terminated */
    const char *additional_stops[CALL_MAX_STOPS];
    const char *lead_markup[4];              /* markup that may come before required calls (Llama 4's wrapper) */
} CallSyntax;

/* The call syntax of reply format f into *out; false when the format has
 * no tool calls. A described format (formats.c) gets its syntax from its
 * description (described.c), so a format added there has a grammar with
 * no work here; the hand-written families have writers (families.c). */
bool call_syntax_of(cf_reply_format f, CallSyntax *out);
/* described.c: fill *out from a description. */
void described_syntax(const ReplyFormatDesc *d, CallSyntax *out);
/* families.c: the hand-written families' syntax, or false. */
bool family_syntax(cf_reply_format f, CallSyntax *out);

enum { REASON_AUTO, REASON_OPEN, REASON_CLOSED };

typedef struct CallRequest {
    const CallSyntax *syn;
    Value tools;             /* list of tools that may be called (already filtered by NAME) */
    bool required;           /* at least one call (tool_choice required / NAME) */
    bool parallel;           /* more than one call allowed */
    int reasoning;           /* REASON_* at the start of the reply */
} CallRequest;

/* What a writer gives: the ways a reply's calls open (each variant: its
 * opening marker, the grammar of what follows it up to its closer, the
 * closer or ""). The calls are one variant, or with repeat_outside and
 * parallel calls several in a row (whitespace between). Lazy grammars
 * trigger on the openers; the structural tag has a tag per variant. */
typedef struct CallVariant {
    const char *open, *close;
    GExpr *inner;
    /* or, with open "": a regex trigger, llama.cpp's "pattern" (found
     * anywhere) or with pattern_full "pattern_full" (the reply so far
     * matches it); the grammar starts at its first group */
    const char *pattern;
    bool pattern_full;
} CallVariant;

typedef struct CallBlock {
    CallVariant v[CALL_MAX_VARIANTS];
    int n;
    bool repeat_outside;
    /* A reply that begins inside a turn's header the prompt opened
     * (addressed turns): the whole reply as the writer gives it, with
     * calls (tool_choice required or NAME) and as it may be (the Lark
     * grammar); the lazy grammar still starts at the variants. NULL: the
     * reply is text up to the first variant. */
    GExpr *reply_with_calls, *reply_any;
    /* What may follow the calls at the reply's end (markers the parser
     * drops as content), or NULL. */
    GExpr *after;
} CallBlock;

void call_block_add(CallBlock *b, const char *open, GExpr *inner, const char *close);
void call_block_add_pattern(CallBlock *b, const char *pattern, bool full, GExpr *inner);
/* A regex matching any of the tools' names: (?:a|b) */
const char *call_names_regex(Gram *g, const CallRequest *r);
/* z[0..n) with the regex metacharacters escaped, into sb. */
void call_regex_escape(StrBuf *sb, const char *z, size_t n);

/* Shared pieces for writers (calls.c). */
GExpr *call_until(Gram *g, const char *delim);           /* text without delim, possibly empty */
GExpr *call_until_either(Gram *g, const char *a, const char *b);   /* text without a or b, possibly empty */
GExpr *call_ws(Gram *g);                                  /* JSON whitespace */
GExpr *call_json_string_lit(Gram *g, const char *s, size_t n);   /* "s" as JSON writes it */
uint32_t call_args_rule(Gram *g, SchemaCx *c, Value params, const Str *name);
/* A tool's parameters and a schema context for them (objects closed). */
SchemaCx *call_schema_cx(Gram *g, Value tool, Value *params);
/* The rule "tool-call" (alternatives over the tools, each made by `one`). */
/* A rule per tool named PREFIX-NAME, made by `one`, and the rule ALT_NAME
 * over them all (a reference to it); a tool without a name is left out. */
GExpr *call_rule_per_tool(Gram *g, const CallRequest *r, const char *prefix, const char *alt_name,
                          GExpr *(*one)(Gram *g, const CallRequest *r, Value tool, void *cx), void *cx);
GExpr *call_each_tool(Gram *g, const CallRequest *r, GExpr *(*one)(Gram *g, const CallRequest *r, Value tool, void *cx),
                      void *cx);

typedef struct CallGrammar {
    uint32_t gbnf_root;      /* the calls (lazy) or the whole reply (required) */
    uint32_t lark_root;      /* the whole reply */
    CallBlock block;         /* a writer's calls (n == 0 for the data-only syntaxes) */
} CallGrammar;

/* Build the rules into g. */
void call_grammar(Gram *g, const CallRequest *r, CallGrammar *out);
/* The xgrammar structural tag (JSON) into sb. */
void call_structural_tag(Gram *g, const CallRequest *r, const CallGrammar *cg, StrBuf *sb);
/* The trigger list (JSON array) for a lazy grammar into sb. */
void call_triggers(const CallRequest *r, const CallGrammar *cg, StrBuf *sb);

/* Tool accessors ({"type": "function", "function": {...}} or the function itself). */
Value tool_function(Value tool);
bool tool_name(Value tool, Str **out);
Value tool_parameters(Value tool);   /* None when absent */

#endif
