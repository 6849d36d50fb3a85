package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/app/approvals"
	"github.com/switchboardhq/switchboard/app/clients"
)

// Routes of tool approval (rug-pull protection, see app/approvals):
//
//	GET  /api/v1/held-tools[?server=NAME]   []HeldTool: tools held from clients, with what changed
//	POST /api/v1/servers/{name}/approve     ApproveRequest → ApproveResult

// Approvals is what the API needs of the tool approvals; the daemon
// implements it over an *approvals.Store, recording each approval in the
// history and making the approved tools visible at once.
type Approvals interface {
	Held() []approvals.Held
	// Approve approves server's held tool, or all of them when tool is
	// "" (see approvals.Store.Approve).
	Approve(server, tool, fingerprint string) ([]approvals.Held, error)
}

// A HeldTool is a tool held from clients until the user approves it.
type HeldTool struct {
	Server string `json:"server"`
	Tool   string `json:"tool"`
	// Change is "new", "description", "schema" or "description and schema".
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

func (s *Server) approvalRoutes() {
	s.mux.Handle("GET /api/v1/held-tools", handle(s.heldTools, http.StatusOK))
	s.mux.Handle("POST /api/v1/servers/{name}/approve", handle(s.approveTools, http.StatusOK))
}

func (s *Server) approvalsOrErr() (Approvals, error) {
	if s.approvals == nil {
		return nil, errorf(http.StatusServiceUnavailable, "tool approvals are not available in this daemon")
	}
	return s.approvals, nil
}

func (s *Server) heldTools(r *http.Request) ([]HeldTool, error) {
	a, err := s.approvalsOrErr()
	if err != nil {
		return nil, err
	}
	server := r.URL.Query().Get("server")
	if server != "" {
		if _, ok := s.cfg.Current().Servers[server]; !ok {
			return nil, errorf(http.StatusNotFound, "unknown server %q", server)
		}
	}
	out := []HeldTool{}
	for _, h := range a.Held() {
		if server == "" || h.Server == server {
			out = append(out, heldTool(h))
		}
	}
	return out, nil
}

func (s *Server) approveTools(r *http.Request) (ApproveResult, error) {
	a, err := s.approvalsOrErr()
	if err != nil {
		return ApproveResult{}, err
	}
	var req ApproveRequest
	if err := decodeBody(r, &req); err != nil {
		return ApproveResult{}, err
	}
	name := r.PathValue("name")
	if _, ok := s.cfg.Current().Servers[name]; !ok {
		return ApproveResult{}, errorf(http.StatusNotFound, "unknown server %q", name)
	}
	done, err := a.Approve(name, req.Tool, req.Fingerprint)
	switch {
	case errors.Is(err, approvals.ErrNotHeld):
		return ApproveResult{}, errorf(http.StatusNotFound, "%v", err)
	case errors.Is(err, approvals.ErrStale):
		return ApproveResult{}, errorf(http.StatusConflict, "%v", err)
	case err != nil:
		return ApproveResult{}, err
	}
	out := ApproveResult{Approved: []HeldTool{}}
	for _, h := range done {
		out.Approved = append(out.Approved, heldTool(h))
	}
	return out, nil
}

func heldTool(h approvals.Held) HeldTool {
	out := HeldTool{Server: h.Server, Tool: h.Tool, Change: h.Change, Reason: h.Reason(), Message: h.Message(),
		Listed: toolVersion(h.Listed)}
	var old []byte
	if h.Approved != nil {
		v := toolVersion(*h.Approved)
		out.Approved = &v
		old = diffText(v)
	}
	out.Diff = clients.Diff(h.Server+"/"+h.Tool, old, diffText(out.Listed))
	return out
}

// diffText is a version as the diff shows it: the description, then the
// input schema as indented JSON.
func diffText(v ToolVersion) []byte {
	var b bytes.Buffer
	b.WriteString("description:\n")
	if v.Description != "" {
		b.WriteString(strings.TrimSuffix(v.Description, "\n") + "\n")
	}
	b.WriteString("\ninputSchema:\n")
	if err := json.Indent(&b, v.InputSchema, "", "  "); err != nil || len(v.InputSchema) == 0 {
		b.WriteString("(none)")
	}
	b.WriteString("\n")
	return b.Bytes()
}

func toolVersion(v approvals.Version) ToolVersion {
	return ToolVersion{Fingerprint: v.Fingerprint, Description: v.Description, InputSchema: v.InputSchema, Time: v.Time, How: v.How}
}
