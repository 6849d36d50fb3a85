package config

import (
	"encoding/json"
	"errors"
)

// A migration upgrades a config file from version from to from+1. It works
// on the raw top-level object, before anything is decoded into structs, so
// it can rename and reshape keys freely. Values it does not touch keep their
// positions for error messages. The caller sets "version" to from+1 after
// apply succeeds. An error that names a top-level key should be an *Error
// with Field set to that key.
type migration struct {
	from  int
	apply func(top map[string]json.RawMessage) error
}

// migrationTable returns the migrations in order: entry i migrates from
// version i. A shipped entry is never changed; a new layout appends one and
// raises CurrentVersion.
func migrationTable() []migration {
	return []migration{
		{from: 0, apply: migrateV0},
	}
}

// migrateV0 upgrades version 0, a file without a "version": a file pasted
// from Claude Desktop (claude_desktop_config.json), whose servers are under
// "mcpServers" with the same command/args/env shape. It renames
// "mcpServers" to "servers". Other Claude Desktop keys ("preferences",
// "globalShortcut", ...) are unknown keys and are kept.
func migrateV0(top map[string]json.RawMessage) error {
	servers, ok := top["mcpServers"]
	if !ok {
		return nil
	}
	if _, ok := top["servers"]; ok {
		return &Error{
			Field: "mcpServers",
			Err:   errors.New(`both "mcpServers" and "servers" are present; keep only one of them`),
		}
	}
	top["servers"] = servers
	delete(top, "mcpServers")
	return nil
}
