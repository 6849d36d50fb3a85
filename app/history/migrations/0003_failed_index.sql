-- Version 3: cheaper to write, as fast to read.
--
-- calls_outcome_start indexed every call by its outcome, so every call, most
-- of them "ok", paid for one more B-tree insert. The only outcome filters are
-- "every failure" (outcome <> 'ok') and one kind of failure (outcome = ?, a
-- failure kind: the query adds outcome <> 'ok' so that this index serves it);
-- "ok" alone reads calls_start newest first. So failed calls are indexed by
-- start, and successful ones not at all.
DROP INDEX calls_outcome_start;
CREATE INDEX calls_failed_start ON calls(start) WHERE outcome <> 'ok';

-- The search index merges its segments (one per batch of the writer) 16 at a
-- time rather than 4: each call's entries are rewritten about half as often
-- as the index grows (log16 rather than log4 of the number of batches), for
-- at most 15 segments a level to read rather than 3, which the search
-- benchmarks do not tell apart.
INSERT INTO calls_fts(calls_fts, rank) VALUES ('automerge', 16);
