import { API_GROUP } from "../api/names.ts";
import { DEFAULT_SERVER_PATH, DEFAULT_SERVER_PORT, type ServerDeployment } from "../api/operator-schemas.ts";
import { renderedLabels } from "./labels.ts";
import { type KubeObject, namespaceOf, ownerReferencesTo, type Resource } from "./resources.ts";

// An McpServer with a `deployment` block runs in the cluster: a Deployment and a ClusterIP Service named
// after the resource, and the gateway reaches it at http://<name>.<namespace>.svc:<port><path> (no cluster
// domain, so it works whatever the cluster's domain is).

export const SERVER_LABEL = `${API_GROUP}/server`;
const DATA_DIR = "/var/lib/svc";

/** Used when the resource sets no securityContext: what the "restricted" Pod Security Standard asks. The
 *  uid is the `node` user of the image `svc init` generates (the kubelet cannot check a user name). */
const RESTRICTED_SECURITY_CONTEXT = {
  runAsNonRoot: true,
  runAsUser: 1000,
  runAsGroup: 1000,
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  capabilities: { drop: ["ALL"] },
  seccompProfile: { type: "RuntimeDefault" },
};

export function serverDeploymentOf(server: Resource): ServerDeployment | undefined {
  return server.spec?.deployment as ServerDeployment | undefined;
}

export function derivedServerUrl(server: Resource, deployment: ServerDeployment): string {
  const port = deployment.port ?? DEFAULT_SERVER_PORT;
  return `http://${server.metadata.name}.${namespaceOf(server)}.svc:${port}${deployment.path ?? DEFAULT_SERVER_PATH}`;
}

export function renderServerWorkload(server: Resource): KubeObject[] {
  const deployment = serverDeploymentOf(server);
  if (!deployment) return [];
  const name = server.metadata.name;
  const namespace = namespaceOf(server);
  const port = deployment.port ?? DEFAULT_SERVER_PORT;
  const selector = { [SERVER_LABEL]: name };
  const labels = { ...renderedLabels(server), ...selector, "app.kubernetes.io/name": name };
  const ownerReferences = ownerReferencesTo(server);
  const metadata = { name, namespace, labels, ...(ownerReferences ? { ownerReferences } : {}) };
  const container: Record<string, unknown> = {
    name: "server",
    image: deployment.image,
    ...(deployment.imagePullPolicy ? { imagePullPolicy: deployment.imagePullPolicy } : {}),
    ports: [{ name: "http", containerPort: port, protocol: "TCP" }],
    env: [
      { name: "PORT", value: String(port) },
      // Framework servers keep their data (e.g. OAuth clients) in SVC_DATA_DIR; the root filesystem is read-only.
      { name: "SVC_DATA_DIR", value: DATA_DIR },
      ...(deployment.env ?? []),
    ],
    ...(deployment.envFrom ? { envFrom: deployment.envFrom } : {}),
    ...(deployment.resources ? { resources: deployment.resources } : {}),
    securityContext: deployment.securityContext ?? RESTRICTED_SECURITY_CONTEXT,
    // Framework servers answer /health (liveness) and /ready (readiness).
    livenessProbe: { httpGet: { path: "/health", port: "http" }, periodSeconds: 10, failureThreshold: 3 },
    readinessProbe: { httpGet: { path: "/ready", port: "http" }, periodSeconds: 5, failureThreshold: 2 },
    volumeMounts: [
      { name: "tmp", mountPath: "/tmp" },
      { name: "data", mountPath: DATA_DIR },
    ],
  };
  return [
    {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata,
      spec: {
        replicas: deployment.replicas ?? 1,
        selector: { matchLabels: selector },
        template: {
          metadata: { labels },
          spec: {
            ...(deployment.serviceAccountName ? { serviceAccountName: deployment.serviceAccountName } : {}),
            containers: [container],
            // A read-only root filesystem still needs somewhere to write temporary files.
            volumes: [
              { name: "tmp", emptyDir: {} },
              { name: "data", emptyDir: {} },
            ],
          },
        },
      },
    },
    {
      apiVersion: "v1",
      kind: "Service",
      metadata,
      spec: {
        type: "ClusterIP",
        selector,
        ports: [{ name: "http", port, targetPort: "http", protocol: "TCP" }],
      },
    },
  ];
}
