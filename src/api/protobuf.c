/* protobuf.c - Kubernetes protobuf bodies to JSON (see protobuf.h).
 *
 * Three parts: the schema tables (data), a wire-format reader (varint,
 * fixed32/64, length-delimited; groups are refused), and a table-driven
 * decoder that writes jansson values.
 *
 * How the JSON follows from the wire. Upstream's Go marshaller writes every
 * value-typed field (string, int, bool, struct) even when it is zero, and a
 * pointer field only when it is non-nil. The JSON encoding then drops zero
 * values of `omitempty` fields but never a struct. So the decoder:
 *   - drops a zero scalar unless the field is marked KEEP (a pointer field,
 *     or a field without omitempty such as ServicePort.port);
 *   - always writes a nested message that is present ("strategy": {});
 *   - writes a present but empty metav1.Time as null, as Go writes a zero Time;
 *   - omits empty lists and maps (they are all omitempty in the covered kinds).
 *
 * Field numbers and JSON names are wire facts taken from upstream's
 * generated.proto files (k8s.io/api core/v1, apps/v1, ...; apimachinery
 * meta/v1, runtime, resource, intstr); the tables are our own. A field we do
 * not list is skipped when its payload is zero (how a newer client sends a new
 * value field it left unset) and is an error otherwise, so data is never lost
 * silently.
 */
#include "api/protobuf.h"

#include "core/rfc3339.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PB_MAX_DEPTH 64         /* message nesting; upstream objects need < 20 */
#define PB_MAX_NODES (1u << 20) /* JSON values produced per body */
#define PB_NAME_MAX 256         /* apiVersion / kind */

/* The scheme name upstream prints in "no kind ... is registered" errors. */
#define PB_SCHEME "pkg/api/legacyscheme/scheme.go:30"

/* ------------------------------------------------------------------------ */
/* Schema                                                                    */

typedef enum {
    T_STRING,
    T_BYTES, /* base64 string */
    T_BOOL,
    T_INT32,
    T_INT64,
    T_MSG,       /* nested object */
    T_INLINE,    /* embedded message whose fields merge into the parent (json:",inline") */
    T_MAP_SS,    /* map<string,string> */
    T_MAP_SB,    /* map<string,bytes> -> base64 values */
    T_MAP_SQ,    /* map<string,Quantity> */
    T_QUANTITY,  /* resource.Quantity {1 string} -> string */
    T_INTORSTR,  /* intstr.IntOrString {1 type, 2 intVal, 3 strVal} -> number or string */
    T_TIME,      /* meta.Time {1 seconds, 2 nanos} -> RFC 3339, seconds precision */
    T_MICROTIME, /* meta.MicroTime -> RFC 3339 with microseconds */
    T_RAWJSON,   /* runtime.RawExtension / meta.FieldsV1 {1 raw bytes} -> embedded JSON */
} pb_type;

enum {
    REP = 1 << 0,  /* repeated */
    KEEP = 1 << 1, /* keep a zero value that is present (pointer or non-omitempty field) */
};

typedef struct pb_msg pb_msg;
typedef struct pb_field {
    uint32_t num;
    const char *json; /* NULL for T_INLINE */
    uint8_t type;
    uint8_t flags;
    const pb_msg *msg; /* T_MSG, T_INLINE */
} pb_field;

struct pb_msg {
    const char *name;
    const pb_field *fields;
    size_t n;
};

#define F(n, j, t, fl, m)                                                                          \
    {                                                                                              \
        (n), (j), (t), (fl), (m)                                                                   \
    }
#define S(n, j) F(n, j, T_STRING, 0, NULL)
#define SK(n, j) F(n, j, T_STRING, KEEP, NULL)
#define RS(n, j) F(n, j, T_STRING, REP, NULL)
#define B(n, j) F(n, j, T_BOOL, 0, NULL)
#define BK(n, j) F(n, j, T_BOOL, KEEP, NULL)
#define I32(n, j) F(n, j, T_INT32, 0, NULL)
#define I32K(n, j) F(n, j, T_INT32, KEEP, NULL)
#define RI32(n, j) F(n, j, T_INT32, REP, NULL)
#define I64(n, j) F(n, j, T_INT64, 0, NULL)
#define I64K(n, j) F(n, j, T_INT64, KEEP, NULL)
#define RI64(n, j) F(n, j, T_INT64, REP, NULL)
#define M(n, j, m) F(n, j, T_MSG, 0, &m_##m)
#define RM(n, j, m) F(n, j, T_MSG, REP, &m_##m)
#define INL(n, m) F(n, NULL, T_INLINE, 0, &m_##m)
#define MSS(n, j) F(n, j, T_MAP_SS, 0, NULL)
#define MSB(n, j) F(n, j, T_MAP_SB, 0, NULL)
#define MSQ(n, j) F(n, j, T_MAP_SQ, 0, NULL)
#define QTY(n, j) F(n, j, T_QUANTITY, 0, NULL)
#define IOS(n, j) F(n, j, T_INTORSTR, 0, NULL)
#define TIME(n, j) F(n, j, T_TIME, 0, NULL)
#define MTIME(n, j) F(n, j, T_MICROTIME, 0, NULL)
#define RAW(n, j) F(n, j, T_RAWJSON, 0, NULL)
#define META M(1, "metadata", ObjectMeta)

#define DEF(name, ...)                                                                             \
    static const pb_field f_##name[] = {__VA_ARGS__};                                              \
    static const pb_msg m_##name = {#name, f_##name, sizeof f_##name / sizeof f_##name[0]}

/* Forward declarations (tentative definitions), so a table can name a message
 * defined below it. */
static const pb_msg m_ObjectMeta, m_ListMeta, m_OwnerReference, m_ManagedFieldsEntry,
    m_LabelSelector, m_LabelSelectorRequirement, m_Condition, m_Preconditions, m_DeleteOptions,
    m_Status, m_StatusDetails, m_StatusCause, m_ObjectReference, m_LocalObjectReference,
    m_Namespace, m_NamespaceSpec, m_NamespaceStatus, m_NamespaceCondition, m_ConfigMap, m_Secret,
    m_ServiceAccount, m_Service, m_ServiceSpec, m_ServicePort, m_SessionAffinityConfig,
    m_ClientIPConfig, m_ServiceStatus, m_LoadBalancerStatus, m_LoadBalancerIngress, m_PortStatus,
    m_Pod, m_PodSpec, m_WorkloadReference, m_Container, m_EphemeralContainer,
    m_ContainerRestartRule, m_ContainerRestartRuleOnExitCodes, m_ContainerResizePolicy,
    m_ContainerPort, m_EnvFromSource, m_ConfigMapEnvSource, m_SecretEnvSource, m_EnvVar,
    m_EnvVarSource, m_ObjectFieldSelector, m_ResourceFieldSelector, m_ConfigMapKeySelector,
    m_SecretKeySelector, m_FileKeySelector, m_ResourceRequirements, m_ResourceClaim, m_VolumeMount,
    m_VolumeDevice, m_Probe, m_ProbeHandler, m_ExecAction, m_HTTPGetAction, m_HTTPHeader,
    m_TCPSocketAction, m_GRPCAction, m_Lifecycle, m_LifecycleHandler, m_SleepAction,
    m_SecurityContext, m_Ulimit, m_Capabilities, m_SELinuxOptions, m_WindowsSecurityContextOptions,
    m_SeccompProfile, m_AppArmorProfile, m_PodSecurityContext, m_Sysctl, m_Volume, m_VolumeSource,
    m_HostPathVolumeSource, m_EmptyDirVolumeSource, m_SecretVolumeSource, m_NFSVolumeSource,
    m_PersistentVolumeClaimVolumeSource, m_DownwardAPIVolumeSource, m_DownwardAPIVolumeFile,
    m_ConfigMapVolumeSource, m_KeyToPath, m_ProjectedVolumeSource, m_VolumeProjection,
    m_SecretProjection, m_ConfigMapProjection, m_DownwardAPIProjection,
    m_ServiceAccountTokenProjection, m_ClusterTrustBundleProjection, m_CSIVolumeSource,
    m_EphemeralVolumeSource, m_PersistentVolumeClaimTemplate, m_ImageVolumeSource, m_Toleration,
    m_HostAlias, m_PodDNSConfig, m_PodDNSConfigOption, m_PodReadinessGate, m_PodSchedulingGate,
    m_PodOS, m_PodResourceClaim, m_Affinity, m_NodeAffinity, m_NodeSelector, m_NodeSelectorTerm,
    m_NodeSelectorRequirement, m_PreferredSchedulingTerm, m_PodAffinity, m_PodAffinityTerm,
    m_WeightedPodAffinityTerm, m_TopologySpreadConstraint, m_PodStatus, m_PodCondition, m_HostIP,
    m_PodIP, m_PodResourceClaimStatus, m_ContainerStatus, m_VolumeMountStatus, m_ContainerUser,
    m_LinuxContainerUser, m_ContainerState, m_ContainerStateWaiting, m_ContainerStateRunning,
    m_ContainerStateTerminated, m_PodTemplateSpec, m_PodTemplate, m_ReplicationController,
    m_ReplicationControllerSpec, m_ReplicationControllerStatus, m_ReplicationControllerCondition,
    m_ResourceQuota, m_ResourceQuotaSpec, m_ScopeSelector, m_ScopedResourceSelectorRequirement,
    m_ResourceQuotaStatus, m_LimitRange, m_LimitRangeSpec, m_LimitRangeItem,
    m_PersistentVolumeClaim, m_PersistentVolumeClaimSpec, m_VolumeResourceRequirements,
    m_TypedLocalObjectReference, m_TypedObjectReference, m_PersistentVolumeClaimStatus,
    m_PersistentVolumeClaimCondition, m_ModifyVolumeStatus, m_Node, m_NodeSpec, m_Taint,
    m_NodeStatus, m_NodeCondition, m_NodeAddress, m_NodeDaemonEndpoints, m_DaemonEndpoint,
    m_NodeSystemInfo, m_NodeSwapStatus, m_ContainerImage, m_AttachedVolume, m_NodeRuntimeHandler,
    m_NodeRuntimeHandlerFeatures, m_NodeFeatures, m_Event, m_EventSource, m_EventSeries, m_Binding,
    m_Deployment, m_DeploymentSpec, m_DeploymentStrategy, m_RollingUpdateDeployment,
    m_DeploymentStatus, m_DeploymentCondition, m_ReplicaSet, m_ReplicaSetSpec, m_ReplicaSetStatus,
    m_ReplicaSetCondition, m_PriorityClass, m_StorageClass, m_TopologySelectorTerm,
    m_TopologySelectorLabelRequirement, m_Scale, m_ScaleSpec, m_ScaleStatus, m_Eviction,
    m_TokenRequest, m_TokenRequestSpec, m_BoundObjectReference, m_TokenRequestStatus;

