// k8s.js - reading the objects the dashboard shows: which quota a pod waits
// on, what it asks for, a quota's resources with their usage ratios.

import { parseQuantity, usageRatio } from './quantity.js';

// allotd's deferred-quota message: "0/N nodes are available: quota exceeded:
// <quota>, requested: ..."; the quota name is what follows "quota exceeded: ".
const QUOTA_EXCEEDED = /quota exceeded: ([^,\s]+)/;

/** The pod's PodScheduled=False condition, or undefined. */
export function unschedulable(pod) {
  return (pod?.status?.conditions ?? []).find(
    (c) => c.type === 'PodScheduled' && c.status === 'False' && c.reason === 'Unschedulable',
  );
}

/** The name of the ResourceQuota a pod waits on, or '' if it waits on none. */
export function pendingQuotaName(pod) {
  if (pod?.spec?.nodeName || pod?.status?.phase !== 'Pending') return '';
  const match = QUOTA_EXCEEDED.exec(unschedulable(pod)?.message ?? '');
  return match ? match[1] : '';
}

/**
 * What the quota check said, without the scheduler's framing: "requested:
 * requests.cpu=4, used: requests.cpu=6, limited: requests.cpu=8".
 */
export function pendingDetail(pod) {
  const match = /quota exceeded: [^,]+, (.*?)(?:\. preemption:.*)?$/s.exec(unschedulable(pod)?.message ?? '');
  return match ? match[1] : '';
}

// Which container request a quota resource is charged from; `pods` and
// `count/pods` count the pod itself.
const REQUEST_OF = {
  cpu: 'requests.cpu',
  memory: 'requests.memory',
  'ephemeral-storage': 'requests.ephemeral-storage',
};

/**
 * A pod's demand for one quota resource name, as a number, or NaN when the
 * dashboard does not know how the resource is charged. As upstream, the pod
 * asks for the larger of its containers' sum and its largest init container
 * (restartable init containers, i.e. sidecars, are simplified to count as
 * plain init containers); pod overhead is not added.
 */
export function podDemand(pod, resource) {
  if (resource === 'pods' || resource === 'count/pods') return 1;
  const key = REQUEST_OF[resource] ?? resource;
  const [kind, name] = key.split(/\.(.*)/s);
  if ((kind !== 'requests' && kind !== 'limits') || !name) return NaN;
  const amount = (c) => parseQuantity(c?.resources?.[kind]?.[name] ?? '0') || 0;
  const containers = (pod?.spec?.containers ?? []).reduce((sum, c) => sum + amount(c), 0);
  const init = Math.max(0, ...(pod?.spec?.initContainers ?? []).map(amount));
  return Math.max(containers, init);
}

/** A quota's resources, sorted by name: {name, used, hard, ratio}. */
export function quotaResources(quota) {
  const hard = quota?.status?.hard ?? quota?.spec?.hard ?? {};
  const used = quota?.status?.used ?? {};
  return Object.keys(hard)
    .sort()
    .map((name) => ({
      name,
      hard: hard[name],
      used: used[name],
      ratio: usageRatio(used[name] ?? '0', hard[name]),
    }));
}

/** The highest finite-or-infinite ratio of a list of resources, -1 when none. */
export function maxRatio(resources) {
  let max = -1;
  for (const r of resources) if (!Number.isNaN(r.ratio) && r.ratio > max) max = r.ratio;
  return max;
}

/** The pool a ResourceQuota belongs to (the capsule-pool-<pool> quotas pools write), or ''. */
export function quotaPool(quota) {
  return quota?.metadata?.labels?.['projectcapsule.dev/pool'] ?? '';
}

/** The condition of the given type, or undefined. */
export function condition(obj, type) {
  return (obj?.status?.conditions ?? []).find((c) => c.type === type);
}

// A QuotaReview's status (allot.dev/v1, docs/explain.md). `allowed` says
// whether the write would be admitted, not whether it would run: under
// deferred quota an admitted pod may wait Pending on a quota, and a claim is
// always created but may wait in its pool's queue. The quota entries' outcome
// says which.
const WOULD_WAIT = 'would wait Pending: ';
const QUEUED = 'Queued: ';

/**
 * One quota entry's part in the decision: {state, label, detail}, state one
 * of 'denies', 'holds' (the pod would wait Pending on it), 'queues' (the
 * claim would wait in the pool's queue), 'binds' (the claim binds), 'allows'.
 */
export function reviewEntry(q) {
  const outcome = q?.outcome ?? '';
  if (q?.allowed === false) return { state: 'denies', label: 'denies', detail: q.message ?? '' };
  if (outcome.startsWith(WOULD_WAIT)) {
    return { state: 'holds', label: 'pod would wait Pending', detail: outcome.slice(WOULD_WAIT.length) };
  }
  if (outcome.startsWith(QUEUED)) return { state: 'queues', label: 'claim would queue', detail: outcome.slice(QUEUED.length) };
  if (outcome === 'Bound') return { state: 'binds', label: 'claim binds', detail: '' };
  return { state: 'allows', label: 'allows', detail: '' };
}

const ENTRY_ORDER = { denies: 0, holds: 1, queues: 2, binds: 3, allows: 4 };

/** The entries in the order that answers "why not?": those that deny, then those that hold or queue. */
export function reviewEntriesInOrder(status) {
  return [...(status?.quotas ?? [])]
    .map((q, i) => ({ q, i, st: reviewEntry(q) }))
    .sort((a, b) => ENTRY_ORDER[a.st.state] - ENTRY_ORDER[b.st.state] || a.i - b.i)
    .map(({ q }) => q);
}

const where = (q) => `${q.kind} ${q.namespace ? q.namespace + '/' : ''}${q.name}`;

/**
 * The review's verdict: {verdict, title, detail, by}. verdict is 'denied'
 * (the write would be refused: detail is the server's exact message),
 * 'pending' (admitted, but the pod would wait Pending: `by` names the quota
 * that holds it), 'queued' (the claim would be created and wait in the pool's
 * queue) or 'allowed'.
 */
export function reviewVerdict(status) {
  if (!status?.allowed) {
    const code = status?.code ? ` (${status.code}${status.reason ? ' ' + status.reason : ''})` : '';
    return { verdict: 'denied', title: 'Denied' + code, detail: status?.message ?? '', by: '' };
  }
  const quotas = status.quotas ?? [];
  const held = quotas.find((q) => reviewEntry(q).state === 'holds');
  if (held) {
    return {
      verdict: 'pending', title: 'Admitted, but would wait Pending',
      detail: reviewEntry(held).detail, by: where(held),
    };
  }
  const queued = quotas.find((q) => reviewEntry(q).state === 'queues');
  if (queued) {
    return {
      verdict: 'queued', title: `Created, but would wait in the queue of ${where(queued)}`,
      detail: reviewEntry(queued).detail, by: where(queued),
    };
  }
  return { verdict: 'allowed', title: 'Allowed', detail: '', by: '' };
}
