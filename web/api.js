// The HTTP API (docs/http-api.md) as the dashboard calls it: the token the
// person gave, kept in this tab's sessionStorage, as a bearer token. No
// cookie is ever sent or set. Changes are POSTs by fetch, with a JSON body
// when they have one (the server refuses other bodies, and other sites).

const TOKEN_KEY = 'warden.token';

export function token() {
  return sessionStorage.getItem(TOKEN_KEY) || '';
}

export function setToken(value) {
  if (value) sessionStorage.setItem(TOKEN_KEY, value);
  else sessionStorage.removeItem(TOKEN_KEY);
}

// The server said 401: no token, or not a live one.
export class Unauthorized extends Error {}

// Any other error answer: {status, code, message} from the server's JSON.
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message || `HTTP ${status}`);
    this.status = status;
    this.code = code;
  }
}

// GET (or `method`) `path`; resolves to the answer's JSON.
export async function call(path, {method = 'GET', body} = {}) {
  const headers = {Accept: 'application/json'};
  if (token()) headers.Authorization = `Bearer ${token()}`;
  const init = {method, headers, credentials: 'omit', cache: 'no-store'};
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const res = await fetch(path, init);
  let data = null;
  try {
    data = await res.json();
  } catch {
    data = null;
  }
  if (res.status === 401) throw new Unauthorized(data?.error?.message || 'unauthorized');
  if (!res.ok) throw new ApiError(res.status, data?.error?.code, data?.error?.message);
  return data;
}

export const get = (path) => call(path);
export const post = (path, body) => call(path, {method: 'POST', body});

// A path segment: a queue's name may hold any character.
export const seg = (text) => encodeURIComponent(String(text));

// GET /v1/events: calls onChange() at each `change` event until the stream
// ends; resolves then (or rejects: Unauthorized, a network error). fetch,
// not EventSource: an EventSource cannot send the Authorization header, and
// a token in the URL would end up in logs.
export async function events(onChange, signal) {
  const headers = {Accept: 'text/event-stream'};
  if (token()) headers.Authorization = `Bearer ${token()}`;
  const res = await fetch('/v1/events', {headers, credentials: 'omit', cache: 'no-store', signal});
  if (res.status === 401) throw new Unauthorized('unauthorized');
  if (!res.ok || !res.body) throw new ApiError(res.status, 'events', `HTTP ${res.status}`);
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  while (true) {
    const {value, done} = await reader.read();
    if (done) return;
    buffered += decoder.decode(value, {stream: true});
    let end;
    while ((end = buffered.indexOf('\n\n')) >= 0) {
      const block = buffered.slice(0, end).split('\n');
      buffered = buffered.slice(end + 2);
      if (block.includes('event: change')) onChange();
    }
  }
}
