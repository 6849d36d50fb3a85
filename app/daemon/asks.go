package daemon

import (
	"context"
	"log/slog"

	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/asks"
	"github.com/switchboardhq/switchboard/app/events"
	"github.com/switchboardhq/switchboard/app/gateway"
	"github.com/switchboardhq/switchboard/app/history"
)

// newAskBoard makes the board of pending asks: arguments redacted as the
// history redacts them, each ask and its end published as an "ask" event
// (the dashboard's card, the tray's notification and menu follow them).
func newAskBoard(log *slog.Logger, bus *events.Bus, hist *history.Store) *asks.Board {
	return asks.New(asks.Options{
		Redact: hist.RedactArguments,
		Asked: func(a asks.Ask) {
			log.Info("a call waits for the user's yes", "ask", a.ID, "server", a.Server, "tool", a.Tool, "client", a.Client, "deadline", a.Deadline)
			publish(log, bus, events.TypeAsk, wire.AskEvent{State: wire.AskPending, Ask: wire.Ask(a)})
		},
		Answered: func(a asks.Ask, ans asks.Answer) {
			log.Info("a pending ask ended", "ask", a.ID, "server", a.Server, "tool", a.Tool, "allowed", ans.Allowed, "by", ans.By)
			d := wire.AskDecision(ans)
			publish(log, bus, events.TypeAsk, wire.AskEvent{State: wire.AskDecided, Ask: wire.Ask(a), Decision: &d})
		},
	})
}

// boardAsker makes the board the gateway's Asker.
type boardAsker struct{ board *asks.Board }

func (b boardAsker) Ask(ctx context.Context, p gateway.PendingAsk) (bool, string, error) {
	return b.board.Ask(ctx, asks.Ask{Server: p.Server, Tool: p.Tool, Endpoint: p.Endpoint, Client: p.Client,
		Tier: string(p.Tier), Arguments: p.Arguments})
}
