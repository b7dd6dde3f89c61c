/* utf8.c - cutting text without cutting a character (see utf8.h). */
#include "core/utf8.h"

size_t utf8_cut(const char *s, size_t n)
{
    size_t i = n, cont = 0;
    while (i > 0 && cont < 3 && ((unsigned char)s[i - 1] & 0xC0) == 0x80)
        i--, cont++;
    if (i == 0) return n;
    unsigned char lead = (unsigned char)s[i - 1];
    if (lead < 0xC0) return n; /* ASCII, or a stray continuation: not ours to mend */
    size_t need = lead >= 0xF0 ? 3 : lead >= 0xE0 ? 2 : 1;
    return cont >= need ? n : i - 1;
}
