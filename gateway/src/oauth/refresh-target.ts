// The resource (RFC 8707) a refresh asks for, checked before the refresh token is rotated. oidc-provider rotates first
// and checks the resource afterwards, so a refresh naming a resource outside the grant answered invalid_target but had
// already spent the token: the client's retry with the right resource then looked like reuse, and the whole grant was
// revoked (the user logged out by one wrong parameter). Called from the library's rotateRefreshToken hook, which runs
// after the token, client, grant and account checks and before the rotation.
import { errors, type KoaContextWithOIDC } from "oidc-provider";

export function assertRefreshTarget(ctx: KoaContextWithOIDC, isResource: (url: string) => boolean): void {
  const requested = ctx.oidc.params?.resource as string | string[] | undefined;
  if (requested === undefined) return; // the grant's own resource is used
  const resources = Array.isArray(requested) ? requested : [requested];
  if (resources.length !== 1) {
    throw new errors.InvalidTarget("a token request names one resource");
  }
  const resource = resources[0] as string;
  const granted = (ctx.oidc.entities.RefreshToken as { resourceIndicators?: Set<string> } | undefined)
    ?.resourceIndicators;
  if (granted === undefined || !granted.has(resource)) {
    throw new errors.InvalidTarget(`resource ${resource} is not one the user granted this client`);
  }
  if (!isResource(resource)) {
    throw new errors.InvalidTarget(`resource ${resource} is no longer served by this gateway`);
  }
}
