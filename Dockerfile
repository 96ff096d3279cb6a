# denoc container image: denocd (the gRPC dynamics service), the denoc CLI, denoc-health (the gRPC health
# probe) and denoc_probe (latency probe), on Debian 12, installed from the project's Debian package (the
# build stage makes it with cpack; the runtime stage installs it with apt-get, which brings its dependencies).
#
# Build on a machine without a registry: deploy/build-image.sh (makes debian:bookworm-slim with debootstrap
# when it is missing). By hand: DOCKER_BUILDKIT=0 docker build --network host -t denoc .
#
# Defaults: denocd listens on 0.0.0.0:50051 and keeps its models in the volume /var/lib/denoc/store. On a
# non-loopback address denocd serves TLS (DENOC_TLS_CERT, DENOC_TLS_KEY; mutual TLS with
# DENOC_TLS_CLIENT_CA) or, only when told so, plaintext (DENOC_PLAINTEXT=true): the image sets neither, so a
# container started without one of them refuses to start rather than serve plaintext by accident.
# deploy/compose.yaml and deploy/k8s/ mount TLS material; deploy/README.md has the details.
#
# Exposed deployments (the documented default, docs/service.md "The front"): the same image runs nginx
# (denoc-front: nginx on port 8443, mutual TLS, reloaded when its certificates change) in front of denocd
# listening on unix:/run/denoc/denocd.sock with DENOC_TRUSTED_FRONT_HEADER=true; the two share /run/denoc.

# ---- build: the README's install script, the package preset, the Debian package ---------------------------------
FROM debian:bookworm-slim AS build
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
WORKDIR /opt/denoc
# the dependency layer is kept until install-deps.sh changes
COPY deploy/install-deps.sh deploy/install-deps.sh
RUN deploy/install-deps.sh && rm -rf /var/lib/apt/lists/*
COPY . .
# the package preset (release, installed into /usr; tests and benchmarks run in CI, not here), then the .deb
# (cmake/DenocPackaging.cmake): only what the package holds is built
RUN cmake --preset package \
 && cmake --build --preset package -j"$(nproc)" --target denocd denoc denoc-health denoc_probe denoc_core \
      denoc_proto denoc_client denoc_package_files \
 && cpack --preset deb \
 && mkdir -p /out && cp build/package/packages/denoc_*.deb /out/

# ---- runtime: the Debian package, its dependencies from dpkg-shlibdeps -----------------------------------------
FROM debian:bookworm-slim
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
# the package's files for building against denoc (headers, static libraries, CMake and pkg-config files) have
# no use in a service image: dpkg leaves them out
RUN printf '%s\n' 'path-exclude /usr/include/denoc/*' 'path-exclude /usr/lib/*/libdenoc_*.a' \
      'path-exclude /usr/lib/*/cmake/denoc/*' 'path-exclude /usr/lib/*/pkgconfig/denoc*' \
      >/etc/dpkg/dpkg.cfg.d/denoc-runtime
WORKDIR /tmp/denoc
COPY --from=build /out/ ./
# nginx: the hardened front (deploy/nginx), run from the same image beside denocd on a unix socket
RUN apt-get update -q && apt-get install -y -q --no-install-recommends ca-certificates nginx ./denoc_*.deb \
 && rm -rf /var/lib/apt/lists/* /tmp/denoc /etc/nginx/sites-enabled/default
WORKDIR /
# the unprivileged user (uid and gid 10001) owns the store and nothing else
RUN groupadd --gid 10001 denoc \
 && useradd --uid 10001 --gid denoc --home-dir /var/lib/denoc --no-create-home --no-log-init \
            --shell /usr/sbin/nologin denoc \
 && mkdir -p /var/lib/denoc/store /etc/denoc/tls /run/denoc \
 && chown -R denoc:denoc /var/lib/denoc /run/denoc
# the front's configuration: nginx -p /tmp/ -c /etc/denoc/nginx/nginx.conf (deploy/nginx/nginx.conf)
COPY deploy/nginx/nginx.conf deploy/nginx/denoc.conf deploy/nginx/front-server.conf /etc/denoc/nginx/
# the L7 balancer's (deploy/k8s/balancer): the same nginx.conf beside balancer.conf as its denoc.conf
COPY deploy/nginx/nginx.conf deploy/nginx/front-server.conf /etc/denoc/balancer/
COPY deploy/nginx/balancer.conf /etc/denoc/balancer/denoc.conf
# the front's process: nginx in the foreground, reloaded when /etc/denoc/tls changes (deploy/nginx/front.sh)
COPY deploy/nginx/front.sh /usr/local/bin/denoc-front
# every shared library resolves, and the programs run
RUN if ldd /usr/bin/denocd /usr/bin/denoc /usr/bin/denoc-health /usr/bin/denoc_probe | grep 'not found'; then exit 1; fi \
 && denocd --version && denoc --version && denoc-health --help > /dev/null \
 && nginx -V 2>&1 | grep -q -- --with-http_v2_module

ENV DENOC_LISTEN=0.0.0.0:50051 \
    DENOC_STORE_DIR=/var/lib/denoc/store \
    DENOC_PRELOAD=/usr/share/denoc/models/panda.urdf,/usr/share/denoc/models/trees/solo12.urdf#floating \
    DENOC_LOG_LEVEL=info \
    DENOC_HEALTH_TIMEOUT_MS=2000
EXPOSE 50051 8443
VOLUME ["/var/lib/denoc/store"]
WORKDIR /var/lib/denoc
USER 10001:10001
# grpc.health.v1 on the port of DENOC_LISTEN (TLS when DENOC_TLS_CERT is set: give the probe
# DENOC_HEALTH_TLS_CA and, for mutual TLS, DENOC_HEALTH_TLS_CERT and DENOC_HEALTH_TLS_KEY); unhealthy after
# 3 failures in a row, 30 s (no --start-period: dockerfilelint 1.8 misreads it)
HEALTHCHECK --interval=10s --timeout=5s --retries=3 CMD ["denoc-health", "--quiet"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["denocd"]
