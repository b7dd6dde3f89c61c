/* schema.c - the typed definition of every served kind (see schema.h).
 *
 * Field numbers and JSON names are wire facts taken from upstream's
 * generated.proto files (k8s.io/api core/v1, apps/v1, ...; apimachinery
 * meta/v1, runtime, resource, intstr); the tables are our own. Each message
 * records the OpenAPI package its upstream type lives in.
 */
#include "api/schema.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define F(n, j, t, fl, m)                                                                          \
    {                                                                                              \
        (n), (j), (t), (fl), (m), NULL                                                             \
    }
#define FK(n, j, t, fl, m, k)                                                                      \
    {                                                                                              \
        (n), (j), (t), (fl), (m), (k)                                                              \
    }
#define S(n, j) F(n, j, SCH_STRING, 0, NULL)
#define SK(n, j) F(n, j, SCH_STRING, SCH_KEEP, NULL)
#define RS(n, j) F(n, j, SCH_STRING, SCH_REP, NULL)
#define B(n, j) F(n, j, SCH_BOOL, 0, NULL)
#define BK(n, j) F(n, j, SCH_BOOL, SCH_KEEP, NULL)
#define I32(n, j) F(n, j, SCH_INT32, 0, NULL)
#define I32K(n, j) F(n, j, SCH_INT32, SCH_KEEP, NULL)
#define RI32(n, j) F(n, j, SCH_INT32, SCH_REP, NULL)
#define I64(n, j) F(n, j, SCH_INT64, 0, NULL)
#define I64K(n, j) F(n, j, SCH_INT64, SCH_KEEP, NULL)
#define RI64(n, j) F(n, j, SCH_INT64, SCH_REP, NULL)
#define M(n, j, m) F(n, j, SCH_MSG, 0, &m_##m)
#define RM(n, j, m) F(n, j, SCH_MSG, SCH_REP, &m_##m)
#define INL(n, m) F(n, NULL, SCH_INLINE, 0, &m_##m)
#define MSS(n, j) F(n, j, SCH_MAP_SS, 0, NULL)
#define MSB(n, j) F(n, j, SCH_MAP_SB, 0, NULL)
#define MSQ(n, j) F(n, j, SCH_MAP_SQ, 0, NULL)
#define QTY(n, j) F(n, j, SCH_QUANTITY, 0, NULL)
#define IOS(n, j) F(n, j, SCH_INTORSTR, 0, NULL)
#define TIME(n, j) F(n, j, SCH_TIME, 0, NULL)
#define MTIME(n, j) F(n, j, SCH_MICROTIME, 0, NULL)
#define RAW(n, j) F(n, j, SCH_RAWJSON, 0, NULL)
#define MSM(n, j, m) F(n, j, SCH_MAP_SM, 0, &m_##m)
#define MSML(n, j, m) F(n, j, SCH_MAP_SM, SCH_VREP, &m_##m)
#define META MV(1, "metadata", ObjectMeta)
/* Server-side apply's view (sch_field.list, SCH_ATOM, SCH_VAL, sch_msg.atomic):
 * keyed lists, sets, atomic maps and structs, and Go value structs. */
#define LSET (&(const sch_list){0, {NULL}, {NULL}})
#define LKEY(k) (&(const sch_list){1, {k}, {NULL}})
#define LKEY2(a, b, bdefault) (&(const sch_list){2, {a, b}, {NULL, bdefault}})
#define RMK(n, j, m, list) FK(n, j, SCH_MSG, SCH_REP, &m_##m, list)
#define RSS(n, j) FK(n, j, SCH_STRING, SCH_REP, NULL, LSET)
#define MV(n, j, m) F(n, j, SCH_MSG, SCH_VAL, &m_##m)
#define MSSA(n, j) F(n, j, SCH_MAP_SS, SCH_ATOM, NULL)

#define DEF(name, ...)                                                                             \
    static const sch_field f_##name[] = {__VA_ARGS__};                                             \
    static const sch_msg m_##name = {#name, SCH_PKG, f_##name,                                     \
                                     sizeof f_##name / sizeof f_##name[0], false}
/* A type whose Go name another package's type also has: its C name apart. */
#define DEFNA(cname, goname, ...)                                                                  \
    static const sch_field f_##cname[] = {__VA_ARGS__};                                            \
    static const sch_msg m_##cname = {goname, SCH_PKG, f_##cname,                                  \
                                      sizeof f_##cname / sizeof f_##cname[0], true}
/* A +structType=atomic type: server-side apply replaces it whole. */
#define DEFA(name, ...)                                                                            \
    static const sch_field f_##name[] = {__VA_ARGS__};                                             \
    static const sch_msg m_##name = {#name, SCH_PKG, f_##name,                                     \
                                     sizeof f_##name / sizeof f_##name[0], true}

/* Forward declarations (tentative definitions), so a table can name a message
 * defined below it. */
static const sch_msg m_ObjectMeta, m_ListMeta, m_OwnerReference, m_ManagedFieldsEntry,
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
    m_ReplicaSetCondition, m_StatefulSet, m_StatefulSetSpec, m_StatefulSetUpdateStrategy,
    m_RollingUpdateStatefulSetStrategy, m_StatefulSetPersistentVolumeClaimRetentionPolicy,
    m_StatefulSetOrdinals, m_StatefulSetStatus, m_StatefulSetCondition, m_DaemonSet,
    m_DaemonSetSpec, m_DaemonSetUpdateStrategy, m_RollingUpdateDaemonSet, m_DaemonSetStatus,
    m_DaemonSetCondition, m_PriorityClass, m_StorageClass, m_TopologySelectorTerm,
    m_TopologySelectorLabelRequirement, m_Scale, m_ScaleSpec, m_ScaleStatus, m_Eviction,
    m_TokenRequest, m_TokenRequestSpec, m_BoundObjectReference, m_TokenRequestStatus,
    m_ResourcePool, m_ResourcePoolSpec, m_ResourcePoolSpecConfiguration, m_ResourcePoolStatus,
    m_ResourcePoolClaimsItem, m_ResourcePoolQuotaStatus, m_PoolExhaustionResource,
    m_ResourcePoolClaim, m_ResourcePoolClaimSpec, m_ResourcePoolClaimStatus, m_StatusNameUID,
    m_CustomQuota, m_CustomQuotaSpec, m_CustomQuotaOptionsSpec, m_CustomQuotaSpecSource,
    m_SelectorWithFields, m_CustomQuotaStatus, m_CustomQuotaUsage, m_CustomQuotaClaim,
    m_CustomQuotaTarget, m_CustomQuotaReservation, m_GlobalCustomQuota, m_GlobalCustomQuotaSpec, m_NamespaceSelector,
    m_GlobalCustomQuotaStatus, m_Role, m_ClusterRole, m_PolicyRule, m_AggregationRule,
    m_RoleBinding, m_ClusterRoleBinding, m_Subject, m_RoleRef, m_SelfSubjectAccessReview,
    m_SelfSubjectAccessReviewSpec, m_ResourceAttributes, m_NonResourceAttributes,
    m_SubjectAccessReviewStatus, m_SubjectAccessReview, m_SubjectAccessReviewSpec,
    m_SelfSubjectRulesReview, m_SelfSubjectRulesReviewSpec, m_SubjectRulesReviewStatus,
    m_ResourceRule, m_NonResourceRule, m_SelfSubjectReview, m_SelfSubjectReviewStatus, m_UserInfo,
    m_CustomResourceDefinition, m_CustomResourceDefinitionSpec, m_CustomResourceDefinitionNames,
    m_CustomResourceDefinitionVersion, m_CustomResourceValidation, m_CustomResourceSubresources,
    m_CustomResourceSubresourceScale, m_CustomResourceColumnDefinition, m_SelectableField,
    m_CustomResourceConversion, m_WebhookConversion, m_CustomResourceDefinitionStatus,
    m_CustomResourceDefinitionCondition;
