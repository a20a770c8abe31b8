// One job (GET /v1/jobs/ID): its fields, payload, result and checkpoint,
// why it is not running (/why), every attempt (worker, times, outcome, exit
// code, signal, the tails of stderr and stdout), and its recovery timeline
// (/timeline: operators' actions and each end with why among them), with
// Run now (a job waiting for its time), Retry, Retry fresh (without the
// checkpoint), Cancel and (a finished job) Delete.
import {el, table, time, duration, jsonBlock, plural, stateBadge, attemptsText} from './dom.js';
import {get} from './api.js';

// The server refuses (409) a retry of these (a scheduled job is run now,
// not retried: POST /v1/jobs/ID/run-now), and a cancel of the finished.
const NO_RETRY = ['running', 'succeeded', 'scheduled'];
const FINISHED = ['succeeded', 'dead', 'cancelled', 'expired'];
// What POST /v1/jobs/ID/run-now makes due at once (409 for the rest).
const WAITING = ['scheduled', 'retryable'];

export function render(params, ctx) {
  const id = ctx.match[1];
  const retry = el('button', {type: 'button', id: 'retry'}, 'Retry');
  // A retry keeps the checkpoint (the job resumes where it was); this one
  // drops it, and the job starts over.
  const fresh = el('button', {type: 'button', id: 'retry-fresh',
    title: 'Retry without the checkpoint: the job starts over'}, 'Retry fresh');
  const runNow = el('button', {type: 'button', id: 'run-now', hidden: true}, 'Run now');
  const cancel = el('button', {type: 'button', id: 'cancel'}, 'Cancel');
  const del = el('button', {type: 'button', id: 'delete'}, 'Delete');
  const sure = el('button', {type: 'button', id: 'delete-confirm', hidden: true},
    'Delete for good');
  del.addEventListener('click', () => { sure.hidden = false; });
  sure.addEventListener('click', () => ctx.act(sure, `/v1/jobs/${id}`,
    (a) => `Job ${a.id} deleted, with its attempts.`,
    {method: 'DELETE', then: () => { location.hash = '#/jobs'; }}));
  retry.addEventListener('click', () => ctx.act(retry, `/v1/jobs/${id}/retry`,
    (a) => `Job ${a.id} is ${a.state} again.`));
  fresh.addEventListener('click', () => ctx.act(fresh, `/v1/jobs/${id}/retry`,
    (a) => `Job ${a.id} is ${a.state} again, without its checkpoint.`,
    {body: {fresh: true}}));
  runNow.addEventListener('click', () => ctx.act(runNow, `/v1/jobs/${id}/run-now`,
    (a) => `Job ${a.id} is ${a.state} now, its attempts as they were.`));
  cancel.addEventListener('click', () => ctx.act(cancel, `/v1/jobs/${id}/cancel`,
    (a) => (a.cancel_requested ? `Job ${a.id} is being stopped by its worker.`
      : `Job ${a.id} is ${a.state}.`)));
  const state = el('span', {id: 'job-state'});
  const fields = el('section', {id: 'job-fields'});
  const payload = el('section', {id: 'payload'});
  const result = el('section', {id: 'result'});
  const checkpoint = el('section', {id: 'checkpoint'});
  const attempts = el('section', {id: 'attempts-section'});
  const why = el('section', {id: 'why'});
  const timeline = el('section', {id: 'timeline-section'});
  const node = el('div', {class: 'page job'},
    el('h1', {}, `Job ${id} `, state),
    el('div', {class: 'actions operate'}, runNow, retry, fresh, cancel, del, sure),
    fields,
    el('div', {class: 'columns'},
      el('div', {}, el('h2', {}, 'Payload'), payload),
      el('div', {}, el('h2', {}, 'Result'), result),
      el('div', {}, el('h2', {}, 'Checkpoint'), checkpoint)),
    el('h2', {}, 'Why is it not running?'), why,
    el('h2', {}, 'Attempts'), attempts,
    el('h2', {}, 'Recovery timeline'), timeline);

  function show({j, reasons, events}) {
    state.replaceChildren(stateBadge(j.state));
    runNow.hidden = !WAITING.includes(j.state);
    retry.disabled = NO_RETRY.includes(j.state);
    fresh.disabled = retry.disabled;
    cancel.disabled = FINISHED.includes(j.state);
    // The server refuses (409) to delete a job not finished.
    del.disabled = !FINISHED.includes(j.state);
    if (del.disabled) sure.hidden = true;
    fields.replaceChildren(facts([
      ['queue', el('a', {href: `#/jobs?queue=${encodeURIComponent(j.queue)}`}, j.queue)],
      ['task', j.task],
      ['command', j.command ? el('code', {}, j.command) : '—'],
      ['attempts', `${attemptsText(j)}; ` +
        `${plural(j.crashes, 'crash', 'crashes')} of ${j.max_crashes}`],
      ['priority', String(j.priority)],
      ['delivery', `${j.delivery}, retry ${j.retry}`],
      ['worker', j.worker_name ?? (j.worker === null ? '—' : String(j.worker))],
      ['created', time(j.created_at)],
      ['runs at', time(j.run_at)],
      ['started', time(j.started_at)],
      ['finished', time(j.finished_at)],
      ['lease expires', time(j.lease_expires_at)],
      ['last error', j.last_error ? `${j.last_error}: ${j.last_error_message ?? ''}` : '—'],
      ['unique key', j.unique_key ?? '—'],
      ['concurrency key', j.concurrency_key ?? '—'],
    ]));
    payload.replaceChildren(jsonBlock(j.payload));
    result.replaceChildren(jsonBlock(j.result));
    checkpoint.replaceChildren(jsonBlock(j.checkpoint));
    attempts.replaceChildren(attemptTable(j.attempts));
    why.replaceChildren(el('ul', {id: 'why-reasons'}, reasons.map((r) =>
      el('li', {'data-code': r.code}, el('code', {}, r.code), ' ', r.message))));
    timeline.replaceChildren(timelineTable(events));
  }

  const load = () => Promise.all([get(`/v1/jobs/${id}`), get(`/v1/jobs/${id}/why`),
    get(`/v1/jobs/${id}/timeline`)]).then(([j, w, t]) =>
    ({j, reasons: w.reasons, events: t.events}));
  return {node, load, show};
}

