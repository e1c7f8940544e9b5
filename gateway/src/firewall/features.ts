// The classifier's features, shared by training (scripts/train-firewall.ts) and inference
// (window-classifier.ts) so both see exactly the same events.
//
// One pass over the char codes of the (normalised) text, no substrings: letters are lower-cased,
// digits folded to 0, whitespace runs collapsed to one space. Each position emits hashed events:
// - character 3-, 4- and 5-grams (hashes built from the last five folded codes);
// - word unigrams and word bigrams (a word is a run of letters, digits, apostrophes or non-ASCII chars);
// - cue events (CUE_NAMES): the shapes of an instruction planted for a model (addressing the
//   assistant, "you must", "instead", send-this-to-an-address, urgency, role tags, override and
//   secrecy phrases), found from word classes in the same pass. A cue counts CUE_REPEAT times so one
//   cue weighs like a short phrase and generalises across wordings the n-grams have not seen.
// Each event carries the block (BLOCK_CHARS characters of the normalised text) it starts in; the
// window classifier sums weights per block and scores windows of consecutive blocks (each head of the
// model says how many blocks make its window).
//
// Answers live in module-level buffers that are reused on every call (grown when needed): an answer
// is valid until the next call.

const BLOCK_SHIFT = 7;
export const BLOCK_CHARS = 1 << BLOCK_SHIFT;
export const CUE_REPEAT = 4;

// Word classes for the cue events. Words are matched by their folded hash, in the main loop (no regex).
const AI = 1;
const URGENT = 2;
const INSTEAD = 4;
const OVERRIDE_VERB = 8;
const RULE_NOUN = 16;
const EXFIL_VERB = 32;
const ADDRESS = 64;
const YOU = 128;
const MODAL = 256;
const NEW_ADJECTIVE = 512;
const NEGATION = 1024;
const TELL = 2048;
const WITHOUT = 4096;
const TELLING = 8192;
const ROLE = 16384;
const FROM = 32768;
const NOW = 65536;
const STRICTLY = 131072;
const ADHERE = 262144;
const TASK_VERB = 1 << 19;
const QUESTION = 1 << 20;
const YOUR = 1 << 21;
const ANSWER_NOUN = 1 << 22;

const WORD_CLASSES: Readonly<Record<number, readonly string[]>> = {
  [AI]: ["assistant", "chatbot", "chatgpt", "gpt", "llm", "claude", "gemini", "copilot", "bard"],
  [URGENT]: ["important", "urgent", "urgently", "immediately", "attention", "mandatory", "asap"],
  [INSTEAD]: ["instead"],
  [OVERRIDE_VERB]: ["ignore", "disregard", "forget", "override", "bypass", "discard", "abandon"],
  [RULE_NOUN]: [
    "instruction",
    "instructions",
    "rules",
    "guidelines",
    "prompt",
    "prompts",
    "directions",
    "restrictions",
    "filters",
    "task",
    "directives",
    "policies",
  ],
  [EXFIL_VERB]: [
    "send",
    "forward",
    "email",
    "post",
    "upload",
    "transfer",
    "share",
    "leak",
    "exfiltrate",
    "visit",
    "click",
  ],
  [ADDRESS]: ["www", "http", "https"],
  [YOU]: ["you"],
  [MODAL]: ["must", "should", "need", "shall", "have", "will"],
  [NEW_ADJECTIVE]: ["new", "following", "updated", "real", "actual", "additional"],
  [NEGATION]: ["not", "don't", "never", "dont"],
  [TELL]: ["tell", "inform", "mention", "reveal", "notify", "alert"],
  [WITHOUT]: ["without"],
  [TELLING]: ["telling", "informing", "notifying", "asking", "alerting"],
  [ROLE]: ["system", "sys", "inst", "im", "user", "assistant"],
  [FROM]: ["from"],
  [NOW]: ["now"],
  [STRICTLY]: ["strictly"],
  [ADHERE]: ["adhere", "follow"],
  [TASK_VERB]: [
    "write",
    "describe",
    "provide",
    "explain",
    "summarize",
    "summarise",
    "translate",
    "compose",
    "generate",
    "create",
    "list",
    "give",
    "name",
    "recommend",
    "suggest",
    "draft",
    "answer",
    "merge",
    "incorporate",
    "include",
    "insert",
    "append",
    "add",
    "use",
    "utilize",
  ],
  [QUESTION]: ["what", "how", "why", "who", "which", "where", "when", "can", "could"],
  [YOUR]: ["your"],
  [ANSWER_NOUN]: ["answer", "answers", "response", "responses", "reply", "solution", "output", "code"],
};

