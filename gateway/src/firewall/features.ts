// The classifier's features, shared by training (scripts/train-firewall.ts) and inference
// (window-classifier.ts) so both see exactly the same events.
//
// One pass over the char codes of the (normalised) text, no substrings: letters are lower-cased,
// digits folded to 0, whitespace runs collapsed to one space. Each position emits hashed events:
// - character 3-, 4- and 5-grams (hashes built from the last five folded codes);
// - word unigrams and word bigrams (a word is a run of letters, digits, apostrophes or non-ASCII chars);
// - cue events: a few regular expressions for the shapes of an instruction planted for a model
//   (addressing the assistant, "you must", "instead", send-this-to-an-address, urgency, role tags,
//   override and secrecy phrases). A cue counts CUE_REPEAT times so one cue weighs like a short phrase.
// Each event carries the block (BLOCK_CHARS characters of the normalised text) it starts in; the
// window classifier sums weights per block and scores windows of consecutive blocks.
//
// The events live in module-level buffers that are reused on every call (grown when needed): the
// answer is valid until the next call.

export const BLOCK_CHARS = 128;
/** A window is WINDOW_BLOCKS consecutive blocks (512 characters) and windows step by one block. */
export const WINDOW_BLOCKS = 4;
export const CUE_REPEAT = 4;

