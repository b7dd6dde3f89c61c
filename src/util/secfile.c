/* secfile.c - atomic, permission-exact writes and bounded reads. See secfile.h. */
#include "util/secfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int fail_errno(char *err, size_t errlen, const char *what, const char *path)
{
    if (err && errlen) snprintf(err, errlen, "%s %s: %s", what, path, strerror(errno));
    return -1;
}

int secfile_join(char *buf, size_t n, const char *dir, const char *name, char *err, size_t errlen)
{
    int w = snprintf(buf, n, "%s/%s", dir, name);
    if (w < 0 || (size_t)w >= n) {
        if (err && errlen) snprintf(err, errlen, "path too long: %s/%s", dir, name);
        return -1;
    }
    return 0;
}

int secfile_mkdirs(const char *dir, mode_t mode, char *err, size_t errlen)
{
    char buf[PATH_MAX];
    size_t n = strlen(dir);
    if (n == 0 || n >= sizeof buf) {
        if (err && errlen) snprintf(err, errlen, "invalid directory path");
        return -1;
    }
    memcpy(buf, dir, n + 1);
    /* Walk each prefix ending at a '/', then the whole path. */
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] != '/' && buf[i] != '\0') continue;
        char saved = buf[i];
        buf[i] = '\0';
        if (mkdir(buf, mode) != 0 && errno != EEXIST) return fail_errno(err, errlen, "mkdir", buf);
        buf[i] = saved;
    }
    struct stat st;
    if (stat(dir, &st) != 0) return fail_errno(err, errlen, "stat", dir);
    if (!S_ISDIR(st.st_mode)) {
        if (err && errlen) snprintf(err, errlen, "%s exists and is not a directory", dir);
        return -1;
    }
    return 0;
}

int secfile_private_dir(const char *dir, mode_t *was, char *err, size_t errlen)
{
    struct stat st;
    bool existed = stat(dir, &st) == 0;
    if (!existed && secfile_mkdirs(dir, 0700, err, errlen) != 0) return -1;
    if (lstat(dir, &st) != 0) return fail_errno(err, errlen, "stat", dir);
    if (!S_ISDIR(st.st_mode) && !S_ISLNK(st.st_mode)) {
        if (err && errlen) snprintf(err, errlen, "%s exists and is not a directory", dir);
        return -1;
    }
    if (stat(dir, &st) != 0) return fail_errno(err, errlen, "stat", dir);
    if (!S_ISDIR(st.st_mode)) {
        if (err && errlen) snprintf(err, errlen, "%s exists and is not a directory", dir);
        return -1;
    }
    mode_t mode = st.st_mode & 07777;
    /* Created here: exactly 0700 (mkdir's mode went through the umask). */
    mode_t want = existed ? (mode & 0700) | 0700 : 0700;
    if (mode == want) return 0;
    if (chmod(dir, want) != 0) return fail_errno(err, errlen, "chmod", dir);
    if (was) *was = mode;
    return existed && (mode & 077) ? 1 : 0;
}

int secfile_private_file(const char *path, mode_t *was, char *err, size_t errlen)
{
    struct stat st;
    if (lstat(path, &st) != 0) return errno == ENOENT ? 0 : fail_errno(err, errlen, "stat", path);
    if (!S_ISREG(st.st_mode) || !(st.st_mode & 077)) return 0;
    if (chmod(path, (st.st_mode & 0700) | 0600) != 0) return fail_errno(err, errlen, "chmod", path);
    if (was) *was = st.st_mode & 07777;
    return 1;
}

/* fsync the directory holding path, so a rename into it is durable. */
static int sync_parent(const char *path, char *err, size_t errlen)
{
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    if (!slash) {
        strcpy(dir, ".");
    } else if (slash == path) {
        strcpy(dir, "/");
    } else {
        size_t n = (size_t)(slash - path);
        if (n >= sizeof dir) n = sizeof dir - 1;
        memcpy(dir, path, n);
        dir[n] = '\0';
    }
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return fail_errno(err, errlen, "open", dir);
    int rc = fsync(fd);
    close(fd);
    return rc == 0 ? 0 : fail_errno(err, errlen, "fsync", dir);
}

static int write_all(int fd, const unsigned char *p, size_t len)
{
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

int secfile_write(const char *path, const void *data, size_t len, mode_t mode, int no_clobber,
                  char *err, size_t errlen)
{
    char tmp[PATH_MAX];
    /* "path.tmp.XXXXXX": same directory, so the rename is atomic. */
    int w = snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", path);
    if (w < 0 || (size_t)w >= sizeof tmp) {
        if (err && errlen) snprintf(err, errlen, "path too long: %s", path);
        return -1;
    }
    int saved, fd = mkostemp(tmp, O_CLOEXEC); /* created 0600: never briefly readable */
    if (fd < 0) return fail_errno(err, errlen, "create", tmp);
    if (write_all(fd, data, len) != 0) goto fail;
    if (fchmod(fd, mode) != 0) goto fail;
    if (fsync(fd) != 0) goto fail;
    if (close(fd) != 0) {
        fd = -1;
        goto fail;
    }
    fd = -1;
    if (no_clobber) {
        /* link() refuses to replace, so two racing creators cannot both win. */
        int rc = link(tmp, path);
        saved = errno;
        unlink(tmp);
        if (rc != 0 && saved == EEXIST) return SECFILE_EXISTS;
        errno = saved;
        if (rc != 0) return fail_errno(err, errlen, "link", path);
    } else if (rename(tmp, path) != 0) {
        saved = errno;
        unlink(tmp);
        errno = saved;
        return fail_errno(err, errlen, "rename", path);
    }
    return sync_parent(path, err, errlen);

fail:
    saved = errno;
    if (fd >= 0) close(fd);
    unlink(tmp);
    errno = saved;
    return fail_errno(err, errlen, "write", tmp);
}

int secfile_read(const char *path, size_t max, char **out, size_t *len, char *err, size_t errlen)
{
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) return SECFILE_ENOENT;
        return fail_errno(err, errlen, "open", path);
    }
    size_t cap = 4096, n = 0;
    int saved;
    char *buf = malloc(cap);
    if (!buf) goto fail;
    for (;;) {
        if (n + 1 >= cap) {
            if (cap > max) {
                errno = EFBIG;
                goto fail;
            }
            char *nb = realloc(buf, cap * 2);
            if (!nb) goto fail;
            buf = nb;
            cap *= 2;
        }
        ssize_t r = read(fd, buf + n, cap - n - 1);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) goto fail;
        if (r == 0) break;
        n += (size_t)r;
    }
    if (n > max) {
        errno = EFBIG;
        goto fail;
    }
    close(fd);
    buf[n] = '\0';
    *out = buf;
    if (len) *len = n;
    return 0;

fail:
    saved = errno;
    close(fd);
    free(buf);
    errno = saved;
    return fail_errno(err, errlen, "read", path);
}
