// view-custom.js - CustomQuotas and GlobalCustomQuotas: limit, used (status),
// the objects they count (status.claims), and whether the quota can be
// trusted (its Ready condition): a quota that is not Ready is never shown
// as a healthy green bar, and its reason and message are shown with it.

import { h, plural, replaceChildren } from './dom.js';
import { condition } from './k8s.js';
import { usageRatio } from './quantity.js';
import { meter, collectionNote, table } from './widgets.js';

const CLAIMS_SHOWN = 50; // a global quota may count 100,000 pods: list the first few

function sourcesText(cq) {
  return (cq.spec?.sources ?? [])
    .map((s) => [s.kind, s.op, s.path ?? s.expression ?? ''].filter(Boolean).join(' '))
    .join('; ') || 'no sources';
}

// which quotas' object lists the user opened, so a re-render keeps them open
const opened = new Set();

function claimsCell(cq) {
  const claims = cq.status?.claims ?? [];
  if (claims.length === 0) return h('span', { class: 'muted small' }, 'none');
  const items = claims.slice(0, CLAIMS_SHOWN).map((c) => h('li', { 'data-testid': 'cq-claim' },
    `${c.kind} ${c.namespace ? c.namespace + '/' : ''}${c.name}`, h('span', { class: 'muted' }, ` ${c.usage}`)));
  if (claims.length > CLAIMS_SHOWN) items.push(h('li', { class: 'muted' }, `and ${claims.length - CLAIMS_SHOWN} more`));
  const key = `${cq.kind}/${cq.metadata.namespace ?? ''}/${cq.metadata.name}`;
  const details = h('details', { open: opened.has(key) }, h('summary', null, plural(claims.length, 'object')),
    h('ul', { class: 'claims' }, items));
  details.addEventListener('toggle', () => (details.open ? opened.add(key) : opened.delete(key)));
  return details;
}

/**
 * Whether a quota's numbers can be trusted, from its Ready condition:
 * 'ready' (True), 'unknown' (no condition yet: allot has not written its
 * status) or 'not-ready' (False or Unknown: the quota cannot count, or
 * cannot read some objects, and says why), with the condition's reason and
 * message.
 */
export function quotaHealth(cq) {
  const ready = condition(cq, 'Ready');
  if (!ready) return { state: 'unknown', reason: '', message: '' };
  if (ready.status === 'True') return { state: 'ready', reason: ready.reason ?? '', message: ready.message ?? '' };
  return { state: 'not-ready', reason: ready.reason || 'NotReady', message: ready.message ?? '' };
}

function quotaRow(cq) {
  const md = cq.metadata;
  const limit = String(cq.spec?.limit ?? '');
  const used = cq.status?.usage?.used;
  const health = quotaHealth(cq);
  const bar = meter({ name: 'used', used, hard: limit, ratio: usageRatio(used ?? '0', limit) });
  if (health.state === 'not-ready') { // never a green bar for a quota that cannot be trusted
    bar.className = 'meter lvl-broken';
    bar.dataset.level = 'broken';
    bar.title = `not ready (${health.reason}): ${bar.title}`;
  }
  return h('tr', { 'data-testid': 'cq-row', 'data-kind': cq.kind, 'data-namespace': md.namespace ?? '', 'data-name': md.name,
    'data-ready': health.state },
    h('td', null, h('span', { class: 'tag' }, cq.kind === 'GlobalCustomQuota' ? 'global' : 'namespace')),
    h('td', null, md.namespace ?? (cq.status?.namespaces ?? []).join(', ')),
    h('th', { scope: 'row' }, md.name,
      health.state === 'not-ready' ? [' ', h('span', { class: 'tag crit', 'data-testid': 'cq-reason' }, health.reason)] : null),
    h('td', { class: 'meter-cell' }, bar),
    h('td', { class: 'small' }, sourcesText(cq),
      health.state === 'not-ready'
        ? h('div', { class: 'error', 'data-testid': 'cq-condition' }, `Ready=False ${health.reason}: ${health.message}`)
        : null),
    h('td', null, claimsCell(cq)));
}

export function createCustomView(root, ctx) {
  const body = h('div');
  replaceChildren(root, body);

  function render() {
    const rows = [];
    const notes = [];
    for (const [id, what] of [['globalcustomquotas', 'GlobalCustomQuotas'], ['customquotas', 'CustomQuotas']]) {
      const c = ctx.collection(id);
      const note = collectionNote(c, what);
      if (note) notes.push(note);
      else rows.push(...[...c.items.values()].sort((a, b) => ((a.metadata.namespace ?? '') + '/' + a.metadata.name)
        .localeCompare((b.metadata.namespace ?? '') + '/' + b.metadata.name)));
    }
    replaceChildren(body, notes,
      rows.length
        ? table('cq-table', ['Scope', 'Namespace(s)', 'Name', 'Used / limit', 'Sources', 'Counted objects'], rows.map(quotaRow))
        : h('p', { class: 'muted', 'data-testid': 'cq-empty' }, 'No custom quotas.'));
  }

  const reads = ['customquotas', 'globalcustomquotas'];
  return { needs: reads, reads, render };
}
