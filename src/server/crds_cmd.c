/* crds_cmd.c - `allotd crds` (see crds_cmd.h): a multi-document YAML stream
 * (the default, what kubectl apply -f and kustomize take) or a v1 List as
 * JSON. The definitions themselves are api/crd_gen.c's. */
#include "server/crds_cmd.h"

#include "api/crd_gen.h"
#include "api/yaml_emit.h"

#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void crds_usage(FILE *f)
{
    fputs(
        "usage: allotd crds [--output yaml|json]\n"
        "Print the CustomResourceDefinitions of allot's Capsule kinds (capsule.clastix.io/v1beta2\n"
        "ResourcePool, ResourcePoolClaim, CustomQuota, GlobalCustomQuota), generated from allot's\n"
        "typed definitions: a YAML stream (default) or a JSON List.\n"
        "  allotd crds | kubectl apply -f -\n",
        f);
}

/* The text to print, or NULL with a message on stderr. Caller frees. */
static char *render(const json_t *list, int json)
{
    char *text = json ? json_dumps(list, JSON_INDENT(2) | JSON_SORT_KEYS)
                      : yaml_emit_stream(json_object_get(list, "items"), NULL);
    if (!text)
        fprintf(stderr, "allotd crds: cannot write the definitions as %s\n",
                json ? "JSON" : "YAML");
    return text;
}

int crds_cmd_main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int json = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'o':
            if (strcmp(optarg, "yaml") && strcmp(optarg, "json")) {
                fprintf(stderr, "allotd crds: --output takes yaml or json, not %s\n", optarg);
                return 2;
            }
            json = !strcmp(optarg, "json");
            break;
        case 'h':
            crds_usage(stdout);
            return 0;
        default:
            crds_usage(stderr);
            return 2;
        }
    }
    if (optind < argc) {
        crds_usage(stderr);
        return 2;
    }
    char err[512] = "";
    json_t *list = crd_gen_all(err, sizeof err);
    if (!list) {
        fprintf(stderr, "allotd crds: %s\n", err);
        return 1;
    }
    char *text = render(list, json);
    json_decref(list);
    if (!text) return 1;
    size_t n = strlen(text);
    int ok = fwrite(text, 1, n, stdout) == n && (!json || fputc('\n', stdout) != EOF) &&
             fflush(stdout) == 0;
    free(text);
    if (!ok) {
        perror("allotd crds: stdout");
        return 1;
    }
    return 0;
}
