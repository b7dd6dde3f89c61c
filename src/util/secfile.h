/* secfile.h - small, careful file I/O for the data directory's secrets.
 *
 * Used by tls.c, auth.c and kubeconfig.c, which all persist files that must
 * never be seen half-written or world-readable. A write goes to a temporary
 * file in the same directory (created 0600), is fsync'd, gets its final mode,
 * and is renamed (or linked, for no-clobber) into place; the directory is then
 * fsync'd so the new name survives a crash. Reads are bounded by a caller cap.
 * This module never logs file contents: they are keys and tokens.
 */
#ifndef ALLOT_UTIL_SECFILE_H
#define ALLOT_UTIL_SECFILE_H

#include <stddef.h>
#include <sys/types.h>

/* Returned by secfile_read when the file does not exist (not an error). */
#define SECFILE_ENOENT 1
/* Returned by secfile_write with no_clobber when the file already exists. */
#define SECFILE_EXISTS 1

/* Create dir and its missing parents; directories created here get `mode`.
 * An existing directory is left as it is. 0 or -1 with err filled. */
int secfile_mkdirs(const char *dir, mode_t mode, char *err, size_t errlen);

/* Atomically replace (or, with no_clobber, create) `path` with `len` bytes of
 * `data` and permissions exactly `mode` (umask does not apply). With no_clobber
 * an existing file is left untouched and SECFILE_EXISTS returned.
 * 0 on success, SECFILE_EXISTS, or -1 with err filled. */
int secfile_write(const char *path, const void *data, size_t len, mode_t mode, int no_clobber,
                  char *err, size_t errlen);

/* Read all of `path` (at most `max` bytes, else an error) into a new
 * NUL-terminated buffer. On 0, *out is owned by the caller (free()) and *len
 * (if non-NULL) excludes the NUL. SECFILE_ENOENT if missing, -1 with err
 * filled on any other failure; *out is NULL unless 0 is returned. */
int secfile_read(const char *path, size_t max, char **out, size_t *len, char *err, size_t errlen);

/* The data directory, private: create it (and missing parents) with mode
 * exactly 0700, umask notwithstanding; an existing directory that group or
 * others can reach is tightened to 0700 (its owner bits kept). Returns 0 when
 * nothing needed changing, 1 when it tightened an existing directory (*was
 * is the old mode, for the caller's warning), -1 with err filled (not a
 * directory, or not ours to chmod). */
int secfile_private_dir(const char *dir, mode_t *was, char *err, size_t errlen);

/* An existing file that group or others can read is made 0600 (owner bits
 * kept). 0 when absent or already private, 1 when tightened (*was the old
 * mode), -1 with err filled. Symbolic links are not followed. */
int secfile_private_file(const char *path, mode_t *was, char *err, size_t errlen);

/* snprintf "dir/name" into buf; -1 (with err filled) if it does not fit. */
int secfile_join(char *buf, size_t n, const char *dir, const char *name, char *err, size_t errlen);

#endif