/* core/v1 Endpoints; discovery/v1 EndpointSlice (its EndpointPort is m_DiscoveryEndpointPort) */
static const sch_msg m_Endpoints, m_EndpointSubset, m_EndpointAddress, m_EndpointPort,
    m_EndpointSlice, m_Endpoint, m_EndpointConditions, m_EndpointHints, m_ForZone,
    m_DiscoveryEndpointPort;
/* batch/v1 */
static const sch_msg m_Job, m_JobSpec, m_JobStatus, m_JobCondition, m_UncountedTerminatedPods,
    m_PodFailurePolicy, m_PodFailurePolicyRule, m_PodFailurePolicyOnExitCodesRequirement,
    m_PodFailurePolicyOnPodConditionsPattern, m_SuccessPolicy, m_SuccessPolicyRule, m_CronJob,
    m_CronJobSpec, m_JobTemplateSpec, m_CronJobStatus;

/* ---- k8s.io/apimachinery/pkg/apis/meta/v1 ---- */
#define SCH_PKG "io.k8s.apimachinery.pkg.apis.meta.v1"
DEF(ObjectMeta, S(1, "name"), S(2, "generateName"), S(3, "namespace"), S(4, "selfLink"),
    S(5, "uid"), S(6, "resourceVersion"), I64(7, "generation"), TIME(8, "creationTimestamp"),
    TIME(9, "deletionTimestamp"), I64K(10, "deletionGracePeriodSeconds"), MSS(11, "labels"),
    MSS(12, "annotations"), RMK(13, "ownerReferences", OwnerReference, LKEY("uid")),
    RSS(14, "finalizers"), RM(17, "managedFields", ManagedFieldsEntry));
DEF(ListMeta, S(1, "selfLink"), S(2, "resourceVersion"), S(3, "continue"),
    I64K(4, "remainingItemCount"));
DEFA(OwnerReference, SK(5, "apiVersion"), SK(1, "kind"), SK(3, "name"), SK(4, "uid"),
     BK(6, "controller"), BK(7, "blockOwnerDeletion"));
DEF(ManagedFieldsEntry, S(1, "manager"), S(2, "operation"), S(3, "apiVersion"), TIME(4, "time"),
    S(6, "fieldsType"), RAW(7, "fieldsV1"), S(8, "subresource"));
DEFA(LabelSelector, MSS(1, "matchLabels"), RM(2, "matchExpressions", LabelSelectorRequirement));
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
#undef SCH_PKG
#define SCH_PKG "io.k8s.api.core.v1"
DEFA(ObjectReference, S(1, "kind"), S(2, "namespace"), S(3, "name"), S(4, "uid"),
     S(5, "apiVersion"), S(6, "resourceVersion"), S(7, "fieldPath"));
DEFA(LocalObjectReference, S(1, "name"));

DEF(Namespace, META, MV(2, "spec", NamespaceSpec), MV(3, "status", NamespaceStatus));
DEF(NamespaceSpec, RS(1, "finalizers"));
DEF(NamespaceStatus, S(1, "phase"), RMK(2, "conditions", NamespaceCondition, LKEY("type")));
DEF(NamespaceCondition, SK(1, "type"), SK(2, "status"), TIME(4, "lastTransitionTime"),
    S(5, "reason"), S(6, "message"));

DEF(ConfigMap, META, BK(4, "immutable"), MSS(2, "data"), MSB(3, "binaryData"));
DEF(Secret, META, BK(5, "immutable"), MSB(2, "data"), MSS(4, "stringData"), S(3, "type"));
DEF(ServiceAccount, META, RMK(2, "secrets", ObjectReference, LKEY("name")),
    RM(3, "imagePullSecrets", LocalObjectReference), BK(4, "automountServiceAccountToken"));

DEF(Service, META, MV(2, "spec", ServiceSpec), MV(3, "status", ServiceStatus));
DEF(ServiceSpec, RMK(1, "ports", ServicePort, LKEY2("port", "protocol", "TCP")),
    MSSA(2, "selector"), S(3, "clusterIP"), RS(18, "clusterIPs"), S(4, "type"),
    RS(5, "externalIPs"), S(7, "sessionAffinity"), S(8, "loadBalancerIP"),
    RS(9, "loadBalancerSourceRanges"), S(10, "externalName"), S(11, "externalTrafficPolicy"),
    I32(12, "healthCheckNodePort"), B(13, "publishNotReadyAddresses"),
    M(14, "sessionAffinityConfig", SessionAffinityConfig), RS(19, "ipFamilies"),
    SK(17, "ipFamilyPolicy"), BK(20, "allocateLoadBalancerNodePorts"), SK(21, "loadBalancerClass"),
    SK(22, "internalTrafficPolicy"), SK(23, "trafficDistribution"));
DEF(ServicePort, S(1, "name"), S(2, "protocol"), SK(6, "appProtocol"), I32K(3, "port"),
    IOS(4, "targetPort"), I32(5, "nodePort"));
DEF(SessionAffinityConfig, M(1, "clientIP", ClientIPConfig));
DEF(ClientIPConfig, I32K(1, "timeoutSeconds"));
DEF(ServiceStatus, MV(1, "loadBalancer", LoadBalancerStatus),
    RMK(2, "conditions", Condition, LKEY("type")));
DEF(LoadBalancerStatus, RM(1, "ingress", LoadBalancerIngress));
DEF(LoadBalancerIngress, S(1, "ip"), S(2, "hostname"), SK(3, "ipMode"), RM(4, "ports", PortStatus));
DEF(PortStatus, I32K(1, "port"), SK(2, "protocol"), SK(3, "error"));

DEF(Endpoints, META, RM(2, "subsets", EndpointSubset));
DEF(EndpointSubset, RM(1, "addresses", EndpointAddress),
    RM(2, "notReadyAddresses", EndpointAddress), RM(3, "ports", EndpointPort));
DEF(EndpointAddress, SK(1, "ip"), S(3, "hostname"), SK(4, "nodeName"),
    M(2, "targetRef", ObjectReference));
DEF(EndpointPort, S(1, "name"), I32K(2, "port"), S(3, "protocol"), SK(4, "appProtocol"));

