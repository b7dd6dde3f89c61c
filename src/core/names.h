/* names.h - upstream string-syntax validators (DNS names, qualified names,
 * label values) and Go-style quoting, shared by selectors and validation.
 *
 * These are the k8s.io/apimachinery/pkg/util/validation `Is*` functions:
 * each checks one string and appends upstream's message texts (not field
 * errors) to a name_msgs the caller owns, returning how many it added. The
 * selector parser (core) and ObjectMeta validation (api) both call these, so
 * each rule and its wording lives here only. Pure: no allocation, no I/O.
 *
 * Wording follows the Kubernetes releases before the 1.35 `content` package
 * rewrite: length errors say "must be no more than N characters" and
 * malformed label keys say "a qualified name ...". All texts are in the
 * table at the top of names.c.
 */
#ifndef ALLOT_CORE_NAMES_H
#define ALLOT_CORE_NAMES_H

#include <stdbool.h>
#include <stddef.h>

#define NAME_DNS1123_LABEL_MAX 63
#define NAME_DNS1123_SUBDOMAIN_MAX 253
#define NAME_DNS1035_LABEL_MAX 63
#define NAME_QUALIFIED_MAX 63
#define NAME_LABEL_VALUE_MAX 63

#define NAME_MSGS_MAX 6
#define NAME_MSG_LEN 400

/* A small list of messages; messages past NAME_MSGS_MAX are dropped (no
 * validator here produces more than four). Zero-initialise before use. */
typedef struct name_msgs {
    int n;
    char msg[NAME_MSGS_MAX][NAME_MSG_LEN];
} name_msgs;

/* Each returns the number of messages appended to `m` (0 = valid). */
int name_dns1123_label(const char *v, name_msgs *m);     /* IsDNS1123Label */
int name_dns1123_subdomain(const char *v, name_msgs *m); /* IsDNS1123Subdomain */
int name_dns1035_label(const char *v, name_msgs *m);     /* IsDNS1035Label */
int name_qualified(const char *v, name_msgs *m);         /* IsQualifiedName (label keys) */
int name_label_value(const char *v, name_msgs *m);       /* IsValidLabelValue */
/* IsConfigMapKey: a ConfigMap's or Secret's data key. Its message has
 * upstream's multi-example RegexError form (with the doubled spaces). */
int name_config_key(const char *v, name_msgs *m);
/* path.ValidatePathSegmentName: `prefix` true checks a generateName prefix. */
int name_path_segment(const char *v, bool prefix, name_msgs *m);

/* Join the messages with `sep` into buf (always NUL-terminated). */
void name_msgs_join(const name_msgs *m, const char *sep, char *buf, size_t n);

/* Go's strconv.Quote (what %q prints) for a byte string: adds the quotes,
 * escapes `"`, `\` and control bytes; other bytes pass through. Output is
 * truncated to fit and always NUL-terminated. Returns buf. */
char *name_go_quote(const char *s, char *buf, size_t n);

/* Go's strconv.ParseInt(s, 10, 64) acceptance test; stores the value. */
bool name_parse_int64(const char *s, long long *out);

#endif