/* ---- k8s.io/apimachinery/pkg/apis/meta/v1 ---- */
DEF(ObjectMeta, S(1, "name"), S(2, "generateName"), S(3, "namespace"), S(4, "selfLink"),
    S(5, "uid"), S(6, "resourceVersion"), I64(7, "generation"), TIME(8, "creationTimestamp"),
    TIME(9, "deletionTimestamp"), I64K(10, "deletionGracePeriodSeconds"), MSS(11, "labels"),
    MSS(12, "annotations"), RM(13, "ownerReferences", OwnerReference), RS(14, "finalizers"),
    RM(17, "managedFields", ManagedFieldsEntry));
DEF(ListMeta, S(1, "selfLink"), S(2, "resourceVersion"), S(3, "continue"),
    I64K(4, "remainingItemCount"));
DEF(OwnerReference, SK(5, "apiVersion"), SK(1, "kind"), SK(3, "name"), SK(4, "uid"),
    BK(6, "controller"), BK(7, "blockOwnerDeletion"));
DEF(ManagedFieldsEntry, S(1, "manager"), S(2, "operation"), S(3, "apiVersion"), TIME(4, "time"),
    S(6, "fieldsType"), RAW(7, "fieldsV1"), S(8, "subresource"));
DEF(LabelSelector, MSS(1, "matchLabels"), RM(2, "matchExpressions", LabelSelectorRequirement));
DEF(LabelSelectorRequirement, SK(1, "key"), SK(2, "operator"), RS(3, "values"));
DEF(Condition, SK(1, "type"), SK(2, "status"), I64(3, "observedGeneration"),
    TIME(4, "lastTransitionTime"), SK(5, "reason"), SK(6, "message"));
DEF(Preconditions, SK(1, "uid"), SK(2, "resourceVersion"));
DEF(DeleteOptions, I64K(1, "gracePeriodSeconds"), M(2, "preconditions", Preconditions),
    BK(3, "orphanDependents"), SK(4, "propagationPolicy"), RS(5, "dryRun"),
    BK(6, "ignoreStoreReadErrorWithClusterBreakingPotential"));
DEF(Status, M(1, "metadata", ListMeta), S(2, "status"), S(3, "message"), S(4, "reason"),
    M(5, "details", StatusDetails), I32(6, "code"));
DEF(StatusDetails, S(1, "name"), S(2, "group"), S(3, "kind"), S(6, "uid"),
    RM(4, "causes", StatusCause), I32(5, "retryAfterSeconds"));
DEF(StatusCause, S(1, "reason"), S(2, "message"), S(3, "field"));

/* ---- k8s.io/api/core/v1 ---- */
DEF(ObjectReference, S(1, "kind"), S(2, "namespace"), S(3, "name"), S(4, "uid"), S(5, "apiVersion"),
    S(6, "resourceVersion"), S(7, "fieldPath"));
DEF(LocalObjectReference, S(1, "name"));

DEF(Namespace, META, M(2, "spec", NamespaceSpec), M(3, "status", NamespaceStatus));
DEF(NamespaceSpec, RS(1, "finalizers"));
DEF(NamespaceStatus, S(1, "phase"), RM(2, "conditions", NamespaceCondition));
DEF(NamespaceCondition, SK(1, "type"), SK(2, "status"), TIME(4, "lastTransitionTime"),
    S(5, "reason"), S(6, "message"));

DEF(ConfigMap, META, BK(4, "immutable"), MSS(2, "data"), MSB(3, "binaryData"));
DEF(Secret, META, BK(5, "immutable"), MSB(2, "data"), MSS(4, "stringData"), S(3, "type"));
DEF(ServiceAccount, META, RM(2, "secrets", ObjectReference),
    RM(3, "imagePullSecrets", LocalObjectReference), BK(4, "automountServiceAccountToken"));

DEF(Service, META, M(2, "spec", ServiceSpec), M(3, "status", ServiceStatus));
DEF(ServiceSpec, RM(1, "ports", ServicePort), MSS(2, "selector"), S(3, "clusterIP"),
    RS(18, "clusterIPs"), S(4, "type"), RS(5, "externalIPs"), S(7, "sessionAffinity"),
    S(8, "loadBalancerIP"), RS(9, "loadBalancerSourceRanges"), S(10, "externalName"),
    S(11, "externalTrafficPolicy"), I32(12, "healthCheckNodePort"),
    B(13, "publishNotReadyAddresses"), M(14, "sessionAffinityConfig", SessionAffinityConfig),
    RS(19, "ipFamilies"), SK(17, "ipFamilyPolicy"), BK(20, "allocateLoadBalancerNodePorts"),
    SK(21, "loadBalancerClass"), SK(22, "internalTrafficPolicy"), SK(23, "trafficDistribution"));
DEF(ServicePort, S(1, "name"), S(2, "protocol"), SK(6, "appProtocol"), I32K(3, "port"),
    IOS(4, "targetPort"), I32(5, "nodePort"));
DEF(SessionAffinityConfig, M(1, "clientIP", ClientIPConfig));
DEF(ClientIPConfig, I32K(1, "timeoutSeconds"));
DEF(ServiceStatus, M(1, "loadBalancer", LoadBalancerStatus), RM(2, "conditions", Condition));
DEF(LoadBalancerStatus, RM(1, "ingress", LoadBalancerIngress));
DEF(LoadBalancerIngress, S(1, "ip"), S(2, "hostname"), SK(3, "ipMode"), RM(4, "ports", PortStatus));
DEF(PortStatus, I32K(1, "port"), SK(2, "protocol"), SK(3, "error"));

DEF(Pod, META, M(2, "spec", PodSpec), M(3, "status", PodStatus));
DEF(PodSpec, RM(1, "volumes", Volume), RM(20, "initContainers", Container),
    RM(2, "containers", Container), RM(34, "ephemeralContainers", EphemeralContainer),
    S(3, "restartPolicy"), I64K(4, "terminationGracePeriodSeconds"),
    I64K(5, "activeDeadlineSeconds"), S(6, "dnsPolicy"), MSS(7, "nodeSelector"),
    S(8, "serviceAccountName"), S(9, "serviceAccount"), BK(21, "automountServiceAccountToken"),
    S(10, "nodeName"), B(11, "hostNetwork"), B(12, "hostPID"), B(13, "hostIPC"),
    BK(27, "shareProcessNamespace"), M(14, "securityContext", PodSecurityContext),
    RM(15, "imagePullSecrets", LocalObjectReference), S(16, "hostname"), S(17, "subdomain"),
    M(18, "affinity", Affinity), S(19, "schedulerName"), RM(22, "tolerations", Toleration),
    RM(23, "hostAliases", HostAlias), S(24, "priorityClassName"), I32K(25, "priority"),
    M(26, "dnsConfig", PodDNSConfig), RM(28, "readinessGates", PodReadinessGate),
    SK(29, "runtimeClassName"), BK(30, "enableServiceLinks"), SK(31, "preemptionPolicy"),
    MSQ(32, "overhead"), RM(33, "topologySpreadConstraints", TopologySpreadConstraint),
    BK(35, "setHostnameAsFQDN"), M(36, "os", PodOS), BK(37, "hostUsers"),
    RM(38, "schedulingGates", PodSchedulingGate), RM(39, "resourceClaims", PodResourceClaim),
    M(40, "resources", ResourceRequirements), SK(41, "hostnameOverride"),
    M(42, "workloadRef", WorkloadReference));
