package approvals

import (
	"fmt"
	"iter"
	"log/slog"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/toolscan"
)

// A Policy applies a Store to what the servers list: the gateway asks it
// which tools, prompts and resource templates to hold (Review,
// ReviewItems: the method set of the gateway's ToolReviewer and
// ItemReviewer), the API approves through it (Held, Approve), and the
// daemon tells it which servers are configured (Prune, Forget). It scans
// each list (app/toolscan) before the store judges it, says in words why
// tools were approved (a server's install, the migration of one
// configured before approvals knew it, a trusted server's changes) or
// held, and reports each to PolicyOptions.Report. It is safe for
// concurrent use.
type Policy struct {
	store      *Store
	log        *slog.Logger
	report     func(Notice)
	configured func(server string) bool
	// show makes approved tools visible to clients at once (the
	// gateway's Recheck); set by SetShow before the API serves.
	show func(server string)

	// forgetMu orders a review against forgetting its server: a list that
	// was under way when the server was removed (uninstalled, deleted from
	// config.json) must not bring its approvals back once forgotten, with
	// its held tools approved as a "first list".
	forgetMu sync.Mutex

	mu sync.Mutex
	// unseen are the servers configured when the daemon started that the
	// store did not know (see Prune): their first list is a migration,
	// not an install (see firstListMessage).
	unseen map[string]bool
}

// PolicyOptions are what a Policy reports to and asks.
type PolicyOptions struct {
	// Logger gets a line for each approval and held item; nil: none.
	Logger *slog.Logger
	// Report is told of every approval and every newly held item, in the
	// order they happen (the daemon records each in the history and
	// publishes it on the live feed); nil: nobody is told. It is called
	// during Review and Approve and must not call back into the Policy.
	Report func(Notice)
	// Configured reports whether server is in the config in force; a
	// list of a server that is not is all held and changes nothing
	// stored. Nil: every server is.
	Configured func(server string) bool
}

// A Notice is one approval, or one item newly held, as the history and
// the live feed (the tray's notification) tell it.
type Notice struct {
	Server string
	// Tool is the item approved or held; "" for an approval of many at
	// once (a server's first list, a trusted server's changes).
	Tool string
	// Held is true for an item newly held until approved, false for an
	// approval.
	Held bool
	// Change is the held (or approved) item's Held.Change; "" for an
	// approval of many.
	Change string
	// Message says it in words: for a held item, the error its calls get
	// and the scanner's worst finding.
	Message string
}

// NewPolicy returns the policy over store.
func NewPolicy(store *Store, opts PolicyOptions) *Policy {
	p := &Policy{store: store, log: opts.Logger, report: opts.Report, configured: opts.Configured, unseen: map[string]bool{}}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	if p.report == nil {
		p.report = func(Notice) {}
	}
	return p
}

// SetShow sets what makes the tools of server that Approve approved
// visible to clients at once (the gateway's Recheck, made after the
// policy it is given). It must be called before Approve can be.
func (p *Policy) SetShow(show func(server string)) { p.show = show }

// Review returns which of server's listed tools to hold, each with the
// error a call of it gets. hold is false for a server the user trusts
// (holdChangedTools false): its changes are approved instead, but a tool
// the scan finds high-severity problems in is held all the same.
func (p *Policy) Review(server string, tools []*mcp.Tool, hold bool) map[string]string {
	p.forgetMu.Lock()
	defer p.forgetMu.Unlock()
	list := fromTools(tools)
	if p.removed(server) {
		return removedHolds(server, list)
	}
	return p.review(server, KindTool, scanTools(server, list, p.store.ToolNames(server)), hold)
}

// ReviewItems returns which of server's prompts and resource templates
// to hold, as Review does of its tools.
func (p *Policy) ReviewItems(server string, prompts []*mcp.Prompt, templates []*mcp.ResourceTemplate, hold bool) (heldPrompts, heldTemplates map[string]string) {
	p.forgetMu.Lock()
	defer p.forgetMu.Unlock()
	ps, ts := fromPrompts(prompts), fromTemplates(templates)
	if p.removed(server) {
		return removedHolds(server, ps), removedHolds(server, ts)
	}
	ps, ts = scanItems(server, prompts, templates, ps, ts, p.store.ToolNames(server))
	return p.review(server, KindPrompt, ps, hold), p.review(server, KindTemplate, ts, hold)
}

// removed reports whether server left the config: its process is on its
// way out. Nothing of it is recorded, and nothing of it is offered.
func (p *Policy) removed(server string) bool {
	return p.configured != nil && !p.configured(server)
}

func removedHolds(server string, list []Tool) map[string]string {
	out := make(map[string]string, len(list))
	for _, t := range list {
		out[t.Name] = fmt.Sprintf("server %q is no longer configured (removed or uninstalled)", server)
	}
	return out
}

