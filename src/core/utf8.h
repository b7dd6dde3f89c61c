/* utf8.h - cutting text without cutting a character.
 *
 * Bounded messages (a Status, a conflict list) are cut at a byte count; a
 * cut inside a multi-byte UTF-8 character leaves text that is not UTF-8,
 * which jansson refuses to encode (the message would vanish from the
 * answer). Pure: no I/O, no globals, no allocation.
 */
#ifndef ALLOT_CORE_UTF8_H
#define ALLOT_CORE_UTF8_H

#include <stddef.h>

/* The length of s[0..n) without a character cut short at its end: n, or
 * less when s[n-1] is inside a multi-byte sequence that s[0..n) does not
 * complete. To cut a longer string at n bytes, or mend what a truncating
 * vsnprintf left. Bytes that are not UTF-8 anyway are left as they are. */
size_t utf8_cut(const char *s, size_t n);

#endif
