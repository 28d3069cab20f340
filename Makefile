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
UVICORN_WS := --ws websockets-sansio --ws-max-size 1048576 --ws-per-message-deflate false --ws-ping-interval 5 --ws-ping-timeout 5

.PHONY: run test lint bench bench-load clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

# Rooms are kept in this SQLite file across restarts.
DATABASE ?= data/cardboard.db

run: $(STAMP)
	CARDBOARD_DATABASE=$(DATABASE) $(BIN)/uvicorn app.main:app --host $(HOST) --port $(PORT) \
		$(UVICORN_HTTP) $(UVICORN_WS)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy

test: lint
	$(BIN)/pytest -n 2 --dist loadgroup

bench: $(STAMP)
	$(BIN)/python bench/engine.py

# The server under load (../shared/bench/load.py), each run on a fresh server.
bench-load: $(STAMP)
	$(BIN)/python -m bench.load

clean:
	rm -rf $(VENV)
