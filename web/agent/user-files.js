// Files the user opens or drops into the page, as the agent's file tools see
// them: name, size, type, and the text of text files (txt, md, csv, json).

const TEXT_EXTENSIONS = [".txt", ".md", ".markdown", ".csv", ".json", ".tsv", ".log"];
const MAX_TEXT_BYTES = 5 * 1024 * 1024;

function isTextFile(name, type) {
  const lower = name.toLowerCase();
  return type.startsWith("text/") || type === "application/json" || TEXT_EXTENSIONS.some((ext) => lower.endsWith(ext));
}

/** File objects (or {name, text, type}) -> [{name, size, type, text}] for Python. */
export async function describeUserFiles(files) {
  const described = [];
  for (const file of files) {
    const name = file.name;
    if (!name) throw new Error("addUserFiles: every file needs a name");
    if (typeof file.text === "string") {
      described.push({name, size: file.text.length, type: file.type || "text/plain", text: file.text});
      continue;
    }
    const type = file.type || "";
    const readable = isTextFile(name, type) && file.size <= MAX_TEXT_BYTES;
    described.push({name, size: file.size, type: type || "application/octet-stream", text: readable ? await file.text() : null});
  }
  return described;
}
