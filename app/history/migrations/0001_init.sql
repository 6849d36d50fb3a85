-- Version 1: the four tables of history. Times are unix microseconds (UTC),
-- durations microseconds.

CREATE TABLE calls (
	id               INTEGER PRIMARY KEY AUTOINCREMENT,
	start            INTEGER NOT NULL,
	duration_us      INTEGER NOT NULL DEFAULT 0,
	client_label     TEXT    NOT NULL DEFAULT '',
	client_name      TEXT    NOT NULL DEFAULT '',
	client_version   TEXT    NOT NULL DEFAULT '',
	session          TEXT    NOT NULL DEFAULT '',
	endpoint         TEXT    NOT NULL DEFAULT '',
	server           TEXT    NOT NULL DEFAULT '',
	method           TEXT    NOT NULL DEFAULT '',
	name             TEXT    NOT NULL DEFAULT '',
	arguments        TEXT,                          -- JSON, redacted and capped; NULL when none
	outcome          TEXT    NOT NULL DEFAULT '',
	error            TEXT    NOT NULL DEFAULT '',
	response_size    INTEGER NOT NULL DEFAULT 0,
	response_preview TEXT    NOT NULL DEFAULT '',
	pid              INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX calls_start ON calls(start);
CREATE INDEX calls_server_start ON calls(server, start);
CREATE INDEX calls_name_start ON calls(name, start);
CREATE INDEX calls_outcome_start ON calls(outcome, start);

CREATE TABLE logs (
	id     INTEGER PRIMARY KEY AUTOINCREMENT,
	time   INTEGER NOT NULL,
	server TEXT    NOT NULL DEFAULT '',
	pid    INTEGER NOT NULL DEFAULT 0,
	stream TEXT    NOT NULL DEFAULT '',
	text   TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX logs_time ON logs(time);
CREATE INDEX logs_server_time ON logs(server, time);

CREATE TABLE events (
	id      INTEGER PRIMARY KEY AUTOINCREMENT,
	time    INTEGER NOT NULL,
	server  TEXT    NOT NULL DEFAULT '',
	kind    TEXT    NOT NULL DEFAULT '',
	pid     INTEGER NOT NULL DEFAULT 0,
	exit    TEXT    NOT NULL DEFAULT '',
	message TEXT    NOT NULL DEFAULT '',
	state   TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX events_time ON events(time);
CREATE INDEX events_server_time ON events(server, time);

-- span is the width of the point in microseconds: 0 for a raw sample, else
-- the bucket a downsampled point covers; n is how many raw samples it averages.
CREATE TABLE samples (
	id        INTEGER PRIMARY KEY,
	time      INTEGER NOT NULL,
	server    TEXT    NOT NULL DEFAULT '',
	cpu       REAL    NOT NULL DEFAULT 0,
	rss       INTEGER NOT NULL DEFAULT 0,
	processes INTEGER NOT NULL DEFAULT 0,
	span      INTEGER NOT NULL DEFAULT 0,
	n         INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX samples_time ON samples(time);
CREATE INDEX samples_server_time ON samples(server, time);