export const CUES: readonly { readonly name: string; readonly pattern: RegExp }[] = [
  {
    name: "assistant-addressed",
    pattern:
      /\b(?:assistant|ai model|language model|chatbot|chatgpt|gpt-?\d|llm|claude|gemini|copilot|dear (?:ai|agent|model))\b/gi,
  },
  {
    name: "you-must",
    pattern: /\byou (?:must|should|will|need to|have to|shall|are (?:now|going to|required))\b/gi,
  },
  { name: "instead", pattern: /\binstead\b/gi },
  {
    name: "send-to-address",
    pattern:
      /\b(?:send|forward|e-?mail|post|upload|transfer|share|leak|exfiltrate|visit|click)\b[^\n]{0,120}?(?:[\w.+-]+@[\w-]+\.\w|https?:\/\/|www\.)/gi,
  },
  { name: "urgency", pattern: /\b(?:important|urgent|urgently|immediately|attention|mandatory)\b|!!!/gi },
  {
    name: "role-tag",
    pattern:
      /<\|im_(?:start|end)\|>|<\|(?:system|user|assistant)\|>|\[\/?inst\]|<<\/?sys>>|#{2,}\s*\(?(?:system|instruction)|\bsystem_message\b|<\/?(?:system|instructions?|information)>|^\s*(?:system|assistant)\s*:/gim,
  },
  {
    name: "override",
    pattern:
      /\b(?:ignore|disregard|forget|override|bypass)\b[^.\n]{0,40}\b(?:instructions?|rules|guidelines|prompts?|directions|restrictions|filters?|task)\b/gi,
  },
  {
    name: "new-instructions",
    pattern: /\b(?:new|following|updated|real|actual) (?:instructions?|task|rules)\b/gi,
  },
  {
    name: "secrecy",
    pattern:
      /\b(?:do not|don't|never) (?:tell|inform|mention|reveal|let) (?:this to )?(?:the )?(?:user|anyone|them)\b|\bwithout (?:telling|informing|asking)\b/gi,
  },
  {
    name: "task-hijack",
    pattern:
      /\b(?:before (?:you )?(?:can )?(?:solve|answer|complete|continue|do)|after you do that|from now on|strictly adhere)\b/gi,
  },
];

export interface FeatureEvents {
  /** Hashed feature index of each event, already masked to the table size. */
  readonly buckets: Int32Array;
  /** Block of each event (position / BLOCK_CHARS). */
  readonly blocks: Int32Array;
  readonly count: number;
  /** Number of blocks of the text (at least 1). */
  readonly blockCount: number;
}

let buckets = new Int32Array(8192);
let blocks = new Int32Array(8192);
let count = 0;

const FNV_PRIME = 0x01000193;
const CHAR_SEED = 0x811c9dc5;
const WORD_SEED = 0x2f1b3c4d;
const UNIGRAM_SALT = 0x5bd1e995;
const BIGRAM_SALT = 0x1b873593;
const CUE_SALT = 0x68e31da4;

function finish(hash: number): number {
  let h = hash ^ (hash >>> 16);
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

function push(bucket: number, block: number): void {
  if (count === buckets.length) {
    const grownBuckets = new Int32Array(buckets.length * 2);
    grownBuckets.set(buckets);
    buckets = grownBuckets;
    const grownBlocks = new Int32Array(blocks.length * 2);
    grownBlocks.set(blocks);
    blocks = grownBlocks;
  }
  buckets[count] = bucket;
  blocks[count] = block;
  count++;
}

const CUE_BUCKET_HASHES = CUES.map((cue) => {
  let hash = CUE_SALT;
  for (let i = 0; i < cue.name.length; i++) hash = Math.imul(hash ^ cue.name.charCodeAt(i), FNV_PRIME);
  return finish(hash);
});

/** The feature events of `text` for a table of 2^bits weights (see the header for the features). */
export function extractFeatures(text: string, bits: number): FeatureEvents {
  const mask = (1 << bits) - 1;
  count = 0;
  const length = text.length;
  let c1 = 32;
  let c2 = 32;
  let c3 = 32;
  let c4 = 32;
  let seen = 0;
  let lastWasSpace = true;
  let wordHash = WORD_SEED;
  let inWord = false;
  let previousWord = 0;
  let wordBlock = 0;
  for (let i = 0; i < length; i++) {
    let code = text.charCodeAt(i);
    if (code >= 65 && code <= 90) code += 32;
    else if (code >= 48 && code <= 57) code = 48;
    else if (
      code === 32 ||
      code === 10 ||
      code === 9 ||
      code === 13 ||
      code === 160 ||
      code === 11 ||
      code === 12
    )
      code = 32;
    if (code === 32) {
      if (lastWasSpace) continue;
      lastWasSpace = true;
    } else lastWasSpace = false;
    const block = (i / BLOCK_CHARS) | 0;
    const isWordChar = (code >= 97 && code <= 122) || code === 48 || code === 39 || code > 127;
    if (isWordChar) {
      if (!inWord) {
        inWord = true;
        wordHash = WORD_SEED;
        wordBlock = block;
      }
      wordHash = Math.imul(wordHash ^ code, FNV_PRIME);
    } else if (inWord) {
      inWord = false;
      push(finish(wordHash ^ UNIGRAM_SALT) & mask, wordBlock);
      if (previousWord !== 0) push(finish(Math.imul(previousWord, BIGRAM_SALT) ^ wordHash) & mask, wordBlock);
      previousWord = wordHash | 1;
    }
    seen++;
    let hash = Math.imul(CHAR_SEED ^ code, FNV_PRIME);
    hash = Math.imul(hash ^ c1, FNV_PRIME);
    if (seen >= 3) {
      hash = Math.imul(hash ^ c2, FNV_PRIME);
      push(finish(hash) & mask, block);
      if (seen >= 4) {
        hash = Math.imul(hash ^ c3, FNV_PRIME);
        push(finish(hash) & mask, block);
        if (seen >= 5) {
          hash = Math.imul(hash ^ c4, FNV_PRIME);
          push(finish(hash) & mask, block);
        }
      }
    }
    c4 = c3;
    c3 = c2;
    c2 = c1;
    c1 = code;
  }
  if (inWord) {
    push(finish(wordHash ^ UNIGRAM_SALT) & mask, wordBlock);
    if (previousWord !== 0) push(finish(Math.imul(previousWord, BIGRAM_SALT) ^ wordHash) & mask, wordBlock);
  }
  for (let cue = 0; cue < CUES.length; cue++) {
    const pattern = (CUES[cue] as (typeof CUES)[number]).pattern;
    const bucket = (CUE_BUCKET_HASHES[cue] as number) & mask;
    pattern.lastIndex = 0;
    for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
      const block = (match.index / BLOCK_CHARS) | 0;
      for (let r = 0; r < CUE_REPEAT; r++) push(bucket, block);
      if (match[0].length === 0) pattern.lastIndex++;
    }
  }
  return { buckets, blocks, count, blockCount: Math.max(1, Math.ceil(length / BLOCK_CHARS)) };
}
