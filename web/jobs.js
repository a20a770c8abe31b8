// Jobs: the newest jobs matching a state, a queue, a task, a search text
// and their last error's kind (GET /v1/jobs?state=&queue=&task=&q=
// &error_kind=&rescued=&limit=&cursor=; the overview's recovery counts link
// to #/jobs?rescued=true and #/jobs?error_kind=crash_loop), each linking to its
// page, a page at a time (Older follows the server's next_cursor). The
// filters and the cursor live in the route (#/jobs?state=dead), so a
// filtered list can be linked to and survives a reload.
//
// Bulk actions act on every job the filter matches (all pages), among those
// the action applies to: Count asks the server for a dry run and shows the
// count; only then can the action be confirmed; the operation's progress
// (GET /v1/jobs/bulk/ID) shows until it is done.
import {el, table, link, time, duration, clipped, JOB_STATES, stateBadge, attemptsText}
  from './dom.js';
import {get, post, ApiError, Unauthorized} from './api.js';
import {follow, wouldBe} from './bulk.js';

const FILTERS = ['state', 'queue', 'task', 'q', 'error_kind', 'rescued', 'limit'];
// The kinds of a last error (GET /v1/jobs?error_kind=).
const ERROR_KINDS = ['error', 'crash', 'timeout', 'lost', 'released', 'crash_loop', 'cancelled'];

// How long its last run took: from its start to its end, or (running) so
// far by this browser's clock; '' for a job that has not started.
function took(j) {
  if (!j.started_at) return '';
  const end = j.finished_at ? Date.parse(j.finished_at)
    : (j.state === 'running' ? Date.now() : null);
  return end === null ? '' : duration((end - Date.parse(j.started_at)) / 1000);
}

export function jobTable(jobs, extra = []) {
  return table([
    {title: 'id', cell: (j) => link(`#/jobs/${j.id}`, String(j.id)), class: 'num'},
    {title: 'queue', cell: (j) => clipped(document.createTextNode(j.queue))},
    {title: 'task', cell: (j) => clipped(document.createTextNode(j.task))},
    {title: 'state', cell: (j) => stateBadge(j.state)},
    {title: 'attempts', cell: attemptsText, class: 'num'},
    {title: 'worker', cell: (j) => j.worker_name ?? (j.worker === null ? '—' : String(j.worker)),
      class: 'worker'},
    {title: 'created', cell: (j) => time(j.created_at)},
    {title: 'runs at', cell: (j) => time(j.run_at), class: 'run-at'},
    {title: 'finished', cell: (j) => time(j.finished_at)},
    {title: 'took', cell: took, class: 'num took'},
    {title: 'last error', cell: (j) => j.last_error_message ?? ''},
    ...extra,
  ], jobs, {id: 'jobs', empty: 'no job matches',
    rowAttrs: (j) => ({'data-job': String(j.id), 'data-state': j.state})});
}

function route(params) {
  return `#/jobs${params.toString() ? `?${params}` : ''}`;
}

