// The audit log (GET /v1/audit): who paused, resumed, retried, cancelled,
// released or made tokens, and when, newest first.
import {el, table, time} from './dom.js';
import {get} from './api.js';

export function render() {
  const body = el('section');
  const node = el('div', {class: 'page audit'}, el('h1', {}, 'Audit log'), body);
  return {
    node,
    load: () => get('/v1/audit?limit=100'),
    show: ({entries}) => body.replaceChildren(table([
      {title: 'id', cell: (e) => String(e.id), class: 'num'},
      {title: 'at', cell: (e) => time(e.at)},
      {title: 'actor', cell: (e) => e.actor},
      {title: 'action', cell: (e) => e.action},
      {title: 'target', cell: (e) => e.target},
      {title: 'count', cell: (e) => String(e.count), class: 'num'},
    ], entries, {id: 'audit', empty: 'nothing done yet',
      rowAttrs: (e) => ({'data-action': e.action})})),
  };
}
