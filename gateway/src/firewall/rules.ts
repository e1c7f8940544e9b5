// Well-known injection wrapper phrases. Each hit is named in the detector's answer and adds to the
// classifier's score; the text is expected to be normalised already (normalize.ts).

export interface WrapperRule {
  readonly name: string;
  readonly pattern: RegExp;
  /**
   * Lower-case words of which the pattern cannot match without one: a text holding none of them skips the regular
   * expression. Most texts hold none, and one scan for all anchors at once costs a tenth of scanning the text with
   * every pattern.
   */
  readonly anchors: readonly string[];
}

// Each rule must stay precise: a benign prompt that merely mentions "ignore", "system prompt" or
// "instructions" (how to make git ignore a folder, what a good system prompt contains) must not fire.
export const WRAPPER_RULES: readonly WrapperRule[] = [
  {
    name: "ignore-previous-instructions",
    pattern:
      /\b(?:ignore|disregard|forget)\s+(?:all\s+|any\s+)?(?:of\s+)?(?:the\s+|your\s+|my\s+|these\s+)?(?:previous|prior|above|earlier|preceding)\s+(?:and\s+following\s+)?(?:\w{0,2}instructions|prompts|rules|directions|directives|guidelines)\b/i,
    anchors: ["ignore", "disregard", "forget"],
  },
  {
    name: "ignore-instructions-given-before",
    pattern:
      /\b(?:ignore|disregard|forget)\s+(?:all\s+)?(?:the\s+)?(?:instructions|rules|guidelines)\s+(?:you\s+(?:got|received|were\s+given|have\s+been\s+given)|(?:previously\s+)?given\s+to\s+you)\b/i,
    anchors: ["ignore", "disregard", "forget"],
  },
  {
    name: "you-are-now-dan",
    pattern: /\byou\s+are\s+now\s+(?:DAN|in\s+developer\s+mode)\b/i,
    anchors: ["now"],
  },
  {
    name: "mode-enabled",
    pattern: /\b(?:developer|DAN|jailbreak)\s+mode\s+(?:enabled|activated)\b/i,
    anchors: ["mode"],
  },
  // Line-start rules look behind for the line start: a regex that begins with its words is scanned several
  // times faster than one that begins with (?:^|\n), and the rules run on every inspected text.
  { name: "system-prompt-label", pattern: /(?<=(?:^|\n)\s*)system\s+prompt\s*:/i, anchors: ["system"] },
  {
    name: "new-instructions-label",
    pattern: /(?<=(?:^|\n)\s*)(?:new|updated)\s+instructions?\s*:/i,
    anchors: ["instruction"],
  },
  {
    name: "chat-template-tag",
    pattern:
      /<\|im_start\|>\s*system|<\|system\|>|(?<=(?:^|\n)\s*)\[INST\]|<<SYS>>|#{2,}\s*\(\s*system[_\s]?message\s*\)/i,
    anchors: ["<|", "[inst]", "<<sys>>", "system"],
  },
  // Prompt leaking: asking the model to hand over its own configuration ("your", so "show me a system prompt
  // for my bot" stays quiet).
  {
    name: "reveal-system-prompt",
    pattern:
      /\b(?:reveal|print|show|repeat|output|display|leak|disclose|tell\s+me)\s+(?:me\s+)?(?:all\s+)?(?:of\s+)?your\s+(?:system\s+prompt|(?:initial|original|hidden|secret|confidential)\s+(?:instructions|prompt|configuration|rules))\b/i,
    anchors: ["your"],
  },
  // The AgentDojo "important instructions" attack speaks as the user to the model by name.
  {
    name: "important-message-from-user",
    pattern: /\bthis\s+is\s+an\s+important\s+message\s+from\s+me\b/i,
    anchors: ["important"],
  },
];

const escapeRegExp = (literal: string): string => literal.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
/** Every rule's anchors in one alternation, so a text is scanned for all of them in one pass. */
const ANCHORS = new RegExp(
  [...new Set(WRAPPER_RULES.flatMap((rule) => rule.anchors))].map(escapeRegExp).join("|"),
  "gi",
);

/** Names of the wrapper rules the (normalised) text matches. */
export function matchWrapperRules(text: string): string[] {
  const found = text.match(ANCHORS);
  if (found === null) return [];
  const present = new Set(found.map((anchor) => anchor.toLowerCase()));
  const names: string[] = [];
  for (const rule of WRAPPER_RULES) {
    if (rule.anchors.some((anchor) => present.has(anchor)) && rule.pattern.test(text)) names.push(rule.name);
  }
  return names;
}
