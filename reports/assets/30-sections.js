// moesim report, part 3: the sections shared by result and plan pages, drawn from one
// moesim.result/1 document (a plan's winner is one).
'use strict';
(function (M) {
  M.resultKpis = function (section, r, peakBytes) {
    var mem = r.memory;
    M.kpis(section, [
      ['step time', M.num(r.step_time_s, 3) + ' s'],
      ['throughput', M.num(r.tokens_per_s, 0) + ' tok/s'],
      ['per GPU', M.num(r.tokens_per_s_per_gpu, 0) + ' tok/s'],
      ['model TFLOP/s per GPU', M.num(r.model_tflops_per_gpu, 0)],
      ['MFU', M.pct(r.mfu)],
      ['peak memory / capacity', M.gib(peakBytes || mem.peak_bytes) + ' / ' + M.gib(mem.capacity_bytes) + ' GiB']]);
  };
  M.verdict = function (section, r, extra) {
    var b = r.breakdown, bn = M.bottleneck(b), mem = r.memory;
    var text = (mem.fits ? 'Fits in memory (' + M.gib(mem.capacity_bytes - mem.peak_bytes) + ' GiB headroom on the fullest stage)'
                         : 'Does NOT fit in memory: peak ' + M.gib(mem.peak_bytes) + ' GiB > ' + M.gib(mem.capacity_bytes) + ' GiB') +
               '; compute is ' + M.pct(b.compute / r.step_time_s) + ' of the step on critical stage ' + b.critical_stage +
               ', the largest overhead is ' + bn + ' (' + M.num(b[bn], 3) + ' s).' + (extra || '');
    M.add(section, M.el('p', {class: mem.fits ? 'verdict' : 'verdict bad', id: 'verdict'}, text));
  };
  M.scenarioLine = function (section, s, layout) {
    M.add(section, M.el('p', {class: 'layout'},
      M.layoutLabel(M.layoutOf(s)) +
      ' · ' + layout.num_microbatches + ' micro-batches · seq ' + s.training.seq_length + ' · global batch ' + s.training.global_batch_size));
  };
  M.memorySection = function (r) {
    M.p('memory', 'Peak bytes per GPU on each pipeline stage by kind; the dashed line is the GPU\'s capacity (' +
        M.gib(r.memory.capacity_bytes) + ' GiB).');
    M.memoryChart('memory-chart', r.memory);
    M.add('memory', M.table(['stage', 'peak GiB', 'weights GiB', 'grads GiB', 'optimizer GiB', 'activations GiB', 'buffers GiB', 'peak at'],
      r.memory.per_stage.map(function (s) {
        return [s.stage, M.n(M.gib(s.peak_bytes)), M.n(M.gib(s.weights_bytes)), M.n(M.gib(s.grads_bytes)),
                M.n(M.gib(s.optimizer_bytes)), M.n(M.gib(s.activations_bytes)), M.n(M.gib(s.buffers_bytes)), s.peak_op];
      })));
  };
  // Per-EP-rank load: each simulated EP rank's compute time (its experts' tokens) against the mean.
  // Layers × experts: tokens per expert over the balanced share, from the result's routing.layers.
  M.expertHeatmap = function (r) {
    var layers = r.routing && r.routing.layers ? r.routing.layers : [];
    if (!layers.length) {
      return M.noChart('expert-heatmap', r.fidelity === 'simulation'
        ? 'Balanced routing: every expert gets its balanced share (no loads were drawn).'
        : 'Expert loads are drawn by the event simulation; this result is at fidelity ' + r.fidelity + '.');
    }
    var data = [], hottest = 1;
    layers.forEach(function (l, row) {
      l.expert_load.forEach(function (v, e) { data.push([e, row, v]); hottest = Math.max(hottest, v); });
    });
    M.p('expert-load', 'Tokens per expert and MoE layer over the balanced share (1 = balanced), averaged over the micro-batches ' +
        'the simulation drew; hottest expert ' + M.num(hottest, 2) + '×.');
    M.sizeFor('expert-heatmap', layers.length, 12, 240);
    M.chart('expert-heatmap', {
      tooltip: {formatter: function (p) {
        return 'layer ' + layers[p.value[1]].layer + ', expert ' + p.value[0] + ': ' + M.num(p.value[2], 3) + '× balanced';
      }},
      grid: {left: 10, right: 90, top: 20, bottom: 40, containLabel: true},
      xAxis: {type: 'category', name: 'expert', data: layers[0].expert_load.map(function (v, e) { return String(e); })},
      yAxis: {type: 'category', name: 'layer', data: layers.map(function (l) { return String(l.layer); }), inverse: true},
      visualMap: {min: 0, max: Math.max(2, hottest), calculable: true, orient: 'vertical', right: 0, top: 'middle',
                  inRange: {color: ['#f7fbff', '#6baed6', '#08306b']}},
      series: [{type: 'heatmap', data: data, progressive: 0}]
    });
  };
  M.expertSection = function (r) {
    var s = r.scenario;
    if (!s.model.num_moe_experts) {
      M.p('expert-load', 'Dense model: no experts.');
      M.noChart('expert-heatmap', 'No expert load to draw.');
      return M.noChart('expert-chart', 'No expert load to draw.');
    }
    M.expertHeatmap(r);
    if (r.routing) {
      M.kpis('expert-load', [['routing', s.moe.routing.distribution], ['draws', r.routing.draws],
        ['mean max/mean tokens', M.num(r.routing.mean_imbalance, 2)], ['worst max/mean tokens', M.num(r.routing.max_imbalance, 2)],
        ['dropped tokens', M.pct(r.routing.drop_rate)]]);
    } else {
      M.p('expert-load', 'Routing ' + s.moe.routing.distribution + ': every EP rank receives the same tokens (imbalance ' +
          M.num(r.breakdown.moe_imbalance, 2) + ').');
    }
    var ranks = r.simulation ? r.simulation.ranks : [];
    var byEp = {};
    ranks.forEach(function (x) { byEp[x.ep_rank] = Math.max(byEp[x.ep_rank] || 0, x.compute_s); });
    var eps = Object.keys(byEp).map(Number).sort(function (a, b) { return a - b; });
    if (eps.length < 2) return M.noChart('expert-chart', 'Only one EP rank was simulated (balanced routing): no per-EP-rank spread to draw.');
    var vals = eps.map(function (e) { return byEp[e]; });
    var mean = vals.reduce(function (a, b) { return a + b; }, 0) / vals.length;
    M.p('expert-load', 'Compute time of each simulated EP rank (the slowest rank of that EP index), which grows with the tokens its experts receive; ' +
        'max/mean ' + M.num(Math.max.apply(null, vals) / mean, 3) + '.');
    M.chart('expert-chart', {
      tooltip: {trigger: 'axis', valueFormatter: function (v) { return M.num(v, 4) + ' s'; }},
      grid: {left: 10, right: 30, top: 30, bottom: 30, containLabel: true},
      xAxis: {type: 'category', name: 'EP rank', data: eps.map(String)},
      yAxis: {type: 'value', name: 'compute s'},
      series: [{type: 'bar', data: vals, itemStyle: {color: '#ff9da7'},
                markLine: {symbol: 'none', data: [{yAxis: mean, name: 'mean'}], label: {formatter: 'mean'}, lineStyle: {color: '#555'}}}]
    });
  };
  // The cluster as the flow simulation routes on it: NVLink domains (GPUs, NVSwitches and NICs
  // folded into one node), leaf and spine switches, and the cables between them.
  M.topologyGraph = function () {
    var t = M.data('topology-data');
    if (!t || !t.nodes.length) return M.noChart('topology-graph', 'No topology in this document.');
    var colors = {nvlink_domain: '#4e79a7', leaf: '#f28e2b', spine: '#e15759'};
    var names = {nvlink_domain: 'NVLink domain', leaf: 'leaf switch', spine: 'spine switch'};
    var kinds = ['nvlink_domain', 'leaf', 'spine'];
    var maxCables = 1;
    t.edges.forEach(function (e) { maxCables = Math.max(maxCables, e.cables); });
    M.p('topology', t.description + ' Each NVLink domain is drawn as one node (its GPUs, NVSwitches and NICs); ' +
        'edges are the network cables between domains and switches, wider for more cables.');
    M.sizeFor('topology-graph', 1, 1, Math.min(700, 320 + 2 * t.nodes.length));
    M.chart('topology-graph', {
      tooltip: {formatter: function (p) {
        if (p.dataType === 'edge') return p.data.cables + ' cable(s), ' + M.num(p.data.bw / 1e9, 0) + ' GB/s each way';
        return p.data.name + (p.data.gpus ? ': ' + p.data.gpus + ' GPUs' : '');
      }},
      legend: {top: 0, data: kinds.map(function (k) { return names[k]; })},
      series: [{
        type: 'graph', layout: 'force', roam: true, draggable: true, top: 40,
        force: {repulsion: t.nodes.length > 60 ? 60 : 160, edgeLength: [30, 120], gravity: 0.15},
        categories: kinds.map(function (k) { return {name: names[k], itemStyle: {color: colors[k]}}; }),
        data: t.nodes.map(function (n) {
          return {name: n.name, gpus: n.gpus, category: kinds.indexOf(n.kind),
                  symbolSize: n.kind === 'nvlink_domain' ? 10 + Math.sqrt(n.gpus) * 3 : (n.kind === 'spine' ? 16 : 12)};
        }),
        links: t.edges.map(function (e) {
          return {source: e.a, target: e.b, cables: e.cables, bw: e.bandwidth_bytes_per_s,
                  lineStyle: {width: 0.5 + 3 * e.cables / maxCables, opacity: 0.5}};
        }),
        label: {show: t.nodes.length <= 40, fontSize: 9}
      }]
    });
  };
  M.topologySection = function (r) {
    var s = r.scenario, l = r.layout;
    M.kpis('topology', [['system', s.system.preset], ['GPU', s.system.gpu], ['GPUs', s.system.gpus], ['nodes', l.num_nodes],
                        ['DP × EDP', l.dp + ' × ' + l.edp]]);
    if (s.system.topology) M.p('topology', 'Topology file: ' + s.system.topology);
    M.topologyGraph();
    var links = r.simulation ? (r.simulation.links || []) : [];
    if (!links.length) return M.noChart('links-chart', 'No link activity in this document (fidelity ' + r.fidelity + ').');
    links = links.slice(0, 16);
    M.p('topology', 'The busiest links of the simulated step: mean utilisation over the step (bar) and peak.');
    M.sizeFor('links-chart', links.length, 24, 220);
    M.chart('links-chart', {
      tooltip: {trigger: 'axis', axisPointer: {type: 'shadow'}, valueFormatter: function (v) { return M.num(v, 1) + ' %'; }},
      legend: {top: 0},
      grid: {left: 10, right: 30, top: 30, bottom: 30, containLabel: true},
      xAxis: {type: 'value', name: '%', max: 100},
      yAxis: {type: 'category', inverse: true, data: links.map(function (k) { return k.name; }), axisLabel: {fontSize: 10}},
      series: [{name: 'mean utilisation', type: 'bar', itemStyle: {color: '#4e79a7'}, data: links.map(function (k) { return +(100 * k.utilisation).toFixed(2); })},
               {name: 'peak utilisation', type: 'bar', itemStyle: {color: '#a0cbe8'}, data: links.map(function (k) { return +(100 * k.peak_utilisation).toFixed(2); })}]
    });
  };
  M.assumptionLines = function (r) {
    var s = r.scenario;
    return ['fidelity ' + r.fidelity + ' · FLOP convention ' + r.flops_convention + ' · seed ' + r.seed,
            'attention backend ' + s.training.attention_backend + ' · distributed optimizer ' + s.optimizer.distributed +
              ' · overlap grad-reduce ' + s.optimizer.overlap_grad_reduce + ' · overlap param-gather ' + s.optimizer.overlap_param_gather,
            'sequence parallel ' + s.parallel.sequence_parallel + ' · TP comm overlap ' + s.parallel.tp_comm_overlap,
            s.model.num_moe_experts ? 'MoE dispatcher ' + s.moe.dispatcher + ' · capacity factor ' + (s.moe.capacity_factor === null ? 'none (dropless)' : s.moe.capacity_factor) +
              ' · routing ' + JSON.stringify(s.moe.routing) : 'dense model',
            'parameters: ' + M.num(r.params.total / 1e9, 2) + ' B total, ' + M.num(r.params.active / 1e9, 2) + ' B active per token'];
  };
  M.warnings = function (section, warnings) {
    if (!warnings || !warnings.length) return M.p(section, 'No warnings.');
    M.add(section, M.el('h3', null, 'Warnings'));
    M.add(section, M.el('ul', {class: 'warn'}, warnings.map(function (w) { return M.el('li', null, w); })));
  };
  M.inputs = function (label, obj) {
    M.p('inputs', label);
    M.add('inputs', M.el('pre', null, JSON.stringify(obj, null, 2)));
  };
})(window.MoesimReport);
