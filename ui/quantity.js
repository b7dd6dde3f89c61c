// quantity.js - Kubernetes quantities ("500m", "1Gi", "2k", "1e3") as JS
// numbers. The dashboard uses these only for ratios and sums; the strings the
// API returns are what it displays.

const SUFFIX = {
  n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18,
  Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60,
};

// sign, number, then either a decimal exponent or a suffix (never both, as upstream).
// "1E" is one exa while "1E3" is a thousand: the exponent needs digits.
const QUANTITY = /^([+-]?)(\d+(?:\.\d*)?|\.\d+)(?:[eE]([+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]))?$/;

/** parseQuantity("1500m") === 1.5; NaN for anything that is not a quantity. */
export function parseQuantity(text) {
  if (typeof text === 'number') return text;
  if (typeof text !== 'string') return NaN;
  const m = QUANTITY.exec(text.trim());
  if (!m) return NaN;
  let value = Number(m[2]);
  if (m[3] !== undefined) value *= 10 ** Number(m[3]);
  else value *= SUFFIX[m[4] ?? ''];
  return m[1] === '-' ? -value : value;
}

/**
 * used/hard as a ratio for colouring a bar. A hard limit of 0 leaves no
 * headroom at all, so it reads as full (1), or over (Infinity) once used.
 * Unparseable values give NaN, which callers show as an empty grey bar.
 */
export function usageRatio(used, hard) {
  const u = parseQuantity(used ?? '0');
  const h = parseQuantity(hard);
  if (Number.isNaN(u) || Number.isNaN(h)) return NaN;
  if (h <= 0) return u > 0 ? Infinity : 1;
  return u / h;
}

/** The headroom class of a ratio: ok < 70 %, warn < 90 %, crit from 90 % (and over). */
export function level(ratio) {
  if (Number.isNaN(ratio)) return 'none';
  if (ratio >= 0.9) return 'crit';
  if (ratio >= 0.7) return 'warn';
  return 'ok';
}

const BINARY = [['Ei', 2 ** 60], ['Pi', 2 ** 50], ['Ti', 2 ** 40], ['Gi', 2 ** 30], ['Mi', 2 ** 20], ['Ki', 2 ** 10]];

function trimmed(n) {
  return String(Number(n.toFixed(2)));
}

/**
 * Formats a number the dashboard computed itself (a pending demand, a sum):
 * memory-like resources in binary units, cpu in millicores when fractional,
 * counts as integers. Display only; never sent back to the server.
 */
export function formatQuantity(value, resource = '') {
  if (!Number.isFinite(value)) return '?';
  if (/memory|storage/.test(resource)) {
    for (const [suffix, size] of BINARY) {
      if (Math.abs(value) >= size) return trimmed(value / size) + suffix;
    }
    return trimmed(value);
  }
  if (Number.isInteger(value)) return String(value);
  return String(Math.round(value * 1000)) + 'm';
}
