/* html_entities.h — HTML5's named character references, as Python's
 * html.unescape knows them (generated: tools/gen_html_entities.py). */
#ifndef CHATFMT_HTML_ENTITIES_H
#define CHATFMT_HTML_ENTITIES_H
#include <stddef.h>

/* The UTF-8 text of the reference whose name (after '&', with its ';' if
 * it has one) is the n bytes at name; NULL if HTML5 has no such name. */
const char *html_entity(const char *name, size_t n);

#endif
