// What the person sees in a confirmation is what they approve. Text the model wrote can hold
// characters that show nothing or reorder what is shown: bidi controls (U+202E turns
// "moc.elpmaxe" around), zero-width characters, Unicode tag characters (invisible ASCII),
// C1 controls, line and paragraph separators, and the letters that print as nothing (Hangul
// fillers, the blank Braille pattern). The dialog shows each as an escape instead.

const HIDDEN = /[\p{Cf}\p{Zl}\p{Zp}\u007f-\u009f\u115f\u1160\u3164\uffa0\u2800]/gu;

const codePoint = (char) => `U+${char.codePointAt(0).toString(16).toUpperCase().padStart(4, "0")}`;

/** JSON text with every hidden character as a \uXXXX escape (a surrogate pair above U+FFFF), so
 *  JSON.parse gives back exactly the same value. Every such character in JSON.stringify's
 *  output is inside a string, where an escape is valid. */
export function escapeHiddenInJson(jsonText) {
  return jsonText.replace(HIDDEN, (char) =>
    Array.from({ length: char.length }, (_, i) => `\\u${char.charCodeAt(i).toString(16).padStart(4, "0")}`).join(""));
}

/** Plain text with every hidden character shown as [U+XXXX]. */
export function showHidden(text) {
  return String(text).replace(HIDDEN, (char) => `[${codePoint(char)}]`);
}

/** The distinct hidden characters in `text`, as "U+XXXX" names, in order of appearance. */
export function hiddenCharacters(text) {
  return [...new Set(Array.from(String(text).matchAll(HIDDEN), ([char]) => codePoint(char)))];
}
