package daemon

import (
	"log/slog"
	"time"

	"github.com/switchboardhq/switchboard/app/api"
	"github.com/switchboardhq/switchboard/app/approvals"
	"github.com/switchboardhq/switchboard/app/events"
	"github.com/switchboardhq/switchboard/app/gateway"
	"github.com/switchboardhq/switchboard/app/history"
	"github.com/switchboardhq/switchboard/app/record"
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

// The approvals' policy tells the gateway which tools to hold, and the
// API approves through it.
var (
	_ gateway.ToolReviewer = (*approvals.Policy)(nil)
	_ gateway.ItemReviewer = (*approvals.Policy)(nil)
	_ api.Approvals        = (*approvals.Policy)(nil)
)

// reportApprovals returns the approvals' Report: each approval and each
// newly held tool goes to the history as a lifecycle event of its server,
// and to the live feed (the tray's notification).
func reportApprovals(log *slog.Logger, hist *history.Store, bus *events.Bus) func(approvals.Notice) {
	return func(n approvals.Notice) {
		kind, state := EventToolApproved, events.ApprovalApproved
		if n.Held {
			kind, state = EventToolHeld, events.ApprovalHeld
		}
		hist.Observe(record.Event{Time: time.Now(), Server: n.Server, Kind: kind, Message: n.Message})
		publish(log, bus, events.TypeApproval, events.Approval{Server: n.Server, Tool: n.Tool, State: state,
			Change: n.Change, Message: n.Message})
	}
}
