/* test_protobuf.c - Kubernetes protobuf bodies decoded to JSON.
 *
 * The fixtures are real request bodies captured from kubectl 1.32.5 (-v=9)
 * against allotd; each expected object is what `kubectl ... --dry-run=client
 * -o json` prints for the same command, i.e. the JSON encoding of the very
 * object kubectl marshalled. Hand-built messages cover the Pod, Node, Event
 * and other fields kubectl's generators do not set. The fuzz cases run under
 * ASan/UBSan in the sanitizer build. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/protobuf.h"

static json_t *J(const char *s)
{
    json_error_t e;
    json_t *v = json_loads(s, JSON_DECODE_ANY, &e);
    if (!v) fail_msg("bad test JSON %s: %s", s, e.text);
    return v;
}

static void check_json(const json_t *got, const char *want)
{
    json_t *w = J(want);
    if (!got || !json_equal(got, w)) {
        char *g = got ? json_dumps(got, JSON_ENCODE_ANY | JSON_COMPACT | JSON_SORT_KEYS)
                      : strdup("(null)");
        char *ws = json_dumps(w, JSON_ENCODE_ANY | JSON_COMPACT | JSON_SORT_KEYS);
        print_error("got  %s\nwant %s\n", g, ws);
        free(g);
        free(ws);
        json_decref(w);
        fail();
    }
    json_decref(w);
}

static unsigned char *unhex(const char *hex, size_t *n)
{
    size_t len = strlen(hex) / 2;
    unsigned char *b = malloc(len + 1);
    assert_non_null(b);
    for (size_t i = 0; i < len; i++) {
        unsigned v;
        assert_int_equal(sscanf(hex + 2 * i, "%2x", &v), 1);
        b[i] = (unsigned char)v;
    }
    *n = len;
    return b;
}

/* ---- fixtures captured from kubectl 1.32.5 ---- */

