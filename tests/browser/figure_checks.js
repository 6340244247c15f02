// Injected by report_browser_test.py into a copy of a report: once every chart has
// rendered, measures what a reader sees in each chart's SVG and writes it as JSON
// into <pre id="figure-checks"> for the test to read from the dumped DOM.
(async () => {
  const status = document.getElementById('dvfslab-status');
  while (status.dataset.done !== 'true') await new Promise((resolve) => setTimeout(resolve, 50));
  // Vega hides overlapping labels by setting their opacity to 0.
  const shown = (element) => {
    for (let e = element; e && e.tagName !== 'svg'; e = e.parentElement) {
      if (e.getAttribute('opacity') === '0' || getComputedStyle(e).opacity === '0') return false;
    }
    return element.textContent.trim() !== '';
  };
  const overlapping = (a, b) =>
    Math.min(a.right, b.right) - Math.max(a.left, b.left) > 0.5 &&
    Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 0.5;
  const strokes = (svg, colour) => svg.querySelectorAll(`.mark-rect path[stroke="${colour}"][stroke-width="2.5"]`).length;
  // The error bars of every chart, by figure id: Vega draws a rule as one <line>.
  const intervalBars = () => Object.fromEntries([...document.querySelectorAll('div.figure')].map((div) =>
    [div.id, div.querySelectorAll('svg [class$="interval_marks"] line').length]));
  // The page's interval control, switched off and on again once every chart drew each state.
  const control = document.getElementById('dvfslab-intervals');
  const switchIntervals = async (shown) => {
    if (control.checked !== shown) control.click();
    while (control.dataset.shown !== String(shown)) await new Promise((resolve) => setTimeout(resolve, 50));
  };
  const barsShown = intervalBars();
  let barsHidden = null;
  if (control) {
    await switchIntervals(false);
    barsHidden = intervalBars();
    await switchIntervals(true);
  }
  // Whether every default marker stands on the normalised charts' level of 1.0: the
  // centre of each marker on the dashed rule at 1 (horizontal, and on the Pareto
  // chart also the vertical one); null on a chart without such a rule.
  const centre = (box) => ({x: (box.left + box.right) / 2, y: (box.top + box.bottom) / 2});
  const defaultsAtOne = (svg) => {
    const horizontal = svg.querySelector('.unit_level_y_marks line');
    if (!horizontal) return null;
    const vertical = svg.querySelector('.unit_level_x_marks line');
    const level = centre(horizontal.getBoundingClientRect());
    const markers = [...svg.querySelectorAll('.default_marker_marks path')];
    return markers.length > 0 && markers.every((marker) => {
      const at = centre(marker.getBoundingClientRect());
      return Math.abs(at.y - level.y) < 1 &&
          (!vertical || Math.abs(at.x - centre(vertical.getBoundingClientRect()).x) < 1);
    });
  };
  const figures = [];
  for (const div of document.querySelectorAll('div.figure')) {
    const svg = div.querySelector('svg');
    if (!svg) continue;
    const texts = (selector) => [...svg.querySelectorAll(selector)].map((t) => t.textContent);
    const figure = {
      id: div.id,
      title: texts('.role-title-text text').join(' '),
      default_markers: svg.querySelectorAll('.default_marker_marks path').length,
      optimum_markers: svg.querySelectorAll('.optimum_marker_marks path').length,
      defaults_at_one: defaultsAtOne(svg),
      summary_points: svg.querySelectorAll('.savings_point_marks path').length,
      outlined_cells: {default: strokes(svg, 'black'), optimum: strokes(svg, '#e4007c'),
                       both: strokes(svg, '#ff7f0e')},
      legends: [...svg.querySelectorAll('.role-legend')].map((legend) => ({
        symbols: legend.querySelectorAll('.role-legend-symbol path').length,
        labels: [...legend.querySelectorAll('.role-legend-label text')].map((t) => t.textContent)})),
      clip_notes: texts('.clip_note_marks text'),
      interval_bars: barsShown[div.id],
      interval_bars_when_hidden: barsHidden === null ? null : barsHidden[div.id],
      axes: [],
    };
    for (const axis of svg.querySelectorAll('.role-axis')) {
      const labels = [...axis.querySelectorAll('.role-axis-label text')];
      const boxes = labels.filter(shown).map((t) => t.getBoundingClientRect());
      let overlaps = 0;
      for (let i = 0; i < boxes.length; ++i) {
        for (let j = i + 1; j < boxes.length; ++j) overlaps += overlapping(boxes[i], boxes[j]) ? 1 : 0;
      }
      figure.axes.push({labels: labels.length, shown: boxes.length, overlaps,
                        texts: labels.filter(shown).map((t) => t.textContent)});
    }
    figures.push(figure);
  }
  const out = document.createElement('pre');
  out.id = 'figure-checks';
  out.textContent = JSON.stringify(figures);
  document.body.appendChild(out);
})();
