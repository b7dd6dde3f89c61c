/* b64.h - standard base64 (RFC 4648, with padding), as Go's
 * encoding/base64.StdEncoding reads and writes the []byte fields of the API
 * (a Secret's data, a ConfigMap's binaryData).
 *
 * Pure: no allocation; the caller sizes the buffers (b64_encoded_len,
 * b64_decoded_len). Decoding is strict as StdEncoding's is: the length a
 * multiple of 4, padding only at the end, no whitespace.
 */
#ifndef ALLOT_CORE_B64_H
#define ALLOT_CORE_B64_H

#include <stdbool.h>
#include <stddef.h>

/* Bytes b64_encode writes for n input bytes, without the NUL. */
size_t b64_encoded_len(size_t n);
/* Encode n bytes into out (b64_encoded_len(n) + 1 bytes); NUL-terminated. */
void b64_encode(const unsigned char *in, size_t n, char *out);
/* Bytes `s` (len bytes of base64) decodes to; -1 when it is not valid
 * StdEncoding text. Reads no more than it must to tell. */
long b64_decoded_len(const char *s, size_t len);
/* Decode len bytes of base64 into out (b64_decoded_len bytes). Returns the
 * byte count, or -1 when the text is not valid (out then undefined). */
long b64_decode(const char *s, size_t len, unsigned char *out);

#endif
