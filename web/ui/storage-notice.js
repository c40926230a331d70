// What a person is told when this browser could not keep the model it loaded (the load result's
// `storage`, web/runtime/storage/model-files.js StorageReport): the app shows it under its load
// status, the widget in its log. Calm: the model works now; only the next visit differs.

/** {text, hint} for a load whose files were not all kept; null when they were (or nothing was said). */
export function storageNotice(storage) {
  if (storage?.kept !== false) return null;
  return {
    text: "This browser window could not keep the model: it will not work offline and will download the model again next time.",
    hint: "A normal (not private) window with free disk space keeps it.",
  };
}
