-- Version 7: the search index (calls_fts) follows the calls in bulk rather
-- than with every batch (issue 33). Indexing a batch's calls as it commits
-- made FTS5 write a small segment per batch and merge them again and again:
-- about a third of what storing a call cost. The writer now adds the calls
-- it has stored since last time when it is idle, when there are many of
-- them, and before a free-text search reads the index (writer.go).
--
-- unindexed_from is the first call id the index does not hold: every call
-- below it is in the index, none from it on.
CREATE TABLE search_index_state (unindexed_from INTEGER NOT NULL);
INSERT INTO search_index_state (unindexed_from) SELECT coalesce(max(id), 0) + 1 FROM calls;

-- A call not yet indexed has nothing in the index to delete or replace:
-- telling FTS5 to delete what it never held would damage the index.
DROP TRIGGER calls_fts_delete;
DROP TRIGGER calls_fts_update;

CREATE TRIGGER calls_fts_delete AFTER DELETE ON calls
WHEN old.id < (SELECT unindexed_from FROM search_index_state) BEGIN
	INSERT INTO calls_fts(calls_fts, rowid, name, arguments, error)
	VALUES ('delete', old.id, old.name, old.arguments, old.error);
END;

CREATE TRIGGER calls_fts_update AFTER UPDATE OF name, arguments, error ON calls
WHEN old.id < (SELECT unindexed_from FROM search_index_state) BEGIN
	INSERT INTO calls_fts(calls_fts, rowid, name, arguments, error)
	VALUES ('delete', old.id, old.name, old.arguments, old.error);
	INSERT INTO calls_fts(rowid, name, arguments, error)
	VALUES (new.id, new.name, new.arguments, new.error);
END;
