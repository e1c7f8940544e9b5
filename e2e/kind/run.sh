#!/usr/bin/env bash
# End to end on a kind cluster: build and load the images, helm install, apply the examples, wait for
# Ready, and run the MCP checks through a port-forward. Needs docker, kind, kubectl (and helm, else the one
# from node_modules). Runs unmodified on a GitHub-hosted runner (.github/workflows/e2e-kind.yml).
#   KIND_CLUSTER        cluster name (default svc-e2e); created when missing, deleted afterwards only if created here
#   KEEP_CLUSTER=1      keep a cluster this script created
#   DIAGNOSTICS_DIR     where failure diagnostics go (default ./e2e-kind-diagnostics)
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
CLUSTER=${KIND_CLUSTER:-svc-e2e}
NS=svc-gateway
DIAG=${DIAGNOSTICS_DIR:-$ROOT/e2e-kind-diagnostics}
HELM=${HELM:-$(command -v helm || echo "$ROOT/node_modules/.bin/helm")}
NODE=${NODE:-$ROOT/node_modules/.bin/node}
[ -x "$NODE" ] || NODE=node
WORK=$(mktemp -d)
PORT_FORWARDS=()
CREATED=""

log() { printf '\n=== %s\n' "$*"; }

diagnostics() {
  mkdir -p "$DIAG"
  log "diagnostics → $DIAG"
  kubectl get all,mcpservers,identityproviders,mcpgateways,configmaps,leases -A -o wide >"$DIAG/objects.txt" 2>&1 || true
  kubectl get mcpservers,identityproviders,mcpgateways -n "$NS" -o yaml >"$DIAG/custom-resources.yaml" 2>&1 || true
  kubectl describe pods -n "$NS" >"$DIAG/pods.txt" 2>&1 || true
  kubectl get events -A --sort-by=.lastTimestamp >"$DIAG/events.txt" 2>&1 || true
  kubectl logs -n "$NS" -l app.kubernetes.io/component=operator --all-containers --tail=-1 >"$DIAG/operator.log" 2>&1 || true
  kubectl logs -n "$NS" -l app.kubernetes.io/component=gateway --all-containers --tail=-1 >"$DIAG/gateway.log" 2>&1 || true
  kubectl logs -n "$NS" -l app.kubernetes.io/name=svc-e2e-idp --tail=-1 >"$DIAG/identity-provider.log" 2>&1 || true
  kubectl logs -n "$NS" pod/svc-e2e-traffic >"$DIAG/traffic.log" 2>&1 || true
  kubectl get configmap -n "$NS" svc-gateway-config -o yaml >"$DIAG/gateway-config.yaml" 2>&1 || true
  tail -n 50 "$DIAG"/*.log || true
  cat "$DIAG/custom-resources.yaml" || true
}

cleanup() {
  local status=$?
  for pid in "${PORT_FORWARDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  [ "$status" -ne 0 ] && diagnostics
  if [ -n "$CREATED" ] && [ "${KEEP_CLUSTER:-}" != "1" ]; then kind delete cluster --name "$CLUSTER" || true; fi
  rm -rf "$WORK"
  exit "$status"
}
trap cleanup EXIT

log "cluster $CLUSTER"
if ! kind get clusters 2>/dev/null | grep -qx "$CLUSTER"; then
  kind create cluster --name "$CLUSTER" --wait 120s
  CREATED=1
fi
kubectl config use-context "kind-$CLUSTER"

log "images"
docker build -f gateway/Dockerfile -t svc-gateway:e2e .
docker build -f operator/Dockerfile -t svc-operator:e2e .
"$NODE" framework/bin/svc.js init "$WORK/hello-tools"
(cd "$WORK/hello-tools" && "$NODE" "$ROOT/framework/bin/svc.js" build prod)
docker build -f e2e/kind/framework-server.Dockerfile -t svc-e2e-hello:e2e "$WORK/hello-tools"
docker build -f e2e/kind/identity-provider.Dockerfile -t svc-e2e-idp:e2e .
docker build -f e2e/kind/traffic.Dockerfile -t svc-e2e-traffic:e2e .
kind load docker-image --name "$CLUSTER" svc-gateway:e2e svc-operator:e2e svc-e2e-hello:e2e svc-e2e-idp:e2e svc-e2e-traffic:e2e

log "helm install"
# The examples bring their own McpGateway (named like the release), so the chart does not create one.
"$HELM" upgrade --install svc-gateway helm/svc-gateway --namespace "$NS" --create-namespace \
  --set gateway.image.repository=svc-gateway --set gateway.image.tag=e2e --set gateway.image.pullPolicy=Never \
  --set operator.image.repository=svc-operator --set operator.image.tag=e2e --set operator.image.pullPolicy=Never \
  --set gateway.mcpGateway.create=false --set gateway.replicas=1 --set redis.bundled.enabled=true \
  --wait=false
kubectl rollout status -n "$NS" deployment/svc-gateway-operator --timeout=180s

log "the e2e identity provider: two users, random client secrets"
ENGINEER="engineer:$(openssl rand -hex 24)"
CONTRACTOR="contractor:$(openssl rand -hex 24)"
kubectl create secret generic svc-e2e-idp-clients -n "$NS" --dry-run=client -o yaml \
  --from-literal=clients="$ENGINEER:engineering $CONTRACTOR:contractors" | kubectl apply -f -
kubectl apply -f e2e/kind/identity-provider.yaml
kubectl rollout status -n "$NS" deployment/svc-e2e-idp --timeout=180s

log "apply the examples and the e2e server"
kubectl apply -f operator/examples/
kubectl apply -f e2e/kind/resources.yaml
kubectl wait -n "$NS" --for=condition=Accepted mcpserver --all --timeout=120s
kubectl wait -n "$NS" --for=condition=Accepted identityprovider --all --timeout=120s
kubectl wait -n "$NS" --for=condition=Ready mcpserver/hello-tools --timeout=300s
kubectl rollout status -n "$NS" deployment/svc-gateway --timeout=300s
kubectl wait -n "$NS" --for=condition=Ready mcpgateway/svc-gateway --timeout=300s
# Every custom resource Ready: each server and identity provider is in the configuration the gateway serves.
kubectl wait -n "$NS" --for=condition=Ready mcpserver --all --timeout=120s
kubectl wait -n "$NS" --for=condition=Ready identityprovider --all --timeout=120s
kubectl wait -n "$NS" --for=condition=Ready mcpgateway --all --timeout=120s
kubectl get mcpservers,identityproviders,mcpgateways -n "$NS"

log "MCP through the gateway with real tokens (port-forwards to the gateway and the identity provider)"
kubectl port-forward -n "$NS" svc/svc-gateway 18080:80 >"$WORK/port-forward-gateway.log" 2>&1 &
PORT_FORWARDS+=($!)
kubectl port-forward -n "$NS" svc/svc-e2e-idp 18081:8080 >"$WORK/port-forward-idp.log" 2>&1 &
PORT_FORWARDS+=($!)
for _ in $(seq 1 60); do curl -fsS http://127.0.0.1:18080/readiness >/dev/null 2>&1 && break; sleep 1; done
curl -fsS http://127.0.0.1:18080/readiness
CHECK=("$NODE" e2e/scripts/kind-mcp-check.ts --url http://127.0.0.1:18080 --server hello-tools)
TOKEN=(--token-url http://127.0.0.1:18081/token --resource https://svc-gateway.e2e)
AS_ENGINEER=("${TOKEN[@]}" --client "$ENGINEER")
AS_CONTRACTOR=("${TOKEN[@]}" --client "$CONTRACTOR")
"${CHECK[@]}" "${AS_ENGINEER[@]}" --tool hello --args '{"name":"kind"}' --expect kind
"${CHECK[@]}" --expect-status 401
"${CHECK[@]}" "${AS_CONTRACTOR[@]}" --expect-status 403

log "changes show within seconds without a restart: deny a group, disable the server, restore"
# The operator annotates the gateway's pods with the new configuration's hash, so the kubelet remounts the
# ConfigMap at once instead of at its own pace (a minute or two): each change must show within QUICK seconds.
QUICK=(--timeout 30)
RESTARTS_BEFORE=$(kubectl get pods -n "$NS" -l app.kubernetes.io/component=gateway -o jsonpath='{.items[*].status.containerStatuses[*].restartCount}')
kubectl patch mcpserver hello-tools -n "$NS" --type merge -p '{"spec":{"rbacMode":"deny","deniedGroups":["engineering"],"allowedGroups":[]}}'
"${CHECK[@]}" "${QUICK[@]}" "${AS_ENGINEER[@]}" --expect-status 403
"${CHECK[@]}" "${AS_CONTRACTOR[@]}" --tool hello --args '{"name":"contractor"}' --expect contractor
kubectl patch mcpserver hello-tools -n "$NS" --type merge -p '{"spec":{"enabled":false}}'
"${CHECK[@]}" "${QUICK[@]}" "${AS_CONTRACTOR[@]}" --expect-status 404
kubectl patch mcpserver hello-tools -n "$NS" --type merge -p '{"spec":{"enabled":null,"rbacMode":"allow","deniedGroups":null,"allowedGroups":["engineering"]}}'
"${CHECK[@]}" "${QUICK[@]}" "${AS_ENGINEER[@]}" --tool hello --args '{"name":"again"}' --expect again
"${CHECK[@]}" "${AS_CONTRACTOR[@]}" --expect-status 403
RESTARTS_AFTER=$(kubectl get pods -n "$NS" -l app.kubernetes.io/component=gateway -o jsonpath='{.items[*].status.containerStatuses[*].restartCount}')
[ "$RESTARTS_BEFORE" = "$RESTARTS_AFTER" ] || { echo "the gateway restarted ($RESTARTS_BEFORE → $RESTARTS_AFTER)"; exit 1; }

log "an invalid resource: its status says why, traffic keeps flowing"
kubectl apply -f e2e/kind/broken-server.yaml
# Accepted=false alone would also hold for a moment while the server is not selected yet: wait for the reason.
kubectl wait -n "$NS" --for=jsonpath='{.status.conditions[?(@.type=="Accepted")].reason}'=Invalid mcpserver/broken --timeout=120s
kubectl get mcpserver broken -n "$NS" -o jsonpath='{.status.conditions[?(@.type=="Accepted")].message}' | tee "$WORK/broken.txt"
grep -q 'nowhere' "$WORK/broken.txt"
"${CHECK[@]}" "${AS_ENGINEER[@]}" --tool hello --args '{"name":"still"}' --expect still
kubectl delete -f e2e/kind/broken-server.yaml
kubectl wait -n "$NS" --for=condition=Accepted mcpgateway/svc-gateway --timeout=120s

log "a rolling restart under traffic: not one failed call (maxSurge 1, maxUnavailable 0, preStop, drain)"
kubectl create secret generic svc-e2e-traffic -n "$NS" --dry-run=client -o yaml \
  --from-literal=client="$ENGINEER" | kubectl apply -f -
kubectl apply -f e2e/kind/traffic.yaml
for _ in $(seq 1 120); do kubectl logs -n "$NS" pod/svc-e2e-traffic 2>/dev/null | grep -q 'traffic flowing' && break; sleep 1; done
kubectl logs -n "$NS" pod/svc-e2e-traffic | grep 'traffic flowing'
OLD_GATEWAY_PODS=$(kubectl get pods -n "$NS" -l app.kubernetes.io/component=gateway -o name)
kubectl rollout restart -n "$NS" deployment/svc-gateway
kubectl rollout status -n "$NS" deployment/svc-gateway --timeout=300s
# rollout status returns while the old pods may still drain: the traffic runs until they are gone.
kubectl wait -n "$NS" --for=delete $OLD_GATEWAY_PODS --timeout=120s || ! kubectl get -n "$NS" $OLD_GATEWAY_PODS >/dev/null 2>&1
kubectl exec -n "$NS" pod/svc-e2e-traffic -- node -e 'require("fs").writeFileSync("/tmp/stop", "")'
kubectl wait -n "$NS" --for=jsonpath='{.status.phase}'=Succeeded pod/svc-e2e-traffic --timeout=120s
kubectl logs -n "$NS" pod/svc-e2e-traffic | tail -n 1

log "e2e on kind passed"
