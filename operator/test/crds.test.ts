import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { JsonSchema } from "../src/api/json-schema.ts";
import { readResources } from "../src/cli/read-resources.ts";
import { buildCrd, CRD_KINDS, renderCrdFiles } from "../src/crd/build-crds.ts";
import { validateResource } from "../src/crd/validate-resource.ts";
import { isOperatorKind } from "../src/render/render-all.ts";
import { examplesDir, repoRoot } from "./paths.ts";

describe("generated CRDs", () => {
  it.each(["crds", "helm/svc-gateway/crds"])(
    "%s/ matches the zod schemas (run `npm run generate -w operator`)",
    (directory) => {
      for (const [name, text] of renderCrdFiles()) {
        expect(readFileSync(join(repoRoot, directory, name), "utf8"), `${directory}/${name} is stale`).toBe(
          text,
        );
      }
    },
  );

  /** The rules a structural schema must follow, or the API server refuses the CRD. */
  function structuralViolations(schema: JsonSchema, path: string): string[] {
    const problems: string[] = [];
    if (schema.type === undefined && !schema["x-kubernetes-preserve-unknown-fields"])
      problems.push(`${path}: no type`);
    if (schema.properties && schema.additionalProperties !== undefined)
      problems.push(`${path}: properties and additionalProperties`);
    for (const banned of [
      "$ref",
      "$schema",
      "anyOf",
      "oneOf",
      "allOf",
      "const",
      "default",
      "definitions",
      "$defs",
    ]) {
      if (banned in schema) problems.push(`${path}: ${banned}`);
    }
    for (const [key, child] of Object.entries(schema.properties ?? {}))
      problems.push(...structuralViolations(child, `${path}.${key}`));
    if (schema.items) problems.push(...structuralViolations(schema.items, `${path}[]`));
    if (typeof schema.additionalProperties === "object")
      problems.push(...structuralViolations(schema.additionalProperties, `${path}.*`));
    return problems;
  }

  it.each(CRD_KINDS)("%s has a structural schema, a status subresource and printer columns", (kind) => {
    const crd = buildCrd(kind) as {
      spec: {
        versions: {
          schema: { openAPIV3Schema: JsonSchema };
          subresources: object;
          additionalPrinterColumns: { name: string }[];
        }[];
      };
    };
    const version = crd.spec.versions[0];
    expect(version).toBeDefined();
    expect(structuralViolations(version?.schema.openAPIV3Schema ?? {}, kind)).toEqual([]);
    expect(version?.subresources).toEqual({ status: {} });
    // The reconciled kinds show their Ready condition; an OrganizationPolicy (read by the control-plane API) its id.
    expect(version?.additionalPrinterColumns.map((column) => column.name)).toContain(
      kind === "OrganizationPolicy" ? "Organization" : "Ready",
    );
  });

  it("maps gateway fields to camelCase and secrets to secretKeyRef", () => {
    const spec = (
      buildCrd("McpServer") as { spec: { versions: { schema: { openAPIV3Schema: JsonSchema } }[] } }
    ).spec.versions[0]?.schema.openAPIV3Schema.properties?.spec;
    expect(Object.keys(spec?.properties ?? {})).toEqual(
      expect.arrayContaining(["upstreamAuthType", "capabilityOverrides", "deployment"]),
    );
    expect(spec?.properties?.preregisteredClientSecret?.required).toEqual(["secretKeyRef"]);
    expect(spec?.properties?.preregisteredClientId?.type).toBe("string");
    expect(spec?.required ?? []).not.toContain("url");
  });
});

describe("CRD schemas with ajv", () => {
  it("accept every example", () => {
    const resources = readResources(examplesDir).filter((resource) => isOperatorKind(resource.kind));
    expect(resources.length).toBeGreaterThanOrEqual(6);
    for (const resource of resources) {
      expect(
        validateResource(resource.kind as "McpServer", resource),
        `${resource.kind} ${resource.metadata.name}`,
      ).toEqual([]);
    }
  });

  it("reject invalid resources with messages naming the field", () => {
    const server = {
      apiVersion: "mcp.svc.dev/v1alpha1",
      kind: "McpServer",
      metadata: { name: "bad" },
      spec: {
        url: "http://example.com/mcp",
        rbacMode: "maybe",
        rbac_enabled: true,
        preregisteredClientSecret: "plain-text",
        capabilityOverrides: [{ capability: "bogus" }],
        deployment: { replicas: 1 },
      },
    };
    expect(validateResource("McpServer", server)).toEqual(
      expect.arrayContaining([
        'spec: unknown field "rbac_enabled" (did you mean "rbacEnabled"?)',
        "spec.rbacMode: must be one of: allow, deny",
        "spec.preregisteredClientSecret: must be object",
        'spec.capabilityOverrides[0].capability: must match pattern "^(tools|resources|prompts)\\/.+$"',
        "spec.deployment: must have required property 'image'",
      ]),
    );
    expect(validateResource("IdentityProvider", { metadata: { name: "x" }, spec: { type: "saml" } })).toEqual(
      ["spec.type: must be one of: hosted_idp, directory_idp, project_idp"],
    );
    expect(
      validateResource("McpGateway", {
        metadata: { name: "g" },
        spec: { security: { rateLimiting: { requestsPerMinute: "many" } } },
      }),
    ).toEqual(["spec.security.rateLimiting.requestsPerMinute: must be integer"]);
  });
});
