// The dashboard: hash routes (#/jobs?state=dead, #/jobs/42, ...), a login
// form when the server wants a token, and the current page's data fetched
// again whenever the server says something changed (GET /v1/events), so
// that what happens (a worker killed, its jobs rescued) shows within a
// second, without a reload. Without the stream it polls every 500 ms.
import {el} from './dom.js';
import * as api from './api.js';
import * as overview from './overview.js';
import * as jobs from './jobs.js';
import * as job from './job.js';
import * as workers from './workers.js';
import * as dead from './dead.js';
import * as queues from './queues.js';
import * as nodes from './nodes.js';
import * as audit from './audit.js';

const POLL_MS = 500;     // without the event stream
const REFRESH_MS = 5000;  // with it: for what changes without an event (ages)
const RECONNECT_MS = 1000;

// Each page: render(params, ctx) -> {node, load(), show(data)}: `node` is
// made once; load() fetches, show() redraws the parts that hold data.
const ROUTES = [
  [/^\/$/, overview, 'Overview'],
  [/^\/jobs$/, jobs, 'Jobs'],
  [/^\/jobs\/(\d+)$/, job, 'Job'],
  [/^\/workers$/, workers, 'Workers'],
  [/^\/dead$/, dead, 'Dead letters'],
  [/^\/queues$/, queues, 'Queues'],
  [/^\/nodes$/, nodes, 'Nodes'],
  [/^\/audit$/, audit, 'Audit log'],
];

const $ = (id) => document.getElementById(id);
let generation = 0;  // bumped by each route change and login: older loops stop
let wake = null;     // ends the current wait between polls early
let dirty = false;   // a change came while the page was loading
let streaming = false;  // the event stream is open and has spoken
let streamAbort = null;  // ends the event stream (a logout)

