package daemon

import (
	"context"
	"log/slog"

	"github.com/switchboardhq/switchboard/app/bridge"
	"github.com/switchboardhq/switchboard/app/gateway"
)

// NewBridgeFront is what serves the stdio bridge's client
// (bridge.Options.Front): the gateway's Relay, a gateway of one server whose
// backend is the daemon's endpoint. The bridge relays what the gateway
// relays (progress, logging, list changes, subscriptions, sampling,
// elicitation and roots, in both protocol eras), so it uses the gateway's
// front rather than a copy; app/bridge itself links none of the daemon, and
// the CLI gets this front here, from the daemon it starts.
func NewBridgeFront(acquire func(context.Context) (bridge.Lease, error), logger *slog.Logger, version string) bridge.Front {
	return gateway.NewRelay(func(ctx context.Context) (gateway.Lease, error) {
		l, err := acquire(ctx)
		if err != nil {
			return nil, err // not a typed-nil Lease
		}
		return l, nil
	}, logger, version)
}
