// unit.mjs - the dashboard's pure modules (ui/quantity.js, ui/k8s.js) under
// node: quantity parsing, ratios, headroom levels, pending demand. Run by
// tests/e2e/test_dashboard.sh before the browser test.

import assert from 'node:assert/strict';
import { parseQuantity, usageRatio, level, formatQuantity } from '../../ui/quantity.js';
import {
  pendingQuotaName, podDemand, quotaResources, maxRatio, reviewEntry, reviewEntriesInOrder, reviewVerdict,
} from '../../ui/k8s.js';
import {
  parseNamespaces, serviceAccountNamespace, rulesAllow, namespacedPath, groupResource,
} from '../../ui/scope.js';
import { plural } from '../../ui/dom.js';
import { quotaHealth } from '../../ui/view-custom.js';

let checks = 0;
function eq(got, want, what) {
  assert.deepEqual(got, want, what);
  checks++;
}

// quantities: suffixes, exponents, signs, and what is not a quantity
for (const [text, want] of [
  ['0', 0], ['2', 2], ['500m', 0.5], ['1500m', 1.5], ['1Gi', 2 ** 30], ['1.5Gi', 1.5 * 2 ** 30],
  ['2k', 2000], ['1e3', 1000], ['1E3', 1000], ['1E', 1e18], ['1e-3', 0.001], ['100Mi', 100 * 2 ** 20],
  ['-1', -1], ['+2', 2], ['.5', 0.5], ['3.', 3], ['10n', 1e-8], ['7u', 7e-6], ['1Ki', 1024], ['5M', 5e6],
]) eq(parseQuantity(text), want, `parseQuantity(${text})`);
for (const bad of ['', 'abc', '1Gb', '1 Gi', '1e', 'Gi', '1.2.3', null, undefined]) {
  eq(Number.isNaN(parseQuantity(bad)), true, `parseQuantity(${bad}) is NaN`);
}

// ratios and levels: hard 0 leaves no headroom; over the limit is crit
eq(usageRatio('1500m', '2'), 0.75, '1500m of 2');
eq(usageRatio('0', '0'), 1, '0 of 0 is full');
eq(usageRatio('1', '0'), Infinity, '1 of 0 is over');
eq(usageRatio(undefined, '4'), 0, 'no used yet');
eq(Number.isNaN(usageRatio('x', '4')), true, 'unparseable used');
eq([0, 0.69, 0.7, 0.89, 0.9, 1, 1.5, Infinity, NaN].map(level),
  ['ok', 'ok', 'warn', 'warn', 'crit', 'crit', 'crit', 'crit', 'none'], 'levels');

// display of computed sums
eq(formatQuantity(0.6, 'requests.cpu'), '600m', 'cpu millis');
eq(formatQuantity(2, 'cpu'), '2', 'whole cpu');
eq(formatQuantity(1.5 * 2 ** 30, 'requests.memory'), '1.5Gi', 'memory');
eq(formatQuantity(512, 'memory'), '512', 'bytes');
eq(formatQuantity(3, 'pods'), '3', 'count');

// which quota a pod waits on
const pending = (message, extra = {}) => ({
  metadata: { name: 'p', namespace: 'n' },
  spec: { containers: [{ name: 'a', resources: { requests: { cpu: '250m', memory: '64Mi' } } },
    { name: 'b', resources: { requests: { cpu: '500m' }, limits: { memory: '1Gi' } } }],
  initContainers: [{ name: 'i', resources: { requests: { cpu: '1', memory: '1Mi' } } }], ...extra },
  status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message }] },
});
const msg = '0/1 nodes are available: quota exceeded: compute, requested: requests.cpu=600m, used: ' +
  'requests.cpu=600m, limited: requests.cpu=1. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.';
eq(pendingQuotaName(pending(msg)), 'compute', 'quota from the message');
eq(pendingQuotaName(pending('no nodes available to schedule pods')), '', 'not waiting on quota');
eq(pendingQuotaName(pending(msg, { nodeName: 'node-1' })), '', 'bound pods wait on nothing');

// demand: containers summed, the largest init container if larger, pods counted
const pod = pending(msg);
eq(podDemand(pod, 'requests.cpu'), 1, 'init container 1 > containers 750m');
eq(podDemand(pod, 'cpu'), 1, 'cpu is requests.cpu');
eq(podDemand(pod, 'requests.memory'), 64 * 2 ** 20, 'memory sum');
eq(podDemand(pod, 'limits.memory'), 2 ** 30, 'limits');
eq(podDemand(pod, 'pods'), 1, 'pods');
eq(podDemand(pod, 'count/pods'), 1, 'count/pods');
eq(Number.isNaN(podDemand(pod, 'count/secrets')), true, 'not a pod resource');

// a quota's resources, sorted, with ratios; the highest ratio
const quota = { spec: { hard: { pods: '10' } }, status: { hard: { pods: '10', 'requests.cpu': '2' }, used: { pods: '9', 'requests.cpu': '1' } } };
const res = quotaResources(quota);
eq(res.map((r) => [r.name, r.used, r.hard, r.ratio]), [['pods', '9', '10', 0.9], ['requests.cpu', '1', '2', 0.5]], 'resources');
eq(maxRatio(res), 0.9, 'max ratio');
eq(maxRatio([]), -1, 'no resources');

// a custom quota's health, from its Ready condition: never "ready" unless True
const cqWith = (conds) => ({ status: { conditions: conds } });
eq(quotaHealth(cqWith([{ type: 'Ready', status: 'True', reason: 'Succeeded', message: 'reconciled' }])).state,
  'ready', 'Ready=True');
