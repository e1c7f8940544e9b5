import type { Recognizer } from "../recognizer.ts";

// Found from each "@" outwards instead of by one regex from every position: a local part is up to 64
// characters, so a regex that starts anywhere would re-read each character up to 64 times. Here every
// character is read a bounded number of times.

// The local-part characters addresses use in practice. RFC 5322 allows more (`/`, `=`, `?`, ...), but those
// would pull a URL's query (`?mail=jane@example.org`) into the address.
const LOCAL_PUNCTUATION = new Set("._%+-");
// Domain labels of letters, digits and inner hyphens, 2 to 9 of them, ending in an alphabetic TLD.
const DOMAIN = /(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.){1,8}[A-Za-z]{2,24}(?![A-Za-z0-9-])/y;
const MAX_LOCAL_LENGTH = 64;
// `logo@2x.png`, `icon@3x.webp`: asset names with a scale suffix, not mailboxes.
const FILE_SUFFIXES = new Set([
  "png",
  "jpg",
  "jpeg",
  "gif",
  "svg",
  "webp",
  "ico",
  "pdf",
  "js",
  "css",
  "json",
]);

function isLocalChar(char: string): boolean {
  const code = char.charCodeAt(0);
  const alphanumeric =
    (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122);
  return alphanumeric || LOCAL_PUNCTUATION.has(char);
}

export const emailAddressRecognizer: Recognizer = {
  entity: "EMAIL_ADDRESS",
  context: ["email", "mail", "e-mail", "address", "contact"],
  negativeContext: [],
  needsDigit: false,
  find(text, emit) {
    for (let at = text.indexOf("@"); at !== -1; at = text.indexOf("@", at + 1)) {
      let start = at;
      while (start > 0 && at - start <= MAX_LOCAL_LENGTH && isLocalChar(text.charAt(start - 1))) start--;
      // A run longer than 64 characters is not a local part; one neither starts nor ends with a dot.
      if (at - start > MAX_LOCAL_LENGTH) continue;
      while (start < at && text.charAt(start) === ".") start++;
      if (start === at || text.charAt(at - 1) === ".") continue;
      DOMAIN.lastIndex = at + 1;
      const domain = DOMAIN.exec(text);
      if (domain === null) continue;
      const tld = domain[0].slice(domain[0].lastIndexOf(".") + 1).toLowerCase();
      if (FILE_SUFFIXES.has(tld)) continue;
      emit({ start, end: at + 1 + domain[0].length, score: 1 });
    }
  },
};
