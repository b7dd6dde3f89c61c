/* jdump.h - compact JSON text and deep copies of jansson values, fast.
 *
 * jansson 2.14's json_dumps and json_deep_copy check every object and
 * array for a reference cycle by formatting its address with snprintf and
 * adding it to a hash table (jsonp_loop_check): for a pod, whose
 * managedFields are dozens of small objects, that bookkeeping is most of
 * the work (callgrind: about 180,000 instructions to dump a 1.5 KB pod,
 * more than half in snprintf and the table). allot's values are trees built
 * by parsing or by code that never makes a cycle, so these do the same
 * without the check:
 *  - jdump's text is byte for byte json_dumps(v, JSON_COMPACT): members in
 *    insertion order, jansson's escapes (\" \\ \b \f \n \r \t, \u00XX for
 *    other control characters, UTF-8 passed through), integers as %lld,
 *    reals as jansson writes them; NULL (as json_dumps) when a string is not
 *    valid UTF-8 or a value is nested deeper than JDUMP_MAX_DEPTH;
 *  - jcopy is json_deep_copy: members in the same order, strings copied
 *    as they are.
 * tests/unit/test_jdump.c and fuzz/fuzz_jdump.c hold them to jansson's own.
 *
 * Pure: no I/O, no globals. A value that is a cycle recurses up to
 * JDUMP_MAX_DEPTH and fails (NULL) rather than looping.
 */
#ifndef ALLOT_CORE_JDUMP_H
#define ALLOT_CORE_JDUMP_H

#include <jansson.h>
#include <stddef.h>

#define JDUMP_MAX_DEPTH 4096

/* The compact JSON text of v (malloc'd, NUL-terminated; *len its length
 * when len is given), or NULL. */
char *jdump(const json_t *v, size_t *len);

/* A deep copy of v (a new reference), or NULL when out of memory. */
json_t *jcopy(const json_t *v);

#endif
