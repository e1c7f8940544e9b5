// The consent screen: which client asks for what, on behalf of whom, and where the authorization goes. Plain
// server-rendered HTML with no script, so there is nothing to build and nothing a client-supplied name could run:
// every value is escaped, the words come from a catalog (consent-text.ts), and the warnings from consent-warnings.ts.
import type { ConsentText } from "./consent-text.ts";
import type { ConsentWarning, Destination } from "./consent-warnings.ts";
import { escapeHtml } from "./escape-html.ts";

export interface ConsentRequest {
  uid: string;
  clientName: string;
  clientId: string;
  user: string;
  /** The scopes the user is asked to grant (only those this server knows). */
  scopes: string[];
  resources: string[];
  destination: Destination;
  warnings: ConsentWarning[];
  text: ConsentText;
}

/** `template` with each {name} replaced by its value, escaped and emphasised; the template itself is escaped too. */
function fill(template: string, values: Record<string, string>): string {
  return escapeHtml(template).replace(/\{(\w+)\}/g, (whole, name: string) =>
    values[name] === undefined ? whole : `<strong>${escapeHtml(values[name])}</strong>`,
  );
}

export function consentPage(request: ConsentRequest): string {
  const { text } = request;
  const item = (html: string) => `<li>${html}</li>`;
  const uid = encodeURIComponent(request.uid);
  const destination =
    request.destination.kind === "web"
      ? fill(text.sendsTo, { destination: request.destination.host })
      : fill(text.sendsToApp, { destination: `${request.destination.scheme}:` });
  const warnings = request.warnings.map((warning) =>
    warning.kind === "plain_http"
      ? fill(text.plainHttpWarning, { host: warning.host })
      : fill(text.looksLikeWarning, {
          client: request.clientName,
          known: warning.known,
          destination: warning.destination,
        }),
  );
  const resources =
    request.resources.map((r) => item(escapeHtml(r))).join("") || item(escapeHtml(text.wholeGateway));
  const scopes = request.scopes
    .map((scope) => item(`<code>${escapeHtml(scope)}</code>: ${escapeHtml(text.scopes[scope] ?? scope)}`))
    .join("");
  return `<!doctype html>
<html lang="${escapeHtml(text.lang)}"><head><meta charset="utf-8"><title>${fill(text.title, { client: request.clientName })}</title></head>
<body>
<h1>${fill(text.title, { client: request.clientName })}</h1>
${warnings.map((w) => `<p role="alert" class="warning">${w}</p>`).join("\n")}
<h2 class="destination">${destination}</h2>
<p>${fill(text.asks, { client: request.clientName, user: request.user })}</p>
<p>${fill(text.clientId, { client: request.clientId })}</p>
<p>${escapeHtml(text.onResources)}</p><ul>${resources}</ul>
${scopes === "" ? "" : `<p>${escapeHtml(text.permissions)}</p><ul>${scopes}</ul>`}
<form method="post" action="/oauth/interaction/${uid}/confirm"><button type="submit">${escapeHtml(text.allow)}</button></form>
<form method="post" action="/oauth/interaction/${uid}/abort"><button type="submit">${escapeHtml(text.deny)}</button></form>
</body></html>`;
}
