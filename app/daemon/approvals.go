package daemon

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/api"
	"github.com/switchboardhq/switchboard/app/approvals"
	"github.com/switchboardhq/switchboard/app/config"
	"github.com/switchboardhq/switchboard/app/events"
	"github.com/switchboardhq/switchboard/app/gateway"
	"github.com/switchboardhq/switchboard/app/history"
	"github.com/switchboardhq/switchboard/app/record"
	"github.com/switchboardhq/switchboard/app/toolscan"
)

// Lifecycle events of tool approval (see app/approvals).
const (
	// EventToolHeld: a tool a server lists is new or changed since the
	// user approved the server's tools, and is held from clients.
	EventToolHeld record.EventKind = "tool-held"
	// EventToolApproved: tools were approved, by the user, by the
	// server's first list (its install), or because the server is trusted.
	EventToolApproved record.EventKind = "tool-approved"
)

// toolApprovals joins the approvals store to the rest of the daemon: the
// gateway asks it which tools to hold (Review), the API approves through
// it (Held, Approve), and each held change and approval goes to the
// history as a lifecycle event and to the live feed.
type toolApprovals struct {
	store *approvals.Store
	hist  *history.Store
	bus   *events.Bus
	log   *slog.Logger
	// show makes tools approved through the API visible at once (the
	// gateway's Recheck); set before the API serves.
	show func(server string)
	// configured reports whether server is in the config in force; nil
	// for every server.
	configured func(server string) bool

	// forgetMu orders a review against forgetting its server: a list that
	// was under way when the server was removed (uninstalled, deleted from
	// config.json) must not bring its approvals back once forgotten, with
	// its held tools approved as a "first list".
	forgetMu sync.Mutex

	mu sync.Mutex
	// unseen are the servers configured when the daemon started that the
	// approvals did not know: configured before this Switchboard had
	// approvals, or added to config.json while it was not running. Their
	// first list is a migration, not an install (see firstListMessage).
	unseen map[string]bool
}

// The gateway asks the approvals which tools to hold.
var (
	_ gateway.ToolReviewer = (*toolApprovals)(nil)
	_ gateway.ItemReviewer = (*toolApprovals)(nil)
	_ api.Approvals        = (*toolApprovals)(nil)
)

// Review tells the gateway which of server's listed tools to hold, each
// with the error a call of it gets. hold is false for a server whose
// holdChangedTools is false: its changes are approved instead.
func (a *toolApprovals) Review(server string, tools []*mcp.Tool, hold bool) map[string]string {
	a.forgetMu.Lock()
	defer a.forgetMu.Unlock()
	list := approvalTools(tools)
	if a.removed(server) {
		return removedHolds(server, list)
	}
	return a.review(server, approvals.KindTool, scanTools(server, list, a.store.ToolNames(server)), hold)
}

// ReviewItems tells the gateway which of server's prompts and resource
// templates to hold, as Review does of its tools.
func (a *toolApprovals) ReviewItems(server string, prompts []*mcp.Prompt, templates []*mcp.ResourceTemplate, hold bool) (heldPrompts, heldTemplates map[string]string) {
	a.forgetMu.Lock()
	defer a.forgetMu.Unlock()
	ps, ts := approvalPrompts(prompts), approvalTemplates(templates)
	if a.removed(server) {
		return removedHolds(server, ps), removedHolds(server, ts)
	}
	ps, ts = scanItems(server, prompts, templates, ps, ts, a.store.ToolNames(server))
	return a.review(server, approvals.KindPrompt, ps, hold), a.review(server, approvals.KindTemplate, ts, hold)
}

// removed reports whether server left the config: its process is on its
// way out. Nothing of it is recorded, and nothing of it is offered.
func (a *toolApprovals) removed(server string) bool {
	return a.configured != nil && !a.configured(server)
}

func removedHolds(server string, list []approvals.Tool) map[string]string {
	out := make(map[string]string, len(list))
	for _, t := range list {
		out[t.Name] = fmt.Sprintf("server %q is no longer configured (removed or uninstalled)", server)
	}
	return out
}

