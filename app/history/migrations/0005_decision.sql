-- Version 5: the user's decision on a call that had to be asked for (a
-- destructive tool's call on a server or profile that asks before
-- destructive calls): who decided ('elicitation', 'input_required',
-- 'dashboard', 'tray', 'cli', 'timeout'), whether the call was allowed,
-- and when (unix microseconds). decided_by '' for a call that was not
-- asked about, and for calls recorded before this version.
ALTER TABLE calls ADD COLUMN decided_by TEXT NOT NULL DEFAULT '';
ALTER TABLE calls ADD COLUMN decision_allowed INTEGER NOT NULL DEFAULT 0;
ALTER TABLE calls ADD COLUMN decided_at INTEGER NOT NULL DEFAULT 0;
