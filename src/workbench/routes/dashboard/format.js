// How the dashboard writes numbers and times: every count with thousands separators (and
// compact, with the exact value on hover, where space is short), every time relative with
// its UTC instant on hover. One time zone everywhere: UTC.

const exact = new Intl.NumberFormat("en-US");
const compact = new Intl.NumberFormat("en-US", { notation: "compact", maximumFractionDigits: 1 });

/// `1,234,567`.
export function count(n) {
  return exact.format(n ?? 0);
}

/// `1.2M` for the axis and the cards, `1,234` below ten thousand.
export function short(n) {
  return n >= 10000 ? compact.format(n) : exact.format(n ?? 0);
}

/// `1 client`, `3 clients`.
export function plural(n, one, many) {
  return count(n) + " " + (n === 1 ? one : many);
}

/// `2026-06-15 12:00 UTC`.
export function utc(iso) {
  return iso ? iso.slice(0, 10) + " " + iso.slice(11, 16) + " UTC" : "";
}

/// `38 min ago`, `in 3 days`, from `now` (milliseconds).
export function relative(iso, now) {
  const seconds = Math.round((now - Date.parse(iso)) / 1000);
  const ahead = seconds < 0;
  const s = Math.abs(seconds);
  const [n, unit] =
    s < 60 ? [s, "s"] : s < 3600 ? [Math.floor(s / 60), "min"] : s < 86400 ? [Math.floor(s / 3600), "h"]
      : [Math.floor(s / 86400), Math.floor(s / 86400) === 1 ? "day" : "days"];
  if (s < 5) return "just now";
  return ahead ? "in " + n + " " + unit : n + " " + unit + " ago";
}

/// A `<time>` that reads relative and tells its UTC instant on hover; `never` when there is none.
export function time(iso, now, never = "never") {
  if (!iso) return document.createTextNode(never);
  const t = document.createElement("time");
  t.dateTime = iso;
  t.title = utc(iso);
  t.textContent = relative(iso, now);
  return t;
}

/// A number, exact, in a `<data>` element (the cell's value for sorting and for tests).
export function number(n) {
  const d = document.createElement("data");
  d.value = String(n ?? 0);
  d.textContent = count(n);
  return d;
}
