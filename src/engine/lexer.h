/* lexer.h — template source -> tokens, with Jinja2's exact whitespace rules
 * (trim_blocks, lstrip_blocks, `-`/`+` modifiers, raw blocks, newline
 * normalisation, one trailing newline dropped). */
#ifndef CF_LEXER_H
#define CF_LEXER_H

#include "value.h"

typedef enum TokType {
    T_EOF, T_DATA, T_VAR_BEGIN, T_VAR_END, T_BLOCK_BEGIN, T_BLOCK_END,
    T_NAME, T_STRING, T_INT, T_FLOAT, T_OP,
    T_ERROR   /* the lexer failed here: v = message; the parser raises it on reaching it */
} TokType;

typedef enum OpCode {
    OP_NONE, OP_ADD, OP_SUB, OP_DIV, OP_FLOORDIV, OP_MUL, OP_MOD, OP_POW, OP_TILDE,
    OP_LBRACKET, OP_RBRACKET, OP_LPAREN, OP_RPAREN, OP_LBRACE, OP_RBRACE,
    OP_EQ, OP_NE, OP_GT, OP_GE, OP_LT, OP_LE, OP_ASSIGN, OP_DOT, OP_COLON,
    OP_PIPE, OP_COMMA, OP_SEMICOLON
} OpCode;

typedef struct Token {
    uint8_t type;      /* TokType */
    uint8_t op;        /* OpCode for T_OP */
    int line, col;
    const char *p;     /* raw text in the normalised source */
    size_t n;
    Value v;           /* T_DATA/T_STRING: str; T_INT: int/bigint; T_FLOAT: float;
                          T_NAME: str (the name) */
} Token;

typedef struct TokenList { Token *t; size_t n, cap; } TokenList;

/* Normalise newlines and drop one trailing newline (Jinja2's
 * keep_trailing_newline=False); result lives in rt's arena. */
Str *lex_normalize_source(Rt *rt, const char *src, size_t len);
/* Tokenise the normalised source. Jinja2 lexes lazily, as its parser asks
 * for tokens, so a parser error before a lexer error wins: a lexer error
 * ends the list as a T_ERROR token, raised when the parser reaches it. Other
 * errors (limits, memory) are thrown at once. */
void lex_tokens(Rt *rt, const Str *src, TokenList *out);

#endif
