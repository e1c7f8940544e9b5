// Prometheus text exposition for /metrics, kept to what an operator dashboard needs.

type Labels = Record<string, string>;

export class Metrics {
  private readonly counters = new Map<string, { help: string; values: Map<string, number> }>();
  private readonly gauges = new Map<string, { help: string; read: () => number }>();

  counter(name: string, help: string): (labels: Labels, by?: number) => void {
    const entry = { help, values: new Map<string, number>() };
    this.counters.set(name, entry);
    return (labels, by = 1) => {
      const key = Object.entries(labels)
        .map(([label, value]) => `${label}="${value.replace(/["\\\n]/g, "_")}"`)
        .join(",");
      entry.values.set(key, (entry.values.get(key) ?? 0) + by);
    };
  }

  gauge(name: string, help: string, read: () => number): void {
    this.gauges.set(name, { help, read });
  }

  text(): string {
    const lines: string[] = [];
    for (const [name, { help, values }] of this.counters) {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} counter`);
      for (const [labels, value] of values) lines.push(`${name}{${labels}} ${value}`);
    }
    for (const [name, { help, read }] of this.gauges) {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} gauge`, `${name} ${read()}`);
    }
    return `${lines.join("\n")}\n`;
  }
}
