// Human-readable figures for sizes, durations and rates.

const BYTE_UNITS = ["B", "KB", "MB", "GB", "TB"];

export function formatBytes(bytes) {
  if (!Number.isFinite(bytes) || bytes < 0) return "unknown size";
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < BYTE_UNITS.length - 1) {
    value /= 1000;
    unit += 1;
  }
  const digits = unit === 0 || value >= 100 ? 0 : 1;
  return `${value.toFixed(digits)} ${BYTE_UNITS[unit]}`;
}

export function formatDuration(ms) {
  if (!Number.isFinite(ms) || ms < 0) return "";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const seconds = ms / 1000;
  if (seconds < 60) return `${seconds.toFixed(seconds < 10 ? 1 : 0)} s`;
  const minutes = Math.floor(seconds / 60);
  return `${minutes} min ${Math.round(seconds % 60)} s`;
}

export function formatEta(seconds) {
  if (!Number.isFinite(seconds) || seconds < 0) return "estimating…";
  if (seconds < 1) return "less than a second left";
  if (seconds < 60) return `${Math.ceil(seconds)} s left`;
  const minutes = Math.floor(seconds / 60);
  return `${minutes} min ${Math.ceil(seconds % 60)} s left`;
}

export function formatPercent(fraction) {
  if (!Number.isFinite(fraction)) return "";
  return `${Math.min(100, Math.max(0, fraction * 100)).toFixed(0)}%`;
}

export function formatRate(tokensPerSecond) {
  if (!Number.isFinite(tokensPerSecond) || tokensPerSecond <= 0) return "– tok/s";
  return `${tokensPerSecond.toFixed(tokensPerSecond < 10 ? 1 : 0)} tok/s`;
}

/** Pretty JSON for showing tool arguments and results; strings stay as they are. */
export function formatValue(value) {
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value, null, 2);
  } catch {
    return String(value);
  }
}

/** "WebGPU · q4", "WASM + 2 threads · q8", "WASM · 1 thread · q8" from the runtime's load info. */
export function describeBackend(info) {
  if (!info) return "";
  if (info.backend === "webgpu") return `WebGPU · ${info.dtype}`;
  if (info.backend !== "wasm") return `${info.backend} · ${info.dtype}`;
  const threads = info.threads > 1 ? ` + ${info.threads} threads` : " · 1 thread";
  return `WASM${threads} · ${info.dtype}`;
}
