import { API_GROUP, API_VERSION, KINDS, type Kind } from "../../src/api/names.ts";
import { resourceSchema } from "../../src/crd/build-crds.ts";
import { validateResource } from "../../src/crd/validate-resource.ts";
import { FakeKubeApi, type FakeResourceType } from "../../src/testing/fake-kube-api.ts";

/** The fake API server with our three kinds registered, validated and defaulted by their CRD schemas like a real one. */
export function fakeClusterWithCrds(): FakeKubeApi {
  const crdTypes: FakeResourceType[] = (Object.keys(KINDS) as Kind[]).map((kind) => ({
    group: API_GROUP,
    version: API_VERSION,
    kind,
    plural: KINDS[kind].plural,
    namespaced: true,
    statusSubresource: true,
    validate: (object) => validateResource(kind, object),
    schema: resourceSchema(kind),
  }));
  return new FakeKubeApi(crdTypes);
}