/**
 * The cue events (each named; the weight of each is learned like any other feature):
 * - assistant-addressed: the assistant or a model is named (assistant, ChatGPT, LLM, ...);
 * - urgency: "important", "immediately", ... or "!!!";
 * - instead: the word "instead";
 * - override: ignore/disregard/forget/... followed within 6 words by instructions/rules/prompt/task/...;
 * - send-to-address: send/forward/email/post/upload/visit/... followed within 25 words by an e-mail
 *   address (@ after a word) or a web address (www, http);
 * - you-must: "you" followed by must/should/need/shall/have/will;
 * - new-instructions: new/following/updated/real/actual followed by instructions/rules/task/...;
 * - secrecy: not/never/don't followed within 2 words by tell/inform/mention/reveal, or "without telling";
 * - role-tag: system/sys/inst/im/user/assistant right after <, [, #, | or ( (chat-template and
 *   "###(system_message)" markers);
 * - task-hijack: "from now", "strictly adhere/follow";
 * - task-sentence: a sentence or line that opens with a task verb (write, describe, provide, merge, ...):
 *   a request to the reader, which data rarely starts a sentence with;
 * - question-sentence: a sentence or line that opens with what/how/why/... (a question put to the reader);
 * - your-answer: "your" followed by answer/response/reply/solution/output/code (text that speaks about
 *   what the reading model will produce).
 */
export const CUE_NAMES = [
  "assistant-addressed",
  "urgency",
  "instead",
  "override",
  "send-to-address",
  "you-must",
  "new-instructions",
  "secrecy",
  "role-tag",
  "task-hijack",
  "task-sentence",
  "question-sentence",
  "your-answer",
] as const;

export interface FeatureEvents {
  /** Hashed feature index of each event, already masked to the table size. */
  readonly buckets: Int32Array;
  /** Block of each event (position / BLOCK_CHARS). */
  readonly blocks: Int32Array;
  readonly count: number;
  /** Number of blocks of the text (at least 1). */
  readonly blockCount: number;
  /** Number of cue events (CUE_NAMES) found, each counted once. */
  readonly cueCount: number;
}

let buckets = new Int32Array(8192);
let blocks = new Int32Array(8192);
let count = 0;
let cueCount = 0;
let longestBase64Run = 0;

const FNV_PRIME = 0x01000193;
const CHAR_SEED = 0x811c9dc5;
const WORD_SEED = 0x2f1b3c4d;
const UNIGRAM_SALT = 0x5bd1e995;
const BIGRAM_SALT = 0x1b873593;
const CUE_SALT = 0x68e31da4;

// Multiplicative finish: one multiply spreads the FNV state into the high bits, which pick the bucket.
function finish(hash: number): number {
  return Math.imul(hash ^ (hash >>> 15), 0x2c1b3c6d);
}

// Where events go: into the event buffers (training), or, when `sinkWeights` is set (inference),
// straight into per-block weight sums and counts, which saves writing and re-reading every event.
let sinkWeights: Int8Array | null = null;
let blockSums = new Int32Array(256);
let blockCounts = new Int32Array(256);

