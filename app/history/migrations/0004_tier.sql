-- Version 4: a tool call's tool's tier ("read", "write" or "destructive",
-- see app/tiers) as it was when the call was made: the override or the
-- annotations may change after. '' for other methods, and for calls
-- recorded before this version.
ALTER TABLE calls ADD COLUMN tier TEXT NOT NULL DEFAULT '';
