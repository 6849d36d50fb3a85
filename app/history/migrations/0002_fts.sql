-- Version 2: free-text search over calls. calls_fts is an external-content
-- FTS5 index over calls(name, arguments, error), kept in sync in the same
-- transaction as the change to calls: the writer indexes each batch of new
-- calls with one INSERT ... SELECT at the end of the batch (one FTS5 flush per
-- batch rather than one per row: an insert trigger made every row flush the
-- index to disk); triggers handle deletes and updates.

CREATE VIRTUAL TABLE calls_fts USING fts5(
	name, arguments, error,
	content = 'calls', content_rowid = 'id'
);

-- Deletes remove their entries from the index at once instead of leaving
-- tombstones until the next merge: retention by size can then measure what
-- it freed.
INSERT INTO calls_fts(calls_fts, rank) VALUES ('secure-delete', 1);

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

-- Index the calls a version-1 database already holds.
INSERT INTO calls_fts(calls_fts) VALUES ('rebuild');
