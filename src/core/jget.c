/* jget.c - see jget.h. */
#include "core/jget.h"

#include <stdarg.h>

const json_t *json_at(const json_t *o, ...)
{
    va_list ap;
    va_start(ap, o);
    for (const char *k = va_arg(ap, const char *); k && o; k = va_arg(ap, const char *))
        o = json_object_get(o, k); /* NULL for a non-object */
    va_end(ap);
    return o;
}

const char *json_text(const json_t *v)
{
    const char *s = json_string_value(v);
    return s ? s : "";
}
