# syntax=docker/dockerfile:1
# CrashDesk production image: gunicorn + whitenoise on python:3.13-slim, running as a non-root user.
# Run it behind a proxy that buffers requests: compose.yaml puts nginx (docker/nginx.conf) in front.
#   docker compose up -d --build
#   docker build -t crashdesk . && docker run -p 127.0.0.1:8000:8000 -e SECRET_KEY=... \
#     -e ALLOWED_HOSTS=... -e DATABASE_URL=... crashdesk

ARG PYTHON_IMAGE=python:3.13-slim

# --- builder: resolve the locked dependencies into /app/.venv and collect static files --------
FROM ${PYTHON_IMAGE} AS builder

ARG UV_VERSION=0.13.9
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    UV_COMPILE_BYTECODE=1 \
    UV_LINK_MODE=copy \
    UV_PYTHON_DOWNLOADS=never \
    UV_PYTHON=/usr/local/bin/python3 \
    UV_PROJECT_ENVIRONMENT=/app/.venv

RUN pip install "uv==${UV_VERSION}"

WORKDIR /app

# Dependencies first, in a layer of their own, so code changes do not re-install them.
COPY pyproject.toml uv.lock ./
RUN --mount=type=cache,target=/root/.cache/uv \
    uv sync --locked --no-dev --no-install-project

COPY . .
RUN --mount=type=cache,target=/root/.cache/uv \
    uv sync --locked --no-dev

# Settings refuse to load without a secret when DEBUG is off; collectstatic needs neither the
# real secret nor a database, so a throwaway value is enough here and never reaches runtime.
RUN DEBUG=false SECRET_KEY=collectstatic-build-only /app/.venv/bin/python manage.py \
    collectstatic --noinput \
    && /app/.venv/bin/python -m compileall -q crashdesk settlements docker

# --- runtime: only the interpreter, the virtual environment, the code and the static files -------
FROM ${PYTHON_IMAGE} AS runtime

ENV PATH=/app/.venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    DEBUG=false \
    PORT=8000

RUN groupadd --system --gid 10001 crashdesk \
    && useradd --system --uid 10001 --gid crashdesk --no-create-home \
       --home-dir /nonexistent --shell /usr/sbin/nologin crashdesk

WORKDIR /app
# Owned by root and read-only for the app user: a compromised worker cannot rewrite the code.
COPY --from=builder /app /app

USER crashdesk:crashdesk
EXPOSE 8000

HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "/app/docker/healthcheck.py"]

ENTRYPOINT ["/app/docker/entrypoint.sh"]
CMD ["gunicorn", "--config", "crashdesk/gunicorn.conf.py"]
