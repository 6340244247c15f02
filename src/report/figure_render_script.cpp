#include "report/figure_render_script.hpp"

namespace dvfslab::report_detail {

std::string_view figure_render_script() {
  return R"js('use strict';
const fs = require('fs'), path = require('path'), vm = require('vm');
const [work, out] = process.argv.slice(2);
// The runtimes are the page's UMD bundles: run as plain scripts they define the
// globals vega and vegaLite, as in the browser; figure_spec.js adds dvfslabDatasets
// and dvfslabFigureSpec.
for (const name of ['vega.min.js', 'vega-lite.min.js', 'figure_spec.js'])
  vm.runInThisContext(fs.readFileSync(path.join(work, name), 'utf8'), {filename: name});
// Vega measures text on a canvas, which node lacks; its fallback (0.8 em for every
// character) lays the figures out far wider than they are drawn. The em widths
// here are DejaVu Sans's advances (the font rsvg-convert draws with), by kind of
// character; bold is about 10 % wider.
const narrow = {' ': 0.318, '.': 0.318, ',': 0.318, ':': 0.337, ';': 0.337, '·': 0.318, 'i': 0.278,
  'l': 0.278, 'j': 0.278, 'I': 0.295, '|': 0.337, '!': 0.4, "'": 0.275, 'f': 0.352, 't': 0.392,
  'r': 0.411, '(': 0.39, ')': 0.39, '[': 0.39, ']': 0.39, '-': 0.361, '/': 0.337, 'm': 0.974,
  'w': 0.818, 'M': 0.863, 'W': 0.989, '—': 1.0, '×': 0.838, '%': 0.95};
function emWidth(character) {
  if (character in narrow) return narrow[character];
  if (character >= '0' && character <= '9') return 0.636;
  if (character >= 'A' && character <= 'Z') return 0.7;
  return 0.62;
}
vega.textMetrics.width = (item, text) => {
  const size = item.fontSize != null ? +item.fontSize || 0 : 11;
  const bold = item.fontWeight === 'bold' || +item.fontWeight >= 600;
  let width = 0;
  for (const character of String(text == null ? '' : text).trim()) width += emWidth(character);
  return width * size * (bold ? 1.1 : 1);
};
const data = JSON.parse(fs.readFileSync(path.join(work, 'data.json'), 'utf8'));
const progressEvery = 20;

(async () => {
  const datasets = dvfslabDatasets(data);
  const total = data.figures.length;
  let drawn = 0;
  for (const figure of data.figures) {
    try {
      const spec = dvfslabFigureSpec(data, figure, datasets);
      // No renderer: Vega draws the SVG text itself, without a browser or a canvas.
      const view = new vega.View(vega.parse(vegaLite.compile(spec).spec), {renderer: 'none'});
      fs.writeFileSync(path.join(out, figure.file + '.svg'), await view.toSVG());
      view.finalize();
    } catch (error) {
      process.stderr.write(`${figure.file}: ${error && error.message ? error.message : error}\n`);
      process.exit(1);
    }
    drawn += 1;
    if (total >= progressEvery && (drawn % progressEvery === 0 || drawn === total))
      process.stdout.write(`dvfslab: drew ${drawn} of ${total} figures\n`);
  }
})();
)js";
}

}  // namespace dvfslab::report_detail
