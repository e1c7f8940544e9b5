# The kind e2e's traffic generator (e2e/scripts/kind-traffic.ts) as an image: it runs as a Job inside the cluster and
# calls a tool through the gateway's Service during a rolling restart, because a port-forward pins one pod and dies
# with it. Test use only. Build from the repository root:
#   docker build -f e2e/kind/traffic.Dockerfile -t svc-e2e-traffic:e2e .
# It installs just the MCP SDK, at the version package-lock.json pins; the token helper comes from testkit through
# a symlink, as in the workspace (Node strips TypeScript types only outside node_modules, and follows symlinks).

FROM node:24-slim AS deps
WORKDIR /app
COPY package-lock.json /tmp/package-lock.json
RUN version=$(node -p "require('/tmp/package-lock.json').packages['node_modules/@modelcontextprotocol/sdk'].version") \
 && echo '{"private":true,"type":"module"}' >package.json \
 && npm install --omit=dev --ignore-scripts --no-audit --no-fund --save-exact "@modelcontextprotocol/sdk@$version" \
 && npm cache clean --force

FROM node:24-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=deps /app/package.json ./
COPY testkit/package.json testkit/
COPY testkit/src/client-credentials.ts testkit/src/
COPY e2e/src/mcp-call-options.ts e2e/src/
COPY e2e/scripts/kind-traffic.ts e2e/scripts/
RUN ln -s ../testkit node_modules/svc-testkit
USER 10001:10001
ENTRYPOINT ["node", "e2e/scripts/kind-traffic.ts"]
