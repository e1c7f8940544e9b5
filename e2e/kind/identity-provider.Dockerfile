# The e2e identity provider (oidc-provider, e2e/src/identity-provider.ts) as an image for the kind e2e, so the
# in-cluster gateway checks real tokens exactly as `npm run e2e` does on loopback. Test use only: its keys live
# in memory and its clients come from the command line. Build from the repository root:
#   docker build -f e2e/kind/identity-provider.Dockerfile -t svc-e2e-idp:e2e .

FROM node:24-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY framework/package.json framework/
COPY gateway/package.json gateway/
COPY operator/package.json operator/
COPY e2e/package.json e2e/
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund --workspace e2e \
 && npm cache clean --force

FROM node:24-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY e2e/package.json e2e/
COPY e2e/src/identity-provider.ts e2e/src/
COPY e2e/scripts/identity-provider.ts e2e/scripts/
USER 10001:10001
EXPOSE 8080
ENTRYPOINT ["node", "e2e/scripts/identity-provider.ts"]
