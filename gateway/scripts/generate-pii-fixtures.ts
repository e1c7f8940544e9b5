// Writes the labelled PII test texts in test/fixtures/pii/ (synthetic-dev.jsonl, synthetic-heldout.jsonl),
// in the style of Presidio's synthetic data: sentence templates filled with fake values that carry valid
// check digits, plus realistic near-misses (order and tracking numbers, Luhn-invalid card numbers, version
// strings, timestamps) that must not be found. Seeded: the same seed writes the same files.
//
//   node gateway/scripts/generate-pii-fixtures.ts [--seed N] [--per-template N]
//
// Templates alternate between the two files (even index: dev, odd: held-out), so held-out figures come from
// phrasings the recognizers were never tuned on. Each line: {"text", "spans": [{start, end, entity}],
// "template"}.

import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { parsePhoneNumberFromString } from "libphonenumber-js/max";
import { bech32Polymod, ibanMod97Valid, luhnValid, nhsValid } from "../src/pii/checksums.ts";

const { values: args } = parseArgs({
  options: {
    seed: { type: "string", default: "20240611" },
    "per-template": { type: "string", default: "12" },
  },
});
const OUT_DIR = new URL("../test/fixtures/pii/", import.meta.url);

// ---- seeded randomness (mulberry32) -------------------------------------------------------------------------

