// Well-known injection wrapper phrases. Each hit is named in the detector's answer and adds to the
// classifier's score; the text is expected to be normalised already (normalize.ts).

export interface WrapperRule {
  readonly name: string;
  readonly pattern: RegExp;
}

export const WRAPPER_RULES: readonly WrapperRule[] = [
  {
    name: "ignore-previous-instructions",
    pattern:
      /\b(?:ignore|disregard|forget)\s+(?:all\s+)?(?:the\s+)?(?:previous|prior|above|earlier)\s+(?:instructions|prompts|rules)\b/i,
  },
  { name: "you-are-now-dan", pattern: /\byou\s+are\s+now\s+(?:DAN|in\s+developer\s+mode)\b/i },
  { name: "system-prompt-label", pattern: /(?:^|\n)\s*system\s+prompt\s*:/i },
];

/** Names of the wrapper rules the (normalised) text matches. */
export function matchWrapperRules(text: string): string[] {
  return WRAPPER_RULES.filter((rule) => rule.pattern.test(text)).map((rule) => rule.name);
}
