# The two set-up commands: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000
# A connection must send a whole request within CARDBOARD_HANDSHAKE_SECONDS
# (app/handshake.py: uvicorn has no such timeout of its own).
UVICORN_HTTP := --http app.handshake:DeadlineProtocol
# Frames over 1 MiB close the socket; no compression (a small deflated frame
# could inflate to megabytes before the 64 KiB check). A ping every 5 s, and a
# client that has not answered one within 5 s is disconnected: a client that
# vanished is seen gone within 10 s, and an idle socket sends something to a
# proxy every 5 s.
UVICORN_WS := --ws app.wsproto:LeanProtocol --ws-max-size 1048576 --ws-per-message-deflate false --ws-ping-interval 5 --ws-ping-timeout 5


# Locked dependencies with their hashes (README "Dependencies"): the
# runtime set for the container, and the runtime and test set for `make`.
# `make lock` writes both again from pyproject.toml with uv.
LOCK := requirements.lock
TEST_LOCK := requirements-test.lock
UV := uv==0.13.8
UV_COMPILE := $(BIN)/uv pip compile --quiet --universal --python-version 3.11 --generate-hashes \
	--custom-compile-command 'make lock'

.PHONY: run test lint bench bench-load clean lock

# `make run` installs the runtime set only; `make test` (and the benchmarks)
# the runtime and test set, which holds the same runtime versions.
RUN_STAMP := $(VENV)/.installed-run

$(RUN_STAMP): pyproject.toml $(LOCK)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --require-hashes -r $(LOCK)
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
	touch $(RUN_STAMP)

$(STAMP): pyproject.toml $(TEST_LOCK)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --require-hashes -r $(TEST_LOCK)
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
	touch $(STAMP)

lock:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet '$(UV)'
	$(BIN)/python -c 'import tomllib; print(*tomllib.load(open("pyproject.toml", "rb"))["build-system"]["requires"], sep="\n")' > $(VENV)/build-requires.in
	$(UV_COMPILE) pyproject.toml $(VENV)/build-requires.in -o $(LOCK)
	$(UV_COMPILE) pyproject.toml $(VENV)/build-requires.in --extra test -c $(LOCK) -o $(TEST_LOCK)

# Rooms are kept in this SQLite file across restarts.
DATABASE ?= data/cardboard.db

run: $(RUN_STAMP)
	exec env CARDBOARD_DATABASE=$(DATABASE) $(BIN)/uvicorn app.main:app --host $(HOST) --port $(PORT) \
		$(UVICORN_HTTP) $(UVICORN_WS)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy

test: lint
	$(BIN)/pytest -n 2 --dist loadgroup

bench: $(STAMP)
	$(BIN)/python -m bench.engine

# The server under load (../shared/bench/load.py), each run on a fresh server.
bench-load: $(STAMP)
	$(BIN)/python -m bench.load

clean:
	rm -rf $(VENV)
