// view-pools.js - each Capsule ResourcePool: its hard limits and allocation
// (status), the claims bound to it and the queue of claims waiting. Pools
// that are exhausted (claims wait in their queue) or most used come first.
// A token that may read claims but not pools (a namespace admin) sees its
// claims grouped by the pool they claim from.

import { h, replaceChildren, age, plural, breakable } from './dom.js';
import { condition, maxRatio } from './k8s.js';
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
    h('th', { scope: 'row', class: 'name', title: md.name }, breakable(md.name)),
    h('td', null, resourceList(claim.spec?.claim)),
    h('td', null, h('span', { class: 'tag ' + STATE_TAG[st.state] }, st.state === 'queued' && position ? `queued #${position}` : st.state),
      ' ', st.label),
    h('td', { class: 'message', 'data-testid': 'claim-message' }, st.message),
    h('td', { class: 'num' }, age(md.creationTimestamp)));
}

/** A pool's resources: {name, hard, used, ratio} per resource of its hard. */
function poolResources(pool) {
  const alloc = pool.status?.allocation ?? {};
  const hard = alloc.hard ?? pool.spec?.quota?.hard ?? {};
  const used = alloc.used ?? {};
  return Object.keys(hard).sort().map((r) => ({
    name: r, hard: hard[r], used: used[r], ratio: usageRatio(used[r] ?? '0', hard[r]),
  }));
}

/** The claims bound (or failed) in creation order, then the queue in its order. */
function claimsTable(claims) {
  const others = claims.filter((c) => claimState(c).state !== 'queued').sort(byCreation);
  const queued = claims.filter((c) => claimState(c).state === 'queued').sort(byCreation); // the queue, in order
  return {
    bound: others.filter((c) => claimState(c).state === 'bound').length,
    queued: queued.length,
    table: claims.length
      ? table('claims-table', ['Namespace', 'Claim', 'Requests', 'State', 'Message', 'Age'],
        [...others.map((c) => claimRow(c, 0)), ...queued.map((c, i) => claimRow(c, i + 1))])
      : h('p', { class: 'muted small' }, 'No claims.'),
  };
}

function poolCard({ pool, claims, resources, exhausted }) {
  const name = pool.metadata.name;
  const t = claimsTable(claims);
  return h('article', { class: 'card', 'data-testid': 'pool', 'data-pool': name, 'data-exhausted': String(exhausted) },
    h('header', null,
      h('h3', { class: 'name', title: name }, breakable(name)),
      exhausted ? h('span', { class: 'tag crit' }, 'exhausted') : null,
      h('span', { class: 'muted small' },
        `selects ${selectorsText(pool)} · ${plural(pool.status?.namespaceCount ?? 0, 'namespace')} · ` +
        `${t.bound} bound · ${t.queued} queued`)),
    h('div', { class: 'meters' }, resources.map((r) => meter(r))),
    t.table);
}

/**
 * Pools in the order that surfaces trouble: exhausted first (claims wait in
 * its queue), then by the highest used / hard of any resource, then by name.
 */
export function poolOrder(a, b) {
  return Number(b.exhausted) - Number(a.exhausted) || b.max - a.max ||
    (a.pool.metadata.name < b.pool.metadata.name ? -1 : a.pool.metadata.name > b.pool.metadata.name ? 1 : 0);
}

/** Claims of a pool the token may not read: grouped under the pool's name. */
function claimsOnlyCard(name, claims) {
  const t = claimsTable(claims);
  return h('article', { class: 'card', 'data-testid': 'pool-claims', 'data-pool': name },
    h('header', null,
      h('h3', { class: 'name', title: name }, name ? breakable(name) : '(no pool)'),
      t.queued ? h('span', { class: 'tag warn' }, `${t.queued} queued`) : null,
      h('span', { class: 'muted small' }, `${t.bound} bound · the pool itself is not readable with this token`)),
    t.table);
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
    const list = blocked ? [] : [...pools.items.values()].map((pool) => {
      const claims = claimsOf(pool.metadata.name);
      const resources = poolResources(pool);
      const exhausted = condition(pool, 'Exhausted')?.status === 'True' ||
        claims.some((c) => claimState(c).state === 'queued');
      return { pool, claims, resources, exhausted, max: maxRatio(resources) };
    }).sort(poolOrder);
    // without the pools (403), the token's claims, by the pool they claim from
    const byPool = new Map();
    if (blocked) {
      for (const c of allClaims) {
        const name = c.status?.pool?.name || c.spec?.pool || '';
        byPool.set(name, [...(byPool.get(name) ?? []), c]);
      }
    }
    replaceChildren(body,
      blocked, claimsBlocked,
      !blocked && list.length === 0 ? h('p', { class: 'muted', 'data-testid': 'pools-empty' }, 'No ResourcePools.') : null,
      list.map(poolCard),
      [...byPool].sort(([a], [b]) => (a < b ? -1 : 1)).map(([name, claims]) => claimsOnlyCard(name, claims)),
      orphans.length && !blocked ? h('article', { class: 'card', 'data-testid': 'orphan-claims' },
        h('header', null, h('h3', null, 'Claims for pools that do not exist')),
        table('claims-table', ['Namespace', 'Claim', 'Requests', 'State', 'Message', 'Age'],
          orphans.sort(byCreation).map((c) => claimRow(c, 0)))) : null);
  }

  const reads = ['pools', 'claims'];
  return { needs: reads, reads, render };
}
