// A browser for the connect-link tests that need no rendering: fetch with redirects followed by hand, cookies kept per
// origin *and path* as browsers keep them (a cookie scoped to /oauth/upstream is not sent to /oauth), and on an HTML
// page its first form submitted, with the user name typed into a `login` field (oidc-provider's development login and
// consent pages). It stops where the test says (a URL prefix, e.g. a vendor's authorization endpoint, to hand that
// URL to another browser) or at the first page without a form.

interface Cookie {
  value: string;
  path: string;
}

export interface Visit {
  url: URL;
  status: number;
  text: string;
  /** Every request on the way, for diagnostics. */
  visited: string[];
}

const MAX_STEPS = 30;

export class FormBrowser {
  readonly #jar = new Map<string, Map<string, Cookie>>();
  readonly #user: string;

  /** `user`: the name this browser's person types into login forms. */
  constructor(user: string) {
    this.#user = user;
  }

  /** Opens `start` and follows it through; stops before requesting a URL starting with `stopAt`. */
  async open(start: string, stopAt?: string): Promise<Visit> {
    let url = new URL(start);
    let method = "GET";
    let body: URLSearchParams | undefined;
    const visited: string[] = [];
    for (let step = 0; step < MAX_STEPS; step++) {
      if (stopAt !== undefined && url.href.startsWith(stopAt)) return { url, status: 0, text: "", visited };
      visited.push(`${method} ${url.href}`);
      const response = await fetch(url, {
        method,
        redirect: "manual",
        headers: {
          cookie: this.#cookiesFor(url),
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
      const form = /<form([^>]*)>([\s\S]*?)<\/form>/i.exec(text);
      const action = /action="([^"]*)"/.exec(form?.[1] ?? "")?.[1];
      if (form === null || action === undefined) return { url, status: response.status, text, visited };
      body = new URLSearchParams();
      for (const input of (form[2] as string).matchAll(/<input[^>]*name="([^"]+)"[^>]*>/g)) {
        const name = input[1] as string;
        const value = /value="([^"]*)"/.exec(input[0])?.[1];
        body.set(name, value ?? (name === "login" ? this.#user : name === "password" ? "any-password" : ""));
      }
      url = new URL(action.replaceAll("&amp;", "&"), url);
      method = "POST";
    }
    throw new Error(`more than ${MAX_STEPS} steps: ${visited.join(" -> ")}`);
  }

  /** The cookies this browser holds for `origin`, by name (for assertions on their scope). */
  cookies(origin: string): Map<string, Cookie> {
    return this.#jar.get(origin) ?? new Map();
  }

  #cookiesFor(url: URL): string {
    return [...this.cookies(url.origin)]
      .filter(
        ([, cookie]) =>
          url.pathname === cookie.path || url.pathname.startsWith(`${cookie.path.replace(/\/$/, "")}/`),
      )
      .map(([name, cookie]) => `${name}=${cookie.value}`)
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
      const path =
        attributes
          .map((a) => a.trim())
          .find((a) => a.toLowerCase().startsWith("path="))
          ?.slice(5) ??
        url.pathname.replace(/\/[^/]*$/, "") ??
        "/";
      const expired = /max-age=0|expires=Thu, 01 Jan 1970/i.test(line);
      if (value === "" || expired) jar.delete(name);
      else jar.set(name, { value, path: path === "" ? "/" : path });
    }
  }
}
