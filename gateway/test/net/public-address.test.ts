// The address rule of the outbound guard, one row per form an attacker (or a DNS answer) can take.
import { describe, expect, it } from "vitest";
import { isPublicAddress } from "../../src/net/public-address.ts";

const refused: Array<[string, string]> = [
  ["127.0.0.1", "IPv4 loopback"],
  ["127.255.255.254", "the rest of 127/8"],
  ["::1", "IPv6 loopback"],
  ["10.0.0.1", "RFC 1918 10/8"],
  ["172.16.0.1", "RFC 1918 172.16/12"],
  ["172.31.255.255", "the top of 172.16/12"],
  ["192.168.1.1", "RFC 1918 192.168/16"],
  ["169.254.169.254", "link-local: the AWS/GCP/Azure metadata service"],
  ["100.64.0.1", "carrier-grade NAT"],
  ["100.100.100.200", "Alibaba's metadata service (CGNAT)"],
  ["168.63.129.16", "Azure WireServer (a public-looking platform address)"],
  ["192.0.0.192", "Oracle's metadata service (IETF protocol assignments)"],
  ["0.0.0.0", "unspecified (Linux connects it to the local host)"],
  ["0.1.2.3", "this network, 0/8"],
  ["::", "IPv6 unspecified"],
  ["224.0.0.1", "IPv4 multicast"],
  ["255.255.255.255", "broadcast"],
  ["198.18.0.1", "benchmarking"],
  ["192.0.2.10", "documentation"],
  ["240.0.0.1", "reserved class E"],
  ["fc00::1", "unique-local fc00::/7"],
  ["fd00:ec2::254", "AWS's IPv6 metadata service (unique-local)"],
  ["fe80::1", "IPv6 link-local"],
  ["fe80::1%eth0", "IPv6 link-local with a zone"],
  ["fec0::1", "deprecated site-local"],
  ["ff02::1", "IPv6 multicast"],
  ["::ffff:127.0.0.1", "IPv4-mapped loopback"],
  ["::ffff:7f00:1", "IPv4-mapped loopback in hex"],
  ["0:0:0:0:0:ffff:10.0.0.1", "IPv4-mapped private, uncompressed"],
  ["::ffff:169.254.169.254", "IPv4-mapped metadata service"],
  ["::127.0.0.1", "IPv4-compatible loopback"],
  ["::7f00:1", "IPv4-compatible loopback in hex"],
  ["::a00:1", "IPv4-compatible private"],
  ["64:ff9b::7f00:1", "NAT64 of loopback"],
  ["64:ff9b::a9fe:a9fe", "NAT64 of the metadata service"],
  ["64:ff9b:1::a00:1", "local-use NAT64 (RFC 8215)"],
  ["::ffff:0:7f00:1", "SIIT (RFC 6145)"],
  ["2002:7f00:1::", "6to4 of loopback"],
  ["2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo"],
  ["2001:db8::1", "IPv6 documentation"],
  ["100::1", "IPv6 discard"],
  ["2130706433", "decimal spelling: not an address a socket reports"],
  ["0x7f000001", "hex spelling"],
  ["0177.0.0.1", "octal spelling"],
  ["127.1", "short spelling"],
  ["localhost", "a name"],
  ["", "empty"],
];

const allowed: Array<[string, string]> = [
  ["93.184.215.14", "a public IPv4 address"],
  ["8.8.8.8", "another"],
  ["172.32.0.1", "just past 172.16/12"],
  ["100.128.0.1", "just past CGNAT"],
  ["2606:4700:4700::1111", "a public IPv6 address"],
  ["::ffff:8.8.8.8", "IPv4-mapped public: judged by the IPv4 address"],
];

describe("isPublicAddress", () => {
  it.each(refused)("refuses %s (%s)", (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each(allowed)("allows %s (%s)", (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });
});
