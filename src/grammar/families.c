/* families.c — grammars for the hand-written reply families (src/reply:
 * harmony, llama3, pythonic, mistral, functionary, functools, gemma4, xlam). */
#include "calls.h"

bool family_syntax(cf_reply_format f, CallSyntax *out) {
    (void)f;
    (void)out;
    return false;
}