function push(bucket: number, block: number): void {
  if (sinkWeights !== null) {
    blockSums[block] = (blockSums[block] as number) + (sinkWeights[bucket] as number);
    blockCounts[block] = (blockCounts[block] as number) + 1;
    return;
  }
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

function hashWord(word: string): number {
  let hash = WORD_SEED;
  for (let i = 0; i < word.length; i++) hash = Math.imul(hash ^ word.charCodeAt(i), FNV_PRIME);
  return hash;
}

const CUE_HASHES = CUE_NAMES.map((name) => finish(hashWord(name) ^ CUE_SALT));

// Word hash -> classes, open addressing (a word may be in several classes, e.g. "assistant").
const CLASS_TABLE_BITS = 9;
const CLASS_TABLE_SIZE = 1 << CLASS_TABLE_BITS;
const classKeys = new Int32Array(CLASS_TABLE_SIZE);
const classBits = new Int32Array(CLASS_TABLE_SIZE);
for (const [bit, words] of Object.entries(WORD_CLASSES)) {
  for (const word of words) {
    const key = hashWord(word);
    let slot = finish(key) >>> (32 - CLASS_TABLE_BITS);
    while (classBits[slot] !== 0 && classKeys[slot] !== key) slot = (slot + 1) & (CLASS_TABLE_SIZE - 1);
    classKeys[slot] = key;
    classBits[slot] = (classBits[slot] as number) | Number(bit);
  }
}

function wordClasses(key: number): number {
  let slot = finish(key) >>> (32 - CLASS_TABLE_BITS);
  for (;;) {
    const bits = classBits[slot] as number;
    if (bits === 0) return 0;
    if (classKeys[slot] === key) return bits;
    slot = (slot + 1) & (CLASS_TABLE_SIZE - 1);
  }
}

function pushCue(cue: number, shift: number, block: number): void {
  cueCount++;
  const bucket = (CUE_HASHES[cue] as number) >>> shift;
  for (let r = 0; r < CUE_REPEAT; r++) push(bucket, block);
}

const FAR_AWAY = -1_000_000;

/** Set in ASCII_FOLD on a code whose folded form is in the base64 alphabet. */
const IN_BASE64 = 128;
/**
 * Each ASCII code folded (letters lower-cased, digits to 0, whitespace to a space), with IN_BASE64 when the folded
 * code is in the base64 alphabet (lower-case letters, 0, "/" and "+").
 */
const ASCII_FOLD = new Uint8Array(128);
for (let code = 0; code < 128; code++) {
  let folded = code;
  if (code >= 65 && code <= 90) folded += 32;
  else if (code >= 48 && code <= 57) folded = 48;
  else if (code === 10 || code === 9 || code === 13 || code === 11 || code === 12) folded = 32;
  const inBase64 = (folded >= 97 && folded <= 122) || folded === 48 || folded === 47 || folded === 43;
  ASCII_FOLD[code] = folded | (inBase64 ? IN_BASE64 : 0);
}

/** The feature events of `text` for a table of 2^bits weights (see the header for the features). */
export function extractFeatures(text: string, bits: number): FeatureEvents {
  sinkWeights = null;
  count = 0;
  scan(text, 32 - bits);
  return { buckets, blocks, count, blockCount: blockCountOf(text), cueCount };
}

export interface BlockWeightSums {
  /** Sum of the int8 weights of the events of each block (exact integers). */
  readonly sums: Int32Array;
  readonly counts: Int32Array;
  readonly blockCount: number;
  /** Number of cue events (CUE_NAMES) found, each counted once. */
  readonly cueCount: number;
  /**
   * The longest run of base64-alphabet characters (A-Z a-z 0-9 + /): the detector decodes wrapped runs only when
   * one is long enough, and finding that out in this pass saves a second pass over every text.
   */
  readonly longestBase64Run: number;
}

function blockCountOf(text: string): number {
  return Math.max(1, Math.ceil(text.length / BLOCK_CHARS));
}

/**
 * The same events as extractFeatures, summed per block under `weights` (2^bits int8 weights) as they
 * are produced. The answer's arrays are reused by the next call.
 */
export function blockWeightSums(text: string, bits: number, weights: Int8Array): BlockWeightSums {
  const blockCount = blockCountOf(text);
  if (blockSums.length < blockCount) {
    blockSums = new Int32Array(blockCount * 2);
    blockCounts = new Int32Array(blockCount * 2);
  }
  blockSums.fill(0, 0, blockCount);
  blockCounts.fill(0, 0, blockCount);
  sinkWeights = weights;
  try {
    scan(text, 32 - bits);
  } finally {
    sinkWeights = null;
  }
  return { sums: blockSums, counts: blockCounts, blockCount, cueCount, longestBase64Run };
}

function scan(text: string, shift: number): void {
  cueCount = 0;
  // The longest base64 run is kept in a local and settled when a run ends (and at the end of the text), not written
  // to the module's variable on every character.
  let longestRun = 0;
  let base64Run = 0;
  const length = text.length;
  // Character n-grams are three quarters of all events and always land in the current block, which only moves
  // forward: when scoring, their weights and number are summed in locals and added to the block once it is left,
  // instead of three read-modify-writes of the block arrays per character. Integer sums, so the answer is the same.
  const weights = sinkWeights;
  let gramBlock = 0;
  let gramSum = 0;
  let gramCount = 0;
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
  // Cue state: word index of the latest words of some classes, the classes of the previous word.
  let wordIndex = 0;
  let previousClasses = 0;
  let lastOverride = FAR_AWAY;
  let lastExfil = FAR_AWAY;
  let lastNegation = FAR_AWAY;
  let lastRoleMarker = FAR_AWAY;
  let wordStartsAfterMarker = false;
  // A sentence or line starts at the text's start and after . ! ? or a line break.
  let atSentenceStart = true;
  let wordStartsSentence = false;
  let exclamations = 0;
  for (let i = 0; i <= length; i++) {
    let code = i < length ? text.charCodeAt(i) : 32;
    if (code === 10) atSentenceStart = true;
    // Lower-case letters, most of any text, are already folded and in the base64 alphabet: tested first, they skip
    // the other tests.
    if (code >= 97 && code <= 122) base64Run++;
    else if (code < 128) {
      // One load folds an ASCII code and says whether it is in the base64 alphabet (ASCII_FOLD).
      const folded = ASCII_FOLD[code] as number;
      code = folded & 127;
      if (folded & IN_BASE64) base64Run++;
      else {
        if (base64Run > longestRun) longestRun = base64Run;
        base64Run = 0;
      }
    } else {
      // Past ASCII only the no-break space folds (to a space), and nothing is in the base64 alphabet.
      if (code === 160) code = 32;
      if (base64Run > longestRun) longestRun = base64Run;
      base64Run = 0;
    }
    if (code === 32) {
      if (lastWasSpace && i < length) continue;
      lastWasSpace = true;
    } else lastWasSpace = false;
    const block = Math.min(i, length - 1) >>> BLOCK_SHIFT;
    const isWordChar = (code >= 97 && code <= 122) || code === 48 || code === 39 || code > 127;
    if (isWordChar) {
      if (!inWord) {
        inWord = true;
        wordHash = WORD_SEED;
        wordBlock = block;
        wordStartsAfterMarker = i - lastRoleMarker <= 2;
        wordStartsSentence = atSentenceStart;
        atSentenceStart = false;
      }
      wordHash = Math.imul(wordHash ^ code, FNV_PRIME);
    } else {
      if (inWord) {
        inWord = false;
        push(finish(wordHash ^ UNIGRAM_SALT) >>> shift, wordBlock);
        if (previousWord !== 0)
          push(finish(Math.imul(previousWord, BIGRAM_SALT) ^ wordHash) >>> shift, wordBlock);
        previousWord = wordHash | 1;
        const classes = wordClasses(wordHash);
        if (classes !== 0 || previousClasses !== 0) {
          if (classes & AI) pushCue(0, shift, wordBlock);
          if (classes & URGENT) pushCue(1, shift, wordBlock);
          if (classes & INSTEAD) pushCue(2, shift, wordBlock);
          if (classes & RULE_NOUN && wordIndex - lastOverride <= 6) pushCue(3, shift, wordBlock);
          if (classes & ADDRESS && wordIndex - lastExfil <= 25) pushCue(4, shift, wordBlock);
          if (classes & MODAL && previousClasses & YOU) pushCue(5, shift, wordBlock);
          if (classes & RULE_NOUN && previousClasses & NEW_ADJECTIVE) pushCue(6, shift, wordBlock);
          if (
            (classes & TELL && wordIndex - lastNegation <= 2) ||
            (classes & TELLING && previousClasses & WITHOUT)
          )
            pushCue(7, shift, wordBlock);
          if (classes & ROLE && wordStartsAfterMarker) pushCue(8, shift, wordBlock);
          if ((classes & NOW && previousClasses & FROM) || (classes & ADHERE && previousClasses & STRICTLY))
            pushCue(9, shift, wordBlock);
          if (classes & TASK_VERB && wordStartsSentence) pushCue(10, shift, wordBlock);
          if (classes & QUESTION && wordStartsSentence) pushCue(11, shift, wordBlock);
          if (classes & ANSWER_NOUN && previousClasses & YOUR) pushCue(12, shift, wordBlock);
          if (classes & OVERRIDE_VERB) lastOverride = wordIndex;
          if (classes & EXFIL_VERB) lastExfil = wordIndex;
          if (classes & NEGATION) lastNegation = wordIndex;
        }
        previousClasses = classes;
        wordIndex++;
        // An e-mail address: "@" right after a word.
        if (code === 64 && wordIndex - 1 - lastExfil <= 25) pushCue(4, shift, block);
      }
      if (code === 60 || code === 91 || code === 35 || code === 124 || code === 40) lastRoleMarker = i;
      if (code === 46 || code === 33 || code === 63) atSentenceStart = true;
      else if (code !== 32 && code !== 45 && code !== 42) atSentenceStart = false;
      if (code === 33) {
        if (++exclamations === 3) pushCue(1, shift, block);
      } else exclamations = 0;
    }
    if (i === length) break;
    seen++;
    let hash = Math.imul(CHAR_SEED ^ code, FNV_PRIME);
    hash = Math.imul(hash ^ c1, FNV_PRIME);
    if (weights !== null) {
      if (block !== gramBlock) {
        flushGrams(gramBlock, gramSum, gramCount);
        gramBlock = block;
        gramSum = 0;
        gramCount = 0;
      }
      if (seen >= 5) {
        hash = Math.imul(hash ^ c2, FNV_PRIME);
        gramSum += weights[finish(hash) >>> shift] as number;
        hash = Math.imul(hash ^ c3, FNV_PRIME);
        gramSum += weights[finish(hash) >>> shift] as number;
        hash = Math.imul(hash ^ c4, FNV_PRIME);
        gramSum += weights[finish(hash) >>> shift] as number;
        gramCount += 3;
      } else if (seen >= 3) {
        hash = Math.imul(hash ^ c2, FNV_PRIME);
        gramSum += weights[finish(hash) >>> shift] as number;
        gramCount++;
        if (seen === 4) {
          hash = Math.imul(hash ^ c3, FNV_PRIME);
          gramSum += weights[finish(hash) >>> shift] as number;
          gramCount++;
        }
      }
    } else if (seen >= 3) {
      hash = Math.imul(hash ^ c2, FNV_PRIME);
      push(finish(hash) >>> shift, block);
      if (seen >= 4) {
        hash = Math.imul(hash ^ c3, FNV_PRIME);
        push(finish(hash) >>> shift, block);
        if (seen >= 5) {
          hash = Math.imul(hash ^ c4, FNV_PRIME);
          push(finish(hash) >>> shift, block);
        }
      }
    }
    c4 = c3;
    c3 = c2;
    c2 = c1;
    c1 = code;
  }
  if (weights !== null) flushGrams(gramBlock, gramSum, gramCount);
  longestBase64Run = Math.max(longestRun, base64Run);
}

function flushGrams(block: number, sum: number, events: number): void {
  blockSums[block] = (blockSums[block] as number) + sum;
  blockCounts[block] = (blockCounts[block] as number) + events;
}
