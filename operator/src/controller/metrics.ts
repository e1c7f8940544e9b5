// Prometheus text exposition for /metrics, kept to what an operator dashboard needs.

type Labels = Record<string, string>;

function labelText(labels: Labels): string {
  return Object.entries(labels)
    .map(([label, value]) => `${label}="${value.replace(/["\\\n]/g, "_")}"`)
    .join(",");
}

interface HistogramSeries {
  /** Observations at or below each bucket's upper bound (cumulative, as the exposition format wants). */
  buckets: number[];
  sum: number;
  count: number;
}

export class Metrics {
  private readonly counters = new Map<string, { help: string; values: Map<string, number> }>();
  private readonly gauges = new Map<string, { help: string; read: () => number }>();
  private readonly histograms = new Map<
    string,
    { help: string; bounds: number[]; series: Map<string, HistogramSeries> }
  >();

  counter(name: string, help: string): (labels: Labels, by?: number) => void {
    const entry = { help, values: new Map<string, number>() };
    this.counters.set(name, entry);
    return (labels, by = 1) => {
      const key = labelText(labels);
      entry.values.set(key, (entry.values.get(key) ?? 0) + by);
    };
  }

  /** A histogram with fixed upper bounds (the +Inf bucket is implied); label sets are the caller's bounded
   *  enums (kind, result), so the series stay few. */
  histogram(name: string, help: string, bounds: number[]): (labels: Labels, value: number) => void {
    const entry = {
      help,
      bounds: [...bounds].sort((a, b) => a - b),
      series: new Map<string, HistogramSeries>(),
    };
    this.histograms.set(name, entry);
    return (labels, value) => {
      const key = labelText(labels);
      let series = entry.series.get(key);
      if (!series) {
        series = { buckets: entry.bounds.map(() => 0), sum: 0, count: 0 };
        entry.series.set(key, series);
      }
      for (const [index, bound] of entry.bounds.entries()) {
        if (value <= bound) series.buckets[index] = (series.buckets[index] ?? 0) + 1;
      }
      series.sum += value;
      series.count += 1;
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
    for (const [name, { help, bounds, series }] of this.histograms) {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} histogram`);
      for (const [labels, values] of series) {
        const prefix = labels === "" ? "" : `${labels},`;
        for (const [index, bound] of bounds.entries()) {
          lines.push(`${name}_bucket{${prefix}le="${bound}"} ${values.buckets[index]}`);
        }
        lines.push(`${name}_bucket{${prefix}le="+Inf"} ${values.count}`);
        lines.push(`${name}_sum{${labels}} ${values.sum}`, `${name}_count{${labels}} ${values.count}`);
      }
    }
    for (const [name, { help, read }] of this.gauges) {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} gauge`, `${name} ${read()}`);
    }
    return `${lines.join("\n")}\n`;
  }
}
