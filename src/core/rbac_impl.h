/* rbac_impl.h - what the rbac*.c files share. Not for use outside core/rbac. */
#ifndef ALLOT_CORE_RBAC_IMPL_H
#define ALLOT_CORE_RBAC_IMPL_H

#include "core/dbuf.h"
#include "core/rbac.h"

#include <stdbool.h>

#define RBAC_TEXT_MAX (1u << 20) /* ceiling of any text built here */

bool rbac_strv_has(const rbac_strv *s, const char *v);
/* Go's %q of s, appended. 0 or -1. */
int rbac_quote(dbuf *b, const char *s);
/* Go's %q of a []string: ["a" "b"]. 0 or -1. */
int rbac_quote_list(dbuf *b, const char *const *v, size_t n);

/* ConfirmNoEscalation's text for user `u` and the rules it lacks:
 * "user %q (groups=%q) is attempting to grant RBAC permissions not currently
 * held:\n" + the CompactRules of `missing`, CompactString'd, sorted, one a line;
 * then "; resolution errors: [<err>]" when `err` is non-empty. */
void rbac_escalation_text(const rbac_user *u, const rbac_rules *missing, const char *err, char *buf,
                          size_t n);

#endif
