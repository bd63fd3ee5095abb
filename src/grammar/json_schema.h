/* json_schema.h — JSON Schema to grammar rules (gram.h).
 *
 * Covered: type (and lists of types), properties in their order with
 * required/optional, additionalProperties (bool or schema; absent = any
 * other key), enum, const, anyOf/oneOf (oneOf's "exactly one" is not
 * checked), allOf (merged), $ref into $defs/definitions or any local
 * JSON pointer (recursive schemas too), items/prefixItems/minItems/maxItems,
 * minLength/maxLength, pattern (the regex subset in regex.c), format date,
 * time, date-time and uuid, integer minimum/maximum (exclusive too),
 * nullable. Anything else is relaxed — the grammar then accepts more than
 * the schema, never less — and named in a warning. The JSON text the rules
 * accept is RFC 8259 with bounded whitespace (GRAM_WS_MAX between tokens),
 * object members in the schema's property order. */
#ifndef CF_GRAMMAR_JSON_SCHEMA_H
#define CF_GRAMMAR_JSON_SCHEMA_H

#include "gram.h"

enum { GRAM_WS_MAX = 32, SCHEMA_MAX_DEPTH = 64 };

typedef struct SchemaCx SchemaCx;
SchemaCx *schema_cx_new(Gram *g, Value root_document);
/* Objects whose schema does not say additionalProperties take only their
 * declared properties (tool arguments: a key the tool does not declare is
 * never one it reads; llama.cpp's and xgrammar's tool grammars do the same). */
void schema_cx_close_objects(SchemaCx *c);
/* A rule for the JSON values `schema` accepts, named after `name`. */
uint32_t schema_rule(SchemaCx *c, Value schema, const char *name);
/* Does every value `schema` accepts include strings? (typed-XML formats
 * write such parameters raw) */
bool schema_takes_string(SchemaCx *c, Value schema);
/* For a schema that only allows strings: its enum/const strings as raw
 * literals, or NULL when it allows any text. */
GExpr *schema_raw_string_choices(SchemaCx *c, Value schema);
/* Shared rules */
uint32_t gram_ws(Gram *g);           /* JSON whitespace, bounded */
GExpr *gram_ws_ref(Gram *g);         /* a reference to it */
uint32_t gram_any_value(Gram *g);    /* any JSON value */
uint32_t gram_string(Gram *g);       /* any JSON string */
/* A JSON value's exact text as json.dumps writes it (whitespace free between tokens). */
GExpr *gram_json_literal(Gram *g, Value v);
/* Dictionary lookup by C string. */
bool schema_get(Value obj, const char *key, Value *out);

/* regex.c: a JSON Schema `pattern` as the body of a JSON string (without
 * the quotes), or NULL when it uses what the subset lacks. */
GExpr *regex_to_string_body(Gram *g, const char *pattern, size_t n);

#endif
