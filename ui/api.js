// api.js - requests to allotd's Kubernetes API (same origin) with the bearer
// token, and its errors as ApiError carrying the HTTP code and the Status
// message the server sent.

let token = '';
let unauthorizedHandler = () => {};

export function setToken(value) {
  token = value;
}

/** Called once per 401 with the message, so the app can return to the login form. */
export function onUnauthorized(handler) {
  unauthorizedHandler = handler;
}

export class ApiError extends Error {
  constructor(code, message, reason = '') {
    super(message);
    this.code = code; // HTTP status, or 0 when the request never got an answer
    this.reason = reason; // the Status reason (NotFound, Forbidden, ...) if any
  }
}

/** Reads a failed response's Kubernetes Status (or its text) into an ApiError. */
async function errorFrom(response) {
  let message = `${response.status} ${response.statusText}`.trim();
  let reason = '';
  try {
    const text = await response.text();
    try {
      const status = JSON.parse(text);
      if (status && typeof status.message === 'string' && status.message) message = status.message;
      if (status && typeof status.reason === 'string') reason = status.reason;
    } catch {
      if (text.trim()) message = text.trim().slice(0, 300);
    }
  } catch {
    // the body could not be read: the status line is all we have
  }
  return new ApiError(response.status, message, reason);
}

/**
 * request(path, {method, body, signal}) resolves to the Response for 2xx and
 * rejects with an ApiError otherwise (code 0: network failure). A 401 also
 * calls the unauthorized handler: the token is no longer good anywhere.
 */
export async function request(path, { method = 'GET', body, signal } = {}) {
  const headers = { Accept: 'application/json', Authorization: 'Bearer ' + token };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
      cache: 'no-store',
      credentials: 'omit',
    });
  } catch (err) {
    if (err.name === 'AbortError') throw err;
    throw new ApiError(0, 'cannot reach the server: ' + err.message);
  }
  if (response.ok) return response;
  const error = await errorFrom(response);
  if (response.status === 401) unauthorizedHandler(error.message);
  throw error;
}

/** GET or POST and parse the JSON answer. */
export async function requestJSON(path, options) {
  const response = await request(path, options);
  try {
    return await response.json();
  } catch (err) {
    if (err.name === 'AbortError') throw err;
    throw new ApiError(response.status, 'the server sent invalid JSON: ' + err.message);
  }
}

/** Who the token belongs to (SelfSubjectReview), which also checks the token. */
export async function whoAmI(signal) {
  const review = await requestJSON('/apis/authentication.k8s.io/v1/selfsubjectreviews', {
    method: 'POST',
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
    signal,
  });
  return review?.status?.userInfo ?? {};
}
