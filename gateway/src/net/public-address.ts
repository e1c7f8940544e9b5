// Which IP addresses a request driven by remote metadata may reach: global unicast only. The ranges come from
// ipaddr.js (maintained tables of the IANA special-purpose registries: private, loopback, link-local, carrier-grade
// NAT, unique-local, multicast, unspecified, broadcast, reserved and documentation, NAT64, 6to4, Teredo, ...), so
// this file lists no range ipaddr.js already knows. An address is allowed only when ipaddr.js calls it `unicast`
// (an allow-list: a range added to its tables is refused here without a change).
import { isIP } from "node:net";
import ipaddr from "ipaddr.js";

/**
 * What ipaddr.js still calls unicast but no metadata-driven request may reach: IPv4-compatible IPv6 (`::a.b.c.d`,
 * deprecated by RFC 4291, still routed to the embedded IPv4 address by some stacks), and the cloud platforms'
 * metadata services whose addresses are not in a special-use range (Azure's WireServer; AWS's IPv6 IMDS and
 * Alibaba's 100.100.100.200 are unique-local and CGNAT, refused by the tables already).
 */
const ALSO_REFUSED: ReadonlyArray<[ipaddr.IPv4 | ipaddr.IPv6, number]> = [
  ipaddr.parseCIDR("::/96"),
  ipaddr.parseCIDR("168.63.129.16/32"),
];

/**
 * True when `address` (an IP address as a socket or DNS reports it) is a global unicast address outside every
 * special-use range. IPv4-mapped IPv6 (`::ffff:a.b.c.d`) is judged by the IPv4 address it carries. Anything that is
 * not an address in standard notation is refused: Node's parser decides that (ipaddr.js also reads classful
 * spellings such as `127.1`, which no socket reports and this check has no reason to accept).
 */
export function isPublicAddress(address: string): boolean {
  // A zone index (`fe80::1%eth0`) is only ever on link-local addresses, which are refused anyway.
  if (isIP(address) === 0) return false;
  const parsed = ipaddr.process(address);
  if (parsed.range() !== "unicast") return false;
  return !ALSO_REFUSED.some(([range, bits]) => parsed.kind() === range.kind() && parsed.match(range, bits));
}

/** The range ipaddr.js puts `address` in (`loopback`, `private`, ...), for error messages; "invalid" when unparsable. */
export function addressRange(address: string): string {
  if (isIP(address) === 0) return "not an IP address";
  const parsed = ipaddr.process(address);
  const range = parsed.range();
  return range === "unicast" && !isPublicAddress(address) ? "metadata or IPv4-compatible" : range;
}