eq(quotaHealth({}).state, 'unknown', 'no status yet');
eq(quotaHealth(cqWith([{ type: 'Ready', status: 'False', reason: 'UnreadableValues', message: '1 object ...' }])),
  { state: 'not-ready', reason: 'UnreadableValues', message: '1 object ...' }, 'Ready=False');
eq(quotaHealth(cqWith([{ type: 'Ready', status: 'Unknown' }])),
  { state: 'not-ready', reason: 'NotReady', message: '' }, 'Ready=Unknown');
// a QuotaReview's verdict: allowed is only "admitted"; under deferred quota a
// pod admitted may wait Pending on a quota, and a claim may wait in its queue
const rq = (name, extra = {}) => ({ kind: 'ResourceQuota', namespace: 't1', name, allowed: true, resources: [], ...extra });
const held = 'exceeded quota: compute, requested: requests.cpu=2, used: requests.cpu=0, limited: requests.cpu=1';
const deferred = { allowed: true, code: 200, quotas: [rq('pods'), rq('compute', { outcome: 'would wait Pending: ' + held })] };
eq(reviewVerdict(deferred), { verdict: 'pending', title: 'Admitted, but would wait Pending', detail: held,
  by: 'ResourceQuota t1/compute' }, 'deferred: would wait Pending, held by compute');
eq(reviewEntry(deferred.quotas[1]).state, 'holds', 'the holding quota');
eq(reviewEntriesInOrder(deferred).map((q) => q.name), ['compute', 'pods'], 'the holding quota first');
const denied = { allowed: false, code: 403, reason: 'Forbidden', message: 'pods "x" is forbidden: exceeded quota: q',
  quotas: [rq('a'), rq('q', { allowed: false, message: 'exceeded quota: q' })] };
eq(reviewVerdict(denied), { verdict: 'denied', title: 'Denied (403 Forbidden)', detail: denied.message, by: '' }, 'denied');
eq(reviewEntriesInOrder(denied).map((q) => q.name), ['q', 'a'], 'the denying quota first');
const pool = (outcome) => ({ kind: 'ResourcePool', name: 'p', allowed: true, resources: [], outcome });
eq(reviewVerdict({ allowed: true, quotas: [pool('Queued: requested: limits.memory=2Gi, available: limits.memory=1Gi')] }),
  { verdict: 'queued', title: 'Created, but would wait in the queue of ResourcePool p',
    detail: 'requested: limits.memory=2Gi, available: limits.memory=1Gi', by: 'ResourcePool p' }, 'a claim that queues');
eq(reviewVerdict({ allowed: true, quotas: [pool('Bound'), rq('pods')] }).verdict, 'allowed', 'a claim that binds');
eq(reviewEntry(pool('Bound')).state, 'binds', 'binds');
eq(reviewVerdict({ allowed: true, code: 200 }).verdict, 'allowed', 'no quota applies');
eq(reviewVerdict({}).verdict, 'denied', 'no status is no admission');

// a scoped token: the namespaces named, a ServiceAccount's own, its rules
eq(parseNamespaces(' team-a, team-b team-a,,Bad_Name x'), ['team-a', 'team-b', 'x'], 'namespace list');
eq(parseNamespaces(''), [], 'no namespaces');
eq(serviceAccountNamespace('system:serviceaccount:team-a:viewer'), 'team-a', 'SA namespace');
eq(serviceAccountNamespace('alice'), '', 'a user has none');
const rules = [
  { verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['pods', 'resourcequotas'] },
  { verbs: ['list'], apiGroups: ['capsule.clastix.io'], resources: ['resourcepoolclaims'] },
  { verbs: ['get', 'list'], apiGroups: [''], resources: ['secrets'], resourceNames: ['one'] },
  { verbs: ['*'], apiGroups: ['*'], resources: ['customquotas'] },
];
eq(rulesAllow(rules, 'watch', '', 'resourcequotas'), true, 'watch quotas');
eq(rulesAllow(rules, 'list', 'capsule.clastix.io', 'resourcepoolclaims'), true, 'list claims');
eq(rulesAllow(rules, 'watch', 'capsule.clastix.io', 'resourcepoolclaims'), false, 'no watch on claims');
eq(rulesAllow(rules, 'list', '', 'secrets'), false, 'resourceNames do not allow a list');
eq(rulesAllow(rules, 'watch', 'capsule.clastix.io', 'customquotas'), true, 'wildcards');
eq(rulesAllow(rules, 'list', 'capsule.clastix.io', 'resourcepools'), false, 'not granted');
eq(namespacedPath('/api/v1/pods?fieldSelector=a%3Db', 'team-a'), '/api/v1/namespaces/team-a/pods?fieldSelector=a%3Db', 'core path');
eq(namespacedPath('/apis/capsule.clastix.io/v1beta2/customquotas', 'ns'),
  '/apis/capsule.clastix.io/v1beta2/namespaces/ns/customquotas', 'group path');
eq(groupResource('/apis/capsule.clastix.io/v1beta2/resourcepoolclaims'), { group: 'capsule.clastix.io', resource: 'resourcepoolclaims' }, 'group resource');
eq(groupResource('/api/v1/pods?fieldSelector=x'), { group: '', resource: 'pods' }, 'core resource');
eq([plural(1, 'object'), plural(2, 'object'), plural(0, 'quota')], ['1 object', '2 objects', '0 quotas'], 'plural');

console.log(`unit: ${checks} checks passed`);
