# denoc container image: denocd (the gRPC dynamics service), the denoc CLI, denoc-health (the gRPC health
# probe) and denoc_probe (latency probe), on Debian 12.
#
# Build on a machine without a registry: deploy/build-image.sh (makes debian:bookworm-slim with debootstrap
# when it is missing). By hand: DOCKER_BUILDKIT=0 docker build --network host -t denoc .
#
# Defaults: denocd listens on 0.0.0.0:50051 and keeps its models in the volume /var/lib/denoc/store. On a
# non-loopback address denocd serves TLS (DENOC_TLS_CERT, DENOC_TLS_KEY; mutual TLS with
# DENOC_TLS_CLIENT_CA) or, only when told so, plaintext (DENOC_PLAINTEXT=true): the image sets neither, so a
# container started without one of them refuses to start rather than serve plaintext by accident.
# deploy/compose.yaml and deploy/k8s/ mount TLS material; deploy/README.md has the details.

# ---- build: the README's install script and CMake preset --------------------------------------------------
FROM debian:bookworm-slim AS build
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
WORKDIR /opt/denoc
# the dependency layer is kept until install-deps.sh changes
COPY deploy/install-deps.sh deploy/install-deps.sh
RUN deploy/install-deps.sh && rm -rf /var/lib/apt/lists/*
COPY . .
# the release preset; only the programs the image ships (tests and benchmarks run in CI, not here)
RUN cmake --preset release -DDENOC_BUILD_TESTS=OFF -DDENOC_BUILD_BENCH=OFF \
 && cmake --build --preset release -j"$(nproc)" --target denocd denoc denoc-health denoc_probe \
 && mkdir -p /out/bin \
 && cp build/release/server/denocd build/release/clients/cli/denoc build/release/server/tools/denoc-health \
       build/release/server/tools/denoc_probe /out/bin/ \
 && strip --strip-unneeded /out/bin/*

# ---- runtime: the shared libraries only ---------------------------------------------------------------------
FROM debian:bookworm-slim
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
COPY deploy/runtime-packages.txt /tmp/runtime-packages.txt
RUN apt-get update -q && apt-get install -y -q --no-install-recommends $(sed -e 's/#.*//' /tmp/runtime-packages.txt) \
 && rm -rf /var/lib/apt/lists/* /tmp/runtime-packages.txt
# the unprivileged user (uid and gid 10001) owns the store and nothing else
RUN groupadd --gid 10001 denoc \
 && useradd --uid 10001 --gid denoc --home-dir /var/lib/denoc --no-create-home --no-log-init \
            --shell /usr/sbin/nologin denoc \
 && mkdir -p /var/lib/denoc/store /etc/denoc/tls \
 && chown -R denoc:denoc /var/lib/denoc
COPY --from=build /out/bin/ /usr/local/bin/
# the example models (the Panda URDF with its licences) where the CLI's demo looks for them
COPY examples/models/ /opt/denoc/examples/models/
# every shared library resolves (a missing runtime package fails the build here)
RUN if ldd /usr/local/bin/* | grep 'not found'; then exit 1; fi \
 && denocd --help > /dev/null && denoc-health --help > /dev/null

ENV DENOC_LISTEN=0.0.0.0:50051 \
    DENOC_STORE_DIR=/var/lib/denoc/store \
    DENOC_PRELOAD=/opt/denoc/examples/models/panda.urdf \
    DENOC_LOG_LEVEL=info \
    DENOC_HEALTH_TIMEOUT_MS=2000
EXPOSE 50051
VOLUME ["/var/lib/denoc/store"]
WORKDIR /var/lib/denoc
USER 10001:10001
# grpc.health.v1 on the port of DENOC_LISTEN (TLS when DENOC_TLS_CERT is set: give the probe
# DENOC_HEALTH_TLS_CA and, for mutual TLS, DENOC_HEALTH_TLS_CERT and DENOC_HEALTH_TLS_KEY); unhealthy after
# 3 failures in a row, 30 s (no --start-period: dockerfilelint 1.8 misreads it)
HEALTHCHECK --interval=10s --timeout=5s --retries=3 CMD ["denoc-health", "--quiet"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["denocd"]
