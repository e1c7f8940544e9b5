// GET /health: is the process alive? Return an object (200 JSON), a boolean, or a Response with your own status.
// An object with status "fail", false, or an exception answers 503 so the orchestrator restarts the container.
export function check() {
  return { status: "pass", timestamp: new Date().toISOString() };
}
