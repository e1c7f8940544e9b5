/**
 * The one scope of the gateway's own authorization server: use the gateway's MCP servers (which ones, RBAC decides).
 * Advertised in the protected-resource metadata, so MCP clients ask for it; an authorization request without any
 * scope gets it (RFC 6749 3.3 lets an authorization server apply a default), as the library grants nothing for a
 * request that asks for nothing.
 */
export const GATEWAY_SCOPE = "mcp";
