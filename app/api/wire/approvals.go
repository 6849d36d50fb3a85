package wire

import (
	"encoding/json"
	"time"
)

// Tool approval (rug-pull protection): tools a server lists that are new,
// or whose title, description, schemas or annotations changed since the
// user approved them, are held from clients until approved; so is a tool
// the scan of what servers list (app/toolscan) finds a high-severity
// finding in, even at the server's install.
//
//	GET  /api/v1/held-tools[?server=NAME]   []HeldTool
//	POST /api/v1/servers/{name}/approve     ApproveRequest → ApproveResult

// Kinds of change of a held tool (HeldTool.Change, ApprovalEvent.Change).
// A change of several fields joins their names as a sentence does:
// "description and schema", "title, schema and annotations".
const (
	ChangeNew          = "new"
	ChangeTitle        = "title"
	ChangeDescription  = "description"
	ChangeSchema       = "schema"
	ChangeOutputSchema = "output schema"
	ChangeAnnotations  = "annotations"
	ChangeBoth         = "description and schema"
)

// Kinds of held item (HeldTool.Kind).
const (
	KindTool     = "tool"
	KindPrompt   = "prompt"
	KindTemplate = "template"
)

// A HeldTool is a tool, prompt or resource template held from clients
// until the user approves it.
type HeldTool struct {
	Server string `json:"server"`
	// Kind is KindTool, KindPrompt or KindTemplate; Tool is its name (a
	// template's URI template), which approves it.
	Kind string `json:"kind"`
	Tool string `json:"tool"`
	// Change is ChangeNew, or the Change* names of the fields that
	// changed, joined.
	Change string `json:"change"`
	// Reason says it in words; Message is the error a client's call gets.
	Reason  string `json:"reason"`
	Message string `json:"message"`
	// Approved is the version approved before, absent for a new tool;
	// Listed is what the server lists now.
	Approved *ToolVersion `json:"approved,omitempty"`
	Listed   ToolVersion  `json:"listed"`
	// Diff is a unified diff from the approved title, description,
	// input schema, output schema and annotations (indented JSON) to the
	// listed ones; for a new tool, from nothing.
	Diff string `json:"diff"`
	// Findings are what the scan found in the listed version, every
	// severity (only a high one holds a tool by itself), ordered by field
	// and offset; empty when none.
	Findings []Finding `json:"findings"`
}

// A Finding is one hit of the scan of what a server lists on one field of
// a tool.
type Finding struct {
	// Severity is "low", "medium" or "high".
	Severity string `json:"severity"`
	// Rule is the scanner's rule ID ("conceal", "hidden-tags", …).
	Rule string `json:"rule"`
	// Field names the text: "description", "title", "annotations.title",
	// "inputSchema.properties.note.description", ….
	Field string `json:"field"`
	// Start and End are the byte offsets of the span in the field's text;
	// Quote is that span, exactly (invisible characters included).
	Start   int    `json:"start"`
	End     int    `json:"end"`
	Quote   string `json:"quote"`
	Message string `json:"message"`
	// Line is the finding as the command line prints it: one line, the
	// quote escaped so that invisible characters show.
	Line string `json:"line"`
}

// A ToolVersion is one version of a tool's description and input schema.
type ToolVersion struct {
	// Fingerprint is "sha256:" and the hex SHA-256 of the canonical JSON of
	// the tool's name, title, description, schemas and annotations.
	Fingerprint string          `json:"fingerprint"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
	// OutputSchema and Annotations are as listed (canonical JSON); absent
	// when the tool has none, or for a version approved before they were
	// fingerprinted.
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  json.RawMessage `json:"annotations,omitempty"`
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
