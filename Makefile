# The two set-up commands: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000
# Frames over 1 MiB close the socket; no compression (a small deflated frame
# could inflate to megabytes before the 64 KiB check).
UVICORN_WS := --ws websockets-sansio --ws-max-size 1048576 --ws-per-message-deflate false

.PHONY: run test lint bench bench-load clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

# Rooms are kept in this SQLite file across restarts.
DATABASE ?= data/cardboard.db

run: $(STAMP)
	CARDBOARD_DATABASE=$(DATABASE) $(BIN)/uvicorn app.main:app --host $(HOST) --port $(PORT) $(UVICORN_WS)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy

test: lint
	$(BIN)/pytest -n 2 --dist loadgroup

bench: $(STAMP)
	$(BIN)/python bench/engine.py

# The server under load (../shared/bench/load.py), each run on a fresh server.
bench-load: $(STAMP)
	$(BIN)/python bench/load.py

clean:
	rm -rf $(VENV)
