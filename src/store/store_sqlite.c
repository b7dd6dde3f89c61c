/* store_sqlite.c - the SQLite persistence backend.
 *
 * Tables: `objects` holds the current value of every key; `events` keeps the
 * recent write history so that watches resume across a restart (coalesced
 * derived writes are not kept there); `meta` holds the store revision (a
 * delete leaves no object behind to carry it, nor does a derived write).
 * WAL mode with synchronous=FULL: a batch is durable when COMMIT returns.
 * Only the store's writer thread calls write_batch/compact, so one
 * connection suffices and statements are prepared once.
 */
#include "store/store.h"

#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct sqlite_be {
    sqlite3 *db;
    sqlite3_stmt *put, *del, *event, *rev, *begin, *commit, *rollback;
} sqlite_be;

static const char *const schema =
    "CREATE TABLE IF NOT EXISTS objects (key TEXT PRIMARY KEY, rv INTEGER NOT NULL,"
    "  value TEXT NOT NULL) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS events (id INTEGER PRIMARY KEY, rv INTEGER NOT NULL,"
    "  type INTEGER NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v INTEGER NOT NULL);";

static int fail(sqlite_be *b, char *err, size_t errlen, const char *what)
{
    snprintf(err, errlen, "%s: %s", what, b->db ? sqlite3_errmsg(b->db) : "no database");
    return -1;
}

static int prepare(sqlite_be *b, const char *sql, sqlite3_stmt **st, char *err, size_t errlen)
{
    if (sqlite3_prepare_v3(b->db, sql, -1, SQLITE_PREPARE_PERSISTENT, st, NULL) != SQLITE_OK)
        return fail(b, err, errlen, sql);
    return 0;
}

static int sq_load(void *impl, void *ctx,
                   void (*on_object)(void *, const char *, int64_t, const char *, size_t),
                   void (*on_event)(void *, const store_op *), int64_t *rev, char *err,
                   size_t errlen)
{
    sqlite_be *b = impl;
    sqlite3_stmt *st = NULL;
    *rev = 0;
    if (prepare(b, "SELECT key, rv, value FROM objects", &st, err, errlen)) return -1;
    while (sqlite3_step(st) == SQLITE_ROW)
        on_object(ctx, (const char *)sqlite3_column_text(st, 0), sqlite3_column_int64(st, 1),
                  (const char *)sqlite3_column_text(st, 2), (size_t)sqlite3_column_bytes(st, 2));
    sqlite3_finalize(st);
    if (prepare(b, "SELECT rv, type, key, value FROM events ORDER BY id", &st, err, errlen))
        return -1;
    while (sqlite3_step(st) == SQLITE_ROW) {
        store_op ev = {(store_ev_type)sqlite3_column_int(st, 1), sqlite3_column_int64(st, 0),
                       (const char *)sqlite3_column_text(st, 2),
                       (const char *)sqlite3_column_text(st, 3),
                       (size_t)sqlite3_column_bytes(st, 3)};
        on_event(ctx, &ev);
    }
    sqlite3_finalize(st);
    if (prepare(b, "SELECT v FROM meta WHERE k = 'rev'", &st, err, errlen)) return -1;
    if (sqlite3_step(st) == SQLITE_ROW) *rev = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return 0;
}