// Each event on its own row: a loss says how it was found (lost_by), a late
// write which lease it carried.
function timelineTable(events) {
  return table([
    {title: 'at', cell: (e) => time(e.at)},
    {title: '#', cell: (e) => text(e.attempt), class: 'num'},
    {title: 'event', cell: (e) => el('span', {class: `event event-${e.kind}`}, e.kind)},
    {title: 'what happened', cell: (e) => e.text},
  ], events, {id: 'timeline', empty: 'nothing yet',
    rowAttrs: (e) => ({'data-kind': e.kind, 'data-lost-by': e.evidence?.lost_by ?? null})});
}

function facts(pairs) {
  return el('dl', {class: 'facts'}, pairs.map(([k, v]) => [el('dt', {}, k), el('dd', {}, v)]));
}

// A value that may be null as text ('' for null).
function text(value) {
  return value === null || value === undefined ? '' : String(value);
}

function tail(output) {
  return output ? el('pre', {class: 'tail'}, output) : '';
}

function attemptTable(attempts) {
  const took = (a) => (a.finished_at
    ? duration((Date.parse(a.finished_at) - Date.parse(a.claimed_at)) / 1000) : '');
  return table([
    {title: '#', cell: (a) => String(a.attempt), class: 'num'},
    {title: 'worker', cell: (a) => a.worker_name ?? String(a.worker)},
    {title: 'claimed', cell: (a) => time(a.claimed_at)},
    {title: 'finished', cell: (a) => time(a.finished_at)},
    {title: 'took', cell: took},
    {title: 'outcome', cell: (a) => el('span', {class: `outcome outcome-${a.outcome ?? 'running'}`},
      a.outcome ?? 'running')},
    {title: 'exit code', cell: (a) => text(a.error?.exit_code), class: 'num'},
    {title: 'signal', cell: (a) => text(a.error?.signal), class: 'num'},
    {title: 'message', cell: (a) => a.error?.message ?? a.note ?? ''},
    {title: 'stderr tail', cell: (a) => tail(a.error?.stderr_tail)},
    {title: 'stdout tail', cell: (a) => tail(a.error?.stdout_tail)},
  ], attempts, {id: 'attempts', empty: 'not claimed yet',
    rowAttrs: (a) => ({'data-attempt': String(a.attempt), 'data-outcome': a.outcome ?? 'running'})});
}
