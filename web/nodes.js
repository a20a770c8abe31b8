// Nodes (GET /v1/nodes): each node's state (enabled, disabled, removed,
// unregistered), capacity, running jobs and live workers, with Disable /
// Enable (POST /v1/nodes/NAME/disable|enable, docs/nodes.md); a form that
// adds a node or sets its capacity (PUT /v1/nodes/NAME, `warden nodes
// add`), and Remove on a registered one (DELETE /v1/nodes/NAME, asked
// twice: its workers claim nothing more and drain).
import {el, table} from './dom.js';
import {get, seg} from './api.js';

// As `warden nodes` prints it.
export function nodeState(n) {
  if (!n.registered) return 'unregistered';
  if (!n.present) return n.enabled ? 'removed' : 'removed, disabled';
  return n.enabled ? 'enabled' : 'disabled';
}

export function nodeTable(nodes, act, asked = new Set()) {
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
      const button = el('button', {type: 'button', class: `${verb} operate`,
        'data-action': verb},
        n.enabled ? 'Disable' : 'Enable');
      button.addEventListener('click', () => act(button, `/v1/nodes/${seg(n.name)}/${verb}`,
        (a) => `Node ${a.node} ${a.enabled ? 'enabled' : 'disabled'}` +
          (a.changed ? '.' : ' (it already was).')));
      return button;
    }});
    columns.push({title: '', cell: (n) => removeButton(n, act, asked)});
  }
  return table(columns, nodes, {id: 'nodes', empty: 'no nodes: none is registered and no worker is live',
    rowAttrs: (n) => ({'data-node': n.name, 'data-state': nodeState(n)})});
}

// Remove, then its confirmation; `asked`: the nodes whose Remove was
// pressed once (the table is redrawn at each change, the question stays).
function removeButton(n, act, asked) {
  if (!n.registered || !n.present) return '';
  if (!asked.has(n.name)) {
    const button = el('button', {type: 'button', class: 'operate', 'data-action': 'remove'},
      'Remove');
    button.addEventListener('click', () => {
      asked.add(n.name);
      button.replaceWith(removeButton(n, act, asked));
    });
    return button;
  }
  const sure = el('button', {type: 'button', class: 'operate', 'data-action': 'remove-confirm'},
    'Remove: its workers drain');
  sure.addEventListener('click', () => {
    asked.delete(n.name);
    act(sure, `/v1/nodes/${seg(n.name)}`,
      (a) => `Node ${a.node} ${a.changed ? 'removed' : 'was removed already'}.`,
      {method: 'DELETE'});
  });
  return sure;
}

// Adds a node, or sets a registered one's capacity (empty: no limit).
function nodeForm(act) {
  const name = el('input', {id: 'node-name', name: 'node', required: true,
    placeholder: 'web-1'});
  const capacity = el('input', {id: 'node-capacity', name: 'capacity', type: 'number', min: 1,
    max: 1000000, placeholder: 'no limit'});
  const submit = el('button', {type: 'submit'}, 'Add or resize');
  return el('form', {id: 'node-form', class: 'filters operate', onsubmit: (event) => {
    event.preventDefault();
    const n = name.value.trim();
    act(submit, `/v1/nodes/${seg(n)}`,
      (a) => `Node ${a.node} ${capacity.value ? `has capacity ${capacity.value}`
        : 'has no capacity limit'}${a.changed ? '.' : ' (it already had).'}`,
      {method: 'PUT', body: {capacity: capacity.value ? Number(capacity.value) : null}});
  }}, el('label', {}, 'Node ', name), el('label', {}, 'Capacity ', capacity), submit);
}

export function render(params, ctx) {
  const body = el('section');
  const asked = new Set();
  const node = el('div', {class: 'page nodes'}, el('h1', {}, 'Nodes'),
    el('p', {class: 'muted'}, 'A disabled or removed node\'s workers claim nothing more: ' +
      'their running jobs finish, or are released after their shutdown timeout. ' +
      'A disabled node stays disabled through every sync.'),
    nodeForm(ctx.act), body);
  return {
    node,
    load: () => get('/v1/nodes'),
    show: (data) => body.replaceChildren(nodeTable(data.nodes, ctx.act, asked)),
  };
}