// review has the approvals judge list, server's items of kind, records and
// publishes what was approved and held, and returns what to hold with the
// error each gets (under forgetMu).
func (a *toolApprovals) review(server, kind string, list []approvals.Tool, hold bool) map[string]string {
	r, err := a.store.ReviewItems(server, kind, list, hold)
	if err != nil {
		a.log.Error("cannot save the tool approvals; holding what is held in memory", "server", server, "err", err)
	}
	if len(r.Migrated) > 0 {
		a.log.Info("tool approvals carried over to the new fingerprint (title, annotations and output schema included)",
			"server", server, "tools", len(r.Migrated))
	}
	if len(r.Approved) > 0 {
		var msg string
		switch {
		case r.How == approvals.HowFirstList && kind == approvals.KindTool:
			msg = a.firstListMessage(server, r.Approved)
		case r.How == approvals.HowFirstList:
			msg = fmt.Sprintf("approved the %d %ss of the server's first list of them: %s", len(r.Approved), kindName(kind), strings.Join(r.Approved, ", "))
		default:
			msg = fmt.Sprintf("approved new or changed %ss without holding them (holdChangedTools is false): %s",
				kindName(kind), strings.Join(r.Approved, ", "))
		}
		a.log.Info("tools approved", "server", server, "kind", kind, "how", r.How, "items", len(r.Approved))
		a.record(server, EventToolApproved, msg)
		// One event for the lot (Tool ""): a first list may have dozens.
		publish(a.log, a.bus, events.TypeApproval, events.Approval{Server: server, State: events.ApprovalApproved, Message: msg})
	}
	for _, h := range r.NewlyHeld {
		notice := heldNotice(h)
		a.log.Warn("a tool is held until you approve it", "server", server, "kind", kind, "tool", h.Tool, "change", h.Change,
			"findings", len(h.Listed.Findings), "severity", toolscan.Max(h.Listed.Findings).String())
		a.record(server, EventToolHeld, notice)
		publish(a.log, a.bus, events.TypeApproval, events.Approval{Server: server, Tool: h.Tool, State: events.ApprovalHeld,
			Change: h.Change, Message: notice})
	}
	if len(r.Held) == 0 {
		return nil
	}
	out := make(map[string]string, len(r.Held))
	for name, h := range r.Held {
		out[name] = h.Message()
	}
	return out
}

// kindName names a kind of item in a message.
func kindName(kind string) string {
	if kind == approvals.KindTemplate {
		return "resource template"
	}
	return kind
}

// approvalPrompts is what the approvals fingerprint of each listed prompt:
// its arguments stand in the input schema's place.
func approvalPrompts(prompts []*mcp.Prompt) []approvals.Tool {
	list := make([]approvals.Tool, 0, len(prompts))
	for _, p := range prompts {
		at := approvals.Tool{Name: p.Name, Title: p.Title, Description: p.Description}
		if len(p.Arguments) > 0 {
			at.InputSchema = encodeField(p.Arguments)
		}
		list = append(list, at)
	}
	return list
}

// approvalTemplates is what the approvals fingerprint of each listed
// resource template, by its URI template; its name and MIME type stand
// in the input schema's place.
func approvalTemplates(templates []*mcp.ResourceTemplate) []approvals.Tool {
	list := make([]approvals.Tool, 0, len(templates))
	for _, t := range templates {
		at := approvals.Tool{Name: t.URITemplate, Title: t.Title, Description: t.Description,
			InputSchema: encodeField(map[string]string{"name": t.Name, "mimeType": t.MIMEType})}
		if t.Annotations != nil {
			at.Annotations = encodeField(t.Annotations)
		}
		list = append(list, at)
	}
	return list
}

// encodeField is v as JSON; a field that cannot be encoded is a JSON
// string saying so: it is fingerprinted (and so held when it appears)
// rather than dropped.
func encodeField(v any) json.RawMessage {
	data, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage(fmt.Sprintf("%q", "unencodable: "+err.Error()))
	}
	return data
}

// scanItems runs the scanner over server's prompts and templates and
// gives each of ps and ts (their approvals.Tool forms, in the same order)
// its findings.
func scanItems(server string, prompts []*mcp.Prompt, templates []*mcp.ResourceTemplate, ps, ts []approvals.Tool, others []string) ([]approvals.Tool, []approvals.Tool) {
	l := toolscan.Listing{Server: server}
	for _, p := range prompts {
		sp := toolscan.Prompt{Name: p.Name, Title: p.Title, Description: p.Description}
		for _, a := range p.Arguments {
			sp.Arguments = append(sp.Arguments, toolscan.PromptArgument{Name: a.Name, Title: a.Title, Description: a.Description})
		}
		l.Prompts = append(l.Prompts, sp)
	}
	for _, t := range templates {
		l.Templates = append(l.Templates, toolscan.Template{Name: t.Name, Title: t.Title, Description: t.Description,
			URITemplate: t.URITemplate, MIMEType: t.MIMEType})
	}
	byItem := map[string][]toolscan.Finding{}
	for _, f := range toolscan.Scan(l, others) {
		byItem[f.Kind+"\x00"+f.Item] = append(byItem[f.Kind+"\x00"+f.Item], f)
	}
	ps, ts = slices.Clone(ps), slices.Clone(ts)
	for i := range ps {
		ps[i].Findings = byItem["prompt\x00"+prompts[i].Name]
	}
	for i := range ts {
		// The scanner names a template by its name, the approvals by
		// its URI template.
		ts[i].Findings = byItem["template\x00"+templates[i].Name]
	}
	return ps, ts
}

