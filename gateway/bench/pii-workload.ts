// The bench's pii workload: about 1 KB of a support ticket with the personal data tool arguments really carry (the
// upstream's `report` tool returns it four times over, a 4 KB result). Shared by run-bench.ts and
// profile-inspectors.ts so both measure the same text.
const ticket = [
  "hello from the bench: customer Jane Roe (jane.roe@example.com, +1 415 555 0132) reports that card",
  "4111 1111 1111 1111 was declined twice at the self-service kiosk. She called from 198.51.100.23 and asked",
  "for a refund to IBAN GB82 WEST 1234 5698 7654 32. Her SSN on the account form reads 536-22-8841.",
].join(" ");

export const piiText =
  `${ticket} ${"The agent checked the order history and the shipping notes; nothing else was unusual. ".repeat(8)}`.slice(
    0,
    1024,
  );
