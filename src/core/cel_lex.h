/* cel_lex.h - the CEL lexer (internal to the cel*.c files; see cel_parse.c).
 *
 * Tokens are those of cel-go's ANTLR grammar: identifiers, the keywords true, false,
 * null and in, int/uint/double literals (decimal or 0x hex ints, a u suffix for uints),
 * quoted, triple-quoted and raw strings with CEL's escapes (decoded into the arena),
 * operators and punctuation; whitespace and // comments are skipped. Bytes literals
 * are refused. Errors read as ANTLR's: "token recognition error at: '...'".
 */
#ifndef ALLOT_CORE_CEL_LEX_H
#define ALLOT_CORE_CEL_LEX_H

#include "core/cel_impl.h"

typedef enum {
    K_EOF,
    K_INT,
    K_UINT,
    K_DOUBLE,
    K_STRING,
    K_IDENT,
    K_TRUE,
    K_FALSE,
    K_NULL,
    K_IN,
    K_LPAREN,
    K_RPAREN,
    K_LBRACK,
    K_RBRACK,
    K_LBRACE,
    K_RBRACE,
    K_DOT,
    K_COMMA,
    K_COLON,
    K_QUESTION,
    K_PLUS,
    K_MINUS,
    K_STAR,
    K_SLASH,
    K_PERCENT,
    K_NOT,
    K_EQ,
    K_NE,
    K_LT,
    K_LE,
    K_GT,
    K_GE,
    K_AND,
    K_OR,
} cel_tok_kind;

typedef struct cel_token {
    cel_tok_kind k;
    uint32_t pos, len;
    bool hex;      /* K_INT/K_UINT written 0x... */
    bool range;    /* K_INT/K_UINT/K_DOUBLE: the digits do not fit */
    uint64_t u;    /* K_INT/K_UINT magnitude */
    double d;      /* K_DOUBLE */
    const char *s; /* K_STRING: decoded, in the program arena */
    size_t sn;
} cel_token;

typedef struct cel_lexer {
    cel_arena *arena; /* decoded string literals go here */
    const char *src;  /* NUL-terminated */
    size_t n, off;
    cel_issue *is;
} cel_lexer;

/* The next token; false (with *lx->is set) on a lexical error. At the end of the
 * source the token is K_EOF, positioned at n. */
bool cel_lex(cel_lexer *lx, cel_token *t);

#endif