// heldNotice is what the history and the live feed (the tray's
// notification) say of a newly held tool: its message, and the scanner's
// worst finding when there is one, so that the user sees why before
// opening the diff.
func heldNotice(h approvals.Held) string {
	msg := h.Message()
	var worst *toolscan.Finding
	for i, f := range h.Listed.Findings {
		if worst == nil || f.Severity > worst.Severity {
			worst = &h.Listed.Findings[i]
		}
	}
	if worst != nil {
		msg += fmt.Sprintf("; the scan found (%s, %s in %s): %s", worst.Severity, worst.Rule, worst.Field, worst.Message)
		if n := len(h.Listed.Findings); n > 1 {
			msg += fmt.Sprintf(" and %d more", n-1)
		}
	}
	return msg
}

// approvalTools is what the approvals fingerprint of each listed tool.
// A field that cannot be encoded is a JSON string saying so: it is
// fingerprinted (and so held when it appears) rather than dropped.
func approvalTools(tools []*mcp.Tool) []approvals.Tool {
	encode := encodeField
	list := make([]approvals.Tool, 0, len(tools))
	for _, t := range tools {
		at := approvals.Tool{Name: t.Name, Title: t.Title, Description: t.Description}
		if t.InputSchema != nil {
			at.InputSchema = encode(t.InputSchema)
		}
		if t.OutputSchema != nil {
			at.OutputSchema = encode(t.OutputSchema)
		}
		if t.Annotations != nil {
			at.Annotations = encode(t.Annotations)
		}
		list = append(list, at)
	}
	return list
}

// scanTools runs the scanner over server's tools, with others the tool
// names of the other servers, and gives each tool its findings. The
// approvals decide what the findings hold (approvals.Store.Review).
func scanTools(server string, tools []approvals.Tool, others []string) []approvals.Tool {
	l := toolscan.Listing{Server: server, Tools: make([]toolscan.Tool, 0, len(tools))}
	for _, t := range tools {
		st := toolscan.Tool{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: t.InputSchema, OutputSchema: t.OutputSchema}
		if len(t.Annotations) > 0 {
			var ann toolscan.Annotations
			if json.Unmarshal(t.Annotations, &ann) == nil {
				st.Annotations = &ann
			}
		}
		l.Tools = append(l.Tools, st)
	}
	byTool := map[string][]toolscan.Finding{}
	for _, f := range toolscan.Scan(l, others) {
		if f.Kind == "tool" {
			byTool[f.Item] = append(byTool[f.Item], f)
		}
	}
	out := slices.Clone(tools)
	for i := range out {
		out[i].Findings = byTool[out[i].Name]
	}
	return out
}

// Held lists the held tools.
func (a *toolApprovals) Held() []approvals.Held { return a.store.Held() }

// Approve approves held tools, records it, and shows them to clients.
func (a *toolApprovals) Approve(server, tool, fingerprint string) ([]approvals.Held, error) {
	done, err := a.store.Approve(server, tool, fingerprint)
	if err != nil {
		return nil, err
	}
	for _, h := range done {
		msg := fmt.Sprintf("approved %s %q (%s): clients see it again", kindName(h.Kind), h.Tool, h.Reason())
		a.log.Info("tool approved", "server", server, "tool", h.Tool, "change", h.Change)
		a.record(server, EventToolApproved, msg)
		publish(a.log, a.bus, events.TypeApproval, events.Approval{Server: server, Tool: h.Tool, State: events.ApprovalApproved,
			Change: h.Change, Message: msg})
	}
	if a.show != nil {
		a.show(server)
	}
	return done, nil
}

// firstListMessage says why the tools of a server's first list were
// approved: it was configured before the daemon started (a migration) or
// has just been installed or added.
func (a *toolApprovals) firstListMessage(server string, tools []string) string {
	a.mu.Lock()
	migrated := a.unseen[server]
	delete(a.unseen, server)
	a.mu.Unlock()
	if migrated {
		return fmt.Sprintf("approved the %d tools the server lists, as they are: it was configured before tool approval knew it "+
			"(migration); from now on new or changed tools are held: %s", len(tools), strings.Join(tools, ", "))
	}
	return fmt.Sprintf("approved the %d tools of the server's first list (its install): %s", len(tools), strings.Join(tools, ", "))
}

// prune forgets the approvals of servers that are no longer configured
// (removed while the daemon was not running).
func (a *toolApprovals) prune(configured map[string]config.Server) {
	for _, server := range a.store.Servers() {
		if _, ok := configured[server]; !ok {
			a.forget(server)
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.unseen = map[string]bool{}
	for server := range configured {
		if !a.store.Known(server) {
			a.unseen[server] = true
		}
	}
}

// forget drops the approvals of a server removed from the config: one of
// the same name added later is approved at its first list, as an install.
func (a *toolApprovals) forget(server string) {
	a.forgetMu.Lock()
	defer a.forgetMu.Unlock()
	if !a.store.Known(server) {
		return
	}
	if err := a.store.Forget(server); err != nil {
		a.log.Warn("cannot forget the tool approvals of a removed server", "server", server, "err", err)
	}
}

func (a *toolApprovals) record(server string, kind record.EventKind, msg string) {
	a.hist.Observe(record.Event{Time: time.Now(), Server: server, Kind: kind, Message: msg})
}
