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

typedef enum CallArgStyle {
    ARGS_JSON_OBJECT,    /* {"name": N, "arguments": {...}} */
    ARGS_XML_PARAMS      /* NAME <k>K</k><v>V</v>...: strings raw, other values JSON */
} CallArgStyle;

typedef struct CallSyntax {
    const char *format;                       /* cf_reply_format_name */
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
    const char *const *preserved_tokens;     /* NULL-terminated */
    const char *const *additional_stops;     /* NULL-terminated */
} CallSyntax;

/* Connecting a described format (a reply engine's format description) is
 * filling one of these from it: reasoning markers from its think markers,
 * section_open/close and calls_in_array from a call section holding a JSON
 * array, call_open/close, the JSON keys of a JSON call, or the parameter
 * markers of typed-XML bodies. Formats whose name sits between its own
 * markers (<function=NAME>) or whose calls are pythonic need fields this
 * struct does not have yet. */

/* The description of a reply format, or NULL when it has no tool calls. */
const CallSyntax *call_syntax_of(cf_reply_format f);

enum { REASON_AUTO, REASON_OPEN, REASON_CLOSED };

typedef struct CallRequest {
    const CallSyntax *syn;
    Value tools;             /* list of tools that may be called (already filtered by NAME) */
    bool required;           /* at least one call (tool_choice required / NAME) */
    bool parallel;           /* more than one call allowed */
    int reasoning;           /* REASON_* at the start of the reply */
} CallRequest;

typedef struct CallGrammar {
    uint32_t gbnf_root;      /* the calls (lazy) or the whole reply (required) */
    uint32_t lark_root;      /* the whole reply */
} CallGrammar;

/* Build the rules into g. */
CallGrammar call_grammar(Gram *g, const CallRequest *r);
/* The xgrammar structural tag (JSON) into sb. */
void call_structural_tag(Gram *g, const CallRequest *r, StrBuf *sb);
/* The trigger list (JSON array) for a lazy grammar into sb. */
void call_triggers(const CallRequest *r, StrBuf *sb);

/* Tool accessors ({"type": "function", "function": {...}} or the function itself). */
Value tool_function(Value tool);
bool tool_name(Value tool, Str **out);
Value tool_parameters(Value tool);   /* None when absent */

#endif
