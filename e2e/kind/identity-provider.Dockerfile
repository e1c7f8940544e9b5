# The e2e identity provider (oidc-provider, e2e/src/identity-provider.ts on testkit/src/oidc-provider.ts) as an image for the kind e2e, so the
# in-cluster gateway checks real tokens exactly as `npm run e2e` does on loopback. Test use only: its keys live
# in memory and its clients come from IDP_CLIENTS. Build from the repository root:
#   docker build -f e2e/kind/identity-provider.Dockerfile -t svc-e2e-idp:e2e .
# oidc-provider is a devDependency (the product images install production dependencies only and must not carry
# it), so this image installs just that package, at the version package-lock.json pins.

FROM node:24-slim AS deps
WORKDIR /app
COPY package-lock.json /tmp/package-lock.json
RUN version=$(node -p "require('/tmp/package-lock.json').packages['node_modules/oidc-provider'].version") \
 && echo '{"private":true,"type":"module"}' >package.json \
 && npm install --omit=dev --ignore-scripts --no-audit --no-fund --save-exact "oidc-provider@$version" \
 && npm cache clean --force

FROM node:24-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=deps /app/package.json ./
COPY e2e/src/identity-provider.ts e2e/src/
COPY testkit/src/oidc-provider.ts testkit/src/
COPY e2e/scripts/identity-provider.ts e2e/scripts/
USER 10001:10001
EXPOSE 8080
ENTRYPOINT ["node", "e2e/scripts/identity-provider.ts"]