DEF(WorkloadReference, SK(1, "name"), SK(2, "podGroup"), S(3, "podGroupReplicaKey"));
/* EphemeralContainerCommon has the same fields and numbers as Container. */
DEF(Container, SK(1, "name"), S(2, "image"), RS(3, "command"), RS(4, "args"), S(5, "workingDir"),
    RM(6, "ports", ContainerPort), RM(19, "envFrom", EnvFromSource), RM(7, "env", EnvVar),
    M(8, "resources", ResourceRequirements), RM(23, "resizePolicy", ContainerResizePolicy),
    SK(24, "restartPolicy"), RM(25, "restartPolicyRules", ContainerRestartRule),
    RM(9, "volumeMounts", VolumeMount), RM(21, "volumeDevices", VolumeDevice),
    M(10, "livenessProbe", Probe), M(11, "readinessProbe", Probe), M(22, "startupProbe", Probe),
    M(12, "lifecycle", Lifecycle), S(13, "terminationMessagePath"),
    S(20, "terminationMessagePolicy"), S(14, "imagePullPolicy"),
    M(15, "securityContext", SecurityContext), B(16, "stdin"), B(17, "stdinOnce"), B(18, "tty"));
DEF(EphemeralContainer, INL(1, Container), S(2, "targetContainerName"));
DEF(ContainerRestartRule, SK(1, "action"), M(2, "exitCodes", ContainerRestartRuleOnExitCodes));
DEF(ContainerRestartRuleOnExitCodes, SK(1, "operator"), RI32(2, "values"));
DEF(ContainerResizePolicy, SK(1, "resourceName"), SK(2, "restartPolicy"));
DEF(ContainerPort, S(1, "name"), I32(2, "hostPort"), I32K(3, "containerPort"), S(4, "protocol"),
    S(5, "hostIP"));
DEF(EnvFromSource, S(1, "prefix"), M(2, "configMapRef", ConfigMapEnvSource),
    M(3, "secretRef", SecretEnvSource));
DEF(ConfigMapEnvSource, INL(1, LocalObjectReference), BK(2, "optional"));
DEF(SecretEnvSource, INL(1, LocalObjectReference), BK(2, "optional"));
DEF(EnvVar, SK(1, "name"), S(2, "value"), M(3, "valueFrom", EnvVarSource));
DEF(EnvVarSource, M(1, "fieldRef", ObjectFieldSelector),
    M(2, "resourceFieldRef", ResourceFieldSelector), M(3, "configMapKeyRef", ConfigMapKeySelector),
    M(4, "secretKeyRef", SecretKeySelector), M(5, "fileKeyRef", FileKeySelector));
DEF(ObjectFieldSelector, S(1, "apiVersion"), SK(2, "fieldPath"));
DEF(ResourceFieldSelector, S(1, "containerName"), SK(2, "resource"), QTY(3, "divisor"));
DEF(ConfigMapKeySelector, INL(1, LocalObjectReference), SK(2, "key"), BK(3, "optional"));
DEF(SecretKeySelector, INL(1, LocalObjectReference), SK(2, "key"), BK(3, "optional"));
DEF(FileKeySelector, SK(1, "volumeName"), SK(2, "path"), SK(3, "key"), BK(4, "optional"));
DEF(ResourceRequirements, MSQ(1, "limits"), MSQ(2, "requests"), RM(3, "claims", ResourceClaim));
DEF(ResourceClaim, SK(1, "name"), S(2, "request"));
DEF(VolumeMount, SK(1, "name"), B(2, "readOnly"), SK(7, "recursiveReadOnly"), SK(3, "mountPath"),
    S(4, "subPath"), SK(5, "mountPropagation"), S(6, "subPathExpr"));
DEF(VolumeDevice, SK(1, "name"), SK(2, "devicePath"));
DEF(Probe, INL(1, ProbeHandler), I32(2, "initialDelaySeconds"), I32(3, "timeoutSeconds"),
    I32(4, "periodSeconds"), I32(5, "successThreshold"), I32(6, "failureThreshold"),
    I64K(7, "terminationGracePeriodSeconds"));
DEF(ProbeHandler, M(1, "exec", ExecAction), M(2, "httpGet", HTTPGetAction),
    M(3, "tcpSocket", TCPSocketAction), M(4, "grpc", GRPCAction));
DEF(ExecAction, RS(1, "command"));
DEF(HTTPGetAction, S(1, "path"), IOS(2, "port"), S(3, "host"), S(4, "scheme"),
    RM(5, "httpHeaders", HTTPHeader));
DEF(HTTPHeader, SK(1, "name"), SK(2, "value"));
DEF(TCPSocketAction, IOS(1, "port"), S(2, "host"));
DEF(GRPCAction, I32K(1, "port"), SK(2, "service"));
DEF(Lifecycle, M(1, "postStart", LifecycleHandler), M(2, "preStop", LifecycleHandler),
    SK(3, "stopSignal"));
DEF(LifecycleHandler, M(1, "exec", ExecAction), M(2, "httpGet", HTTPGetAction),
    M(3, "tcpSocket", TCPSocketAction), M(4, "sleep", SleepAction));
DEF(SleepAction, I64K(1, "seconds"));
DEF(SecurityContext, M(1, "capabilities", Capabilities), BK(2, "privileged"),
    M(3, "seLinuxOptions", SELinuxOptions), M(10, "windowsOptions", WindowsSecurityContextOptions),
    I64K(4, "runAsUser"), I64K(8, "runAsGroup"), BK(5, "runAsNonRoot"),
    BK(6, "readOnlyRootFilesystem"), BK(7, "allowPrivilegeEscalation"), SK(9, "procMount"),
    M(11, "seccompProfile", SeccompProfile), M(12, "appArmorProfile", AppArmorProfile),
    RM(13, "ulimits", Ulimit));
DEF(Ulimit, SK(1, "name"), I64K(2, "hard"), I64K(3, "soft"));
DEF(Capabilities, RS(1, "add"), RS(2, "drop"));
DEF(SELinuxOptions, S(1, "user"), S(2, "role"), S(3, "type"), S(4, "level"));
DEF(WindowsSecurityContextOptions, SK(1, "gmsaCredentialSpecName"), SK(2, "gmsaCredentialSpec"),
    SK(3, "runAsUserName"), BK(4, "hostProcess"));
DEF(SeccompProfile, SK(1, "type"), SK(2, "localhostProfile"));
DEF(AppArmorProfile, SK(1, "type"), SK(2, "localhostProfile"));
DEF(PodSecurityContext, M(1, "seLinuxOptions", SELinuxOptions),
    M(8, "windowsOptions", WindowsSecurityContextOptions), I64K(2, "runAsUser"),
    I64K(6, "runAsGroup"), BK(3, "runAsNonRoot"), RI64(4, "supplementalGroups"),
    SK(12, "supplementalGroupsPolicy"), I64K(5, "fsGroup"), RM(7, "sysctls", Sysctl),
    SK(9, "fsGroupChangePolicy"), M(10, "seccompProfile", SeccompProfile),
    M(11, "appArmorProfile", AppArmorProfile), SK(13, "seLinuxChangePolicy"));
DEF(Sysctl, SK(1, "name"), SK(2, "value"));

DEF(Volume, SK(1, "name"), INL(2, VolumeSource));
/* Only the volume sources a current cluster uses; the deprecated in-tree
 * ones (gcePersistentDisk, rbd, ...) are refused as unknown fields. */
DEF(VolumeSource, M(1, "hostPath", HostPathVolumeSource), M(2, "emptyDir", EmptyDirVolumeSource),
    M(6, "secret", SecretVolumeSource), M(7, "nfs", NFSVolumeSource),
    M(10, "persistentVolumeClaim", PersistentVolumeClaimVolumeSource),
    M(16, "downwardAPI", DownwardAPIVolumeSource), M(19, "configMap", ConfigMapVolumeSource),
    M(26, "projected", ProjectedVolumeSource), M(28, "csi", CSIVolumeSource),
    M(29, "ephemeral", EphemeralVolumeSource), M(30, "image", ImageVolumeSource));
DEF(HostPathVolumeSource, SK(1, "path"), SK(2, "type"));
DEF(EmptyDirVolumeSource, S(1, "medium"), QTY(2, "sizeLimit"));
DEF(SecretVolumeSource, S(1, "secretName"), RM(2, "items", KeyToPath), I32K(3, "defaultMode"),
    BK(4, "optional"));
