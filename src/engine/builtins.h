/* builtins.h — the builtin filters, tests and Python methods, looked up by
 * name. Each lives in its own file (filters.c, tests.c, methods.c) and is
 * called by the interpreter with evaluated arguments.
 *
 * The three files call each other through this header, as Jinja2's own
 * modules do: select/reject apply a test (filters -> tests), the `filter`
 * and `test` tests ask whether a name exists (tests -> filters), and value.c's
 * attribute lookup finds bound methods here (value -> methods) while the
 * methods build their results with value.c. They form one layer, the
 * builtins over the values; the interpreter sits above them and only the
 * eval context's autoescape flag is read back from it (interp_autoescape). */
#ifndef CF_BUILTINS_H
#define CF_BUILTINS_H

#include "value.h"

/* A filter: {{ self | name(args) }}. */
typedef Value (*FilterFn)(Rt *rt, Value self, const Args *args);
/* A test: {{ self is name(args) }}. */
typedef bool (*TestFn)(Rt *rt, Value self, const Args *args);

/* NULL when no such filter/test (the interpreter then raises Jinja2's
 * TemplateAssertionError-equivalent at compile time: "No filter named 'x'."). */
FilterFn filter_lookup(const char *name, size_t n);
/* Whether the filter, given no arguments, always gives the same result for
 * the same operand, at a cost worth remembering it (lower, trim). */
bool filter_is_pure(FilterFn fn);
bool filter_is_tojson(FilterFn fn);
/* x|tojson(args) written at the end of sb: what the filter returns, without
 * making it a str (the interpreter writes an output's JSON through a buffer
 * it reuses). Steps and errors as the filter's. */
void filter_tojson_into(Rt *rt, StrBuf *sb, Value self, const Args *args);
bool filter_is_length(FilterFn fn);   /* length and its alias count */
/* Jinja2's eval_ctx.autoescape during a render (interp.c): inside an
 * {% autoescape %} block that is on. The filters that take the eval
 * context read it. */
bool interp_autoescape(Rt *rt);
TestFn test_lookup(const char *name, size_t n);
/* The tests that only look at a value's type (`x is string`), which the
 * interpreter answers without calling them when they take no argument. */
enum { TYPE_TEST_NONE, TYPE_TEST_DEFINED, TYPE_TEST_UNDEFINED, TYPE_TEST_IS_NONE, TYPE_TEST_STRING,
       TYPE_TEST_MAPPING };
uint8_t test_type_id(TestFn fn);

/* Python method call self.name(args) allowed by the immutable sandbox.
 * Returns true and sets *out if `self` has such a method. Mutating methods
 * (list.append, dict.update, ...) throw SecurityError as Jinja2's immutable
 * sandbox does ("access to attribute 'append' of 'list' object is unsafe.").
 * Returns false when the type has no such method (caller: Undefined). */
bool method_call(Rt *rt, Value self, const char *name, size_t n, const Args *args,
                 Value *out);
/* A str method by name (NULL if str has none), resolved once by the parser
 * for calls such as content.strip(), and called with str_method_invoke
 * when the receiver is a str: as method_call, without the lookup. */
typedef struct Method Method;
const Method *str_method_find(const char *name, size_t n);
/* How many entries of str_method_find's index (written as data) disagree
 * with the method table: 0 (tests/test_methods.c). */
size_t str_method_index_mismatches(void);
Value str_method_invoke(Rt *rt, const Method *m, Value self, const Args *args);
/* The str methods filters call (trim, lower, replace, wordwrap...), by
 * number: no lookup by name. Arguments positional, as the method takes them.
 * A self that is no str raises AttributeError ("'int' object has no
 * attribute 'strip'"), as Python's getattr. */
typedef enum StrMethodId {
    SM_STRIP, SM_SPLIT, SM_RSPLIT, SM_SPLITLINES, SM_REPLACE, SM_UPPER, SM_LOWER, SM_CAPITALIZE,
    SM_CENTER
} StrMethodId;
Value str_method_call(Rt *rt, StrMethodId id, Value self, int npos, const Value *pos);
/* str.upper() (upper) or str.lower() of the UTF-8 text p[0, n), appended to
 * sb: a piece of a string cased without making it a string first. */
void str_case_into(StrBuf *sb, const char *p, size_t n, bool upper);
/* Whether `self` has a method called name (for attribute access without a
 * call, e.g. `d.items` printed or tested `is callable`). */
bool method_exists(Value self, const char *name, size_t n);
/* Whether self.name is a mutating method the immutable sandbox refuses
 * (list.append, dict.update, ...). Jinja2's getattr then yields an Undefined
 * whose use raises SecurityError "access to attribute 'append' of 'list'
 * object is unsafe." (method_exists is true for these, as in Python). */
bool method_is_unsafe(Value self, const char *name, size_t n);

/* Charge the work a filter or method may do over its operand (a step is
 * about 50 ns): half a step a byte of a string, a step an item of a list or
 * dict. The interpreter calls it for every filter and method call; filters
 * that apply a filter or test per item (map, select) call it per item. */
static inline void charge_operand(Rt *rt, Value v) {
    if (v.type == VT_STR) rt_step(rt, v.u.s->len / 2);
    else if (v.type == VT_LIST || v.type == VT_TUPLE) rt_step(rt, v.u.list->len);
    else if (v.type == VT_DICT) rt_step(rt, dict_len(v.u.dict));
}

/* Shared helpers the filters need from the interpreter side. */
/* Python % formatting: fmt % args (args: a tuple, a dict, or one value). */
Value py_percent_format(Rt *rt, Value fmt, Value args);
/* Python str.format(*args, **kwargs). */
Value py_str_format(Rt *rt, Value fmt, const Args *args);
/* Markup escape (Jinja2/markupsafe escape): & < > ' " -> &amp; &lt; &gt; &#39; &#34; */
Value markup_escape(Rt *rt, Value v);

/* Python number conversions (format.c), shared by the filters.
 * py_int_from_float: int(d) — truncates; an exact VT_BIGINT beyond int64;
 *   OverflowError for infinities, ValueError for NaN, as Python.
 * py_parse_int: int(text, base) for a str; base 0 or 2..36. Returns false
 *   where Python raises ValueError (caller words the message).
 * py_parse_float: float(text) for a str; false where Python raises ValueError. */
Value py_int_from_float(Rt *rt, double d);
/* Python limits int <-> decimal text conversions to 4300 digits (3.11). */
enum { INT_MAX_STR_DIGITS = 4300 };
bool py_parse_int(Rt *rt, const char *s, size_t n, int base, Value *out);
bool py_parse_float(Rt *rt, const char *s, size_t n, double *out);

#endif
