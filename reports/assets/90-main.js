// moesim report, last part: picks the document embedded in the page, draws it, builds the table of
// contents and keeps the charts sized for screen and print. Sets the body's data-rendered attribute to ok when done
// (the browser test waits for it).
'use strict';
(function (M) {
  var plan = M.data('plan-data'), result = M.data('result-data'), validation = M.data('validation-data');
  var comparison = M.data('comparison-data');
  var meta = M.data('report-meta') || {};
  if (comparison) M.renderComparison(comparison);
  else if (plan) M.renderPlan(plan, meta);
  else if (validation) M.renderValidation(validation);
  else M.renderResult(result, meta, M.data('timeline-data'));
  var toc = document.getElementById('toc');
  Array.prototype.forEach.call(document.querySelectorAll('section'), function (sec) {
    toc.appendChild(M.el('a', {href: '#' + sec.id}, sec.querySelector('h2').textContent));
  });
  function resize() { M.charts.forEach(function (c) { c.resize(); }); }
  window.addEventListener('resize', resize);
  window.addEventListener('beforeprint', resize);
  window.addEventListener('afterprint', resize);
  document.body.setAttribute('data-rendered', 'ok');
  document.body.setAttribute('data-charts', String(M.charts.length));
})(window.MoesimReport);
