/* repair.c — undo the damage copying a template out of a web page causes.
 *
 * Each repair fires only on unambiguous evidence: the damage must cover the
 * whole text in its exact shape (every line numbered 1..N, every line a
 * `| … | |` table row, a hub page header whose last line is a commit id).
 * Anything less is left alone — a wrong "repair" would silently change
 * what a template renders. Repairs only remove bytes, so they run in place
 * over one buffer of the input's size.
 *
 * Tags stripped as HTML (`'<tool_call>'` became `''`) cannot be undone; we
 * only detect them, so the caller can explain the render error that follows. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "loader.h"

/* ---- lines ------------------------------------------------------------- */

/* One line of the text: [start, start + len) is its content, without the
 * "\n" or "\r\n" terminator; `next` is where the following line starts. */
typedef struct Line {
    size_t start, len, next;
} Line;

/* The lines of s[0..n): a final empty segment after a trailing newline is
 * not a line (a file ending in "\n" has as many lines as newlines). */
static bool next_line(const char *s, size_t n, size_t pos, Line *line) {
    if (pos >= n) return false;
    const char *nl = memchr(s + pos, '\n', n - pos);
    size_t end = nl ? (size_t)(nl - s) : n;
    line->start = pos;
    line->next = nl ? end + 1 : n;
    if (nl && end > pos && s[end - 1] == '\r') end--;
    line->len = end - pos;
    return true;
}

static bool has_prefix(const char *p, size_t n, const char *prefix) {
    size_t k = strlen(prefix);
    return n >= k && memcmp(p, prefix, k) == 0;
}

static bool has_suffix(const char *p, size_t n, const char *suffix) {
    size_t k = strlen(suffix);
    return n >= k && memcmp(p + n - k, suffix, k) == 0;
}

static bool contains(const char *s, size_t n, const char *needle) {
    return cf_memmem(s, n, needle, strlen(needle)) != NULL;
}

static bool has_jinja_markup(const char *s, size_t n) {
    return contains(s, n, "{{") || contains(s, n, "{%");
}

static void note(RepairNotes *notes, const char *fmt, ...) {
    size_t room = sizeof notes->text - notes->len;
    if (room < 2) return;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(notes->text + notes->len, room - 1, fmt, ap);
    va_end(ap);
    if (w < 0) return;
    size_t wrote = (size_t)w < room - 1 ? (size_t)w : room - 2;
    notes->len += wrote;
    notes->text[notes->len++] = '\n';
    notes->text[notes->len] = '\0';
}

/* Rebuild s in place keeping, of every line, content[cut_head .. len - cut_tail)
 * plus its original terminator. cut() says how much to drop for line k. */
typedef void (*CutFn)(const char *s, const Line *line, size_t k, size_t *head, size_t *tail);

static size_t cut_lines(char *s, size_t n, CutFn cut) {
    size_t w = 0, k = 0;
    Line line;
    for (size_t pos = 0; next_line(s, n, pos, &line); pos = line.next) {
        size_t head, tail;
        cut(s, &line, ++k, &head, &tail);
        size_t keep = line.len - head - tail;
        memmove(s + w, s + line.start + head, keep);
        w += keep;
        size_t term = line.next - (line.start + line.len);  /* "\n", "\r\n" or none */
        memmove(s + w, s + line.start + line.len, term);
        w += term;
    }
    return w;
}

/* ---- 1. line numbers glued to every line (raw seed 000) ------------------ */

static size_t decimal(size_t k, char buf[24]) {
    return (size_t)snprintf(buf, 24, "%zu", k);
}

static void cut_line_number(const char *s, const Line *line, size_t k, size_t *head, size_t *tail) {
    char buf[24];
    *head = decimal(k, buf);
    *tail = 0;
}

/* Every line k starts with the decimal k (empty template lines became the
 * bare number). A numbered list ("1. foo", "2) bar") has the same shape, so
 * text where every remainder starts like a list item is left alone. */
static size_t repair_line_numbers(char *s, size_t n, RepairNotes *notes) {
    size_t k = 0, list_like = 0, nonempty = 0;
    Line line;
    for (size_t pos = 0; next_line(s, n, pos, &line); pos = line.next) {
        char buf[24];
        size_t d = decimal(++k, buf);
        if (line.len < d || memcmp(s + line.start, buf, d) != 0) return n;
        const char *rest = s + line.start + d;
        size_t rest_len = line.len - d;
        if (rest_len == 0) continue;
        nonempty++;
        if (rest_len >= 2 && strchr(".):", rest[0]) && (rest[1] == ' ' || rest[1] == '\t')) list_like++;
    }
    if (k < 3 || nonempty == 0 || list_like == nonempty) return n;
    note(notes, "repaired: removed line-number prefixes from %zu lines", k);
    return cut_lines(s, n, cut_line_number);
}

/* ---- 2. markdown table rows `| … | |` (raw seed 002) ---------------------- */

static const char ROW_HEAD[] = "| ", ROW_TAIL[] = " | |", ROW_EMPTY[] = "| | |";

static bool is_table_row(const char *p, size_t n) {
    if (n == sizeof ROW_EMPTY - 1 && memcmp(p, ROW_EMPTY, n) == 0) return true;
    return n >= sizeof ROW_HEAD - 1 + sizeof ROW_TAIL - 1 && has_prefix(p, n, ROW_HEAD) &&
           has_suffix(p, n, ROW_TAIL);
}