DEF(NFSVolumeSource, SK(1, "server"), SK(2, "path"), B(3, "readOnly"));
DEF(PersistentVolumeClaimVolumeSource, SK(1, "claimName"), B(2, "readOnly"));
DEF(DownwardAPIVolumeSource, RM(1, "items", DownwardAPIVolumeFile), I32K(2, "defaultMode"));
DEF(DownwardAPIVolumeFile, SK(1, "path"), M(2, "fieldRef", ObjectFieldSelector),
    M(3, "resourceFieldRef", ResourceFieldSelector), I32K(4, "mode"));
DEF(ConfigMapVolumeSource, INL(1, LocalObjectReference), RM(2, "items", KeyToPath),
    I32K(3, "defaultMode"), BK(4, "optional"));
DEF(KeyToPath, SK(1, "key"), SK(2, "path"), I32K(3, "mode"));
DEF(ProjectedVolumeSource, RM(1, "sources", VolumeProjection), I32K(2, "defaultMode"));
DEF(VolumeProjection, M(1, "secret", SecretProjection), M(2, "downwardAPI", DownwardAPIProjection),
    M(3, "configMap", ConfigMapProjection),
    M(4, "serviceAccountToken", ServiceAccountTokenProjection),
    M(5, "clusterTrustBundle", ClusterTrustBundleProjection));
DEF(SecretProjection, INL(1, LocalObjectReference), RM(2, "items", KeyToPath), BK(4, "optional"));
DEF(ConfigMapProjection, INL(1, LocalObjectReference), RM(2, "items", KeyToPath),
    BK(4, "optional"));
DEF(DownwardAPIProjection, RM(1, "items", DownwardAPIVolumeFile));
DEF(ServiceAccountTokenProjection, S(1, "audience"), I64K(2, "expirationSeconds"), SK(3, "path"));
DEF(ClusterTrustBundleProjection, SK(1, "name"), SK(2, "signerName"),
    M(3, "labelSelector", LabelSelector), BK(5, "optional"), SK(4, "path"));
DEF(CSIVolumeSource, SK(1, "driver"), BK(2, "readOnly"), SK(3, "fsType"),
    MSS(4, "volumeAttributes"), M(5, "nodePublishSecretRef", LocalObjectReference));
DEF(EphemeralVolumeSource, M(1, "volumeClaimTemplate", PersistentVolumeClaimTemplate));
DEF(PersistentVolumeClaimTemplate, META, M(2, "spec", PersistentVolumeClaimSpec));
DEF(ImageVolumeSource, S(1, "reference"), S(2, "pullPolicy"));

DEF(Toleration, S(1, "key"), S(2, "operator"), S(3, "value"), S(4, "effect"),
    I64K(5, "tolerationSeconds"));
DEF(HostAlias, SK(1, "ip"), RS(2, "hostnames"));
DEF(PodDNSConfig, RS(1, "nameservers"), RS(2, "searches"), RM(3, "options", PodDNSConfigOption));
DEF(PodDNSConfigOption, S(1, "name"), SK(2, "value"));
DEF(PodReadinessGate, SK(1, "conditionType"));
DEF(PodSchedulingGate, SK(1, "name"));
DEF(PodOS, SK(1, "name"));
DEF(PodResourceClaim, SK(1, "name"), SK(3, "resourceClaimName"),
    SK(4, "resourceClaimTemplateName"));

DEF(Affinity, M(1, "nodeAffinity", NodeAffinity), M(2, "podAffinity", PodAffinity),
    M(3, "podAntiAffinity", PodAffinity));
DEF(NodeAffinity, M(1, "requiredDuringSchedulingIgnoredDuringExecution", NodeSelector),
    RM(2, "preferredDuringSchedulingIgnoredDuringExecution", PreferredSchedulingTerm));
DEF(NodeSelector, RM(1, "nodeSelectorTerms", NodeSelectorTerm));
DEF(NodeSelectorTerm, RM(1, "matchExpressions", NodeSelectorRequirement),
    RM(2, "matchFields", NodeSelectorRequirement));
DEF(NodeSelectorRequirement, SK(1, "key"), SK(2, "operator"), RS(3, "values"));
DEF(PreferredSchedulingTerm, I32K(1, "weight"), M(2, "preference", NodeSelectorTerm));
/* PodAntiAffinity has the same fields and numbers as PodAffinity. */
DEF(PodAffinity, RM(1, "requiredDuringSchedulingIgnoredDuringExecution", PodAffinityTerm),
    RM(2, "preferredDuringSchedulingIgnoredDuringExecution", WeightedPodAffinityTerm));
DEF(PodAffinityTerm, M(1, "labelSelector", LabelSelector), RS(2, "namespaces"),
    SK(3, "topologyKey"), M(4, "namespaceSelector", LabelSelector), RS(5, "matchLabelKeys"),
    RS(6, "mismatchLabelKeys"));
DEF(WeightedPodAffinityTerm, I32K(1, "weight"), M(2, "podAffinityTerm", PodAffinityTerm));
DEF(TopologySpreadConstraint, I32K(1, "maxSkew"), SK(2, "topologyKey"), SK(3, "whenUnsatisfiable"),
    M(4, "labelSelector", LabelSelector), I32K(5, "minDomains"), SK(6, "nodeAffinityPolicy"),
    SK(7, "nodeTaintsPolicy"), RS(8, "matchLabelKeys"));

DEF(PodStatus, I64(17, "observedGeneration"), S(1, "phase"), RM(2, "conditions", PodCondition),
    S(3, "message"), S(4, "reason"), S(11, "nominatedNodeName"), S(5, "hostIP"),
    RM(16, "hostIPs", HostIP), S(6, "podIP"), RM(12, "podIPs", PodIP), TIME(7, "startTime"),
    RM(10, "initContainerStatuses", ContainerStatus), RM(8, "containerStatuses", ContainerStatus),
    S(9, "qosClass"), RM(13, "ephemeralContainerStatuses", ContainerStatus), S(14, "resize"),
    RM(15, "resourceClaimStatuses", PodResourceClaimStatus), MSQ(19, "allocatedResources"),
    M(20, "resources", ResourceRequirements));
DEF(PodCondition, SK(1, "type"), I64(7, "observedGeneration"), SK(2, "status"),
    TIME(3, "lastProbeTime"), TIME(4, "lastTransitionTime"), S(5, "reason"), S(6, "message"));
DEF(HostIP, SK(1, "ip"));
DEF(PodIP, SK(1, "ip"));
DEF(PodResourceClaimStatus, SK(1, "name"), SK(2, "resourceClaimName"));
DEF(ContainerStatus, SK(1, "name"), M(2, "state", ContainerState),
    M(3, "lastState", ContainerState), BK(4, "ready"), I32K(5, "restartCount"), SK(6, "image"),
    SK(7, "imageID"), S(8, "containerID"), BK(9, "started"), MSQ(10, "allocatedResources"),
    M(11, "resources", ResourceRequirements), RM(12, "volumeMounts", VolumeMountStatus),
    M(13, "user", ContainerUser), SK(15, "stopSignal"));
DEF(VolumeMountStatus, SK(1, "name"), SK(2, "mountPath"), B(3, "readOnly"),
    SK(4, "recursiveReadOnly"));
DEF(ContainerUser, M(1, "linux", LinuxContainerUser));
DEF(LinuxContainerUser, I64K(1, "uid"), I64K(2, "gid"), RI64(3, "supplementalGroups"));
DEF(ContainerState, M(1, "waiting", ContainerStateWaiting), M(2, "running", ContainerStateRunning),
    M(3, "terminated", ContainerStateTerminated));
DEF(ContainerStateWaiting, S(1, "reason"), S(2, "message"));
DEF(ContainerStateRunning, TIME(1, "startedAt"));
DEF(ContainerStateTerminated, I32K(1, "exitCode"), I32(2, "signal"), S(3, "reason"),
    S(4, "message"), TIME(5, "startedAt"), TIME(6, "finishedAt"), S(7, "containerID"));

DEF(PodTemplateSpec, META, M(2, "spec", PodSpec));
DEF(PodTemplate, META, M(2, "template", PodTemplateSpec));
DEF(ReplicationController, META, M(2, "spec", ReplicationControllerSpec),
    M(3, "status", ReplicationControllerStatus));
DEF(ReplicationControllerSpec, I32K(1, "replicas"), I32(4, "minReadySeconds"), MSS(2, "selector"),
    M(3, "template", PodTemplateSpec));
DEF(ReplicationControllerStatus, I32K(1, "replicas"), I32(2, "fullyLabeledReplicas"),
    I32(4, "readyReplicas"), I32(5, "availableReplicas"), I64(3, "observedGeneration"),
    RM(6, "conditions", ReplicationControllerCondition));
