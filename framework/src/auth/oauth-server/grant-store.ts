import { createHash, randomBytes } from "node:crypto";
import { join } from "node:path";
import { z } from "zod";
import { JsonFile } from "./json-file.ts";

// Grants of the built-in OAuth server. A grant is what one /authorize approval produced: its code, then a
// chain of refresh tokens (rotated on every use) and the access tokens issued from them, all sharing one
// grant id. Revoking, or detecting replay of a used code or rotated refresh token, revokes the whole grant.
// Refresh tokens are stored as SHA-256 digests only; codes live in memory only (they last seconds).

export interface AuthorizationCode {
  grantId: string;
  clientId: string;
  redirectUri: string;
  codeChallenge: string;
  scopes: string[];
  resource: string;
  subject: string;
  expiresAt: number;
  used: boolean;
}

const refreshSchema = z.object({
  hash: z.string(),
  grantId: z.string(),
  clientId: z.string(),
  subject: z.string(),
  scopes: z.array(z.string()),
  resource: z.string(),
  expiresAt: z.number(),
  /** Set once the token was exchanged: presenting it again is replay. */
  rotated: z.boolean(),
});
export type RefreshGrant = z.infer<typeof refreshSchema>;
const revokedSchema = z.object({ id: z.string(), expiresAt: z.number() });
const stateSchema = z.object({
  version: z.literal(1),
  refresh: z.array(refreshSchema),
  revokedGrants: z.array(revokedSchema),
  revokedTokens: z.array(revokedSchema),
});
type State = z.infer<typeof stateSchema>;

const digest = (token: string): string => createHash("sha256").update(token, "utf8").digest("hex");
export const randomToken = (): string => randomBytes(32).toString("base64url");

export class GrantStore {
  private readonly file: JsonFile<State>;
  private readonly codes = new Map<string, AuthorizationCode>();
  private readonly refresh = new Map<string, RefreshGrant>();
  private readonly revokedGrants = new Map<string, number>();
  private readonly revokedTokens = new Map<string, number>();

  private constructor(file: JsonFile<State>) {
    this.file = file;
  }

  /** Refresh tokens and revocations are persisted to `<dataDir>/oauth/grants.json` (digests and ids only). */
  static async open(dataDir: string): Promise<GrantStore> {
    const store = new GrantStore(new JsonFile(join(dataDir, "oauth", "grants.json")));
    const empty: State = { version: 1, refresh: [], revokedGrants: [], revokedTokens: [] };
    const state = await store.file.read(empty, (value) => stateSchema.parse(value));
    const now = Date.now();
    for (const grant of state.refresh) if (grant.expiresAt > now) store.refresh.set(grant.hash, grant);
    for (const { id, expiresAt } of state.revokedGrants)
      if (expiresAt > now) store.revokedGrants.set(id, expiresAt);
    for (const { id, expiresAt } of state.revokedTokens)
      if (expiresAt > now) store.revokedTokens.set(id, expiresAt);
    return store;
  }

  private persist(): Promise<void> {
    const now = Date.now();
    const live = <V extends { expiresAt: number }>(values: Iterable<V>) =>
      [...values].filter((v) => v.expiresAt > now);
    const revoked = (map: Map<string, number>) =>
      live([...map].map(([id, expiresAt]) => ({ id, expiresAt })));
    return this.file.write({
      version: 1,
      refresh: live(this.refresh.values()),
      revokedGrants: revoked(this.revokedGrants),
      revokedTokens: revoked(this.revokedTokens),
    });
  }

  issueCode(code: Omit<AuthorizationCode, "used" | "grantId">): string {
    const value = randomToken();
    for (const [key, stale] of this.codes) if (stale.expiresAt <= Date.now()) this.codes.delete(key);
    this.codes.set(value, { ...code, grantId: randomToken(), used: false });
    return value;
  }

  /**
   * Takes a code for exchange. A code is single-use: presenting it twice revokes everything issued from it
   * (RFC 6749 §4.1.2) and yields undefined, as does an unknown or expired code.
   */
  async takeCode(value: string, grantTtlMs: number): Promise<AuthorizationCode | undefined> {
    const code = this.codes.get(value);
    if (!code || code.expiresAt <= Date.now()) return undefined;
    if (code.used) {
      await this.revokeGrant(code.grantId, grantTtlMs);
      return undefined;
    }
    code.used = true;
    return code;
  }

  /** Stores a new refresh token for a grant; returns the token. */
  async issueRefresh(grant: Omit<RefreshGrant, "hash" | "rotated">): Promise<string> {
    const value = randomToken();
    this.refresh.set(digest(value), { ...grant, hash: digest(value), rotated: false });
    await this.persist();
    return value;
  }

  /**
   * Takes a refresh token for rotation. A rotated token presented again is replay: the grant is revoked.
   * Returns undefined for unknown, expired, revoked or replayed tokens.
   */
  async takeRefresh(value: string): Promise<RefreshGrant | undefined> {
    const grant = this.refresh.get(digest(value));
    if (!grant || grant.expiresAt <= Date.now() || this.revokedGrants.has(grant.grantId)) return undefined;
    if (grant.rotated) {
      await this.revokeGrant(grant.grantId, grant.expiresAt - Date.now());
      return undefined;
    }
    grant.rotated = true;
    await this.persist();
    return grant;
  }

  /** The grant a refresh token belongs to, without using it (revocation). */
  findRefresh(value: string): RefreshGrant | undefined {
    return this.refresh.get(digest(value));
  }

  async revokeGrant(grantId: string, ttlMs: number): Promise<void> {
    this.revokedGrants.set(grantId, Date.now() + Math.max(ttlMs, 0));
    for (const [hash, grant] of this.refresh) if (grant.grantId === grantId) this.refresh.delete(hash);
    await this.persist();
  }

  /** Revokes one access token by its jti until it would have expired anyway. */
  async revokeAccessToken(jti: string, expiresAtMs: number): Promise<void> {
    this.revokedTokens.set(jti, expiresAtMs);
    await this.persist();
  }

  isRevoked(grantId: string | undefined, jti: string | undefined): boolean {
    return (
      (grantId !== undefined && this.revokedGrants.has(grantId)) ||
      (jti !== undefined && this.revokedTokens.has(jti))
    );
  }
}
