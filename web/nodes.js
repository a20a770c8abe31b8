// Nodes (GET /v1/nodes): each node's state (enabled, disabled, removed,
// unregistered), capacity, running jobs and live workers, with Disable /
// Enable (POST /v1/nodes/NAME/disable|enable, docs/nodes.md).
import {el, table} from './dom.js';
import {get, seg} from './api.js';

// As `warden nodes` prints it.
export function nodeState(n) {
  if (!n.registered) return 'unregistered';
  if (!n.present) return n.enabled ? 'removed' : 'removed, disabled';
  return n.enabled ? 'enabled' : 'disabled';
}

export function nodeTable(nodes, act) {
  const columns = [
    {title: 'node', cell: (n) => n.name},
    {title: 'state', cell: (n) => el('span', {class: n.takes_work ? 'badge' : 'badge state-dead'},
      nodeState(n))},
    {title: 'capacity', cell: (n) => (n.capacity === null ? '—' : String(n.capacity)),
      class: 'num'},
    {title: 'running', cell: (n) => String(n.running), class: 'num'},
    {title: 'live workers', cell: (n) => String(n.live_workers), class: 'num'},
  ];
  if (act) {
    columns.push({title: '', cell: (n) => {
      const verb = n.enabled ? 'disable' : 'enable';
      const button = el('button', {type: 'button', class: verb, 'data-action': verb},
        n.enabled ? 'Disable' : 'Enable');
      button.addEventListener('click', () => act(button, `/v1/nodes/${seg(n.name)}/${verb}`,
        (a) => `Node ${a.node} ${a.enabled ? 'enabled' : 'disabled'}` +
          (a.changed ? '.' : ' (it already was).')));
      return button;
    }});
  }
  return table(columns, nodes, {id: 'nodes', empty: 'no nodes: none is registered and no worker is live',
    rowAttrs: (n) => ({'data-node': n.name, 'data-state': nodeState(n)})});
}

export function render(params, ctx) {
  const body = el('section');
  const node = el('div', {class: 'page nodes'}, el('h1', {}, 'Nodes'),
    el('p', {class: 'muted'}, 'A disabled or removed node\'s workers claim nothing more: ' +
      'their running jobs finish, or are released after their shutdown timeout. ' +
      'A disabled node stays disabled through every sync.'),
    body);
  return {
    node,
    load: () => get('/v1/nodes'),
    show: (data) => body.replaceChildren(nodeTable(data.nodes, ctx.act)),
  };
}
