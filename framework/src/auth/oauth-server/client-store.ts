import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { join } from "node:path";
import { z } from "zod";
import { JsonFile } from "./json-file.ts";

export const TOKEN_ENDPOINT_AUTH_METHODS = ["client_secret_basic", "client_secret_post", "none"] as const;
export type TokenEndpointAuthMethod = (typeof TOKEN_ENDPOINT_AUTH_METHODS)[number];

// A registered client as stored on disk. The secret is kept only as its SHA-256: secrets are 256 random bits,
// so a fast hash is enough (no dictionary to attack) and the file holds nothing that authenticates.
const storedClientSchema = z.object({
  client_id: z.string(),
  client_secret_sha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .optional(),
  client_id_issued_at: z.number(),
  client_secret_expires_at: z.number(),
  redirect_uris: z.array(z.string()),
  grant_types: z.array(z.string()),
  response_types: z.array(z.string()),
  token_endpoint_auth_method: z.enum(TOKEN_ENDPOINT_AUTH_METHODS),
  client_name: z.string().optional(),
  client_uri: z.string().optional(),
  scope: z.string().optional(),
});
export type StoredClient = z.infer<typeof storedClientSchema>;
const storedFileSchema = z.object({ version: z.literal(1), clients: z.array(storedClientSchema) });

/** At most this many registrations, so open registration cannot fill the disk. */
export const MAX_CLIENTS = 10_000;

const sha256 = (value: string): Buffer => createHash("sha256").update(value, "utf8").digest();

/** Dynamic client registrations, persisted to `<dataDir>/oauth/clients.json` so they survive a restart. */
export class ClientStore {
  private readonly file: JsonFile<z.infer<typeof storedFileSchema>>;
  private readonly clients = new Map<string, StoredClient>();

  private constructor(file: JsonFile<z.infer<typeof storedFileSchema>>) {
    this.file = file;
  }

  static async open(dataDir: string): Promise<ClientStore> {
    const store = new ClientStore(new JsonFile(join(dataDir, "oauth", "clients.json")));
    const stored = await store.file.read({ version: 1, clients: [] }, (value) =>
      storedFileSchema.parse(value),
    );
    for (const client of stored.clients) store.clients.set(client.client_id, client);
    return store;
  }

  get path(): string {
    return this.file.path;
  }

  get size(): number {
    return this.clients.size;
  }

  get(clientId: string): StoredClient | undefined {
    return this.clients.get(clientId);
  }

  /** Registers a client; returns it with its plain secret (shown once, in the registration response). */
  async register(
    metadata: Omit<
      StoredClient,
      "client_id" | "client_secret_sha256" | "client_id_issued_at" | "client_secret_expires_at"
    >,
  ): Promise<{ client: StoredClient; secret?: string }> {
    const clientId = randomBytes(16).toString("base64url");
    const secret =
      metadata.token_endpoint_auth_method === "none" ? undefined : randomBytes(32).toString("base64url");
    const client: StoredClient = {
      ...metadata,
      client_id: clientId,
      client_id_issued_at: Math.floor(Date.now() / 1000),
      client_secret_expires_at: 0,
      ...(secret ? { client_secret_sha256: sha256(secret).toString("hex") } : {}),
    };
    this.clients.set(clientId, client);
    await this.file.write({ version: 1, clients: [...this.clients.values()] });
    return secret ? { client, secret } : { client };
  }

  /** Constant-time check of a presented secret against the stored digest. */
  static secretMatches(client: StoredClient, presented: string): boolean {
    if (!client.client_secret_sha256) return false;
    return timingSafeEqual(Buffer.from(client.client_secret_sha256, "hex"), sha256(presented));
  }
}
