/* tls_cmd.h - `allotd tls --out DIR [--namespace NS] [--san NAME]...`: the
 * CA and serving certificate every replica of an in-cluster allotd shares
 * (deploy/cluster: the Secret allot-tls, mounted for --tls-dir), made by
 * server/tls.h's tls_ensure so they are exactly what allotd makes for
 * itself. The serving certificate names the Service allot in NS
 * (allot.NS.svc, the name the kube-apiserver dials a webhook Service by)
 * and every --san. Run again on the same DIR, it keeps the CA and renews
 * the serving pair when it expires within 30 days or lacks a name. */
#ifndef ALLOT_SERVER_TLS_CMD_H
#define ALLOT_SERVER_TLS_CMD_H

/* argv[0] is "tls". Returns the process exit code: 0, 1 when the files
 * cannot be made, 2 on a usage error. */
int tls_cmd_main(int argc, char **argv);

#endif
