/* quantity.h - Kubernetes resource.Quantity, exactly as upstream computes it.
 *
 * A qty is a plain value type: no heap, no pointers, copy it by assignment and
 * never free it. The struct fields are private to quantity.c (tests may read
 * them); go through the functions. Nothing here does I/O or keeps global state.
 *
 * Values are exact decimals: a base-1e9 magnitude of QTY_LIMBS limbs (72
 * significant digits) times a power of ten, so `10E`, `9999999999999999999` and
 * sums beyond int64 stay exact. Only a value whose significant digits (from its
 * highest digit down to its lowest non-zero one) exceed 72 is refused, with
 * QTY_ERR_RANGE; upstream (arbitrary precision) would accept it.
 *
 * Alongside the value, a qty mirrors which representation upstream would hold
 * (int64Amount or inf.Dec, and its scale), because Value()/MilliValue() round
 * differently for the two. Printing is always the canonical form; allot never
 * echoes the text a value was parsed from (spec: "Decisions for allot").
 *
 * Errors are negative codes from QTY_ERRORS; qty_strerror gives upstream's text.
 */
#ifndef ALLOT_CORE_QUANTITY_H
#define ALLOT_CORE_QUANTITY_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define QTY_ERRORS(X)                                                                              \
    X(QTY_ERR_FORMAT, -1,                                                                          \
      "quantities must match the regular expression "                                              \
      "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")                                            \
    X(QTY_ERR_NUMERIC, -2, "unable to parse numeric part of quantity")                             \
    X(QTY_ERR_SUFFIX, -3, "unable to parse quantity's suffix")                                     \
    /* allot only: upstream has no limit (see QTY_LIMBS) */                                        \
    X(QTY_ERR_RANGE, -4, "quantity has more significant digits than are supported")

enum {
    QTY_OK = 0,
#define X(name, code, msg) name = code,
    QTY_ERRORS(X)
#undef X
};

/* Upstream's Format. Any other value is allowed and prints as DecimalExponent. */
typedef enum { QTY_DECIMAL_SI, QTY_BINARY_SI, QTY_DECIMAL_EXPONENT } qty_format;

#define QTY_LIMBS 8     /* base-1e9 limbs: 72 significant decimal digits */
#define QTY_STR_MAX 192 /* enough for any qty_format_str output, with the NUL */

typedef struct qty {
    int64_t exp;              /* value = +-limb * 10^exp; 0 when the value is 0 */
    uint32_t limb[QTY_LIMBS]; /* magnitude, little-endian base 1e9, no trailing decimal 0 */
    int32_t uscale;           /* upstream's internal scale (see quantity.c) */
    uint8_t nlimb;            /* limbs in use; 0 for zero */
    uint8_t neg;              /* 1 when negative (never for zero) */
    uint8_t big;              /* 1 when upstream would hold an inf.Dec */
    uint8_t format;           /* a qty_format */
} qty;

/* Upstream's error text for a QTY_ERR_* code ("" for 0, "unknown error" otherwise). */
const char *qty_strerror(int err);

/* ParseQuantity: 0 or QTY_ERR_*. No whitespace is allowed. On error *out is zero. */
int qty_parse(const char *s, qty *out);
int qty_parse_len(const char *s, size_t len, qty *out);
/* UnmarshalJSON: a string (TrimSpace'd, then parsed), a bare number, or null (zero).
 * `v` is borrowed; a NULL `v` counts as null. Other JSON types are QTY_ERR_FORMAT. */
int qty_from_json(const json_t *v, qty *out);

/* Quantity{Format: f}: zero. */
qty qty_zero(qty_format f);

/* A quantity in 16 bytes, for tables that keep millions (a custom quota's
 * claims): exact when it has at most 18 significant digits and a small
 * exponent and scale, which is nearly every quantity a manifest holds. */
typedef struct qty_small {
    uint64_t mag; /* limb[0] + limb[1] * 1e9 */
    int16_t exp, uscale;
    uint8_t nlimb, neg, format;
    uint8_t small; /* 1: the fields above are the quantity; 0: it did not fit */
} qty_small;
/* q as a qty_small: 0, or -1 when it does not fit (out->small is then 0).
 * Limbs past nlimb (stale after arithmetic) are not kept. */
int qty_to_small(const qty *q, qty_small *out);
/* The quantity of a qty_small that fits (small == 1). */
qty qty_from_small(const qty_small *s);
/* NewScaledQuantity(v, scale) with format f: v * 10^scale. NewQuantity is scale 0,
 * NewMilliQuantity scale -3. */
qty qty_from_int64(int64_t v, int32_t scale, qty_format f);

/* String(): canonical form into buf (NUL-terminated when n > 0, truncated to n-1 chars).
 * Returns the full length, like snprintf; a buf of QTY_STR_MAX never truncates. */
size_t qty_format_str(const qty *q, char *buf, size_t n);
/* New json string of the canonical form (MarshalJSON); caller owns the reference. */
json_t *qty_to_json(const qty *q);

qty_format qty_get_format(const qty *q);
bool qty_is_zero(const qty *q);
int qty_sign(const qty *q);                 /* -1, 0, 1 */
int qty_cmp(const qty *a, const qty *b);    /* -1, 0, 1; exact, format ignored */
int qty_cmp_int64(const qty *a, int64_t b); /* CmpInt64 */

/* Add/Sub: *a += / -= *b, exactly. A zero *a first adopts b's format (so 0 + 1Gi prints
 * 1Gi). Returns 0, or QTY_ERR_RANGE (with *a unchanged) if the exact result needs more
 * than 72 significant digits. */
int qty_add(qty *a, const qty *b);
int qty_sub(qty *a, const qty *b);
void qty_neg(qty *q);

/* ScaledValue(scale): the value in units of 10^scale, rounded up as upstream does
 * (away from zero for int64-backed values; see quantity.c for the inf.Dec quirk);
 * overflow is silent, as upstream (0 or wrapped, depending on the representation). */
int64_t qty_scaled_value(const qty *q, int32_t scale);
int64_t qty_value(const qty *q);       /* Value() = ScaledValue(0) */
int64_t qty_milli_value(const qty *q); /* MilliValue() = ScaledValue(-3) */

/* RoundUp(scale): round away from zero to a multiple of 10^scale; true when exact. */
bool qty_round_up(qty *q, int32_t scale);

#endif
