// Dead letters (GET /v1/jobs?state=dead): the jobs that failed for good,
// each with a Retry button (POST /v1/jobs/ID/retry), and Retry all /
// Delete all: a bulk operation on every dead job (POST /v1/jobs/bulk with
// the filter {"state": "dead"}), counted by a dry run and confirmed first.
import {el} from './dom.js';
import {get, post} from './api.js';
import {jobTable} from './jobs.js';
import {follow, wouldBe} from './bulk.js';

const FILTER = {state: 'dead'};

export function render(params, ctx) {
  const summary = el('p', {id: 'dead-total', class: 'muted'});
  const body = el('section');
  const said = el('span', {id: 'dead-said', class: 'muted'});
  const progress = el('span', {id: 'dead-progress'});
  const confirm = el('button', {type: 'button', id: 'dead-confirm', hidden: true}, 'Confirm');
  let pending = null;  // the action counted, waiting for its Confirm
  const ask = (action) => ctx.guard(async () => {
    confirm.hidden = true;
    const dry = await post('/v1/jobs/bulk', {action, filter: FILTER, dry_run: true});
    said.textContent = `${wouldBe(dry)}: every dead job, on every page.`;
    pending = action;
    confirm.textContent = action === 'delete' ? 'Confirm: delete them for good' : 'Confirm';
    confirm.hidden = dry.count === 0;
  });
  const retryAll = el('button', {type: 'button', id: 'retry-all'}, 'Retry all');
  const deleteAll = el('button', {type: 'button', id: 'delete-all'}, 'Delete all');
  retryAll.addEventListener('click', () => ask('retry'));
  deleteAll.addEventListener('click', () => ask('delete'));
  confirm.addEventListener('click', () => ctx.guard(async () => {
    confirm.hidden = true;
    said.textContent = '';
    const op = await post('/v1/jobs/bulk', {action: pending, filter: FILTER});
    if (await follow(op, progress, node)) ctx.flash(progress.textContent);
  }));
  const bulk = el('div', {id: 'dead-bulk', class: 'actions operate'}, retryAll, deleteAll,
    confirm, said, progress);
  const node = el('div', {class: 'page dead'}, el('h1', {}, 'Dead letters'), bulk, summary,
    body);
  const retry = {title: '', cell: (j) => {
    const button = el('button', {type: 'button', class: 'retry operate',
      'data-action': 'retry'}, 'Retry');
    button.addEventListener('click', () => ctx.act(button, `/v1/jobs/${j.id}/retry`,
      (a) => `Job ${a.id} is ${a.state} again.`));
    return button;
  }};
  return {
    node,
    load: () => get('/v1/jobs?state=dead&limit=100'),
    show: (data) => {
      summary.textContent = `${data.total} dead; the newest ${data.jobs.length} shown`;
      body.replaceChildren(jobTable(data.jobs, [retry]));
    },
  };
}
