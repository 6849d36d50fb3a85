-- Version 6: a call's server and tool as two fields. "name" stays what the
-- client called (alpha__echo on /mcp and a profile's endpoint, echo on
-- /mcp/alpha); "tool" is the tool (prompt, resource URI) as its server
-- calls it, whichever endpoint the call came through, and "unknown" says
-- which part of the name the gateway did not know when the call was made:
-- 'server' (no configured server goes by the name's prefix), 'tool' (the
-- server is known, but does not offer that tool there), '' (both known).
ALTER TABLE calls ADD COLUMN tool TEXT NOT NULL DEFAULT '';
ALTER TABLE calls ADD COLUMN unknown TEXT NOT NULL DEFAULT '';

-- Calls recorded before this version: a tool's or prompt's is the name
-- after the first "__" on an aggregated endpoint (/mcp: endpoint '', a
-- profile's: 'p/<name>'; server names and aliases never contain "__"),
-- else the name itself (a resource's URI is never cut). A call on an aggregated endpoint that found no server was
-- one of a server nobody configured: its server is the name's prefix. A
-- call the go-sdk answered "unknown tool" or "unknown prompt" was of an
-- item its (known) server did not offer.
UPDATE calls SET tool = CASE
	WHEN method IN ('tools/call', 'prompts/get') AND (endpoint = '' OR endpoint LIKE 'p/%') AND instr(name, '__') > 1
	THEN substr(name, instr(name, '__') + 2)
	ELSE name END;
UPDATE calls SET unknown = 'server', server = substr(name, 1, instr(name, '__') - 1)
	WHERE server = '' AND method IN ('tools/call', 'prompts/get')
	AND (endpoint = '' OR endpoint LIKE 'p/%') AND instr(name, '__') > 1;
UPDATE calls SET unknown = 'server'
	WHERE server = '' AND unknown = '' AND method IN ('tools/call', 'prompts/get');
UPDATE calls SET unknown = 'tool'
	WHERE server <> '' AND unknown = '' AND outcome = 'protocol_error'
	AND (error LIKE '%unknown tool "%' OR error LIKE '%unknown prompt "%');

-- The tool filter finds a tool's calls through every endpoint by this.
CREATE INDEX calls_tool_start ON calls(tool, start);
