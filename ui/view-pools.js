// view-pools.js - each Capsule ResourcePool: its hard limits and allocation
// (status), the claims bound to it and the queue of claims waiting.

import { h, replaceChildren, age } from './dom.js';
import { condition } from './k8s.js';
import { usageRatio } from './quantity.js';
import { meter, collectionNote, resourceList, table } from './widgets.js';

/**
 * A claim's state. Exhausted=True: it waits in the pool's queue (reason
 * PoolExhausted or QueueExhausted, with Capsule's message). Otherwise it holds
 * its allocation ("bound"); its Bound condition then only says whether pods
 * use it (InUse) or not (Unused). No status yet: the pool has not decided.
 */
function claimState(claim) {
  const exhausted = condition(claim, 'Exhausted');
  if (exhausted?.status === 'True') {
    return { state: 'queued', label: exhausted.reason || 'queued', message: exhausted.message ?? '' };
  }
  const ready = condition(claim, 'Ready');
  if (!ready) return { state: 'pending', label: 'not decided yet', message: '' };
  if (ready.status !== 'True') return { state: 'failed', label: ready.reason, message: ready.message ?? '' };
  const bound = condition(claim, 'Bound');
  return { state: 'bound', label: bound?.status === 'True' ? 'in use' : 'unused', message: bound?.message ?? '' };
}

function selectorsText(pool) {
  const parts = [];
  for (const s of pool.spec?.selectors ?? []) {
    for (const [k, v] of Object.entries(s.matchLabels ?? {})) parts.push(`${k}=${v}`);
    for (const e of s.matchExpressions ?? []) parts.push(`${e.key} ${e.operator} ${(e.values ?? []).join(',')}`);
  }
  return parts.length ? parts.join(', ') : 'no selector';
}

const byCreation = (a, b) =>
  (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '') ||
  (a.metadata.name < b.metadata.name ? -1 : 1);

const STATE_TAG = { bound: 'ok', queued: 'warn', pending: '', failed: 'crit' };

function claimRow(claim, position) {
  const st = claimState(claim);
  const md = claim.metadata;
  return h('tr', { 'data-testid': 'claim-row', 'data-namespace': md.namespace, 'data-claim': md.name, 'data-state': st.state },
    h('td', null, md.namespace),
    h('th', { scope: 'row' }, md.name),
    h('td', null, resourceList(claim.spec?.claim)),
    h('td', null, h('span', { class: 'tag ' + STATE_TAG[st.state] }, st.state === 'queued' && position ? `queued #${position}` : st.state),
      ' ', st.label),
    h('td', { class: 'message', 'data-testid': 'claim-message' }, st.message),
    h('td', { class: 'num' }, age(md.creationTimestamp)));
}

function poolCard(pool, claims) {
  const name = pool.metadata.name;
  const alloc = pool.status?.allocation ?? {};
  const hard = alloc.hard ?? pool.spec?.quota?.hard ?? {};
  const used = alloc.used ?? {};
  const resources = Object.keys(hard).sort().map((r) => ({
    name: r, hard: hard[r], used: used[r], ratio: usageRatio(used[r] ?? '0', hard[r]),
  }));
  const others = claims.filter((c) => claimState(c).state !== 'queued').sort(byCreation);
  const queued = claims.filter((c) => claimState(c).state === 'queued').sort(byCreation); // the queue, in order
  const bound = others.filter((c) => claimState(c).state === 'bound').length;
  const exhausted = condition(pool, 'Exhausted')?.status === 'True';
  return h('article', { class: 'card', 'data-testid': 'pool', 'data-pool': name },
    h('header', null,
      h('h3', null, name),
      exhausted ? h('span', { class: 'tag crit' }, 'exhausted') : null,
      h('span', { class: 'muted small' },
        `selects ${selectorsText(pool)} · ${pool.status?.namespaceCount ?? 0} namespaces · ` +
        `${bound} bound · ${queued.length} queued`)),
    h('div', { class: 'meters' }, resources.map((r) => meter(r))),
    claims.length
      ? table('claims-table', ['Namespace', 'Claim', 'Requests', 'State', 'Message', 'Age'],
        [...others.map((c) => claimRow(c, 0)), ...queued.map((c, i) => claimRow(c, i + 1))])
      : h('p', { class: 'muted small' }, 'No claims.'));
}

export function createPoolsView(root, ctx) {
  const body = h('div');
  replaceChildren(root, body);

  function render() {
    const pools = ctx.collection('pools');
    const claims = ctx.collection('claims');
    const blocked = collectionNote(pools, 'ResourcePools');
    const claimsBlocked = collectionNote(claims, 'ResourcePoolClaims');
    const allClaims = claimsBlocked ? [] : [...claims.items.values()];
    const claimsOf = (name) => allClaims.filter((c) => c.spec?.pool === name);
    const names = new Set(blocked ? [] : [...pools.items.keys()]);
    const orphans = allClaims.filter((c) => !names.has(c.spec?.pool));
    const list = blocked ? [] : [...pools.items.values()].sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1));
    replaceChildren(body,
      blocked, claimsBlocked,
      !blocked && list.length === 0 ? h('p', { class: 'muted', 'data-testid': 'pools-empty' }, 'No ResourcePools.') : null,
      list.map((pool) => poolCard(pool, claimsOf(pool.metadata.name))),
      orphans.length && !blocked ? h('article', { class: 'card', 'data-testid': 'orphan-claims' },
        h('header', null, h('h3', null, 'Claims for pools that do not exist')),
        table('claims-table', ['Namespace', 'Claim', 'Requests', 'State', 'Message', 'Age'],
          orphans.sort(byCreation).map((c) => claimRow(c, 0)))) : null);
  }

  const reads = ['pools', 'claims'];
  return { needs: reads, reads, render };
}
