/* test_bigint.c — bigint.c against Python.
 * Table cases: tests/data/bigint_cases.jsonl (from tests/gen_bigint_cases.py).
 * Run from the repository root: build/tests/test_bigint [cases.jsonl] */
#include <math.h>
#include "tagged_value.h"
#include "engine/bigint.h"
#include "engine/lexer.h"

typedef struct OpCase {
    const char *op;
    Value a, b;
    Value result;
} OpCase;

static uint8_t opcode(const char *op) {
    static const struct { const char *text; uint8_t code; } ops[] = {
        {"+", OP_ADD}, {"-", OP_SUB}, {"*", OP_MUL}, {"//", OP_FLOORDIV},
        {"%", OP_MOD}, {"/", OP_DIV}, {"**", OP_POW}};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (!strcmp(op, ops[i].text)) return ops[i].code;
    return OP_NONE;
}

static void run_op(Rt *rt, void *p) {
    OpCase *c = p;
    if (!strcmp(c->op, "neg")) c->result = bigint_neg(rt, c->a);
    else if (!strcmp(c->op, "float")) c->result = v_float(bigint_to_float(rt, c->a));
    else if (!bigint_arith(rt, opcode(c->op), c->a, c->b, &c->result))
        rt_throw(rt, CF_ERR_USAGE, "bigint_arith refused the operands");
}

/* A VT_BIGINT must lie outside int64: v_bigint normalises, so an in-range
 * bigint here would mean a result that bypassed it. */
static bool normalised(Rt *rt, Value v) {
    if (v.type != VT_BIGINT) return true;
    Value again = v_bigint(rt, v.u.s->data, v.u.s->len);
    return again.type == VT_BIGINT;
}

static void table_case(Rt *rt, Value c, const char *line) {
    OpCase oc = {tv_field(c, "op").u.s->data, tv_field(c, "a"), tv_field(c, "b"), v_missing()};
    Value want = tv_field(c, "expect");
    StrBuf got, exp;
    sb_init(rt, &got, 64);
    sb_init(rt, &exp, 64);
    bool limit_only = false;
    if (want.type == VT_STR) {
        sb_put(&exp, want.u.s->data, want.u.s->len);
    } else if (tv_field(want, "msg").type == VT_MISSING) {
        limit_only = true;   /* chatfmt-specific refusal: only the kind is fixed */
        sb_printf(&exp, "!%s", tv_field(want, "error_type").u.s->data);
    } else {
        tv_expected_error(&exp, want);
    }
    if (tv_guarded(rt, run_op, &oc)) {
        v_write_repr(rt, &got, oc.result);
        if (!normalised(rt, oc.result)) sb_puts(&got, " (not normalised)");
    } else if (limit_only) {
        sb_printf(&got, "!%s", cf_error_kind_name(rt->err->kind));
    } else {
        tv_error_text(&got, rt->err);
    }
    sb_putc(&got, '\0');
    sb_putc(&exp, '\0');
    tv_check_str(line, got.p, exp.p);
}

/* Cases the table cannot express. */
static void direct_tests(Rt *rt) {
    /* float(int) without a runtime, and bools */
    tv_check(bigint_to_double(v_bool(true)) == 1.0, "float(True)", "", "1.0");
    tv_check(bigint_to_double(v_int(INT64_MIN)) == -9223372036854775808.0, "float(INT64_MIN)", "", "");
    Value huge = v_bigint(rt, "-1" "000000000000000000000000000000000000000000000000000000000000000000000000000"
                              "000000000000000000000000000000000000000000000000000000000000000000000000000"
                              "000000000000000000000000000000000000000000000000000000000000000000000000000"
                              "000000000000000000000000000000000000000000000000000000000000000000000000000"
                              "00000000000000000000", 321);
    tv_check(isinf(bigint_to_double(huge)) && bigint_to_double(huge) < 0, "float(-10**320)", "", "-inf");
    /* non-integers are refused, not converted */
    Value out = v_none();
    tv_check(!bigint_arith(rt, OP_ADD, v_float(1.0), v_int(1), &out) && out.type == VT_NONE,
             "bigint_arith(1.0, 1) refused", "", "");
    tv_check(!bigint_arith(rt, OP_EQ, v_int(1), v_int(1), &out), "bigint_arith(==) refused", "", "");
    /* -(-2**63) and back */
    Value m = bigint_neg(rt, v_int(INT64_MIN));
    tv_check(m.type == VT_BIGINT && str_eqz(m.u.s, "9223372036854775808"), "-INT64_MIN", m.type == VT_BIGINT ? m.u.s->data : "int", "9223372036854775808");
    Value back = bigint_neg(rt, m);
    tv_check(back.type == VT_INT && back.u.i == INT64_MIN, "-(2**63)", "", "");
}

/* A huge power must be refused before the work: it would otherwise take
 * minutes. The step budget is tiny here, so any real work also fails. */
static void limit_is_immediate(Rt *rt) {
    Value out;
    rt->lim.max_steps = 1000;
    uint64_t before = rt->steps;
    jmp_buf jb, *saved = rt->jb;
    rt->jb = &jb;
    if (!setjmp(jb)) {
        bigint_arith(rt, OP_POW, v_int(2), v_int(1000000000), &out);
        tv_check(false, "2 ** 10 ** 9", "returned", "LimitError");
    } else {
        tv_check(rt->err->kind == CF_ERR_LIMIT && rt->steps - before < 10, "2 ** 10 ** 9 fails at once",
                 rt->err->message, "LimitError, no steps");
    }
    rt->jb = saved;
}

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "tests/data/bigint_cases.jsonl";
    int n = tv_run_file(path, table_case);
    tv_run_direct(direct_tests);
    tv_run_direct(limit_is_immediate);
    fprintf(stderr, "%d table cases\n", n);
    printf("%d passed, %d failed\n", tv_passed, tv_failed);
    return tv_failed ? 1 : 0;
}
