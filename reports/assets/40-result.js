// moesim report, part 4: the page of one result (moesim.result/1; `simulate --html`, `moesim report`).
'use strict';
(function (M) {
  M.renderResult = function (r, meta, timeline) {
    var s = r.scenario;
    // Summary
    M.scenarioLine('summary', s, r.layout);
    M.resultKpis('summary', r);
    M.verdict('summary', r, r.routing ? ' Routing imbalance (max/mean tokens per EP rank): ' + M.num(r.routing.max_imbalance, 2) + '.' : '');
    if (meta.trace_href) {
      M.add('summary', M.el('p', null, ['Op-level trace of this step for Perfetto or chrome://tracing: ',
        M.el('a', {href: meta.trace_href, id: 'trace-link'}, meta.trace_href)]));
    }
    // Breakdown on the critical stage, then every simulated rank's activity.
    M.p('breakdown', 'Step time on the critical pipeline stage (' + r.breakdown.critical_stage + ') by category; exposed communication ' +
        M.num(r.breakdown.exposed_comm, 3) + ' s.');
    if (r.whatif) {
      // whatif.kernel_speedup: the same question with the kernels as predicted, side by side.
      var w = r.whatif, b0 = w.baseline.breakdown;
      M.p('breakdown', 'What-if: ' + Object.keys(w.kernel_speedup).map(function (k) { return k + ' ' + w.kernel_speedup[k] + '× faster'; }).join(', ') +
          '. Step ' + M.num(r.step_time_s, 3) + ' s against ' + M.num(w.baseline.step_time_s, 3) + ' s with the kernels as predicted (' +
          M.num(w.step_speedup, 3) + '× the throughput; ' + M.num(w.baseline.tokens_per_s_per_gpu, 0) + ' → ' + M.num(r.tokens_per_s_per_gpu, 0) +
          ' tok/s per GPU).', 'whatif');
      M.breakdownChart('breakdown-chart', ['as predicted', 'what-if'], [b0, r.breakdown]);
      M.add('breakdown', M.table(['category', 'as predicted s', 'what-if s', 'change s'], M.CATEGORIES.map(function (c) {
        var k = c[0];
        return [k, M.n(M.num(b0[k], 4)), M.n(M.num(r.breakdown[k], 4)), M.n(M.num(r.breakdown[k] - b0[k], 4))];
      })));
    } else {
      M.breakdownChart('breakdown-chart', ['stage ' + r.breakdown.critical_stage], [r.breakdown]);
    }
    var ranks = r.simulation ? r.simulation.ranks : [];
    if (ranks.length) {
      M.p('breakdown', 'Each simulated rank (' + r.simulation.ranks_simulated + ' of ' + r.simulation.ranks_total +
          '; the others replicate them): busy computing, waiting on communication, idle.');
      M.sizeFor('ranks-chart', ranks.length, 22, 200);
      var labels = ranks.map(function (x) { return 'rank ' + x.rank + ' (stage ' + x.stage + ', EP ' + x.ep_rank + ')'; });
      M.chart('ranks-chart', {
        tooltip: {trigger: 'axis', axisPointer: {type: 'shadow'}, valueFormatter: function (v) { return M.num(v, 4) + ' s'; }},
        legend: {top: 0}, grid: {left: 10, right: 30, top: 30, bottom: 30, containLabel: true},
        xAxis: {type: 'value', name: 's'}, yAxis: {type: 'category', data: labels, inverse: true, axisLabel: {fontSize: 10}},
        series: [['compute_s', 'compute', '#4e79a7'], ['comm_wait_s', 'waiting on communication', '#e15759'], ['idle_s', 'idle', '#bab0ac']].map(function (k) {
          return {name: k[1], type: 'bar', stack: 'rank', itemStyle: {color: k[2]}, data: ranks.map(function (x) { return x[k[0]]; })};
        })
      });
    } else {
      M.noChart('ranks-chart', 'Per-rank activity comes from the event simulation; this result is at fidelity ' + r.fidelity + '.');
    }
    M.memorySection(r);
    // Timeline
    if (timeline && timeline.events.length) {
      M.p('timeline', 'The ' + timeline.processes.length + ' ranks that finish last, one row per stream. Drag the slider or scroll to zoom; ' +
          'hover an op for its bytes and FLOPs.' + (timeline.events.length < timeline.events_total ? ' The ' + M.num(timeline.events_total) +
          ' ops are drawn as ' + M.num(timeline.events.length) + ' blocks (neighbouring ops of one kind merged' +
          (timeline.events_shown < timeline.events_total ? ', ' + M.num(timeline.events_total - timeline.events_shown) + ' short ops left out' : '') +
          '); every op is in the Perfetto trace.' : ''));
      M.timelineChart('timeline-chart', timeline);
    } else {
      M.noChart('timeline-chart', r.fidelity === 'simulation'
        ? 'This page was made from a JSON file, which carries no timeline: `moesim simulate SCENARIO --html OUT` draws it.'
        : 'The closed-form estimate has no timeline: simulate at fidelity simulation.');
    }
    M.expertSection(r);
    M.topologySection(r);
    M.list('assumptions', M.assumptionLines(r));
    M.warnings('assumptions', r.warnings);
    M.inputs('The scenario as understood, every default filled in (re-loadable with `moesim simulate`):', s);
    return [s.name + ' · ' + s.system.gpus + ' × ' + s.system.gpu + ' · moesim ' + r.moesim_version];
  };
})(window.MoesimReport);
