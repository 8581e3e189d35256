// moesim report, part 1: DOM and number helpers shared by the section renderers.
// The page embeds its data as JSON (<script type="application/json">); nothing is fetched.
'use strict';
var M = window.MoesimReport = {charts: []};
M.GiB = 1024 * 1024 * 1024;
// Step-time categories of the result contract (docs/reports.md), in stacking order, with colours
// that stay distinct in greyscale print.
M.CATEGORIES = [
  ['compute', '#4e79a7'], ['bubble', '#bab0ac'], ['tp_comm', '#f28e2b'], ['cp_comm', '#edc948'],
  ['ep_comm', '#e15759'], ['pp_comm', '#76b7b2'], ['dp_comm', '#59a14f'], ['offload_comm', '#9c755f'],
  ['optimizer', '#b07aa1'], ['host_idle', '#d37295']];
M.color = function (name) {
  for (var i = 0; i < M.CATEGORIES.length; i++) if (name.indexOf(M.CATEGORIES[i][0]) === 0) return M.CATEGORIES[i][1];
  if (/moe|expert|router|permute|grouped/.test(name)) return '#ff9da7';
  if (/send|recv|activation|p2p/.test(name)) return '#76b7b2';
  return '#9c755f';
};
M.data = function (id) {
  var e = document.getElementById(id);
  return e ? JSON.parse(e.textContent) : null;
};
// el('td', {class: 'n'}, 'text' | Node | [children])
M.el = function (tag, attrs, children) {
  var e = document.createElement(tag);
  if (attrs) Object.keys(attrs).forEach(function (k) { e.setAttribute(k, attrs[k]); });
  (Array.isArray(children) ? children : children === undefined ? [] : [children]).forEach(function (c) {
    e.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
  });
  return e;
};
M.body = function (section) { return document.querySelector('#' + section + ' .body'); };
M.add = function (section, node) { var b = M.body(section); if (b) b.appendChild(node); return node; };
M.p = function (section, text, cls) { return M.add(section, M.el('p', cls ? {class: cls} : null, text)); };
M.num = function (x, digits) {
  if (x === null || x === undefined || !isFinite(x)) return '–';
  return Number(x).toLocaleString('en-US', {minimumFractionDigits: digits || 0, maximumFractionDigits: digits || 0});
};
M.gib = function (bytes) { return M.num(bytes / M.GiB, 1); };
M.pct = function (x) { return M.num(100 * x, 1) + ' %'; };
// A table from a header row and rows of cells; a cell is a value or {v, cls}.
M.table = function (head, rows, rowClass) {
  var t = M.el('table');
  // A numeric column (its first cell is M.n) gets a right-aligned header too.
  var first = rows.length ? rows[0] : [];
  t.appendChild(M.el('tr', null, head.map(function (h, i) {
    var c = first[i];
    return M.el('th', c && typeof c === 'object' && !(c instanceof Node) && c.cls === 'n' ? {class: 'n'} : null, h);
  })));
  rows.forEach(function (r, i) {
    t.appendChild(M.el('tr', rowClass ? rowClass(i) : null, r.map(function (c) {
      return c !== null && typeof c === 'object' && !(c instanceof Node) ? M.el('td', {class: c.cls}, c.v) : M.el('td', null, c);
    })));
  });
  return t;
};
M.n = function (v) { return {v: v, cls: 'n'}; };
M.kpis = function (section, items) {
  M.add(section, M.el('div', {class: 'kpis'}, items.map(function (k) {
    return M.el('div', {class: 'kpi'}, [M.el('span', null, k[0]), M.el('b', null, k[1])]);
  })));
};
M.list = function (section, lines) {
  if (lines && lines.length) M.add(section, M.el('ul', null, lines.map(function (l) { return M.el('li', null, l); })));
};
// "TP2 CP1 PP4 VPP1 EP8 ETP1 DP8 · mbs 1 · selective · bf16" from a scenario or a plan layout.
M.layoutLabel = function (l) {
  var rc = l.recompute ? l.recompute.granularity + (l.recompute.modules && l.recompute.modules.length ? '(' + l.recompute.modules.join(',') + ')' : '') : '';
  var s = 'TP' + l.tp + ' CP' + l.cp + ' PP' + l.pp + ' VPP' + l.vpp;
  if (l.ep !== undefined) s += ' EP' + l.ep + ' ETP' + l.etp;
  if (l.dp !== undefined) s += ' DP' + l.dp;
  if (l.micro_batch_size !== undefined) s += ' · mbs ' + l.micro_batch_size;
  if (rc) s += ' · ' + rc;
  if (l.precision) s += ' · ' + l.precision;
  if (l.dispatcher) s += ' · ' + l.dispatcher;
  return s;
};
// A scenario echo's layout in the form layoutLabel reads.
M.layoutOf = function (s) {
  var p = s.parallel;
  return {tp: p.tp, cp: p.cp, pp: p.pp, vpp: p.vpp, ep: p.ep, etp: p.etp, dp: p.dp,
          micro_batch_size: s.training.micro_batch_size, recompute: s.recompute, precision: s.precision};
};
// The largest non-compute category of a breakdown: what limits the step.
M.bottleneck = function (b) {
  var best = null;
  M.CATEGORIES.forEach(function (c) {
    if (c[0] !== 'compute' && (best === null || b[c[0]] > b[best])) best = c[0];
  });
  return best;
};
