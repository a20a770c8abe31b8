// A bar chart as inline SVG, built element by element: one bar a time slot,
// the newest on the right, scaled to the largest value shown. The figure in
// its caption is the newest whole slot's: the last bar is the slot under way.
import {svg, el} from './dom.js';

const WIDTH = 600;
const HEIGHT = 120;

// values: numbers (oldest first), at most `slots` of them shown.
export function barChart({id, title, values, slots, unit, kind}) {
  const shown = values.slice(-slots);
  const peak = Math.max(0, ...shown);
  const max = Math.max(1, peak);
  const step = WIDTH / slots;
  const bars = shown.map((v, i) => {
    const h = (v / max) * (HEIGHT - 16);
    const x = (slots - shown.length + i) * step;
    return svg('rect', {x: x.toFixed(1), y: (HEIGHT - h).toFixed(1),
      width: Math.max(1, step - 1).toFixed(1), height: h.toFixed(1), class: `bar ${kind}`},
    svg('title', {}, `${formatRate(v)} ${unit}`));
  });
  const last = shown.length >= 2 ? shown[shown.length - 2] : 0;
  return el('figure', {id, class: 'chart'},
    el('figcaption', {}, title, ': ', el('strong', {class: 'now'}, formatRate(last)), ` ${unit}`,
      el('span', {class: 'muted'}, ` (peak ${formatRate(peak)})`)),
    svg('svg', {viewBox: `0 0 ${WIDTH} ${HEIGHT}`, preserveAspectRatio: 'none', role: 'img',
      'aria-label': title},
    svg('line', {x1: 0, y1: HEIGHT - 0.5, x2: WIDTH, y2: HEIGHT - 0.5, class: 'axis'}),
    bars));
}

function formatRate(v) {
  return v >= 10 ? String(Math.round(v)) : v.toFixed(1).replace(/\.0$/, '');
}
