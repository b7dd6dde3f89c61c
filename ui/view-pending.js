// view-pending.js - pods waiting on a ResourceQuota (deferred quota), and
// per quota the pending demand: what its waiting pods would add to the
// resources the quota limits.

import { h, replaceChildren, age } from './dom.js';
import { pendingQuotaName, unschedulable, podDemand, quotaResources } from './k8s.js';
import { formatQuantity, parseQuantity } from './quantity.js';
import { meter, collectionNote, table } from './widgets.js';

/** Groups pending pods by "namespace/quota". */
export function pendingByQuota(pods) {
  const groups = new Map();
  for (const pod of pods.values()) {
    const key = `${pod.metadata.namespace}/${pendingQuotaName(pod) || '?'}`;
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(pod);
  }
  return groups;
}

function demandRow(key, pods, quotas) {
  const [namespace, name] = key.split('/');
  const quota = quotas?.items.get(key);
  const resources = quota ? quotaResources(quota) : [];
  const meters = resources.map((r) => {
    const demand = pods.reduce((sum, pod) => sum + podDemand(pod, r.name), 0);
    const hard = parseQuantity(r.hard);
    const extra = Number.isFinite(demand) && hard > 0 ? demand / hard : 0;
    return h('div', { class: 'demand', 'data-testid': 'demand', 'data-resource': r.name },
      meter(r, { extra }),
      h('span', { class: 'small', 'data-testid': 'demand-value' },
        Number.isNaN(demand) ? 'demand unknown' : `+${formatQuantity(demand, r.name)} pending`));
  });
  return h('tr', { 'data-testid': 'demand-row', 'data-namespace': namespace, 'data-quota': name },
    h('td', null, namespace),
    h('th', { scope: 'row' }, name),
    h('td', { class: 'num' }, String(pods.length)),
    h('td', null, h('div', { class: 'meters' }, meters.length ? meters
      : h('span', { class: 'muted small' }, quota ? 'no limits' : 'quota not found'))));
}

function podRow(pod) {
  const md = pod.metadata;
  const cond = unschedulable(pod);
  return h('tr', { 'data-testid': 'pending-row', 'data-namespace': md.namespace, 'data-pod': md.name },
    h('td', { class: 'nowrap' }, md.namespace),
    h('th', { scope: 'row', class: 'nowrap' }, md.name),
    h('td', { 'data-testid': 'pending-quota', class: 'nowrap' }, pendingQuotaName(pod) || '?'),
    h('td', { class: 'message', 'data-testid': 'pending-reason' },
      h('span', { class: 'tag warn' }, cond?.reason ?? 'Pending'), ' ', cond?.message ?? ''),
    h('td', { class: 'num', 'data-age': md.creationTimestamp ?? '' }, age(md.creationTimestamp)));
}

export function createPendingView(root, ctx) {
  const body = h('div');
  replaceChildren(root, body);

  function render() {
    const pods = ctx.collection('pending');
    const blocked = collectionNote(pods, 'Pending pods');
    if (blocked) return replaceChildren(body, blocked);
    const quotas = ctx.collection('quotas');
    const groups = [...pendingByQuota(pods.items)].sort((a, b) => (a[0] < b[0] ? -1 : 1));
    const list = [...pods.items.values()].sort(
      (a, b) => (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? ''));
    replaceChildren(body,
      pods.degraded ? h('p', { class: 'note small', 'data-testid': 'pending-fallback' },
        'This server has no status.pendingOnQuota field selector: pending pods are found by watching ' +
        'Pending pods and reading their PodScheduled condition.') : null,
      h('h2', null, 'Pending demand per quota'),
      groups.length
        ? table('demand-table', ['Namespace', 'Quota', 'Pods', 'Used / hard, with the waiting pods\u2019 requests hatched'],
          groups.map(([key, list]) => demandRow(key, list, quotas)))
        : h('p', { class: 'muted', 'data-testid': 'pending-empty' }, 'No pod is waiting on a quota.'),
      h('h2', null, 'Pods pending on quota'),
      list.length
        ? table('pending-table', ['Namespace', 'Pod', 'Quota', 'Reason', 'Age'], list.map(podRow))
        : h('p', { class: 'muted small' },
          'Pods wait here when allotd runs with --feature-gates=DeferredResourceQuota=true and a pod ' +
          'would exceed a cpu or memory quota.'));
  }

  /** Ages tick without a re-render: only the age cells' text changes. */
  function tick() {
    const now = Date.now();
    for (const cell of body.querySelectorAll('[data-age]')) cell.textContent = age(cell.dataset.age, now);
  }

  return { needs: [], reads: ['pending', 'quotas'], render, tick };
}
