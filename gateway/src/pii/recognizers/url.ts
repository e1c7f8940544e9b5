import type { Recognizer } from "../recognizer.ts";

// Links with a scheme (http, https, ftp) and a host, or starting "www.". Trailing punctuation that usually
// ends the sentence rather than the URL is left out of the span, except a ")" that closes a "(" inside it.
const WITH_SCHEME = /\b(?:https?|ftp):\/\/[A-Za-z0-9[][^\s<>"'`{}|\\^]{0,2048}/gi;
const WWW = /(?<![\w./-])www\.[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){1,8}[^\s<>"'`{}|\\^]{0,2048}/gi;
const TRAILING_PUNCTUATION = /[.,;:!?)\]}'"]+$/;

function withoutTrailingPunctuation(url: string): string {
  const trimmed = url.replace(TRAILING_PUNCTUATION, "");
  const opens = trimmed.split("(").length - 1;
  const closes = trimmed.split(")").length - 1;
  return opens > closes && url.charAt(trimmed.length) === ")" ? `${trimmed})` : trimmed;
}

export const urlRecognizer: Recognizer = {
  entity: "URL",
  context: ["url", "website", "link", "site", "web", "homepage"],
  negativeContext: [],
  needsDigit: false,
  find(text, emit) {
    for (const [regex, score] of [
      [WITH_SCHEME, 0.6],
      [WWW, 0.5],
    ] as const) {
      regex.lastIndex = 0;
      for (let match = regex.exec(text); match !== null; match = regex.exec(text)) {
        const url = withoutTrailingPunctuation(match[0]);
        emit({ start: match.index, end: match.index + url.length, score });
      }
    }
  },
};
