// Turns the chat transcript into Markdown or JSON files the person can keep.
import { provenanceSentence } from "./chat-view.js";
import { formatDuration, formatValue } from "./format.js";
import { stopSentence } from "./stop-notice.js";

export function transcriptToMarkdown(transcript, { model = "", exportedAt = new Date() } = {}) {
  const lines = [`# BotPsy conversation`, ""];
  lines.push(`Exported ${exportedAt.toISOString()}${model ? ` · model ${model}` : ""}`, "");
  for (const entry of transcript) {
    if (entry.role === "user") {
      lines.push("## You", "", entry.text, "");
      if (entry.files?.length) lines.push(`Attached: ${entry.files.join(", ")}`, "");
      continue;
    }
    lines.push(entry.role === "outside_agent" ? "## An outside assistant asked" : "## Assistant", "");
    for (const part of entry.parts) {
      if (part.type === "text") lines.push(part.text, "");
      if (part.type === "thinking") lines.push("<details><summary>Thinking</summary>", "", part.text, "", "</details>", "");
      if (part.type === "error") lines.push(`> **Error:** ${part.text}`, "");
      if (part.type === "tool") {
        const took = Number.isFinite(part.durationMs) ? `, ${formatDuration(part.durationMs)}` : "";
        lines.push(`**Tool \`${part.name}\`** (${part.status}${took})`, "");
        lines.push("```json", formatValue(part.arguments ?? {}), "```", "");
        if (part.result !== null || part.error) {
          lines.push("Result:", "", "```", formatValue(part.error || part.result), "```", "");
        }
      }
    }
    const cutOff = stopSentence(entry.stats?.stopReason);
    if (cutOff) lines.push(`> **${cutOff}**`, "");
    if (entry.untrustedReads?.length) lines.push(`> **Outside content:** ${provenanceSentence(entry.untrustedReads)}`, "");
  }
  return lines.join("\n");
}

export function transcriptToJson(transcript, { model = "", exportedAt = new Date(), conversation = null } = {}) {
  return JSON.stringify({
    format: "botpsy-transcript",
    version: 1,
    exported: exportedAt.toISOString(),
    model,
    messages: transcript,
    conversation, // the agent's own record, restorable with agent.restoreConversation()
  }, null, 2);
}

/** Offers text as a file download without leaving the page. */
export function downloadText(filename, text, mimeType) {
  const url = URL.createObjectURL(new Blob([text], { type: mimeType }));
  const link = document.createElement("a");
  link.href = url;
  link.download = filename;
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
