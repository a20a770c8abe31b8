// Building the page from data, safely: every value becomes a text node or
// an attribute set by code, never markup. Nothing here parses HTML.

// el('a', {href: '#/jobs', class: 'x'}, 'text', child): an element whose
// children are nodes or text. `on*` attributes become event listeners.
export function el(tag, attrs = {}, ...children) {
  return fill(document.createElement(tag), attrs, children);
}

const SVG_NS = 'http://www.w3.org/2000/svg';

// An SVG element, as el().
export function svg(tag, attrs = {}, ...children) {
  return fill(document.createElementNS(SVG_NS, tag), attrs, children);
}

function fill(node, attrs, children) {
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on')) {
      node.addEventListener(name.slice(2), value);
    } else {
      node.setAttribute(name, value === true ? '' : String(value));
    }
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

// A link inside the dashboard: `route` is built by code ('#/jobs/' + id),
// so it is always a fragment of this page, never another scheme.
export function link(route, text) {
  return el('a', {href: route}, text);
}

// A queue's or task's name in a cell: up to 200 characters without a
// space, which would widen the table off the screen; cut with an ellipsis,
// the whole name in its title (a tooltip).
export function clipped(node) {
  return el('span', {class: 'clip', title: node.textContent}, node);
}

// A table: `columns` are [{title, cell: row => node or text, class?}].
export function table(columns, rows, {id, empty = 'none', rowAttrs} = {}) {
  const head = el('tr', {}, columns.map((c) => el('th', {class: c.class}, c.title)));
  const body = rows.length
    ? rows.map((row) =>
        el('tr', rowAttrs ? rowAttrs(row) : {},
          columns.map((c) => el('td', {class: c.class}, c.cell(row)))))
    : [el('tr', {}, el('td', {class: 'empty', colspan: columns.length}, empty))];
  return el('table', {id}, el('thead', {}, head), el('tbody', {}, body));
}

// JSON as indented text in a <pre>, or a dash for null.
export function jsonBlock(value) {
  if (value === null || value === undefined) return el('span', {class: 'muted'}, '—');
  return el('pre', {class: 'json'}, JSON.stringify(value, null, 2));
}

// "2026-11-26T11:50:38.938Z" -> "2026-11-26 11:50:38.938Z"; null -> "—".
export function time(iso) {
  return iso ? iso.replace('T', ' ') : '—';
}

// "1 crash", "3 crashes", "0 crash loops": a count and its noun (as
// warden/plural.h does for the CLI), `plural` when not the noun + "s".
export function plural(n, noun, pluralNoun = `${noun}s`) {
  return `${n} ${n === 1 ? noun : pluralNoun}`;
}

// A job's attempts as the CLI shows them (AttemptsText, docs/design.md
// "Attempts"): charged of max_attempts, then every run when they differ.
export function attemptsText(j) {
  const ofMax = `${j.charged_attempts}/${j.max_attempts}`;
  return j.attempt === j.charged_attempts ? ofMax : `${ofMax} (${plural(j.attempt, 'run')})`;
}

// Seconds as "850 ms", "4.2 s", "3 min", "2.5 h".
export function duration(seconds) {
  if (seconds === null || seconds === undefined || Number.isNaN(seconds)) return '—';
  if (seconds < 1) return `${Math.max(0, Math.round(seconds * 1000))} ms`;
  if (seconds < 60) return `${seconds.toFixed(1)} s`;
  if (seconds < 3600) return `${Math.round(seconds / 60)} min`;
  if (seconds < 86400) return `${(seconds / 3600).toFixed(1)} h`;
  return `${(seconds / 86400).toFixed(1)} d`;
}

// How long ago an RFC 3339 time was, by this browser's clock.
export function ago(iso) {
  return iso ? duration((Date.now() - Date.parse(iso)) / 1000) : '—';
}

// A job state as a labelled badge (its class is one of the eight states).
export const JOB_STATES = ['scheduled', 'available', 'running', 'succeeded', 'retryable',
  'dead', 'cancelled', 'expired'];

export function stateBadge(state) {
  const known = JOB_STATES.includes(state) ||
    ['active', 'draining', 'stopped', 'silent', 'node-disabled', 'maintenance'].includes(state);
  return el('span', {class: known ? `badge state-${state}` : 'badge'}, state);
}

// What a worker is, as shown: `silent` when it is live but its heartbeat
// went unrenewed past its keepalive by the store's clock (the server says
// so: `silent`), `node-disabled` when its node takes no work, `maintenance`
// for `warden serve`'s live row (it claims nothing), else its row's state.
// A display, not a verdict: recovery decides by its own protocol.
export function workerState(w) {
  if (w.silent) return 'silent';
  const live = w.state === 'active' || w.state === 'draining';
  if (live && w.maintenance_only) return 'maintenance';
  if (w.node_disabled && live) return 'node-disabled';
  return w.state;
}

export const MAINTENANCE_NOTE = 'maintenance only (warden serve): claims nothing';

// "no heartbeat for 51.0 s, keepalive 10.0 s", or '' for a worker that is not silent.
export function silenceText(w) {
  if (!w.silent) return '';
  return `no heartbeat for ${duration(w.silent_for_ms / 1000)}, ` +
    `keepalive ${duration(w.keepalive_ms / 1000)}`;
}

// A worker's state badge, with why it is silent (or idle) as its title.
export function workerBadge(w) {
  const shown = workerState(w);
  const badge = stateBadge(shown);
  if (shown === 'silent') badge.title = silenceText(w);
  if (shown === 'node-disabled') badge.title = 'its node takes no work: it claims nothing';
  if (shown === 'maintenance') badge.title = MAINTENANCE_NOTE;
  return badge;
}
