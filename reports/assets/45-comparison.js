// moesim report, part 4b: two results or plans side by side (`moesim report A.json B.json -o OUT.html`);
// a plan stands for its winner.
'use strict';
(function (M) {
  // Every leaf of two scenario echoes that differs, as [path, left, right].
  function differences(a, b, path, out) {
    var isObj = function (x) { return x !== null && typeof x === 'object' && !Array.isArray(x); };
    if (isObj(a) && isObj(b)) {
      var keys = Object.keys(a).concat(Object.keys(b).filter(function (k) { return !(k in a); }));
      keys.forEach(function (k) { differences(a[k], b[k], path ? path + '.' + k : k, out); });
    } else if (JSON.stringify(a) !== JSON.stringify(b)) {
      out.push([path, a === undefined ? '–' : JSON.stringify(a), b === undefined ? '–' : JSON.stringify(b)]);
    }
    return out;
  }
  M.renderComparison = function (c) {
    var l = c.left.result, r = c.right.result;
    var names = [c.left.label + ' (' + c.left.kind + ')', c.right.label + ' (' + c.right.kind + ')'];
    var ratio = function (x, y) { return x > 0 ? M.num(y / x, 3) + '×' : '–'; };
    M.p('summary', 'Left: ' + names[0] + ' — ' + l.scenario.name + '. Right: ' + names[1] + ' — ' + r.scenario.name + '.');
    var rows = [
      ['layout', M.layoutLabel(M.layoutOf(l.scenario)), M.layoutLabel(M.layoutOf(r.scenario)), ''],
      ['GPUs', M.n(l.scenario.system.gpus + ' × ' + l.scenario.system.gpu), M.n(r.scenario.system.gpus + ' × ' + r.scenario.system.gpu), ''],
      ['fidelity', l.fidelity, r.fidelity, ''],
      ['step time s', M.n(M.num(l.step_time_s, 4)), M.n(M.num(r.step_time_s, 4)), M.n(ratio(l.step_time_s, r.step_time_s))],
      ['tokens/s per GPU', M.n(M.num(l.tokens_per_s_per_gpu, 0)), M.n(M.num(r.tokens_per_s_per_gpu, 0)), M.n(ratio(l.tokens_per_s_per_gpu, r.tokens_per_s_per_gpu))],
      ['tokens/s', M.n(M.num(l.tokens_per_s, 0)), M.n(M.num(r.tokens_per_s, 0)), M.n(ratio(l.tokens_per_s, r.tokens_per_s))],
      ['MFU', M.n(M.pct(l.mfu)), M.n(M.pct(r.mfu)), ''],
      ['peak memory GiB', M.n(M.gib(l.memory.peak_bytes)), M.n(M.gib(r.memory.peak_bytes)), M.n(ratio(l.memory.peak_bytes, r.memory.peak_bytes))],
      ['fits', l.memory.fits ? 'yes' : 'NO', r.memory.fits ? 'yes' : 'NO', '']];
    M.add('summary', M.table(['', 'left', 'right', 'right / left'], rows));
    M.breakdownChart('breakdown-chart', names, [l.breakdown, r.breakdown]);
    M.add('breakdown', M.table(['category', 'left s', 'right s', 'right − left s'], M.CATEGORIES.map(function (k) {
      var n = k[0];
      return [n, M.n(M.num(l.breakdown[n], 4)), M.n(M.num(r.breakdown[n], 4)), M.n(M.num(r.breakdown[n] - l.breakdown[n], 4))];
    })));
    var stages = Math.max(l.memory.per_stage.length, r.memory.per_stage.length), mem = [];
    for (var i = 0; i < stages; i++) {
      var a = l.memory.per_stage[i], b = r.memory.per_stage[i];
      mem.push([i, M.n(a ? M.gib(a.peak_bytes) : '–'), M.n(b ? M.gib(b.peak_bytes) : '–')]);
    }
    M.add('memory', M.table(['stage', 'left peak GiB', 'right peak GiB'], mem));
    var diff = differences(l.scenario, r.scenario, '', []);
    if (diff.length) M.add('differences', M.table(['field', 'left', 'right'], diff));
    else M.p('differences', 'The two scenarios are the same: the results differ by fidelity or moesim version only.');
    M.inputs('The left scenario as understood:', l.scenario);
    M.inputs('The right scenario as understood:', r.scenario);
    return [names[0] + ' vs ' + names[1]];
  };
})(window.MoesimReport);
