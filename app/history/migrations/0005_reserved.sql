-- Version 5 is helper i29's (0005_decision.sql, the decision columns). This
-- placeholder keeps the numbering without gaps on its own branch; it
-- changes nothing, and is dropped when the two are merged.
SELECT 1;