DEF(ReplicationControllerCondition, SK(1, "type"), SK(2, "status"), TIME(3, "lastTransitionTime"),
    S(4, "reason"), S(5, "message"));

DEF(ResourceQuota, META, M(2, "spec", ResourceQuotaSpec), M(3, "status", ResourceQuotaStatus));
DEF(ResourceQuotaSpec, MSQ(1, "hard"), RS(2, "scopes"), M(3, "scopeSelector", ScopeSelector));
DEF(ScopeSelector, RM(1, "matchExpressions", ScopedResourceSelectorRequirement));
DEF(ScopedResourceSelectorRequirement, SK(1, "scopeName"), SK(2, "operator"), RS(3, "values"));
DEF(ResourceQuotaStatus, MSQ(1, "hard"), MSQ(2, "used"));
DEF(LimitRange, META, M(2, "spec", LimitRangeSpec));
DEF(LimitRangeSpec, RM(1, "limits", LimitRangeItem));
DEF(LimitRangeItem, SK(1, "type"), MSQ(2, "max"), MSQ(3, "min"), MSQ(4, "default"),
    MSQ(5, "defaultRequest"), MSQ(6, "maxLimitRequestRatio"));

DEF(PersistentVolumeClaim, META, M(2, "spec", PersistentVolumeClaimSpec),
    M(3, "status", PersistentVolumeClaimStatus));
DEF(PersistentVolumeClaimSpec, RS(1, "accessModes"), M(4, "selector", LabelSelector),
    M(2, "resources", VolumeResourceRequirements), S(3, "volumeName"), SK(5, "storageClassName"),
    SK(6, "volumeMode"), M(7, "dataSource", TypedLocalObjectReference),
    M(8, "dataSourceRef", TypedObjectReference), SK(9, "volumeAttributesClassName"));
DEF(VolumeResourceRequirements, MSQ(1, "limits"), MSQ(2, "requests"));
DEF(TypedLocalObjectReference, SK(1, "apiGroup"), SK(2, "kind"), SK(3, "name"));
DEF(TypedObjectReference, SK(1, "apiGroup"), SK(2, "kind"), SK(3, "name"), SK(4, "namespace"));
DEF(PersistentVolumeClaimStatus, S(1, "phase"), RS(2, "accessModes"), MSQ(3, "capacity"),
    RM(4, "conditions", PersistentVolumeClaimCondition), MSQ(5, "allocatedResources"),
    MSS(7, "allocatedResourceStatuses"), SK(8, "currentVolumeAttributesClassName"),
    M(9, "modifyVolumeStatus", ModifyVolumeStatus));
DEF(PersistentVolumeClaimCondition, SK(1, "type"), SK(2, "status"), TIME(3, "lastProbeTime"),
    TIME(4, "lastTransitionTime"), S(5, "reason"), S(6, "message"));
DEF(ModifyVolumeStatus, S(1, "targetVolumeAttributesClassName"), SK(2, "status"));

DEF(Node, META, M(2, "spec", NodeSpec), M(3, "status", NodeStatus));
DEF(NodeSpec, S(1, "podCIDR"), RS(7, "podCIDRs"), S(3, "providerID"), B(4, "unschedulable"),
    RM(5, "taints", Taint), S(2, "externalID"));
DEF(Taint, SK(1, "key"), S(2, "value"), SK(3, "effect"), TIME(4, "timeAdded"));
DEF(NodeStatus, MSQ(1, "capacity"), MSQ(2, "allocatable"), S(3, "phase"),
    RM(4, "conditions", NodeCondition), RM(5, "addresses", NodeAddress),
    M(6, "daemonEndpoints", NodeDaemonEndpoints), M(7, "nodeInfo", NodeSystemInfo),
    RM(8, "images", ContainerImage), RS(9, "volumesInUse"),
    RM(10, "volumesAttached", AttachedVolume), RM(12, "runtimeHandlers", NodeRuntimeHandler),
    M(13, "features", NodeFeatures), RS(14, "declaredFeatures"));
DEF(NodeCondition, SK(1, "type"), SK(2, "status"), TIME(3, "lastHeartbeatTime"),
    TIME(4, "lastTransitionTime"), S(5, "reason"), S(6, "message"));
DEF(NodeAddress, SK(1, "type"), SK(2, "address"));
DEF(NodeDaemonEndpoints, M(1, "kubeletEndpoint", DaemonEndpoint));
DEF(DaemonEndpoint, I32K(1, "Port"));
DEF(NodeSystemInfo, SK(1, "machineID"), SK(2, "systemUUID"), SK(3, "bootID"),
    SK(4, "kernelVersion"), SK(5, "osImage"), SK(6, "containerRuntimeVersion"),
    SK(7, "kubeletVersion"), SK(8, "kubeProxyVersion"), SK(9, "operatingSystem"),
    SK(10, "architecture"), M(11, "swap", NodeSwapStatus));
DEF(NodeSwapStatus, I64K(1, "capacity"));
DEF(ContainerImage, RS(1, "names"), I64(2, "sizeBytes"));
DEF(AttachedVolume, SK(1, "name"), SK(2, "devicePath"));
DEF(NodeRuntimeHandler, S(1, "name"), M(2, "features", NodeRuntimeHandlerFeatures));
DEF(NodeRuntimeHandlerFeatures, BK(1, "recursiveReadOnlyMounts"), BK(2, "userNamespaces"));
DEF(NodeFeatures, BK(1, "supplementalGroupsPolicy"), BK(2, "containerUlimits"));

DEF(Event, META, M(2, "involvedObject", ObjectReference), S(3, "reason"), S(4, "message"),
    M(5, "source", EventSource), TIME(6, "firstTimestamp"), TIME(7, "lastTimestamp"),
    I32(8, "count"), S(9, "type"), MTIME(10, "eventTime"), M(11, "series", EventSeries),
    S(12, "action"), M(13, "related", ObjectReference), SK(14, "reportingComponent"),
    SK(15, "reportingInstance"));
DEF(EventSource, S(1, "component"), S(2, "host"));
DEF(EventSeries, I32(1, "count"), MTIME(2, "lastObservedTime"));
DEF(Binding, META, M(2, "target", ObjectReference));

/* ---- k8s.io/api/apps/v1 ---- */
DEF(Deployment, META, M(2, "spec", DeploymentSpec), M(3, "status", DeploymentStatus));
DEF(DeploymentSpec, I32K(1, "replicas"), M(2, "selector", LabelSelector),
    M(3, "template", PodTemplateSpec), M(4, "strategy", DeploymentStrategy),
    I32(5, "minReadySeconds"), I32K(6, "revisionHistoryLimit"), B(7, "paused"),
    I32K(9, "progressDeadlineSeconds"));
DEF(DeploymentStrategy, S(1, "type"), M(2, "rollingUpdate", RollingUpdateDeployment));
DEF(RollingUpdateDeployment, IOS(1, "maxUnavailable"), IOS(2, "maxSurge"));
DEF(DeploymentStatus, I64(1, "observedGeneration"), I32(2, "replicas"), I32(3, "updatedReplicas"),
    I32(7, "readyReplicas"), I32(4, "availableReplicas"), I32(5, "unavailableReplicas"),
    RM(6, "conditions", DeploymentCondition), I32K(8, "collisionCount"));
DEF(DeploymentCondition, SK(1, "type"), SK(2, "status"), TIME(6, "lastUpdateTime"),
    TIME(7, "lastTransitionTime"), S(4, "reason"), S(5, "message"));
DEF(ReplicaSet, META, M(2, "spec", ReplicaSetSpec), M(3, "status", ReplicaSetStatus));
DEF(ReplicaSetSpec, I32K(1, "replicas"), I32(4, "minReadySeconds"), M(2, "selector", LabelSelector),
    M(3, "template", PodTemplateSpec));
DEF(ReplicaSetStatus, I32K(1, "replicas"), I32(2, "fullyLabeledReplicas"), I32(4, "readyReplicas"),
    I32(5, "availableReplicas"), I64(3, "observedGeneration"),
    RM(6, "conditions", ReplicaSetCondition));
DEF(ReplicaSetCondition, SK(1, "type"), SK(2, "status"), TIME(3, "lastTransitionTime"),
    S(4, "reason"), S(5, "message"));

/* ---- scheduling.k8s.io/v1, storage.k8s.io/v1, autoscaling/v1, policy/v1 ---- */
DEF(PriorityClass, META, I32K(2, "value"), B(3, "globalDefault"), S(4, "description"),
    SK(5, "preemptionPolicy"));
DEF(StorageClass, META, SK(2, "provisioner"), MSS(3, "parameters"), SK(4, "reclaimPolicy"),
    RS(5, "mountOptions"), BK(6, "allowVolumeExpansion"), SK(7, "volumeBindingMode"),
    RM(8, "allowedTopologies", TopologySelectorTerm));
