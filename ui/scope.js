// scope.js - which namespaces the dashboard shows for a token: every
// namespace when the token may list quotas across namespaces, else the
// namespaces it may read, found with standard APIs only.
//
// Kubernetes has no API that says "the namespaces I can see": a namespace
// admin (a RoleBinding to `admin` in team-a) gets 403 on every cluster-wide
// list, and may not list namespaces or RoleBindings either. So the candidate
// namespaces come from the user (the login form's namespace list, kept in
// localStorage) and, for a ServiceAccount token, from its own namespace; a
// SelfSubjectRulesReview per candidate (what `kubectl auth can-i --list -n
// NS` asks) tells which collections the token may list and watch there. The
// dashboard then lists and watches those collections per namespace.

import { requestJSON } from './api.js';

const NAMESPACES_KEY = 'allot.namespaces';
const MAX_CANDIDATES = 50; // one rules review each, at login

// A DNS-1123 label, as namespace names are.
const NAMESPACE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** "team-a, team-b team-c" -> ['team-a', 'team-b', 'team-c'] (deduplicated, in order; not names dropped). */
export function parseNamespaces(text) {
  const out = [];
  for (const word of String(text ?? '').split(/[\s,]+/)) {
    if (word.length <= 63 && NAMESPACE.test(word) && !out.includes(word)) out.push(word);
  }
  return out;
}

/** The namespace list the user gave last time (this browser), as text. */
export function savedNamespaces() {
  try {
    return localStorage.getItem(NAMESPACES_KEY) ?? '';
  } catch {
    return '';
  }
}

/** Remembers the namespace list (not a secret: names only), or forgets it when empty. */
export function saveNamespaces(list) {
  try {
    if (list.length) localStorage.setItem(NAMESPACES_KEY, list.join(', '));
    else localStorage.removeItem(NAMESPACES_KEY);
  } catch {
    // storage disabled: the list is simply not remembered
  }
}

/** A ServiceAccount's own namespace from its user name (system:serviceaccount:NS:NAME), or ''. */
export function serviceAccountNamespace(username) {
  const m = /^system:serviceaccount:([^:]+):[^:]+$/.exec(username ?? '');
  return m ? m[1] : '';
}

/**
 * Whether a SelfSubjectRulesReview's resourceRules allow `verb` on the
 * whole collection `resource` of `group` (a rule limited to resourceNames
 * does not allow a list).
 */
export function rulesAllow(rules, verb, group, resource) {
  const has = (list, want) => (list ?? []).includes(want) || (list ?? []).includes('*');
  return (rules ?? []).some((r) => has(r.verbs, verb) && has(r.apiGroups, group) &&
    has(r.resources, resource) && !(r.resourceNames ?? []).length);
}

/** A cluster-wide collection path in one namespace: /api/v1/pods?x -> /api/v1/namespaces/NS/pods?x. */
export function namespacedPath(path, namespace) {
  const m = /^(\/api\/v1|\/apis\/[^/]+\/[^/]+)\/(.*)$/.exec(path);
  if (!m) throw new Error('not a collection path: ' + path);
  return `${m[1]}/namespaces/${encodeURIComponent(namespace)}/${m[2]}`;
}

/** The API group and resource of a collection path (/apis/G/V/R?... or /api/v1/R). */
export function groupResource(path) {
  const m = /^\/(?:api\/v1|apis\/([^/]+)\/[^/]+)\/(?:namespaces\/[^/]+\/)?([^/?]+)/.exec(path);
  return m ? { group: m[1] ?? '', resource: m[2] } : { group: '', resource: '' };
}

/**
 * The token's scope: {cluster: true} when it may list ResourceQuotas across
 * namespaces (the dashboard then works as for an admin), else
 * {cluster: false, namespaces: [{name, rules}], denied: [names],
 * candidates: [names], truncated}: the candidate namespaces split by
 * whether the token may list anything the dashboard shows there.
 */
export async function discoverScope(username, named, resources) {
  const review = await requestJSON('/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
    method: 'POST',
    body: {
      apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview',
      spec: { resourceAttributes: { verb: 'list', resource: 'resourcequotas' } },
    },
  });
  if (review?.status?.allowed) return { cluster: true };
  const own = serviceAccountNamespace(username);
  const all = [...new Set([...(own ? [own] : []), ...named])];
  const candidates = all.slice(0, MAX_CANDIDATES);
  const reviews = await Promise.all(candidates.map(async (name) => {
    try {
      const r = await requestJSON('/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', {
        method: 'POST',
        body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectRulesReview', spec: { namespace: name } },
      });
      // an authorizer that cannot list its rules (incomplete): try every
      // collection there, and let each list say 403 if it must
      const rules = r?.status?.incomplete ? [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }] : [];
      return { name, rules: [...rules, ...(r?.status?.resourceRules ?? [])] };
    } catch (err) {
      if (err.code === 401) throw err;
      return { name, rules: [] }; // the review itself refused: nothing known to be readable
    }
  }));
  const visible = (ns) => resources.some(({ group, resource }) => rulesAllow(ns.rules, 'list', group, resource));
  return {
    cluster: false,
    namespaces: reviews.filter(visible),
    denied: reviews.filter((ns) => !visible(ns)).map((ns) => ns.name),
    candidates,
    truncated: all.length - candidates.length,
  };
}
