// Well-known injection wrapper phrases. Each hit is named in the detector's answer and adds to the
// classifier's score; the text is expected to be normalised already (normalize.ts).

export interface WrapperRule {
  readonly name: string;
  readonly pattern: RegExp;
}

// Each rule must stay precise: a benign prompt that merely mentions "ignore", "system prompt" or
// "instructions" (how to make git ignore a folder, what a good system prompt contains) must not fire.
export const WRAPPER_RULES: readonly WrapperRule[] = [
  {
    name: "ignore-previous-instructions",
    pattern:
      /\b(?:ignore|disregard|forget)\s+(?:all\s+|any\s+)?(?:of\s+)?(?:the\s+|your\s+|my\s+|these\s+)?(?:previous|prior|above|earlier|preceding)\s+(?:and\s+following\s+)?(?:\w{0,2}instructions|prompts|rules|directions|directives|guidelines)\b/i,
  },
  {
    name: "ignore-instructions-given-before",
    pattern:
      /\b(?:ignore|disregard|forget)\s+(?:all\s+)?(?:the\s+)?(?:instructions|rules|guidelines)\s+(?:you\s+(?:got|received|were\s+given|have\s+been\s+given)|(?:previously\s+)?given\s+to\s+you)\b/i,
  },
  { name: "you-are-now-dan", pattern: /\byou\s+are\s+now\s+(?:DAN|in\s+developer\s+mode)\b/i },
  { name: "mode-enabled", pattern: /\b(?:developer|DAN|jailbreak)\s+mode\s+(?:enabled|activated)\b/i },
  // Line-start rules look behind for the line start: a regex that begins with its words is scanned several
  // times faster than one that begins with (?:^|\n), and the rules run on every inspected text.
  { name: "system-prompt-label", pattern: /(?<=(?:^|\n)\s*)system\s+prompt\s*:/i },
  { name: "new-instructions-label", pattern: /(?<=(?:^|\n)\s*)(?:new|updated)\s+instructions?\s*:/i },
  {
    name: "chat-template-tag",
    pattern:
      /<\|im_start\|>\s*system|<\|system\|>|(?<=(?:^|\n)\s*)\[INST\]|<<SYS>>|#{2,}\s*\(\s*system[_\s]?message\s*\)/i,
  },
  // Prompt leaking: asking the model to hand over its own configuration ("your", so "show me a system prompt
  // for my bot" stays quiet).
  {
    name: "reveal-system-prompt",
    pattern:
      /\b(?:reveal|print|show|repeat|output|display|leak|disclose|tell\s+me)\s+(?:me\s+)?(?:all\s+)?(?:of\s+)?your\s+(?:system\s+prompt|(?:initial|original|hidden|secret|confidential)\s+(?:instructions|prompt|configuration|rules))\b/i,
  },
  // The AgentDojo "important instructions" attack speaks as the user to the model by name.
  { name: "important-message-from-user", pattern: /\bthis\s+is\s+an\s+important\s+message\s+from\s+me\b/i },
];

/** Names of the wrapper rules the (normalised) text matches. */
export function matchWrapperRules(text: string): string[] {
  return WRAPPER_RULES.filter((rule) => rule.pattern.test(text)).map((rule) => rule.name);
}
