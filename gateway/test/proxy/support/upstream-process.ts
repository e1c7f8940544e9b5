// Runs a test upstream in its own process (so a test can kill it mid-stream) and prints its URL as one JSON
// line. Options come as JSON in argv[2].
import { startUpstream, type UpstreamOptions } from "./upstream.ts";

const options = JSON.parse(process.argv[2] ?? "{}") as UpstreamOptions;
const upstream = await startUpstream(options);
process.stdout.write(`${JSON.stringify({ url: upstream.url })}\n`);