DEF(Pod, META, MV(2, "spec", PodSpec), MV(3, "status", PodStatus));
DEF(PodSpec, RMK(1, "volumes", Volume, LKEY("name")),
    RMK(20, "initContainers", Container, LKEY("name")),
    FK(2, "containers", SCH_MSG, SCH_REP | SCH_VAL, &m_Container, LKEY("name")),
    RMK(34, "ephemeralContainers", EphemeralContainer, LKEY("name")), S(3, "restartPolicy"),
    I64K(4, "terminationGracePeriodSeconds"), I64K(5, "activeDeadlineSeconds"), S(6, "dnsPolicy"),
    MSSA(7, "nodeSelector"), S(8, "serviceAccountName"), S(9, "serviceAccount"),
    BK(21, "automountServiceAccountToken"), S(10, "nodeName"), B(11, "hostNetwork"),
    B(12, "hostPID"), B(13, "hostIPC"), BK(27, "shareProcessNamespace"),
    M(14, "securityContext", PodSecurityContext),
    RMK(15, "imagePullSecrets", LocalObjectReference, LKEY("name")), S(16, "hostname"),
    S(17, "subdomain"), M(18, "affinity", Affinity), S(19, "schedulerName"),
    RM(22, "tolerations", Toleration), RMK(23, "hostAliases", HostAlias, LKEY("ip")),
    S(24, "priorityClassName"), I32K(25, "priority"), M(26, "dnsConfig", PodDNSConfig),
    RM(28, "readinessGates", PodReadinessGate), SK(29, "runtimeClassName"),
    BK(30, "enableServiceLinks"), SK(31, "preemptionPolicy"), MSQ(32, "overhead"),
    RMK(33, "topologySpreadConstraints", TopologySpreadConstraint,
        LKEY2("topologyKey", "whenUnsatisfiable", NULL)),
    BK(35, "setHostnameAsFQDN"), M(36, "os", PodOS), BK(37, "hostUsers"),
    RMK(38, "schedulingGates", PodSchedulingGate, LKEY("name")),
    RMK(39, "resourceClaims", PodResourceClaim, LKEY("name")),
    M(40, "resources", ResourceRequirements), SK(41, "hostnameOverride"),
    M(42, "workloadRef", WorkloadReference));
DEF(WorkloadReference, SK(1, "name"), SK(2, "podGroup"), S(3, "podGroupReplicaKey"));
/* EphemeralContainerCommon has the same fields and numbers as Container. */
DEF(Container, SK(1, "name"), S(2, "image"), RS(3, "command"), RS(4, "args"), S(5, "workingDir"),
    RMK(6, "ports", ContainerPort, LKEY2("containerPort", "protocol", "TCP")),
    RM(19, "envFrom", EnvFromSource), RMK(7, "env", EnvVar, LKEY("name")),
    MV(8, "resources", ResourceRequirements), RM(23, "resizePolicy", ContainerResizePolicy),
    SK(24, "restartPolicy"), RM(25, "restartPolicyRules", ContainerRestartRule),
    RMK(9, "volumeMounts", VolumeMount, LKEY("mountPath")),
    RMK(21, "volumeDevices", VolumeDevice, LKEY("devicePath")), M(10, "livenessProbe", Probe),
    M(11, "readinessProbe", Probe), M(22, "startupProbe", Probe), M(12, "lifecycle", Lifecycle),
    S(13, "terminationMessagePath"), S(20, "terminationMessagePolicy"), S(14, "imagePullPolicy"),
    M(15, "securityContext", SecurityContext), B(16, "stdin"), B(17, "stdinOnce"), B(18, "tty"));
DEF(EphemeralContainer, INL(1, Container), S(2, "targetContainerName"));
DEF(ContainerRestartRule, SK(1, "action"), M(2, "exitCodes", ContainerRestartRuleOnExitCodes));
DEF(ContainerRestartRuleOnExitCodes, SK(1, "operator"),
    FK(2, "values", SCH_INT32, SCH_REP, NULL, LSET));
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
DEFA(ObjectFieldSelector, S(1, "apiVersion"), SK(2, "fieldPath"));
DEFA(ResourceFieldSelector, S(1, "containerName"), SK(2, "resource"), QTY(3, "divisor"));
DEFA(ConfigMapKeySelector, INL(1, LocalObjectReference), SK(2, "key"), BK(3, "optional"));
DEFA(SecretKeySelector, INL(1, LocalObjectReference), SK(2, "key"), BK(3, "optional"));
DEFA(FileKeySelector, SK(1, "volumeName"), SK(2, "path"), SK(3, "key"), BK(4, "optional"));
DEF(ResourceRequirements, MSQ(1, "limits"), MSQ(2, "requests"),
    RMK(3, "claims", ResourceClaim, LKEY("name")));
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
DEF(PersistentVolumeClaimTemplate, META, MV(2, "spec", PersistentVolumeClaimSpec));
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
DEFA(NodeSelector, RM(1, "nodeSelectorTerms", NodeSelectorTerm));
DEFA(NodeSelectorTerm, RM(1, "matchExpressions", NodeSelectorRequirement),
     RM(2, "matchFields", NodeSelectorRequirement));
DEF(NodeSelectorRequirement, SK(1, "key"), SK(2, "operator"), RS(3, "values"));
DEF(PreferredSchedulingTerm, I32K(1, "weight"), MV(2, "preference", NodeSelectorTerm));
/* PodAntiAffinity has the same fields and numbers as PodAffinity. */
DEF(PodAffinity, RM(1, "requiredDuringSchedulingIgnoredDuringExecution", PodAffinityTerm),
    RM(2, "preferredDuringSchedulingIgnoredDuringExecution", WeightedPodAffinityTerm));
DEF(PodAffinityTerm, M(1, "labelSelector", LabelSelector), RS(2, "namespaces"),
    SK(3, "topologyKey"), M(4, "namespaceSelector", LabelSelector), RS(5, "matchLabelKeys"),
    RS(6, "mismatchLabelKeys"));
DEF(WeightedPodAffinityTerm, I32K(1, "weight"), MV(2, "podAffinityTerm", PodAffinityTerm));
DEF(TopologySpreadConstraint, I32K(1, "maxSkew"), SK(2, "topologyKey"), SK(3, "whenUnsatisfiable"),
    M(4, "labelSelector", LabelSelector), I32K(5, "minDomains"), SK(6, "nodeAffinityPolicy"),
    SK(7, "nodeTaintsPolicy"), RS(8, "matchLabelKeys"));

DEF(PodStatus, I64(17, "observedGeneration"), S(1, "phase"),
    RMK(2, "conditions", PodCondition, LKEY("type")), S(3, "message"), S(4, "reason"),
    S(11, "nominatedNodeName"), S(5, "hostIP"), RM(16, "hostIPs", HostIP), S(6, "podIP"),
    RMK(12, "podIPs", PodIP, LKEY("ip")), TIME(7, "startTime"),
    RM(10, "initContainerStatuses", ContainerStatus), RM(8, "containerStatuses", ContainerStatus),
    S(9, "qosClass"), RM(13, "ephemeralContainerStatuses", ContainerStatus), S(14, "resize"),
    RMK(15, "resourceClaimStatuses", PodResourceClaimStatus, LKEY("name")),
    MSQ(19, "allocatedResources"), M(20, "resources", ResourceRequirements));
DEF(PodCondition, SK(1, "type"), I64(7, "observedGeneration"), SK(2, "status"),
    TIME(3, "lastProbeTime"), TIME(4, "lastTransitionTime"), S(5, "reason"), S(6, "message"));