DEF(TopologySelectorTerm, RM(1, "matchLabelExpressions", TopologySelectorLabelRequirement));
DEF(TopologySelectorLabelRequirement, SK(1, "key"), RS(2, "values"));
DEF(Scale, META, M(2, "spec", ScaleSpec), M(3, "status", ScaleStatus));
DEF(ScaleSpec, I32(1, "replicas"));
DEF(ScaleStatus, I32K(1, "replicas"), S(2, "selector"));
DEF(Eviction, META, M(2, "deleteOptions", DeleteOptions));

/* ---- authentication.k8s.io/v1 ---- */
DEF(TokenRequest, META, M(2, "spec", TokenRequestSpec), M(3, "status", TokenRequestStatus));
DEF(TokenRequestSpec, RS(1, "audiences"), I64K(4, "expirationSeconds"),
    M(3, "boundObjectRef", BoundObjectReference));
DEF(BoundObjectReference, S(1, "kind"), S(2, "apiVersion"), S(3, "name"), S(4, "uid"));
DEF(TokenRequestStatus, SK(1, "token"), TIME(2, "expirationTimestamp"));

/* Top-level kinds. A NULL apiVersion matches any: DeleteOptions and Status
 * are registered in every group version upstream. */
static const struct {
    const char *api_version;
    const char *kind;
    const pb_msg *msg;
} pb_kinds[] = {
    {"v1", "Namespace", &m_Namespace},
    {"v1", "ConfigMap", &m_ConfigMap},
    {"v1", "Secret", &m_Secret},
    {"v1", "Service", &m_Service},
    {"v1", "ServiceAccount", &m_ServiceAccount},
    {"v1", "Pod", &m_Pod},
    {"v1", "PodTemplate", &m_PodTemplate},
    {"v1", "ReplicationController", &m_ReplicationController},
    {"v1", "ResourceQuota", &m_ResourceQuota},
    {"v1", "LimitRange", &m_LimitRange},
    {"v1", "PersistentVolumeClaim", &m_PersistentVolumeClaim},
    {"v1", "Node", &m_Node},
    {"v1", "Event", &m_Event},
    {"v1", "Binding", &m_Binding},
    {"apps/v1", "Deployment", &m_Deployment},
    {"apps/v1", "ReplicaSet", &m_ReplicaSet},
    {"scheduling.k8s.io/v1", "PriorityClass", &m_PriorityClass},
    {"storage.k8s.io/v1", "StorageClass", &m_StorageClass},
    {"autoscaling/v1", "Scale", &m_Scale},
    {"policy/v1", "Eviction", &m_Eviction},
    {"authentication.k8s.io/v1", "TokenRequest", &m_TokenRequest},
    {NULL, "DeleteOptions", &m_DeleteOptions},
    {NULL, "Status", &m_Status},
};

static const pb_msg *kind_msg(const char *api_version, const char *kind)
{
    for (size_t i = 0; i < sizeof pb_kinds / sizeof pb_kinds[0]; i++) {
        if (strcmp(pb_kinds[i].kind, kind) != 0) continue;
        if (!pb_kinds[i].api_version || strcmp(pb_kinds[i].api_version, api_version) == 0)
            return pb_kinds[i].msg;
    }
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* Wire reader                                                               */

typedef struct {
    const uint8_t *p, *end;
} rd;

enum { WT_VARINT = 0, WT_FIXED64 = 1, WT_LEN = 2, WT_FIXED32 = 5 };

typedef struct {
    uint32_t num;
    int wt;
    uint64_t u;          /* WT_VARINT, WT_FIXED32, WT_FIXED64 */
    const uint8_t *data; /* WT_LEN */
    size_t len;
} wfield;

/* At most 10 bytes; the 10th may only carry the top bit. */
static const char *rd_varint(rd *r, uint64_t *out)
{
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 70; shift += 7) {
        if (r->p >= r->end) return "truncated varint";
        uint8_t b = *r->p++;
        if (shift == 63 && b > 1) return "varint overflows 64 bits";
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = v;
            return NULL;
        }
    }
    return "varint overflows 64 bits";
}

static uint64_t le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* Next field, or an error text. Groups (wire types 3, 4) are refused:
 * upstream's messages never use them. */
static const char *rd_field(rd *r, wfield *f)
{
    uint64_t key;
    const char *err = rd_varint(r, &key);
    if (err) return err;
    if (key >> 3 == 0 || key >> 3 > 0x1fffffff) return "invalid field number";
    f->num = (uint32_t)(key >> 3);
    f->wt = (int)(key & 7);
    size_t left = (size_t)(r->end - r->p);
    switch (f->wt) {
    case WT_VARINT:
        return rd_varint(r, &f->u);
    case WT_FIXED64:
    case WT_FIXED32: {
        int n = f->wt == WT_FIXED64 ? 8 : 4;
        if (left < (size_t)n) return "truncated fixed-width field";
        f->u = le(r->p, n);
        r->p += n;
        return NULL;
    }
    case WT_LEN: {
        uint64_t len;
        if ((err = rd_varint(r, &len))) return err;
        if (len > (uint64_t)(r->end - r->p)) return "truncated length-delimited field";
        f->data = r->p;
        f->len = (size_t)len;
        r->p += len;
        return NULL;
    }
    default:
        return "unsupported wire type";
    }
}

/* Whether an unlisted field carries nothing (a zero value field a newer
 * client always writes); such fields are skipped, others refused. */
static bool wire_is_zero(const wfield *f)
{
    return f->wt == WT_LEN ? f->len == 0 : f->u == 0;
}

/* ------------------------------------------------------------------------ */
/* Value conversions                                                         */

/* Length of the valid UTF-8 sequence at s, or 0 (Go's utf8 rules). */
static size_t utf8_seq(const uint8_t *s, size_t n)
{
    uint8_t c = s[0];
    size_t len;
    uint32_t cp;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF)
        len = 2, cp = c & 0x1f;
    else if ((c & 0xF0) == 0xE0)
        len = 3, cp = c & 0x0f;
    else if (c >= 0xF0 && c <= 0xF4)
        len = 4, cp = c & 0x07;
    else
        return 0;
    if (n < len) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if (len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) return 0;
    if (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) return 0;
    return len;
}

/* A copy of s as valid UTF-8: each invalid byte becomes U+FFFD, as Go's
 * encoding/json writes it. Caller frees; *outn gets the length. */
static char *utf8_fix(const uint8_t *s, size_t n, size_t *outn)
{
    if (n > (SIZE_MAX - 1) / 3) return NULL;
    char *out = malloc(n * 3 + 1);
    size_t o = 0;
    if (!out) return NULL;
    for (size_t i = 0; i < n;) {
        size_t k = utf8_seq(s + i, n - i);
        if (k) {
            memcpy(out + o, s + i, k);
            o += k;
            i += k;
        } else {
            memcpy(out + o, "\xEF\xBF\xBD", 3);
            o += 3;
            i++;
        }
    }
    out[o] = '\0';
    *outn = o;
    return out;
}

static json_t *mk_string(const uint8_t *s, size_t n)
{
    json_t *v = json_stringn((const char *)s, n);
    if (v) return v;
    size_t fn;
    char *fixed = utf8_fix(s, n, &fn);
    if (!fixed) return NULL;
    v = json_stringn(fixed, fn);
    free(fixed);
    return v;
}

static json_t *mk_base64(const uint8_t *s, size_t n)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    if (n > SIZE_MAX / 2) return NULL;
    size_t outn = (n + 2) / 3 * 4;
    char *out = malloc(outn + 1);
    size_t o = 0;
    if (!out) return NULL;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)s[i] << 16;
        if (i + 1 < n) v |= (uint32_t)s[i + 1] << 8;
        if (i + 2 < n) v |= s[i + 2];
        out[o++] = tab[v >> 18 & 63];
        out[o++] = tab[v >> 12 & 63];
        out[o++] = i + 1 < n ? tab[v >> 6 & 63] : '=';
        out[o++] = i + 2 < n ? tab[v & 63] : '=';
    }
    json_t *r = json_stringn(out, o);
    free(out);
    return r;
}

#define GO_ZERO_TIME (-62135596800LL) /* 0001-01-01T00:00:00Z */
#define GO_MAX_TIME 253402300799LL    /* 9999-12-31T23:59:59Z */

/* RFC 3339 in UTC, as metav1.Time (seconds) or metav1.MicroTime (6 digits)
 * marshal to JSON. NULL text means Go's zero time (JSON null); an error
 * text for a time JSON cannot hold. */
