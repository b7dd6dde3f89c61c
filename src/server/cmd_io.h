/* cmd_io.h - what allotd's configuration-printing subcommands
 * (webhook-config, scheduler-config) read and write: a CA certificate
 * for a configuration others may read (a webhook's caBundle, a scheduler
 * extender's caData), PEM certificates only, never a private key given by
 * mistake; and the configuration printed as YAML. */
#ifndef ALLOT_SERVER_CMD_IO_H
#define ALLOT_SERVER_CMD_IO_H

#include <jansson.h>

/* A CA bundle of a few certificates is a few KiB; this bounds the read. */
#define CA_PEM_MAX_BYTES (256 * 1024)

/* The PEM in path (malloc'd), or NULL with a message on stderr, prefixed
 * by cmd ("allotd webhook-config"). */
char *ca_pem_read(const char *cmd, const char *path);

/* obj as one YAML document on stdout, after `header` (comment lines, or
 * ""). 0, or 1 with a message on stderr prefixed by cmd. */
int cmd_print_yaml(const char *cmd, const char *header, const json_t *obj);

#endif
