// GET /ready: can this instance take traffic? check() may be async; `degraded: true` still answers 200.
// Put dependency checks here (databases, upstream APIs); not ready → return { status: "fail" } → 503.
const readySince = new Date().toISOString();

export async function check() {
  return { status: "pass", ready_since: readySince, timestamp: new Date().toISOString() };
}
