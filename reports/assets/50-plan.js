// moesim report, part 5: the page of a plan (moesim.plan/1; `plan --html`, `merge --html`, `moesim report`).
'use strict';
(function (M) {
  // Why a layout ranks below the winner: its largest category loss against #1.
  function reason(row, best) {
    if (row.rank === 1) return 'winner';
    // Finalists are re-ranked by simulation; an estimate-only row can look faster than a simulated one.
    var prefix = row.fidelity !== best.fidelity ? 'estimate only (not among the simulated finalists); ' : '';
    var worst = null, d = 0;
    M.CATEGORIES.forEach(function (c) {
      var x = row.breakdown[c[0]] - best.breakdown[c[0]];
      if (x > d) { d = x; worst = c[0]; }
    });
    return prefix + (worst ? '+' + M.num(d, 3) + ' s ' + worst + ' vs #1' : 'no category slower than #1');
  }
  M.renderPlan = function (p, meta) {
    var req = p.request, s = req.scenario, w = p.winner, top = p.ranked[0];
    // Summary
    M.p('summary', 'Model ' + s.model.name + ' on ' + s.system.gpus + ' × ' + s.system.gpu + ' (' + s.system.preset + '), seq ' +
        s.training.seq_length + ', global batch ' + s.training.global_batch_size + ', objective ' + req.objective + ': ' +
        M.num(p.search.considered) + ' candidates searched, ' + M.num(p.search.feasible) + ' fit, ' +
        Math.min(req.finalists, p.search.feasible) + ' simulated op by op (every finalist, also those below the rows shown).');
    M.add('summary', M.el('p', {class: 'layout'}, 'Recommended: ' + M.layoutLabel(top.layout)));
    M.resultKpis('summary', w, top.peak_memory_bytes);
    M.verdict('summary', w);
    M.list('summary', p.explanation);
    if (p.vs_runner_up && p.vs_runner_up.length) {
      M.add('summary', M.el('h3', null, 'Winner vs runner-up (critical rank)'));
      M.add('summary', M.table(['category', 'winner s', 'runner-up s'], p.vs_runner_up.map(function (d) {
        return [d.category, M.n(M.num(d.winner_s, 4)), M.n(M.num(d.runner_up_s, 4))];
      })));
    }
    // Ranked
    M.add('ranked', M.table(['rank', 'layout', 'fidelity', 'step s', 'tokens/s/GPU', 'MFU', 'peak GiB', 'headroom GiB', 'why not first'],
      p.ranked.map(function (r) {
        return [M.n(r.rank), M.el('span', {class: 'layout'}, M.layoutLabel(r.layout)), r.fidelity, M.n(M.num(r.step_time_s, 3)),
                M.n(M.num(r.tokens_per_s_per_gpu, 0)), M.n(M.pct(r.mfu)), M.n(M.gib(r.peak_memory_bytes)),
                M.n(M.gib(r.memory_headroom_bytes)), reason(r, top)];
      }), function (i) { return i === 0 ? {class: 'winner'} : null; }));
    // Breakdown per layout
    M.p('breakdown', 'Step time of each ranked layout on its critical pipeline stage (the finalists simulated, the rest estimated).');
    M.breakdownChart('breakdown-chart', p.ranked.map(function (r) { return '#' + r.rank; }), p.ranked.map(function (r) { return r.breakdown; }));
    M.memorySection(w);
    M.p('timeline', 'A plan carries no op-level timeline. Simulate the recommended layout with `moesim simulate SCENARIO --html OUT` ' +
        '(its scenario is in the Inputs section with the layout above) for the zoomable timeline of the critical ranks.', 'note');
    // Rejections
    if (p.search.rejections.length) {
      M.add('rejected', M.table(['count', 'reason', 'first example', 'detail'], p.search.rejections.map(function (x) {
        // A rejection's example is a raw candidate: recompute is an index into the search space.
        var ex = Object.assign({}, x.example, {recompute: req.space.recompute[x.example.recompute]});
        return [M.n(M.num(x.count)), x.reason, M.el('span', {class: 'layout'}, M.layoutLabel(ex)), x.detail];
      })));
    } else {
      M.p('rejected', 'No candidate was rejected.');
    }
    // Precision advice
    M.p('precision', 'The winner\'s layout at each precision the GPU supports (estimate).');
    M.add('precision', M.table(['precision', 'speed-up', 'searched', 'fits', 'accuracy risk'], p.precision_advice.map(function (a) {
      return [a.precision, M.n(a.fits ? M.num(a.speedup, 2) + '×' : 'does not fit'), a.searched ? 'yes' : 'no', a.fits ? 'yes' : 'no', a.risk || 'baseline'];
    })));
    // Skew sensitivity
    if (p.skew_sensitivity.length) {
      M.p('skew', 'The top layouts re-simulated under log-normal expert popularity (every EP rank with its own load).');
      var ranks = [];
      p.skew_sensitivity.forEach(function (x) { if (ranks.indexOf(x.rank) < 0) ranks.push(x.rank); });
      M.chart('skew-chart', {
        tooltip: {trigger: 'axis', valueFormatter: function (v) { return M.num(v, 1) + ' %'; }},
        legend: {top: 0}, grid: {left: 10, right: 30, top: 40, bottom: 30, containLabel: true},
        xAxis: {type: 'value', name: 'σ', min: 0}, yAxis: {type: 'value', name: 'slow-down %'},
        series: ranks.map(function (rk) {
          return {name: '#' + rk, type: 'line', symbolSize: 8,
                  data: [[0, 0]].concat(p.skew_sensitivity.filter(function (x) { return x.rank === rk; })
                    .map(function (x) { return [x.sigma, +(100 * x.slowdown).toFixed(2)]; }))};
        })
      });
      M.add('skew', M.table(['rank', 'σ', 'step s', 'slow-down', 'worst EP-rank imbalance'], p.skew_sensitivity.map(function (x) {
        return [M.n(x.rank), M.n(M.num(x.sigma, 1)), M.n(M.num(x.step_time_s, 3)), M.n(M.pct(x.slowdown)), M.n(M.num(x.max_imbalance, 2))];
      })));
    } else {
      M.noChart('skew-chart', s.model.num_moe_experts ? 'Skew sensitivity was not requested (--no-skew).' : 'Dense model: no routing skew.');
    }
    // Pareto
    if (p.pareto.length) {
      M.p('pareto', p.pareto.length + ' layouts no other beats on throughput, memory headroom and GPU count at once.');
      M.chart('pareto-chart', {
        tooltip: {formatter: function (q) { var x = p.pareto[q.dataIndex];
          return M.layoutLabel(x.layout) + '<br>' + M.num(x.tokens_per_s, 0) + ' tokens/s · headroom ' + M.gib(x.memory_headroom_bytes) + ' GiB'; }},
        grid: {left: 10, right: 30, top: 30, bottom: 30, containLabel: true},
        xAxis: {type: 'value', name: 'memory headroom GiB', nameLocation: 'middle', nameGap: 25, scale: true},
        yAxis: {type: 'value', name: 'tokens/s', scale: true},
        series: [{type: 'scatter', symbolSize: 11, itemStyle: {color: '#4e79a7'},
                  data: p.pareto.map(function (x) { return [+(x.memory_headroom_bytes / M.GiB).toFixed(2), x.tokens_per_s]; })}]
      });
    } else {
      M.noChart('pareto-chart', 'No Pareto front in this plan.');
    }
    M.expertSection(w);
    M.topologySection(w);
    M.add('assumptions', M.el('h3', null, 'Held fixed'));
    M.list('assumptions', p.not_searched);
    M.add('assumptions', M.el('h3', null, 'Winner\'s simulation'));
    M.list('assumptions', M.assumptionLines(w));
    M.warnings('assumptions', w.warnings);
    M.inputs('The planning request: the base scenario and the search space as searched (JSON).', req);
  };
})(window.MoesimReport);
