// The retiring version's requests per day over the chosen range: a y-axis with values, one bar
// a day (its count on hover), and the days that matter after it, the projected last day of
// traffic and the sunset, drawn where they fall (at the right edge, named, when past it).

import { count, short } from "./format.js";

const NS = "http://www.w3.org/2000/svg";
const [WIDTH, HEIGHT, LEFT, RIGHT, TOP, BOTTOM] = [1000, 220, 56, 150, 12, 28];

function add(svg, name, attributes, words) {
  const node = svg.appendChild(document.createElementNS(NS, name));
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
  if (words !== undefined) node.textContent = words;
  return node;
}

/// 1, 2, 5, 10, 20, 50 … at or above `n`: the axis ends on a round value.
function roundUp(n) {
  if (n <= 5) return 5;
  const power = 10 ** Math.floor(Math.log10(n));
  return [1, 2, 5, 10].map((m) => m * power).find((v) => v >= n);
}

const dayMs = 86400000;
const dayOf = (iso) => Date.parse(iso.slice(0, 10) + "T00:00:00Z");

/// `days`: [{day, requests}] oldest first; `marks`: [{label, day}] (days after the range).
export function draw(svg, days, marks) {
  svg.replaceChildren();
  svg.setAttribute("viewBox", `0 0 ${WIDTH} ${HEIGHT}`);
  const top = roundUp(Math.max(0, ...days.map((d) => d.requests)));
  const plotW = WIDTH - LEFT - RIGHT, plotH = HEIGHT - TOP - BOTTOM;
  const y = (v) => TOP + plotH - (v / top) * plotH;
  for (const tick of [0, top / 2, top]) {
    add(svg, "line", { x1: LEFT, x2: LEFT + plotW, y1: y(tick), y2: y(tick), class: "grid" });
    add(svg, "text", { x: LEFT - 6, y: y(tick) + 4, "text-anchor": "end", class: "axis" }, short(tick));
  }
  const slot = plotW / Math.max(1, days.length);
  const every = Math.ceil(days.length / 10);
  days.forEach((d, i) => {
    const h = d.requests > 0 ? Math.max(2, (d.requests / top) * plotH) : 0;
    const bar = add(svg, "rect", { x: LEFT + i * slot + 1, y: TOP + plotH - h, width: Math.max(1, slot - 2), height: h });
    add(bar, "title", {}, d.day + ": " + count(d.requests) + (d.requests === 1 ? " request" : " requests"));
    if ((days.length - 1 - i) % every === 0) {
      add(svg, "text", { x: LEFT + i * slot + slot / 2, y: HEIGHT - 8, "text-anchor": "middle", class: "axis" }, d.day.slice(5));
    }
  });
  // After the last day, one slot a day as far as the plot goes; later days sit at its right edge.
  const last = days.length ? dayOf(days[days.length - 1].day) : Date.now();
  marks.filter((m) => m.day).forEach((m, i) => {
    const ahead = Math.round((dayOf(m.day) - last) / dayMs);
    const within = ahead * slot <= RIGHT - 20 && days.length - 1 + ahead >= 0;
    const x = !within ? WIDTH - 4 : ahead > 0 ? LEFT + plotW + ahead * slot : LEFT + (days.length - 1 + ahead) * slot + slot / 2;
    const when = within ? m.day : m.day + " →";
    add(svg, "line", { x1: x, x2: x, y1: TOP, y2: TOP + plotH, class: "mark " + m.kind });
    add(svg, "text", { x: x - 4, y: TOP + 12 + i * 14, "text-anchor": "end", class: "mark-label " + m.kind }, m.label + " " + when);
  });
}