let state = Number(args.seed) >>> 0;
function random(): number {
  state = (state + 0x6d2b79f5) >>> 0;
  let t = state;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const int = (min: number, max: number) => min + Math.floor(random() * (max - min + 1));
const pick = <T>(items: readonly T[]): T => items[int(0, items.length - 1)] as T;
const digits = (count: number) => Array.from({ length: count }, () => int(0, 9)).join("");
const pad = (value: number, width: number) => String(value).padStart(width, "0");
const letters = (count: number, alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ") =>
  Array.from({ length: count }, () => pick([...alphabet])).join("");

// ---- fake values --------------------------------------------------------------------------------------------

const FIRST = [
  "james",
  "maria",
  "wei",
  "aisha",
  "olga",
  "juan",
  "priya",
  "tom",
  "fatima",
  "lukas",
  "emma",
  "kenji",
];
const LAST = [
  "smith",
  "garcia",
  "chen",
  "okafor",
  "novak",
  "rossi",
  "patel",
  "muller",
  "kim",
  "dubois",
  "silva",
];
const DOMAINS = [
  "example.com",
  "mail.example.org",
  "corp.example.co.uk",
  "acme.io",
  "uni-example.edu",
  "web.de",
];

function email(): string {
  const first = pick(FIRST);
  const last = pick(LAST);
  const local = pick([
    `${first}.${last}`,
    `${first[0]}${last}${int(1, 99)}`,
    `${first}_${last}`,
    `${first}+news`,
  ]);
  return `${local}@${pick(DOMAINS)}`;
}

/** A card number of `length` digits starting with `prefix`, its last digit the Luhn check digit. */
function luhnNumber(prefix: string, length: number): string {
  const body = prefix + digits(length - prefix.length - 1);
  for (let check = 0; check <= 9; check++) if (luhnValid(body + check)) return body + check;
  throw new Error("unreachable");
}

function creditCard(): string {
  const [prefix, length] = pick([
    ["4", 16],
    ["4", 13],
    [String(int(51, 55)), 16],
    [String(int(2221, 2720)), 16],
    [pick(["34", "37"]), 15],
    ["6011", 16],
    ["35", 16],
    ["36", 14],
  ] as const);
  const number = luhnNumber(prefix, length);
  if (length === 15)
    return pick([number, `${number.slice(0, 4)} ${number.slice(4, 10)} ${number.slice(10)}`]);
  if (length !== 16) return number;
  const separator = pick(["", " ", "-"]);
  return number.match(/.{4}/g)?.join(separator) ?? number;
}

function invalidCard(): string {
  const valid = luhnNumber("4", 16);
  const last = Number(valid.slice(-1));
  const broken = valid.slice(0, -1) + String((last + int(1, 9)) % 10);
  return pick(["", " ", "-"]) === "" ? broken : (broken.match(/.{4}/g)?.join(" ") ?? broken);
}

function ssn(): string {
  let area = int(1, 899);
  if (area === 666) area = 667;
  const number = [pad(area, 3), pad(int(1, 99), 2), pad(int(1, 9999), 4)];
  return number.join(pick(["-", "-", " "]));
}

function invalidSsn(): string {
  return pick([
    `000-${pad(int(1, 99), 2)}-${pad(int(1, 9999), 4)}`,
    `666-${pad(int(1, 99), 2)}-${digits(4)}`,
    `${pad(int(1, 899), 3)}-00-${digits(4)}`,
  ]);
}

function itin(): string {
  const group = pick([int(50, 65), int(70, 88), int(90, 92), int(94, 99)]);
  const separator = pick(["-", " "]);
  return `9${digits(2)}${separator}${group}${separator}${digits(4)}`;
}

const NANP_AREAS = [
  "201",
  "202",
  "212",
  "213",
  "305",
  "312",
  "415",
  "503",
  "512",
  "617",
  "646",
  "702",
  "713",
  "773",
  "786",
  "818",
  "917",
  "972",
];

function validPhone(make: () => string, region?: "US"): string {
  for (;;) {
    const number = make();
    const parsed = parsePhoneNumberFromString(
      number.replace(/\(0\)/, ""),
      region ? { defaultCountry: region } : undefined,
    );
    if (parsed?.isValid()) return number;
  }
}

function phone(): string {
  const kind = pick(["us", "us", "us", "intl-us", "uk", "de", "fr", "in"]);
  if (kind === "us" || kind === "intl-us") {
    return validPhone(() => {
      const area = pick(NANP_AREAS);
      const exchange = `${int(2, 9)}${digits(2)}`;
      const line = digits(4);
      if (kind === "intl-us")
        return pick([`+1 ${area} ${exchange} ${line}`, `+1-${area}-${exchange}-${line}`]);
      return pick([
        `(${area}) ${exchange}-${line}`,
        `${area}-${exchange}-${line}`,
        `${area}.${exchange}.${line}`,
      ]);
    }, "US");
  }
  if (kind === "uk")
    return validPhone(() =>
      pick([`+44 20 7${digits(3)} ${digits(4)}`, `+44 7${int(400, 999)} ${digits(6)}`]),
    );
  if (kind === "de")
    return validPhone(() => pick([`+49 30 ${digits(7)}`, `+49 89 ${digits(3)} ${digits(4)}`]));
  if (kind === "fr")
    return validPhone(() => `+33 ${int(1, 7)} ${digits(2)} ${digits(2)} ${digits(2)} ${digits(2)}`);
  return validPhone(() => `+91 ${int(70, 99)}${digits(3)} ${digits(5)}`);
}

function ipv4(): string {
  return [int(11, 223), int(0, 255), int(0, 255), int(1, 254)].join(".");
}

function ipv6(): string {
  const groups = Array.from({ length: 8 }, () => int(0, 0xffff).toString(16));
  if (random() < 0.5) return groups.join(":");
  return `${groups.slice(0, 3).join(":")}::${groups.slice(6).join(":")}`;
}

function url(): string {
  const host = pick(["www.example.com", "docs.example.org", "portal.acme.io", "example.net"]);
  const path = pick([
    "",
    "/",
    "/account/settings",
    "/search?q=report&page=2",
    "/u/12345/profile",
    "/docs/intro.html",
  ]);
  return pick([`https://${host}${path}`, `http://${host}${path}`, `https://${host}${path}#top`]);
}

function iban(): string {
  const [country, bban] = pick([
    ["DE", () => digits(18)],
    ["GB", () => letters(4) + digits(14)],
    ["FR", () => `${digits(10)}${letters(1)}${digits(10)}${digits(2)}`],
    ["NL", () => letters(4) + digits(10)],
    ["ES", () => digits(20)],
    ["IT", () => letters(1) + digits(10) + digits(12)],
  ] as const);
  const body = bban();
  for (let check = 2; check <= 98; check++) {
    const candidate = `${country}${pad(check, 2)}${body}`;
    if (ibanMod97Valid(candidate))
      return random() < 0.5 ? candidate : (candidate.match(/.{1,4}/g)?.join(" ") ?? candidate);
  }
  throw new Error("unreachable");
}

function invalidIban(): string {
  const valid = iban().replace(/ /g, "");
  const check = Number(valid.slice(2, 4));
  return `${valid.slice(0, 2)}${pad(((check + int(1, 50)) % 97) + 2, 2)}${valid.slice(4)}`;
}

const BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

function base58Check(version: number): string {
  const payload = Buffer.from([version, ...Array.from({ length: 20 }, () => int(0, 255))]);
  const checksum = createHash("sha256").update(createHash("sha256").update(payload).digest()).digest();
  let value = BigInt(`0x${Buffer.concat([payload, checksum.subarray(0, 4)]).toString("hex")}`);
  let out = "";
  while (value > 0n) {
    out = BASE58[Number(value % 58n)] + out;
    value /= 58n;
  }
  for (const byte of payload) {
    if (byte !== 0) break;
    out = `1${out}`;
  }
  return out;
}

function bech32Address(): string {
  const charset = "qpzry9x8gf2tvdw0s3jn54khce6mua7l";
  const program = Array.from({ length: 32 }, () => int(0, 31)); // 20 bytes = 160 bits = 32 five-bit groups
  const data = [0, ...program];
  const polymod = bech32Polymod([3, 3, 0, 2, 3, ...data, 0, 0, 0, 0, 0, 0]) ^ 1;
  const checksum = Array.from({ length: 6 }, (_, i) => (polymod >>> (5 * (5 - i))) & 31);
  return `bc1${[...data, ...checksum].map((value) => charset[value]).join("")}`;
}

function crypto(): string {
  return pick([() => base58Check(0), () => base58Check(5), bech32Address])();
}

function nhs(): string {
  for (;;) {
    const number = digits(10);
    if (nhsValid(number) && number[0] !== "0")
      return random() < 0.6 ? `${number.slice(0, 3)} ${number.slice(3, 6)} ${number.slice(6)}` : number;
  }
}

function dea(): string {
  const first = pick([..."ABFGM"]);
  const second = pick([...letters(1), "9"]);
  const body = digits(6);
  const d = [...body].map(Number) as number[];
  const sum = (d[0] ?? 0) + (d[2] ?? 0) + (d[4] ?? 0) + 2 * ((d[1] ?? 0) + (d[3] ?? 0) + (d[5] ?? 0));
  return `${first}${second}${body}${sum % 10}`;
}

function passport(): string {
  return pick([`${int(1, 9)}${digits(8)}`, `${letters(1)}${int(1, 9)}${digits(7)}`]);
}

function driverLicense(): string {
  return pick([
    `${letters(1)}${digits(7)}`,
    `${letters(1)}${digits(12)}`,
    `${letters(2)}${digits(6)}`,
    digits(9),
  ]);
}

function bankAccount(): string {
  return `${int(1, 9)}${digits(int(7, 16))}`;
}

const MONTHS = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December",
];

function date(): string {
  const year = int(1940, 2030);
  const month = int(1, 12);
  const day = int(1, 28);
  return pick([
    `${month}/${day}/${year}`,
    `${pad(month, 2)}/${pad(day, 2)}/${year}`,
    `${year}-${pad(month, 2)}-${pad(day, 2)}`,
    `${MONTHS[month - 1]} ${day}, ${year}`,
    `${day} ${MONTHS[month - 1]} ${year}`,
    `${year}-${pad(month, 2)}-${pad(day, 2)}T${pad(int(0, 23), 2)}:${pad(int(0, 59), 2)}:${pad(int(0, 59), 2)}Z`,
  ]);
}

// Values that look like personal data and are not: they are inserted without a label.
const NEAR_MISSES: Record<string, () => string> = {
  order: () =>
    pick([
      `ORD-${int(2019, 2025)}-${digits(6)}`,
      `${digits(3)}-${digits(7)}-${digits(7)}`,
      `#${int(10000, 999999)}`,
    ]),
  invoice: () => pick([`INV-${digits(8)}`, `${int(2019, 2025)}${digits(4)}`]),
  tracking: () =>
    pick([
      `1Z${letters(3)}${digits(3)}${letters(2)}${digits(8)}`,
      `${digits(4)} ${digits(4)} ${digits(4)} ${digits(4)} ${digits(4)} ${digits(2)}`,
    ]),
  version: () =>
    pick([
      `v${int(0, 12)}.${int(0, 30)}.${int(0, 99)}`,
      `${int(1, 20)}.${int(0, 9)}.${int(0, 30000)}.${int(0, 9999)}`,
      `${int(1, 9)}.${int(0, 9)}.${int(0, 9)}.${int(0, 9)}`,
    ]),
  invalidCard,
  invalidSsn,
  invalidIban,
  epochMillis: () => String(int(1_500_000_000_000, 1_800_000_000_000)),
  isbn: () => `978-${int(0, 9)}-${digits(3)}-${digits(5)}-${int(0, 9)}`,
  sku: () => `${letters(3)}-${digits(5)}`,
  hash: () => createHash("sha1").update(String(random())).digest("hex"),
  uuid: () => `${digits(8)}-${letters(4, "abcdef0123456789")}-4${digits(3)}-a${digits(3)}-${digits(12)}`,
  port: () => `localhost:${int(1024, 65535)}`,
  price: () => `$${int(1, 99)},${digits(3)}.${digits(2)}`,
  zip: () => digits(5),
  time: () => `${pad(int(0, 23), 2)}:${pad(int(0, 59), 2)}`,
  count: () => String(int(1, 9_999_999)),
};

const VALUES: Record<string, () => string> = {
  EMAIL_ADDRESS: email,
  CREDIT_CARD: creditCard,
  US_SSN: ssn,
  US_ITIN: itin,
  PHONE_NUMBER: phone,
  IP_ADDRESS: () => (random() < 0.75 ? ipv4() : ipv6()),
  URL: url,
  IBAN_CODE: iban,
  CRYPTO: crypto,
  UK_NHS: nhs,
  MEDICAL_LICENSE: dea,
  US_PASSPORT: passport,
  US_DRIVER_LICENSE: driverLicense,
  US_BANK_NUMBER: bankAccount,
  DATE_TIME: date,
};

// ---- templates ----------------------------------------------------------------------------------------------
// {ENTITY} is a labelled value; {~name} an unlabelled near-miss. Every date in a template is a {DATE_TIME}.

const TEMPLATES: readonly string[] = [
  "Please send the receipt to {EMAIL_ADDRESS}, thanks.",
  "Contact: {EMAIL_ADDRESS} (billing) or {EMAIL_ADDRESS} for support.",
  'User record: {"name": "J. Doe", "email": "{EMAIL_ADDRESS}", "plan": "pro"}',
  "From: {EMAIL_ADDRESS}\nSubject: Re: {~order}\nHi team, see the attached log.",
  "Charge the card {CREDIT_CARD} for the annual plan.",
  "Payment failed for Visa ending in card number {CREDIT_CARD}; retry scheduled for {DATE_TIME}.",
  "The customer read out {CREDIT_CARD} over the phone, expiry 08/27.",
  "cc: {CREDIT_CARD} cvv on file",
  "My social security number is {US_SSN}.",
  "SSN {US_SSN} belongs to the applicant born on {DATE_TIME}.",
  "Employee file updated: ssn={US_SSN}, status=active",
  "Please verify the social security number {US_SSN} against the W-2.",
  "Call me at {PHONE_NUMBER} after 5pm.",
  "Phone: {PHONE_NUMBER} | Fax: {PHONE_NUMBER}",
  "You can reach the front desk on {PHONE_NUMBER} or by mobile {PHONE_NUMBER}.",
  "The driver left a voicemail from {PHONE_NUMBER} about order {~order}.",
  "Login from {IP_ADDRESS} at {DATE_TIME} was blocked.",
  "client_ip={IP_ADDRESS} status=403 bytes={~count}",
  "The server at {IP_ADDRESS} runs release {~version}.",
  "Whitelist {IP_ADDRESS} and {IP_ADDRESS} in the firewall.",
  "See {URL} for the full report.",
  "Docs moved to {URL}; the old link {URL} redirects.",
  "Open {URL} and sign in with your account.",
  "[link]({URL}) has the details",
  "Wire the deposit to IBAN {IBAN_CODE} before {DATE_TIME}.",
  "Bank details: {IBAN_CODE}, reference {~invoice}.",
  "Refund to account {IBAN_CODE} was issued.",
  "Her IBAN is {IBAN_CODE} at the Berlin branch.",
  "Send 0.05 BTC to {CRYPTO} to unlock the files.",
  "Donations: bitcoin wallet {CRYPTO}",
  "The withdrawal address {CRYPTO} was added to the allow list.",
  "payout_address: {CRYPTO}",
  "NHS number {UK_NHS} registered with the GP practice.",
  "Patient {UK_NHS} was referred on {DATE_TIME}.",
  "Please quote your NHS number ({UK_NHS}) when booking.",
  "nhs_no={UK_NHS};ward=7B",
  "Prescriber DEA number {MEDICAL_LICENSE} on the script.",
  "Medical license {MEDICAL_LICENSE} expires on {DATE_TIME}.",
  "dea: {MEDICAL_LICENSE}",
  "Verify the DEA registration {MEDICAL_LICENSE} before dispensing.",
  "Your ITIN {US_ITIN} was accepted by the IRS.",
  "taxpayer id (itin): {US_ITIN}",
  "Enter the individual taxpayer identification number {US_ITIN} on line 3.",
  "ITIN {US_ITIN} is linked to this return.",
  "Passport number {US_PASSPORT} was scanned at the gate.",
  "Travel document: passport {US_PASSPORT}, expires {DATE_TIME}.",
  "Her US passport # is {US_PASSPORT}.",
  "passport_no: {US_PASSPORT}",
  "Driver license {US_DRIVER_LICENSE} was suspended.",
  "DL# {US_DRIVER_LICENSE}, class C",
  "Scan of the driving license {US_DRIVER_LICENSE} attached.",
  "The permit number on the license is {US_DRIVER_LICENSE}.",
  "Bank account {US_BANK_NUMBER} will be debited monthly.",
  "Checking acct {US_BANK_NUMBER}, routing on file.",
  "Direct deposit to account number {US_BANK_NUMBER} starts next week.",
  "Savings account {US_BANK_NUMBER} closed.",
  "The meeting was moved to {DATE_TIME}.",
  "Date of birth: {DATE_TIME}",
  "Invoice {~invoice} dated {DATE_TIME} is overdue.",
  "created_at={DATE_TIME} updated_at={DATE_TIME}",
  "Dear {EMAIL_ADDRESS}, your card {CREDIT_CARD} and phone {PHONE_NUMBER} are on file.",
  "Applicant SSN {US_SSN}, phone {PHONE_NUMBER}, email {EMAIL_ADDRESS}.",
  "Ticket {~order}: user {EMAIL_ADDRESS} from {IP_ADDRESS} cannot log in.",
  "Patient NHS no. {UK_NHS}, contact {PHONE_NUMBER}, email {EMAIL_ADDRESS}.",
  "Transfer from {IBAN_CODE} to wallet {CRYPTO} flagged for review.",
  '{"ssn": "{US_SSN}", "phone": "{PHONE_NUMBER}", "card": "{CREDIT_CARD}"}',
  // Near-misses only: nothing here is personal data.
  "Order {~order} shipped with tracking number {~tracking}.",
  "Upgraded from {~version} to {~version} without issues.",
  "Card number {~invalidCard} was rejected: invalid check digit.",
  "Test SSN {~invalidSsn} is reserved and never issued.",
  "The IBAN {~invalidIban} failed validation.",
  "Event timestamp {~epochMillis} ms, build {~version}.",
  "ISBN {~isbn} is out of stock; SKU {~sku}.",
  "Commit {~hash} fixed request {~uuid}.",
  "Dev server listening on {~port}, took {~count} ms.",
  "Total due {~price}, zip {~zip}, pickup at {~time}.",
  "Invoice {~invoice} for order {~order}: {~count} items.",
  "Release {~version} fixes issue {~count}.",
  "We processed {~count} orders and {~count} refunds this quarter.",
  "Tracking {~tracking} is out for delivery; reference {~invoice}.",
];

interface Span {
  start: number;
  end: number;
  entity: string;
}

function fill(template: string): { text: string; spans: Span[] } {
  let text = "";
  const spans: Span[] = [];
  let at = 0;
  for (const match of template.matchAll(/\{(~?[A-Za-z_]+)\}/g)) {
    text += template.slice(at, match.index);
    at = match.index + match[0].length;
    const name = match[1] as string;
    if (name.startsWith("~")) {
      const make = NEAR_MISSES[name.slice(1)];
      if (make === undefined) throw new Error(`unknown near-miss ${name}`);
      text += make();
      continue;
    }
    const make = VALUES[name];
    if (make === undefined) throw new Error(`unknown entity ${name}`);
    const value = make();
    spans.push({ start: text.length, end: text.length + value.length, entity: name });
    text += value;
  }
  return { text: text + template.slice(at), spans };
}

const perTemplate = Number(args["per-template"]);
const dev: string[] = [];
const heldOut: string[] = [];
TEMPLATES.forEach((template, index) => {
  for (let i = 0; i < perTemplate; i++) {
    const line = JSON.stringify({ ...fill(template), template: index });
    (index % 2 === 0 ? dev : heldOut).push(line);
  }
});
writeFileSync(new URL("synthetic-dev.jsonl", OUT_DIR), `${dev.join("\n")}\n`);
writeFileSync(new URL("synthetic-heldout.jsonl", OUT_DIR), `${heldOut.join("\n")}\n`);
console.log(`wrote ${dev.length} dev and ${heldOut.length} held-out texts (seed ${args.seed})`);