static int step_reset(sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

static int write_op(sqlite_be *b, const store_op *op)
{
    if (op->type == STORE_EV_DELETED) {
        sqlite3_bind_text(b->del, 1, op->key, -1, SQLITE_STATIC);
        if (step_reset(b->del)) return -1;
    } else {
        sqlite3_bind_text(b->put, 1, op->key, -1, SQLITE_STATIC);
        sqlite3_bind_int64(b->put, 2, op->rv);
        sqlite3_bind_text(b->put, 3, op->json, (int)op->len, SQLITE_STATIC);
        if (step_reset(b->put)) return -1;
    }
    if (op->no_history) return 0;
    sqlite3_bind_int64(b->event, 1, op->rv);
    sqlite3_bind_int(b->event, 2, op->type);
    sqlite3_bind_text(b->event, 3, op->key, -1, SQLITE_STATIC);
    sqlite3_bind_text(b->event, 4, op->json, (int)op->len, SQLITE_STATIC);
    return step_reset(b->event);
}

static int sq_write(void *impl, const store_op *ops, size_t n, int64_t rev, char *err,
                    size_t errlen)
{
    sqlite_be *b = impl;
    if (step_reset(b->begin)) return fail(b, err, errlen, "begin");
    for (size_t i = 0; i < n; i++) {
        if (write_op(b, &ops[i])) goto rollback;
    }
    sqlite3_bind_int64(b->rev, 1, rev);
    if (step_reset(b->rev)) goto rollback;
    if (step_reset(b->commit)) goto rollback;
    return 0;
rollback:
    fail(b, err, errlen, "write batch");
    step_reset(b->rollback);
    return -1;
}

static void sq_compact(void *impl, int64_t keep_from)
{
    sqlite_be *b = impl;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(b->db, "DELETE FROM events WHERE rv < ?", -1, &st, NULL) != SQLITE_OK)
        return;
    sqlite3_bind_int64(st, 1, keep_from);
    sqlite3_step(st);
    sqlite3_finalize(st);
}

static void sq_close(void *impl)
{
    sqlite_be *b = impl;
    if (!b) return;
    sqlite3_stmt *all[] = {b->put, b->del, b->event, b->rev, b->begin, b->commit, b->rollback};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        sqlite3_finalize(all[i]);
    sqlite3_close(b->db);
    free(b);
}

/* The database holds Secrets: it is created 0600 whatever the umask, before
 * SQLite opens it, and SQLite gives the -wal and -shm files it creates the
 * database's mode. Files left group- or world-readable by an older allotd are
 * made 0600 here too. */
static int private_db_files(const char *path, char *err, size_t errlen)
{
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0 || fchmod(fd, 0600) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    close(fd);
    const char *sfx[] = {"-wal", "-shm", "-journal"};
    for (size_t i = 0; i < sizeof sfx / sizeof *sfx; i++) {
        char p[4200];
        struct stat st;
        snprintf(p, sizeof p, "%s%s", path, sfx[i]);
        if (lstat(p, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 077) &&
            chmod(p, 0600) != 0) {
            snprintf(err, errlen, "%s: %s", p, strerror(errno));
            return -1;
        }
    }
    return 0;
}

int store_sqlite_open(const char *dir, store_backend *out, char *err, size_t errlen)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/allot.db", dir);
    if (private_db_files(path, err, errlen) != 0) return -1;
    sqlite_be *b = calloc(1, sizeof *b);
    if (!b) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (sqlite3_open_v2(path, &b->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
        SQLITE_OK) {
        fail(b, err, errlen, path);
        goto fail;
    }
    char *msg = NULL;
    const char *pragmas = "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
                          "PRAGMA foreign_keys=OFF; PRAGMA busy_timeout=5000;";
    if (sqlite3_exec(b->db, pragmas, NULL, NULL, &msg) != SQLITE_OK ||
        sqlite3_exec(b->db, schema, NULL, NULL, &msg) != SQLITE_OK) {
        snprintf(err, errlen, "%s: %s", path, msg ? msg : "schema");
        sqlite3_free(msg);
        goto fail;
    }
    if (prepare(b, "INSERT OR REPLACE INTO objects (key, rv, value) VALUES (?, ?, ?)", &b->put, err,
                errlen) ||
        prepare(b, "DELETE FROM objects WHERE key = ?", &b->del, err, errlen) ||
        prepare(b, "INSERT INTO events (rv, type, key, value) VALUES (?, ?, ?, ?)", &b->event, err,
                errlen) ||
        prepare(b, "INSERT OR REPLACE INTO meta (k, v) VALUES ('rev', ?)", &b->rev, err, errlen) ||
        prepare(b, "BEGIN IMMEDIATE", &b->begin, err, errlen) ||
        prepare(b, "COMMIT", &b->commit, err, errlen) ||
        prepare(b, "ROLLBACK", &b->rollback, err, errlen))
        goto fail;
    *out = (store_backend){b, sq_load, sq_write, sq_compact, sq_close};
    return 0;
fail:
    sq_close(b);
    return -1;
}
