// Escaping for the gateway's few server-rendered pages (consent, upstream connection result): every value that came
// from a client, a user or a vendor goes through it, so none can inject markup or script.

const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] as string);
}