function parseHash() {
  const raw = location.hash.replace(/^#/, '') || '/';
  const q = raw.indexOf('?');
  return {
    path: q < 0 ? raw : raw.slice(0, q),
    params: new URLSearchParams(q < 0 ? '' : raw.slice(q + 1)),
  };
}

function setStatus(text, isError = false) {
  $('status').textContent = text;
  $('status').classList.toggle('error', isError);
}

// A message above the page: what an action did, or why it was refused.
function flash(text, isError = false) {
  const box = $('flash');
  box.textContent = text;
  box.classList.toggle('error', isError);
  box.hidden = !text;
}

// POST `path` (or `method`) for a button; the page is polled again at
// once after it, or `then(answer)` runs instead (a delete leaves the page).
async function act(button, path, done, {method = 'POST', body, then} = {}) {
  button.disabled = true;
  try {
    const answer = await api.call(path, {method, body});
    flash(done(answer));
    if (then) return then(answer);
  } catch (e) {
    if (e instanceof api.Unauthorized) return showLogin('The token was refused: log in again.');
    flash(e.message, true);
  } finally {
    button.disabled = false;
  }
  if (wake) wake();
}

// A click handler's work, whose refusals are shown, never left to reject:
// a 401 brings the login form back, anything else is said in the flash.
async function guard(work) {
  try {
    return await work();
  } catch (e) {
    return refused(e);
  }
}

function refused(e) {
  if (e instanceof api.Unauthorized) return showLogin('The token was refused: log in again.');
  flash(e instanceof api.ApiError ? e.message : `failed: ${e.message}`, true);
}

// What the token may do (GET /v1/whoami): a token below operate sees no
// button that changes anything (app.css hides `.operate`); the server
// refuses such requests (403) whatever the page shows. Unknown (the server
// was down when the page loaded): the buttons show until it is known.
async function learnScope() {
  const me = await api.get('/v1/whoami');
  document.body.dataset.operate = ['operate', 'admin'].includes(me.scope) ? 'yes' : 'no';
  document.body.dataset.scope = me.scope;
}

function route() {
  const gen = ++generation;
  const {path, params} = parseHash();
  const found = ROUTES.find(([pattern]) => pattern.test(path));
  $('nav').hidden = false;
  $('logout').hidden = !api.token();
  flash('');
  for (const a of $('nav').querySelectorAll('a')) {
    const target = a.getAttribute('href').slice(1);
    a.classList.toggle('current', target === '/' ? path === '/' : path.startsWith(target));
  }
  if (!found) {
    document.title = 'warden';
    $('main').replaceChildren(el('p', {class: 'error'}, 'No such page: ', path));
    return;
  }
  const [pattern, page, title] = found;
  document.title = `${title} · warden`;
  const view = page.render(params, {act, flash, guard, refused,
    match: path.match(pattern)});
  $('main').replaceChildren(view.node);
  listen();
  poll(gen, view);
}

function changed() {
  dirty = true;
  if (wake) wake();
}

// Keeps one event stream open while logged in: each change wakes the page.
async function listen() {
  if (streamAbort) return;  // one already runs
  const abort = streamAbort = new AbortController();
  while (!abort.signal.aborted) {
    try {
      await api.events(() => { streaming = true; changed(); }, abort.signal);
    } catch (e) {
      if (e instanceof api.Unauthorized) break;  // the next poll shows the login form
    }
    streaming = false;
    if (abort.signal.aborted) break;
    changed();  // what happened while it was down
    await new Promise((resolve) => setTimeout(resolve, RECONNECT_MS));
  }
  if (streamAbort === abort) streamAbort = null;
}

function stopListening() {
  if (streamAbort) streamAbort.abort();
  streamAbort = null;
  streaming = false;
}

async function poll(gen, view) {
  while (gen === generation) {
    const started = performance.now();
    dirty = false;
    try {
      const data = await view.load();
      if (gen !== generation) return;
      view.show(data);
      if (!document.body.dataset.scope) learnScope().catch(() => {});
      setStatus(`live${streaming ? '' : ' (polling)'} · ${new Date().toLocaleTimeString()}`);
      $('status').dataset.live = streaming ? 'stream' : 'poll';
    } catch (e) {
      if (gen !== generation) return;
      if (e instanceof api.Unauthorized) return showLogin('The token was refused: log in again.');
      setStatus(e instanceof api.ApiError ? e.message : `cannot reach the server (${e.message})`,
        true);
    }
    if (dirty) continue;
    const left = Math.max(0, (streaming ? REFRESH_MS : POLL_MS) - (performance.now() - started));
    await new Promise((resolve) => {
      const timer = setTimeout(resolve, left);
      wake = () => { wake = null; clearTimeout(timer); resolve(); };
    });
  }
}

function showLogin(message = '') {
  ++generation;
  stopListening();
  api.setToken('');
  $('nav').hidden = true;
  $('logout').hidden = true;
  flash('');
  setStatus('');
  document.title = 'Log in · warden';
  const input = el('input', {id: 'token', name: 'token', type: 'password', autocomplete: 'off',
    spellcheck: 'false', placeholder: 'wdn_…', required: true});
  const error = el('p', {id: 'login-error', class: 'error'}, message);
  const form = el('form', {id: 'login', class: 'login', onsubmit: async (event) => {
    event.preventDefault();
    api.setToken(input.value.trim());
    try {
      await learnScope();
      route();
    } catch (e) {
      api.setToken('');
      error.textContent = e instanceof api.Unauthorized ? 'That is not a live token.' : e.message;
    }
  }},
  el('h1', {}, 'Log in'),
  el('p', {}, 'A token of the HTTP API (', el('code', {}, 'warden tokens create NAME'),
    '), kept in this tab only.'),
  el('label', {for: 'token'}, 'Token'), input,
  el('button', {type: 'submit'}, 'Log in'),
  error);
  $('main').replaceChildren(form);
  input.focus();
}

async function start() {
  window.addEventListener('hashchange', () => { if (!$('login')) route(); });
  $('logout').addEventListener('click', () => showLogin());
  // With a token kept in this tab (a reload), or none: a server started
  // with --no-auth answers without one.
  try {
    await learnScope();
    route();
  } catch (e) {
    if (e instanceof api.Unauthorized) return showLogin();
    // A reload while the server is down: the page's polling says so and
    // retries, and asks for the scope once it answers (see poll).
    if (api.token()) return route();
    $('main').replaceChildren(el('p', {class: 'error'}, `cannot reach the server: ${e.message}`));
  }
}

start();
