/* test_reply_formats.c — the reply format table (src/reply/formats.c):
 * every description keeps the engine's marker rules (engine_check_desc:
 * matching stays one pass), names and examples round-trip through the
 * public API, and names are unique. Run from the repository root. */
#include <stdio.h>
#include <string.h>
#include "chatfmt.h"
#include "reply/format_desc.h"

static int passed, failed;

static void check(bool ok, const char *what, const char *detail) {
    if (ok) {
        passed++;
        return;
    }
    failed++;
    fprintf(stderr, "FAIL %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
}

int main(void) {
    size_t described = 0;
    for (int k = 0; k < CF_REPLY_FORMAT_COUNT; k++) {
        const ReplyFormatDesc *d = reply_format_desc((cf_reply_format)k);
        if (!d) continue;
        described++;
        check(d->id == (cf_reply_format)k, d->name, "its id");
        const char *why = engine_check_desc(d);
        check(why == NULL, d->name, why);
        cf_reply_format f;
        check(cf_reply_format_from_name(d->name, &f) && f == d->id, d->name, "name round trip");
        check(cf_reply_format_example(d->id) == d->example && d->example && *d->example, d->name, "example");
    }
    for (int a = 0; a < CF_REPLY_FORMAT_COUNT; a++) {
        const char *na = cf_reply_format_name((cf_reply_format)a);
        check(cf_reply_format_example((cf_reply_format)a) != NULL, na, "every format has an example");
        for (int b = a + 1; b < CF_REPLY_FORMAT_COUNT; b++)
            check(strcmp(na, cf_reply_format_name((cf_reply_format)b)) != 0, na, "names are unique");
    }
    /* a description that breaks the rules is refused: a marker inside
     * another, before its end, would complete in the middle of a held prefix */
    ReplyFormatDesc bad = REPLY_FORMATS[0];
    bad.drop[0] = "x<tool_call>y";
    check(engine_check_desc(&bad) != NULL, "a rule-breaking description", "refused");
    bad = REPLY_FORMATS[0];
    bad.drop[0] = "<a<b>";   /* a marker's first byte inside another: the matcher restarts there */
    check(engine_check_desc(&bad) == NULL, "a marker beginning inside another's prefix", "accepted");
    bad = REPLY_FORMATS[0];
    bad.section_open[1] = "<tool_call>x";
    check(engine_check_desc(&bad) != NULL, "a prefix marker", "refused");
    check(described >= REPLY_FORMATS_COUNT, "every entry of REPLY_FORMATS", "is found by its id");
    printf("%zu described formats\n%d passed, %d failed\n", described, passed, failed);
    return failed ? 1 : 0;
}
