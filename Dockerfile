# rackpulse image: Python app + smartmontools + mdadm; front-end libraries from the npm lockfile.
FROM node:20-bookworm-slim AS assets
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --ignore-scripts && mkdir -p vendor && \
    cp node_modules/htmx.org/dist/htmx.min.js node_modules/uplot/dist/uPlot.iife.min.js \
       node_modules/uplot/dist/uPlot.min.css node_modules/swagger-ui-dist/swagger-ui-bundle.js \
       node_modules/swagger-ui-dist/swagger-ui.css vendor/

FROM python:3.11-slim-bookworm
RUN apt-get update && apt-get install -y --no-install-recommends smartmontools mdadm && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY . .
COPY --from=assets /src/vendor static/vendor
RUN pip install --no-cache-dir '.[postgres]'
VOLUME /var/lib/rackpulse
ENV RACKPULSE_CONFIG=/etc/rackpulse/rackpulse.toml
EXPOSE 9842
CMD ["rackpulse", "serve"]