DEF(HostIP, SK(1, "ip"));
DEF(PodIP, SK(1, "ip"));
DEF(PodResourceClaimStatus, SK(1, "name"), SK(2, "resourceClaimName"));
DEF(ContainerStatus, SK(1, "name"), MV(2, "state", ContainerState),
    MV(3, "lastState", ContainerState), BK(4, "ready"), I32K(5, "restartCount"), SK(6, "image"),
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

DEF(PodTemplateSpec, META, MV(2, "spec", PodSpec));
DEF(PodTemplate, META, MV(2, "template", PodTemplateSpec));
DEF(ReplicationController, META, MV(2, "spec", ReplicationControllerSpec),
    MV(3, "status", ReplicationControllerStatus));
DEF(ReplicationControllerSpec, I32K(1, "replicas"), I32(4, "minReadySeconds"), MSSA(2, "selector"),
    M(3, "template", PodTemplateSpec));
DEF(ReplicationControllerStatus, I32K(1, "replicas"), I32(2, "fullyLabeledReplicas"),
    I32(4, "readyReplicas"), I32(5, "availableReplicas"), I64(3, "observedGeneration"),
    RMK(6, "conditions", ReplicationControllerCondition, LKEY("type")));
DEF(ReplicationControllerCondition, SK(1, "type"), SK(2, "status"), TIME(3, "lastTransitionTime"),
    S(4, "reason"), S(5, "message"));

DEF(ResourceQuota, META, MV(2, "spec", ResourceQuotaSpec), MV(3, "status", ResourceQuotaStatus));
DEF(ResourceQuotaSpec, MSQ(1, "hard"), RS(2, "scopes"), M(3, "scopeSelector", ScopeSelector));
DEFA(ScopeSelector, RM(1, "matchExpressions", ScopedResourceSelectorRequirement));
DEF(ScopedResourceSelectorRequirement, SK(1, "scopeName"), SK(2, "operator"), RS(3, "values"));
DEF(ResourceQuotaStatus, MSQ(1, "hard"), MSQ(2, "used"));
DEF(LimitRange, META, MV(2, "spec", LimitRangeSpec));
DEF(LimitRangeSpec, RM(1, "limits", LimitRangeItem));
DEF(LimitRangeItem, SK(1, "type"), MSQ(2, "max"), MSQ(3, "min"), MSQ(4, "default"),
    MSQ(5, "defaultRequest"), MSQ(6, "maxLimitRequestRatio"));

DEF(PersistentVolumeClaim, META, MV(2, "spec", PersistentVolumeClaimSpec),
    MV(3, "status", PersistentVolumeClaimStatus));
DEF(PersistentVolumeClaimSpec, RS(1, "accessModes"), M(4, "selector", LabelSelector),
    MV(2, "resources", VolumeResourceRequirements), S(3, "volumeName"), SK(5, "storageClassName"),
    SK(6, "volumeMode"), M(7, "dataSource", TypedLocalObjectReference),
    M(8, "dataSourceRef", TypedObjectReference), SK(9, "volumeAttributesClassName"));
DEF(VolumeResourceRequirements, MSQ(1, "limits"), MSQ(2, "requests"));
DEFA(TypedLocalObjectReference, SK(1, "apiGroup"), SK(2, "kind"), SK(3, "name"));
DEF(TypedObjectReference, SK(1, "apiGroup"), SK(2, "kind"), SK(3, "name"), SK(4, "namespace"));
DEF(PersistentVolumeClaimStatus, S(1, "phase"), RS(2, "accessModes"), MSQ(3, "capacity"),
    RMK(4, "conditions", PersistentVolumeClaimCondition, LKEY("type")),
    MSQ(5, "allocatedResources"), MSS(7, "allocatedResourceStatuses"),
    SK(8, "currentVolumeAttributesClassName"), M(9, "modifyVolumeStatus", ModifyVolumeStatus));
DEF(PersistentVolumeClaimCondition, SK(1, "type"), SK(2, "status"), TIME(3, "lastProbeTime"),
    TIME(4, "lastTransitionTime"), S(5, "reason"), S(6, "message"));
DEF(ModifyVolumeStatus, S(1, "targetVolumeAttributesClassName"), SK(2, "status"));

DEF(Node, META, MV(2, "spec", NodeSpec), MV(3, "status", NodeStatus));
DEF(NodeSpec, S(1, "podCIDR"), RSS(7, "podCIDRs"), S(3, "providerID"), B(4, "unschedulable"),
    RM(5, "taints", Taint), S(2, "externalID"));
DEF(Taint, SK(1, "key"), S(2, "value"), SK(3, "effect"), TIME(4, "timeAdded"));
DEF(NodeStatus, MSQ(1, "capacity"), MSQ(2, "allocatable"), S(3, "phase"),
    RMK(4, "conditions", NodeCondition, LKEY("type")),
    RMK(5, "addresses", NodeAddress, LKEY("type")), MV(6, "daemonEndpoints", NodeDaemonEndpoints),
    MV(7, "nodeInfo", NodeSystemInfo), RM(8, "images", ContainerImage), RS(9, "volumesInUse"),
    RM(10, "volumesAttached", AttachedVolume), RM(12, "runtimeHandlers", NodeRuntimeHandler),
    M(13, "features", NodeFeatures), RS(14, "declaredFeatures"));
DEF(NodeCondition, SK(1, "type"), SK(2, "status"), TIME(3, "lastHeartbeatTime"),
    TIME(4, "lastTransitionTime"), S(5, "reason"), S(6, "message"));
DEF(NodeAddress, SK(1, "type"), SK(2, "address"));
DEF(NodeDaemonEndpoints, MV(1, "kubeletEndpoint", DaemonEndpoint));
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

DEF(Event, META, MV(2, "involvedObject", ObjectReference), S(3, "reason"), S(4, "message"),
    MV(5, "source", EventSource), TIME(6, "firstTimestamp"), TIME(7, "lastTimestamp"),
    I32(8, "count"), S(9, "type"), MTIME(10, "eventTime"), M(11, "series", EventSeries),
    S(12, "action"), M(13, "related", ObjectReference), SK(14, "reportingComponent"),
    SK(15, "reportingInstance"));
DEF(EventSource, S(1, "component"), S(2, "host"));
DEF(EventSeries, I32(1, "count"), MTIME(2, "lastObservedTime"));
DEF(Binding, META, MV(2, "target", ObjectReference));

/* ---- k8s.io/api/apps/v1 ---- */
#undef SCH_PKG
#define SCH_PKG "io.k8s.api.apps.v1"
DEF(Deployment, META, MV(2, "spec", DeploymentSpec), MV(3, "status", DeploymentStatus));
DEF(DeploymentSpec, I32K(1, "replicas"), M(2, "selector", LabelSelector),
    MV(3, "template", PodTemplateSpec), MV(4, "strategy", DeploymentStrategy),
    I32(5, "minReadySeconds"), I32K(6, "revisionHistoryLimit"), B(7, "paused"),
    I32K(9, "progressDeadlineSeconds"));
DEF(DeploymentStrategy, S(1, "type"), M(2, "rollingUpdate", RollingUpdateDeployment));
DEF(RollingUpdateDeployment, IOS(1, "maxUnavailable"), IOS(2, "maxSurge"));
DEF(DeploymentStatus, I64(1, "observedGeneration"), I32(2, "replicas"), I32(3, "updatedReplicas"),
    I32(7, "readyReplicas"), I32(4, "availableReplicas"), I32(5, "unavailableReplicas"),
    RMK(6, "conditions", DeploymentCondition, LKEY("type")), I32K(8, "collisionCount"));
DEF(DeploymentCondition, SK(1, "type"), SK(2, "status"), TIME(6, "lastUpdateTime"),
    TIME(7, "lastTransitionTime"), S(4, "reason"), S(5, "message"));
DEF(ReplicaSet, META, MV(2, "spec", ReplicaSetSpec), MV(3, "status", ReplicaSetStatus));
DEF(ReplicaSetSpec, I32K(1, "replicas"), I32(4, "minReadySeconds"), M(2, "selector", LabelSelector),
    MV(3, "template", PodTemplateSpec));
DEF(ReplicaSetStatus, I32K(1, "replicas"), I32(2, "fullyLabeledReplicas"), I32(4, "readyReplicas"),
    I32(5, "availableReplicas"), I64(3, "observedGeneration"),
    RMK(6, "conditions", ReplicaSetCondition, LKEY("type")));
DEF(ReplicaSetCondition, SK(1, "type"), SK(2, "status"), TIME(3, "lastTransitionTime"),
    S(4, "reason"), S(5, "message"));
DEF(StatefulSet, META, M(2, "spec", StatefulSetSpec), M(3, "status", StatefulSetStatus));
DEF(StatefulSetSpec, I32K(1, "replicas"), M(2, "selector", LabelSelector),
    M(3, "template", PodTemplateSpec), RM(4, "volumeClaimTemplates", PersistentVolumeClaim),
    S(5, "serviceName"), S(6, "podManagementPolicy"),
    M(7, "updateStrategy", StatefulSetUpdateStrategy), I32K(8, "revisionHistoryLimit"),
    I32(9, "minReadySeconds"),
    M(10, "persistentVolumeClaimRetentionPolicy", StatefulSetPersistentVolumeClaimRetentionPolicy),
    M(11, "ordinals", StatefulSetOrdinals));
DEF(StatefulSetUpdateStrategy, S(1, "type"),
    M(2, "rollingUpdate", RollingUpdateStatefulSetStrategy));
DEF(RollingUpdateStatefulSetStrategy, I32K(1, "partition"), IOS(2, "maxUnavailable"));
DEF(StatefulSetPersistentVolumeClaimRetentionPolicy, S(1, "whenDeleted"), S(2, "whenScaled"));
DEF(StatefulSetOrdinals, I32K(1, "start"));
DEF(StatefulSetStatus, I64(1, "observedGeneration"), I32K(2, "replicas"), I32(3, "readyReplicas"),
    I32(4, "currentReplicas"), I32(5, "updatedReplicas"), S(6, "currentRevision"),
    S(7, "updateRevision"), I32K(9, "collisionCount"), RM(10, "conditions", StatefulSetCondition),
    I32(11, "availableReplicas"));
DEF(StatefulSetCondition, SK(1, "type"), SK(2, "status"), TIME(3, "lastTransitionTime"),
    S(4, "reason"), S(5, "message"));
DEF(DaemonSet, META, M(2, "spec", DaemonSetSpec), M(3, "status", DaemonSetStatus));
DEF(DaemonSetSpec, M(1, "selector", LabelSelector), M(2, "template", PodTemplateSpec),
    M(3, "updateStrategy", DaemonSetUpdateStrategy), I32(4, "minReadySeconds"),
    I32K(6, "revisionHistoryLimit"));
DEF(DaemonSetUpdateStrategy, S(1, "type"), M(2, "rollingUpdate", RollingUpdateDaemonSet));
DEF(RollingUpdateDaemonSet, IOS(1, "maxUnavailable"), IOS(2, "maxSurge"));
DEF(DaemonSetStatus, I32K(1, "currentNumberScheduled"), I32K(2, "numberMisscheduled"),
    I32K(3, "desiredNumberScheduled"), I32K(4, "numberReady"), I64(5, "observedGeneration"),
    I32(6, "updatedNumberScheduled"), I32(7, "numberAvailable"), I32(8, "numberUnavailable"),
    I32K(9, "collisionCount"), RM(10, "conditions", DaemonSetCondition));
DEF(DaemonSetCondition, SK(1, "type"), SK(2, "status"), TIME(3, "lastTransitionTime"),
    S(4, "reason"), S(5, "message"));

/* ---- k8s.io/api/batch/v1 ---- */
#undef SCH_PKG
#define SCH_PKG "io.k8s.api.batch.v1"
DEF(Job, META, M(2, "spec", JobSpec), M(3, "status", JobStatus));
DEF(JobSpec, I32K(1, "parallelism"), I32K(2, "completions"), I64K(3, "activeDeadlineSeconds"),
    M(11, "podFailurePolicy", PodFailurePolicy), M(16, "successPolicy", SuccessPolicy),
    I32K(7, "backoffLimit"), I32K(12, "backoffLimitPerIndex"), I32K(13, "maxFailedIndexes"),
    M(4, "selector", LabelSelector), BK(5, "manualSelector"), M(6, "template", PodTemplateSpec),
    I32K(8, "ttlSecondsAfterFinished"), SK(9, "completionMode"), BK(10, "suspend"),
    SK(14, "podReplacementPolicy"), SK(15, "managedBy"));
DEF(PodFailurePolicy, RM(1, "rules", PodFailurePolicyRule));
DEF(PodFailurePolicyRule, S(1, "action"),
    M(2, "onExitCodes", PodFailurePolicyOnExitCodesRequirement),
    RM(3, "onPodConditions", PodFailurePolicyOnPodConditionsPattern));
DEF(PodFailurePolicyOnExitCodesRequirement, SK(1, "containerName"), S(2, "operator"),
    RI32(3, "values"));
DEF(PodFailurePolicyOnPodConditionsPattern, S(1, "type"), S(2, "status"));
DEF(SuccessPolicy, RM(1, "rules", SuccessPolicyRule));
DEF(SuccessPolicyRule, SK(1, "succeededIndexes"), I32K(2, "succeededCount"));
DEF(JobStatus, RM(1, "conditions", JobCondition), TIME(2, "startTime"), TIME(3, "completionTime"),
    I32(4, "active"), I32(5, "succeeded"), I32(6, "failed"), I32K(11, "terminating"),
    SK(7, "completedIndexes"), SK(10, "failedIndexes"),
    M(8, "uncountedTerminatedPods", UncountedTerminatedPods), I32K(9, "ready"));
DEF(JobCondition, SK(1, "type"), SK(2, "status"), TIME(3, "lastProbeTime"),
    TIME(4, "lastTransitionTime"), S(5, "reason"), S(6, "message"));
DEF(UncountedTerminatedPods, RS(1, "succeeded"), RS(2, "failed"));
DEF(CronJob, META, M(2, "spec", CronJobSpec), M(3, "status", CronJobStatus));
DEF(CronJobSpec, S(1, "schedule"), SK(8, "timeZone"), I64K(2, "startingDeadlineSeconds"),
    S(3, "concurrencyPolicy"), BK(4, "suspend"), M(5, "jobTemplate", JobTemplateSpec),
    I32K(6, "successfulJobsHistoryLimit"), I32K(7, "failedJobsHistoryLimit"));
DEF(JobTemplateSpec, META, M(2, "spec", JobSpec));
DEF(CronJobStatus, RM(1, "active", ObjectReference), TIME(4, "lastScheduleTime"),
    TIME(5, "lastSuccessfulTime"));

/* ---- scheduling.k8s.io/v1, storage.k8s.io/v1, autoscaling/v1, policy/v1 ---- */
#undef SCH_PKG
#define SCH_PKG "io.k8s.api.scheduling.v1"
DEF(PriorityClass, META, I32K(2, "value"), B(3, "globalDefault"), S(4, "description"),
    SK(5, "preemptionPolicy"));
#undef SCH_PKG
#define SCH_PKG "io.k8s.api.storage.v1"
DEF(StorageClass, META, SK(2, "provisioner"), MSS(3, "parameters"), SK(4, "reclaimPolicy"),
    RS(5, "mountOptions"), BK(6, "allowVolumeExpansion"), SK(7, "volumeBindingMode"),
    RM(8, "allowedTopologies", TopologySelectorTerm));
#undef SCH_PKG
#define SCH_PKG "io.k8s.api.core.v1"
DEFA(TopologySelectorTerm, RM(1, "matchLabelExpressions", TopologySelectorLabelRequirement));
DEF(TopologySelectorLabelRequirement, SK(1, "key"), RS(2, "values"));
#undef SCH_PKG
#define SCH_PKG "io.k8s.api.autoscaling.v1"
DEF(Scale, META, MV(2, "spec", ScaleSpec), MV(3, "status", ScaleStatus));
DEF(ScaleSpec, I32(1, "replicas"));
DEF(ScaleStatus, I32K(1, "replicas"), S(2, "selector"));
#undef SCH_PKG
#define SCH_PKG "io.k8s.api.policy.v1"
DEF(Eviction, META, M(2, "deleteOptions", DeleteOptions));

/* ---- authentication.k8s.io/v1 ---- */
#undef SCH_PKG
#define SCH_PKG "io.k8s.api.authentication.v1"
DEF(TokenRequest, META, M(2, "spec", TokenRequestSpec), M(3, "status", TokenRequestStatus));
DEF(TokenRequestSpec, RS(1, "audiences"), I64K(4, "expirationSeconds"),
    M(3, "boundObjectRef", BoundObjectReference));
DEF(BoundObjectReference, S(1, "kind"), S(2, "apiVersion"), S(3, "name"), S(4, "uid"));
DEF(TokenRequestStatus, SK(1, "token"), TIME(2, "expirationTimestamp"));

/* ---- capsule.clastix.io/v1beta2 (Capsule's CRDs, api/v1beta2/resourcepool*.go) ----
 * Custom resources have no protobuf encoding: the field numbers below are
 * only sequential, never on any wire (protobuf.c refuses these kinds). The
 * JSON names, and which fields keep a zero value, follow Capsule's Go types:
 * the config flags are *bool, a claim's pool has no omitempty. */
#undef SCH_PKG
#define SCH_PKG "io.clastix.capsule.v1beta2"
DEF(ResourcePool, META, M(2, "spec", ResourcePoolSpec), M(3, "status", ResourcePoolStatus));
DEF(ResourcePoolSpec, RM(1, "selectors", LabelSelector), M(2, "quota", ResourceQuotaSpec),
    MSQ(3, "defaults"), M(4, "config", ResourcePoolSpecConfiguration));
DEF(ResourcePoolSpecConfiguration, BK(1, "defaultsZero"), BK(2, "orderedQueue"),
    BK(3, "deleteBoundResources"));
DEF(ResourcePoolStatus, I64(1, "observedGeneration"), I64(2, "namespaceCount"), RS(3, "namespaces"),
    I64(4, "claimCount"), MSML(5, "claims", ResourcePoolClaimsItem),
    M(6, "allocation", ResourcePoolQuotaStatus), MSM(7, "exhaustions", PoolExhaustionResource),
    RM(8, "conditions", Condition));
DEF(ResourcePoolClaimsItem, S(1, "uid"), S(2, "name"), S(3, "namespace"), MSQ(4, "claims"));
DEF(ResourcePoolQuotaStatus, MSQ(1, "hard"), MSQ(2, "used"), MSQ(3, "available"));
DEF(PoolExhaustionResource, QTY(1, "available"), QTY(2, "requesting"));
DEF(ResourcePoolClaim, META, M(2, "spec", ResourcePoolClaimSpec),
    M(3, "status", ResourcePoolClaimStatus));
DEF(ResourcePoolClaimSpec, SK(1, "pool"), MSQ(2, "claim"));
DEF(ResourcePoolClaimStatus, I64(1, "observedGeneration"), M(2, "pool", StatusNameUID),
    M(3, "condition", Condition), RM(4, "conditions", Condition),
    M(5, "allocation", ResourcePoolQuotaStatus), TIME(6, "releasedAt"));
DEF(StatusNameUID, S(1, "name"), S(2, "namespace"), S(3, "uid"));

/* Capsule's custom quotas (api/v1beta2/customquota_*.go, globalcustomquota_*.go,
 * pkg/runtime/selectors). A source's group and version are allot's: seed 003
 * writes sources that way besides Capsule's apiVersion (api/custom_quota_kinds.h).
 * The global kinds inline the CustomQuota spec and status, a selector inlines
 * a label selector, as Capsule's Go types do; a source's two inlined Go
 * structs (VersionKind, the source config) are one message here. */
DEF(CustomQuota, META, M(2, "spec", CustomQuotaSpec), M(3, "status", CustomQuotaStatus));
DEF(CustomQuotaSpec, RM(1, "scopeSelectors", LabelSelector), QTY(2, "limit"),
    RM(3, "sources", CustomQuotaSpecSource), M(4, "options", CustomQuotaOptionsSpec));
DEF(CustomQuotaOptionsSpec, BK(1, "emitMetricPerClaimUsage"));
DEF(CustomQuotaSpecSource, SK(1, "kind"), S(2, "apiVersion"), SK(3, "group"), S(4, "version"),
    S(5, "path"), S(6, "cel"), S(7, "op"), RM(8, "selectors", SelectorWithFields));
DEF(SelectorWithFields, INL(1, LabelSelector), RS(2, "fieldSelectors"), RS(3, "celExpressions"));
DEF(CustomQuotaStatus, I64(1, "observedGeneration"), M(2, "usage", CustomQuotaUsage),
    RM(3, "claims", CustomQuotaClaim), RM(4, "targets", CustomQuotaTarget),
    RM(5, "conditions", Condition), RM(6, "reservations", CustomQuotaReservation),
    MSS(7, "countedThrough"));
DEF(CustomQuotaReservation, SK(1, "uid"), S(2, "namespace"), SK(3, "name"), SK(4, "resource"),
    S(5, "from"), QTY(6, "usage"), I64(7, "expires"));
DEF(CustomQuotaUsage, QTY(1, "used"), QTY(2, "available"));
DEF(CustomQuotaClaim, SK(1, "group"), SK(2, "version"), SK(3, "kind"), SK(4, "name"),
    S(5, "namespace"), SK(6, "uid"), QTY(7, "usage"));
DEF(CustomQuotaTarget, SK(1, "group"), SK(2, "version"), SK(3, "kind"), S(4, "path"), S(5, "cel"),
    S(6, "op"), RM(7, "selectors", SelectorWithFields), S(8, "scope"));
DEF(GlobalCustomQuota, META, M(2, "spec", GlobalCustomQuotaSpec),
    M(3, "status", GlobalCustomQuotaStatus));
DEF(GlobalCustomQuotaSpec, INL(1, CustomQuotaSpec), RM(2, "namespaceSelectors", NamespaceSelector));
DEF(NamespaceSelector, INL(1, LabelSelector));
DEF(GlobalCustomQuotaStatus, INL(1, CustomQuotaStatus), RS(2, "namespaces"));

/* ---- k8s.io/api/rbac/v1 (generated.proto) ---- */
#undef SCH_PKG
#define SCH_PKG "io.k8s.api.rbac.v1"
DEF(Role, META, RM(2, "rules", PolicyRule));
DEF(ClusterRole, META, RM(2, "rules", PolicyRule), M(3, "aggregationRule", AggregationRule));
DEF(PolicyRule, RS(1, "verbs"), RS(2, "apiGroups"), RS(3, "resources"), RS(4, "resourceNames"),
    RS(5, "nonResourceURLs"));
DEF(AggregationRule, RM(1, "clusterRoleSelectors", LabelSelector));
DEF(RoleBinding, META, RM(2, "subjects", Subject), MV(3, "roleRef", RoleRef));
DEF(ClusterRoleBinding, META, RM(2, "subjects", Subject), MV(3, "roleRef", RoleRef));
DEF(Subject, SK(1, "kind"), S(2, "apiGroup"), SK(3, "name"), S(4, "namespace"));
DEF(RoleRef, SK(1, "apiGroup"), SK(2, "kind"), SK(3, "name"));

/* The review APIs (authorization.k8s.io/v1, authentication.k8s.io/v1): only
 * decoded from requests (kubectl auth can-i, can-i --list, whoami), never
 * stored. Statuses are the server's, so a request's status is not read. */
DEF(SelfSubjectAccessReview, META, M(2, "spec", SelfSubjectAccessReviewSpec),
    M(3, "status", SubjectAccessReviewStatus));
DEF(SelfSubjectAccessReviewSpec, M(1, "resourceAttributes", ResourceAttributes),
    M(2, "nonResourceAttributes", NonResourceAttributes));
DEF(ResourceAttributes, S(1, "namespace"), S(2, "verb"), S(3, "group"), S(4, "version"),
    S(5, "resource"), S(6, "subresource"), S(7, "name"));
DEF(NonResourceAttributes, S(1, "path"), S(2, "verb"));
DEF(SubjectAccessReviewStatus, BK(1, "allowed"), S(2, "reason"), S(3, "evaluationError"),
    B(4, "denied"));
DEF(SubjectAccessReview, META, M(2, "spec", SubjectAccessReviewSpec),
    M(3, "status", SubjectAccessReviewStatus));
DEF(SubjectAccessReviewSpec, M(1, "resourceAttributes", ResourceAttributes),
    M(2, "nonResourceAttributes", NonResourceAttributes), S(3, "user"), RS(4, "groups"),
    S(6, "uid"));
DEF(SelfSubjectRulesReview, META, M(2, "spec", SelfSubjectRulesReviewSpec),
    M(3, "status", SubjectRulesReviewStatus));
DEF(SelfSubjectRulesReviewSpec, S(1, "namespace"));
DEF(SubjectRulesReviewStatus, RM(1, "resourceRules", ResourceRule),
    RM(2, "nonResourceRules", NonResourceRule), BK(3, "incomplete"), S(4, "evaluationError"));
DEF(ResourceRule, RS(1, "verbs"), RS(2, "apiGroups"), RS(3, "resources"), RS(4, "resourceNames"));
DEF(NonResourceRule, RS(1, "verbs"), RS(2, "nonResourceURLs"));
DEF(SelfSubjectReview, META, M(2, "status", SelfSubjectReviewStatus));
DEF(SelfSubjectReviewStatus, M(1, "userInfo", UserInfo));
DEF(UserInfo, S(1, "username"), S(2, "uid"), RS(3, "groups"));

/* ---- k8s.io/api/discovery/v1 ---- */
#undef SCH_PKG
#define SCH_PKG "io.k8s.api.discovery.v1"
DEF(EndpointSlice, META, SK(4, "addressType"), RM(2, "endpoints", Endpoint),
    RM(3, "ports", DiscoveryEndpointPort));
DEF(Endpoint, RSS(1, "addresses"), MV(2, "conditions", EndpointConditions), SK(3, "hostname"),
    M(4, "targetRef", ObjectReference), MSS(5, "deprecatedTopology"), SK(6, "nodeName"),
    SK(7, "zone"), M(8, "hints", EndpointHints));
DEF(EndpointConditions, BK(1, "ready"), BK(2, "serving"), BK(3, "terminating"));
DEF(EndpointHints, RM(1, "forZones", ForZone));
DEF(ForZone, S(1, "name"));
DEFNA(DiscoveryEndpointPort, "EndpointPort", SK(1, "name"), SK(2, "protocol"), I32K(3, "port"),
      SK(4, "appProtocol"));

/* ---- k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1 ----
 * openAPIV3Schema (JSONSchemaProps), the status subresource's empty struct
 * and a webhook's clientConfig are kept as raw JSON: the schema is checked
 * by core/jsonschema.h, not decoded as Go types. */
#undef SCH_PKG
#define SCH_PKG "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1"
DEF(CustomResourceDefinition, META, M(2, "spec", CustomResourceDefinitionSpec),
    M(3, "status", CustomResourceDefinitionStatus));
DEF(CustomResourceDefinitionSpec, S(1, "group"), M(3, "names", CustomResourceDefinitionNames),
    S(4, "scope"), RM(7, "versions", CustomResourceDefinitionVersion),
    M(9, "conversion", CustomResourceConversion), B(10, "preserveUnknownFields"));
DEF(CustomResourceDefinitionNames, S(1, "plural"), S(2, "singular"), RS(3, "shortNames"),
    S(4, "kind"), S(5, "listKind"), RS(6, "categories"));
DEF(CustomResourceDefinitionVersion, S(1, "name"), BK(2, "served"), BK(3, "storage"),
    B(7, "deprecated"), SK(8, "deprecationWarning"), M(4, "schema", CustomResourceValidation),
    M(5, "subresources", CustomResourceSubresources),
    RM(6, "additionalPrinterColumns", CustomResourceColumnDefinition),
    RM(9, "selectableFields", SelectableField));
DEF(CustomResourceValidation, RAW(1, "openAPIV3Schema"));
DEF(CustomResourceSubresources, RAW(1, "status"), M(2, "scale", CustomResourceSubresourceScale));
DEF(CustomResourceSubresourceScale, SK(1, "specReplicasPath"), SK(2, "statusReplicasPath"),
    SK(3, "labelSelectorPath"));
DEF(CustomResourceColumnDefinition, SK(1, "name"), SK(2, "type"), S(3, "format"),
    S(4, "description"), I32(5, "priority"), SK(6, "jsonPath"));
DEF(SelectableField, SK(1, "jsonPath"));
DEF(CustomResourceConversion, SK(1, "strategy"), M(2, "webhook", WebhookConversion));
DEF(WebhookConversion, RAW(2, "clientConfig"), RS(3, "conversionReviewVersions"));
DEF(CustomResourceDefinitionStatus, RM(1, "conditions", CustomResourceDefinitionCondition),
    M(2, "acceptedNames", CustomResourceDefinitionNames), RS(3, "storedVersions"));
DEF(CustomResourceDefinitionCondition, SK(1, "type"), SK(2, "status"),
    TIME(3, "lastTransitionTime"), S(4, "reason"), S(5, "message"));

/* Top-level kinds. A NULL apiVersion matches any: DeleteOptions and Status
 * are registered in every group version upstream. */
static const struct {
    const char *api_version;
    const char *kind;
    const sch_msg *msg;
} kinds[] = {
    {"v1", "Namespace", &m_Namespace},
    {"v1", "ConfigMap", &m_ConfigMap},
    {"v1", "Secret", &m_Secret},
    {"v1", "Service", &m_Service},
    {"v1", "Endpoints", &m_Endpoints},
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
    {"apps/v1", "StatefulSet", &m_StatefulSet},
    {"apps/v1", "DaemonSet", &m_DaemonSet},
    {"batch/v1", "Job", &m_Job},
    {"batch/v1", "CronJob", &m_CronJob},
    {"scheduling.k8s.io/v1", "PriorityClass", &m_PriorityClass},
    {"storage.k8s.io/v1", "StorageClass", &m_StorageClass},
    {"autoscaling/v1", "Scale", &m_Scale},
    {"policy/v1", "Eviction", &m_Eviction},
    {"authentication.k8s.io/v1", "TokenRequest", &m_TokenRequest},
    {"capsule.clastix.io/v1beta2", "ResourcePool", &m_ResourcePool},
    {"capsule.clastix.io/v1beta2", "ResourcePoolClaim", &m_ResourcePoolClaim},
    {"capsule.clastix.io/v1beta2", "CustomQuota", &m_CustomQuota},
    {"capsule.clastix.io/v1beta2", "GlobalCustomQuota", &m_GlobalCustomQuota},
    {"discovery.k8s.io/v1", "EndpointSlice", &m_EndpointSlice},
    {"rbac.authorization.k8s.io/v1", "Role", &m_Role},
    {"rbac.authorization.k8s.io/v1", "ClusterRole", &m_ClusterRole},
    {"rbac.authorization.k8s.io/v1", "RoleBinding", &m_RoleBinding},
    {"rbac.authorization.k8s.io/v1", "ClusterRoleBinding", &m_ClusterRoleBinding},
    {"authorization.k8s.io/v1", "SelfSubjectAccessReview", &m_SelfSubjectAccessReview},
    {"authorization.k8s.io/v1", "SubjectAccessReview", &m_SubjectAccessReview},
    {"authorization.k8s.io/v1", "SelfSubjectRulesReview", &m_SelfSubjectRulesReview},
    {"authentication.k8s.io/v1", "SelfSubjectReview", &m_SelfSubjectReview},
    {"apiextensions.k8s.io/v1", "CustomResourceDefinition", &m_CustomResourceDefinition},
    {NULL, "DeleteOptions", &m_DeleteOptions},
    {NULL, "Status", &m_Status},
};

const sch_msg *sch_kind(const char *api_version, const char *kind)
{
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        if (strcmp(kinds[i].kind, kind) != 0) continue;
        if (!kinds[i].api_version || strcmp(kinds[i].api_version, api_version) == 0)
            return kinds[i].msg;
    }
    return NULL;
}

