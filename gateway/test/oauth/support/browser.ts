// The user's browser in the OAuth-server tests that need no real one: follows redirects with a cookie jar per origin
// that keeps each cookie's path as a browser does, and on an HTML page submits its first form, typing the user name
// into a login field. It stops at the client's redirect URI, which a real browser would hand to the client, and
// returns that URL (with its code, or error). The login in a real browser is chromium-login.test.ts.

export interface BrowserResult {
  /** The URL at the client's redirect URI. */
  landed: URL;
  /** Every page (URL) visited on the way, for diagnostics. */
  visited: string[];
}

const MAX_STEPS = 30;

export class Browser {
  readonly #jar = new Map<string, Map<string, Cookie>>();

  /**
   * `deny`: on a page with a form posting to .../abort (the consent page's Deny), submit that one. `onPage`: sees
   * every HTML page before its form is submitted. `acceptLanguage`: the browser's language preference.
   */
  async authorize(
    start: string,
    redirectUri: string,
    user: string,
    {
      deny = false,
      onPage,
      acceptLanguage,
    }: { deny?: boolean; onPage?: (url: URL, html: string) => void; acceptLanguage?: string } = {},
  ): Promise<BrowserResult> {
    let url = new URL(start);
    let method = "GET";
    let body: URLSearchParams | undefined;
    const visited: string[] = [];
    for (let step = 0; step < MAX_STEPS; step++) {
      if (url.href.startsWith(redirectUri)) return { landed: url, visited };
      visited.push(`${method} ${url.href}`);
      const response = await fetch(url, {
        method,
        redirect: "manual",
        headers: {
          cookie: this.#cookiesFor(url),
          ...(acceptLanguage === undefined ? {} : { "accept-language": acceptLanguage }),
          ...(body === undefined ? {} : { "content-type": "application/x-www-form-urlencoded" }),
        },
        ...(body === undefined ? {} : { body }),
      });
      this.#store(url, response.headers.getSetCookie());
      const location = response.headers.get("location");
      if (response.status >= 300 && response.status < 400 && location !== null) {
        url = new URL(location, url);
        method = "GET";
        body = undefined;
        continue;
      }
      const text = await response.text();
      onPage?.(url, text);
      const forms = [...text.matchAll(/<form([^>]*)>([\s\S]*?)<\/form>/gi)];
      const form =
        (deny ? forms.find((f) => /action="[^"]*\/abort"/.test(f[1] as string)) : undefined) ?? forms[0];
      const action = /action="([^"]*)"/.exec(form?.[1] ?? "")?.[1];
      if (response.status !== 200 || form === undefined || action === undefined) {
        throw new Error(`stuck at ${url.href}: HTTP ${response.status}: ${text.slice(0, 500)}`);
      }
      body = new URLSearchParams();
      for (const input of (form[2] as string).matchAll(/<input[^>]*name="([^"]+)"[^>]*>/g)) {
        const name = input[1] as string;
        const value = /value="([^"]*)"/.exec(input[0])?.[1];
        body.set(name, value ?? (name === "login" ? user : name === "password" ? "any-password" : ""));
      }
      url = new URL(action.replaceAll("&amp;", "&"), url);
      method = "POST";
    }
    throw new Error(`more than ${MAX_STEPS} steps: ${visited.join(" -> ")}`);
  }

  /** The cookies a browser sends to `url`: its origin's, whose Path matches (RFC 6265 5.1.4). */
  #cookiesFor(url: URL): string {
    return [...(this.#jar.get(url.origin)?.values() ?? [])]
      .filter((cookie) => pathMatches(url.pathname, cookie.path))
      .map((cookie) => `${cookie.name}=${cookie.value}`)
      .join("; ");
  }

  #store(url: URL, setCookies: string[]): void {
    const jar = this.#jar.get(url.origin) ?? new Map<string, Cookie>();
    this.#jar.set(url.origin, jar);
    for (const line of setCookies) {
      const [pair, ...attributes] = line.split(";");
      const eq = (pair as string).indexOf("=");
      const name = (pair as string).slice(0, eq).trim();
      const value = (pair as string).slice(eq + 1).trim();
      const pathAttribute = attributes.map((a) => a.trim()).find((a) => a.toLowerCase().startsWith("path="));
      const path = pathAttribute?.slice("path=".length) || defaultPath(url.pathname);
      const key = `${name};${path}`;
      const expired = /max-age=0|expires=Thu, 01 Jan 1970/i.test(line);
      if (value === "" || expired) jar.delete(key);
      else jar.set(key, { value, path, name });
    }
  }
}

interface Cookie {
  name: string;
  value: string;
  path: string;
}

function pathMatches(requestPath: string, cookiePath: string): boolean {
  if (requestPath === cookiePath) return true;
  if (!requestPath.startsWith(cookiePath)) return false;
  return cookiePath.endsWith("/") || requestPath[cookiePath.length] === "/";
}

function defaultPath(requestPath: string): string {
  const last = requestPath.lastIndexOf("/");
  return last <= 0 ? "/" : requestPath.slice(0, last);
}