static const char *fmt_time(int64_t secs, int64_t nanos, bool micro, char *buf, size_t n,
                            bool *is_null)
{
    *is_null = false;
    if (!micro) nanos = 0; /* metav1.Time drops nanos when decoding protobuf */
    if (nanos < 0 || nanos > 999999999) return "nanos out of range";
    if (secs < GO_ZERO_TIME || secs > GO_MAX_TIME) return "time out of range";
    if (secs == GO_ZERO_TIME && nanos == 0) {
        *is_null = true;
        return NULL;
    }
    int64_t days = secs / 86400, rem = secs % 86400;
    if (rem < 0) rem += 86400, days--;
    int64_t y;
    unsigned mo, d;
    rfc3339_civil_from_days(days, &y, &mo, &d);
    int k = snprintf(buf, n, "%04lld-%02u-%02uT%02d:%02d:%02d", (long long)y, mo, d,
                     (int)(rem / 3600), (int)(rem / 60 % 60), (int)(rem % 60));
    if (micro) k += snprintf(buf + k, n - (size_t)k, ".%06d", (int)(nanos / 1000));
    snprintf(buf + k, n - (size_t)k, "Z");
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* Decoder                                                                   */

typedef struct {
    api_err *e;
    int depth;
    size_t nodes;
} pb_ctx;

static int pb_fail(pb_ctx *c, const pb_msg *m, const pb_field *f, uint32_t num, const char *fmt,
                   ...) __attribute__((format(printf, 5, 6)));
static int pb_fail(pb_ctx *c, const pb_msg *m, const pb_field *f, uint32_t num, const char *fmt,
                   ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (f && f->json)
        return api_err_set(c->e, API_BAD_REQUEST, "failed to decode protobuf body: %s (%s.%s)",
                           what, m->name, f->json);
    if (m)
        return api_err_set(c->e, API_BAD_REQUEST,
                           "failed to decode protobuf body: %s (%s field %u)", what, m->name, num);
    return api_err_set(c->e, API_BAD_REQUEST, "failed to decode protobuf body: %s", what);
}

/* Every JSON value made goes through here: counts it against the budget. */
static json_t *pb_node(pb_ctx *c, json_t *v)
{
    if (!v) return NULL;
    if (++c->nodes > PB_MAX_NODES) {
        json_decref(v);
        return NULL;
    }
    return v;
}

static int dec_msg(pb_ctx *c, const pb_msg *m, const uint8_t *p, size_t n, json_t *obj);

static const pb_field *find_field(const pb_msg *m, uint32_t num)
{
    for (size_t i = 0; i < m->n; i++)
        if (m->fields[i].num == num) return &m->fields[i];
    return NULL;
}

/* Read field 1 of a one-string message ({1 string}, e.g. Quantity). */
static const char *read_only_string(const uint8_t *p, size_t n, const uint8_t **s, size_t *sn)
{
    rd r = {p, p + n};
    *s = NULL;
    *sn = 0;
    while (r.p < r.end) {
        wfield w;
        const char *err = rd_field(&r, &w);
        if (err) return err;
        if (w.num != 1) continue;
        if (w.wt != WT_LEN) return "wrong wire type";
        *s = w.data;
        *sn = w.len;
    }
    return NULL;
}

static json_t *dec_quantity(pb_ctx *c, const pb_msg *m, const pb_field *f, const uint8_t *p,
                            size_t n)
{
    const uint8_t *s;
    size_t sn;
    const char *err = read_only_string(p, n, &s, &sn);
    if (err) return pb_fail(c, m, f, 0, "%s in Quantity", err), NULL;
    /* Go's zero Quantity marshals as "0"; a present string is already canonical. */
    return s ? mk_string(s, sn) : json_string("0");
}

static json_t *dec_intorstr(pb_ctx *c, const pb_msg *m, const pb_field *f, const uint8_t *p,
                            size_t n)
{
    rd r = {p, p + n};
    uint64_t type = 0, ival = 0;
    const uint8_t *s = (const uint8_t *)"";
    size_t sn = 0;
    while (r.p < r.end) {
        wfield w;
        const char *err = rd_field(&r, &w);
        if (err) return pb_fail(c, m, f, 0, "%s in IntOrString", err), NULL;
        if ((w.num == 1 || w.num == 2) && w.wt != WT_VARINT) break;
        if (w.num == 3 && w.wt != WT_LEN) break;
        if (w.num == 1) type = w.u;
        if (w.num == 2) ival = w.u;
        if (w.num == 3) s = w.data, sn = w.len;
    }
    if (r.p < r.end) return pb_fail(c, m, f, 0, "wrong wire type in IntOrString"), NULL;
    if (type == 1) return mk_string(s, sn);
    return json_integer((int32_t)(uint32_t)ival);
}

static json_t *dec_time(pb_ctx *c, const pb_msg *m, const pb_field *f, const uint8_t *p, size_t n)
{
    rd r = {p, p + n};
    uint64_t secs = 0, nanos = 0;
    if (n == 0) return json_null(); /* Go's zero Time */
    while (r.p < r.end) {
        wfield w;
        const char *err = rd_field(&r, &w);
        if (err) return pb_fail(c, m, f, 0, "%s in Time", err), NULL;
        if ((w.num == 1 || w.num == 2) && w.wt != WT_VARINT)
            return pb_fail(c, m, f, 0, "wrong wire type in Time"), NULL;
        if (w.num == 1) secs = w.u;
        if (w.num == 2) nanos = w.u;
    }
    char buf[64];
    bool is_null;
    const char *err = fmt_time((int64_t)secs, (int32_t)(uint32_t)nanos, f->type == T_MICROTIME, buf,
                               sizeof buf, &is_null);
    if (err) return pb_fail(c, m, f, 0, "%s", err), NULL;
    return is_null ? json_null() : json_string(buf);
}

/* RawExtension / FieldsV1: {1 raw bytes}, the bytes being JSON. (A nested
 * protobuf object in a RawExtension is refused: no covered kind has one.) */
static json_t *dec_raw(pb_ctx *c, const pb_msg *m, const pb_field *f, const uint8_t *p, size_t n)
{
    const uint8_t *s;
    size_t sn;
    const char *err = read_only_string(p, n, &s, &sn);
    if (err) return pb_fail(c, m, f, 0, "%s in raw field", err), NULL;
    if (!s || sn == 0) return json_null();
    json_error_t je;
    json_t *v = json_loadb((const char *)s, sn, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
    if (!v) return pb_fail(c, m, f, 0, "raw bytes are not JSON: %s", je.text), NULL;
    c->nodes += sn / 2; /* a rough charge for the values parsed */
    if (c->nodes > PB_MAX_NODES) {
        json_decref(v);
        return pb_fail(c, m, f, 0, "too many values"), NULL;
    }
    return v;
}

/* One map entry {1 key, 2 value} into the object `map`. */
static int dec_map_entry(pb_ctx *c, const pb_msg *m, const pb_field *f, const uint8_t *p, size_t n,
                         json_t *map)
{
    rd r = {p, p + n};
    const uint8_t *k = (const uint8_t *)"", *v = NULL;
    size_t kn = 0, vn = 0;
    while (r.p < r.end) {
        wfield w;
        const char *err = rd_field(&r, &w);
        if (err) return pb_fail(c, m, f, 0, "%s in map entry", err);
        if (w.num != 1 && w.num != 2) continue;
        if (w.wt != WT_LEN) return pb_fail(c, m, f, 0, "wrong wire type in map entry");
        if (w.num == 1)
            k = w.data, kn = w.len;
        else
            v = w.data, vn = w.len;
    }
    json_t *val;
    if (f->type == T_MAP_SQ)
        val = dec_quantity(c, m, f, v ? v : (const uint8_t *)"", vn);
    else if (f->type == T_MAP_SB)
        val = mk_base64(v ? v : (const uint8_t *)"", vn);
    else
        val = mk_string(v ? v : (const uint8_t *)"", vn);
    if (!(val = pb_node(c, val))) return c->e->code ? -1 : pb_fail(c, m, f, 0, "too many values");
    size_t keyn;
    char *key = utf8_fix(k, kn, &keyn);
    if (!key) {
        json_decref(val);
        return pb_fail(c, m, f, 0, "out of memory");
    }
    int rc = json_object_setn_new(map, key, keyn, val);
    free(key);
    return rc ? pb_fail(c, m, f, 0, "bad map key") : 0;
}

/* A length-delimited value of field f: a new JSON value, or NULL on error. */
static json_t *dec_len_value(pb_ctx *c, const pb_msg *m, const pb_field *f, const wfield *w)
{
    switch (f->type) {
    case T_STRING:
        return mk_string(w->data, w->len);
    case T_BYTES:
        return mk_base64(w->data, w->len);
    case T_QUANTITY:
        return dec_quantity(c, m, f, w->data, w->len);
    case T_INTORSTR:
        return dec_intorstr(c, m, f, w->data, w->len);
    case T_TIME:
    case T_MICROTIME:
        return dec_time(c, m, f, w->data, w->len);
    case T_RAWJSON:
        return dec_raw(c, m, f, w->data, w->len);
    case T_MSG: {
        json_t *o = json_object();
        if (o && dec_msg(c, f->msg, w->data, w->len, o)) {
            json_decref(o);
            return NULL;
        }
        return o;
    }
    default:
        return NULL;
    }
}

static bool is_scalar(int type)
{
    return type == T_BOOL || type == T_INT32 || type == T_INT64;
}

static json_t *scalar_value(const pb_field *f, uint64_t u)
{
    if (f->type == T_BOOL) return json_boolean(u != 0);
    if (f->type == T_INT32) return json_integer((int32_t)(uint32_t)u);
    return json_integer((json_int_t)(int64_t)u);
}

/* Whether v is the zero value an omitempty field drops. */
static bool is_zero(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_STRING:
        return json_string_length(v) == 0;
    case JSON_INTEGER:
        return json_integer_value(v) == 0;
    case JSON_FALSE:
        return true;
    default:
        return false;
    }
}

/* Store one decoded value: appended for a repeated field, else set (last
 * one wins, as in protobuf), a zero omitempty scalar removing the key. */
static int put(pb_ctx *c, const pb_msg *m, const pb_field *f, json_t *obj, json_t *v)
{
    if (!(v = pb_node(c, v)))
        return c->e->code ? -1 : pb_fail(c, m, f, 0, "too many values or out of memory");
    if (f->flags & REP) {
        json_t *arr = json_object_get(obj, f->json);
        if (!json_is_array(arr)) {
            arr = json_array();
            if (!arr || json_object_set_new(obj, f->json, arr)) {
                json_decref(v);
                return pb_fail(c, m, f, 0, "out of memory");
            }
        }
        return json_array_append_new(arr, v) ? pb_fail(c, m, f, 0, "out of memory") : 0;
    }
    if (f->type != T_MSG && !(f->flags & KEEP) && is_zero(v)) {
        json_decref(v);
        json_object_del(obj, f->json);
        return 0;
    }
    return json_object_set_new(obj, f->json, v) ? pb_fail(c, m, f, 0, "out of memory") : 0;
}

/* Packed repeated scalars: a run of varints in one length-delimited field. */
static int dec_packed(pb_ctx *c, const pb_msg *m, const pb_field *f, const wfield *w, json_t *obj)
{
    rd r = {w->data, w->data + w->len};
    while (r.p < r.end) {
        uint64_t u;
        const char *err = rd_varint(&r, &u);
        if (err) return pb_fail(c, m, f, 0, "%s in packed field", err);
        if (put(c, m, f, obj, scalar_value(f, u))) return -1;
    }
    return 0;
}

static int dec_field(pb_ctx *c, const pb_msg *m, const pb_field *f, const wfield *w, json_t *obj)
{
    if (is_scalar(f->type)) {
        if (w->wt == WT_LEN && (f->flags & REP)) return dec_packed(c, m, f, w, obj);
        if (w->wt != WT_VARINT) return pb_fail(c, m, f, 0, "wrong wire type %d", w->wt);
        return put(c, m, f, obj, scalar_value(f, w->u));
    }
    if (w->wt != WT_LEN) return pb_fail(c, m, f, 0, "wrong wire type %d", w->wt);
    switch (f->type) {
    case T_INLINE:
        return dec_msg(c, f->msg, w->data, w->len, obj);
    case T_MAP_SS:
    case T_MAP_SB:
    case T_MAP_SQ: {
        json_t *map = json_object_get(obj, f->json);
        if (!json_is_object(map)) {
            map = pb_node(c, json_object());
            if (!map || json_object_set_new(obj, f->json, map))
                return pb_fail(c, m, f, 0, "too many values or out of memory");
        }
        return dec_map_entry(c, m, f, w->data, w->len, map);
    }
    case T_MSG: {
        /* A repeated occurrence of a singular message merges into it. */
        json_t *prev = json_object_get(obj, f->json);
        if (!(f->flags & REP) && json_is_object(prev))
            return dec_msg(c, f->msg, w->data, w->len, prev);
        break;
    }
    default:
        break;
    }
    json_t *v = dec_len_value(c, m, f, w);
    if (!v) return c->e->code ? -1 : pb_fail(c, m, f, 0, "out of memory");
    return put(c, m, f, obj, v);
}

static int dec_msg(pb_ctx *c, const pb_msg *m, const uint8_t *p, size_t n, json_t *obj)
{
    if (++c->depth > PB_MAX_DEPTH) return pb_fail(c, m, NULL, 0, "nesting too deep");
    rd r = {p, p + n};
    while (r.p < r.end) {
        wfield w;
        const char *err = rd_field(&r, &w);
        if (err) return pb_fail(c, m, NULL, 0, "%s", err);
        const pb_field *f = find_field(m, w.num);
        if (!f) {
            if (wire_is_zero(&w)) continue;
            return pb_fail(c, m, NULL, w.num, "field not supported by this server");
        }
        if (dec_field(c, m, f, &w, obj)) return -1;
    }
    c->depth--;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Public API                                                                */

bool pb_has_magic(const void *body, size_t len)
{
    return body && len >= 4 && memcmp(body, "k8s\0", 4) == 0;
}

bool pb_kind_known(const char *api_version, const char *kind)
{
    return api_version && kind && kind_msg(api_version, kind) != NULL;
}

static json_t *decode_object(const char *api_version, const char *kind, const uint8_t *msg,
                             size_t len, api_err *e)
{
    const pb_msg *m = kind_msg(api_version, kind);
    if (!m) {
        api_err_set(e, API_BAD_REQUEST,
                    "no kind \"%s\" is registered for version \"%s\" in scheme \"%s\"", kind,
                    api_version, PB_SCHEME);
        return NULL;
    }
    pb_ctx c = {e, 0, 0};
    json_t *obj = json_object();
    if (!obj || json_object_set_new(obj, "kind", mk_string((const uint8_t *)kind, strlen(kind))) ||
        json_object_set_new(obj, "apiVersion",
                            mk_string((const uint8_t *)api_version, strlen(api_version)))) {
        json_decref(obj);
        api_err_set(e, API_INTERNAL, "out of memory");
        return NULL;
    }
    if (dec_msg(&c, m, msg, len, obj)) {
        json_decref(obj);
        return NULL;
    }
    return obj;
}

json_t *pb_decode_object(const char *api_version, const char *kind, const void *msg, size_t len,
                         api_err *e)
{
    return decode_object(api_version ? api_version : "", kind ? kind : "", msg, len, e);
}

/* Copy a wire string into buf as a C string; false if too long or has NUL. */
static bool copy_name(const wfield *w, char *buf)
{
    if (w->len >= PB_NAME_MAX || memchr(w->data, 0, w->len)) return false;
    memcpy(buf, w->data, w->len);
    buf[w->len] = '\0';
    return true;
}

static const char *read_type_meta(const wfield *tm, char *api_version, char *kind)
{
    rd r = {tm->data, tm->data + tm->len};
    while (r.p < r.end) {
        wfield w;
        const char *err = rd_field(&r, &w);
        if (err) return err;
        if (w.num != 1 && w.num != 2) continue;
        if (w.wt != WT_LEN) return "wrong wire type in typeMeta";
        if (!copy_name(&w, w.num == 1 ? api_version : kind)) return "invalid apiVersion or kind";
    }
    return NULL;
}

json_t *pb_decode(const void *body, size_t len, api_err *e)
{
    static const char pfx[] = "failed to decode protobuf body";
    if (!pb_has_magic(body, len)) {
        api_err_set(e, API_BAD_REQUEST, "%s: missing the \"k8s\\x00\" prefix", pfx);
        return NULL;
    }
    const uint8_t *p = (const uint8_t *)body + 4;
    rd r = {p, p + (len - 4)};
    char api_version[PB_NAME_MAX] = "", kind[PB_NAME_MAX] = "";
    const uint8_t *raw = (const uint8_t *)"";
    size_t raw_len = 0;
    while (r.p < r.end) {
        wfield w;
        const char *err = rd_field(&r, &w);
        if (!err && w.num >= 1 && w.num <= 4 && w.wt != WT_LEN) err = "wrong wire type";
        if (!err && w.num == 1) err = read_type_meta(&w, api_version, kind);
        if (!err && w.num == 2) raw = w.data, raw_len = w.len;
        if (!err && w.num == 3 && w.len) err = "content encodings are not supported";
        if (!err && w.num == 4 && w.len &&
            (w.len != strlen(PB_CONTENT_TYPE) || memcmp(w.data, PB_CONTENT_TYPE, w.len)))
            err = "unsupported content type";
        if (err) {
            api_err_set(e, API_BAD_REQUEST, "%s: %s (Unknown)", pfx, err);
            return NULL;
        }
    }
    if (!kind[0]) {
        api_err_set(e, API_BAD_REQUEST, "Object 'Kind' is missing in protobuf body");
        return NULL;
    }
    return decode_object(api_version, kind, raw, raw_len, e);
}
