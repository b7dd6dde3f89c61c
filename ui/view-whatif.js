// view-whatif.js - "What if?": asks allotd whether a manifest would be
// admitted by the quotas (POST allot.dev/v1 QuotaReview, which writes
// nothing) and shows the verdict (allowed, denied, admitted but waiting
// Pending on a quota, or a claim waiting in its pool's queue) and every
// quota's before/after.

import { h, replaceChildren } from './dom.js';
import { requestJSON, ApiError } from './api.js';
import { usageRatio, level } from './quantity.js';
import { bar, table } from './widgets.js';
import { reviewEntry, reviewEntriesInOrder, reviewVerdict } from './k8s.js';

const REVIEWS = '/apis/allot.dev/v1/quotareviews';

function example(namespace) {
  return `apiVersion: v1
kind: Pod
metadata:
  name: what-if
  namespace: ${namespace}
spec:
  containers:
  - name: app
    image: nginx
    resources:
      requests: {cpu: 500m, memory: 256Mi}
      limits: {cpu: "1", memory: 256Mi}
`;
}

function resourceRow(r) {
  const before = usageRatio(r.used ?? '0', r.hard);
  const after = usageRatio(r.after ?? '0', r.hard);
  return h('tr', { class: r.exceeded ? 'exceeded' : '', 'data-testid': 'whatif-resource', 'data-resource': r.name },
    h('th', { scope: 'row' }, r.name),
    h('td', { class: 'num' }, r.hard ?? ''),
    h('td', { class: 'num' }, r.used ?? ''),
    h('td', { class: 'num' }, r.requested ?? ''),
    h('td', { class: 'num' + (r.exceeded ? ' over' : '') }, r.after ?? '',
      r.exceeded ? h('span', { class: 'sr-only' }, ' (exceeds the hard limit)') : null),
    h('td', { class: 'bars' },
      h('div', { class: 'lvl-before' }, bar(before, `${r.name} before: ${r.used} of ${r.hard}`)),
      h('div', { class: 'lvl-' + (r.exceeded ? 'crit' : level(after)) }, bar(after, `${r.name} after: ${r.after} of ${r.hard}`))));
}

const ENTRY_TAG = { denies: 'crit', holds: 'warn', queues: 'warn', binds: 'ok', allows: 'ok' };

function quotaCard(q) {
  const where = q.namespace ? `${q.namespace}/${q.name}` : q.name;
  const st = reviewEntry(q);
  return h('article', {
    class: 'card', 'data-testid': 'whatif-quota', 'data-name': q.name, 'data-allowed': String(!!q.allowed),
    'data-state': st.state,
  },
  h('header', null,
    h('h3', null, `${q.kind} ${where}`),
    h('span', { class: 'tag ' + ENTRY_TAG[st.state], 'data-testid': 'whatif-quota-state' }, st.label),
    st.detail ? h('span', { class: 'small message' }, st.detail) : null),
  (q.resources ?? []).length
    ? table('whatif-resources', ['Resource', 'Hard', 'Used', 'Requested', 'After', 'Before / after'], q.resources.map(resourceRow))
    : h('p', { class: 'muted small' }, 'No resource of this quota is affected.'));
}

const VERDICT_CLASS = { allowed: 'allowed', denied: 'denied', pending: 'waits', queued: 'waits' };

function decision(status) {
  const v = reviewVerdict(status);
  return h('div', {
    class: 'decision ' + VERDICT_CLASS[v.verdict], 'data-testid': 'whatif-decision',
    'data-allowed': String(!!status.allowed), 'data-verdict': v.verdict, role: 'status',
  },
  h('strong', { 'data-testid': 'whatif-verdict' }, v.title),
  v.by && v.verdict === 'pending'
    ? h('div', { 'data-testid': 'whatif-holder' }, `The pod would be created, then wait Pending until ${v.by} has room:`)
    : null,
  v.detail ? h('div', { class: 'message', 'data-testid': 'whatif-message' }, v.detail) : null);
}

export function createWhatIfView(root, ctx) {
  const textarea = h('textarea', {
    id: 'whatif-manifest', rows: 18, spellcheck: 'false', 'data-testid': 'whatif-manifest',
    placeholder: 'A manifest in YAML or JSON, e.g. a Pod or a Deployment',
  });
  const submit = h('button', { type: 'submit', class: 'primary', 'data-testid': 'whatif-submit' }, 'Explain');
  const fill = h('button', {
    type: 'button', 'data-testid': 'whatif-example',
    onclick: () => { textarea.value = example(ctx.someNamespace() ?? 'default'); textarea.focus(); },
  }, 'Example pod');
  const result = h('div', { class: 'whatif-result', 'data-testid': 'whatif-result', 'aria-live': 'polite' });
  let inFlight = null;

  async function explain(event) {
    event.preventDefault();
    inFlight?.abort();
    const controller = new AbortController();
    inFlight = controller;
    submit.disabled = true;
    try {
      result.replaceChildren(h('p', { class: 'muted' }, 'Asking the server…'));
      const review = await requestJSON(REVIEWS, {
        method: 'POST',
        body: { apiVersion: 'allot.dev/v1', kind: 'QuotaReview', spec: { manifest: textarea.value } },
        signal: controller.signal,
      });
      const status = review?.status ?? {};
      // the quotas that deny, hold or queue come first: they answer "why not?"
      const quotas = reviewEntriesInOrder(status);
      replaceChildren(result, decision(status), quotas.map(quotaCard),
        quotas.length ? null : h('p', { class: 'muted small' }, 'No quota applies to this object.'));
    } catch (err) {
      if (err.name === 'AbortError') return;
      const text = err instanceof ApiError && err.code === 404
        ? 'This allotd does not serve the QuotaReview API (allot.dev/v1 quotareviews) yet: 404 Not Found.'
        : `The review failed${err.code ? ` (${err.code})` : ''}: ${err.message}`;
      replaceChildren(result, h('p', { class: 'note error', role: 'alert', 'data-testid': 'whatif-error' }, text));
    } finally {
      if (inFlight === controller) {
        inFlight = null;
        submit.disabled = false;
      }
    }
  }

  replaceChildren(root, h('div', { class: 'whatif-layout' },
    h('form', { class: 'whatif', 'data-testid': 'whatif-form', onsubmit: explain },
      h('label', { for: 'whatif-manifest' }, 'Manifest to check against the quotas (nothing is written)'),
      textarea,
      h('div', { class: 'actions' }, submit, fill)),
    result));

  return { needs: [], reads: [], render: () => {} };
}
