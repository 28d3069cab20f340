# Cardboard: a self-hosted server for cardboard games.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /srv/cardboard

RUN groupadd --gid 10001 cardboard && useradd --create-home --uid 10001 --gid 10001 --shell /usr/sbin/nologin cardboard \
    && mkdir /data && chown 10001:10001 /data

# The locked runtime dependencies, each checked against its hash (README
# "Dependencies"), then the project itself with nothing more.
COPY requirements.lock ./
RUN pip install --no-cache-dir --require-hashes -r requirements.lock
COPY pyproject.toml README.md ./
COPY engine ./engine
COPY app ./app
COPY templates ./templates
COPY static ./static
RUN pip install --no-cache-dir --no-deps --no-build-isolation -e .

# Rooms are kept in an SQLite file on this volume (docker-compose.yml names it).
ENV CARDBOARD_DATABASE=/data/cardboard.db
VOLUME ["/data"]

USER 10001:10001
EXPOSE 8000

HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=4)"]

# The flags of the Makefile's UVICORN_HTTP and UVICORN_WS. Behind a reverse
# proxy in another container, set FORWARDED_ALLOW_IPS to its address (README).
CMD ["uvicorn", "app.main:app", "--host", "0.0.0.0", "--port", "8000", "--proxy-headers", \
     "--http", "app.handshake:DeadlineProtocol", \
     "--ws", "app.wsproto:LeanProtocol", "--ws-max-size", "1048576", "--ws-per-message-deflate", "false", \
     "--ws-ping-interval", "5", "--ws-ping-timeout", "5"]
