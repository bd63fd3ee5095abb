/* quote_memo.h — dataset mode's output quoting, reusing what is already
 * quoted. A template writes the same long text at the start of many rows
 * (a preamble, a tool list every request repeats): each worker keeps the
 * last few long outputs with their quoted form, and a row that begins like
 * one of them takes that beginning's quoted bytes with one memcpy, quoting
 * only the rest. json.dumps(ensure_ascii=False) escapes byte by byte, so the
 * bytes are those of quoting the whole output. */
#ifndef CF_CLI_QUOTE_MEMO_H
#define CF_CLI_QUOTE_MEMO_H

#include <stddef.h>
#include "pipeline.h"

typedef struct QuoteMemo QuoteMemo;

/* NULL when memory is out (quote_memo_put then quotes as ob_json_string). */
QuoteMemo *quote_memo_new(void);
void quote_memo_free(QuoteMemo *m);

/* ob_json_string(b, s, n), through the memo of one worker (NULL: none). */
void quote_memo_put(QuoteMemo *m, OutBuf *b, const char *s, size_t n);

#endif