// review has the store judge list, server's items of kind, reports what
// was approved and held, and returns what to hold with the error each
// gets (under forgetMu).
func (p *Policy) review(server, kind string, list []Tool, hold bool) map[string]string {
	r, err := p.store.ReviewItems(server, kind, list, hold)
	if err != nil {
		p.log.Error("cannot save the tool approvals; holding what is held in memory", "server", server, "err", err)
	}
	if len(r.Migrated) > 0 {
		p.log.Info("tool approvals carried over to the new fingerprint (title, annotations and output schema included)",
			"server", server, "tools", len(r.Migrated))
	}
	if len(r.Approved) > 0 {
		var msg string
		switch {
		case r.How == HowFirstList && kind == KindTool:
			msg = p.firstListMessage(server, r.Approved)
		case r.How == HowFirstList:
			msg = fmt.Sprintf("approved the %d %ss of the server's first list of them: %s", len(r.Approved), kindWord(kind), strings.Join(r.Approved, ", "))
		default:
			msg = fmt.Sprintf("approved new or changed %ss without holding them (holdChangedTools is false): %s",
				kindWord(kind), strings.Join(r.Approved, ", "))
		}
		p.log.Info("tools approved", "server", server, "kind", kind, "how", r.How, "items", len(r.Approved))
		// One notice for the lot (Tool ""): a first list may have dozens.
		p.report(Notice{Server: server, Message: msg})
	}
	for _, h := range r.NewlyHeld {
		notice := heldNotice(h)
		p.log.Warn("a tool is held until you approve it", "server", server, "kind", kind, "tool", h.Tool, "change", h.Change,
			"findings", len(h.Listed.Findings), "severity", toolscan.Max(h.Listed.Findings).String())
		p.report(Notice{Server: server, Tool: h.Tool, Held: true, Change: h.Change, Message: notice})
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

// heldNotice is what a Notice says of a newly held item: its message, and
// the scanner's worst finding when there is one, so that the user sees
// why before opening the diff.
func heldNotice(h Held) string {
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

// Held lists the held items (Store.Held).
func (p *Policy) Held() []Held { return p.store.Held() }

// Approve approves held items (Store.Approve), reports each, and shows
// them to clients.
func (p *Policy) Approve(server, tool, fingerprint string) ([]Held, error) {
	done, err := p.store.Approve(server, tool, fingerprint)
	if err != nil {
		return nil, err
	}
	for _, h := range done {
		msg := fmt.Sprintf("approved %s %q (%s): clients see it again", kindWord(h.Kind), h.Tool, h.Reason())
		p.log.Info("tool approved", "server", server, "tool", h.Tool, "change", h.Change)
		p.report(Notice{Server: server, Tool: h.Tool, Change: h.Change, Message: msg})
	}
	if p.show != nil {
		p.show(server)
	}
	return done, nil
}

// firstListMessage says why the tools of a server's first list were
// approved: it was configured before the daemon started (a migration) or
// has just been installed or added.
func (p *Policy) firstListMessage(server string, tools []string) string {
	p.mu.Lock()
	migrated := p.unseen[server]
	delete(p.unseen, server)
	p.mu.Unlock()
	if migrated {
		return fmt.Sprintf("approved the %d tools the server lists, as they are: it was configured before tool approval knew it "+
			"(migration); from now on new or changed tools are held: %s", len(tools), strings.Join(tools, ", "))
	}
	return fmt.Sprintf("approved the %d tools of the server's first list (its install): %s", len(tools), strings.Join(tools, ", "))
}

// Prune is given the servers configured when the daemon starts. It
// forgets the approvals of servers that are no longer configured (removed
// while the daemon was not running), and remembers the configured ones
// the store does not know: configured before this Switchboard had
// approvals, or added to config.json while it was not running, their
// first list is a migration, not an install.
func (p *Policy) Prune(configured iter.Seq[string]) {
	servers := map[string]bool{}
	for server := range configured {
		servers[server] = true
	}
	for _, server := range p.store.Servers() {
		if !servers[server] {
			p.Forget(server)
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.unseen = map[string]bool{}
	for server := range servers {
		if !p.store.Known(server) {
			p.unseen[server] = true
		}
	}
}

// Forget drops the approvals of a server removed from the config: one of
// the same name added later is approved at its first list, as an install.
func (p *Policy) Forget(server string) {
	p.forgetMu.Lock()
	defer p.forgetMu.Unlock()
	if !p.store.Known(server) {
		return
	}
	if err := p.store.Forget(server); err != nil {
		p.log.Warn("cannot forget the tool approvals of a removed server", "server", server, "err", err)
	}
}