const sch_field *sch_field_find(const sch_msg *m, const char *json)
{
    for (size_t i = 0; i < m->n; i++) {
        const sch_field *f = &m->fields[i];
        if (f->type == SCH_INLINE) {
            const sch_field *in = sch_field_find(f->msg, json);
            if (in) return in;
        } else if (strcmp(f->json, json) == 0) {
            return f;
        }
    }
    return NULL;
}

/* The Go package alias of a message: the last part of its package ("v1"). */
static const char *go_pkg(const sch_msg *m)
{
    const char *dot = strrchr(m->pkg, '.');
    return dot ? dot + 1 : m->pkg;
}

static const char *scalar_go_type(int type)
{
    switch (type) {
    case SCH_STRING:
        return "string";
    case SCH_BYTES:
        return "[]uint8";
    case SCH_BOOL:
        return "bool";
    case SCH_INT32:
        return "int32";
    case SCH_INT64:
        return "int64";
    case SCH_MAP_SS:
        return "map[string]string";
    case SCH_MAP_SB:
        return "map[string][]uint8";
    case SCH_MAP_SQ:
        return "v1.ResourceList";
    case SCH_QUANTITY:
        return "resource.Quantity";
    case SCH_INTORSTR:
        return "intstr.IntOrString";
    case SCH_TIME:
        return "v1.Time";
    case SCH_MICROTIME:
        return "v1.MicroTime";
    default:
        return "json.RawMessage";
    }
}