static const struct {
    const char *cmd;
    const char *hex;
    const char *json;
} fixtures[] = {
    {"kubectl create namespace pbns",
     "6b3873000a0f0a02763112094e616d657370616365121c0a140a0470626e7312001a0022002a003200380042"
     "0012001a020a001a002200",
     "{\"kind\":\"Namespace\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"pbns\","
     "\"creationTimesta"
     "mp\":null},\"spec\":{},\"status\":{}}"},
    {"kubectl create configmap cm1 --from-literal=a=b --from-literal=key2=value2",
     "6b3873000a0f0a0276311209436f6e6669674d6170122d0a130a03636d3112001a0022002a00320038004200"
     "12060a0161120162120e0a046b657932120676616c7565321a002200",
     "{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"cm1\","
     "\"creationTimestam"
     "p\":null},\"data\":{\"a\":\"b\",\"key2\":\"value2\"}}"},
    {"kubectl create configmap cmbin --from-file=bin.dat --from-file=plain.txt",
     "6b3873000a0f0a0276311209436f6e6669674d6170125f0a150a05636d62696e12001a0022002a0032003800"
     "420012110a09706c61696e2e7478741204783d310a1a330a0762696e2e6461741228baf8c1bd2d4d11ca6b1e"
     "0d6769420db49b2b5898db2f5f635651226443ea1839c4833e16ab8471401a002200",
     "{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"cmbin\","
     "\"creationTimest"
     "amp\":null},\"data\":{\"plain.txt\":\"x=1\\n\"},\"binaryData\":{\"bin.dat\":\"uvjBvS1NEcprHg1"
     "naUINtJsrWJjbL19jVlEiZEPqGDnEgz4Wq4RxQA==\"}}"},
    {"kubectl create secret generic s1 --from-literal=user=admin --from-literal=pw=s3cr3t",
     "6b3873000a0c0a027631120653656372657412330a120a02733112001a0022002a00320038004200120c0a02"
     "70771206733363723374120d0a0475736572120561646d696e1a001a002200",
     "{\"kind\":\"Secret\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"s1\","
     "\"creationTimestamp\":n"
     "ull},\"data\":{\"pw\":\"czNjcjN0\",\"user\":\"YWRtaW4=\"}}"},
    {"kubectl create serviceaccount sa1",
     "6b3873000a140a027631120e536572766963654163636f756e7412150a130a0373613112001a0022002a0032"
     "00380042001a002200",
     "{\"kind\":\"ServiceAccount\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"sa1\","
     "\"creationTim"
     "estamp\":null}}"},
    {"kubectl create service clusterip svc1 --tcp=80:8080",
     "6b3873000a0d0a027631120753657276696365126c0a210a047376633112001a0022002a003200380042005a"
     "0b0a0361707012047376633112430a1b0a0738302d38303830120354435018502207080010903f1a00280012"
     "0b0a036170701204737663311a002209436c757374657249503a00420052005a00600068001a020a001a0022"
     "00",
     "{\"kind\":\"Service\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"svc1\","
     "\"creationTimestamp"
     "\":null,\"labels\":{\"app\":\"svc1\"}},\"spec\":{\"ports\":[{\"name\":\"80-8080\","
     "\"protocol\":\"T"
     "CP\",\"port\":80,\"targetPort\":8080}],\"selector\":{\"app\":\"svc1\"},\"type\":"
     "\"ClusterIP\"},"
     "\"status\":{\"loadBalancer\":{}}}"},
    {"kubectl create service nodeport svc2 --tcp=443:8443 --node-port=30080",
     "6b3873000a0d0a027631120753657276696365126f0a210a047376633212001a0022002a003200380042005a"
     "0b0a0361707012047376633212460a1f0a083434332d38343433120354435018bb032207080010fb411a0028"
     "80eb01120b0a036170701204737663321a0022084e6f6465506f72743a00420052005a00600068001a020a00"
     "1a002200",
     "{\"kind\":\"Service\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"svc2\","
     "\"creationTimestamp"
     "\":null,\"labels\":{\"app\":\"svc2\"}},\"spec\":{\"ports\":[{\"name\":\"443-8443\","
     "\"protocol\":\""
     "TCP\",\"port\":443,\"targetPort\":8443,\"nodePort\":30080}],\"selector\":{\"app\":\"svc2\"},"
     "\""
     "type\":\"NodePort\"},\"status\":{\"loadBalancer\":{}}}"},
    {"kubectl create service loadbalancer svc3 --tcp=5678:8080",
     "6b3873000a0d0a02763112075365727669636512720a210a047376633312001a0022002a003200380042005a"
     "0b0a0361707012047376633312490a1e0a09353637382d38303830120354435018ae2c2207080010903f1a00"
     "2800120b0a036170701204737663331a00220c4c6f616442616c616e6365723a00420052005a00600068001a"
     "020a001a002200",
     "{\"kind\":\"Service\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"svc3\","
     "\"creationTimestamp"
     "\":null,\"labels\":{\"app\":\"svc3\"}},\"spec\":{\"ports\":[{\"name\":\"5678-8080\","
     "\"protocol\":"
     "\"TCP\",\"port\":5678,\"targetPort\":8080}],\"selector\":{\"app\":\"svc3\"},\"type\":"
     "\"LoadBala"
     "ncer\"},\"status\":{\"loadBalancer\":{}}}"},
    {"kubectl create service externalname svc4 --external-name=example.com",
     "6b3873000a0d0a027631120753657276696365125d0a210a047376633412001a0022002a003200380042005a"
     "0b0a036170701204737663341234120b0a036170701204737663341a00220c45787465726e616c4e616d653a"
     "004200520b6578616d706c652e636f6d5a00600068001a020a001a002200",
     "{\"kind\":\"Service\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"svc4\","
     "\"creationTimestamp"
     "\":null,\"labels\":{\"app\":\"svc4\"}},\"spec\":{\"selector\":{\"app\":\"svc4\"},\"type\":"
     "\"Extern"
     "alName\",\"externalName\":\"example.com\"},\"status\":{\"loadBalancer\":{}}}"},
    {"kubectl create service clusterip hl --clusterip=None",
     "6b3873000a0d0a027631120753657276696365124d0a1d0a02686c12001a0022002a003200380042005a090a"
     "036170701202686c122812090a036170701202686c1a044e6f6e652209436c757374657249503a0042005200"
     "5a00600068001a020a001a002200",
     "{\"kind\":\"Service\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"hl\","
     "\"creationTimestamp\":"
     "null,\"labels\":{\"app\":\"hl\"}},\"spec\":{\"selector\":{\"app\":\"hl\"},\"clusterIP\":"
     "\"None\",\""
     "type\":\"ClusterIP\"},\"status\":{\"loadBalancer\":{}}}"},
    {"kubectl create deployment web --image=nginx:1.25 --replicas=3 --port=80",
     "6b3873000a150a07617070732f7631120a4465706c6f796d656e7412bd010a1f0a0377656212001a0022002a"
     "003200380042005a0a0a036170701203776562128b010803120c0a0a0a0361707012037765621a710a1c0a00"
     "12001a0022002a003200380042005a0a0a036170701203776562125112330a056e67696e78120a6e67696e78"
     "3a312e32352a00320a0a001000185022002a0042006a007200800100880100900100a201001a00320042004a"
     "0052005800600068008201008a01009a0100c2010022020a00280038001a0c0800100018002000280038001a"
     "002200",
     "{\"kind\":\"Deployment\",\"apiVersion\":\"apps/"
     "v1\",\"metadata\":{\"name\":\"web\",\"creationTi"
     "mestamp\":null,\"labels\":{\"app\":\"web\"}},\"spec\":{\"replicas\":3,\"selector\":{"
     "\"matchLab"
     "els\":{\"app\":\"web\"}},\"template\":{\"metadata\":{\"creationTimestamp\":null,\"labels\":{"
     "\""
     "app\":\"web\"}},\"spec\":{\"containers\":[{\"name\":\"nginx\",\"image\":\"nginx:1.25\","
     "\"ports\":"
     "[{\"containerPort\":80}],\"resources\":{}}]}},\"strategy\":{}},\"status\":{}}"},
    {"kubectl create deployment web0 --image=nginx --replicas=0",
     "6b3873000a150a07617070732f7631120a4465706c6f796d656e7412af010a210a047765623012001a002200"
     "2a003200380042005a0b0a03617070120477656230127c0800120d0a0b0a036170701204776562301a610a1d"
     "0a0012001a0022002a003200380042005a0b0a03617070120477656230124012220a056e67696e7812056e67"
     "696e782a0042006a007200800100880100900100a201001a00320042004a0052005800600068008201008a01"
     "009a0100c2010022020a00280038001a0c0800100018002000280038001a002200",
     "{\"kind\":\"Deployment\",\"apiVersion\":\"apps/"
     "v1\",\"metadata\":{\"name\":\"web0\",\"creationT"
     "imestamp\":null,\"labels\":{\"app\":\"web0\"}},\"spec\":{\"replicas\":0,\"selector\":{"
     "\"matchL"
     "abels\":{\"app\":\"web0\"}},\"template\":{\"metadata\":{\"creationTimestamp\":null,\"labels\""
     ":{\"app\":\"web0\"}},\"spec\":{\"containers\":[{\"name\":\"nginx\",\"image\":\"nginx\","
     "\"resource"
     "s\":{}}]}},\"strategy\":{}},\"status\":{}}"},
    {"kubectl create deployment multi --image=nginx --image=redis:7 --port=8080",
     "6b3873000a150a07617070732f7631120a4465706c6f796d656e7412e8010a230a056d756c746912001a0022"
     "002a003200380042005a0c0a0361707012056d756c746912b2010801120e0a0c0a0361707012056d756c7469"
     "1a95010a1e0a0012001a0022002a003200380042005a0c0a0361707012056d756c74691273122f0a056e6769"
     "6e7812056e67696e782a00320b0a00100018903f22002a0042006a007200800100880100900100a201001224"
     "0a057265646973120772656469733a372a0042006a007200800100880100900100a201001a00320042004a00"
     "52005800600068008201008a01009a0100c2010022020a00280038001a0c0800100018002000280038001a00"
     "2200",
     "{\"kind\":\"Deployment\",\"apiVersion\":\"apps/"
     "v1\",\"metadata\":{\"name\":\"multi\",\"creation"
     "Timestamp\":null,\"labels\":{\"app\":\"multi\"}},\"spec\":{\"replicas\":1,\"selector\":{"
     "\"matc"
     "hLabels\":{\"app\":\"multi\"}},\"template\":{\"metadata\":{\"creationTimestamp\":null,\"labe"
     "ls\":{\"app\":\"multi\"}},\"spec\":{\"containers\":[{\"name\":\"nginx\",\"image\":\"nginx\","
     "\"port"
     "s\":[{\"containerPort\":8080}],\"resources\":{}},{\"name\":\"redis\",\"image\":\"redis:7\","
     "\"r"
     "esources\":{}}]}},\"strategy\":{}},\"status\":{}}"},
    {"kubectl create quota q1 --hard=cpu=1,pods=2,requests.memory=1Gi --scopes=NotTerminating",
     "6b3873000a130a027631120d5265736f7572636551756f7461125b0a120a02713112001a0022002a00320038"
     "00420012430a0a0a0363707512030a01310a0b0a04706f647312030a01320a180a0f72657175657374732e6d"
     "656d6f727912050a03314769120e4e6f745465726d696e6174696e671a001a002200",
     "{\"kind\":\"ResourceQuota\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"q1\","
     "\"creationTimes"
     "tamp\":null},\"spec\":{\"hard\":{\"cpu\":\"1\",\"pods\":\"2\",\"requests.memory\":\"1Gi\"},"
     "\"scope"
     "s\":[\"NotTerminating\"]},\"status\":{}}"},
    {"kubectl create quota q2 --hard=requests.cpu=500m,limits.memory=2Gi,count/configmaps=10",
     "6b3873000a130a027631120d5265736f7572636551756f746112620a120a02713212001a0022002a00320038"
     "004200124a0a180a10636f756e742f636f6e6669676d61707312040a0231300a160a0d6c696d6974732e6d65"
     "6d6f727912050a033247690a160a0c72657175657374732e63707512060a043530306d1a001a002200",
     "{\"kind\":\"ResourceQuota\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"q2\","
     "\"creationTimes"
     "tamp\":null},\"spec\":{\"hard\":{\"count/"
     "configmaps\":\"10\",\"limits.memory\":\"2Gi\",\"reque"
     "sts.cpu\":\"500m\"}},\"status\":{}}"},
    {"kubectl create priorityclass high --value=1000 --description=\"high prio\" "
     "--preemption-policy=Never",
     "6b3873000a250a147363686564756c696e672e6b38732e696f2f7631120d5072696f72697479436c61737312"
     "2d0a140a046869676812001a0022002a0032003800420010e8071800220968696768207072696f2a054e6576"
     "65721a002200",
     "{\"kind\":\"PriorityClass\",\"apiVersion\":\"scheduling.k8s.io/v1\",\"metadata\":{\"name\":\""
     "high\",\"creationTimestamp\":null},\"value\":1000,\"description\":\"high prio\",\"preempti"
     "onPolicy\":\"Never\"}"},
    {"kubectl create priorityclass zero --value=0 --global-default=true",
     "6b3873000a250a147363686564756c696e672e6b38732e696f2f7631120d5072696f72697479436c61737312"
     "320a140a047a65726f12001a0022002a003200380042001000180122002a14507265656d70744c6f77657250"
     "72696f726974791a002200",
     "{\"kind\":\"PriorityClass\",\"apiVersion\":\"scheduling.k8s.io/v1\",\"metadata\":{\"name\":\""
     "zero\",\"creationTimestamp\":null},\"value\":0,\"globalDefault\":true,\"preemptionPolicy"
     "\":\"PreemptLowerPriority\"}"},
};
#define NFIXTURES (sizeof fixtures / sizeof fixtures[0])

