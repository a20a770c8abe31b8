// Queues: depth by state, the oldest available job's age, live workers,
// paused or not, its flow limits, with Pause / Resume (POST
// /v1/queues/Q/pause|resume) and a form that sets or removes a queue's
// limits (PUT|DELETE /v1/queues/Q/limits, `warden queues limit`).
import {el, table, duration, time, clipped, JOB_STATES} from './dom.js';
import {get, seg} from './api.js';

// The queues as a table; with `act`, a Pause or Resume button a row.
export function queueTable(queues, act) {
  const columns = [
    {title: 'queue', cell: (q) =>
      clipped(el('a', {href: `#/jobs?queue=${encodeURIComponent(q.name)}`}, q.name))},
    ...JOB_STATES.map((s) => ({title: s, cell: (q) => String(q.jobs[s] ?? 0), class: 'num'})),
    {title: 'oldest available', cell: (q) => duration(q.oldest_available_age_s)},
    {title: 'live workers', cell: (q) => String(q.live_workers), class: 'num'},
    {title: 'paused', cell: (q) => (q.paused ? `since ${time(q.paused_at)}` : 'no')},
    {title: 'limits', cell: (q) => limitsText(q.limits), class: 'limits'},
  ];
  if (act) {
    columns.push({title: '', cell: (q) => {
      const verb = q.paused ? 'resume' : 'pause';
      const button = el('button', {type: 'button', class: `${verb} operate`,
        'data-action': verb},
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

// "at most 2 running, 10/1s", or "none".
function limitsText(limits) {
  const parts = [];
  if (limits?.concurrency !== null && limits?.concurrency !== undefined) {
    parts.push(`at most ${limits.concurrency} running`);
  }
  if (limits?.rate) parts.push(`${limits.rate} starts`);
  return parts.length ? parts.join(', ') : 'none';
}

// The limits become exactly what the form says (an empty field: none of
// that kind; both empty: Set is refused by the server, Remove removes).
function limitsForm(act) {
  const queue = el('input', {id: 'limit-queue', name: 'queue', required: true,
    placeholder: 'queue'});
  const concurrency = el('input', {id: 'limit-concurrency', name: 'concurrency', type: 'number',
    min: 1, placeholder: 'no limit'});
  const rate = el('input', {id: 'limit-rate', name: 'rate', placeholder: 'N/INTERVAL: 10/1s'});
  const set = el('button', {type: 'submit', id: 'limit-set'}, 'Set limits');
  const remove = el('button', {type: 'button', id: 'limit-remove'}, 'Remove limits');
  const said = (a) => `Queue ${a.queue}: limits ${limitsText(a.limits)}` +
    (a.changed ? '.' : ' (as they were).');
  const path = () => `/v1/queues/${seg(queue.value.trim())}/limits`;
  remove.addEventListener('click', () => {
    if (queue.reportValidity()) act(remove, path(), said, {method: 'DELETE'});
  });
  return el('form', {id: 'limits-form', class: 'filters operate', onsubmit: (event) => {
    event.preventDefault();
    act(set, path(), said, {method: 'PUT', body: {
      concurrency: concurrency.value ? Number(concurrency.value) : null,
      rate: rate.value.trim() || null}});
  }}, el('label', {}, 'Queue ', queue), el('label', {}, 'Concurrency ', concurrency),
  el('label', {}, 'Rate ', rate), set, remove);
}

export function render(params, ctx) {
  const body = el('section');
  const node = el('div', {class: 'page queues'}, el('h1', {}, 'Queues'),
    el('p', {class: 'muted'}, 'A paused queue keeps its jobs: workers claim none from it ' +
      'until it is resumed; jobs running there finish.'),
    limitsForm(ctx.act), body);
  return {
    node,
    load: () => get('/v1/queues'),
    show: (data) => body.replaceChildren(queueTable(data.queues, ctx.act)),
  };
}
