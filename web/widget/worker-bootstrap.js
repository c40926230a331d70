// Workers must be created from a same-origin URL. When the widget is embedded on a page
// of another origin, start the model worker from a tiny same-origin blob module that
// imports the real worker script (served with CORS) from the widget's own origin.

export function workerUrlFor(realWorkerUrl) {
  const real = new URL(realWorkerUrl);
  if (real.origin === globalThis.location.origin) return real;
  const source = `import ${JSON.stringify(real.href)};\n`;
  return URL.createObjectURL(new Blob([source], { type: "text/javascript" }));
}
