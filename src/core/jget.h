/* jget.h - a member of a parsed JSON object (jansson) by its path of keys.
 *
 *   jget(pod, "spec", "nodeName")    pod.spec.nodeName, or NULL
 *   jstr(pod, "spec", "nodeName")    the string there, or NULL
 *   jtext(pod, "spec", "nodeName")   the string there, or ""
 *
 * NULL when the object is NULL, a key is missing, or a step on the way is
 * not an object; so a reader checks the result once, not every step. A
 * value of another type than string is NULL to jstr and "" to jtext.
 *
 * Pure: no I/O, no allocation.
 */
#ifndef ALLOT_CORE_JGET_H
#define ALLOT_CORE_JGET_H

#include <jansson.h>

/* The member at the keys that follow o, up to a NULL key. Use jget(). */
const json_t *json_at(const json_t *o, ...);

/* The string, or "" for NULL or any value that is not a string. */
const char *json_text(const json_t *v);

#define jget(o, ...) json_at((o), __VA_ARGS__, (const char *)NULL)
#define jstr(o, ...) json_string_value(jget((o), __VA_ARGS__))
#define jtext(o, ...) json_text(jget((o), __VA_ARGS__))

#endif