static void cut_table_row(const char *s, const Line *line, size_t k, size_t *head, size_t *tail) {
    if (line->len == sizeof ROW_EMPTY - 1) {   /* "| | |": an empty line, collapsed */
        *head = line->len;
        *tail = 0;
        return;
    }
    *head = sizeof ROW_HEAD - 1;
    *tail = sizeof ROW_TAIL - 1;
}

static size_t repair_table_rows(char *s, size_t n, RepairNotes *notes) {
    size_t rows = 0;
    Line line;
    for (size_t pos = 0; next_line(s, n, pos, &line); pos = line.next) {
        if (!is_table_row(s + line.start, line.len)) return n;
        rows++;
    }
    if (rows < 2) return n;
    note(notes, "repaired: unwrapped %zu markdown table rows ('| ... | |')", rows);
    return cut_lines(s, n, cut_table_row);
}

/* ---- 3. a model hub file page's header (raw seed 004) ---------------------
 * Copying the page of a file on a model hub brings along, before the file:
 *     REPO / PATH                  breadcrumb
 *     USER's picture               avatar caption (optional)
 *     COMMIT MESSAGE               (optional)
 *     ab4a70c verified             short commit id and its badge
 * The signature is a breadcrumb first line and a commit-id line within the
 * first few lines, with no template markup anywhere in between. */

enum { HEADER_MAX_LINES = 8 };

static bool is_hex_id(const char *p, size_t n) {
    if (n < 7 || n > 40) return false;
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
    }
    return true;
}

/* "ab4a70c", "ab4a70c verified", "ab4a70c unverified" */
static bool is_commit_line(const char *p, size_t n) {
    while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t')) n--;
    const char *sp = memchr(p, ' ', n);
    if (!sp) return is_hex_id(p, n);
    size_t id_len = (size_t)(sp - p), rest = n - id_len - 1;
    const char *badge = sp + 1;
    bool badge_ok = (rest == 8 && memcmp(badge, "verified", 8) == 0) ||
                    (rest == 10 && memcmp(badge, "unverified", 10) == 0);
    return badge_ok && is_hex_id(p, id_len);
}

/* "owner-model / chat_template.jinja": text, " / ", then a path without spaces. */
static bool is_breadcrumb(const char *p, size_t n) {
    size_t sep = 0;
    bool found = false;
    for (size_t i = 0; i + 3 <= n; i++) {
        if (memcmp(p + i, " / ", 3) == 0) { sep = i; found = true; }
    }
    if (!found || sep == 0) return false;
    const char *path = p + sep + 3;
    size_t path_len = n - sep - 3;
    if (path_len == 0) return false;
    for (size_t i = 0; i < path_len; i++) {
        if (path[i] == ' ' || path[i] == '\t') return false;
    }
    return true;
}

static bool has_template_markup(const char *p, size_t n) {
    return contains(p, n, "{{") || contains(p, n, "{%") || contains(p, n, "{#");
}

static size_t repair_hub_header(char *s, size_t n, RepairNotes *notes) {
    Line lines[HEADER_MAX_LINES];
    size_t count = 0, pos = 0;
    while (count < HEADER_MAX_LINES && next_line(s, n, pos, &lines[count])) {
        pos = lines[count].next;
        count++;
    }
    if (count < 3 || !is_breadcrumb(s + lines[0].start, lines[0].len) ||
        has_template_markup(s + lines[0].start, lines[0].len))
        return n;
    for (size_t h = 1; h + 1 < count; h++) {
        const Line *l = &lines[h];
        if (has_template_markup(s + l->start, l->len)) return n;
        if (!is_commit_line(s + l->start, l->len)) continue;
        if (lines[h + 1].len == 0) return n;          /* the template must follow at once */
        size_t drop = lines[h].next;
        note(notes, "repaired: removed %zu model-hub page header lines before the template "
                    "('%.*s' ... '%.*s')",
             h + 1, (int)lines[0].len, s + lines[0].start, (int)l->len, s + l->start);
        memmove(s, s + drop, n - drop);
        return n - drop;
    }
    return n;
}

/* ---- entry points -------------------------------------------------------- */

size_t repair_web_copy(const char *in, size_t len, char *out, RepairNotes *notes) {
    notes->len = 0;
    notes->text[0] = '\0';
    memcpy(out, in, len);
    out[len] = '\0';
    if (!has_jinja_markup(in, len)) return len;   /* not a template: nothing is evidence */
    size_t n = repair_hub_header(out, len, notes);
    n = repair_table_rows(out, n, notes);
    n = repair_line_numbers(out, n, notes);
    out[n] = '\0';
    return n;
}

/* Stripping `<tag>`s as HTML leaves code that cannot be meant: an empty
 * separator (Python raises "empty separator"), an empty prefix test that is
 * always true, prose that names tags it no longer shows. We flag only text
 * with no `<letter` / `</` / `<!` anywhere (a stripper leaves none) and at
 * least one such trace — neither fires on the corpus of real templates. */
static const char *const STRIPPED_TRACES[] = {
    "split('')", "split(\"\")", "startswith('')", "startswith(\"\")",
    "endswith('')", "endswith(\"\")", "'' in ", "\"\" in ",
    "within XML tags", "within tags", "within  tags",
};

bool looks_tag_stripped(const char *s, size_t n) {
    const char *end = s + n;
    for (const char *p = n ? memchr(s, '<', n) : NULL; p && p + 1 < end; p = memchr(p + 1, '<', (size_t)(end - p - 1))) {
        char c = p[1];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '/' || c == '!') return false;
    }
    for (size_t i = 0; i < sizeof STRIPPED_TRACES / sizeof *STRIPPED_TRACES; i++) {
        if (contains(s, n, STRIPPED_TRACES[i])) return true;
    }
    return false;
}
