/* ca_pem.h - a CA certificate read from a file for a configuration others
 * may read (a webhook's caBundle, a scheduler extender's caData): PEM
 * certificates only, never a private key given by mistake. */
#ifndef ALLOT_SERVER_CA_PEM_H
#define ALLOT_SERVER_CA_PEM_H

/* A CA bundle of a few certificates is a few KiB; this bounds the read. */
#define CA_PEM_MAX_BYTES (256 * 1024)

/* The PEM in path (malloc'd), or NULL with a message on stderr, prefixed
 * by cmd ("allotd webhook-config"). */
char *ca_pem_read(const char *cmd, const char *path);

#endif
