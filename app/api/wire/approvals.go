package wire

import (
	"encoding/json"
	"time"
)

// Tool approval (rug-pull protection): tools a server lists that are new,
// or whose description or input schema changed since the user approved
// them, are held from clients until approved.
//
//	GET  /api/v1/held-tools[?server=NAME]   []HeldTool
//	POST /api/v1/servers/{name}/approve     ApproveRequest → ApproveResult

// Kinds of change of a held tool (HeldTool.Change, ApprovalEvent.Change).
const (
	ChangeNew         = "new"
	ChangeDescription = "description"
	ChangeSchema      = "schema"
	ChangeBoth        = "description and schema"
)

// A HeldTool is a tool held from clients until the user approves it.
type HeldTool struct {
	Server string `json:"server"`
	Tool   string `json:"tool"`
	// Change is ChangeNew, ChangeDescription, ChangeSchema or ChangeBoth.
	Change string `json:"change"`
	// Reason says it in words; Message is the error a client's call gets.
	Reason  string `json:"reason"`
	Message string `json:"message"`
	// Approved is the version approved before, absent for a new tool;
	// Listed is what the server lists now.
	Approved *ToolVersion `json:"approved,omitempty"`
	Listed   ToolVersion  `json:"listed"`
	// Diff is a unified diff from the approved description and input
	// schema (indented JSON) to the listed ones; for a new tool, from
	// nothing.
	Diff string `json:"diff"`
}

// A ToolVersion is one version of a tool's description and input schema.
type ToolVersion struct {
	// Fingerprint is "sha256:" and the hex SHA-256 of the canonical JSON of
	// the tool's name, description and input schema.
	Fingerprint string          `json:"fingerprint"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
	// Time is when it was approved, or first listed and held.
	Time time.Time `json:"time"`
	// How an approved version was approved: "first-list" (the install, or
	// the first list after approvals came to this Switchboard), "user" or
	// "trusted" (the server's holdChangedTools is false).
	How string `json:"how,omitempty"`
}

// ApproveRequest is the body of POST /api/v1/servers/{name}/approve.
type ApproveRequest struct {
	// Tool is the held tool to approve; "" approves every held tool of the
	// server.
	Tool string `json:"tool,omitempty"`
	// Fingerprint, when set, must be the listed version's (the one the
	// user was shown): a tool that changed again since is refused (409).
	Fingerprint string `json:"fingerprint,omitempty"`
}

// ApproveResult is what POST /api/v1/servers/{name}/approve approved.
type ApproveResult struct {
	Approved []HeldTool `json:"approved"`
}
