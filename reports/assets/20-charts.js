// moesim report, part 2: the chart wrappers. ECharts (inlined from the pinned npm package) draws
// every chart; SVG for small charts (crisp in print), canvas for the timeline (thousands of events).
'use strict';
(function (M) {
  // Draws `option` into the container `id`; a missing container is a no-op (another report kind).
  M.chart = function (id, option, renderer) {
    var dom = document.getElementById(id);
    if (!dom) return null;
    option.animation = false;
    option.textStyle = option.textStyle || {fontFamily: 'system-ui, sans-serif'};
    var c = echarts.init(dom, null, {renderer: renderer || 'svg'});
    c.setOption(option);
    M.charts.push(c);
    return c;
  };
  // Replaces a chart container with a note when the document has no data for it.
  M.noChart = function (id, text) {
    var dom = document.getElementById(id);
    if (dom) dom.replaceWith(M.el('p', {class: 'note', id: id + '-none'}, text));
  };
  M.sizeFor = function (id, rows, perRow, minimum) {
    var dom = document.getElementById(id);
    if (dom) dom.style.height = Math.max(minimum, rows * perRow + 90) + 'px';
  };

  // Stacked horizontal bars: one bar per label, one segment per step-time category (seconds).
  M.breakdownChart = function (id, labels, breakdowns) {
    M.sizeFor(id, labels.length, 30, 200);
    M.chart(id, {
      tooltip: {trigger: 'axis', axisPointer: {type: 'shadow'}, valueFormatter: function (v) { return M.num(v, 4) + ' s'; }},
      legend: {top: 0},
      grid: {left: 10, right: 30, top: 40, bottom: 30, containLabel: true},
      xAxis: {type: 'value', name: 's', nameLocation: 'end'},
      yAxis: {type: 'category', data: labels, inverse: true},
      series: M.CATEGORIES.map(function (c) {
        return {name: c[0], type: 'bar', stack: 'step', itemStyle: {color: c[1]}, barMaxWidth: 26,
                data: breakdowns.map(function (b) { return b[c[0]] || 0; })};
      })
    });
  };

  // Per-stage peak memory, stacked by kind, against the GPU's capacity line (GiB).
  M.memoryChart = function (id, memory) {
    var st = memory.per_stage || [];
    if (!st.length) return M.noChart(id, 'No per-stage memory in this document.');
    var kinds = [['weights_bytes', 'weights', '#4e79a7'], ['grads_bytes', 'gradients', '#59a14f'],
                 ['optimizer_bytes', 'optimizer state', '#b07aa1'], ['activations_bytes', 'activations', '#f28e2b'],
                 ['buffers_bytes', 'buffers', '#76b7b2']];
    var series = kinds.map(function (k) {
      return {name: k[1], type: 'bar', stack: 'mem', itemStyle: {color: k[2]}, barMaxWidth: 60,
              data: st.map(function (s) { return +(s[k[0]] / M.GiB).toFixed(2); })};
    });
    // Context, fragmentation and the like: the rest of the peak.
    series.push({name: 'other', type: 'bar', stack: 'mem', itemStyle: {color: '#bab0ac'}, barMaxWidth: 60,
                 data: st.map(function (s) {
                   var sum = kinds.reduce(function (a, k) { return a + s[k[0]]; }, 0);
                   return +(Math.max(0, s.peak_bytes - sum) / M.GiB).toFixed(2);
                 })});
    var cap = memory.capacity_bytes / M.GiB;
    series[0].markLine = {symbol: 'none', silent: true, lineStyle: {color: '#c62828', type: 'dashed', width: 2},
                          label: {formatter: 'capacity ' + M.num(cap, 0) + ' GiB', position: 'insideEndTop'},
                          data: [{yAxis: +cap.toFixed(2)}]};
    var peak = Math.max.apply(null, st.map(function (s) { return s.peak_bytes / M.GiB; }));
    M.chart(id, {
      tooltip: {trigger: 'axis', axisPointer: {type: 'shadow'}, valueFormatter: function (v) { return M.num(v, 1) + ' GiB'; }},
      legend: {top: 0},
      grid: {left: 10, right: 30, top: 40, bottom: 40, containLabel: true},
      xAxis: {type: 'category', name: 'pipeline stage', nameLocation: 'middle', nameGap: 28, data: st.map(function (s) { return String(s.stage); })},
      yAxis: {type: 'value', name: 'GiB', max: 10 * Math.ceil(Math.max(cap, peak) * 1.05 / 10)},
      series: series
    });
  };

  // Zoomable op-level timeline of the critical ranks: one row per (rank, stream), rectangles per op.
  M.timelineChart = function (id, t) {
    // One row per (rank, stream) that has ops: idle streams (no CP on this layout, say) take no room.
    var rows = [], rowOf = {}, used = {};
    t.events.forEach(function (e) { used[e[0] + ':' + e[1]] = true; });
    t.processes.forEach(function (p, pi) {
      p.tracks.forEach(function (tr, ti) {
        if (used[pi + ':' + ti]) { rowOf[pi + ':' + ti] = rows.length; rows.push(p.name.split(' (')[0] + ' · ' + tr); }
      });
    });
    var data = t.events.map(function (e, i) {
      return {value: [rowOf[e[0] + ':' + e[1]], e[4], e[4] + e[5], i],
              itemStyle: {color: M.color(t.names[e[3]] || '')}};
    });
    M.sizeFor(id, rows.length, 26, 260);
    M.chart(id, {
      tooltip: {formatter: function (p) {
        var e = t.events[p.value[3]];
        var lines = ['<b>' + t.names[e[2]] + '</b> (' + t.names[e[3]] + (e[9] ? ', backward' : '') + ')',
                     t.processes[e[0]].name, 'start ' + M.num(e[4], 1) + ' µs · duration ' + M.num(e[5], 1) + ' µs'];
        if (e[6] > 0) lines.push(M.num(e[6] / 1e6, 2) + ' MB');
        if (e[7] > 0) lines.push(M.num(e[7] / 1e12, 3) + ' TFLOP');
        if (e[8] >= 0) lines.push('micro-batch ' + e[8]);
        if (e[10] > 1) lines.push(e[10] + ' neighbouring ops merged into this block (each op is in the trace)');
        return lines.join('<br>');
      }},
      grid: {left: 10, right: 30, top: 20, bottom: 70, containLabel: true},
      dataZoom: [{type: 'slider', xAxisIndex: 0, filterMode: 'weakFilter', bottom: 10},
                 {type: 'inside', xAxisIndex: 0, filterMode: 'weakFilter'}],
      xAxis: {type: 'value', name: 'ms', scale: true, axisLabel: {formatter: function (v) { return M.num(v / 1000, 1); }}},
      yAxis: {type: 'category', data: rows, inverse: true, axisLabel: {fontSize: 10}},
      series: [{type: 'custom', encode: {x: [1, 2], y: 0}, data: data, progressive: 0,
        renderItem: function (params, api) {
          var row = api.value(0), a = api.coord([api.value(1), row]), b = api.coord([api.value(2), row]);
          var h = api.size([0, 1])[1] * 0.7;
          var shape = echarts.graphic.clipRectByRect({x: a[0], y: a[1] - h / 2, width: Math.max(b[0] - a[0], 0.6), height: h},
            {x: params.coordSys.x, y: params.coordSys.y, width: params.coordSys.width, height: params.coordSys.height});
          return shape && {type: 'rect', shape: shape, style: {fill: api.visual('color')}};
        }}]
    }, 'canvas');
  };
})(window.MoesimReport);
