// Dead letters (GET /v1/jobs?state=dead): the jobs that failed for good,
// each with a Retry button (POST /v1/jobs/ID/retry).
import {el} from './dom.js';
import {get} from './api.js';
import {jobTable} from './jobs.js';

export function render(params, ctx) {
  const summary = el('p', {id: 'dead-total', class: 'muted'});
  const body = el('section');
  const node = el('div', {class: 'page dead'}, el('h1', {}, 'Dead letters'), summary, body);
  const retry = {title: '', cell: (j) => {
    const button = el('button', {type: 'button', class: 'retry', 'data-action': 'retry'}, 'Retry');
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
