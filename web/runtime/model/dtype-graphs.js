// The one place the runtime reads which files a dtype of a model folder has
// (manifest.dtypes[dtype], docs/contracts.md section 1): its standard graph,
// the optional appending graph (KV cache outputs hold only the new positions;
// used on WASM), and the external data files both graphs share.

/** {standard, appending (null when the folder has none), externalData} for manifest.dtypes[dtype]. */
export function dtypeGraphs(manifest, dtype) {
  const spec = manifest.dtypes?.[dtype];
  if (!spec) {
    throw new Error(`dtype "${dtype}" is not in this model folder; it has: ${Object.keys(manifest.dtypes ?? {}).join(", ")}`);
  }
  if (typeof spec.file !== "string" || !Array.isArray(spec.files)) {
    throw new Error(`manifest dtypes.${dtype} needs "file" (its graph) and "files" (the graph and its external data)`);
  }
  const appending = spec.appending_file ?? null;
  if (appending !== null && typeof appending !== "string") {
    throw new Error(`manifest dtypes.${dtype}.appending_file must be a path, got ${JSON.stringify(appending)}`);
  }
  return {standard: spec.file, appending, externalData: spec.files.filter((path) => path !== spec.file)};
}