static void test_kubectl_fixtures(void **state)
{
    (void)state;
    for (size_t i = 0; i < NFIXTURES; i++) {
        size_t n;
        unsigned char *b = unhex(fixtures[i].hex, &n);
        api_err e;
        api_err_init(&e);
        assert_true(pb_has_magic(b, n));
        json_t *got = pb_decode(b, n, &e);
        if (!got) print_error("%s: %s\n", fixtures[i].cmd, e.message);
        check_json(got, fixtures[i].json);
        json_decref(got);
        api_err_clear(&e);
        free(b);
    }
}

/* ---- a small protobuf writer for hand-built messages ---- */

typedef struct {
    unsigned char *b;
    size_t n, cap;
    size_t stack[32];
    int sp;
} pbw;

static void w_reserve(pbw *w, size_t more)
{
    if (w->n + more <= w->cap) return;
    w->cap = (w->n + more) * 2;
    w->b = realloc(w->b, w->cap);
    assert_non_null(w->b);
}

static void w_byte(pbw *w, unsigned char c)
{
    w_reserve(w, 1);
    w->b[w->n++] = c;
}

static size_t varint_enc(unsigned char *out, uint64_t v)
{
    size_t k = 0;
    while (v >= 0x80) {
        out[k++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    out[k++] = (unsigned char)v;
    return k;
}

static void w_varint(pbw *w, uint64_t v)
{
    unsigned char tmp[10];
    size_t k = varint_enc(tmp, v);
    for (size_t i = 0; i < k; i++)
        w_byte(w, tmp[i]);
}

static void w_tag(pbw *w, unsigned num, unsigned wt)
{
    w_varint(w, (uint64_t)num << 3 | wt);
}

static void w_int(pbw *w, unsigned num, int64_t v)
{
    w_tag(w, num, 0);
    w_varint(w, (uint64_t)v);
}

static void w_bytes(pbw *w, unsigned num, const void *p, size_t n)
{
    w_tag(w, num, 2);
    w_varint(w, n);
    w_reserve(w, n);
    if (n) memcpy(w->b + w->n, p, n);
    w->n += n;
}

static void w_str(pbw *w, unsigned num, const char *s)
{
    w_bytes(w, num, s, strlen(s));
}

/* begin/end bracket a nested message; end inserts its length. */
static void w_begin(pbw *w, unsigned num)
{
    w_tag(w, num, 2);
    w->stack[w->sp++] = w->n;
}

static void w_end(pbw *w)
{
    size_t start = w->stack[--w->sp], len = w->n - start;
    unsigned char tmp[10];
    size_t k = varint_enc(tmp, len);
    w_reserve(w, k);
    memmove(w->b + start + k, w->b + start, len);
    memcpy(w->b + start, tmp, k);
    w->n += k;
}

static void w_empty(pbw *w, unsigned num)
{
    w_begin(w, num);
    w_end(w);
}

static void w_kv(pbw *w, unsigned num, const char *k, const char *v)
{
    w_begin(w, num);
    w_str(w, 1, k);
    w_str(w, 2, v);
    w_end(w);
}

static void w_kq(pbw *w, unsigned num, const char *k, const char *q)
{
    w_begin(w, num);
    w_str(w, 1, k);
    w_begin(w, 2);
    w_str(w, 1, q);
    w_end(w);
    w_end(w);
}

static void w_time(pbw *w, unsigned num, int64_t secs, int32_t nanos)
{
    w_begin(w, num);
    w_int(w, 1, secs);
    w_int(w, 2, nanos);
    w_end(w);
}

static void w_meta(pbw *w, const char *name, const char *ns)
{
    w_begin(w, 1);
    w_str(w, 1, name);
    w_str(w, 2, "");
    w_str(w, 3, ns);
    w_int(w, 7, 0);
    w_empty(w, 8);
    w_end(w);
}

/* Wrap an object message in the "k8s\0" + runtime.Unknown envelope. */
static pbw envelope(const char *api_version, const char *kind, const pbw *obj)
{
    pbw out = {0};
    w_reserve(&out, 4);
    memcpy(out.b, "k8s", 4);
    out.n = 4;
    w_begin(&out, 1);
    w_str(&out, 1, api_version);
    w_str(&out, 2, kind);
    w_end(&out);
    w_bytes(&out, 2, obj->b, obj->n);
    w_str(&out, 3, "");
    w_str(&out, 4, "");
    return out;
}

static json_t *decode_built(const char *api_version, const char *kind, pbw *obj, api_err *e)
{
    pbw env = envelope(api_version, kind, obj);
    api_err_init(e);
    json_t *got = pb_decode(env.b, env.n, e);
    free(env.b);
    free(obj->b);
    obj->b = NULL;
    obj->n = obj->cap = 0;
    return got;
}

static void expect_object(const char *api_version, const char *kind, pbw *obj, const char *want)
{
    api_err e;
    json_t *got = decode_built(api_version, kind, obj, &e);
    if (!got) print_error("decode failed: %s\n", e.message);
    check_json(got, want);
    json_decref(got);
    api_err_clear(&e);
}

static void expect_error(const char *api_version, const char *kind, pbw *obj, const char *msg)
{
    api_err e;
    json_t *got = decode_built(api_version, kind, obj, &e);
    assert_null(got);
    assert_int_equal(e.code, API_BAD_REQUEST);
    assert_int_equal(api_errcode_http(e.code), 400);
    if (!strstr(e.message, msg)) fail_msg("message \"%s\" lacks \"%s\"", e.message, msg);
    api_err_clear(&e);
}

/* ---- hand-built objects ---- */

static void build_pod_spec(pbw *w)
{
    w_begin(w, 2); /* PodSpec */
    w_begin(w, 1); /* volumes */
    w_str(w, 1, "data");
    w_begin(w, 2);
    w_begin(w, 2); /* emptyDir */
    w_str(w, 1, "Memory");
    w_begin(w, 2);
    w_str(w, 1, "1Gi");
    w_end(w);
    w_end(w);
    w_end(w);
    w_end(w);
    w_begin(w, 1);
    w_str(w, 1, "cfg");
    w_begin(w, 2);
    w_begin(w, 19); /* configMap, LocalObjectReference inlined */
    w_begin(w, 1);
    w_str(w, 1, "cm1");
    w_end(w);
    w_int(w, 3, 420);
    w_int(w, 4, 0);
    w_end(w);
    w_end(w);
    w_end(w);
    w_begin(w, 1);
    w_str(w, 1, "sec");
    w_begin(w, 2);
    w_begin(w, 6);
    w_str(w, 1, "s1");
    w_begin(w, 2);
    w_str(w, 1, "a");
    w_str(w, 2, "b");
    w_end(w);
    w_end(w);
    w_end(w);
    w_end(w);
    w_begin(w, 1);
    w_str(w, 1, "claim");
    w_begin(w, 2);
    w_begin(w, 10);
    w_str(w, 1, "c1");
    w_int(w, 2, 1);
    w_end(w);
    w_end(w);
    w_end(w);
    w_begin(w, 1);
    w_str(w, 1, "host");
    w_begin(w, 2);
    w_begin(w, 1);
    w_str(w, 1, "/var");
    w_str(w, 2, "");
    w_end(w);
    w_end(w);
    w_end(w);

    w_begin(w, 2); /* containers */
    w_str(w, 1, "app");
    w_str(w, 2, "nginx");
    w_str(w, 3, "sh");
    w_str(w, 3, "-c");
    w_begin(w, 6);
    w_int(w, 3, 80);
    w_str(w, 4, "TCP");
    w_end(w);
    w_begin(w, 7);
    w_str(w, 1, "A");
    w_str(w, 2, "1");
    w_end(w);
    w_begin(w, 7);
    w_str(w, 1, "B");
    w_str(w, 2, "");
    w_begin(w, 3);
    w_begin(w, 4); /* secretKeyRef */
    w_begin(w, 1);
    w_str(w, 1, "s1");
    w_end(w);
    w_str(w, 2, "pw");
    w_end(w);
    w_end(w);
    w_end(w);
    w_begin(w, 8);
    w_kq(w, 1, "cpu", "500m");
    w_kq(w, 2, "memory", "64Mi");
    w_end(w);
    w_begin(w, 9);
    w_str(w, 1, "data");
    w_int(w, 2, 1);
    w_str(w, 3, "/data");
    w_end(w);
    w_begin(w, 10); /* livenessProbe, ProbeHandler inlined */
    w_begin(w, 1);
    w_begin(w, 2);
    w_str(w, 1, "/healthz");
    w_begin(w, 2);
    w_int(w, 1, 0);
    w_int(w, 2, 8080);
    w_str(w, 3, "");
    w_end(w);
    w_end(w);
    w_end(w);
    w_int(w, 2, 5);
    w_int(w, 4, 0);
    w_end(w);
    w_begin(w, 11);
    w_begin(w, 1);
    w_begin(w, 3);
    w_begin(w, 1);
    w_int(w, 1, 1);
    w_int(w, 2, 0);
    w_str(w, 3, "http");
    w_end(w);
    w_end(w);
    w_end(w);
    w_end(w);
    w_begin(w, 15);
    w_begin(w, 1);
    w_str(w, 2, "ALL");
    w_end(w);
    w_int(w, 2, 0);
    w_int(w, 4, 0);
    w_int(w, 5, 1);
    w_end(w);
    w_str(w, 14, "IfNotPresent");
    w_int(w, 16, 0);
    w_end(w);

    w_str(w, 3, "Always");
    w_int(w, 4, 0);
    w_kv(w, 7, "disk", "ssd");
    w_begin(w, 22);
    w_str(w, 1, "k");
    w_str(w, 2, "Equal");
    w_str(w, 3, "v");
    w_str(w, 4, "NoExecute");
    w_int(w, 5, 30);
    w_end(w);
    w_begin(w, 18); /* affinity */
    w_begin(w, 1);
    w_begin(w, 1);
    w_begin(w, 1);
    w_begin(w, 1);
    w_str(w, 1, "zone");
    w_str(w, 2, "In");
    w_str(w, 3, "a");
    w_str(w, 3, "b");
    w_end(w);
    w_end(w);
    w_end(w);
    w_begin(w, 2);
    w_int(w, 1, 10);
    w_begin(w, 2);
    w_begin(w, 1);
    w_str(w, 1, "gpu");
    w_str(w, 2, "Exists");
    w_end(w);
    w_end(w);
    w_end(w);
    w_end(w);
    w_begin(w, 3);
    w_begin(w, 1);
    w_begin(w, 1);
    w_kv(w, 1, "app", "web");
    w_end(w);
    w_str(w, 3, "kubernetes.io/hostname");
    w_end(w);
    w_begin(w, 2);
    w_int(w, 1, 50);
    w_begin(w, 2);
    w_begin(w, 1);
    w_begin(w, 2);
    w_str(w, 1, "tier");
    w_str(w, 2, "NotIn");
    w_str(w, 3, "db");
    w_end(w);
    w_end(w);
    w_str(w, 3, "zone");
    w_end(w);
    w_end(w);
    w_end(w);
    w_end(w);
    w_begin(w, 33);
    w_int(w, 1, 1);
    w_str(w, 2, "zone");
    w_str(w, 3, "DoNotSchedule");
    w_begin(w, 4);
    w_kv(w, 1, "app", "web");
    w_end(w);
    w_int(w, 5, 2);
    w_end(w);
    w_begin(w, 38);
    w_str(w, 1, "gate1");
    w_end(w);
    w_begin(w, 28);
    w_str(w, 1, "ready/x");
    w_end(w);
    w_int(w, 25, 0);
    w_int(w, 30, 0);
    w_begin(w, 14);
    w_int(w, 5, 2000);
    w_int(w, 4, 1);
    w_begin(w, 4); /* packed repeated int64 */
    w_varint(w, 2);
    w_varint(w, 3);
    w_end(w);
    w_end(w);
    w_end(w);
}

static const char *pod_json =
    "{\"kind\":\"Pod\",\"apiVersion\":\"v1\","
    "\"metadata\":{\"name\":\"p1\",\"namespace\":\"ns1\",\"creationTimestamp\":null},"
    "\"spec\":{"
    "\"volumes\":["
    "{\"name\":\"data\",\"emptyDir\":{\"medium\":\"Memory\",\"sizeLimit\":\"1Gi\"}},"
    "{\"name\":\"cfg\",\"configMap\":{\"name\":\"cm1\",\"defaultMode\":420,\"optional\":false}},"
    "{\"name\":\"sec\",\"secret\":{\"secretName\":\"s1\",\"items\":[{\"key\":\"a\",\"path\":\"b\"}]"
    "}},"
    "{\"name\":\"claim\",\"persistentVolumeClaim\":{\"claimName\":\"c1\",\"readOnly\":true}},"
    "{\"name\":\"host\",\"hostPath\":{\"path\":\"/var\",\"type\":\"\"}}],"
    "\"containers\":[{\"name\":\"app\",\"image\":\"nginx\",\"command\":[\"sh\",\"-c\"],"
    "\"ports\":[{\"containerPort\":80,\"protocol\":\"TCP\"}],"
    "\"env\":[{\"name\":\"A\",\"value\":\"1\"},"
    "{\"name\":\"B\",\"valueFrom\":{\"secretKeyRef\":{\"name\":\"s1\",\"key\":\"pw\"}}}],"
    "\"resources\":{\"limits\":{\"cpu\":\"500m\"},\"requests\":{\"memory\":\"64Mi\"}},"
    "\"volumeMounts\":[{\"name\":\"data\",\"readOnly\":true,\"mountPath\":\"/data\"}],"
    "\"livenessProbe\":{\"httpGet\":{\"path\":\"/healthz\",\"port\":8080},"
    "\"initialDelaySeconds\":5},"
    "\"readinessProbe\":{\"tcpSocket\":{\"port\":\"http\"}},"
    "\"securityContext\":{\"capabilities\":{\"drop\":[\"ALL\"]},\"privileged\":false,"
    "\"runAsUser\":0,\"runAsNonRoot\":true},"
    "\"imagePullPolicy\":\"IfNotPresent\"}],"
    "\"restartPolicy\":\"Always\",\"terminationGracePeriodSeconds\":0,"
    "\"nodeSelector\":{\"disk\":\"ssd\"},"
    "\"tolerations\":[{\"key\":\"k\",\"operator\":\"Equal\",\"value\":\"v\","
    "\"effect\":\"NoExecute\",\"tolerationSeconds\":30}],"
    "\"affinity\":{\"nodeAffinity\":{"
    "\"requiredDuringSchedulingIgnoredDuringExecution\":{\"nodeSelectorTerms\":["
    "{\"matchExpressions\":[{\"key\":\"zone\",\"operator\":\"In\",\"values\":[\"a\",\"b\"]}]}]},"
    "\"preferredDuringSchedulingIgnoredDuringExecution\":[{\"weight\":10,\"preference\":"
    "{\"matchExpressions\":[{\"key\":\"gpu\",\"operator\":\"Exists\"}]}}]},"
    "\"podAntiAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":["
    "{\"labelSelector\":{\"matchLabels\":{\"app\":\"web\"}},"
    "\"topologyKey\":\"kubernetes.io/hostname\"}],"
    "\"preferredDuringSchedulingIgnoredDuringExecution\":[{\"weight\":50,\"podAffinityTerm\":"
    "{\"labelSelector\":{\"matchExpressions\":[{\"key\":\"tier\",\"operator\":\"NotIn\","
    "\"values\":[\"db\"]}]},\"topologyKey\":\"zone\"}}]}},"
    "\"topologySpreadConstraints\":[{\"maxSkew\":1,\"topologyKey\":\"zone\","
    "\"whenUnsatisfiable\":\"DoNotSchedule\",\"labelSelector\":{\"matchLabels\":{\"app\":\"web\"}},"
    "\"minDomains\":2}],"
    "\"schedulingGates\":[{\"name\":\"gate1\"}],"
    "\"readinessGates\":[{\"conditionType\":\"ready/x\"}],"
    "\"priority\":0,\"enableServiceLinks\":false,"
    "\"securityContext\":{\"fsGroup\":2000,\"supplementalGroups\":[1,2,3]}},"
    "\"status\":{\"phase\":\"Pending\",\"conditions\":[{\"type\":\"PodScheduled\","
    "\"status\":\"True\",\"lastProbeTime\":null,"
    "\"lastTransitionTime\":\"2023-11-14T22:13:20Z\"}],"
    "\"startTime\":\"2023-11-14T22:13:20Z\",\"podIPs\":[{\"ip\":\"10.0.0.1\"}],"
    "\"qosClass\":\"Burstable\"}}";

static void test_pod(void **state)
{
    (void)state;
    pbw w = {0};
    w_meta(&w, "p1", "ns1");
    build_pod_spec(&w);
    w_begin(&w, 3); /* PodStatus */
    w_str(&w, 1, "Pending");
    w_begin(&w, 2);
    w_str(&w, 1, "PodScheduled");
    w_str(&w, 2, "True");
    w_empty(&w, 3);
    w_time(&w, 4, 1700000000, 0);
    w_end(&w);
    w_time(&w, 7, 1700000000, 5); /* metav1.Time drops nanos */
    w_begin(&w, 12);
    w_str(&w, 1, "10.0.0.1");
    w_end(&w);
    w_str(&w, 9, "Burstable");
    w_end(&w);
    expect_object("v1", "Pod", &w, pod_json);
}

static void test_node_and_event(void **state)
{
    (void)state;
    pbw w = {0};
    w_meta(&w, "n1", "");
    w_begin(&w, 2);
    w_int(&w, 4, 1);
    w_begin(&w, 5);
    w_str(&w, 1, "dedicated");
    w_str(&w, 2, "");
    w_str(&w, 3, "NoSchedule");
    w_end(&w);
    w_end(&w);
    w_begin(&w, 3);
    w_kq(&w, 1, "cpu", "4");
    w_kq(&w, 1, "pods", "110");
    w_kq(&w, 2, "memory", "7Gi");
    w_begin(&w, 4);
    w_str(&w, 1, "Ready");
    w_str(&w, 2, "True");
    w_time(&w, 3, 0, 0);
    w_end(&w);
    w_end(&w);
    expect_object("v1", "Node", &w,
                  "{\"kind\":\"Node\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"n1\","
                  "\"creationTimestamp\":null},\"spec\":{\"unschedulable\":true,\"taints\":"
                  "[{\"key\":\"dedicated\",\"effect\":\"NoSchedule\"}]},\"status\":{\"capacity\":"
                  "{\"cpu\":\"4\",\"pods\":\"110\"},\"allocatable\":{\"memory\":\"7Gi\"},"
                  "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\","
                  "\"lastHeartbeatTime\":\"1970-01-01T00:00:00Z\"}]}}");

    w_meta(&w, "e1", "default");
    w_begin(&w, 2);
    w_str(&w, 1, "Pod");
    w_str(&w, 3, "p1");
    w_end(&w);
    w_str(&w, 3, "Scheduled");
    w_empty(&w, 5);
    w_empty(&w, 6);
    w_time(&w, 7, -86400, 0);
    w_int(&w, 8, 0);
    w_time(&w, 10, 1700000000, 123456789); /* MicroTime keeps microseconds */
    w_str(&w, 14, "");
    w_str(&w, 15, "");
    expect_object("v1", "Event", &w,
                  "{\"kind\":\"Event\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"e1\","
                  "\"namespace\":\"default\",\"creationTimestamp\":null},\"involvedObject\":"
                  "{\"kind\":\"Pod\",\"name\":\"p1\"},\"reason\":\"Scheduled\",\"source\":{},"
                  "\"firstTimestamp\":null,\"lastTimestamp\":\"1969-12-31T00:00:00Z\","
                  "\"eventTime\":\"2023-11-14T22:13:20.123456Z\",\"reportingComponent\":\"\","
                  "\"reportingInstance\":\"\"}");
}

static void test_other_kinds(void **state)
{
    (void)state;
    pbw w = {0};
    /* DeleteOptions is registered in every group version. */
    w_int(&w, 1, 0);
    w_begin(&w, 2);
    w_str(&w, 1, "uid-1");
    w_end(&w);
    w_str(&w, 4, "Foreground");
    w_str(&w, 5, "All");
    expect_object("apps/v1", "DeleteOptions", &w,
                  "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"apps/v1\",\"gracePeriodSeconds\":0,"
                  "\"preconditions\":{\"uid\":\"uid-1\"},\"propagationPolicy\":\"Foreground\","
                  "\"dryRun\":[\"All\"]}");

    w_meta(&w, "web", "default");
    w_begin(&w, 2);
    w_int(&w, 1, 0);
    w_end(&w);
    w_begin(&w, 3);
    w_int(&w, 1, 0);
    w_str(&w, 2, "app=web");
    w_end(&w);
    expect_object("autoscaling/v1", "Scale", &w,
                  "{\"kind\":\"Scale\",\"apiVersion\":\"autoscaling/v1\",\"metadata\":{\"name\":"
                  "\"web\",\"namespace\":\"default\",\"creationTimestamp\":null},\"spec\":{},"
                  "\"status\":{\"replicas\":0,\"selector\":\"app=web\"}}");

    /* storageClassName "" is a pointer to "": it means "no class" and must stay. */
    w_meta(&w, "pvc1", "");
    w_begin(&w, 2);
    w_str(&w, 1, "ReadWriteOnce");
    w_begin(&w, 2);
    w_kq(&w, 2, "storage", "1Gi");
    w_end(&w);
    w_str(&w, 3, "");
    w_str(&w, 5, "");
    w_str(&w, 6, "Filesystem");
    w_end(&w);
    w_empty(&w, 3);
    expect_object(
        "v1", "PersistentVolumeClaim", &w,
        "{\"kind\":\"PersistentVolumeClaim\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":"
        "\"pvc1\",\"creationTimestamp\":null},\"spec\":{\"accessModes\":"
        "[\"ReadWriteOnce\"],\"resources\":{\"requests\":{\"storage\":\"1Gi\"}},"
        "\"storageClassName\":\"\",\"volumeMode\":\"Filesystem\"},\"status\":{}}");

    w_meta(&w, "fast", "");
    w_str(&w, 2, "example.com/csi");
    w_kv(&w, 3, "type", "ssd");
    w_str(&w, 4, "Retain");
    w_int(&w, 6, 0);
    w_str(&w, 7, "WaitForFirstConsumer");
    w_begin(&w, 8);
    w_begin(&w, 1);
    w_str(&w, 1, "zone");
    w_str(&w, 2, "a");
    w_end(&w);
    w_end(&w);
    expect_object("storage.k8s.io/v1", "StorageClass", &w,
                  "{\"kind\":\"StorageClass\",\"apiVersion\":\"storage.k8s.io/v1\",\"metadata\":"
                  "{\"name\":\"fast\",\"creationTimestamp\":null},\"provisioner\":"
                  "\"example.com/csi\",\"parameters\":{\"type\":\"ssd\"},\"reclaimPolicy\":"
                  "\"Retain\",\"allowVolumeExpansion\":false,\"volumeBindingMode\":"
                  "\"WaitForFirstConsumer\",\"allowedTopologies\":[{\"matchLabelExpressions\":"
                  "[{\"key\":\"zone\",\"values\":[\"a\"]}]}]}");

    w_meta(&w, "lr", "");
    w_begin(&w, 2);
    w_begin(&w, 1);
    w_str(&w, 1, "Container");
    w_kq(&w, 4, "cpu", "200m");
    w_kq(&w, 5, "memory", "");
    w_end(&w);
    w_end(&w);
    expect_object("v1", "LimitRange", &w,
                  "{\"kind\":\"LimitRange\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"lr\","
                  "\"creationTimestamp\":null},\"spec\":{\"limits\":[{\"type\":\"Container\","
                  "\"default\":{\"cpu\":\"200m\"},\"defaultRequest\":{\"memory\":\"\"}}]}}");

    w_meta(&w, "p1", "default");
    w_begin(&w, 2);
    w_str(&w, 1, "Node");
    w_str(&w, 3, "n1");
    w_end(&w);
    expect_object("v1", "Binding", &w,
                  "{\"kind\":\"Binding\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"p1\","
                  "\"namespace\":\"default\",\"creationTimestamp\":null},\"target\":{\"kind\":"
                  "\"Node\",\"name\":\"n1\"}}");

    w_meta(&w, "rs", "");
    w_begin(&w, 2);
    w_int(&w, 1, 2);
    w_begin(&w, 2);
    w_kv(&w, 1, "app", "x");
    w_end(&w);
    w_begin(&w, 3);
    w_begin(&w, 1);
    w_kv(&w, 11, "app", "x");
    w_end(&w);
    w_end(&w);
    w_end(&w);
    w_begin(&w, 3);
    w_int(&w, 1, 0);
    w_end(&w);
    expect_object("apps/v1", "ReplicaSet", &w,
                  "{\"kind\":\"ReplicaSet\",\"apiVersion\":\"apps/v1\",\"metadata\":{\"name\":"
                  "\"rs\",\"creationTimestamp\":null},\"spec\":{\"replicas\":2,\"selector\":"
                  "{\"matchLabels\":{\"app\":\"x\"}},\"template\":{\"metadata\":{\"labels\":"
                  "{\"app\":\"x\"}}}},\"status\":{\"replicas\":0}}");

    /* Deployment strategy with IntOrString percentages. */
    w_begin(&w, 2);
    w_begin(&w, 4);
    w_str(&w, 1, "RollingUpdate");
    w_begin(&w, 2);
    w_begin(&w, 1);
    w_int(&w, 1, 1);
    w_str(&w, 3, "25%");
    w_end(&w);
    w_begin(&w, 2);
    w_int(&w, 1, 0);
    w_int(&w, 2, -1);
    w_end(&w);
    w_end(&w);
    w_end(&w);
    w_int(&w, 6, 0);
    w_end(&w);
    expect_object("apps/v1", "Deployment", &w,
                  "{\"kind\":\"Deployment\",\"apiVersion\":\"apps/v1\",\"spec\":{\"strategy\":"
                  "{\"type\":\"RollingUpdate\",\"rollingUpdate\":{\"maxUnavailable\":\"25%\","
                  "\"maxSurge\":-1}},\"revisionHistoryLimit\":0}}");
}

static void test_values(void **state)
{
    (void)state;
    pbw w = {0};
    /* base64 padding of Secret.data; invalid UTF-8 in strings becomes U+FFFD
     * as Go's encoding/json writes it; the last of a repeated scalar wins. */
    w_begin(&w, 2);
    w_str(&w, 1, "one");
    w_str(&w, 2, "a");
    w_end(&w);
    w_begin(&w, 2);
    w_str(&w, 1, "two");
    w_str(&w, 2, "ab");
    w_end(&w);
    w_begin(&w, 2);
    w_str(&w, 1, "empty");
    w_end(&w);
    w_str(&w, 3,
          "bad\xff\xc0"
          "x\xe2\x82");
    w_str(&w, 3, "Opaque");
    w_begin(&w, 4);
    w_str(&w, 1, "k\xff");
    w_str(&w, 2, "v");
    w_end(&w);
    w_int(&w, 5, 1);
    expect_object("v1", "Secret", &w,
                  "{\"kind\":\"Secret\",\"apiVersion\":\"v1\",\"data\":{\"one\":\"YQ==\","
                  "\"two\":\"YWI=\",\"empty\":\"\"},\"type\":\"Opaque\",\"stringData\":"
                  "{\"k\\ufffd\":\"v\"},\"immutable\":true}");

    w_str(&w, 3,
          "bad\xff\xc0"
          "x\xe2\x82");
    expect_object("v1", "Secret", &w,
                  "{\"kind\":\"Secret\",\"apiVersion\":\"v1\","
                  "\"type\":\"bad\\ufffd\\ufffdx\\ufffd\\ufffd\"}");

    /* A NUL byte in a map key, a map value or a string is refused, as a JSON
     * body's \u0000 is (found by fuzz_body: jansson cut the key at the NUL,
     * and the stored text could not be read back). Bytes values may hold
     * NULs: they are base64. */
    w_begin(&w, 2);
    w_bytes(&w, 1, "a\0b", 3);
    w_str(&w, 2, "v");
    w_end(&w);
    expect_error("v1", "Secret", &w, "map entry contains a NUL byte");
    w_begin(&w, 4);
    w_str(&w, 1, "k");
    w_bytes(&w, 2, "v\0", 2);
    w_end(&w);
    expect_error("v1", "Secret", &w, "map entry contains a NUL byte");
    w_bytes(&w, 3, "Op\0aque", 7);
    expect_error("v1", "Secret", &w, "string contains a NUL byte");
    w_begin(&w, 2);
    w_str(&w, 1, "k");
    w_bytes(&w, 2, "\0\0", 2);
    w_end(&w);
    expect_object("v1", "Secret", &w,
                  "{\"kind\":\"Secret\",\"apiVersion\":\"v1\",\"data\":{\"k\":\"AAA=\"}}");

    /* Time bounds: year 1 is Go's zero time (null), 9999-12-31 the last. */
    w_begin(&w, 1);
    w_time(&w, 8, -62135596800LL, 0);
    w_time(&w, 9, 253402300799LL, 0);
    w_end(&w);
    expect_object("v1", "ConfigMap", &w,
                  "{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\",\"metadata\":{"
                  "\"creationTimestamp\":null,\"deletionTimestamp\":\"9999-12-31T23:59:59Z\"}}");
    w_begin(&w, 1);
    w_time(&w, 8, 253402300800LL, 0);
    w_end(&w);
    expect_error("v1", "ConfigMap", &w, "time out of range");

    /* An empty Quantity is Go's zero Quantity, "0"; a negative int32 is
     * sign-extended on the wire. */
    w_begin(&w, 2);
    w_kq(&w, 1, "pods", "");
    w_end(&w);
    w_begin(&w, 2);
    w_begin(&w, 1);
    w_str(&w, 1, "cpu");
    w_empty(&w, 2);
    w_end(&w);
    w_end(&w);
    expect_object("v1", "ResourceQuota", &w,
                  "{\"kind\":\"ResourceQuota\",\"apiVersion\":\"v1\",\"spec\":{\"hard\":"
                  "{\"pods\":\"\",\"cpu\":\"0\"}}}");

    /* A singular message that occurs twice is merged, as protobuf does. */
    w_begin(&w, 1);
    w_str(&w, 1, "a");
    w_end(&w);
    w_begin(&w, 1);
    w_kv(&w, 11, "x", "y");
    w_end(&w);
    expect_object("v1", "ServiceAccount", &w,
                  "{\"kind\":\"ServiceAccount\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"a\","
                  "\"labels\":{\"x\":\"y\"}}}");

    /* managedFields: fieldsV1 is embedded JSON. */
    w_begin(&w, 1);
    w_begin(&w, 17);
    w_str(&w, 1, "kubectl");
    w_str(&w, 2, "Update");
    w_time(&w, 4, 1700000000, 0);
    w_str(&w, 6, "FieldsV1");
    w_begin(&w, 7);
    w_str(&w, 1, "{\"f:data\":{\".\":{}}}");
    w_end(&w);
    w_end(&w);
    w_begin(&w, 13);
    w_str(&w, 5, "apps/v1");
    w_str(&w, 1, "Deployment");
    w_str(&w, 3, "d");
    w_str(&w, 4, "u1");
    w_int(&w, 6, 1);
    w_end(&w);
    w_end(&w);
    expect_object("v1", "ConfigMap", &w,
                  "{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\",\"metadata\":{\"managedFields\":"
                  "[{\"manager\":\"kubectl\",\"operation\":\"Update\",\"time\":"
                  "\"2023-11-14T22:13:20Z\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:data\":"
                  "{\".\":{}}}}],\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":"
                  "\"Deployment\",\"name\":\"d\",\"uid\":\"u1\",\"controller\":true}]}}");
}

static void test_unknown_fields(void **state)
{
    (void)state;
    pbw w = {0};
    /* A field we do not know but that is empty is what a newer client sends
     * for a new value field it left unset: skipped. */
    w_str(&w, 99, "");
    w_int(&w, 98, 0);
    w_kv(&w, 2, "a", "b");
    expect_object("v1", "ConfigMap", &w,
                  "{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\",\"data\":{\"a\":\"b\"}}");
    /* With data it is refused rather than dropped. */
    w_str(&w, 99, "x");
    expect_error("v1", "ConfigMap", &w, "field not supported by this server (ConfigMap field 99)");
    w_begin(&w, 2);
    w_begin(&w, 1);
    w_str(&w, 1, "v");
    w_begin(&w, 2);
    w_begin(&w, 3); /* gcePersistentDisk: not supported */
    w_str(&w, 1, "pd");
    w_end(&w);
    w_end(&w);
    w_end(&w);
    w_end(&w);
    expect_error("v1", "Pod", &w, "(VolumeSource field 3)");
}

static void test_errors(void **state)
{
    (void)state;
    api_err e;
    pbw w = {0};

    w_str(&w, 1, "x");
    expect_error("v1", "Frobnicator", &w,
                 "no kind \"Frobnicator\" is registered for version \"v1\" in scheme "
                 "\"pkg/api/legacyscheme/scheme.go:30\"");
    w_str(&w, 1, "x");
    expect_error("apps/v1", "ConfigMap", &w,
                 "no kind \"ConfigMap\" is registered for version "
                 "\"apps/v1\"");
    assert_true(pb_kind_known("v1", "Pod"));
    assert_true(pb_kind_known("policy/v1", "DeleteOptions"));
    assert_false(pb_kind_known("v1", "Deployment"));

    /* wrong wire type: a string field sent as a varint */
    w_begin(&w, 1);
    w_int(&w, 1, 5);
    w_end(&w);
    expect_error("v1", "ConfigMap", &w, "wrong wire type 0 (ObjectMeta.name)");
    /* groups are refused */
    w_tag(&w, 2, 3);
    expect_error("v1", "ConfigMap", &w, "unsupported wire type");

    /* no magic, missing kind, content encoding */
    api_err_init(&e);
    assert_null(pb_decode("{\"kind\":\"Pod\"}", 14, &e));
    assert_int_equal(e.code, API_BAD_REQUEST);
    assert_non_null(strstr(e.message, "k8s"));
    api_err_clear(&e);
    assert_null(pb_decode(NULL, 0, &e));
    api_err_clear(&e);
    assert_null(pb_decode("k8s\0", 4, &e));
    assert_string_equal(e.message, "Object 'Kind' is missing in protobuf body");
    api_err_clear(&e);

    pbw env = {0};
    w_reserve(&env, 4);
    memcpy(env.b, "k8s", 4);
    env.n = 4;
    w_begin(&env, 1);
    w_str(&env, 1, "v1");
    w_str(&env, 2, "ConfigMap");
    w_end(&env);
    w_str(&env, 3, "gzip");
    assert_null(pb_decode(env.b, env.n, &e));
    assert_non_null(strstr(e.message, "content encodings are not supported"));
    api_err_clear(&e);
    free(env.b);

    /* a 10-byte varint whose last byte overflows */
    static const unsigned char over[] = {'k',  '8',  's',  0,    0x08, 0xff, 0xff, 0xff,
                                         0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02};
    assert_null(pb_decode(over, sizeof over, &e));
    assert_non_null(strstr(e.message, "overflows"));
    api_err_clear(&e);
}

/* The JSON-value budget stops a small body that would expand enormously. */
static void test_value_budget(void **state)
{
    (void)state;
    pbw w = {0};
    for (int i = 0; i < (1 << 20) + 10; i++) {
        w_tag(&w, 14, 2); /* ObjectMeta.finalizers: "" */
        w_byte(&w, 0);
    }
    pbw obj = {0};
    w_bytes(&obj, 1, w.b, w.n);
    free(w.b);
    expect_error("v1", "ConfigMap", &obj, "too many values");
}

/* Hostile input: random bytes, every truncation and single-byte change of
 * the real bodies. Nothing may crash, leak or loop; results are an object
 * or a 400. */
static void check_no_crash(const unsigned char *b, size_t n)
{
    api_err e;
    api_err_init(&e);
    json_t *v = pb_decode(b, n, &e);
    if (v) {
        assert_true(json_is_object(v));
        json_decref(v);
    } else {
        assert_int_equal(e.code, API_BAD_REQUEST);
    }
    api_err_clear(&e);
}

static void test_fuzz(void **state)
{
    (void)state;
    uint32_t seed = 12345;
#define RND() (seed = seed * 1103515245u + 12345u, (seed >> 16) & 0x7fff)
    unsigned char buf[512];
    for (int i = 0; i < 20000; i++) {
        size_t n = 4 + RND() % 200;
        memcpy(buf, "k8s", 4);
        for (size_t j = 4; j < n; j++)
            buf[j] = (unsigned char)RND();
        check_no_crash(buf, n);
    }
    for (size_t f = 0; f < NFIXTURES; f++) {
        size_t n;
        unsigned char *b = unhex(fixtures[f].hex, &n);
        for (size_t k = 0; k <= n; k++)
            check_no_crash(b, k);
        for (size_t k = 4; k < n; k++) {
            unsigned char keep = b[k];
            for (int t = 0; t < 8; t++) {
                b[k] = (unsigned char)RND();
                check_no_crash(b, n);
            }
            b[k] = keep;
        }
        free(b);
    }
    pbw w = {0};
    w_meta(&w, "p1", "ns1");
    build_pod_spec(&w);
    pbw env = envelope("v1", "Pod", &w);
    free(w.b);
    for (size_t k = 0; k <= env.n; k++)
        check_no_crash(env.b, k);
    for (size_t k = 4; k < env.n; k++) {
        unsigned char keep = env.b[k];
        env.b[k] = (unsigned char)RND();
        check_no_crash(env.b, env.n);
        env.b[k] = keep;
    }
    free(env.b);
#undef RND
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kubectl_fixtures),
        cmocka_unit_test(test_pod),
        cmocka_unit_test(test_node_and_event),
        cmocka_unit_test(test_other_kinds),
        cmocka_unit_test(test_values),
        cmocka_unit_test(test_unknown_fields),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_value_budget),
        cmocka_unit_test(test_fuzz),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
