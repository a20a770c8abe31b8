// Workers (GET /v1/workers?all=true): every incarnation, live and past,
// with its node, pid, heartbeat age, running jobs and, for a dead one, why
// it was declared dead; a silent one (or one on a node that takes no work)
// shown as such, never as plainly active. A live one has Release (POST
// /v1/workers/ID/release, `warden workers release`): the operator's word
// that its host is gone, so its jobs come back now; asked twice. `warden
// serve`'s own row (it proves deaths and sweeps, and claims nothing) has a
// maintenance badge, no claim columns, and is not counted as a live worker.
import {el, table, time, ago, plural, workerBadge, workerState, silenceText,
  MAINTENANCE_NOTE} from './dom.js';
import {get} from './api.js';

const LIVE = ['active', 'draining'];

export function render(params, ctx) {
  // The workers whose Release was pressed once: the table is redrawn at
  // each change, the question stays.
  const asked = new Set();
  const release = (w) => {
    if (!LIVE.includes(w.state)) return '';
    if (!asked.has(w.id)) {
      const button = el('button', {type: 'button', class: 'operate', 'data-action': 'release'},
        'Release');
      button.addEventListener('click', () => {
        asked.add(w.id);
        button.replaceWith(release(w));
      });
      return button;
    }
    // By id: a name is reused by each incarnation. Refused (409) for a
    // worker whose process runs on the server's host: said in the flash.
    const sure = el('button', {type: 'button', class: 'operate',
      'data-action': 'release-confirm'}, 'Release: its host is gone');
    sure.addEventListener('click', () => {
      asked.delete(w.id);
      ctx.act(sure, `/v1/workers/${w.id}/release`,
        (a) => `Worker ${w.name} released; ${plural(a.recovered, 'job')} recovered.`);
    });
    return sure;
  };
  const summary = el('p', {id: 'workers-summary', class: 'muted'});
  const body = el('section');
  const node = el('div', {class: 'page workers'}, el('h1', {}, 'Workers'), summary, body);
  return {
    node,
    load: () => get('/v1/workers?all=true'),
    show: ({workers}) => {
      // Live ones first, then the newest.
      const sorted = [...workers].sort((a, b) =>
        (LIVE.includes(b.state) - LIVE.includes(a.state)) || b.id - a.id);
      const alive = workers.filter((w) => LIVE.includes(w.state));
      const upkeep = alive.filter((w) => w.maintenance_only).length;
      const live = alive.length - upkeep;
      summary.textContent = `${live} live, ${workers.length - alive.length} past` +
        (upkeep ? `; ${upkeep} warden serve taking part in maintenance` : '');
      // The claim columns of a row that claims nothing.
      const claims = (w, cell) => (w.maintenance_only ? '—' : cell(w));
      body.replaceChildren(table([
        {title: 'name', cell: (w) => w.name},
        {title: 'id', cell: (w) => String(w.id), class: 'num'},
        {title: 'state', cell: (w) => workerBadge(w)},
        {title: 'node', cell: (w) => w.node},
        {title: 'pid', cell: (w) => String(w.pid), class: 'num'},
        {title: 'heartbeat', cell: (w) => (LIVE.includes(w.state) ? `${ago(w.last_heartbeat)} ago`
          : time(w.last_heartbeat))},
        {title: 'running', cell: (w) => claims(w, () => String(w.running)), class: 'num'},
        {title: 'queues', cell: (w) => claims(w, () => w.queues.join(', '))},
        {title: 'started', cell: (w) => time(w.started_at)},
        {title: 'stopped', cell: (w) => time(w.stopped_at)},
        {title: 'note', class: 'note', cell: (w) => w.death_reason ?? (silenceText(w) ||
          (workerState(w) === 'node-disabled' ? 'its node takes no work: it claims nothing' : '') ||
          (workerState(w) === 'maintenance' ? MAINTENANCE_NOTE : ''))},
        {title: '', cell: release},
      ], sorted, {id: 'workers', empty: 'no worker has run yet',
        rowAttrs: (w) => ({'data-worker': w.name, 'data-state': w.state,
          'data-shown': workerState(w)})}));
    },
  };
}
