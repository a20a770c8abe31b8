// Queues: depth by state, the oldest available job's age, live workers,
// paused or not, with Pause / Resume (POST /v1/queues/Q/pause|resume).
import {el, table, duration, time, JOB_STATES} from './dom.js';
import {get, seg} from './api.js';

// The queues as a table; with `act`, a Pause or Resume button a row.
export function queueTable(queues, act) {
  const columns = [
    {title: 'queue', cell: (q) => el('a', {href: `#/jobs?queue=${encodeURIComponent(q.name)}`}, q.name)},
    ...JOB_STATES.map((s) => ({title: s, cell: (q) => String(q.jobs[s] ?? 0), class: 'num'})),
    {title: 'oldest available', cell: (q) => duration(q.oldest_available_age_s)},
    {title: 'live workers', cell: (q) => String(q.live_workers), class: 'num'},
    {title: 'paused', cell: (q) => (q.paused ? `since ${time(q.paused_at)}` : 'no')},
  ];
  if (act) {
    columns.push({title: '', cell: (q) => {
      const verb = q.paused ? 'resume' : 'pause';
      const button = el('button', {type: 'button', class: verb, 'data-action': verb},
        q.paused ? 'Resume' : 'Pause');
      button.addEventListener('click', () => act(button, `/v1/queues/${seg(q.name)}/${verb}`,
        (a) => `Queue ${a.queue} ${a.paused ? 'paused' : 'resumed'}` +
          (a.changed ? '.' : ' (it already was).')));
      return button;
    }});
  }
  return table(columns, queues, {id: 'queues', empty: 'no queue yet',
    rowAttrs: (q) => ({'data-queue': q.name, 'data-paused': String(q.paused)})});
}

export function render(params, ctx) {
  const body = el('section');
  const node = el('div', {class: 'page queues'}, el('h1', {}, 'Queues'),
    el('p', {class: 'muted'}, 'A paused queue keeps its jobs: workers claim none from it ' +
      'until it is resumed; jobs running there finish.'),
    body);
  return {
    node,
    load: () => get('/v1/queues'),
    show: (data) => body.replaceChildren(queueTable(data.queues, ctx.act)),
  };
}
