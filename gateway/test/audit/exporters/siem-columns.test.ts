// The deployable table and DCR files declare exactly the columns the sink sends, and every event field has one.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { completeEvent } from "../../../src/audit/audit-event.ts";
import { SIEM_COLUMNS, siemRowFromEvent } from "../../../src/audit/exporters/siem-columns.ts";
import { HashChain } from "../../../src/audit/hash-chain.ts";
import { siemExporterSchema } from "../../../src/config/schema.ts";

interface DeclaredColumn {
  name: string;
  type: string;
}

function readJson(file: string): unknown {
  return JSON.parse(readFileSync(new URL(`../../../docs/siem/${file}`, import.meta.url), "utf8"));
}

const expectedColumns = SIEM_COLUMNS.map(({ name, type }) => ({ name, type }));
const defaultStream = siemExporterSchema.parse({ name: "x", enabled: false }).dcr_stream_name;

describe("siem columns", () => {
  it("table.json declares the sink's columns, in order, with their types", () => {
    const table = readJson("table.json") as {
      properties: { schema: { name: string; columns: DeclaredColumn[] } };
    };
    expect(table.properties.schema.columns).toEqual(expectedColumns);
    // A stream Custom-<Table> feeds the table <Table>.
    expect(`Custom-${table.properties.schema.name}`).toBe(defaultStream);
  });

  it("dcr.json declares the default stream with the same columns and passes rows through unchanged", () => {
    const dcr = readJson("dcr.json") as {
      kind: string;
      properties: {
        streamDeclarations: Record<string, { columns: DeclaredColumn[] }>;
        dataFlows: { streams: string[]; transformKql: string; outputStream: string }[];
      };
    };
    expect(dcr.kind).toBe("Direct");
    expect(Object.keys(dcr.properties.streamDeclarations)).toEqual([defaultStream]);
    expect(dcr.properties.streamDeclarations[defaultStream]?.columns).toEqual(expectedColumns);
    expect(dcr.properties.dataFlows).toEqual([
      expect.objectContaining({
        streams: [defaultStream],
        transformKql: "source",
        outputStream: defaultStream,
      }),
    ]);
  });

  it("has one column per event field, named as the field in PascalCase (time goes to TimeGenerated)", () => {
    const event = new HashChain("gw#1").link(completeEvent({ kind: "call_completed" }, "gw"));
    expect(SIEM_COLUMNS.map((column) => column.field).sort()).toEqual(Object.keys(event).sort());
    for (const column of SIEM_COLUMNS) {
      const pascal = column.field.replace(/(^|_)([a-z])/g, (_, __, letter: string) => letter.toUpperCase());
      expect(column.name).toBe(column.field === "time" ? "TimeGenerated" : pascal);
    }
    expect(Object.keys(siemRowFromEvent(event))).toEqual(SIEM_COLUMNS.map((column) => column.name));
  });
});
