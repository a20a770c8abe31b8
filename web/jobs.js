// Jobs: the newest jobs matching a state, a queue and a task
// (GET /v1/jobs?state=&queue=&task=&limit=), each linking to its page. The
// filters live in the route (#/jobs?state=dead), so a filtered list can be
// linked to and survives a reload.
import {el, table, link, time, JOB_STATES, stateBadge} from './dom.js';
import {get} from './api.js';

const FILTERS = ['state', 'queue', 'task', 'limit'];

export function jobTable(jobs, extra = []) {
  return table([
    {title: 'id', cell: (j) => link(`#/jobs/${j.id}`, String(j.id)), class: 'num'},
    {title: 'queue', cell: (j) => j.queue},
    {title: 'task', cell: (j) => j.task},
    {title: 'state', cell: (j) => stateBadge(j.state)},
    {title: 'attempts', cell: (j) => `${j.charged_attempts}/${j.max_attempts}`, class: 'num'},
    {title: 'created', cell: (j) => time(j.created_at)},
    {title: 'finished', cell: (j) => time(j.finished_at)},
    {title: 'last error', cell: (j) => j.last_error_message ?? ''},
    ...extra,
  ], jobs, {id: 'jobs', empty: 'no job matches',
    rowAttrs: (j) => ({'data-job': String(j.id), 'data-state': j.state})});
}

export function render(params) {
  const state = el('select', {id: 'filter-state', name: 'state'},
    el('option', {value: ''}, 'any state'),
    JOB_STATES.map((s) => el('option', {value: s}, s)));
  state.value = JOB_STATES.includes(params.get('state')) ? params.get('state') : '';
  const queue = el('input', {id: 'filter-queue', name: 'queue', placeholder: 'any queue'});
  queue.value = params.get('queue') ?? '';
  const task = el('input', {id: 'filter-task', name: 'task', placeholder: 'any task'});
  task.value = params.get('task') ?? '';
  const limit = el('input', {id: 'filter-limit', name: 'limit', type: 'number', min: 1,
    max: 1000});
  limit.value = params.get('limit') ?? '100';
  const form = el('form', {id: 'filters', class: 'filters', onsubmit: (event) => {
    event.preventDefault();
    const q = new URLSearchParams();
    for (const input of [state, queue, task, limit]) {
      if (input.value && !(input === limit && input.value === '100')) q.set(input.name, input.value);
    }
    location.hash = `#/jobs${q.toString() ? `?${q}` : ''}`;
  }},
  el('label', {}, 'State ', state), el('label', {}, 'Queue ', queue),
  el('label', {}, 'Task ', task), el('label', {}, 'Limit ', limit),
  el('button', {type: 'submit'}, 'Filter'));
  state.addEventListener('change', () => form.requestSubmit());

  const summary = el('p', {id: 'jobs-total', class: 'muted'});
  const body = el('section');
  const node = el('div', {class: 'page jobs'}, el('h1', {}, 'Jobs'), form, summary, body);

  const query = new URLSearchParams();
  for (const name of FILTERS) {
    if (params.get(name)) query.set(name, params.get(name));
  }
  return {
    node,
    load: () => get(`/v1/jobs${query.toString() ? `?${query}` : ''}`),
    show: (data) => {
      summary.textContent = `${data.jobs.length} shown of ${data.total} matching, newest first`;
      body.replaceChildren(jobTable(data.jobs));
    },
  };
}
