# Image of a server built with the svc framework for the kind e2e: the same runtime stage as the Dockerfile
# `svc init` writes, fed with a dist/ built by this repository's svc CLI (the published @svc-mcp/framework
# package is not needed). Build context: the project directory.
FROM node:24-slim
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8080 SVC_DATA_DIR=/var/lib/svc
WORKDIR /app
COPY dist ./dist
USER 1000:1000
EXPOSE 8080
CMD ["node", "dist/server.mjs"]