export function render(params, ctx) {
  const state = el('select', {id: 'filter-state', name: 'state'},
    el('option', {value: ''}, 'any state'),
    JOB_STATES.map((s) => el('option', {value: s}, s)));
  state.value = JOB_STATES.includes(params.get('state')) ? params.get('state') : '';
  const queue = el('input', {id: 'filter-queue', name: 'queue', placeholder: 'any queue'});
  queue.value = params.get('queue') ?? '';
  const task = el('input', {id: 'filter-task', name: 'task', placeholder: 'any task'});
  task.value = params.get('task') ?? '';
  const search = el('input', {id: 'filter-q', name: 'q',
    placeholder: 'text in payload or last error'});
  search.value = params.get('q') ?? '';
  const kind = el('select', {id: 'filter-error-kind', name: 'error_kind'},
    el('option', {value: ''}, 'any'), ERROR_KINDS.map((k) => el('option', {value: k}, k)));
  kind.value = ERROR_KINDS.includes(params.get('error_kind')) ? params.get('error_kind') : '';
  const rescued = el('input', {id: 'filter-rescued', name: 'rescued', type: 'checkbox'});
  rescued.checked = params.get('rescued') === 'true';
  const limit = el('input', {id: 'filter-limit', name: 'limit', type: 'number', min: 1,
    max: 1000});
  limit.value = params.get('limit') ?? '100';
  const form = el('form', {id: 'filters', class: 'filters', onsubmit: (event) => {
    event.preventDefault();
    const q = new URLSearchParams();
    for (const input of [state, queue, task, search, kind, limit]) {
      if (input.value && !(input === limit && input.value === '100')) q.set(input.name, input.value);
    }
    if (rescued.checked) q.set('rescued', 'true');
    location.hash = route(q);
  }},
  el('label', {}, 'State ', state), el('label', {}, 'Queue ', queue),
  el('label', {}, 'Task ', task), el('label', {}, 'Search ', search),
  el('label', {}, 'Last error ', kind), el('label', {}, rescued, ' Rescued'),
  el('label', {}, 'Limit ', limit), el('button', {type: 'submit'}, 'Filter'));
  state.addEventListener('change', () => form.requestSubmit());
  kind.addEventListener('change', () => form.requestSubmit());
  rescued.addEventListener('change', () => form.requestSubmit());

  const query = new URLSearchParams();
  for (const name of FILTERS) {
    if (params.get(name)) query.set(name, params.get(name));
  }
  const filter = {};
  for (const name of ['state', 'queue', 'task', 'q', 'error_kind']) {
    if (params.get(name)) filter[name] = params.get(name);
  }
  if (params.get('rescued') === 'true') filter.rescued = true;

  // Pages: the newest, or the one after a cursor.
  const newest = el('a', {id: 'page-newest', href: route(query)}, 'Newest');
  newest.hidden = !params.get('cursor');
  const older = el('a', {id: 'page-older', href: '#/jobs'}, 'Older →');
  older.hidden = true;
  const pager = el('p', {class: 'pager'}, newest, ' ', older);

  // Bulk actions on every job the filter matches; with no filter, the API
  // wants that said ("all": the count shown and confirmed first).
  const every = Object.keys(filter).length === 0 ? {all: true} : {};
  const action = el('select', {id: 'bulk-action'},
    el('option', {value: 'retry'}, 'retry'), el('option', {value: 'cancel'}, 'cancel'),
    el('option', {value: 'delete'}, 'delete'));
  const count = el('button', {type: 'button', id: 'bulk-count'}, 'Count');
  const confirm = el('button', {type: 'button', id: 'bulk-confirm', disabled: true}, 'Confirm');
  const said = el('span', {id: 'bulk-said', class: 'muted'});
  const progress = el('span', {id: 'bulk-progress'});
  action.addEventListener('change', () => {
    confirm.disabled = true;
    said.textContent = '';
  });
  // A refusal is said next to the buttons; a 401 brings the login form
  // (thrown on from a click handler, it was an unhandled rejection).
  const failed = (e) => {
    if (e instanceof Unauthorized) return ctx.refused(e);
    said.textContent = e instanceof ApiError ? e.message : `failed: ${e.message}`;
  };
  count.addEventListener('click', async () => {
    confirm.disabled = true;
    try {
      const dry = await post('/v1/jobs/bulk',
        {action: action.value, filter, dry_run: true, ...every});
      said.textContent = `${wouldBe(dry)} (every page of this filter).`;
      confirm.disabled = dry.count === 0;
    } catch (e) {
      failed(e);
    }
  });
  confirm.addEventListener('click', async () => {
    confirm.disabled = true;
    try {
      const op = await post('/v1/jobs/bulk', {action: action.value, filter, ...every});
      said.textContent = '';
      if (await follow(op, progress, node)) ctx.flash(progress.textContent);
    } catch (e) {
      failed(e);
    }
  });
  const bulk = el('div', {id: 'bulk', class: 'actions operate'}, 'Every matching job: ', action,
    ' ', count, ' ', confirm, ' ', said, ' ', progress);

  const summary = el('p', {id: 'jobs-total', class: 'muted'});
  const body = el('section');
  const node = el('div', {class: 'page jobs'}, el('h1', {}, 'Jobs'), form, bulk, summary, body,
    pager);

  const page = new URLSearchParams(query);
  if (params.get('cursor')) page.set('cursor', params.get('cursor'));
  return {
    node,
    load: () => get(`/v1/jobs${page.toString() ? `?${page}` : ''}`),
    show: (data) => {
      summary.textContent = `${data.jobs.length} shown of ${data.total} matching, newest first`;
      body.replaceChildren(jobTable(data.jobs));
      if (data.next_cursor) {
        const next = new URLSearchParams(query);
        next.set('cursor', data.next_cursor);
        older.setAttribute('href', route(next));
      }
      older.hidden = !data.next_cursor;
    },
  };
}
