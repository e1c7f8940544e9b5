// A real browser for the tests that must behave as users' browsers do (cookie paths, SameSite, CORS): Debian's
// `chromium` driven by playwright-core. `.ci/run` installs it; where it is missing, the tests that need it are skipped
// with `CHROMIUM_MISSING` as the reason — except under CI, where a missing browser is a broken setup, not a skip.
import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";

/** The browser binary: Debian's package, or SVC_CHROMIUM_PATH. */
export const CHROMIUM_PATH = process.env.SVC_CHROMIUM_PATH ?? "/usr/bin/chromium";

/** Why the real-browser tests cannot run here, or undefined when they can. */
export const CHROMIUM_MISSING: string | undefined =
  existsSync(CHROMIUM_PATH) || process.env.CI === "true"
    ? undefined
    : `no Chromium at ${CHROMIUM_PATH}: install it (apt-get install -y chromium, as .ci/run does) or set SVC_CHROMIUM_PATH`;

/** A headless Chromium with nothing of its own on the network (no updates, no background requests). */
export function launchChromium(): Promise<Browser> {
  const root = process.getuid?.() === 0;
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    // Chromium refuses to start as root with its sandbox on; the tests run as root on CI and here.
    args: [
      ...(root ? ["--no-sandbox"] : []),
      "--disable-background-networking",
      "--disable-component-update",
    ],
  });
}
