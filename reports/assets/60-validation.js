// moesim report, part 6: the page of a validation (moesim.validation/1; `validate --html`, `moesim report`):
// a measured run of the training proxy against its prediction, phase by phase.
'use strict';
(function (M) {
  function err(e) { return e === null || e === undefined ? 'n/a' : (e >= 0 ? '+' : '') + M.num(100 * e, 1) + ' %'; }
  M.renderValidation = function (v) {
    var m = v.measured;
    M.kpis('summary', [
      ['predicted step', M.num(v.predicted.step_time_s, 4) + ' s'],
      ['measured step', M.num(m.step_time_s, 4) + ' s'],
      ['step-time error', err(v.step_time_error)],
      ['peak-memory error', err(v.peak_memory_error)]
    ]);
    M.p('summary', v.within_bounds
      ? 'Within the bounds: step time within ±' + M.num(100 * v.bounds.step_time, 0) + ' % and peak memory within ±' +
        M.num(100 * v.bounds.peak_memory, 0) + ' % of the measurement.'
      : 'Outside the bounds (step time ±' + M.num(100 * v.bounds.step_time, 0) + ' %, peak memory ±' +
        M.num(100 * v.bounds.peak_memory, 0) + ' %): ' + v.worst_phase + ' diverged most.',
        v.within_bounds ? 'verdict' : 'verdict bad');
    M.p('summary', 'Measured: ' + m.source + ' — ' + m.steps + ' timed steps after ' + m.warmup + ' warm-up on ' + m.gpus +
        ' × ' + m.gpu + ', ' + m.layers + ' layers.');
    // Phases: table and paired bars.
    M.add('phases', M.table(['phase', 'predicted s', 'measured s', 'error'], v.phases.map(function (c) {
      return [c.phase, M.n(M.num(c.predicted_s, 6)), M.n(M.num(c.measured_s, 6)), M.n(err(c.error))];
    }).concat([['step', M.n(M.num(v.predicted.step_time_s, 6)), M.n(M.num(m.step_time_s, 6)), M.n(err(v.step_time_error))]])));
    var names = v.phases.map(function (c) { return c.phase; });
    M.chart('phases-chart', {
      tooltip: {trigger: 'axis', axisPointer: {type: 'shadow'}, valueFormatter: function (x) { return M.num(x, 6) + ' s'; }},
      legend: {top: 0}, grid: {left: 10, right: 30, top: 30, bottom: 30, containLabel: true},
      xAxis: {type: 'category', data: names}, yAxis: {type: 'value', name: 's per step'},
      series: [['predicted_s', 'predicted', '#4e79a7'], ['measured_s', 'measured', '#f28e2b']].map(function (k) {
        return {name: k[1], type: 'bar', itemStyle: {color: k[2]}, data: v.phases.map(function (c) { return c[k[0]]; })};
      })
    });
    M.list('proxy', v.proxy);
    M.inputs('The comparison as written by `moesim validate --json`:', v);
    return [v.scenario + ' · ' + m.gpus + ' × ' + m.gpu];
  };
})(window.MoesimReport);
