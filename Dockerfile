# cpsettle: gRPC settlement service for Chinese Poker.
#
#   docker build -t REGISTRY/cpsettle:0.1.0 .
#
# The base image is pinned by tag and digest (its multi-platform index): a
# rebuild uses the same bytes. Its Debian packages are listed in
# deploy/image/base-packages.txt, which .ci/supply-chain adds to the SBOM; a
# new base means a new list (the list names the base it is for; a test checks).
# The image installs no Debian package of its own.

# ---- builder: build the wheel and install it into a virtualenv --------------
FROM python:3.11.16-slim-bookworm@sha256:c425d915a89a6dcd3183b1797ad9bd8878caff5a417f6371c8df93c8ea8b727f AS builder

ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_ROOT_USER_ACTION=ignore

WORKDIR /src
# Only what the wheel needs (see .dockerignore).
COPY requirements.lock ./
COPY pyproject.toml README.md hatch_build.py ./
COPY service/ service/
COPY clients/ clients/
COPY proto/ proto/

# The venv has no pip of its own: the builder's pip installs into it, so the
# final image carries no installer. Dependencies come only from
# requirements.lock (scripts/lock), every file checked against its SHA-256,
# wheels only (the OTLP exporter included: traces stay off until
# CPSETTLE_OTEL_ENDPOINT is set); then the project's own wheel without
# resolving anything.
RUN pip wheel --no-deps --wheel-dir /wheels . \
 && python -m venv --without-pip /opt/cpsettle \
 && pip --python /opt/cpsettle/bin/python install --require-hashes --only-binary=:all: \
        -r requirements.lock \
 && pip --python /opt/cpsettle/bin/python install --no-deps /wheels/*.whl \
 && pip --python /opt/cpsettle/bin/python check

# ---- final: the virtualenv on a clean Python, nothing else ------------------
FROM python:3.11.16-slim-bookworm@sha256:c425d915a89a6dcd3183b1797ad9bd8878caff5a417f6371c8df93c8ea8b727f

LABEL org.opencontainers.image.title="cpsettle" \
      org.opencontainers.image.description="Stateless gRPC settlement service for Chinese Poker"

# A numeric, non-root user; the base image's pip, setuptools and wheel go away,
# the service does not need them at run time.
RUN groupadd --system --gid 10001 cpsettle \
 && useradd --system --uid 10001 --gid 10001 --no-create-home \
            --home-dir /nonexistent --shell /usr/sbin/nologin cpsettle \
 && python -m pip uninstall --yes --no-cache-dir pip setuptools wheel

COPY --from=builder /opt/cpsettle /opt/cpsettle

ENV PATH="/opt/cpsettle/bin:${PATH}" \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    CPSETTLE_HOST=0.0.0.0 \
    CPSETTLE_PORT=50051 \
    CPSETTLE_METRICS_PORT=9464 \
    CPSETTLE_HEALTH_PORT=50052 \
    CPSETTLE_HTTP_PORT=8080

USER 10001

# gRPC (TLS when CPSETTLE_TLS_* are set), Prometheus metrics (/metrics), the
# plaintext port that serves only grpc.health.v1 (for the kubelet's probes), and
# HTTP/JSON (Connect; HTTPS when CPSETTLE_TLS_* are set).
EXPOSE 50051 9464 50052 8080

# No Docker HEALTHCHECK: Kubernetes ignores it and probes the standard
# grpc.health.v1 service itself (native gRPC probes in deploy/base), and the
# image holds no gRPC health client to run one. "NONE" says so explicitly.
HEALTHCHECK NONE

# Exec form: cpsettle-server is PID 1 and receives SIGTERM directly; it drains
# for up to CPSETTLE_GRACE_SECONDS and exits 0.
ENTRYPOINT ["cpsettle-server"]
