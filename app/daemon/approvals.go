package daemon

import (
	"encoding/json"
	"fmt"
	"log/slog"
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
	"github.com/switchboardhq/switchboard/supervisor"
)

// Lifecycle events of tool approval (see app/approvals).
const (
	// EventToolHeld: a tool a server lists is new or changed since the
	// user approved the server's tools, and is held from clients.
	EventToolHeld supervisor.EventKind = "tool-held"
	// EventToolApproved: tools were approved, by the user, by the
	// server's first list (its install), or because the server is trusted.
	EventToolApproved supervisor.EventKind = "tool-approved"
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
	_ api.Approvals        = (*toolApprovals)(nil)
)

// Review tells the gateway which of server's listed tools to hold, each
// with the error a call of it gets. hold is false for a server whose
// holdChangedTools is false: its changes are approved instead.
func (a *toolApprovals) Review(server string, tools []*mcp.Tool, hold bool) map[string]string {
	a.forgetMu.Lock()
	defer a.forgetMu.Unlock()
	if a.configured != nil && !a.configured(server) {
		// Removed: its process is on its way out. Nothing of it is
		// recorded, and nothing of it is offered.
		out := make(map[string]string, len(tools))
		for _, t := range tools {
			out[t.Name] = fmt.Sprintf("server %q is no longer configured (removed or uninstalled)", server)
		}
		return out
	}
	list := make([]approvals.Tool, 0, len(tools))
	for _, t := range tools {
		at := approvals.Tool{Name: t.Name, Description: t.Description}
		if t.InputSchema != nil {
			schema, err := json.Marshal(t.InputSchema)
			if err != nil {
				schema = json.RawMessage(fmt.Sprintf("%q", "unencodable schema: "+err.Error()))
			}
			at.InputSchema = schema
		}
		list = append(list, at)
	}
	r, err := a.store.Review(server, list, hold)
	if err != nil {
		a.log.Error("cannot save the tool approvals; holding what is held in memory", "server", server, "err", err)
	}
	if len(r.Approved) > 0 {
		var msg string
		switch r.How {
		case approvals.HowFirstList:
			msg = a.firstListMessage(server, r.Approved)
		default:
			msg = fmt.Sprintf("approved new or changed tools without holding them (holdChangedTools is false): %s",
				strings.Join(r.Approved, ", "))
		}
		a.log.Info("tools approved", "server", server, "how", r.How, "tools", len(r.Approved))
		a.record(server, EventToolApproved, msg)
		// One event for the lot (Tool ""): a first list may have dozens.
		publish(a.log, a.bus, events.TypeApproval, events.Approval{Server: server, State: events.ApprovalApproved, Message: msg})
	}
	for _, h := range r.NewlyHeld {
		a.log.Warn("a tool is held until you approve it", "server", server, "tool", h.Tool, "change", h.Change)
		a.record(server, EventToolHeld, h.Message())
		publish(a.log, a.bus, events.TypeApproval, events.Approval{Server: server, Tool: h.Tool, State: events.ApprovalHeld,
			Change: h.Change, Message: h.Message()})
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

// Held lists the held tools.
func (a *toolApprovals) Held() []approvals.Held { return a.store.Held() }

// Approve approves held tools, records it, and shows them to clients.
func (a *toolApprovals) Approve(server, tool, fingerprint string) ([]approvals.Held, error) {
	done, err := a.store.Approve(server, tool, fingerprint)
	if err != nil {
		return nil, err
	}
	for _, h := range done {
		msg := fmt.Sprintf("approved tool %q (%s): clients see it again", h.Tool, h.Reason())
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

func (a *toolApprovals) record(server string, kind supervisor.EventKind, msg string) {
	a.hist.Observe(supervisor.Event{Time: time.Now(), Server: server, Kind: kind, Message: msg})
}
