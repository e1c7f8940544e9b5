// The consent screen: which client asks for what, on behalf of whom. Plain server-rendered HTML with no script, so
// there is nothing to build and nothing a client-supplied name could run: every value is escaped.
import { escapeHtml } from "./escape-html.ts";

export interface ConsentRequest {
  uid: string;
  clientName: string;
  clientId: string;
  user: string;
  scopes: string[];
  resources: string[];
}

export function consentPage(request: ConsentRequest): string {
  const item = (text: string) => `<li>${escapeHtml(text)}</li>`;
  const uid = encodeURIComponent(request.uid);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Authorize ${escapeHtml(request.clientName)}</title></head>
<body>
<h1>Authorize ${escapeHtml(request.clientName)}</h1>
<p>The application <strong>${escapeHtml(request.clientName)}</strong> (client id <code>${escapeHtml(request.clientId)}</code>)
asks to act as <strong>${escapeHtml(request.user)}</strong> on:</p>
<ul>${request.resources.map(item).join("") || "<li>this gateway</li>"}</ul>
<p>Scopes: </p><ul>${request.scopes.map(item).join("") || "<li>none</li>"}</ul>
<form method="post" action="/oauth/interaction/${uid}/confirm"><button type="submit">Allow</button></form>
<form method="post" action="/oauth/interaction/${uid}/abort"><button type="submit">Deny</button></form>
</body></html>`;
}
