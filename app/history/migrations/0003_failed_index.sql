-- Version 3: cheaper to write, as fast to read, the same search results.
--
-- calls_outcome_start indexed every call by its outcome, so every call, most
-- of them "ok", paid for one more B-tree insert. The only outcome filters are
-- "every failure" (outcome <> 'ok') and one kind of failure (outcome = ?, a
-- failure kind: the query adds outcome <> 'ok' so that this index serves it);
-- "ok" alone reads calls_start newest first. So failed calls are indexed by
-- start, and successful ones not at all.
DROP INDEX calls_outcome_start;
CREATE INDEX calls_failed_start ON calls(start) WHERE outcome <> 'ok';

-- The search index is made again with two settings that make indexing a
-- call cheaper and change no search result:
--   * columnsize=0: FTS5 keeps no table of each row's token counts, which
--     only ranking (bm25) reads; searches here sort by start, never by rank;
--   * automerge 16: segments (one per batch of the writer) are merged 16 at
--     a time rather than 4, so each call's entries are rewritten about half
--     as often as the index grows (log16 rather than log4 of the number of
--     batches), for at most 15 segments a level to read rather than 3, which
--     the search benchmarks do not tell apart.
-- The rest is as version 2 made it (see 0002_fts.sql).
DROP TRIGGER calls_fts_delete;
DROP TRIGGER calls_fts_update;
DROP TABLE calls_fts;

CREATE VIRTUAL TABLE calls_fts USING fts5(
	name, arguments, error,
	content = 'calls', content_rowid = 'id',
	columnsize = 0
);
INSERT INTO calls_fts(calls_fts, rank) VALUES ('secure-delete', 1);
INSERT INTO calls_fts(calls_fts, rank) VALUES ('automerge', 16);

CREATE TRIGGER calls_fts_delete AFTER DELETE ON calls BEGIN
	INSERT INTO calls_fts(calls_fts, rowid, name, arguments, error)
	VALUES ('delete', old.id, old.name, old.arguments, old.error);
END;

CREATE TRIGGER calls_fts_update AFTER UPDATE OF name, arguments, error ON calls BEGIN
	INSERT INTO calls_fts(calls_fts, rowid, name, arguments, error)
	VALUES ('delete', old.id, old.name, old.arguments, old.error);
	INSERT INTO calls_fts(rowid, name, arguments, error)
	VALUES (new.id, new.name, new.arguments, new.error);
END;

-- Index the calls the database already holds.
INSERT INTO calls_fts(calls_fts) VALUES ('rebuild');
