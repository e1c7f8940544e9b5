// Shared code lives in lib/ (or any folder that is not tools/, resources/ or prompts/): components import it,
// and it never becomes a component itself.
export function greeting(name: string, excited: boolean): string {
  return `Hello, ${name}${excited ? "!" : "."}`;
}