void sch_go_type(const sch_field *f, bool elem, char *buf, size_t n)
{
    bool rep = (f->flags & SCH_REP) && !elem;
    if (elem && (f->type == SCH_MAP_SS)) {
        snprintf(buf, n, "string");
    } else if (elem && f->type == SCH_MAP_SB) {
        snprintf(buf, n, "[]uint8");
    } else if (elem && f->type == SCH_MAP_SQ) {
        snprintf(buf, n, "resource.Quantity");
    } else if (f->type == SCH_MAP_SM) {
        snprintf(buf, n, "%s%s%s.%s", elem ? "" : "map[string]", f->flags & SCH_VREP ? "[]" : "",
                 go_pkg(f->msg), f->msg->name);
    } else if (f->type == SCH_MSG || f->type == SCH_INLINE) {
        snprintf(buf, n, "%s%s.%s", rep ? "[]" : "", go_pkg(f->msg), f->msg->name);
    } else {
        snprintf(buf, n, "%s%s", rep ? "[]" : "", scalar_go_type(f->type));
    }
}

#define MAX_MSGS 512
static const sch_msg *all[MAX_MSGS];
static size_t nall;
static pthread_once_t all_once = PTHREAD_ONCE_INIT;

static void collect(const sch_msg *m)
{
    for (size_t i = 0; i < nall; i++)
        if (all[i] == m) return;
    if (nall == MAX_MSGS) return;
    all[nall++] = m;
    for (size_t i = 0; i < m->n; i++)
        if (m->fields[i].msg) collect(m->fields[i].msg);
}

static void collect_all(void)
{
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        collect(kinds[i].msg);
}

size_t sch_all_msgs(const sch_msg *const **out)
{
    pthread_once(&all_once, collect_all);
    *out = all;
    return nall;
}
